// SPDX-License-Identifier: BSD-2-Clause
// kinstctl list-vars SPEC...: for each instruction a spec names, every C
// variable and parameter in scope there (DWARF), its type, and where it
// lives at that instruction -- or why a probe cannot read it.
#include <memory>

#include "commands/commands.h"
#include "debuginfo/debuginfo.h"
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

nlohmann::json
ranges_json(const Var &v)
{
	nlohmann::json r = nlohmann::json::array();
	for (const auto &x : v.ranges)
		r.push_back({{"lo", x.lo}, {"hi", x.hi}, {"dwarf", x.dwarf}});
	return r;
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
			Bytes b = m.bytes(f);
			std::vector<Insn> insns = walk_function(b, f.addr, dis);
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
				if (out.json) {
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
						if (v.available()) {
							j["location"] = v.loc.describe();
							av.push_back(j);
						} else {
							j["reason"] = v.reason;
							if (v.located)
								j["location"] = v.loc.describe();
							un.push_back(j);
						}
					}
					nlohmann::json j = {{"schema", KINST_JSON_SCHEMA}, {"type", "vars"},
					    {"module", m.name()}, {"function", f.name},
					    {"offset", in.offset}, {"address", hex(f.addr + in.offset)},
					    {"available", av}, {"unavailable", un}};
					if (!f.section.empty())
						j["section"] = f.section;
					w.line(json_line(j));
					continue;
				}
				w.line("  +" + hex(in.offset) + ":");
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
