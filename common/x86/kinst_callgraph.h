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
#include "kinst_jopt_api.h"


/* Is insn a direct branch (call/jmp/jcc with a relative target)?  Its kind or 0. */
struct kinst_insn;
int	kinst_insn_exit_kind(const struct kinst_insn *insn);

#endif /* !KINST_CALLGRAPH_H */
