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
	// No details: a direct branch's target is the engine's (insn_text.cc);
	// Capstone filling them in was a tenth of list-offsets' time.
	cs_option(handle_, CS_OPT_DETAIL, CS_OPT_OFF);
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
	}
	return t;
}

} // namespace kinst
