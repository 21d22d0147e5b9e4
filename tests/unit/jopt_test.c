/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Jump-optimization qualification (common/x86/kinst_jopt.c).  Hand-made
 * functions with known verdicts, and random functions assembled from a menu
 * of instructions whose nature the test states itself, checked against a
 * model that works on the instruction list (not on bytes): the code under
 * test must find the same windows from its own decode.
 */
#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "x86/kinst_jopt.h"
#include "x86/kinst_classify.h"
#include "x86/kinst_decode.h"

static uint8_t out[4096];

static const char *
vname(int v)
{
	return (kinst_jopt_name(v));
}

#define	CHECK_V(off, want) do {						\
	ATF_CHECK_MSG(out[(off)] == (want), "offset %u: %s, want %s",	\
	    (unsigned)(off), vname(out[(off)]), vname(want));		\
} while (0)

ATF_TC_WITHOUT_HEAD(straight_line);
ATF_TC_BODY(straight_line, tc)
{
	/*
	 * 0 push %rbp; 1 mov %rsp,%rbp; 4 push %rbx; 5 sub $8,%rsp;
	 * 9 mov $1,%eax; 14 pop %rbx; 15 leave; 16 ret
	 */
	static const uint8_t f[] = { 0x55, 0x48, 0x89, 0xe5, 0x53, 0x48, 0x83,
	    0xec, 0x08, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x5b, 0xc9, 0xc3 };
	uint32_t n;

	n = kinst_jopt_qualify(f, sizeof(f), NULL, NULL, out);
	CHECK_V(0, KINST_JQ_YES);	/* 55 48 89 e5 53: [0, 5) */
	CHECK_V(1, KINST_JQ_YES);	/* [1, 9) */
	CHECK_V(2, KINST_JQ_NOT_INSN);
	CHECK_V(4, KINST_JQ_YES);	/* [4, 9) */
	CHECK_V(5, KINST_JQ_YES);	/* [5, 14) */
	CHECK_V(9, KINST_JQ_YES);	/* mov imm32: 5 bytes alone */
	CHECK_V(14, KINST_JQ_END);	/* [14, 19): past the end */
	CHECK_V(15, KINST_JQ_END);
	CHECK_V(16, KINST_JQ_END);
	ATF_CHECK_EQ(n, 5);
}

ATF_TC_WITHOUT_HEAD(branch_target);
ATF_TC_BODY(branch_target, tc)
{
	/*
	 * 0 xor %eax,%eax; 2 test %edi,%edi; 4 je 8; 6 inc %eax; 8 inc %eax;
	 * 10 nop*5; 15 ret
	 */
	static const uint8_t f[] = { 0x31, 0xc0, 0x85, 0xff, 0x74, 0x02, 0xff,
	    0xc0, 0xff, 0xc0, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };

	kinst_jopt_qualify(f, sizeof(f), NULL, NULL, out);
	CHECK_V(0, KINST_JQ_YES);	/* [0, 6): je last, relocated */
	CHECK_V(2, KINST_JQ_INSN);	/* 85 ff 74 02 ff c0: je not last */
	CHECK_V(4, KINST_JQ_INSN);	/* je first, not last: [4, 10) */
	CHECK_V(6, KINST_JQ_TARGET);	/* [6, 11) holds 8 */
	CHECK_V(8, KINST_JQ_YES);	/* the target itself may start one */
	CHECK_V(10, KINST_JQ_YES);
	CHECK_V(11, KINST_JQ_INSN);	/* ends in ret */
}

ATF_TC_WITHOUT_HEAD(target_past_five);
ATF_TC_BODY(target_past_five, tc)
{
	/*
	 * 0 nop; 1 nop; 2 nop; 3 mov $0x04030201,%eax; 8 jmp 6 (eb fc: into
	 * the mov's immediate, as old kernel code jumped into an
	 * instruction to skip a prefix); 10 ret.  The window of 0 is the
	 * whole instructions over [0, 5): [0, 8), and 6 lies in it although
	 * past the jump's five bytes.
	 */
	static const uint8_t f[] = { 0x90, 0x90, 0x90, 0xb8, 0x01, 0x02, 0x03,
	    0x04, 0xeb, 0xfc, 0xc3 };

	kinst_jopt_qualify(f, sizeof(f), NULL, NULL, out);
	CHECK_V(0, KINST_JQ_TARGET);
	CHECK_V(1, KINST_JQ_TARGET);	/* [1, 8) */
	CHECK_V(3, KINST_JQ_TARGET);	/* the mov itself: [3, 8) */
}

ATF_TC_WITHOUT_HEAD(branch_last);
ATF_TC_BODY(branch_last, tc)
{
	/* 0 push %rbx; 1 push %rbp; 2 nop; 3 jmp 0 (eb f9); 5 call rel32 */
	static const uint8_t f[] = { 0x53, 0x55, 0x90, 0xeb, 0xfb, 0xe8, 0x00,
	    0x00, 0x00, 0x00, 0xe9, 0x00, 0x00, 0x00, 0x00, 0xc3 };

	kinst_jopt_qualify(f, sizeof(f), NULL, NULL, out);
	/* The jmp back to 0 is the last of [0, 5): allowed, 0 is the start. */
	CHECK_V(0, KINST_JQ_YES);
	CHECK_V(1, KINST_JQ_INSN);	/* the call (at 5) is never allowed */
	CHECK_V(5, KINST_JQ_INSN);	/* a call alone */
	CHECK_V(10, KINST_JQ_YES);	/* a jmp rel32 alone */
	CHECK_V(15, KINST_JQ_END);
}

ATF_TC_WITHOUT_HEAD(padded_ret);
ATF_TC_BODY(padded_ret, tc)
{
	/*
	 * 0 test %edi,%edi; 2 je 10 (74 06); 4 ret; int3 x4 (a rewritten
	 * `jmp __x86_return_thunk`); 9 int3; 10 xor %eax,%eax;
	 * 12 ret; int3 x3; 16 jmp 21 (eb 03... lands on 21: the third int3 of
	 * 18); 18 ret; int3 x4; 23 ret; int3 x3 (the function ends: 3 only).
	 */
	static const uint8_t f[] = { 0x85, 0xff, 0x74, 0x06, 0xc3, 0xcc, 0xcc,
	    0xcc, 0xcc, 0xcc, 0x31, 0xc0, 0xc3, 0xcc, 0xcc, 0xcc, 0xeb, 0x03,
	    0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xc3, 0xcc, 0xcc, 0xcc };

	kinst_jopt_qualify(f, sizeof(f), NULL, NULL, out);
	CHECK_V(4, KINST_JQ_YES);	/* ret + four int3 */
	CHECK_V(5, KINST_JQ_REFUSED);	/* an int3 itself */
	CHECK_V(12, KINST_JQ_INSN);	/* three int3 only: the next is code */
	CHECK_V(18, KINST_JQ_TARGET);	/* the jmp at 16 lands on 21 */
	CHECK_V(23, KINST_JQ_END);	/* three int3 to the function's end */
	CHECK_V(0, KINST_JQ_INSN);	/* a window over a ret is no padded ret */
}

static int
refuse_at(void *ctx, uint32_t off)
{
	const int *r = ctx;

	return (off == (uint32_t)r[0] ? r[1] : KINST_R_NONE);
}

ATF_TC_WITHOUT_HEAD(refusals);
ATF_TC_BODY(refusals, tc)
{
	/* nop*12 */
	static const uint8_t f[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	    0x90, 0x90, 0x90, 0x90, 0x90 };
	static const uint8_t g[] = { 0x90, 0x90, 0xff, 0xe0, 0x90, 0x90, 0x90,
	    0x90, 0x90 };	/* jmp *%rax */
	static const uint8_t h[] = { 0x90, 0x90, 0x0f, 0x0b, 0x90, 0x90, 0x90,
	    0x90, 0x90 };	/* ud2 */
	static const uint8_t u[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x06 };
	int r[2];

	r[0] = 3;
	r[1] = KINST_R_TEXT_PATCHED;
	kinst_jopt_qualify(f, sizeof(f), refuse_at, r, out);
	CHECK_V(0, KINST_JQ_INSN);
	CHECK_V(3, KINST_JQ_REFUSED);
	CHECK_V(4, KINST_JQ_YES);
	r[1] = KINST_R_FIXUP;
	kinst_jopt_qualify(f, sizeof(f), refuse_at, r, out);
	CHECK_V(0, KINST_JQ_FIXUP);
	CHECK_V(4, KINST_JQ_FIXUP);
	r[1] = KINST_JOPT_INDIRECT;
	kinst_jopt_qualify(f, sizeof(f), refuse_at, r, out);
	CHECK_V(0, KINST_JQ_INDIRECT);
	CHECK_V(3, KINST_JQ_INDIRECT);
	/* A hidden branch target (a jump label's) at 3: only as a start. */
	r[1] = KINST_JOPT_TARGET;
	kinst_jopt_qualify(f, sizeof(f), refuse_at, r, out);
	CHECK_V(0, KINST_JQ_TARGET);	/* [0, 5) holds 3 */
	CHECK_V(2, KINST_JQ_TARGET);
	CHECK_V(3, KINST_JQ_YES);	/* traceable, may start a window */
	CHECK_V(4, KINST_JQ_YES);

	kinst_jopt_qualify(g, sizeof(g), NULL, NULL, out);
	CHECK_V(0, KINST_JQ_INDIRECT);
	CHECK_V(4, KINST_JQ_INDIRECT);
	kinst_jopt_qualify(h, sizeof(h), NULL, NULL, out);
	CHECK_V(0, KINST_JQ_INSN);
	CHECK_V(2, KINST_JQ_REFUSED);
	CHECK_V(4, KINST_JQ_YES);
	/* 0x06 is invalid in 64-bit mode: nothing is known past it. */
	ATF_CHECK_EQ(kinst_jopt_qualify(u, sizeof(u), NULL, NULL, out), 0);
	CHECK_V(0, KINST_JQ_UNDECODED);
	ATF_CHECK_STREQ(kinst_jopt_name(KINST_JQ_TARGET), "branch-target-in-window");
	ATF_CHECK_STREQ(kinst_jopt_name(99), "unknown");
}

/* ---- random functions against a model ---- */

enum kind { K_OOL, K_IFCHG, K_JREL, K_CALL, K_RET, K_LOOP, K_REFUSED };

struct menu {
	uint8_t		len;
	uint8_t		bytes[8];
	enum kind	kind;
	int		rel;	/* rel size for branches: 1 or 4 */
};

static const struct menu menu[] = {
	{ 1, { 0x90 }, K_OOL, 0 },			/* nop */
	{ 1, { 0x55 }, K_OOL, 0 },			/* push %rbp */
	{ 3, { 0x48, 0x89, 0xe5 }, K_OOL, 0 },		/* mov %rsp,%rbp */
	{ 6, { 0x48, 0x05, 1, 2, 3, 4 }, K_OOL, 0 },	/* add $imm32,%rax */
	{ 7, { 0x48, 0x8b, 0x05, 0, 1, 0, 0 }, K_OOL, 0 },	/* riprel */
	{ 5, { 0xb8, 9, 9, 9, 9 }, K_OOL, 0 },		/* mov $imm,%eax */
	{ 1, { 0xfa }, K_IFCHG, 0 },			/* cli */
	{ 1, { 0xfb }, K_IFCHG, 0 },			/* sti */
	{ 2, { 0xeb, 0 }, K_JREL, 1 },			/* jmp rel8 */
	{ 5, { 0xe9, 0, 0, 0, 0 }, K_JREL, 4 },		/* jmp rel32 */
	{ 2, { 0x75, 0 }, K_JREL, 1 },			/* jne rel8 */
	{ 6, { 0x0f, 0x84, 0, 0, 0, 0 }, K_JREL, 4 },	/* je rel32 */
	{ 5, { 0xe8, 0, 0, 0, 0 }, K_CALL, 4 },		/* call rel32 */
	{ 1, { 0xc3 }, K_RET, 0 },			/* ret */
	{ 2, { 0xe2, 0 }, K_LOOP, 1 },			/* loop rel8 */
	{ 1, { 0xcc }, K_REFUSED, 0 },			/* int3 */
	{ 2, { 0x0f, 0x0b }, K_REFUSED, 0 },		/* ud2 */
};
#define	NMENU	(sizeof(menu) / sizeof(menu[0]))
#define	INT3	15	/* menu[INT3] is int3 */

struct minsn {
	uint32_t	off;
	const struct menu *m;
	int64_t		target;	/* branches: the target offset (may be outside) */
};

static int
model(const struct minsn *v, uint32_t n, uint32_t size, uint32_t k)
{
	uint32_t s = v[k].off, i, end, b;

	if (v[k].m->kind == K_REFUSED)
		return (KINST_JQ_REFUSED);
	/* A ret then four int3 (Linux's rewritten return thunk jumps). */
	if (v[k].m->kind == K_RET && k + 4 < n) {
		for (i = k + 1; i <= k + 4; i++)
			if (v[i].m->bytes[0] != 0xcc)
				break;
		if (i > k + 4) {
			end = s + KINST_JOPT_WINDOW;
			for (b = 0; b < n; b++)
				if (v[b].m->rel != 0 && v[b].target > s &&
				    v[b].target < end)
					return (KINST_JQ_TARGET);
			return (KINST_JQ_YES);
		}
	}
	for (i = k, end = s; end < s + KINST_JOPT_WINDOW; i++) {
		if (i >= n)
			return (KINST_JQ_END);
		end = v[i].off + v[i].m->len;
	}
	/* v[k .. i-1] are the window's instructions. */
	for (b = k; b < i; b++) {
		enum kind kd = v[b].m->kind;
		bool last = b == i - 1;

		if (kd == K_OOL)
			continue;
		if (last && kd == K_JREL)
			continue;
		return (KINST_JQ_INSN);
	}
	for (b = 0; b < n; b++) {
		if (v[b].m->rel == 0)
			continue;
		if (v[b].target > s && v[b].target < end)
			return (KINST_JQ_TARGET);
	}
	(void)size;
	return (KINST_JQ_YES);
}

/*
 * kinst_jopt_qualify_decoded()'s callback, as kinstctl gives it: the
 * instructions decoded and classified beforehand, found by position.
 * lie_at: from that instruction start on, answer with lie (a status, or
 * KINST_DEC_OK with length 0).
 */
struct predecoded {
	const uint8_t	*f;
	uint32_t	size;
	uint32_t	lie_at;
	int		lie;
	uint32_t	asked;
};

static int
predecoded_at(void *ctx, uint32_t pos, struct kinst_insn *insn,
    struct kinst_class *cls)
{
	struct predecoded *x = ctx;
	int st;

	x->asked++;
	st = kinst_decode(x->f + pos, x->size - pos, insn);
	if (st == KINST_DEC_OK)
		kinst_classify(st, insn, x->f + pos, cls);
	if (pos >= x->lie_at) {
		if (x->lie != KINST_DEC_OK)
			return (x->lie);
		insn->len = 0;
	}
	return (st);
}

ATF_TC_WITHOUT_HEAD(random_against_model);
ATF_TC_BODY(random_against_model, tc)
{
	static struct minsn v[600];
	static uint8_t f[4096];
	uint32_t n, size, k, i, yes, want_yes, bad, shown;
	uint32_t padded_yes = 0, padded_target = 0;
	uint32_t bad_decoded = 0, bad_lie = 0;
	uint64_t tally[KINST_JQ_COUNT] = { 0 };
	int iter, w;

	srandom(20261201);
	bad = shown = 0;
	for (iter = 0; iter < 3000; iter++) {
		n = 5 + (uint32_t)random() % 60;
		size = 0;
		for (i = 0; i < n; i++) {
			const struct menu *m = &menu[random() % NMENU];
			uint32_t pad, j;

			v[i].off = size;
			v[i].m = m;
			size += m->len;
			/*
			 * Half the rets padded with int3 as Linux pads a
			 * rewritten `jmp __x86_return_thunk`: four (a window),
			 * or three (none).
			 */
			if (m->kind != K_RET || random() % 2 == 0)
				continue;
			pad = random() % 3 == 0 ? 3 : 4;
			for (j = 0; j < pad && i + 1 < n; j++) {
				i++;
				v[i].off = size;
				v[i].m = &menu[INT3];
				size += 1;
			}
		}
		/* Branch targets: mostly instruction boundaries, some outside. */
		for (i = 0; i < n; i++) {
			int64_t t, rel;
			const struct menu *m = v[i].m;

			memcpy(f + v[i].off, m->bytes, m->len);
			if (m->rel == 0)
				continue;
			if (random() % 8 == 0 && m->rel == 4)
				t = (int64_t)size + 100 + random() % 1000;
			else
				t = v[random() % n].off;
			rel = t - (v[i].off + m->len);
			if (m->rel == 1 && (rel < -128 || rel > 127)) {
				rel = (int64_t)(random() % 5) - 2;
				t = v[i].off + m->len + rel;
			}
			v[i].target = t;
			if (m->rel == 1)
				f[v[i].off + m->len - 1] = (uint8_t)(int8_t)rel;
			else {
				int32_t r32 = (int32_t)rel;

				memcpy(f + v[i].off + m->len - 4, &r32, 4);
			}
		}
		yes = kinst_jopt_qualify(f, size, NULL, NULL, out);
		want_yes = 0;
		for (k = 0, i = 0; i < size; i++) {
			if (k < n && v[k].off == i) {
				w = model(v, n, size, k);
				k++;
			} else
				w = KINST_JQ_NOT_INSN;
			tally[out[i]]++;
			if (f[i] == 0xc3 && i + 4 < size && f[i + 1] == 0xcc &&
			    f[i + 2] == 0xcc && f[i + 3] == 0xcc &&
			    f[i + 4] == 0xcc && w == KINST_JQ_YES)
				padded_yes++;
			if (f[i] == 0xc3 && w == KINST_JQ_TARGET)
				padded_target++;
			if (w == KINST_JQ_YES)
				want_yes++;
			if (out[i] != w) {
				bad++;
				if (shown++ < 5)
					printf("iteration %d offset %u: %s, model %s\n",
					    iter, i, vname(out[i]), vname(w));
			}
		}
		ATF_CHECK_EQ(yes, want_yes);

		/*
		 * The same verdicts from the caller's decodes; and when the
		 * caller says it cannot decode an instruction (or gives it no
		 * length), the walk stops there as at an undecodable byte.
		 */
		{
			static uint8_t out2[4096];
			struct predecoded x = { f, size, UINT32_MAX, 0, 0 };
			uint32_t kl = 1 + (uint32_t)random() % (n - 1);

			ATF_CHECK_EQ(kinst_jopt_qualify_decoded(f, size,
			    predecoded_at, NULL, &x, out2), yes);
			if (memcmp(out, out2, size) != 0)
				bad_decoded++;
			ATF_CHECK(x.asked == n);
			x.lie_at = v[kl].off;
			x.lie = random() % 2 ? KINST_DEC_OK : KINST_DEC_INVALID;
			x.asked = 0;
			ATF_CHECK_EQ(kinst_jopt_qualify_decoded(f, size,
			    predecoded_at, NULL, &x, out2), 0);
			ATF_CHECK(x.asked == kl + 1);
			for (i = 0; i < size; i++) {
				uint8_t want = i >= v[kl].off ||
				    out[i] == KINST_JQ_NOT_INSN ?
				    KINST_JQ_NOT_INSN :
				    out[i] == KINST_JQ_REFUSED ?
				    KINST_JQ_REFUSED : KINST_JQ_UNDECODED;

				if (out2[i] != want) {
					bad_lie++;
					break;
				}
			}
		}
	}
	ATF_CHECK_EQ_MSG(bad_decoded, 0, "%u functions: other verdicts from "
	    "the caller's decodes", bad_decoded);
	ATF_CHECK_EQ_MSG(bad_lie, 0, "%u functions: an undecodable answer did "
	    "not stop the walk", bad_lie);
	for (i = 0; i < KINST_JQ_COUNT; i++)
		printf("informational: %-26s %llu\n", vname((int)i),
		    (unsigned long long)tally[i]);
	ATF_CHECK_EQ_MSG(bad, 0, "%u offsets differ from the model", bad);
	/* The draw must exercise every verdict the model can give. */
	ATF_CHECK(tally[KINST_JQ_YES] > 0);
	ATF_CHECK(tally[KINST_JQ_TARGET] > 0);
	ATF_CHECK(tally[KINST_JQ_INSN] > 0);
	ATF_CHECK(tally[KINST_JQ_END] > 0);
	ATF_CHECK(tally[KINST_JQ_REFUSED] > 0);
	printf("informational: padded rets: %u qualify, %u refused for a "
	    "branch target in their int3s\n", padded_yes, padded_target);
	ATF_CHECK(padded_yes > 0);
	ATF_CHECK(padded_target > 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, straight_line);
	ATF_TP_ADD_TC(tp, branch_target);
	ATF_TP_ADD_TC(tp, target_past_five);
	ATF_TP_ADD_TC(tp, branch_last);
	ATF_TP_ADD_TC(tp, padded_ret);
	ATF_TP_ADD_TC(tp, refusals);
	ATF_TP_ADD_TC(tp, random_against_model);
	return (atf_no_error());
}
