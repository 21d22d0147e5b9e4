// SPDX-License-Identifier: BSD-2-Clause
// kinstctl resolve: the probes a spec expands to (what `trace` would arm).
#include <cstdio>
#include <memory>

#include "commands/commands.h"
#include "debuginfo/debuginfo.h"
#include "base/error.h"
#include "output/insn_format.h"
#include "symbols/resolver.h"
#include "symbols/sources.h"

namespace kinst {

namespace {

struct Resolve {
	std::vector<std::string> specs;
	SourceOptions src;
	OutputOptions out;
	DebugOptions dbg;

	int run();
};

int
Resolve::run()
{
	std::vector<Spec> parsed;
	for (const auto &s : specs)
		parsed.push_back(parse_spec(s));
	SymbolTable syms;
	src.arm64 = true;
	load_symbols(src, syms);
	Disassembler dis(out.syn());
	Style st = Style::detect(stdout, out.no_color || out.json);
	Writer w;
	DebugInfo di(syms, dbg);
	for (const auto &sp : parsed)
	for (const Target &t : resolve_targets(sp, syms, di, dis)) {
		Module &m = syms.module(t.module);
		std::vector<Insn> insns = walk(m, *t.fn, dis);
		size_t refused = 0;
		for (const auto &in : insns) {
			if (!t.whole && in.offset != t.offset)
				continue;
			if (t.whole && !traceable(in)) {
				refused++;
				continue;
			}
			InsnText txt = insn_text(dis, syms, m, *t.fn, in);
			if (out.json) {
				nlohmann::json j = json_insn(syms, *t.fn, in, txt);
				j["type"] = "probe";
				j["spec"] = sp.text;
				w.line(json_line(j));
			} else {
				std::string s = probe_name(syms, t, in.offset);
				if (s.size() < 40)
					s.append(40 - s.size(), ' ');
				s += " " + (m.relocatable() ? t.fn->section + "+" : std::string()) +
				    hex(in.addr) + "  " + hex_bytes(in.bytes, in.len, " ") + "  " + insn_display(txt) +
				    "  " + text_verdict(in, st);
				w.line(s);
			}
		}
		if (refused) {
			w.flush();
			fprintf(stderr, "kinstctl: note: %s: %zu of %zu instructions cannot be traced "
			    "(see kinstctl list-offsets %s)\n", sp.text.c_str(), refused, insns.size(),
			    sp.text.c_str());
		}
	}
	w.flush();
	return 0;
}

} // namespace

void
add_resolve(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<Resolve>();
	CLI::App *sub = app.add_subcommand("resolve",
	    "Show the probes (module, function, offset, address, instruction) specs expand to");
	sub->add_option("SPEC", o->specs, "Probe spec(s)")->required();
	add_output_options(sub, o->out);
	add_source_options(sub, o->src);
	add_debug_options(sub, o->dbg);
	sub->footer(spec_help);
	sub->callback([o, &run]() { run = [o]() { return o->run(); }; });
}

} // namespace kinst
