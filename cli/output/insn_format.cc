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

std::string
text_verdict(const Insn &in, const Style &st)
{
	std::string v = verdict_name(in);
	if (!traceable(in))
		return st.paint("31", "refused: " + reason_name(in));
	std::string j = in.jopt == KINST_JQ_YES ? " (jump-optimizable)" : "";
	if (in.cls.treatment == KINST_T_EMULATE)
		return st.paint("36", "emulated: " + emulation_name(in) + j);
	return st.paint("32", v + j);
}

std::string
text_insn_row(const Insn &in, const InsnText &t, bool relocatable, const Style &st)
{
	// Hand-formatted: this runs once per instruction listed, and
	// snprintf was a fifth of list-offsets' time.
	static const char digits[] = "0123456789abcdef";
	std::string s;
	s.reserve(128);
	s += "  +0x";
	size_t mark = s.size();
	append_hex(s, in.offset, 0);
	if (s.size() - mark < 5)
		s.append(5 - (s.size() - mark), ' ');
	s += ' ';
	if (relocatable) {
		std::string a;
		append_hex(a, in.addr, 0);
		if (a.size() < 8)
			s.append(8 - a.size(), ' ');
		s += a;
	} else {
		for (int sh = 60; sh >= 0; sh -= 4)
			s += digits[(in.addr >> sh) & 15];
	}
	s += "  ";
	mark = s.size();
	for (size_t i = 0; i < in.len; i++) {
		if (i)
			s += ' ';
		s += digits[in.bytes[i] >> 4];
		s += digits[in.bytes[i] & 15];
	}
	if (s.size() - mark < 24)
		s.append(24 - (s.size() - mark), ' ');
	s += "  ";
	std::string txt = insn_display(t);
	if (t.disasm_len != in.len && t.disasm_len != 0)
		txt += " [capstone: " + std::to_string(t.disasm_len) + " bytes]";
	if (!t.reloc.empty())
		txt += " <" + t.reloc + ">";
	s += txt;
	if (txt.size() < 40)
		s.append(40 - txt.size(), ' ');
	s += " ";
	s += text_verdict(in, st);
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

void
append_json_insn(std::string &out, const SymbolTable &syms, const Function &f,
    const Insn &in, const InsnText &t)
{
	out += "{\"schema\":";
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
	key(out, "offset");
	out += std::to_string(in.offset);
	key(out, "address");
	out += '"' + hex(in.addr) + '"';
	key(out, "length");
	out += std::to_string(in.len);
	key(out, "bytes");
	out += '"' + hex_bytes(in.bytes, in.len, "") + '"';
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
