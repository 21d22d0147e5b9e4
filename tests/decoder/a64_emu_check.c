/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The A64 emulator (kinst_a64_emulate) against the instructions
 * themselves: an arm64 program, cross-built and run under qemu-aarch64 by
 * a64_emu_test.  Each case writes one instruction that kinst emulates
 * (b, bl, b.cond, cbz, cbnz, tbz, tbnz, br, blr, ret, adr, adrp, ldr,
 * ldrsw and prfm literal) into a region of brk words, loads x0-x30 (x17
 * excepted: it holds the instruction's address) and NZCV with random
 * values, runs it, and takes the registers and pc from the signal the
 * next instruction raises: the brk at the fall-through or at the target,
 * or the fault of a literal load outside the region.  The emulator,
 * given the same registers, must leave the same ones.
 *
 *   a64_emu_check [CASES]      prints per kind, exits 1 on a mismatch
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "arm64/kinst_a64.h"
#include "a64_enc.h"

#define	REGION	0x4000000000ull		/* far from the program and its stack */
#define	RSIZE	(4ull << 20)
#define	BRK	0xd4200020u		/* brk #1 */

/* What enter() loads: x[17] is replaced by code, the instruction's address. */
static struct {
	uint64_t	x[31];
	uint64_t	nzcv;
	uint64_t	code;
} st;

static sigjmp_buf env;
static volatile struct {
	int		sig;
	uint64_t	x[31], pc, pstate, addr;
} got;

void	enter(void *state);
__asm__(
	".text\n.globl enter\n.type enter, %function\nenter:\n"
	"	mov x17, x0\n"
	"	ldr x16, [x17, #248]\n"
	"	msr nzcv, x16\n"
	"	ldp x0, x1, [x17, #0]\n	ldp x2, x3, [x17, #16]\n"
	"	ldp x4, x5, [x17, #32]\n	ldp x6, x7, [x17, #48]\n"
	"	ldp x8, x9, [x17, #64]\n	ldp x10, x11, [x17, #80]\n"
	"	ldp x12, x13, [x17, #96]\n	ldp x14, x15, [x17, #112]\n"
	"	ldr x16, [x17, #128]\n	ldr x18, [x17, #144]\n"
	"	ldp x19, x20, [x17, #152]\n	ldp x21, x22, [x17, #168]\n"
	"	ldp x23, x24, [x17, #184]\n	ldp x25, x26, [x17, #200]\n"
	"	ldp x27, x28, [x17, #216]\n	ldp x29, x30, [x17, #232]\n"
	"	ldr x17, [x17, #256]\n"
	"	br x17\n"
	".size enter, . - enter\n");

static void
on_signal(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	int i;

	got.sig = sig;
	for (i = 0; i < 31; i++)
		got.x[i] = uc->uc_mcontext.regs[i];
	got.pc = uc->uc_mcontext.pc;
	got.pstate = uc->uc_mcontext.pstate;
	got.addr = (uint64_t)si->si_addr;
	siglongjmp(env, 1);
}

/* Run st's case; back here from the signal it raises.  Alone, so that
   the caller's variables are not the ones siglongjmp restores. */
static __attribute__((noinline)) void
run_case(void)
{
	memset((void *)&got, 0, sizeof(got));
	if (sigsetjmp(env, 1) == 0)
		enter(&st);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
rnd(void)
{
	return a64_rnd(&rng);
}

/* A register for an operand: 0-31 but 17 (31 where the form allows). */
static unsigned
operand_reg(int zr)
{
	for (;;) {
		unsigned r = (unsigned)(rnd() % (zr ? 32 : 31));
		if (r != 17)
			return r;
	}
}

static int
read_region(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < REGION || addr > REGION + RSIZE - len)
		return 1;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

/* A 4-aligned address in the region's middle 2 MiB other than avoid. */
static uint64_t
in_region(uint64_t around, uint64_t span, uint64_t avoid)
{
	for (;;) {
		uint64_t a = around - span + (rnd() % (2 * span / 4)) * 4;
		if (a != avoid && a >= REGION + 16 && a < REGION + RSIZE - 16)
			return a;
	}
}

enum { K_B, K_BL, K_BCOND, K_CBZ, K_CBNZ, K_TBZ, K_TBNZ, K_BR, K_BLR, K_RET,
	K_ADR, K_ADRP, K_LDRW, K_LDRX, K_LDRSW, K_PRFM, K_LITFAULT, K_COUNT };
static const char *const kname[K_COUNT] = { "b", "bl", "b.cond", "cbz", "cbnz",
	"tbz", "tbnz", "br", "blr", "ret", "adr", "adrp", "ldr w", "ldr x",
	"ldrsw", "prfm", "literal fault" };

/*
 * One case of kind k at address p: the instruction word, with st's
 * registers set up for it; *lit is the literal's address (0: none).
 */
static uint32_t
make_case(int k, uint64_t p, uint64_t *lit)
{
	uint64_t t;
	unsigned r, bit;

	*lit = 0;
	switch (k) {
	case K_B:
	case K_BL:
		return enc_b(k == K_BL, (int64_t)(in_region(p, 1u << 20, p) - p));
	case K_BCOND:
		return enc_bcond((unsigned)(rnd() % 16), (int64_t)(in_region(p, 1u << 19, p) - p));
	case K_CBZ:
	case K_CBNZ:
		r = operand_reg(1);
		if (r != 31 && rnd() % 3 == 0)	/* zero, or zero in the low half */
			st.x[r] = rnd() % 2 ? 0 : st.x[r] << 32;
		return enc_cb((unsigned)(rnd() % 2), k == K_CBNZ, r,
		    (int64_t)(in_region(p, 1u << 19, p) - p));
	case K_TBZ:
	case K_TBNZ:
		r = operand_reg(1);
		bit = (unsigned)(rnd() % 64);
		return enc_tb(bit, k == K_TBNZ, r, (int64_t)(in_region(p, 1u << 14, p) - p));
	case K_BR:
	case K_BLR:
	case K_RET:
		r = operand_reg(0);
		st.x[r] = in_region(p, 1u << 20, p);
		return 0xd61f0000u | ((unsigned)(k - K_BR) << 21) | (r << 5);
	case K_ADR:
		return enc_adr(0, operand_reg(1), (int64_t)(rnd() % (1u << 21)) - (1 << 20));
	case K_ADRP:
		return enc_adr(1, operand_reg(1), (int64_t)(rnd() % (1u << 21)) - (1 << 20));
	case K_LDRW:
	case K_LDRX:
	case K_LDRSW:
	case K_PRFM:
		/* A literal that does not overlap the instruction or its brk. */
		do
			t = in_region(p, 1u << 19, p) & ~(uint64_t)7;
		while (t + 8 > p && t < p + 8);
		*lit = t;
		return enc_lit((unsigned)(k - K_LDRW), 0, operand_reg(1), (int64_t)(t - p));
	case K_LITFAULT:	/* below the region: unmapped */
		t = REGION - 4096 * (1 + rnd() % 16);
		return enc_lit((unsigned)(rnd() % 3), 0, operand_reg(1), (int64_t)(t - p));
	}
	return 0;
}

static int
check(int k, uint32_t w, uint64_t p, const struct kinst_a64_regs *r, int rc)
{
	int i, bad = 0;

	if (k == K_LITFAULT) {
		if (got.sig != SIGSEGV || got.pc != p || rc != KINST_A64_EMU_FAULT) {
			printf("%s %08x at %" PRIx64 ": signal %d at %" PRIx64
			    ", emulator %d\n", kname[k], w, p, got.sig, got.pc, rc);
			return 1;
		}
		return 0;
	}
	if (rc != KINST_A64_EMU_OK || got.sig != SIGTRAP || got.pc != r->pc) {
		printf("%s %08x at %" PRIx64 ": signal %d, pc %" PRIx64
		    "; emulator %d, pc %" PRIx64 "\n", kname[k], w, p, got.sig,
		    got.pc, rc, r->pc);
		return 1;
	}
	for (i = 0; i < 31; i++)
		if (got.x[i] != r->x[i] && bad++ < 3)
			printf("%s %08x at %" PRIx64 ": x%d %" PRIx64 ", emulator %"
			    PRIx64 "\n", kname[k], w, p, i, got.x[i], r->x[i]);
	if ((got.pstate & 0xf0000000u) != (r->pstate & 0xf0000000u)) {
		printf("%s %08x: nzcv changed\n", kname[k], w);
		bad++;
	}
	return bad != 0;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000, i, per[K_COUNT] = { 0 }, bad = 0;
	uint32_t *region;
	struct sigaction sa;
	struct kinst_mem_ops m = { read_region, NULL, NULL };
	static char altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	int k;

	region = mmap((void *)(uintptr_t)REGION, RSIZE, PROT_READ | PROT_WRITE |
	    PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (region == MAP_FAILED || (uint64_t)(uintptr_t)region != REGION) {
		perror("a64_emu_check: mmap");
		return 2;
	}
	for (i = 0; i < (long)(RSIZE / 4); i++)
		region[i] = BRK;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigaction(SIGTRAP, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);

	for (i = 0; i < n; i++) {
		uint64_t p, lit;
		struct kinst_a64_regs r;
		struct kinst_a64_insn d;
		uint32_t w;
		int rc;

		k = (int)(i % K_COUNT);
		/* A literal below the region must be within 1 MiB of it. */
		p = k == K_LITFAULT ? in_region(REGION + 8192, 4096, 0) :
		    in_region(REGION + RSIZE / 2, 1u << 20, 0);
		for (int j = 0; j < 31; j++)
			st.x[j] = rnd();
		st.nzcv = (rnd() & 0xf) << 28;
		st.code = p;
		w = make_case(k, p, &lit);
		st.x[17] = p;
		if (lit != 0) {
			uint64_t v = rnd();
			memcpy((void *)(uintptr_t)lit, &v, 8);
		}
		region[(p - REGION) / 4] = w;
		__builtin___clear_cache((char *)(uintptr_t)p, (char *)(uintptr_t)(p + 4));

		/* The emulator, from the same registers. */
		memcpy(r.x, st.x, sizeof(r.x));
		r.sp = 0;
		r.pc = p;
		r.pstate = st.nzcv;
		kinst_a64_decode(w, &d);
		rc = kinst_a64_emulate(&d, &r, &m, NULL);

		run_case();
		bad += check(k, w, p, &r, rc);
		per[k]++;
		region[(p - REGION) / 4] = BRK;
		if (lit != 0) {
			region[(lit - REGION) / 4] = BRK;
			region[(lit - REGION) / 4 + 1] = BRK;
		}
		__builtin___clear_cache((char *)(uintptr_t)p, (char *)(uintptr_t)(p + 4));
		if (bad > 20)
			break;
	}
	/* Without PAC operations, and SIMD literals: refused, registers unchanged. */
	{
		static const uint32_t later[] = { 0xd65f0bffu /* retaa */,
			0xd73f0a11u /* blraa x16, x17 */, 0x9c000040u /* ldr q0, lit */ };
		for (int j = 0; j < 3; j++) {
			struct kinst_a64_regs r0 = { .pc = REGION }, r1 = r0;
			struct kinst_a64_insn d;
			kinst_a64_decode(later[j], &d);
			if (kinst_a64_emulate(&d, &r1, &m, NULL) != KINST_A64_EMU_BADINSN ||
			    memcmp(&r0, &r1, sizeof(r0)) != 0) {
				printf("%08x: emulated, or registers changed\n", later[j]);
				bad++;
			}
		}
	}
	for (k = 0; k < K_COUNT; k++)
		printf("  %-14s %ld\n", kname[k], per[k]);
	printf("a64 emu: %ld cases, %ld mismatches\n", i, bad);
	return bad != 0;
}
