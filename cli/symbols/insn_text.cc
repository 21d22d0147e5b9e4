// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/insn_text.h"

#include "base/text.h"

namespace kinst {

bool
direct_branch(const struct kinst_insn &k, uint64_t addr, uint64_t *to)
{
	switch (kinst_branch_kind(&k)) {
	case KINST_EM_CALL_REL:
	case KINST_EM_JMP_REL:
	case KINST_EM_JCC:
	case KINST_EM_LOOP:
	case KINST_EM_LOOPE:
	case KINST_EM_LOOPNE:
	case KINST_EM_JRCXZ:
		*to = addr + k.len + (uint64_t)k.imm;
		return true;
	}
	return false;
}

InsnText
insn_text(Disassembler &dis, const Insn &in)
{
	InsnText t;
	Disassembler::Text d = dis.one(in.bytes, in.len, in.addr);
	t.disasm_len = d.len;
	if (d.len == 0) {
		// Capstone only saw in.len bytes; retry with its own view so
		// that we can say how it disagrees.
		d = dis.one(in.bytes, KINST_MAX_INSN_LEN, in.addr);
		t.disasm_len = d.len;
	}
	if (d.len == in.len) {
		t.mnemonic = d.mnemonic;
		t.operands = d.operands;
		t.text = d.operands.empty() ? d.mnemonic : d.mnemonic + " " + d.operands;
		struct kinst_insn k;
		t.branch = insn_decode(in, &k) && direct_branch(k, in.addr, &t.branch_to);
	} else {
		t.mnemonic = "(bad)";
		t.text = "(bad)";
	}
	return t;
}

InsnText
insn_text(Disassembler &dis, const SymbolTable &syms, Module &m, const Function &f,
    const Insn &in)
{
	InsnText t = insn_text(dis, in);
	if (m.relocatable()) {
		// Unlinked: the branch's bytes are a relocation (t.reloc).
		t.reloc = m.relocation(f, in.addr, in.len);
		return t;
	}
	if (t.branch && (t.branch_to < f.addr || t.branch_to - f.addr >= f.size)) {
		t.target.set = true;
		t.target.address = t.branch_to;
		std::vector<SymbolTable::Ref> c = syms.containing(t.branch_to);
		if (!c.empty()) {
			const Function &g = syms.function(c[0]);
			t.target.resolved = true;
			t.target.function = g.name;
			t.target.offset = t.branch_to - g.addr;
			t.target.module = syms.module(c[0].module).name();
			t.target.other_module = c[0].module != f.module;
		}
	}
	return t;
}

std::string
insn_display(const InsnText &t)
{
	return t.text + t.target.annotation();
}

} // namespace kinst
