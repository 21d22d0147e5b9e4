// SPDX-License-Identifier: BSD-2-Clause
// Capstone's text of an instruction the engine delimited (the symbols
// layer: cli/README.md).
#ifndef KINSTCTL_INSN_TEXT_H
#define KINSTCTL_INSN_TEXT_H

#include <string>

#include "base/branch.h"
#include "symbols/disasm.h"
#include "symbols/resolver.h"
#include "symbols/symbols.h"

namespace kinst {

// Capstone's text for an instruction the engine delimited; notes a length
// disagreement ("(bad)" if Capstone cannot decode it).
struct InsnText {
	std::string mnemonic, operands, text;
	// false: insn_text fills text only, mnemonic and operands stay ""
	// (list-offsets' text rows, which show text alone).
	bool parts = true;
	std::string reloc;		// unlinked module: relocation target(s), or ""
	unsigned disasm_len = 0;	// Capstone's length, 0 if undecodable
	bool branch = false;		// a direct branch (direct_branch), to...
	uint64_t branch_to = 0;
	BranchTarget target;		// ...named (insn_text with syms)
};
// A direct call or jump (call, jmp, jcc, loop, jrcxz) decoded as k at
// addr: true, and where it goes in *to.
bool direct_branch(const struct kinst_insn &k, uint64_t addr, uint64_t *to);
// The same for an A64 instruction decoded as d (b, bl, b.cond, cbz, cbnz,
// tbz, tbnz).
bool a64_direct_branch(const struct kinst_a64_insn &d, uint64_t addr, uint64_t *to);
InsnText insn_text(Disassembler &dis, const Insn &in);
// The same, plus the relocation target in an unlinked module file and the
// function a direct call or jump out of f reaches (from syms: live
// kallsyms, or the file's symbols).
InsnText insn_text(Disassembler &dis, const SymbolTable &syms, Module &m, const Function &f,
    const Insn &in);
// Both again, into t: its strings keep their capacity (list-offsets fills
// the same InsnTexts for every function).
void insn_text(InsnText &t, Disassembler &dis, const Insn &in);
void insn_text(InsnText &t, Disassembler &dis, const SymbolTable &syms, Module &m,
    const Function &f, const Insn &in);
// The text of an instruction as list-offsets and cover show it: with its
// branch target's annotation.
std::string insn_display(const InsnText &t);

} // namespace kinst

#endif
