// SPDX-License-Identifier: BSD-2-Clause
#include "output/insn_format.h"

#include <cstring>

#include "base/text.h"
#include "output/hitfmt.h"
#include "output/rowout.h"

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
	if (syms.module(f.module).a64())
		s += "  arm64";
	if (!f.aliases.empty()) {
		s += "  (aliases:";
		for (const auto &a : f.aliases)
			s += " " + a;
		s += ")";
	}
	return s;
}

namespace {

// Text painted with SGR code sgr (Style::paint, without its temporaries).
void
paint_into(RowOut &o, const Style &st, const char *sgr, const char *a, const char *b,
    const char *c)
{
	if (st.color) {
		o.lit("\033[");
		o.cstr(sgr);
		o.put('m');
	}
	o.cstr(a);
	o.cstr(b);
	o.cstr(c);
	if (st.color)
		o.lit("\033[0m");
}

void
verdict_into(RowOut &o, const Insn &in, const Style &st)
{
	if (!traceable(in)) {
		paint_into(o, st, "31", "refused: ", reason_name(in).c_str(), "");
		return;
	}
	const char *j = in.jopt == KINST_JQ_YES ? " (jump-optimizable)" : "";
	if (in.cls.treatment == KINST_T_EMULATE)
		paint_into(o, st, "36", "emulated: ", emulation_name(in).c_str(), j);
	else
		paint_into(o, st, "32", verdict_name(in), j, "");
}

} // namespace

void
append_text_verdict(std::string &s, const Insn &in, const Style &st)
{
	RowOut o(s);
	verdict_into(o, in, st);
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
	// Through a raw cursor: this runs once per instruction listed
	// (snprintf was a fifth of list-offsets' time, then std::string's
	// appends a quarter).
	RowOut o(s);
	o.lit("  +0x");
	size_t mark = o.mark();
	o.hex(in.offset, 0);
	o.pad_to(mark, 5);
	o.put(' ');
	if (relocatable)
		o.hex_right(in.addr, 8);
	else
		o.hex(in.addr, 16);
	o.lit("  ");
	mark = o.mark();
	o.hex_bytes(in.bytes, in.len, ' ');
	o.pad_to(mark, 24);
	o.lit("  ");
	mark = o.mark();
	o.put(t.text);
	if (t.target.set)
		o.put(t.target.annotation());
	if (t.disasm_len != in.len && t.disasm_len != 0) {
		o.lit(" [capstone: ");
		o.u64(t.disasm_len);
		o.lit(" bytes]");
	}
	if (!t.reloc.empty()) {
		o.lit(" <");
		o.put(t.reloc);
		o.put('>');
	}
	o.pad_to(mark, 40);
	o.put(' ');
	verdict_into(o, in, st);
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

// Members in the order json_line() (nlohmann's dump(), a std::map) wrote
// them when this line was a json value: sorted by name.  Written straight
// to the output: list-offsets writes one for each function.
void
append_json_function(std::string &out, const SymbolTable &syms, const Function &f)
{
	const Module &m = syms.module(f.module);
	out += "{\"address\":\"";
	out += hex(f.addr);
	out += "\",\"aliases\":[";
	for (size_t i = 0; i < f.aliases.size(); i++) {
		if (i != 0)
			out += ',';
		append_json_as_dump(out, f.aliases[i]);
	}
	out += ']';
	if (m.a64())
		out += ",\"arch\":\"arm64\"";
	out += ",\"file\":";
	append_json_as_dump(out, m.path());
	out += ",\"function\":";
	append_json_as_dump(out, f.name);
	out += f.global ? ",\"global\":true" : ",\"global\":false";
	out += ",\"module\":";
	append_json_as_dump(out, m.name());
	out += m.relocatable() ? ",\"relocatable\":true" : ",\"relocatable\":false";
	out += ",\"schema\":";
	out += std::to_string(KINST_JSON_SCHEMA);
	if (!f.section.empty()) {
		out += ",\"section\":";
		append_json_as_dump(out, f.section);
	}
	out += ",\"size\":";
	out += std::to_string(f.size);
	out += ",\"type\":\"function\"}";
}

namespace {

// BranchTarget::json() as json_line() writes it (members in dump()'s
// order), without the DOM: calls and jumps are a sixth of a listing.
void
json_target(RowOut &o, const BranchTarget &t)
{
	o.lit("{\"address\":\"");
	o.hex0x(t.address);
	if (!t.resolved) {
		o.lit("\",\"function\":null,\"module\":null,\"offset\":null}");
		return;
	}
	o.lit("\",\"function\":");
	o.json_as_dump(t.function);
	o.lit(",\"module\":");
	o.json_as_dump(t.module);
	o.lit(",\"offset\":");
	o.u64(t.offset);
	o.put('}');
}

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
	RowOut o(out);
	o.put(prefix);
	o.key("offset");
	o.u64(in.offset);
	o.key("address");
	o.put('"');
	o.hex0x(in.addr);
	o.put('"');
	o.key("length");
	o.u64(in.len);
	o.key("bytes");
	o.put('"');
	o.hex_bytes(in.bytes, in.len);
	o.put('"');
	o.key("mnemonic");
	o.json_string(t.mnemonic);
	o.key("operands");
	o.json_string(t.operands);
	o.key("text");
	o.json_string(t.text);
	o.key("verdict");
	o.quoted(verdict_name(in));
	o.key("riprel");
	if (in.cls.flags & KINST_CF_RIPREL)
		o.lit("true");
	else
		o.lit("false");
	if (in.cls.treatment == KINST_T_EMULATE && traceable(in)) {
		o.key("emulation");
		o.json_string(emulation_name(in));
	}
	if (!traceable(in)) {
		std::string reason = reason_name(in);
		o.key("reason");
		o.json_string(reason);
		o.key("refusal_class");
		o.json_string(refusal_class(reason));
	} else if (in.jopt != 0) {
		o.key("probe");
		if (in.jopt == KINST_JQ_YES) {
			o.lit("\"jump\"");
		} else {
			o.lit("\"trap\"");
			o.key("jump_refusal");
			o.quoted(kinst_jopt_name(in.jopt));
		}
	}
	if (!t.reloc.empty()) {
		o.key("reloc");
		o.json_string(t.reloc);
	}
	if (t.target.set) {
		o.key("target");
		json_target(o, t.target);
	}
	if (in.len_from != Insn::LenFrom::engine) {
		o.key("length_from");
		o.quoted(len_from_name(in));
	}
	if (t.disasm_len != in.len) {
		o.key("disasm_length");
		o.u64(t.disasm_len);
	}
	o.put('}');
}

json
json_insn(const SymbolTable &syms, const Function &f, const Insn &in, const InsnText &t)
{
	std::string s;
	append_json_insn(s, syms, f, in, t);
	return json::parse(s);
}

// As append_json_function: members sorted by name, as dump() wrote them.
void
append_json_summary(std::string &out, const SymbolTable *syms, const Function *f,
    const Tally &t)
{
	auto num = [&out](const char *k, uint64_t v) {
		out += k;
		out += std::to_string(v);
	};
	num("{\"emulated\":", t.emulated);
	if (f) {
		out += ",\"function\":";
		append_json_as_dump(out, f->name);
	} else {
		num(",\"functions\":", t.functions);
	}
	num(",\"instructions\":", t.instructions);
	if (t.jopt_known)
		num(",\"jump_optimizable\":", t.jump_optimizable);
	num(",\"length_fallbacks\":", t.length_fallbacks);
	if (f) {
		out += ",\"module\":";
		append_json_as_dump(out, syms->module(f->module).name());
	}
	num(",\"out_of_line\":", t.ool);
	num(",\"out_of_line_riprel\":", t.ool_riprel);
	num(",\"refused\":", t.refused);
	out += ",\"refused_by_reason\":{";
	for (auto it = t.by_reason.begin(); it != t.by_reason.end(); ++it) {
		if (it != t.by_reason.begin())
			out += ',';
		append_json_as_dump(out, it->first);
		out += ':';
		out += std::to_string(it->second);
	}
	out += '}';
	num(",\"schema\":", KINST_JSON_SCHEMA);
	num(",\"traceable\":", t.traceable());
	out += f ? ",\"type\":\"summary\"}" : ",\"type\":\"total\"}";
}

} // namespace kinst
