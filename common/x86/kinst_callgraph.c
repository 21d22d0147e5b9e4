/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Direct branches leaving a function (kinst_callgraph.h).
 */

#include "x86/kinst_callgraph.h"
#include "x86/kinst_classify.h"
#include "x86/kinst_decode.h"

int
kinst_insn_exit_kind(const struct kinst_insn *insn)
{
	/* A 66-prefixed branch has a vendor-dependent length: not an edge. */
	if (insn->opsize == 2)
		return (0);
	switch (kinst_branch_kind(insn)) {
	case KINST_EM_CALL_REL:
		return (KINST_EXIT_CALL);
	case KINST_EM_JMP_REL:
		return (KINST_EXIT_JMP);
	case KINST_EM_JCC:
		return (KINST_EXIT_JCC);
	}
	return (0);
}

size_t
kinst_func_exits(const uint8_t *text, size_t size, uint64_t base,
    kinst_exit_fn fn, void *arg)
{
	struct kinst_insn insn;
	uint64_t at, to;
	size_t off;
	int kind;

	off = 0;
	while (off < size) {
		if (kinst_decode(text + off, size - off, &insn) != KINST_DEC_OK)
			break;
		at = base + off;
		off += insn.len;
		kind = kinst_insn_exit_kind(&insn);
		if (kind == 0)
			continue;
		to = base + off + (uint64_t)insn.imm;
		if (to >= base && to < base + size)
			continue;	/* inside the function */
		if (fn(arg, at, to, kind) != 0)
			return (off);
	}
	return (off);
}
