// SPDX-License-Identifier: BSD-2-Clause
#include "output/insn_format.h"

#include "base/text.h"

namespace kinst {

using nlohmann::json;

void
Tally::add(const Insn &in)
{
	instructions++;
	if (in.jopt != 0)
		jopt_known = true;
	if (in.jopt == KINST_JQ_YES)
		jump_optimizable++;
	if (in.len_from != Insn::LenFrom::engine)
		length_fallbacks++;
	if (!kinst::traceable(in)) {
		refused++;
		by_reason[reason_name(in)]++;
	} else if (in.cls.treatment == KINST_T_OOL) {
		ool++;
	} else if (in.cls.treatment == KINST_T_OOL_RIPREL) {
		ool_riprel++;
	} else {
		emulated++;
	}
}

void
Tally::add(const Tally &t)
{
	functions += t.functions;
	instructions += t.instructions;
	ool += t.ool;
	ool_riprel += t.ool_riprel;
	emulated += t.emulated;
	refused += t.refused;
	length_fallbacks += t.length_fallbacks;
	jump_optimizable += t.jump_optimizable;
	jopt_known = jopt_known || t.jopt_known;
	for (const auto &kv : t.by_reason)
		by_reason[kv.first] += kv.second;
}

// ---- text ----

std::string
text_function_header(const SymbolTable &syms, const Function &f, const Style &st)
{
	std::string s = st.paint("1", syms.module(f.module).name() + ":" + f.name);
	s += "  ";
	if (!f.section.empty())
		s += f.section + "+";
	s += hex(f.addr) + "  " + std::to_string(f.size) + " bytes";
	if (!f.aliases.empty()) {
		s += "  (aliases:";
		for (const auto &a : f.aliases)
			s += " " + a;
		s += ")";
	}
	return s;
}

namespace {

// s += sgr-painted text (Style::paint, without its temporaries).
void
paint_into(std::string &s, const Style &st, const char *sgr, const char *a, const char *b,
    const char *c)
{
	if (st.color) {
		s += "\033[";
		s += sgr;
		s += 'm';
	}
	s += a;
	s += b;
	s += c;
	if (st.color)
		s += "\033[0m";
}

} // namespace

void
append_text_verdict(std::string &s, const Insn &in, const Style &st)
{
	if (!traceable(in)) {
		paint_into(s, st, "31", "refused: ", reason_name(in).c_str(), "");
		return;
	}
	const char *j = in.jopt == KINST_JQ_YES ? " (jump-optimizable)" : "";
	if (in.cls.treatment == KINST_T_EMULATE)
		paint_into(s, st, "36", "emulated: ", emulation_name(in).c_str(), j);
	else
		paint_into(s, st, "32", verdict_name(in), j, "");
}

std::string
text_verdict(const Insn &in, const Style &st)
{
	std::string s;
	append_text_verdict(s, in, st);
	return s;
}

void
append_text_insn_row(std::string &s, const Insn &in, const InsnText &t, bool relocatable,
    const Style &st)
{
	// Hand-formatted: this runs once per instruction listed, and
	// snprintf was a fifth of list-offsets' time.
	static const char digits[] = "0123456789abcdef";
	s += "  +0x";
	size_t mark = s.size();
	append_hex(s, in.offset, 0);
	if (s.size() - mark < 5)
		s.append(5 - (s.size() - mark), ' ');
	s += ' ';
	if (relocatable) {
		mark = s.size();
		append_hex(s, in.addr, 0);
		size_t n = s.size() - mark;
		if (n < 8)
			s.insert(mark, 8 - n, ' ');
	} else {
		for (int sh = 60; sh >= 0; sh -= 4)
			s += digits[(in.addr >> sh) & 15];
	}
	s += "  ";
	mark = s.size();
	append_hex_bytes(s, in.bytes, in.len, " ");
	if (s.size() - mark < 24)
		s.append(24 - (s.size() - mark), ' ');
	s += "  ";
	mark = s.size();
	s += t.text;
	if (t.target.set)
		s += t.target.annotation();
	if (t.disasm_len != in.len && t.disasm_len != 0) {
		s += " [capstone: ";
		s += std::to_string(t.disasm_len);
		s += " bytes]";
	}
	if (!t.reloc.empty()) {
		s += " <";
		s += t.reloc;
		s += '>';
	}
	if (s.size() - mark < 40)
		s.append(40 - (s.size() - mark), ' ');
	s += ' ';
	append_text_verdict(s, in, st);
}

std::string
text_insn_row(const Insn &in, const InsnText &t, bool relocatable, const Style &st)
{
	std::string s;
	s.reserve(128);
	append_text_insn_row(s, in, t, relocatable, st);
	return s;
}

std::string
text_summary(const Tally &t, bool total)
{
	std::string s = total ? "total: " + std::to_string(t.functions) + " functions, " : "  ";
	s += std::to_string(t.instructions) + " instructions, " + std::to_string(t.traceable()) +
	    " traceable (" + std::to_string(t.ool) + " out-of-line, " + std::to_string(t.ool_riprel) +
	    " rip-relative, " + std::to_string(t.emulated) + " emulated), " +
	    std::to_string(t.refused) + " refused";
	if (!t.by_reason.empty()) {
		s += " (";
		bool first = true;
		for (const auto &kv : t.by_reason) {
			s += (first ? "" : ", ") + kv.first + ": " + std::to_string(kv.second);
			first = false;
		}
		s += ")";
	}
	if (t.jopt_known)
		s += "; " + std::to_string(t.jump_optimizable) + " jump-optimizable";
	if (t.length_fallbacks != 0)
		s += "; " + std::to_string(t.length_fallbacks) +
		    " lengths not from the engine's decoder (Capstone's, or 1)";
	return s;
}

// ---- JSON ----

json
json_function(const SymbolTable &syms, const Function &f)
{
	const Module &m = syms.module(f.module);
	json j = {{"schema", KINST_JSON_SCHEMA}, {"type", "function"}, {"module", m.name()},
	    {"function", f.name}, {"aliases", f.aliases}, {"address", hex(f.addr)},
	    {"size", f.size}, {"global", f.global}, {"relocatable", m.relocatable()},
	    {"file", m.path()}};
	if (!f.section.empty())
		j["section"] = f.section;
	return j;
}

namespace {

void
key(std::string &out, const char *k)
{
	out += ",\"";
	out += k;
	out += "\":";
}

} // namespace

std::string
json_insn_prefix(const SymbolTable &syms, const Function &f)
{
	std::string out = "{\"schema\":";
	out += std::to_string(KINST_JSON_SCHEMA);
	out += ",\"type\":\"insn\"";
	key(out, "module");
	append_json_string(out, syms.module(f.module).name());
	key(out, "function");
	append_json_string(out, f.name);
	if (!f.section.empty()) {
		key(out, "section");
		append_json_string(out, f.section);
	}
	return out;
}

void
append_json_insn(std::string &out, const SymbolTable &syms, const Function &f,
    const Insn &in, const InsnText &t)
{
	append_json_insn(out, json_insn_prefix(syms, f), in, t);
}

void
append_json_insn(std::string &out, const std::string &prefix, const Insn &in,
    const InsnText &t)
{
	out += prefix;
	key(out, "offset");
	append_u64(out, in.offset);
	key(out, "address");
	out += '"';
	append_hex0x(out, in.addr);
	out += '"';
	key(out, "length");
	append_u64(out, in.len);
	key(out, "bytes");
	out += '"';
	append_hex_bytes(out, in.bytes, in.len, "");
	out += '"';
	key(out, "mnemonic");
	append_json_string(out, t.mnemonic);
	key(out, "operands");
	append_json_string(out, t.operands);
	key(out, "text");
	append_json_string(out, t.text);
	key(out, "verdict");
	out += '"';
	out += verdict_name(in);
	out += '"';
	key(out, "riprel");
	out += (in.cls.flags & KINST_CF_RIPREL) ? "true" : "false";
	if (in.cls.treatment == KINST_T_EMULATE && traceable(in)) {
		key(out, "emulation");
		append_json_string(out, emulation_name(in));
	}
	if (!traceable(in)) {
		key(out, "reason");
		append_json_string(out, reason_name(in));
		key(out, "refusal_class");
		append_json_string(out, refusal_class(reason_name(in)));
	} else if (in.jopt != 0) {
		key(out, "probe");
		out += in.jopt == KINST_JQ_YES ? "\"jump\"" : "\"trap\"";
		if (in.jopt != KINST_JQ_YES) {
			key(out, "jump_refusal");
			out += '"';
			out += kinst_jopt_name(in.jopt);
			out += '"';
		}
	}
	if (!t.reloc.empty()) {
		key(out, "reloc");
		append_json_string(out, t.reloc);
	}
	if (t.target.set) {
		key(out, "target");
		out += json_line(t.target.json());
	}
	if (in.len_from != Insn::LenFrom::engine) {
		key(out, "length_from");
		out += '"';
		out += len_from_name(in);
		out += '"';
	}
	if (t.disasm_len != in.len) {
		key(out, "disasm_length");
		out += std::to_string(t.disasm_len);
	}
	out += '}';
}

json
json_insn(const SymbolTable &syms, const Function &f, const Insn &in, const InsnText &t)
{
	std::string s;
	append_json_insn(s, syms, f, in, t);
	return json::parse(s);
}

json
json_summary(const SymbolTable *syms, const Function *f, const Tally &t)
{
	json j = {{"schema", KINST_JSON_SCHEMA}, {"type", f ? "summary" : "total"},
	    {"instructions", t.instructions}, {"traceable", t.traceable()},
	    {"out_of_line", t.ool}, {"out_of_line_riprel", t.ool_riprel},
	    {"emulated", t.emulated}, {"refused", t.refused},
	    {"refused_by_reason", t.by_reason},
	    {"length_fallbacks", t.length_fallbacks}};
	if (t.jopt_known)
		j["jump_optimizable"] = t.jump_optimizable;
	if (f) {
		j["module"] = syms->module(f->module).name();
		j["function"] = f->name;
	} else {
		j["functions"] = t.functions;
	}
	return j;
}

} // namespace kinst
