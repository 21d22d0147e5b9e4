/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Probe programs (common/kinst_prog.c): the interpreter's values against
 * values this test computes, every refusal of the verifier, and random
 * programs checked against tests/unit/prog_check.h's property (the same
 * check the libFuzzer target tests/fuzz/fuzz_prog.c runs).
 */
#include <atf-c.h>
#include <stdint.h>
#include <string.h>

#include "prog_check.h"
#include "kinst_tstate.c"
#include "kinst_prog.c"		/* with prog_check.h's KINST_PROG_STEP */
#include "kinst_progname.c"
#include "kinst_agg.c"		/* KINST_OP_KEY / KINST_OP_VALUE */

#define	I(o, a, f, im)	((struct kinst_pinsn){ .op = (o), .arg = (a),	\
			    .off = (f), .imm = (im) })
#define	IMM(v)		I(KINST_OP_IMM, 0, 0, (v))
#define	REG(r)		I(KINST_OP_REG, (r), 0, 0)
#define	CTX(k)		I(KINST_OP_CTX, (k), 0, 0)
#define	LOAD(n)		I(KINST_OP_LOAD, (n), 0, 0)
#define	OP(o)		I((o), 0, 0, 0)
#define	JMP(o, f)	I((o), 0, (f), 0)
#define	RET		OP(KINST_OP_RET)
#define	MEM(n)		I(KINST_OP_MEM, 0, 0, (n))
#define	STR(n)		I(KINST_OP_STR, 0, 0, (n))
#define	LOADC(n)	I(KINST_OP_LOADC, (n), 0, 0)
#define	NI(a)		((uint32_t)(sizeof(a) / sizeof((a)[0])))

#define	REFUSE2(want, want_pc, ...) do {				\
	struct kinst_pinsn c_[] = { __VA_ARGS__ };			\
	ATF_CHECK_EQ_MSG(kinst_prog_verify(c_, NI(c_), &p, &bad), (want),\
	    "line %d", __LINE__);					\
	ATF_CHECK_EQ_MSG(bad, (want_pc), "line %d", __LINE__);		\
} while (0)

static struct kinst_regs t_regs;
static struct kinst_prog t_prog;

/* Verify (must pass) and run on t_regs; returns the result, *v the value. */
static int
run(const struct kinst_pinsn *code, uint32_t n, uint64_t *v)
{
	struct kinst_prog_ctx c;
	uint32_t bad;
	int verdict, r;

	verdict = kinst_prog_verify(code, n, &t_prog, &bad);
	ATF_REQUIRE_MSG(verdict == KINST_PV_OK, "refused: %s at %u",
	    kinst_prog_verdict_name(verdict), bad);
	c.regs = &t_regs;
	c.pid = -5;
	c.tid = 1234;
	c.cpu = 3;
	c.comm = "dd\0\0\0\0\0\0abcdefg";	/* 16 bytes with the NUL */
	c.out = NULL;
	memset(&pc_st, 0, sizeof(pc_st));
	pc_st.in_run = 1;
	r = kinst_prog_run(&t_prog, &c, v);
	pc_st.in_run = 0;
	return (r);
}

static uint64_t
value(const struct kinst_pinsn *code, uint32_t n)
{
	uint64_t v;
	int r;

	r = run(code, n, &v);
	ATF_REQUIRE(r == KINST_PROG_TRUE || r == KINST_PROG_FALSE);
	return (v);
}

#define	BIN(a, b, o)	do {						\
	struct kinst_pinsn c_[] = { IMM(a), IMM(b), OP(o), RET };	\
	ATF_CHECK_EQ_MSG(value(c_, NI(c_)), (uint64_t)(want),		\
	    "op %d", (o));						\
} while (0)

ATF_TC_WITHOUT_HEAD(interp_arith);
ATF_TC_BODY(interp_arith, tc)
{
	uint64_t a, b, want;
	uint32_t i;

	/* Pairs where signed and unsigned order differ, shifts past 63. */
	static const uint64_t vals[][2] = {
		{ 7, 9 }, { 9, 7 }, { 5, 5 }, { (uint64_t)-1, 1 },
		{ 1, (uint64_t)-1 }, { 0x8000000000000000ull, 3 },
		{ 0x123456789abcdef0ull, 68 }, { 0, 0 },
	};
	for (i = 0; i < NI(vals); i++) {
		a = vals[i][0];
		b = vals[i][1];
		want = a + b; BIN(a, b, KINST_OP_ADD);
		want = a - b; BIN(a, b, KINST_OP_SUB);
		want = a * b; BIN(a, b, KINST_OP_MUL);
		want = a & b; BIN(a, b, KINST_OP_AND);
		want = a | b; BIN(a, b, KINST_OP_OR);
		want = a ^ b; BIN(a, b, KINST_OP_XOR);
		want = a << (b % 64); BIN(a, b, KINST_OP_SHL);
		want = a >> (b % 64); BIN(a, b, KINST_OP_SHR);
		want = a == b; BIN(a, b, KINST_OP_EQ);
		want = a != b; BIN(a, b, KINST_OP_NE);
		want = a < b; BIN(a, b, KINST_OP_LTU);
		want = a <= b; BIN(a, b, KINST_OP_LEU);
		want = a > b; BIN(a, b, KINST_OP_GTU);
		want = a >= b; BIN(a, b, KINST_OP_GEU);
		want = (int64_t)a < (int64_t)b; BIN(a, b, KINST_OP_LTS);
		want = (int64_t)a <= (int64_t)b; BIN(a, b, KINST_OP_LES);
		want = (int64_t)a > (int64_t)b; BIN(a, b, KINST_OP_GTS);
		want = (int64_t)a >= (int64_t)b; BIN(a, b, KINST_OP_GES);
		{
			struct kinst_pinsn u[] = { IMM(a), OP(KINST_OP_LNOT),
			    IMM(a), OP(KINST_OP_NEG), IMM(a),
			    OP(KINST_OP_BNOT), OP(KINST_OP_XOR),
			    OP(KINST_OP_ADD), RET };
			ATF_CHECK_EQ(value(u, NI(u)),
			    (uint64_t)(a == 0) + ((0 - a) ^ ~a));
		}
	}
}

ATF_TC_WITHOUT_HEAD(interp_context);
ATF_TC_BODY(interp_context, tc)
{
	uint64_t comm0, comm8;
	uint32_t r;
	const char *comm = "dd\0\0\0\0\0\0abcdefg";

	for (r = 0; r < KINST_NGPR; r++)
		t_regs.gpr[r] = 0x1000 * (r + 1) + r;
	t_regs.rip = 0xffffffff81234567ull;
	t_regs.rflags = 0x246;
	for (r = 0; r < KINST_NGPR; r++) {
		struct kinst_pinsn c[] = { REG(r), RET };

		ATF_CHECK_EQ(value(c, NI(c)), t_regs.gpr[r]);
	}
	{
		struct kinst_pinsn c[] = { REG(KINST_PREG_RIP), RET };
		ATF_CHECK_EQ(value(c, NI(c)), t_regs.rip);
	}
	{
		struct kinst_pinsn c[] = { REG(KINST_PREG_RFLAGS), RET };
		ATF_CHECK_EQ(value(c, NI(c)), 0x246);
	}
	{
		struct kinst_pinsn c[] = { CTX(KINST_PCTX_PID), RET };
		ATF_CHECK_EQ(value(c, NI(c)), (uint64_t)-5);	/* sign-extended */
	}
	{
		struct kinst_pinsn c[] = { CTX(KINST_PCTX_TID), RET };
		ATF_CHECK_EQ(value(c, NI(c)), 1234);
	}
	{
		struct kinst_pinsn c[] = { CTX(KINST_PCTX_CPU), RET };
		ATF_CHECK_EQ(value(c, NI(c)), 3);
	}
	memcpy(&comm0, comm, 8);	/* this test runs little-endian */
	memcpy(&comm8, comm + 8, 8);
	{
		struct kinst_pinsn c[] = { CTX(KINST_PCTX_COMM0), RET };
		ATF_CHECK_EQ(value(c, NI(c)), comm0);
		ATF_CHECK_EQ(comm0, 0x6464);
	}
	{
		struct kinst_pinsn c[] = { CTX(KINST_PCTX_COMM8), RET };
		ATF_CHECK_EQ(value(c, NI(c)), comm8);
	}
}

/* rdx == 7 && (rsi > 100 || !rdi), with short-circuit jumps. */
ATF_TC_WITHOUT_HEAD(interp_jumps);
ATF_TC_BODY(interp_jumps, tc)
{
	struct kinst_pinsn c[] = {
		REG(KINST_RDX), IMM(7), OP(KINST_OP_EQ),	/* 0-2 */
		JMP(KINST_OP_JZ, 9),				/* 3 -> 13 */
		REG(KINST_RSI), IMM(100), OP(KINST_OP_GTU),	/* 4-6 */
		JMP(KINST_OP_JNZ, 3),				/* 7 -> 11 */
		REG(KINST_RDI), OP(KINST_OP_LNOT),		/* 8-9 */
		JMP(KINST_OP_JA, 3),				/* 10 -> 14 */
		IMM(1),						/* 11 */
		JMP(KINST_OP_JA, 1),				/* 12 -> 14 */
		IMM(0),						/* 13 */
		RET,						/* 14 */
	};
	uint64_t rdx, rsi, rdi, v, want;
	int r;

	for (rdx = 6; rdx <= 7; rdx++)
		for (rsi = 99; rsi <= 101; rsi++)
			for (rdi = 0; rdi <= 1; rdi++) {
				t_regs.gpr[KINST_RDX] = rdx;
				t_regs.gpr[KINST_RSI] = rsi;
				t_regs.gpr[KINST_RDI] = rdi;
				want = rdx == 7 && (rsi > 100 || !rdi);
				r = run(c, NI(c), &v);
				ATF_CHECK_EQ(v, want);
				ATF_CHECK_EQ(r, want ? KINST_PROG_TRUE :
				    KINST_PROG_FALSE);
				ATF_CHECK(pc_st.steps <= NI(c));
			}
}

ATF_TC_WITHOUT_HEAD(interp_loads);
ATF_TC_BODY(interp_loads, tc)
{
	static const uint8_t sizes[] = { 1, 2, 4, 8 };
	uint64_t v, want;
	uint32_t i, k, off;
	int r;

	for (i = 0; i < PC_WIN; i++) {
		pc_umem[i] = (uint8_t)(0x11 * i + 3);
		pc_kmem[i] = (uint8_t)(0x35 * i + 1);
	}
	for (k = 0; k < NI(sizes); k++)
		for (off = 0; off + sizes[k] <= PC_WIN; off += 5) {
			/* User half: kinst_os_read_user. */
			struct kinst_pinsn u[] = { IMM(PC_UBASE + off),
			    LOAD(sizes[k]), RET };
			struct kinst_pinsn kk[] = { REG(KINST_RSI),
			    IMM(off), OP(KINST_OP_ADD), LOAD(sizes[k]), RET };

			want = 0;
			for (i = 0; i < sizes[k]; i++)
				want |= (uint64_t)pc_umem[off + i] << (8 * i);
			r = run(u, NI(u), &v);
			ATF_CHECK(r != KINST_PROG_FAULT);
			ATF_CHECK_EQ(v, want);
			ATF_CHECK_EQ(pc_st.reads, 1);
			/* Kernel half through a register: kinst_os_read. */
			t_regs.gpr[KINST_RSI] = PC_KBASE;
			want = 0;
			for (i = 0; i < sizes[k]; i++)
				want |= (uint64_t)pc_kmem[off + i] << (8 * i);
			r = run(kk, NI(kk), &v);
			ATF_CHECK(r != KINST_PROG_FAULT);
			ATF_CHECK_EQ(v, want);
		}
	/* *(*(rsi)+8) with rsi -> a kernel pointer to the user window. */
	v = PC_UBASE;
	memcpy(pc_kmem, &v, 8);
	memcpy(&want, pc_umem + 8, 8);
	{
		struct kinst_pinsn c[] = { REG(KINST_RSI), LOAD(8), IMM(8),
		    OP(KINST_OP_ADD), LOAD(8), RET };
		ATF_CHECK(run(c, NI(c), &v) != KINST_PROG_FAULT);
		ATF_CHECK_EQ(v, want);
		ATF_CHECK_EQ(pc_st.reads, 2);
	}
}

ATF_TC_WITHOUT_HEAD(interp_faults);
ATF_TC_BODY(interp_faults, tc)
{
	static const uint64_t bad[] = {
		0,				/* NULL */
		PC_UBASE + PC_WIN - 4,		/* runs off the user window */
		PC_KBASE - 8,			/* unmapped kernel address */
		0x0000800000000000ull,		/* non-canonical */
		0x00007ffffffffffcull,		/* straddles into non-canonical */
		0xfffffffffffffffcull,		/* wraps around */
	};
	uint64_t v;
	uint32_t i;

	for (i = 0; i < NI(bad); i++) {
		struct kinst_pinsn c[] = { IMM(bad[i]), LOAD(8), IMM(1),
		    OP(KINST_OP_OR), RET };

		ATF_CHECK_EQ_MSG(run(c, NI(c), &v), KINST_PROG_FAULT,
		    "address %#llx", (unsigned long long)bad[i]);
		ATF_CHECK_EQ(v, 0);
	}
}

/* Every refusal: the verdict and the instruction it names. */
ATF_TC_WITHOUT_HEAD(verify_refusals);
ATF_TC_BODY(verify_refusals, tc)
{
	static struct kinst_pinsn big[KINST_PROG_MAX_INSNS + 1];
	struct kinst_pinsn deep[KINST_PROG_STACK + 2 * KINST_PROG_STACK];
	struct kinst_pinsn loads[3 * KINST_PROG_MAX_LOADS + 4];
	struct kinst_prog p;
	uint32_t bad, i, n;

#define	REFUSE(want, want_pc, ...) do {					\
	struct kinst_pinsn c_[] = { __VA_ARGS__ };			\
	ATF_CHECK_EQ_MSG(kinst_prog_verify(c_, NI(c_), &p, &bad), (want),\
	    "line %d", __LINE__);					\
	ATF_CHECK_EQ_MSG(bad, (want_pc), "line %d", __LINE__);		\
} while (0)
	ATF_CHECK_EQ(kinst_prog_verify(big, 0, &p, &bad), KINST_PV_EMPTY);
	for (i = 0; i < NI(big); i++)
		big[i] = IMM(0);
	ATF_CHECK_EQ(kinst_prog_verify(big, NI(big), &p, &bad),
	    KINST_PV_TOO_LONG);
	REFUSE(KINST_PV_BAD_OP, 0, OP(0), RET);
	REFUSE(KINST_PV_BAD_OP, 1, IMM(1), OP(KINST_OP_COUNT_), RET);
	REFUSE(KINST_PV_BAD_OP, 1, IMM(1), OP(0xff), RET);
	REFUSE(KINST_PV_BAD_ARG, 0, REG(KINST_PREG_COUNT), RET);
	REFUSE(KINST_PV_BAD_ARG, 0, CTX(KINST_PCTX_COUNT), RET);
	REFUSE(KINST_PV_BAD_ARG, 1, IMM(0), LOAD(3), RET);
	REFUSE(KINST_PV_BAD_ARG, 1, IMM(0), LOAD(0), RET);
	REFUSE(KINST_PV_BAD_ARG, 1, IMM(0), LOAD(16), RET);
	REFUSE(KINST_PV_NONZERO, 0, I(KINST_OP_IMM, 1, 0, 0), RET);
	REFUSE(KINST_PV_NONZERO, 0, I(KINST_OP_IMM, 0, 1, 0), IMM(0), RET);
	REFUSE(KINST_PV_NONZERO, 0, I(KINST_OP_REG, 0, 0, 1), RET);
	REFUSE(KINST_PV_NONZERO, 1, IMM(0), I(KINST_OP_RET, 0, 0, 0x10));
	{
		struct kinst_pinsn c[] = { IMM(0), RET };

		c[0]._pad = 1;
		ATF_CHECK_EQ(kinst_prog_verify(c, 2, &p, &bad),
		    KINST_PV_NONZERO);
	}
	REFUSE(KINST_PV_JUMP_BACK, 2, IMM(1), IMM(1), JMP(KINST_OP_JZ, -2),
	    RET);
	REFUSE(KINST_PV_JUMP_BACK, 1, IMM(1), JMP(KINST_OP_JA, -1), RET);
	REFUSE(KINST_PV_JUMP_OUT, 1, IMM(1), JMP(KINST_OP_JNZ, 1), RET);
	REFUSE(KINST_PV_JUMP_OUT, 1, IMM(1), JMP(KINST_OP_JA, 0x7fff), RET);
	REFUSE(KINST_PV_UNDERFLOW, 0, OP(KINST_OP_ADD), RET);
	REFUSE(KINST_PV_UNDERFLOW, 1, IMM(1), OP(KINST_OP_ADD), RET);
	REFUSE(KINST_PV_UNDERFLOW, 0, LOAD(8), RET);
	REFUSE(KINST_PV_UNDERFLOW, 0, JMP(KINST_OP_JZ, 0), IMM(0), RET);
	REFUSE(KINST_PV_UNDERFLOW, 0, RET);
	/* Exactly KINST_PROG_STACK values fit; one more overflows. */
	for (n = 0; n < KINST_PROG_STACK; n++)
		deep[n] = IMM(n);
	for (i = 0; i < KINST_PROG_STACK - 1; i++)
		deep[n++] = OP(KINST_OP_ADD);
	deep[n++] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(deep, n, &t_prog, &bad), KINST_PV_OK);
	ATF_CHECK_EQ(t_prog.max_depth, KINST_PROG_STACK);
	ATF_CHECK_EQ(value(deep, n), (uint64_t)KINST_PROG_STACK *
	    (KINST_PROG_STACK - 1) / 2);
	for (n = 0; n <= KINST_PROG_STACK; n++)
		deep[n] = IMM(n);
	for (i = 0; i < KINST_PROG_STACK; i++)
		deep[n++] = OP(KINST_OP_ADD);
	deep[n++] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(deep, n, &p, &bad), KINST_PV_OVERFLOW);
	ATF_CHECK_EQ(bad, KINST_PROG_STACK);
	/* Join at 3: depth 1 by the jump (JZ popped), 2 by falling through. */
	REFUSE(KINST_PV_MISMATCH, 3, IMM(1), IMM(0), JMP(KINST_OP_JZ, 1),
	    IMM(5), RET);
	REFUSE(KINST_PV_MISMATCH, 4, IMM(1), IMM(1), JMP(KINST_OP_JNZ, 2),
	    IMM(5), IMM(6), RET);
	REFUSE(KINST_PV_UNREACHABLE, 2, IMM(1), JMP(KINST_OP_JA, 1), IMM(2),
	    RET);
	REFUSE(KINST_PV_UNREACHABLE, 2, IMM(1), RET, IMM(2), RET);
	REFUSE(KINST_PV_FALL_OFF, 0, IMM(1));
	REFUSE(KINST_PV_FALL_OFF, 1, IMM(1), IMM(1));
	REFUSE(KINST_PV_RET_DEPTH, 2, IMM(1), IMM(1), RET);
	/* Loads: KINST_PROG_MAX_LOADS pass, one more is refused. */
	n = 0;
	loads[n++] = IMM(PC_UBASE);
	for (i = 0; i < KINST_PROG_MAX_LOADS; i++) {
		loads[n++] = LOAD(1);
		loads[n++] = IMM(PC_UBASE);
		loads[n++] = OP(KINST_OP_ADD);
	}
	loads[n++] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(loads, n, &p, &bad), KINST_PV_OK);
	ATF_CHECK_EQ(p.nloads, KINST_PROG_MAX_LOADS);
	loads[n - 1] = LOAD(1);
	loads[n++] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(loads, n, &p, &bad),
	    KINST_PV_TOO_MANY_LOADS);
	ATF_CHECK_EQ(bad, n - 2);
	/* Every verdict has a name. */
	for (i = 0; i < KINST_PV_COUNT_; i++)
		ATF_CHECK(kinst_prog_verdict_name(i) != NULL &&
		    strcmp(kinst_prog_verdict_name(i), "unknown verdict") != 0);
#undef REFUSE
}

/* xorshift64*: deterministic, so a failure is reproducible by its seed. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (*s * 0x2545f4914f6cdd1dull);
}

/*
 * An opcode for a generated program: mostly one the stack can take (a push
 * when it is empty, RET when it holds one value, now and then), some
 * programs climbing to around the stack limit (*peak, 0 once reached) and
 * back down, and some anything at all.
 */
static uint8_t
pick_op(uint64_t r, uint32_t depth, uint32_t *peak)
{
	static const uint8_t push[] = { KINST_OP_IMM, KINST_OP_REG,
	    KINST_OP_CTX };

	if (*peak != 0 && depth >= *peak)
		*peak = 0;
	if (*peak != 0)
		return (push[(r >> 48) % 3]);
	if ((r >> 40) % 10 == 0)
		return (1 + (uint8_t)(r % (KINST_OP_COUNT_ - 1)));
	if (depth == 0)
		return (push[(r >> 48) % 3]);
	if (depth == 1 && (r >> 44) % 5 == 0)
		return (KINST_OP_RET);
	if (depth > 1 && (r >> 44) % 2 == 0)	/* come back down */
		return (KINST_OP_ADD + (uint8_t)((r >> 52) % 18));
	if (depth == 1 && (r >> 44) % 3 == 0)
		return (push[(r >> 48) % 3]);
	return (1 + (uint8_t)(r % (KINST_OP_COUNT_ - 1)));
}

/*
 * Captures: the verifier's limits (each length, the count, the total),
 * with the reason; what it declares (ncaps, cap_bytes); the interpreter's
 * requests: addresses, ranks, a faulting LOADC marking only its own
 * capture (DEREF) and never ending the program, a LOAD fault still ending
 * it; captures ignored without a set (aggregation).
 */
ATF_TC_WITHOUT_HEAD(verify_captures);
ATF_TC_BODY(verify_captures, tc)
{
	struct kinst_pinsn c[3 * (KINST_CAP_MAX + 1) + 2];
	struct kinst_prog p;
	uint32_t bad, i, n;

	REFUSE2(KINST_PV_CAP_LEN, 1, IMM(PC_UBASE), MEM(0), IMM(1), RET);
	REFUSE2(KINST_PV_CAP_LEN, 1, IMM(PC_UBASE), MEM(KINST_CAP_MEM_MAX + 1),
	    IMM(1), RET);
	REFUSE2(KINST_PV_CAP_LEN, 1, IMM(PC_UBASE), STR(0), IMM(1), RET);
	REFUSE2(KINST_PV_CAP_LEN, 1, IMM(PC_UBASE), STR(KINST_CAP_STR_MAX + 1),
	    IMM(1), RET);
	REFUSE2(KINST_PV_CAP_LEN, 1, IMM(PC_UBASE), MEM(1ull << 32), IMM(1),
	    RET);
	REFUSE2(KINST_PV_NONZERO, 1, IMM(PC_UBASE), I(KINST_OP_MEM, 1, 0, 8),
	    IMM(1), RET);
	REFUSE2(KINST_PV_BAD_ARG, 1, IMM(PC_UBASE), LOADC(3), RET);
	REFUSE2(KINST_PV_UNDERFLOW, 0, MEM(8), IMM(1), RET);
	REFUSE2(KINST_PV_OK, 0, IMM(PC_UBASE), MEM(KINST_CAP_MEM_MAX), IMM(1),
	    RET);
	REFUSE2(KINST_PV_OK, 0, IMM(PC_UBASE), STR(KINST_CAP_STR_MAX), IMM(1),
	    RET);
	/* KINST_CAP_MAX captures pass, one more does not. */
	for (n = 0, i = 0; i <= KINST_CAP_MAX; i++) {
		c[n++] = REG(KINST_RSI);
		c[n++] = STR(1);
	}
	c[n++] = IMM(1);
	c[n++] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(c, n, &p, &bad),
	    KINST_PV_TOO_MANY_CAPS);
	ATF_CHECK_EQ(bad, 2 * KINST_CAP_MAX + 1);
	c[2 * KINST_CAP_MAX] = IMM(1);
	c[2 * KINST_CAP_MAX + 1] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(c, 2 * KINST_CAP_MAX + 2, &p, &bad),
	    KINST_PV_OK);
	ATF_CHECK_EQ(p.ncaps, KINST_CAP_MAX);
	ATF_CHECK_EQ(p.cap_bytes, KINST_CAP_MAX * (8 + 16 + 8));
	/* 4 x 512 = KINST_CAP_MAX_BYTES passes; one byte more does not. */
	for (n = 0, i = 0; i < 4; i++) {
		c[n++] = REG(KINST_RSI);
		c[n++] = MEM(512);
	}
	c[n++] = IMM(1);
	c[n++] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(c, n, &p, &bad), KINST_PV_OK);
	ATF_CHECK_EQ(p.cap_bytes, 4 * (8 + 16 + 512));
	n -= 2;				/* a fifth capture, of 1 byte */
	c[n++] = REG(KINST_RDI);
	c[n++] = STR(1);
	c[n++] = IMM(1);
	c[n++] = RET;
	ATF_CHECK_EQ(kinst_prog_verify(c, n, &p, &bad),
	    KINST_PV_CAP_BYTES);
	ATF_CHECK_EQ(bad, 9);
	ATF_CHECK_STREQ(kinst_prog_verdict_name(KINST_PV_CAP_BYTES),
	    "captures too big in total");
	ATF_CHECK_STREQ(kinst_prog_verdict_name(KINST_PV_CAP_LEN),
	    "capture length out of range");
	ATF_CHECK_STREQ(kinst_prog_verdict_name(KINST_PV_TOO_MANY_CAPS),
	    "too many captures");
	/* Odd lengths: each section padded to 8. */
	{
		struct kinst_pinsn o[] = { REG(KINST_RSI), MEM(1),
		    REG(KINST_RSI), STR(9), IMM(1), RET };

		ATF_CHECK_EQ(kinst_prog_verify(o, NI(o), &p, &bad),
		    KINST_PV_OK);
		ATF_CHECK_EQ(p.cap_bytes, 24 + 8 + 24 + 16);
	}
}

ATF_TC_WITHOUT_HEAD(interp_captures);
ATF_TC_BODY(interp_captures, tc)
{
	/* mem rsi:16; str *(rdi):5 (LOADC); str *(*(rdi)+8):16; mem 0x10:8 */
	struct kinst_pinsn c[] = {
		REG(KINST_RSI), MEM(16),
		REG(KINST_RDI), LOADC(8), STR(5),
		REG(KINST_RDI), LOADC(8), IMM(8), OP(KINST_OP_ADD), LOADC(8),
		STR(16),
		IMM(0x10), MEM(8),
		IMM(1), RET };
	struct kinst_pinsn pl[] = { REG(KINST_RDI), LOAD(8), MEM(4), IMM(1),
	    RET };
	struct kinst_cap_set caps;
	struct kinst_prog_ctx ctx;
	uint8_t sec[KINST_CAP_SEC_BYTES(256)];
	struct kinst_rec_sec h;
	struct kinst_rec_cap rc;
	uint64_t v, kp;
	uint32_t bad, len;

	ATF_REQUIRE_EQ(kinst_prog_verify(c, NI(c), &t_prog, &bad),
	    KINST_PV_OK);
	ATF_CHECK_EQ(t_prog.nloads, 3);
	memset(&ctx, 0, sizeof(ctx));
	ctx.regs = &t_regs;
	ctx.comm = "x\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
	for (v = 0; v < PC_WIN; v++) {
		pc_umem[v] = (uint8_t)('a' + v % 26);
		pc_kmem[v] = (uint8_t)(v * 3);
	}
	/* rdi -> kernel [0] = user + 4; user [12] = kernel + 32 */
	kp = PC_UBASE + 4;
	memcpy(pc_kmem, &kp, 8);
	kp = PC_KBASE + 32;
	memcpy(pc_umem + 12, &kp, 8);
	pc_kmem[32 + 3] = 0;
	t_regs.gpr[KINST_RSI] = PC_KBASE + 40;
	t_regs.gpr[KINST_RDI] = PC_KBASE;
	memset(&pc_st, 0, sizeof(pc_st));
	pc_st.in_run = 1;
	ATF_CHECK_EQ(kinst_prog_run_caps(&t_prog, &ctx, &v, &caps),
	    KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(caps.n, 4);
	ATF_CHECK_EQ(caps.req[0].addr, PC_KBASE + 40);
	ATF_CHECK_EQ(caps.req[0].len, 16);
	ATF_CHECK_EQ(caps.req[0].op, KINST_OP_MEM);
	ATF_CHECK_EQ(caps.req[0].flags, 0);
	ATF_CHECK_EQ(caps.req[1].addr, PC_UBASE + 4);
	ATF_CHECK_EQ(caps.req[1].op, KINST_OP_STR);
	ATF_CHECK_EQ(caps.req[1].index, 1);
	ATF_CHECK_EQ(caps.req[2].addr, PC_KBASE + 32);
	ATF_CHECK_EQ(caps.req[3].addr, 0x10);
	ATF_CHECK_EQ(caps.req[3].index, 3);

	/* The sections: bytes of both halves, a string cut at 5. */
	pc_st.any_size = 1;
	len = kinst_cap_section(&caps.req[0], sec);
	ATF_CHECK_EQ(len, 8 + 16 + 16);
	memcpy(&h, sec, 8);
	memcpy(&rc, sec + 8, 16);
	ATF_CHECK_EQ(h.type, KINST_SEC_MEM);
	ATF_CHECK_EQ(h.len, 16 + 16);
	ATF_CHECK_EQ(rc.size, 16);
	ATF_CHECK(memcmp(sec + 24, pc_kmem + 40, 16) == 0);
	len = kinst_cap_section(&caps.req[1], sec);
	memcpy(&h, sec, 8);
	memcpy(&rc, sec + 8, 16);
	ATF_CHECK_EQ(h.type, KINST_SEC_STR);
	ATF_CHECK_EQ(h.flags, KINST_SECF_TRUNCATED);
	ATF_CHECK_EQ(rc.size, 5);
	ATF_CHECK(memcmp(sec + 24, "efghi", 5) == 0);
	ATF_CHECK_EQ(len, 8 + 16 + 8);
	/* A string to its NUL, not to MAX. */
	len = kinst_cap_section(&caps.req[2], sec);
	memcpy(&h, sec, 8);
	memcpy(&rc, sec + 8, 16);
	ATF_CHECK_EQ(h.flags, 0);
	ATF_CHECK_EQ(rc.size, 3);
	ATF_CHECK(memcmp(sec + 24, "\x60\x63\x66", 3) == 0);
	ATF_CHECK_EQ(len, 8 + 16 + 8);
	/* Nothing readable at 0x10: a fault, no bytes. */
	len = kinst_cap_section(&caps.req[3], sec);
	memcpy(&h, sec, 8);
	ATF_CHECK_EQ(h.flags, KINST_SECF_FAULT);
	ATF_CHECK_EQ(len, 8 + 16);

	/* *(rdi) faults: that capture is DEREF, the next ones are not. */
	t_regs.gpr[KINST_RDI] = PC_KBASE + PC_WIN;	/* just past */
	memset(&pc_st, 0, sizeof(pc_st));
	pc_st.in_run = 1;
	ATF_CHECK_EQ(kinst_prog_run_caps(&t_prog, &ctx, &v, &caps),
	    KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(caps.n, 4);
	ATF_CHECK_EQ(caps.req[0].flags, 0);
	ATF_CHECK_EQ(caps.req[1].flags, KINST_SECF_DEREF);
	ATF_CHECK_EQ(caps.req[1].addr, 0);
	ATF_CHECK_EQ(caps.req[2].flags, KINST_SECF_DEREF);
	ATF_CHECK_EQ(caps.req[3].flags, 0);
	ATF_CHECK_EQ(pc_st.reads, 2);	/* the second LOADC of [2] read nothing */
	pc_st.any_size = 1;
	len = kinst_cap_section(&caps.req[1], sec);
	memcpy(&h, sec, 8);
	memcpy(&rc, sec + 8, 16);
	ATF_CHECK_EQ(h.flags, KINST_SECF_DEREF);
	ATF_CHECK_EQ(rc.addr, 0);
	ATF_CHECK_EQ(rc.size, 0);
	ATF_CHECK_EQ(len, 24);
	pc_st.any_size = 0;

	/* Without a set (aggregation): ignored, the result unchanged. */
	memset(&pc_st, 0, sizeof(pc_st));
	pc_st.in_run = 1;
	ATF_CHECK_EQ(kinst_prog_run(&t_prog, &ctx, &v), KINST_PROG_TRUE);
	/* A plain LOAD fault still ends the program. */
	ATF_REQUIRE_EQ(kinst_prog_verify(pl, NI(pl), &t_prog, &bad),
	    KINST_PV_OK);
	memset(&pc_st, 0, sizeof(pc_st));
	pc_st.in_run = 1;
	ATF_CHECK_EQ(kinst_prog_run_caps(&t_prog, &ctx, &v, &caps),
	    KINST_PROG_FAULT);
	ATF_CHECK_EQ(caps.n, 0);
	pc_st.in_run = 0;
}

/*
 * Random programs, biased towards near-valid ones (opcodes in range, short
 * jumps in both directions, small load sizes): the verifier refuses, or
 * the run keeps prog_check.h's property (it aborts otherwise).
 */
ATF_TC_WITHOUT_HEAD(random_programs);
ATF_TC_BODY(random_programs, tc)
{
	struct kinst_pinsn code[48];
	uint64_t s, r;
	uint32_t i, n, iter, accepted, verdicts[KINST_PV_COUNT_];
	uint32_t depth, pops, pushes, peak, with_caps, with_ts;
	int v;

	s = 0x9e3779b97f4a7c15ull;
	accepted = 0;
	with_caps = 0;
	with_ts = 0;
	memset(verdicts, 0, sizeof(verdicts));
	for (iter = 0; iter < 400000; iter++) {
		n = 1 + (uint32_t)(rnd(&s) % NI(code));
		depth = 0;
		/* One program in 8 climbs to 14..18 values. */
		peak = iter % 8 == 0 ? 14 + (uint32_t)(rnd(&s) % 5) : 0;
		if (peak != 0)
			n = 2 * peak + (uint32_t)(rnd(&s) % 8);
		for (i = 0; i < n; i++) {
			r = rnd(&s);
			memset(&code[i], 0, sizeof(code[i]));
			code[i].op = pick_op(r, depth, &peak);
			switch (code[i].op) {
			case KINST_OP_TS_PUSH:
				code[i].arg = (r >> 8) % (depth < 7 ?
				    depth + 1 : 7);
				code[i].imm = 1 + (r >> 16) % 3;
				break;
			case KINST_OP_TS_GET:
				code[i].arg = (uint8_t)((r >> 8) % 8 |
				    ((r >> 12) % 2 ? KINST_TSF_SOFT : 0) |
				    ((r >> 13) % 4 == 0 ? KINST_TSF_CLOSE : 0));
				code[i].imm = 1 + (r >> 16) % 3;
				break;
			case KINST_OP_IMM:
				code[i].imm = (r >> 8) % 3 == 0 ?
				    PC_UBASE + ((r >> 16) & 63) : (r >> 8) % 9;
				break;
			case KINST_OP_REG:
				code[i].arg = (r >> 8) % KINST_PREG_COUNT;
				break;
			case KINST_OP_CTX:
				code[i].arg = (r >> 8) % KINST_PCTX_COUNT;
				break;
			case KINST_OP_LOAD:
			case KINST_OP_LOADC:
				code[i].arg = 1 << ((r >> 8) % 4);
				break;
			case KINST_OP_MEM:
			case KINST_OP_STR:
				/* often inside the 64-byte windows,
				   sometimes over the limits */
				code[i].imm = 1 + ((r >> 8) % 2 != 0 ?
				    (r >> 16) % 64 : (r >> 16) % 600);
				break;
			case KINST_OP_JA:
			case KINST_OP_JZ:
			case KINST_OP_JNZ:
				code[i].off = (int16_t)((r >> 8) % 9) - 3;
				break;
			}
			if (r % 97 == 0)	/* now and then, junk */
				code[i].arg = (uint8_t)(r >> 32);
			pc_effect(&code[i], &pops, &pushes);
			depth = depth >= pops ? depth - pops + pushes : 0;
		}
		/* Usually end in RET, to get past the easy refusals. */
		if (rnd(&s) % 4 != 0)
			code[n - 1] = RET;
		v = prog_check_one(code, n);
		verdicts[v]++;
		if (v == KINST_PV_OK)
			accepted++;
		for (i = 0; v == KINST_PV_OK && i < n; i++)
			if (code[i].op == KINST_OP_MEM ||
			    code[i].op == KINST_OP_STR ||
			    code[i].op == KINST_OP_VAL) {
				with_caps++;
				break;
			}
		for (i = 0; v == KINST_PV_OK && i < n; i++)
			if (code[i].op == KINST_OP_TS_GET) {
				with_ts++;
				break;
			}
	}
	printf("random_programs (informational): %u accepted of 400000"
	    " (%u with captures, %u with TS_GET: %llu matched); refused as:",
	    accepted, with_caps, with_ts,
	    (unsigned long long)(pc_ts_stats[0].st.matched +
	    pc_ts_stats[1].st.matched));
	for (i = 1; i < KINST_PV_COUNT_; i++)
		printf(" %s=%u", kinst_prog_verdict_name(i), verdicts[i]);
	printf("\n");
	/* The generator must reach the interpreter, or this proves nothing. */
	ATF_CHECK(accepted > 1000);
	ATF_CHECK(with_caps > 100);
	ATF_CHECK(with_ts > 100);
	ATF_CHECK(pc_ts_stats[1].st.matched > 0);	/* the runs' cpu is 1 */
	ATF_CHECK(verdicts[KINST_PV_CAP_LEN] > 0);
	ATF_CHECK(verdicts[KINST_PV_JUMP_BACK] > 0);
	ATF_CHECK(verdicts[KINST_PV_OVERFLOW] > 0 ||
	    verdicts[KINST_PV_UNDERFLOW] > 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, interp_arith);
	ATF_TP_ADD_TC(tp, interp_context);
	ATF_TP_ADD_TC(tp, interp_jumps);
	ATF_TP_ADD_TC(tp, interp_loads);
	ATF_TP_ADD_TC(tp, interp_faults);
	ATF_TP_ADD_TC(tp, verify_refusals);
	ATF_TP_ADD_TC(tp, verify_captures);
	ATF_TP_ADD_TC(tp, interp_captures);
	ATF_TP_ADD_TC(tp, random_programs);
	return (atf_no_error());
}
