/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Direct branches leaving a function (kinst_callgraph.h).
 */

#include "kinst_callgraph.h"
#include "kinst_decode.h"

int
kinst_insn_exit_kind(const struct kinst_insn *insn)
{
	/* A 66-prefixed branch has a vendor-dependent length: not an edge. */
	if (insn->enc != KINST_ENC_LEGACY || insn->opsize == 2)
		return (0);
	if (insn->map == KINST_MAP_1BYTE) {
		if (insn->opcode == 0xe8)
			return (KINST_EXIT_CALL);
		if (insn->opcode == 0xe9 || insn->opcode == 0xeb)
			return (KINST_EXIT_JMP);
		if (insn->opcode >= 0x70 && insn->opcode <= 0x7f)
			return (KINST_EXIT_JCC);
	} else if (insn->map == KINST_MAP_0F) {
		if (insn->opcode >= 0x80 && insn->opcode <= 0x8f)
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
