/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Engine cost per hit in user space, signal delivery excluded: times
 * kinst_engine_hit() on a prepared register file, the way the trap hook
 * calls it.  Prints ns/hit for an out-of-line probe (redirect), an emulated
 * jcc, an emulated call, a miss (not ours), and the same hits without the
 * ring write (no session) and with a full ring (drops), aggregating, and
 * with a 64-byte capture, a histogram whose samples are also recorded
 * (latency --perfetto), and trace --var's programs (a register, a stack
 * slot through the CFA, a predicate on it).  A figure, never a pass/fail.
 *
 * usage: engine_bench [iterations]   (default 5000000 per case)
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kinst_engine.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_tstate.h"

void	kh_os_init(void);

#define	RING_SIZE	(1u << 20)
#define	RESET_EVERY	2048	/* hits between ring resets (< RING_SIZE / record) */

static struct kinst_engine eng;
static struct kinst_session sess;
static struct kinst_ring ring;
static struct kinst_pcpu_count hits[1];
static uint8_t ringbuf[RING_SIZE] __attribute__((aligned(64)));
static uint64_t stack[512];

/* The probed "text": never executed, only decoded and looked up. */
static const uint8_t code[64] __attribute__((aligned(16))) = {
	[0] = 0x48, 0x89, 0xc3,			/* mov %rax,%rbx: out of line */
	[16] = 0x74, 0x10,			/* je +0x10: emulated jcc */
	[32] = 0xe8, 0x00, 0x01, 0x00, 0x00,	/* call +0x100: emulated call */
};

static struct kinst_probe probes[3];

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

static void
arm(struct kinst_probe *p, size_t off, uint32_t id)
{
	uint8_t img[KINST_TRAMP_SIZE];
	uint64_t addr = (uint64_t)(uintptr_t)&code[off];
	int r;

	memset(p, 0, sizeof(*p));
	r = kinst_probe_prepare(p, &code[off], sizeof(code) - off, addr,
	    addr + 0x100000, img);
	if (r != KINST_R_NONE)
		errx(1, "probe at +%zu refused: %s", off, kinst_reason_name(r));
	p->session = &sess;
	p->id = id;
	if (kinst_ptable_insert(&eng.table, p) != KINST_PT_OK)
		errx(1, "kinst_ptable_insert failed");
}

enum ring_mode { RING_RESET, RING_FULL };

/* ns per kinst_engine_hit() (best of 3 rounds), minus nothing. */
static double
measure(uint64_t addr, uint64_t n, enum ring_mode rm, int expect,
    double *baseline)
{
	struct kinst_regs tmpl, r;
	double best = 1e30, base = 1e30;
	uint64_t i, t0, t1, acc = 0;
	int round, res;

	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.rip = addr;
	tmpl.rflags = 0x246;
	tmpl.gpr[KINST_RSP] = (uint64_t)(uintptr_t)&stack[256];
	tmpl.cs = 0x33;
	for (round = 0; round < 3; round++) {
		kinst_ring_init(&ring, ringbuf, RING_SIZE);
		if (rm == RING_FULL) {
			struct kinst_hit_record rec;

			memset(&rec, 0, sizeof(rec));
			rec.hdr.size = sizeof(rec);
			rec.hdr.type = KINST_REC_HIT;
			while (kinst_ring_put(&ring, &rec, sizeof(rec)) == 0)
				;
		}
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			if (rm == RING_RESET && (i % RESET_EVERY) == 0)
				kinst_ring_init(&ring, ringbuf, RING_SIZE);
			r = tmpl;
			res = kinst_engine_hit(&eng, &r);
			if (res != expect)
				errx(1, "unexpected engine result %d", res);
			acc += r.rip;
		}
		t1 = now_ns();
		if ((double)(t1 - t0) / (double)n < best)
			best = (double)(t1 - t0) / (double)n;
		/* The loop without the engine: copy, check, accumulate. */
		t0 = now_ns();
		for (i = 0; i < n; i++) {
			if (rm == RING_RESET && (i % RESET_EVERY) == 0)
				kinst_ring_init(&ring, ringbuf, RING_SIZE);
			r = tmpl;
			__asm__ __volatile__("" : : "r"(&r) : "memory");
			acc += r.rip;
		}
		t1 = now_ns();
		if ((double)(t1 - t0) / (double)n < base)
			base = (double)(t1 - t0) / (double)n;
	}
	if (acc == 42)
		printf("(unlikely)\n");
	*baseline = base;
	return (best);
}

static void
row(const char *what, uint64_t addr, uint64_t n, enum ring_mode rm,
    int expect)
{
	double base, ns;

	ns = measure(addr, n, rm, expect, &base);
	printf("%-44s %8.1f ns/hit  (loop overhead %.1f, net %.1f)\n", what,
	    ns, base, ns - base);
}

/*
 * In-kernel aggregation (issue 11): the same probes armed with
 * KINST_ARM_AGG, counting per probe into a hand-built one-CPU table (what
 * KINST_IOC_AGG_SETUP would allocate), then a log2 histogram of rdi keyed
 * by comm (a KEY/VALUE program): no record at all.
 */
#define	AGG_SLOTS	16
static uint8_t agg_tab[2][AGG_SLOTS * (sizeof(struct kinst_agg_slot) +
    8 * KINST_AGG_LOG2_BUCKETS)] __attribute__((aligned(64)));
static struct kinst_agg_cpu agg_st[1];
static struct kinst_prog_cpu agg_ps[1];
static struct kinst_agg agg;
static struct kinst_prog agg_prog;

static void
bench_agg(uint64_t a_ool, uint64_t a_call, uint64_t n)
{
	static const struct kinst_pinsn code[] = {
		{ .op = KINST_OP_CTX, .arg = KINST_PCTX_COMM0 },
		{ .op = KINST_OP_KEY, .arg = 0 },
		{ .op = KINST_OP_CTX, .arg = KINST_PCTX_COMM8 },
		{ .op = KINST_OP_KEY, .arg = 1 },
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_VALUE },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	uint32_t bad;
	int i;

	memset(&agg, 0, sizeof(agg));
	agg.kind = KINST_AGG_COUNT;
	agg.flags = KINST_AGGF_PROBE;
	agg.nslots = AGG_SLOTS;
	agg.ncpus = 1;
	agg.stride = sizeof(struct kinst_agg_slot);
	agg.cpu_bytes = agg.stride * AGG_SLOTS;
	agg.tables[0] = agg_tab[0];
	agg.tables[1] = agg_tab[1];
	agg.stats = agg_st;
	sess.agg = &agg;
	sess.pstats = agg_ps;
	for (i = 0; i < 3; i++)
		probes[i].flags = KINST_PF_AGG;
	row("out-of-line probe, count (aggregated)", a_ool, n, RING_RESET,
	    KINST_HIT_REDIRECT);
	row("emulated call, count (aggregated)", a_call, n, RING_RESET,
	    KINST_HIT_EMULATED);
	if (kinst_prog_verify(code, 8, &agg_prog, &bad) != KINST_PV_OK)
		errx(1, "the KEY/VALUE program was refused at %u", bad);
	memset(agg_tab, 0, sizeof(agg_tab));
	agg.kind = KINST_AGG_LOG2;
	agg.flags = 0;
	agg.nbuckets = KINST_AGG_LOG2_BUCKETS;
	agg.stride = sizeof(struct kinst_agg_slot) + 8 * KINST_AGG_LOG2_BUCKETS;
	agg.cpu_bytes = agg.stride * AGG_SLOTS;
	probes[0].prog = &agg_prog;
	row("out-of-line probe, hist of rdi --by comm", a_ool, n, RING_RESET,
	    KINST_HIT_REDIRECT);
	/* latency --perfetto: each sample also a record (ABI 1.14). */
	agg.flags = KINST_AGGF_RECORD;
	row("  the same, samples recorded (AGGF_RECORD)", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	agg.flags = 0;
	probes[0].prog = NULL;
	if (agg_st[0].st.overflow != 0 || agg_st[0].st.nested != 0)
		errx(1, "aggregation: %ju overflowed, %ju nested",
		    (uintmax_t)agg_st[0].st.overflow, (uintmax_t)agg_st[0].st.nested);
	for (i = 0; i < 3; i++)
		probes[i].flags = 0;
	sess.agg = NULL;
}

/*
 * Captures (issue 11, --mem): the out-of-line probe recorded with a 64-byte
 * MEM capture of this process's memory, against the bare record above.  In
 * user space the read is process_vm_readv(2) (a system call: the kernels'
 * no-fault copies cost far less), so also the same capture whose address
 * computation fails (LOADC of a non-canonical address, refused before any
 * read): the record and section work without the read.
 */
static uint64_t cap_capbuf[KINST_CAP_REC_MAX / 8];
static uint8_t cap_data[64] __attribute__((aligned(64))) = "captured bytes";

static void
bench_cap(uint64_t a_ool, uint64_t n)
{
	struct kinst_pinsn code[] = {
		{ .op = KINST_OP_IMM, .imm = (uint64_t)(uintptr_t)cap_data },
		{ .op = KINST_OP_MEM, .imm = 64 },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	struct kinst_pinsn deref[] = {
		{ .op = KINST_OP_IMM, .imm = 0x8000000000000000ull },
		{ .op = KINST_OP_LOADC, .arg = 8 },
		{ .op = KINST_OP_MEM, .imm = 64 },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_prog cprog, dprog;
	static struct kinst_prog_cpu ps[1];
	uint32_t bad;

	if (kinst_prog_verify(code, 4, &cprog, &bad) != KINST_PV_OK ||
	    kinst_prog_verify(deref, 5, &dprog, &bad) != KINST_PV_OK)
		errx(1, "a capture program was refused at %u", bad);
	sess.pstats = ps;
	sess.capbuf = cap_capbuf;
	probes[0].prog = &cprog;
	row("out-of-line probe, recorded, --mem 64 bytes", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = &dprog;
	row("out-of-line probe, recorded, --mem no read", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = NULL;
	if (ps[0].st.filtered != 0)
		errx(1, "capture programs filtered %ju hits",
		    (uintmax_t)ps[0].st.filtered);
	sess.capbuf = NULL;
	sess.pstats = NULL;
}

/*
 * A false predicate (rdx == 12345, the shape of --if 'rdx == 7'): the
 * program runs, nothing is recorded, the hit is counted as filtered.
 */
static void
bench_pred(uint64_t a_ool, uint64_t a_call, uint64_t n)
{
	struct kinst_pinsn code[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDX },
		{ .op = KINST_OP_IMM, .imm = 12345 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_prog pprog;
	static struct kinst_prog_cpu ps[1];
	uint32_t bad;

	if (kinst_prog_verify(code, 4, &pprog, &bad) != KINST_PV_OK)
		errx(1, "the predicate was refused at %u", bad);
	sess.pstats = ps;
	probes[0].prog = &pprog;
	row("out-of-line probe, --if false (filtered)", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = NULL;
	probes[2].prog = &pprog;
	row("emulated call, --if false (filtered)", a_call, n,
	    RING_RESET, KINST_HIT_EMULATED);
	probes[2].prog = NULL;
	if (ps[0].st.filtered == 0)
		errx(1, "the false predicate filtered nothing");
	sess.pstats = NULL;
}

/*
 * C variables by name (issue 23): the programs kinstctl builds for
 * trace --var.  A variable in a register needs none (the record has the
 * registers: the bare record above).  One on the stack, through the CFA
 * (DW_OP_fbreg -16 with the CFA rsp+8, what -O2 code has), is an 8-byte
 * capture at rsp+8-16; --if '$x == 12345' on it loads the same slot.  The
 * user-space read is a system call (see bench_cap): the kernels' cost less.
 */
static void
bench_vars(uint64_t a_ool, uint64_t n)
{
	struct kinst_pinsn cap[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_IMM, .imm = 8 },
		{ .op = KINST_OP_ADD },
		{ .op = KINST_OP_IMM, .imm = (uint64_t)-16 },
		{ .op = KINST_OP_ADD },
		{ .op = KINST_OP_MEM, .imm = 8 },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	struct kinst_pinsn pred[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_IMM, .imm = 8 },
		{ .op = KINST_OP_ADD },
		{ .op = KINST_OP_IMM, .imm = (uint64_t)-16 },
		{ .op = KINST_OP_ADD },
		{ .op = KINST_OP_LOAD, .arg = 8 },
		{ .op = KINST_OP_IMM, .imm = 12345 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_prog cprog, pprog;
	static struct kinst_prog_cpu ps[1];
	uint32_t bad;

	if (kinst_prog_verify(cap, 8, &cprog, &bad) != KINST_PV_OK ||
	    kinst_prog_verify(pred, 9, &pprog, &bad) != KINST_PV_OK)
		errx(1, "a --var program was refused at %u", bad);
	sess.pstats = ps;
	sess.capbuf = cap_capbuf;
	row("out-of-line probe, --var in a register", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = &cprog;
	row("out-of-line probe, --var on the stack (CFA)", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = &pprog;
	row("out-of-line probe, --if '$x == 12345' false", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = NULL;
	if (ps[0].st.filtered == 0)
		errx(1, "the stack predicate filtered nothing");
	sess.capbuf = NULL;
	sess.pstats = NULL;
}

/*
 * Per-thread state (ABI 1.10): what a latency's start and end cost in the
 * engine.  One probe whose program opens an activation framed by rsp and
 * then reads its elapsed time and closes it (a start + end pair in one
 * hit), filtered out, against the same probe with a program that only
 * returns false (the bare filtered hit).  Both read the clock once per
 * run, as the kernel's would (clock_gettime here).
 */
static void
bench_ts(uint64_t a_ool, uint64_t n)
{
	static const struct kinst_pinsn bare[] = {
		{ .op = KINST_OP_IMM, .imm = 0 },
		{ .op = KINST_OP_RET },
	};
	static const struct kinst_pinsn pair[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_TS_PUSH, .arg = 1, .imm = 1 },
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_TS_GET, .arg = KINST_TSF_CLOSE |
		    KINST_TS_ELAPSED, .imm = 1 },
		{ .op = KINST_OP_IMM, .imm = (uint64_t)-1 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_RET },
	};
	/* trace --var of an entry value: the entry's push, then at the
	 * instruction the saved word (soft) captured as a value, recorded. */
	static const struct kinst_pinsn push[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_TS_PUSH, .arg = 1, .imm = 2 },
		{ .op = KINST_OP_IMM, .imm = 0 },
		{ .op = KINST_OP_RET },
	};
	static const struct kinst_pinsn entry[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_TS_GET, .arg = KINST_TSF_SOFT | 0, .imm = 2 },
		{ .op = KINST_OP_VAL },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_prog uprog, eprog;
	uint64_t matched;
	static struct kinst_ts_slot slots[64];
	static struct kinst_ts_cpu tst[1];
	static struct kinst_tstate ts = {
		.nslots = 64, .ncpus = 1, .idle_ns = 1000000000, .epoch = 1,
		.slots = slots, .stats = tst,
	};
	static struct kinst_prog bprog, tprog;
	static struct kinst_prog_cpu ps[1];
	uint32_t bad;

	if (kinst_prog_verify(bare, 2, &bprog, &bad) != KINST_PV_OK ||
	    kinst_prog_verify(pair, 8, &tprog, &bad) != KINST_PV_OK)
		errx(1, "a per-thread state program was refused at %u", bad);
	sess.pstats = ps;
	sess.ts = &ts;
	probes[0].prog = &bprog;
	row("out-of-line probe, program false (bare)", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = &tprog;
	row("out-of-line probe, TS push + get/close", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = NULL;
	if (tst[0].st.closed == 0 || tst[0].st.closed != tst[0].st.pushed)
		errx(1, "the pair closed %ju of %ju activations",
		    (uintmax_t)tst[0].st.closed, (uintmax_t)tst[0].st.pushed);
	if (kinst_prog_verify(push, 5, &uprog, &bad) != KINST_PV_OK ||
	    kinst_prog_verify(entry, 5, &eprog, &bad) != KINST_PV_OK)
		errx(1, "an entry-value program was refused at %u", bad);
	sess.capbuf = cap_capbuf;
	probes[0].prog = &uprog;
	row("out-of-line probe, the entry's push (filtered)", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	matched = tst[0].st.matched;
	probes[0].prog = &eprog;
	row("out-of-line probe, --var an entry value", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	probes[0].prog = NULL;
	sess.capbuf = NULL;
	if (tst[0].st.matched - matched < n)
		errx(1, "the entry value was found at %ju of %ju hits",
		    (uintmax_t)(tst[0].st.matched - matched), (uintmax_t)n);
	sess.ts = NULL;
	sess.pstats = NULL;
}

int
main(int argc, char **argv)
{
	uint64_t n = 5000000;
	uint64_t a_ool, a_jcc, a_call;
	int i;

	if (argc > 2 || (argc == 2 && (n = strtoull(argv[1], NULL, 0)) == 0))
		errx(2, "usage: engine_bench [iterations]");
	kh_os_init();
	kinst_engine_init(&eng, 1, false);
	kinst_ring_init(&ring, ringbuf, RING_SIZE);
	kinst_session_init(&sess, &ring, hits, 1);
	arm(&probes[0], 0, 1);
	arm(&probes[1], 16, 2);
	arm(&probes[2], 32, 3);
	a_ool = probes[0].addr;
	a_jcc = probes[1].addr;
	a_call = probes[2].addr;
	printf("engine_bench: %ju hits per case, best of 3, one thread, "
	    "record %zu bytes, ring %u KiB\n", (uintmax_t)n,
	    sizeof(struct kinst_hit_record), RING_SIZE / 1024);
	row("out-of-line probe (redirect), recorded", a_ool, n, RING_RESET,
	    KINST_HIT_REDIRECT);
	row("emulated jcc, recorded", a_jcc, n, RING_RESET,
	    KINST_HIT_EMULATED);
	row("emulated call rel32, recorded", a_call, n, RING_RESET,
	    KINST_HIT_EMULATED);
	row("miss (address not ours)", a_ool + 1, n, RING_RESET,
	    KINST_HIT_NOT_OURS);
	row("out-of-line probe, ring full (drop)", a_ool, n, RING_FULL,
	    KINST_HIT_REDIRECT);
	row("emulated call, ring full (drop)", a_call, n, RING_FULL,
	    KINST_HIT_EMULATED);
	bench_agg(a_ool, a_call, n);
	bench_pred(a_ool, a_call, n);
	bench_cap(a_ool, n);
	bench_vars(a_ool, n);
	bench_ts(a_ool, n);
	for (i = 0; i < 3; i++)
		probes[i].session = NULL;
	row("out-of-line probe, no session (no record)", a_ool, n,
	    RING_RESET, KINST_HIT_REDIRECT);
	row("emulated jcc, no session (no record)", a_jcc, n, RING_RESET,
	    KINST_HIT_EMULATED);
	row("emulated call, no session (no record)", a_call, n, RING_RESET,
	    KINST_HIT_EMULATED);
	printf("kinst_os_now_ns() alone: ");
	{
		uint64_t t0 = now_ns(), acc = 0, j;

		for (j = 0; j < n; j++)
			acc += kinst_os_now_ns();
		printf("%.1f ns/call%s\n", (double)(now_ns() - t0) / (double)n,
		    acc == 1 ? " " : "");
	}
	return (0);
}
