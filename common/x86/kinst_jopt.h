/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Jump-optimization qualification (issue 13; docs/engine.md, "Jump-optimized
 * probes"): may the instruction at an offset be probed by replacing the
 * KINST_JOPT_WINDOW bytes starting there with a `jmp rel32` to a detour,
 * instead of an int3?  Decided from the engine's own decode of the whole
 * function, never from the caller's say-so.  An offset qualifies when the
 * window [off, off + 5)
 *  - ends inside the function;
 *  - covers only whole instructions, each traceable and run out of line
 *    (verbatim or with its RIP-relative displacement rewritten), none of
 *    which changes IF itself; only the last may instead be a direct jmp or
 *    jcc (relocated as rel32 to the same target) -- never a call (its
 *    return address would be in the detour), a loop/jrcxz, a ret or an
 *    indirect branch;
 *  - holds no branch target of the function other than its first byte
 *    (targets of every direct jmp, jcc, loop, jrcxz and call inside the
 *    function);
 * or the window is a return padded to a jump's size: a traceable `ret`
 * (c3) followed by four int3 (cc) inside the function -- what Linux makes
 * of a `jmp __x86_return_thunk` at boot when no return-thunk mitigation is
 * on (apply_returns()) -- with no branch target in the int3s; the detour
 * ends with the ret, and the int3s, which never run, are overwritten
 * (issue 42: a return probe without a trap);
 * and the function has no indirect jump (a jump table may land anywhere)
 * and no instruction with an exception fixup (a fixup may land anywhere in
 * the function), as the caller's refusal callback reports.  What is not
 * static -- another probe or a patched site in the window, threads
 * preempted inside it -- is the installer's business.
 */
#ifndef KINST_JOPT_H
#define KINST_JOPT_H

#include "x86/kinst_classify.h"

#define	KINST_JOPT_WINDOW	5	/* bytes of a jmp rel32 */

/* Verdicts, one per byte offset of the function. */
enum kinst_jopt_verdict {
	KINST_JQ_NOT_INSN = 0,	/* not the first byte of an instruction */
	KINST_JQ_YES,		/* "jump-optimizable" */
	KINST_JQ_END,		/* "window-past-end": fewer than 5 bytes to the end */
	KINST_JQ_INSN,		/* "window-instruction": an instruction of the window cannot run in a detour */
	KINST_JQ_TARGET,	/* "branch-target-in-window" */
	KINST_JQ_INDIRECT,	/* "indirect-jump-in-function" */
	KINST_JQ_FIXUP,		/* "fixup-in-function" */
	KINST_JQ_UNDECODED,	/* "undecodable-function": the walk stopped before the window's end */
	KINST_JQ_REFUSED,	/* "not-traceable": the instruction itself is refused */
	KINST_JQ_COUNT
};

/*
 * The caller's extra refusals, those only it knows (a live kernel's fixups,
 * patched sites, excluded functions): the KINST_R_* reason for the
 * instruction at off, KINST_JOPT_INDIRECT, or KINST_R_NONE.  May be NULL.
 */
typedef int (*kinst_jopt_refusal_fn)(void *ctx, uint32_t off);

/*
 * What a refusal callback returns for an instruction that is traceable but
 * is an indirect jump in disguise (a `jmp` to a retpoline thunk, which may
 * land anywhere in the function): the function is not optimized.
 */
#define	KINST_JOPT_INDIRECT	0x100
/*
 * ... for a traceable instruction that a branch the decoder cannot see
 * lands on (the target of a Linux jump label, whose site is a nop until a
 * static key flips it): no window may hold it but as its first byte.
 */
#define	KINST_JOPT_TARGET	0x200

/*
 * Fill out[0 .. size-1] with a verdict per byte offset of func (size bytes,
 * the function's whole text).  Returns the number of offsets that qualify.
 * No allocation; O(size) time plus a decode of every instruction.
 */
uint32_t	kinst_jopt_qualify(const uint8_t *func, uint32_t size,
	    kinst_jopt_refusal_fn refusal, void *ctx, uint8_t *out);

/*
 * The instruction at pos of func (size bytes), as the caller decoded and
 * classified it already: KINST_DEC_OK with *insn and *cls filled exactly as
 * kinst_decode(func + pos, size - pos) and kinst_classify() would, or any
 * other status where that decode fails.
 */
typedef int (*kinst_jopt_decode_fn)(void *ctx, uint32_t pos,
	    struct kinst_insn *insn, struct kinst_class *cls);

/*
 * kinst_jopt_qualify() for a caller that has every instruction of the
 * function decoded already (kinstctl's listings): decode is asked for each
 * instruction start in order, instead of the engine decoding each again.
 * The same verdicts when decode answers as it must; a length it gives
 * that is 0 or runs past size counts as undecodable.
 */
uint32_t	kinst_jopt_qualify_decoded(const uint8_t *func, uint32_t size,
	    kinst_jopt_decode_fn decode, kinst_jopt_refusal_fn refusal,
	    void *ctx, uint8_t *out);

/*
 * Is the instruction at p (avail bytes to the function's end) a return
 * padded to a jump's size: `ret` then four int3?  The window of such a
 * return is those KINST_JOPT_WINDOW bytes (kinst_jopt_qualify() and
 * kinst_detour_build() both ask this).
 */
bool		kinst_jopt_padded_ret(const uint8_t *p, uint32_t avail);

/* The verdict's stable name (part of the CLI's JSON). */
const char	*kinst_jopt_name(int verdict);

#endif /* !KINST_JOPT_H */
