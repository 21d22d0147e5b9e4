// SPDX-License-Identifier: BSD-2-Clause
// kinstctl list-inlines FUNC: every inlined instance of FUNC (DWARF), where
// it was inlined, its ranges, its entry (FUNC:entry) and the instructions
// control reaches on leaving it (FUNC:return).
#include <memory>

#include "commands/commands.h"
#include "debuginfo/debuginfo.h"
#include "base/error.h"
#include "base/text.h"
#include "symbols/sources.h"

namespace kinst {

namespace {

struct ListInlines {
	std::vector<std::string> specs;
	SourceOptions src;
	OutputOptions out;
	DebugOptions dbg;

	int run();
};

std::string
offs(uint32_t v)
{
	return "+" + hex(v);
}

int
ListInlines::run()
{
	std::vector<Spec> parsed;
	for (const auto &s : specs) {
		Spec sp = parse_spec(s);
		if (sp.is_address || sp.has_offset || sp.is_source())
			throw Error(Exit::usage, "list-inlines: " + s +
			    ": give a function name (FUNC or MODULE:FUNC)");
		sp.kind = SpecKind::inline_entry;	// looked up where inline specs are
		parsed.push_back(sp);
	}
	SymbolTable syms;
	load_symbols(src, syms);
	DebugInfo di(syms, dbg);
	Disassembler dis(out.syn());
	Writer w;
	for (const auto &sp : parsed) {
		size_t n = 0;
		bool any_debug = false;
		for (size_t mi : di.spec_modules(sp)) {
			if (di.module(mi) == nullptr)
				continue;
			any_debug = true;
			Module &m = syms.module(mi);
			for (const auto &ii : di.inlines(mi, sp.function, dis)) {
				n++;
				const Function &f = *ii.caller;
				if (out.json) {
					nlohmann::json j = {{"schema", KINST_JSON_SCHEMA}, {"type", "inline"},
					    {"module", m.name()}, {"function", ii.function},
					    {"caller", f.name}, {"call_file", ii.call_file},
					    {"call_line", ii.call_line}, {"entry", ii.entry},
					    {"entry_address", hex(f.addr + ii.entry)}, {"returns", ii.returns}};
					if (!f.section.empty())
						j["section"] = f.section;
					if (ii.has_entry_pc)
						j["entry_pc"] = ii.entry_pc;
					nlohmann::json r = nlohmann::json::array();
					for (const auto &p : ii.ranges)
						r.push_back({p.first, p.second});
					j["ranges"] = r;
					w.line(json_line(j));
					continue;
				}
				std::string s = m.name() + ":" + f.name + offs(ii.entry) + "  " +
				    (f.section.empty() ? "" : f.section + "+") + hex(f.addr + ii.entry) +
				    "  inlined at " + ii.call_file + ":" + std::to_string(ii.call_line) +
				    "\n    ranges";
				for (const auto &p : ii.ranges)
					s += " " + offs(p.first) + ".." + offs(p.second);
				if (ii.has_entry_pc)
					s += "; entry_pc " + offs(ii.entry_pc);
				s += "; returns";
				for (uint32_t r : ii.returns)
					s += " " + offs(r);
				if (ii.returns.empty())
					s += " (none in the caller)";
				w.line(s);
			}
		}
		if (!any_debug)
			throw Error(Exit::unknown_function, sp.text + ": no debug info to find inlined functions in");
		if (n == 0)
			throw Error(Exit::unknown_function, sp.text + ": no inlined instance of " + sp.function +
			    (syms.find(sp.function).empty() ? "" : " (it exists out of line only)"));
		if (!out.json)
			w.line(std::to_string(n) + " inlined instance" + (n == 1 ? "" : "s") + " of " +
			    sp.function);
	}
	w.flush();
	return 0;
}

} // namespace

void
add_list_inlines(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<ListInlines>();
	CLI::App *sub = app.add_subcommand("list-inlines",
	    "List every inlined instance of a function (DWARF): caller, call site, ranges, "
	    "entry (FUNC:entry) and return points (FUNC:return)");
	sub->add_option("FUNC", o->specs, "Function(s) that the compiler inlined: FUNC or MODULE:FUNC")
	    ->required();
	add_debug_options(sub, o->dbg);
	add_output_options(sub, o->out);
	add_source_options(sub, o->src);
	sub->callback([o, &run]() { run = [o]() { return o->run(); }; });
}

} // namespace kinst
