// SPDX-License-Identifier: BSD-2-Clause
// Text and JSON renderings of functions, instructions and registers, shared
// by list-offsets, resolve and trace.  The JSON schema is docs/json.md;
// every object carries "schema": KINST_JSON_SCHEMA and a "type".
#ifndef KINSTCTL_FORMAT_H
#define KINSTCTL_FORMAT_H

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "disasm.h"
#include "output.h"
#include "branch.h"
#include "resolver.h"

#include "abi.h"

namespace kinst {

constexpr int KINST_JSON_SCHEMA = 5;	// docs/json.md (2: trace --stack; 3: count, hist;
					// 4: trace --mem/--str; 5: count/hist --by stack rows' "stack")

std::string hex(uint64_t v);			// "0x1f"
void append_hex0x(std::string &s, uint64_t v);	// hex(v), appended
std::string hex_bytes(const uint8_t *p, size_t n, const char *sep);

// Capstone's text for an instruction the engine delimited; notes a length
// disagreement ("(bad)" if Capstone cannot decode it).
struct InsnText {
	std::string mnemonic, operands, text;
	std::string reloc;		// unlinked module: relocation target(s), or ""
	unsigned disasm_len = 0;	// Capstone's length, 0 if undecodable
	bool branch = false;		// Capstone: a direct branch, to...
	uint64_t branch_to = 0;
	BranchTarget target;		// ...named (insn_text with syms)
};
InsnText insn_text(Disassembler &dis, const Insn &in);
// The same, plus the relocation target in an unlinked module file and the
// function a direct call or jump out of f reaches (from syms: live
// kallsyms, or the file's symbols).
InsnText insn_text(Disassembler &dis, const SymbolTable &syms, Module &m, const Function &f,
    const Insn &in);
// The text of an instruction as list-offsets and cover show it: with its
// branch target's annotation.
std::string insn_display(const InsnText &t);

// Per-function or total counts of verdicts.
struct Tally {
	uint64_t functions = 0, instructions = 0, ool = 0, ool_riprel = 0, emulated = 0, refused = 0;
	uint64_t length_fallbacks = 0;	// lengths not from the engine's decoder (Insn::len_from)
	uint64_t jump_optimizable = 0;	// Insn::jopt == KINST_JQ_YES
	bool jopt_known = false;	// some Insn::jopt was computed
	std::map<std::string, uint64_t> by_reason;
	void add(const Insn &in);
	void add(const Tally &t);
	uint64_t traceable() const { return ool + ool_riprel + emulated; }
};

// ---- text ----
std::string text_function_header(const SymbolTable &syms, const Function &f, const Style &st);
std::string text_insn_row(const Insn &in, const InsnText &t, bool relocatable, const Style &st);
std::string text_verdict(const Insn &in, const Style &st);
std::string text_summary(const Tally &t, bool total);

// ---- JSON (one object per line) ----
nlohmann::json json_function(const SymbolTable &syms, const Function &f);
nlohmann::json json_insn(const SymbolTable &syms, const Function &f, const Insn &in, const InsnText &t);
// The same object, appended to out as one line of text without building a
// json value (list-offsets writes millions of them).  json_insn parses it.
void append_json_insn(std::string &out, const SymbolTable &syms, const Function &f,
    const Insn &in, const InsnText &t);
// A JSON string literal (quotes included); bytes >= 0x80 as \u00XX.
void append_json_string(std::string &out, const std::string &s);
nlohmann::json json_summary(const SymbolTable *syms, const Function *f, const Tally &t);
std::string json_line(const nlohmann::json &j);

// ---- registers (trace) ----
extern const char *const gpr_names[KINST_NGPR];
// Compact: "rip=... rsp=... rax=... rdi=... rsi=... rdx=... rcx=..." ;
// all: every general register, rflags (decoded), cs, ss.
std::string text_regs(const struct kinst_regs &r, bool all);
std::string text_rflags(uint64_t fl);
nlohmann::json json_regs(const struct kinst_regs &r);

} // namespace kinst

#endif
