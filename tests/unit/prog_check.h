/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Shared by tests/unit/prog_test.c and tests/fuzz/fuzz_prog.c: they compile
 * common/kinst_prog.c with KINST_PROG_STEP = prog_check_step and provide
 * kinst_os_read / kinst_os_read_user over two fake windows, so that every
 * step and every memory access of a run is seen.
 *
 * Property of any input: the verifier refuses it, or the interpreter
 *  - runs at most ninsns steps (forward jumps only),
 *  - never pops an empty stack nor pushes past KINST_PROG_STACK (checked
 *    with this file's own stack-effect table, not the verifier's),
 *  - reads memory at most nloads times, each read exactly 1, 2, 4 or 8
 *    bytes as a LOAD instruction declared, only through the hook its
 *    address half chooses,
 *  - ends in TRUE, FALSE or FAULT;
 *  - declares at most ncaps captures, each of its instruction's length;
 *    their sections (kinst_cap_section) never write past cap_bytes, the
 *    size the verifier declared.
 */
#ifndef PROG_CHECK_H
#define PROG_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kinst_prog;
void	prog_check_step(const struct kinst_prog *p, uint32_t pc, uint32_t sp);

#define	KINST_PROG_STEP(p, pc, sp)	prog_check_step((p), (pc), (sp))
#include "kinst_prog.h"
#include "kinst_tstate.h"

/* A full STACK section (kinst_stack.h has it, with the engine's headers). */
#define	KINST_STACK_SEC_BYTES	\
	(sizeof(struct kinst_rec_sec) + KINST_STACK_MAX * sizeof(uint64_t))

#define	PC_FAIL(...) do {						\
	fprintf(stderr, "prog_check: " __VA_ARGS__);			\
	fprintf(stderr, "\n");						\
	abort();							\
} while (0)

/* Fake memory: a user window and a kernel window, 64 bytes each. */
#define	PC_UBASE	0x10000ull
#define	PC_KBASE	0xffffffff81000000ull
#define	PC_WIN		64
static uint8_t pc_umem[PC_WIN], pc_kmem[PC_WIN];

static struct {
	uint32_t steps, reads, last_size;
	uint32_t size_expected;		/* arg of the LOAD being executed */
	int in_run;
	int any_size;			/* capture reads: any length */
} pc_st;

static int
pc_window(uint64_t base, const uint8_t *mem, uint64_t addr, void *buf,
    size_t len)
{
	if (!pc_st.in_run)
		return (-1);
	pc_st.reads++;
	if (!pc_st.any_size && len != pc_st.size_expected)
		PC_FAIL("read of %zu bytes, the LOAD declared %u", len,
		    pc_st.size_expected);
	if (addr < base || addr - base > PC_WIN || len > PC_WIN - (addr - base))
		return (-1);
	memcpy(buf, mem + (addr - base), len);
	return (0);
}

int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	if (addr < KINST_KERNEL_START)
		PC_FAIL("kernel read of user address %#llx",
		    (unsigned long long)addr);
	return (pc_window(PC_KBASE, pc_kmem, addr, buf, len));
}

int
kinst_os_read_user(uint64_t addr, void *buf, size_t len)
{
	if (addr + len > KINST_USER_END)
		PC_FAIL("user read of %#llx", (unsigned long long)addr);
	return (pc_window(PC_UBASE, pc_umem, addr, buf, len));
}

/*
 * Per-thread state for KINST_OP_TS_*: a small table of the test's own
 * (kinst_tstate.c is compiled in by the includer), one thread, a clock
 * that the runs advance; its activations persist from run to run, so a
 * fuzzed program's TS_GET can find what an earlier one pushed.
 */
static struct kinst_ts_slot pc_ts_slots[4];
static struct kinst_ts_cpu pc_ts_stats[2];
static struct kinst_tstate pc_ts = {
	.nslots = 4, .ncpus = 2, .idle_ns = 1000, .epoch = 1,
	.slots = pc_ts_slots, .stats = pc_ts_stats,
};
static uint64_t pc_now;

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = 7;
	key[1] = 8;
}

uint64_t
kinst_os_now_ns(void)
{
	return (pc_now);
}

uint64_t
kinst_os_local_ns(void)
{
	return (pc_now);
}

static struct kinst_tstate *
pc_tstate(void)
{
	pc_now += 10;
	return (&pc_ts);
}

/* Stack effect of each opcode, written down again independently. */
static void
pc_effect(const struct kinst_pinsn *in, uint32_t *pops, uint32_t *pushes)
{
	uint8_t op = in->op;

	*pops = 0;
	*pushes = 0;
	if (op == KINST_OP_IMM || op == KINST_OP_REG || op == KINST_OP_CTX)
		*pushes = 1;
	else if (op == KINST_OP_LOAD || op == KINST_OP_LOADC ||
	    op == KINST_OP_LNOT || op == KINST_OP_TS_GET ||
	    op == KINST_OP_NEG || op == KINST_OP_BNOT)
		*pops = *pushes = 1;
	else if (op >= KINST_OP_ADD && op <= KINST_OP_GES) {
		*pops = 2;
		*pushes = 1;
	} else if (op == KINST_OP_JZ || op == KINST_OP_JNZ ||
	    op == KINST_OP_RET || op == KINST_OP_KEY ||
	    op == KINST_OP_VALUE || op == KINST_OP_MEM || op == KINST_OP_STR ||
	    op == KINST_OP_VAL)
		*pops = 1;
	else if (op == KINST_OP_TS_PUSH)
		*pops = 1u + in->arg;	/* a frame and arg words */
}

void
prog_check_step(const struct kinst_prog *p, uint32_t pc, uint32_t sp)
{
	uint32_t pops, pushes;
	const struct kinst_pinsn *in;

	if (pc >= p->ninsns)
		PC_FAIL("pc %u past %u instructions", pc, p->ninsns);
	if (++pc_st.steps > p->ninsns)
		PC_FAIL("%u steps in a %u-instruction program", pc_st.steps,
		    p->ninsns);
	in = &p->code[pc];
	pc_effect(in, &pops, &pushes);
	if (sp < pops)
		PC_FAIL("pc %u: op %u pops %u of %u", pc, in->op, pops, sp);
	if (sp - pops + pushes > KINST_PROG_STACK)
		PC_FAIL("pc %u: stack %u past %u", pc, sp - pops + pushes,
		    KINST_PROG_STACK);
	if (in->op == KINST_OP_LOAD || in->op == KINST_OP_LOADC) {
		if (in->arg != 1 && in->arg != 2 && in->arg != 4 &&
		    in->arg != 8)
			PC_FAIL("pc %u: load size %u", pc, in->arg);
		pc_st.size_expected = in->arg;
	} else
		pc_st.size_expected = 0;	/* no read may happen */
}

/*
 * Verify code[0..n-1]; if accepted, run it on a fixed context and check
 * the property.  Returns the verdict.
 */
static int
prog_check_one(const struct kinst_pinsn *code, uint32_t n)
{
	static struct kinst_prog p;
	static struct kinst_cap_set caps;
	static uint8_t secbuf[KINST_CAP_REC_MAX + 1024];
	uint32_t off, k, nread;
	struct kinst_regs regs;
	struct kinst_prog_ctx c;
	uint64_t v;
	uint32_t bad_pc, i;
	int verdict, r;

	verdict = kinst_prog_verify(code, n, &p, &bad_pc);
	if (verdict != KINST_PV_OK) {
		if (bad_pc > n)
			PC_FAIL("bad_pc %u past %u", bad_pc, n);
		return (verdict);
	}
	if (p.ninsns != n || p.nloads > KINST_PROG_MAX_LOADS ||
	    p.max_depth > KINST_PROG_STACK)
		PC_FAIL("accepted: ninsns %u nloads %u max_depth %u",
		    p.ninsns, p.nloads, p.max_depth);
	memset(&regs, 0, sizeof(regs));
	for (i = 0; i < KINST_NGPR; i++)	/* pointers into both windows */
		regs.gpr[i] = (i & 1) ? PC_KBASE + i * 4 : PC_UBASE + i * 4;
	for (i = 0; i < PC_WIN; i++) {
		pc_umem[i] = (uint8_t)(i * 7);
		pc_kmem[i] = (uint8_t)(i * 13);
	}
	c.regs = &regs;
	c.pid = 42;
	c.tid = 43;
	c.cpu = 1;
	c.comm = "fuzz\0\0\0\0\0\0\0\0\0\0\0";
	c.out = NULL;
	c.ts = pc_tstate();
	memset(&pc_st, 0, sizeof(pc_st));
	pc_st.in_run = 1;
	r = kinst_prog_run_caps(&p, &c, &v, &caps);
	pc_st.in_run = 0;
	if (r != KINST_PROG_TRUE && r != KINST_PROG_FALSE &&
	    r != KINST_PROG_FAULT && r != KINST_PROG_NOSTATE)
		PC_FAIL("result %d", r);
	if (pc_st.reads > p.nloads)
		PC_FAIL("%u reads, %u loads declared", pc_st.reads, p.nloads);
	if ((r == KINST_PROG_TRUE) != (v != 0))
		PC_FAIL("result %d with value %llu", r,
		    (unsigned long long)v);
	if (p.ncaps > KINST_CAP_MAX || p.cap_bytes > KINST_CAP_REC_MAX -
	    sizeof(struct kinst_hit_record) - KINST_STACK_SEC_BYTES)
		PC_FAIL("accepted: %u captures, %u bytes", p.ncaps,
		    p.cap_bytes);
	if (r == KINST_PROG_FAULT || r == KINST_PROG_NOSTATE)
		return (verdict);
	if (caps.n > p.ncaps)
		PC_FAIL("%u captures, %u declared", caps.n, p.ncaps);
	/* The sections, as the engine writes them, inside cap_bytes. */
	memset(secbuf, 0xa5, sizeof(secbuf));
	pc_st.in_run = 1;
	pc_st.any_size = 1;
	nread = pc_st.reads;
	for (k = 0, off = 0; k < caps.n; k++) {
		if (caps.req[k].index >= p.ncaps ||
		    (caps.req[k].op != KINST_OP_MEM &&
		    caps.req[k].op != KINST_OP_STR &&
		    caps.req[k].op != KINST_OP_VAL))
			PC_FAIL("capture %u: index %u op %u", k,
			    caps.req[k].index, caps.req[k].op);
		off += kinst_cap_section(&caps.req[k], secbuf + off);
		if (off > p.cap_bytes)
			PC_FAIL("captures wrote %u bytes, %u declared", off,
			    p.cap_bytes);
	}
	pc_st.in_run = 0;
	pc_st.any_size = 0;
	for (k = p.cap_bytes; k < sizeof(secbuf); k++)
		if (secbuf[k] != 0xa5)
			PC_FAIL("byte %u written past %u declared", k,
			    p.cap_bytes);
	/* Page by page: at most 2 reads per capture of <= 512 bytes. */
	if (pc_st.reads - nread > 2 * caps.n)
		PC_FAIL("%u capture reads for %u captures",
		    pc_st.reads - nread, caps.n);
	return (verdict);
}

#endif /* !PROG_CHECK_H */
