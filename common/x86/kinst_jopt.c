/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Jump-optimization qualification: see kinst_jopt.h for the rules.
 *
 * Two passes over out[], with no memory but out[] itself.  The first walks
 * the function once, marking in out[] bit flags per byte: instruction
 * starts and what each instruction may be in a window, and every byte a
 * direct branch of the function lands on.  The second decides each
 * instruction start from the flags of the bytes of its window and
 * overwrites the flags with the verdict; it only ever reads forward of the
 * byte it writes, so the flags it reads are still flags.
 */
#include "x86/kinst_jopt.h"

#define	F_START		0x40u	/* an instruction starts here */
#define	F_TARGET	0x80u	/* a direct branch of the function lands here */
#define	F_TRACEABLE	0x08u	/* the instruction here may be probed at all */
#define	F_INSIDE	0x20u	/* ... may run in a detour, anywhere in the window */
#define	F_LAST		0x10u	/* ... may run in a detour as the window's last */
#define	F_PADRET	0x04u	/* ... is a return padded to a jump's size */

static const char *const jq_names[KINST_JQ_COUNT] = {
	[KINST_JQ_NOT_INSN] = "not-an-instruction",
	[KINST_JQ_YES] = "jump-optimizable",
	[KINST_JQ_END] = "window-past-end",
	[KINST_JQ_INSN] = "window-instruction",
	[KINST_JQ_TARGET] = "branch-target-in-window",
	[KINST_JQ_INDIRECT] = "indirect-jump-in-function",
	[KINST_JQ_FIXUP] = "fixup-in-function",
	[KINST_JQ_UNDECODED] = "undecodable-function",
	[KINST_JQ_REFUSED] = "not-traceable",
};

const char *
kinst_jopt_name(int verdict)
{

	if (verdict < 0 || verdict >= KINST_JQ_COUNT)
		return ("unknown");
	return (jq_names[verdict]);
}

bool
kinst_jopt_padded_ret(const uint8_t *p, uint32_t avail)
{
	uint32_t i;

	if (avail < KINST_JOPT_WINDOW || p[0] != 0xc3)
		return (false);
	for (i = 1; i < KINST_JOPT_WINDOW; i++)
		if (p[i] != 0xcc)
			return (false);
	return (true);
}

/* A direct branch with a target we can compute: its emulation kind. */
static bool
direct_branch(uint8_t emul)
{

	switch (emul) {
	case KINST_EM_JCC:
	case KINST_EM_JMP_REL:
	case KINST_EM_CALL_REL:
	case KINST_EM_LOOP:
	case KINST_EM_LOOPE:
	case KINST_EM_LOOPNE:
	case KINST_EM_JRCXZ:
		return (true);
	default:
		return (false);
	}
}

struct walk {
	bool	indirect;	/* an indirect jump in the function */
	bool	fixup;		/* an instruction with an exception fixup */
	bool	undecoded;	/* the walk stopped before the end */
};

/* Pass 1: flags per byte. */
static void
mark(const uint8_t *func, uint32_t size, kinst_jopt_decode_fn decode,
    kinst_jopt_refusal_fn refusal, void *ctx, uint8_t *out, struct walk *w)
{
	struct kinst_insn insn;
	struct kinst_class cls;
	uint32_t pos, i;
	int64_t target;
	uint8_t f;
	int st, r;

	for (i = 0; i < size; i++)
		out[i] = 0;
	for (pos = 0; pos < size; pos += insn.len) {
		if (decode != NULL)
			st = decode(ctx, pos, &insn, &cls);
		else
			st = kinst_decode(func + pos, size - pos, &insn);
		if (st != KINST_DEC_OK || insn.len == 0 ||
		    insn.len > size - pos) {
			w->undecoded = true;
			return;
		}
		if (decode == NULL)
			kinst_classify(st, &insn, func + pos, &cls);
		r = refusal != NULL ? refusal(ctx, pos) : KINST_R_NONE;
		if (r == KINST_R_FIXUP)
			w->fixup = true;
		if (cls.treatment == KINST_T_EMULATE &&
		    cls.emul == KINST_EM_JMP_IND)
			w->indirect = true;
		if (r == KINST_JOPT_INDIRECT)
			w->indirect = true;
		if (r == KINST_JOPT_TARGET) {
			out[pos] |= F_TARGET;
			r = KINST_R_NONE;
		}
		if (cls.treatment == KINST_T_EMULATE && direct_branch(cls.emul)) {
			target = (int64_t)pos + insn.len + insn.imm;
			if (target >= 0 && target < (int64_t)size)
				out[target] |= F_TARGET;
		}
		f = F_START;
		if (cls.treatment != KINST_T_REFUSE &&
		    (r == KINST_R_NONE || r == KINST_JOPT_INDIRECT)) {
			f |= F_TRACEABLE;
			if ((cls.treatment == KINST_T_OOL ||
			    cls.treatment == KINST_T_OOL_RIPREL) &&
			    (cls.flags & KINST_CF_NO_STI) == 0)
				f |= F_INSIDE | F_LAST;
			if (cls.treatment == KINST_T_EMULATE &&
			    (cls.emul == KINST_EM_JCC ||
			    cls.emul == KINST_EM_JMP_REL))
				f |= F_LAST;
			if (cls.treatment == KINST_T_EMULATE &&
			    cls.emul == KINST_EM_RET &&
			    kinst_jopt_padded_ret(func + pos, size - pos))
				f |= F_PADRET;
		}
		out[pos] |= f;
	}
}

/* Pass 2: the verdict for the instruction starting at s. */
static uint8_t
decide(uint32_t size, const uint8_t *out, uint32_t s, const struct walk *w)
{
	uint32_t p, end;
	bool inside_ok;

	if ((out[s] & F_TRACEABLE) == 0)
		return (KINST_JQ_REFUSED);
	if (w->undecoded)
		return (KINST_JQ_UNDECODED);
	if (w->indirect)
		return (KINST_JQ_INDIRECT);
	if (w->fixup)
		return (KINST_JQ_FIXUP);
	if ((out[s] & F_PADRET) != 0) {
		/* The ret and its four int3, which no branch may land on. */
		for (p = s + 1; p < s + KINST_JOPT_WINDOW; p++)
			if ((out[p] & F_TARGET) != 0)
				return (KINST_JQ_TARGET);
		return (KINST_JQ_YES);
	}
	/* The whole instructions the window covers: [s, end). */
	inside_ok = true;
	end = s;
	for (p = s; p < s + KINST_JOPT_WINDOW; p = end) {
		if (p >= size)
			return (KINST_JQ_END);
		/*
		 * The instruction's end: the next start pass 1 marked (its
		 * walk decoded every instruction to the end of the function,
		 * w->undecoded is false), or the end of the function.
		 */
		for (end = p + 1; end < size && (out[end] & F_START) == 0; end++)
			;
		if (end >= s + KINST_JOPT_WINDOW) {
			if ((out[p] & F_LAST) == 0)
				inside_ok = false;
		} else if ((out[p] & F_INSIDE) == 0)
			inside_ok = false;
	}
	if (!inside_ok)
		return (KINST_JQ_INSN);
	for (p = s + 1; p < end; p++)
		if ((out[p] & F_TARGET) != 0)
			return (KINST_JQ_TARGET);
	return (KINST_JQ_YES);
}

uint32_t
kinst_jopt_qualify(const uint8_t *func, uint32_t size,
    kinst_jopt_refusal_fn refusal, void *ctx, uint8_t *out)
{

	return (kinst_jopt_qualify_decoded(func, size, NULL, refusal, ctx,
	    out));
}

uint32_t
kinst_jopt_qualify_decoded(const uint8_t *func, uint32_t size,
    kinst_jopt_decode_fn decode, kinst_jopt_refusal_fn refusal, void *ctx,
    uint8_t *out)
{
	struct walk w = { false, false, false };
	uint32_t s, n;
	uint8_t v;

	mark(func, size, decode, refusal, ctx, out, &w);
	n = 0;
	for (s = 0; s < size; s++) {
		if ((out[s] & F_START) == 0) {
			out[s] = KINST_JQ_NOT_INSN;
			continue;
		}
		v = decide(size, out, s, &w);
		out[s] = v;
		if (v == KINST_JQ_YES)
			n++;
	}
	return (n);
}
