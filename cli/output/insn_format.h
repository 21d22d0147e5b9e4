// SPDX-License-Identifier: BSD-2-Clause
// An instruction as list-offsets, resolve and cover show it: Capstone's
// text with the engine's verdict, per-function rows and summaries, in
// text and JSON (the output layer: cli/README.md).
#ifndef KINSTCTL_INSN_FORMAT_H
#define KINSTCTL_INSN_FORMAT_H

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/branch.h"
#include "symbols/insn_text.h"
#include "base/output.h"
#include "symbols/resolver.h"
#include "base/text.h"

namespace kinst {

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
// The same row appended to s (list-offsets writes millions of them).
void append_text_insn_row(std::string &s, const Insn &in, const InsnText &t, bool relocatable,
    const Style &st);
std::string text_verdict(const Insn &in, const Style &st);
void append_text_verdict(std::string &s, const Insn &in, const Style &st);
std::string text_summary(const Tally &t, bool total);

// ---- JSON (one object per line) ----
// A function's line (without its newline), appended to out.
void append_json_function(std::string &out, const SymbolTable &syms, const Function &f);
nlohmann::json json_insn(const SymbolTable &syms, const Function &f, const Insn &in, const InsnText &t);
// The same object, appended to out as one line of text without building a
// json value (list-offsets writes millions of them).  json_insn parses it.
void append_json_insn(std::string &out, const SymbolTable &syms, const Function &f,
    const Insn &in, const InsnText &t);
// The same with the part that names f (json_insn_prefix: the same for all
// its instructions) made once.
std::string json_insn_prefix(const SymbolTable &syms, const Function &f);
void append_json_insn(std::string &out, const std::string &prefix, const Insn &in,
    const InsnText &t);
// A function's summary line (f null: the total of all), appended to out.
void append_json_summary(std::string &out, const SymbolTable *syms, const Function *f,
    const Tally &t);

} // namespace kinst

#endif
