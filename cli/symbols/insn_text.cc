// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/insn_text.h"

#include "base/text.h"

namespace kinst {

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
		t.branch = d.branch;
		t.branch_to = d.target;
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
