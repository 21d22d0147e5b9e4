// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/disasm.h"

#include "base/error.h"

namespace kinst {

Disassembler::Disassembler(Syntax syntax)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle_) != CS_ERR_OK)
		throw Error(Exit::internal, "capstone: cannot open an x86-64 handle");
	cs_option(handle_, CS_OPT_SYNTAX,
	    syntax == Syntax::att ? CS_OPT_SYNTAX_ATT : CS_OPT_SYNTAX_INTEL);
	// Details, for the operand of a direct branch (Text::target).
	cs_option(handle_, CS_OPT_DETAIL, CS_OPT_ON);
	insn_.reset(cs_malloc(handle_));
	if (!insn_) {
		cs_close(&handle_);
		throw Error(Exit::internal, "capstone: out of memory");
	}
}

Disassembler::~Disassembler()
{
	insn_.reset();
	cs_close(&handle_);
}

Disassembler::Text
Disassembler::one(const uint8_t *code, size_t avail, uint64_t addr)
{
	Text t;
	const uint8_t *p = code;
	size_t n = avail;
	uint64_t a = addr;
	if (cs_disasm_iter(handle_, &p, &n, &a, insn_.get())) {
		t.mnemonic = insn_->mnemonic;
		t.operands = insn_->op_str;
		t.len = insn_->size;
		const cs_detail *d = insn_->detail;
		if (d && (cs_insn_group(handle_, insn_.get(), CS_GRP_JUMP) ||
		    cs_insn_group(handle_, insn_.get(), CS_GRP_CALL)) &&
		    d->x86.op_count == 1 && d->x86.operands[0].type == X86_OP_IMM) {
			t.branch = true;
			t.target = (uint64_t)d->x86.operands[0].imm;
		}
	}
	return t;
}

} // namespace kinst
