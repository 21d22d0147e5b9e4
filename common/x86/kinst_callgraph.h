/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Direct branches that leave a function: the edges of the static call graph
 * a shim walks to derive the functions its trap path can reach (the Linux
 * shim's trap-path and CPU bring-up exclusion sets).
 *
 * kinst_func_exits() decodes a function linearly from its first byte with
 * the engine's decoder and reports every call rel32, jmp rel8/rel32 and
 * jcc rel8/rel32 whose target lies outside [base, base + size): calls, tail
 * calls, and the jumps to split-off ".cold" parts.  Indirect branches are
 * not edges (they are the documented limit of any such walk).
 */
#ifndef KINST_CALLGRAPH_H
#define KINST_CALLGRAPH_H

#include "kinst_types.h"

enum kinst_exit_kind {
	KINST_EXIT_CALL = 1,	/* e8 rel32 */
	KINST_EXIT_JMP = 2,	/* e9 rel32, eb rel8: a tail call */
	KINST_EXIT_JCC = 3,	/* 7x rel8, 0f 8x rel32: a conditional tail call */
};

/*
 * Called once per exit, in address order: from is the branch instruction's
 * address, to its target.  A non-zero return stops the walk.
 */
typedef int (*kinst_exit_fn)(void *arg, uint64_t from, uint64_t to, int kind);

/*
 * Walk text[0 .. size) (the function's bytes, base its address).  Returns
 * the number of bytes decoded: size when the whole function decoded, less
 * when an undecodable instruction (or fn) stopped the walk.
 */
size_t	kinst_func_exits(const uint8_t *text, size_t size, uint64_t base,
	    kinst_exit_fn fn, void *arg);

/* Is insn a direct branch (call/jmp/jcc with a relative target)?  Its kind or 0. */
struct kinst_insn;
int	kinst_insn_exit_kind(const struct kinst_insn *insn);

#endif /* !KINST_CALLGRAPH_H */
