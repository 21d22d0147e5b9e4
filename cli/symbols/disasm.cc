// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/disasm.h"

#include <cstring>

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

const Disassembler::Text &
Disassembler::same_anywhere(const uint8_t *code, size_t len, uint64_t addr)
{
	if (len == 0 || len > sizeof(Slot::bytes)) {
		miss_ = one(code, len, addr);
		return miss_;
	}
	if (!cache_)
		cache_.reset(new Slot[cache_slots]);
	// FNV-1a over the bytes and the length.
	uint32_t h = 2166136261u ^ (uint32_t)len;
	for (size_t i = 0; i < len; i++)
		h = (h ^ code[i]) * 16777619u;
	Slot &s = cache_[h % cache_slots];
	if (s.len == len && memcmp(s.bytes, code, len) == 0)
		return s.text;
	miss_ = one(code, len, addr);
	if (miss_.len != len)
		return miss_;	// not one instruction of len bytes: not kept
	s.len = (uint8_t)len;
	memcpy(s.bytes, code, len);
	s.text = miss_;
	return s.text;
}

} // namespace kinst
