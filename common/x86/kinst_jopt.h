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
#include "kinst_jopt_api.h"

#define	KINST_JOPT_WINDOW	5	/* bytes of a jmp rel32 */


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
