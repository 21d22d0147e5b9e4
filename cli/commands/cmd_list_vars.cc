// SPDX-License-Identifier: BSD-2-Clause
// kinstctl list-vars SPEC...: for each instruction a spec names, every C
// variable and parameter in scope there (DWARF), its type, and where it
// lives at that instruction -- or why a probe cannot read it.
#include <algorithm>
#include <memory>

#include "commands/commands.h"
#include "debuginfo/debuginfo.h"
#include "debuginfo/dwarf_loc.h"
#include "debuginfo/dwarf_vars.h"
#include "base/error.h"
#include "base/text.h"
#include "symbols/resolver.h"
#include "symbols/sources.h"

namespace kinst {

namespace {

struct ListVars {
	std::vector<std::string> specs;
	bool ranges = false;
	bool all_insns = false;
	SourceOptions src;
	OutputOptions out;
	DebugOptions dbg;

	int run();
};

std::string
scope_text(const Var &v)
{
	if (v.scope.empty())
		return "";
	if (v.scope == "block")
		return " (block)";
	return " (inlined " + v.scope + ")";
}

// A struct, union or array held in registers or pieces: which of its
// members an expression can name here ($v.NAME, read from the pieces that
// hold its bytes), and why not the others (bytes optimized out...).
// Empty (false) for anything else: a scalar, or an aggregate in memory,
// whose members are all read through its address.
struct MemberUse {
	std::vector<std::string> usable;
	std::vector<std::pair<std::string, std::string>> not_usable;
};

bool
member_use(const Var &v, const DwarfTypes &dt, MemberUse &out)
{
	if (!v.available() || v.type_die == 0 || v.size <= 0 || v.size > UINT32_MAX / 8)
		return false;
	if (v.loc.in_memory())
		return false;
	uint32_t id = dt.resolve(dt.id_of(v.type_die));
	Types::Kind k = dt.kind(id);
	std::vector<Types::RawMember> ms;
	if (k == Types::Kind::array) {
		int64_t es = dt.size(dt.pointee(id));
		uint32_t n = dt.array_len(id);
		for (uint32_t i = 0; es > 0 && i < n && i < 64; i++)
			ms.push_back({"[" + std::to_string(i) + "]", dt.pointee(id),
			    (uint64_t)i * (uint64_t)es * 8, 0});
	} else if (k != Types::Kind::structure && k != Types::Kind::union_) {
		return false;
	} else if (!dt.members(id, ms)) {
		return false;
	}
	for (const auto &m : ms) {
		std::string name = m.name.empty() ? "(anonymous)" : m.name;
		int64_t sz = dt.size(m.type);
		uint64_t bits = m.bitfield ? m.bitfield : sz > 0 ? 8 * (uint64_t)sz : 0;
		std::string why;
		if (bits == 0) {
			why = "it has no size";
		} else {
			// Each 64-bit part of it, as the expression compiler
			// reads them (emit_location_bits).
			try {
				for (uint64_t o = 0; o < bits; o += 64) {
					std::vector<struct kinst_pinsn> code;
					emit_location_bits(v.loc, (uint32_t)v.size,
					    (uint32_t)(m.bit_offset + o), (uint32_t)std::min<uint64_t>(64,
					    bits - o), code);
				}
			} catch (const Error &e) {
				why = e.what();
			}
		}
		if (why.empty())
			out.usable.push_back(name);
		else
			out.not_usable.push_back({name, why});
	}
	return true;
}

nlohmann::json
ranges_json(const Var &v)
{
	nlohmann::json r = nlohmann::json::array();
	for (const auto &x : v.ranges)
		r.push_back({{"lo", x.lo}, {"hi", x.hi}, {"dwarf", x.dwarf}});
	return r;
}

// One instruction's vars object (docs/json.md).
nlohmann::json
vars_json(const Module &m, const Function &f, uint32_t off, const std::vector<Var> &vars,
    const DwarfTypes *dt, bool ranges)
{
	nlohmann::json av = nlohmann::json::array(), un = nlohmann::json::array();
	for (const Var &v : vars) {
		nlohmann::json j = {{"name", v.name}, {"type", v.type},
		    {"param", v.param}, {"depth", v.depth}};
		if (!v.scope.empty())
			j["scope"] = v.scope;
		if (v.shadowed)
			j["shadowed"] = true;
		if (v.located) {
			j["dwarf"] = v.dwarf;
			j["kind"] = v.kind;
		}
		if (ranges)
			j["ranges"] = ranges_json(v);
		if (!v.available()) {
			j["reason"] = v.reason;
			if (v.located)
				j["location"] = v.loc.describe();
			un.push_back(j);
			continue;
		}
		j["location"] = v.loc.describe();
		MemberUse mu;
		if (dt && member_use(v, *dt, mu)) {
			j["members_available"] = mu.usable;
			nlohmann::json nu = nlohmann::json::array();
			for (const auto &x : mu.not_usable)
				nu.push_back({{"name", x.first}, {"reason", x.second}});
			j["members_unavailable"] = nu;
		}
		av.push_back(j);
	}
	nlohmann::json j = {{"schema", KINST_JSON_SCHEMA}, {"type", "vars"},
	    {"module", m.name()}, {"function", f.name},
	    {"offset", off}, {"address", hex(f.addr + off)},
	    {"available", av}, {"unavailable", un}};
	if (!f.section.empty())
		j["section"] = f.section;
	return j;
}

// One instruction's block of text.
void
vars_text(Writer &w, uint32_t off, const std::vector<Var> &vars, const DwarfTypes *dt,
    bool ranges)
{
	w.line("  +" + hex(off) + ":");
	if (vars.empty())
		w.line("    (no variables in scope)");
	// The function's own first, inner scopes after (C's reading order).
	for (size_t k = vars.size(); k-- > 0;) {
		const Var &v = vars[k];
		std::string s = "    " + std::string(v.param ? "param " : "var   ") +
		    v.type + " " + v.name + scope_text(v) + (v.shadowed ? " (shadowed)" : "");
		if (v.available())
			s += ": " + v.loc.describe();
		else
			s += ": unavailable: " + v.reason;
		w.line(s);
		MemberUse mu;
		if (dt && member_use(v, *dt, mu)) {
			std::string u = "        members in expressions:";
			for (const auto &x : mu.usable)
				u += " " + x;
			if (mu.usable.empty())
				u += " none";
			w.line(u);
			for (const auto &x : mu.not_usable)
				w.line("        not " + std::string(x.first[0] == '[' ? "" : ".") +
				    x.first + ": " + x.second);
		}
		if (ranges) {
			std::string r = "        available at";
			for (const auto &x : v.ranges)
				r += " +" + hex(x.lo) + "..+" + hex(x.hi);
			if (v.ranges.empty())
				r += " no instruction";
			w.line(r);
		}
	}
}

int
ListVars::run()
{
	std::vector<Spec> parsed;
	for (const auto &s : specs)
		parsed.push_back(parse_spec(s));
	SymbolTable syms;
	load_symbols(src, syms);
	DebugInfo di(syms, dbg);
	Disassembler dis(out.syn());
	Writer w;
	VarQuery q;
	q.ranges = ranges;
	size_t ninsns = 0;
	for (const auto &sp : parsed) {
		for (const Target &t : resolve_targets(sp, syms, di, dis)) {
			Module &m = syms.module(t.module);
			const Function &f = *t.fn;
			if (di.module(t.module) == nullptr)
				throw Error(Exit::unknown_function, sp.text + ": " + m.name() +
				    " has no debug info (DWARF): its variables cannot be named "
				    "(give the debug file with --debug-file)");
			std::vector<Insn> insns = walk(m, f, dis);
			// The types of the function's module (members of its
			// variables held in pieces: member_use()).
			std::unique_ptr<DwarfTypes> dt;
			Dwfl_Module *dm = nullptr;
			uint64_t base = 0;
			if (di.dwarf_function(t.module, f, &dm, &base) && dm != nullptr)
				dt = std::make_unique<DwarfTypes>(dm);
			std::string fname = m.name() + ":" + f.name;
			if (!out.json)
				w.line(fname + "  " + (f.section.empty() ? "" : f.section + "+") + hex(f.addr));
			for (const Insn &in : insns) {
				if (!t.whole && in.offset != t.offset)
					continue;
				if (in.unreachable && t.whole && !all_insns)
					continue;
				std::vector<Var> vars;
				if (!vars_at(di, t.module, f, in.offset, q, vars))
					throw Error(Exit::unknown_function, fname + ": no debug info "
					    "describes this function (not in " + di.debug_path(t.module) + ")");
				ninsns++;
				if (out.json)
					w.line(json_line(vars_json(m, f, in.offset, vars, dt.get(), ranges)));
				else
					vars_text(w, in.offset, vars, dt.get(), ranges);
			}
		}
	}
	w.flush();
	if (ninsns == 0)
		throw Error(Exit::bad_offset, "list-vars: no instruction to list");
	return 0;
}

} // namespace

void
add_list_vars(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<ListVars>();
	CLI::App *sub = app.add_subcommand("list-vars",
	    "List the C variables and parameters in scope at each instruction (DWARF): "
	    "type, and where each lives there or why it cannot be read");
	sub->add_option("SPEC", o->specs, "Instruction(s): FUNC (every instruction), FUNC+OFF, "
	    "FILE:LINE, FUNC:entry ...")->required();
	sub->add_flag("--range", o->ranges, "Also print, per variable, the offset ranges where "
	    "the DWARF gives it a location");
	add_debug_options(sub, o->dbg);
	add_output_options(sub, o->out);
	add_source_options(sub, o->src);
	sub->footer(spec_help);
	sub->callback([o, &run]() { run = [o]() { return o->run(); }; });
}

} // namespace kinst
