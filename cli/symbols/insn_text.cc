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

bool
a64_direct_branch(const struct kinst_a64_insn &d, uint64_t addr, uint64_t *to)
{
	switch (d.emul) {
	case KINST_A64_EM_B:
	case KINST_A64_EM_BL:
	case KINST_A64_EM_BCOND:
	case KINST_A64_EM_CBZ:
	case KINST_A64_EM_CBNZ:
	case KINST_A64_EM_TBZ:
	case KINST_A64_EM_TBNZ:
		*to = kinst_a64_target(&d, addr);
		return true;
	}
	return false;
}

namespace {

// t's text from Capstone's d when d is one instruction of len bytes
// (true); else "(bad)".
bool
set_text(InsnText &t, const Disassembler::TextView &d, unsigned len)
{
	if (d.len != len) {
		if (t.parts) {
			t.mnemonic.assign("(bad)");
			t.operands.clear();
		}
		t.text.assign("(bad)");
		return false;
	}
	if (t.parts) {
		t.mnemonic.assign(d.mnemonic);
		t.operands.assign(d.operands);
	}
	t.text.assign(d.mnemonic);
	if (!d.operands.empty()) {
		t.text += ' ';
		t.text += d.operands;
	}
	return true;
}

// An AArch64 instruction: Capstone's text; a direct branch's target is the
// engine's (kinst_a64_target).
void
insn_text_a64(InsnText &t, Disassembler &dis, const Insn &in)
{
	Disassembler::Text d;
	if (in.len == 4)
		d = dis.a64(in.bytes, in.addr);
	t.disasm_len = d.len;
	if (!set_text(t, Disassembler::view(d), in.len))	// also a tail shorter than a word
		return;
	t.branch = a64_direct_branch(in.a64d, in.addr, &t.branch_to);
}

} // namespace

void
insn_text(InsnText &t, Disassembler &dis, const Insn &in)
{
	t.reloc.clear();
	t.branch = false;
	t.branch_to = 0;
	t.target = BranchTarget();
	if (in.a64) {
		insn_text_a64(t, dis, in);
		return;
	}
	struct kinst_insn k;
	bool dec = insn_decode(in, &k);
	uint64_t to = 0;
	bool branch = dec && direct_branch(k, in.addr, &to);
	// Text that names an address computed from where the instruction
	// is: a direct branch's target, xbegin's, a RIP-relative operand
	// (unless this Capstone writes its displacement).
	bool xbegin = dec && k.map == KINST_MAP_1BYTE && k.opcode == 0xc7 && k.has_modrm &&
	    k.modrm == 0xf8;
	Disassembler::Text other;
	Disassembler::TextView d;
	if (branch) {
		d = dis.branch(in.bytes, in.len, in.addr, to);
	} else if (dec && !xbegin && (!k.rip_relative || dis.riprel_same_anywhere())) {
		d = dis.same_anywhere(in.bytes, in.len, in.addr);
	} else {
		other = dis.one(in.bytes, in.len, in.addr);
		d = Disassembler::view(other);
	}
	t.disasm_len = d.len;
	if (d.len == 0) {
		// Capstone only saw in.len bytes; retry with its own view so
		// that we can say how it disagrees.
		other = dis.one(in.bytes, KINST_MAX_INSN_LEN, in.addr);
		d = Disassembler::view(other);
		t.disasm_len = d.len;
	}
	if (set_text(t, d, in.len)) {
		t.branch = branch;
		t.branch_to = to;
	}
}

InsnText
insn_text(Disassembler &dis, const Insn &in)
{
	InsnText t;
	insn_text(t, dis, in);
	return t;
}

void
insn_text(InsnText &t, Disassembler &dis, const SymbolTable &syms, Module &m,
    const Function &f, const Insn &in)
{
	insn_text(t, dis, in);
	if (m.relocatable()) {
		// Unlinked: the branch's bytes are a relocation (t.reloc).
		t.reloc = m.relocation(f, in.addr, in.len);
		return;
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
}

InsnText
insn_text(Disassembler &dis, const SymbolTable &syms, Module &m, const Function &f,
    const Insn &in)
{
	InsnText t;
	insn_text(t, dis, syms, m, f, in);
	return t;
}

std::string
insn_display(const InsnText &t)
{
	return t.text + t.target.annotation();
}

} // namespace kinst
