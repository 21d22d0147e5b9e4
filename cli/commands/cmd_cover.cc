// SPDX-License-Identifier: BSD-2-Clause
// kinstctl cover SPEC... : every instruction of the functions counted in
// the kernel, keyed by the flags a conditional branch tests (cover.h), then
// the disassembly with counts, blocks and branch counts as text, JSON or
// HTML.  The aggregation itself is count's (agg.cc, kinst_agg.c); what is
// armed is planned as every command's is (planner.h) and handed to the
// device session (plan_arm.h).

#include <cinttypes>
#include <cmath>
#include <cstring>
#include <set>

#include "commands/agg.h"
#include "commands/commands.h"
#include "plan/cover.h"
#include "debuginfo/debuginfo.h"
#include "base/error.h"
#include "base/regfile.h"
#include "output/insn_format.h"
#include "plan/planner.h"
#include "plan/prog_compile.h"
#include "symbols/resolver.h"
#include "device/plan_arm.h"
#include "device/session.h"
#include "symbols/sources.h"
#include "base/spec.h"

namespace kinst {

namespace {

struct CoverOptions {
	std::vector<std::string> specs;
	double duration = 0;
	std::string html;
	uint64_t slots = 0;
	OutputOptions out;
	DebugOptions dbg;
};

// One function as decoded before arming.
struct Decoded {
	Spec spec;
	std::string module;
	size_t mi = 0;			// its module in the SymbolTable
	const Function *fn = nullptr;
	std::vector<Insn> insns;
	std::vector<std::string> texts;
	std::vector<BranchTarget> targets;
};

// key word 0 = the arithmetic flags; word 1 = the class of %rcx (only when
// a function has a loop-family instruction, to keep the keys few), or on
// arm64 the expression branch_key() made for cbz/cbnz/tbz/tbnz.
std::vector<struct kinst_pinsn>
cover_program(bool rcx, const std::string &k1)
{
	std::vector<struct kinst_pinsn> code = compile_expr(cover_flags_expr, "cover");
	code.pop_back();
	code.push_back(make_pinsn(KINST_OP_KEY, 0));
	if (rcx || !k1.empty()) {
		std::vector<struct kinst_pinsn> c =
		    compile_expr(rcx ? cover_rcx_expr : k1, "cover");
		c.pop_back();
		code.insert(code.end(), c.begin(), c.end());
		code.push_back(make_pinsn(KINST_OP_KEY, 1));
	}
	code.push_back(make_pinsn(KINST_OP_IMM, 0, 1));
	code.push_back(make_pinsn(KINST_OP_RET));
	return code;
}

Decoded
decode(SymbolTable &syms, const Spec &sp, Disassembler &dis)
{
	Decoded d;
	d.spec = sp;
	Target t = resolve_target(sp, syms);
	Module &m = syms.module(t.module);
	d.module = m.name();
	d.mi = t.module;
	d.fn = t.fn;
	d.insns = walk(m, *t.fn, dis);
	// As list-offsets: what only the kernel knows overrides "traceable".
	for (auto &in : d.insns) {
		if (!traceable(in) || in.unreachable)
			continue;
		int r = m.kernel_verdict(*t.fn, in.offset);
		// A reason this kinstctl does not know (a newer module's) is
		// still a refusal, shown as reason-N.
		if (r > KINST_R_NONE && r <= UINT8_MAX) {
			in.cls.treatment = KINST_T_REFUSE;
			in.cls.emul = KINST_EM_NONE;
			in.cls.reason = (uint8_t)r;
		}
	}
	for (const auto &in : d.insns) {
		InsnText it = insn_text(dis, syms, m, *t.fn, in);
		d.texts.push_back(insn_display(it));
		d.targets.push_back(it.target);
	}
	return d;
}

bool
has_loop(const Decoded &d)
{
	for (const auto &in : d.insns)
		if (!in.unreachable && cover_flow_of(in).flow == Flow::loop)
			return true;
	return false;
}

// arm64: key word 1 for the functions' cbz/cbnz/tbz/tbnz, "((pc == A) <<
// TAKEN) | ...": 1 << whether the one at pc branches, 0 elsewhere.  As many
// as the one program holds (KINST_PROG_MAX_INSNS), in order; *keyed gets
// their addresses, the others' split stays unknown.
std::string
branch_key(const std::vector<Decoded> &fns, std::set<uint64_t> *keyed)
{
	std::string e;
	for (const auto &d : fns)
		for (const auto &in : d.insns) {
			std::string t = in.unreachable ? "" : cover_a64_taken_expr(in);
			if (t.empty())
				continue;
			std::string term = "((pc == " + hex(in.addr) + ") << " + t + ")";
			std::string next = e.empty() ? term : e + " | " + term;
			try {
				cover_program(false, next);
			} catch (const Error &) {
				return e;	// over the program's limits
			}
			e = next;
			keyed->insert(in.addr);
		}
	return e;
}

// Returns the entry size AGG_READ uses.
uint32_t
setup(Session &dev, uint32_t slots)
{
	struct kinst_agg_setup su;
	memset(&su, 0, sizeof(su));
	su.kind = KINST_AGG_COUNT;
	su.flags = KINST_AGGF_PROBE;
	su.nslots = slots;
	dev.agg_setup(su);
	return su.entry_size;
}

// The run's counters; returns the number of CPUs.
uint32_t
stats(Session &dev, CoverRun &r)
{
	std::vector<struct kinst_agg_cpu_stats> as = dev.agg_stats();
	for (const auto &a : as) {
		r.aggregated += a.aggregated;
		r.overflow += a.overflow;
		r.nested += a.nested;
	}
	for (const auto &c : dev.stats())
		r.hits += c.hits;
	return (uint32_t)as.size();
}

AggMap
read_counts(Session &dev, uint32_t ncpus, uint32_t slots, uint32_t esize)
{
	AggMap m;
	std::vector<uint8_t> buf((size_t)slots * esize);
	for (uint32_t c = 0; c < ncpus; c++) {
		uint32_t n = dev.agg_read(c, buf.data(), slots);
		agg_merge(m, buf.data(), std::min(n, slots), esize, 0);
	}
	return m;
}

std::vector<Spec>
cover_specs(const CoverOptions &o, const std::vector<std::string> &command)
{
	if (o.specs.empty())
		throw Error(Exit::usage, "cover: give at least one function");
	if (!std::isfinite(o.duration))
		throw Error(Exit::usage, "--duration must be a finite number");
	if (o.duration > 0 && !command.empty())
		throw Error(Exit::usage, "cover: --duration and -- COMMAND exclude each other");
	std::vector<Spec> specs;
	for (const auto &s : o.specs) {
		Spec sp = parse_spec(s);
		if (sp.is_address || sp.has_offset)
			throw Error(Exit::usage, "cover: " + s + ": name a whole function "
			    "(FUNC or MODULE:FUNC), not an instruction");
		specs.push_back(sp);
	}
	return specs;
}

// The plan (planner.h): every instruction of each function as the symbols
// resolved it, all with the one cover program (key: flags, %rcx's class).
void
cover_plan(const std::vector<Decoded> &fns, bool rcx, const std::string &k1, Plan &plan)
{
	std::vector<Spec> specs;
	for (const auto &d : fns) {
		Spec sp = d.spec;
		sp.module = d.module;
		sp.function = d.fn->name;
		specs.push_back(sp);
	}
	PlanRequest req;
	req.resolved = &specs;
	req.flags = KINST_ARM_AGG;
	req.program = [rcx, k1](const TypeEnv *, const std::string &) {
		return cover_program(rcx, k1);
	};
	req.what = "cover";
	make_plan(req, plan);
}

// Arms the plan, then counts until Ctrl-C, the duration or the command's
// end; disarmed on return.  The probes, by id.
std::map<uint32_t, ProbeDesc>
count(Session &dev, Plan &plan, Disassembler &dis, const CoverOptions &o,
    const std::vector<std::string> &command, CoverRun &run)
{
	uint64_t armed = arm_plan(dev, plan, true).armed;
	std::map<uint32_t, ProbeDesc> probes = dev.probes(dis);
	Workload w(command, o.duration);
	if (!command.empty()) {
		fprintf(stderr, "kinstctl: covering %" PRIu64 " instructions while %s runs\n",
		    armed, command[0].c_str());
		w.start();
		run.workload = "while running:";
		for (const auto &a : command)
			run.workload += " " + a;
	} else {
		fprintf(stderr, "kinstctl: covering %" PRIu64 " instructions; Ctrl-C to stop\n",
		    armed);
		run.workload = o.duration > 0 ? "for " + std::to_string(o.duration) + " s" :
		    "until interrupted";
	}
	w.wait();
	dev.disarm_all();
	w.finish();
	return probes;
}

// The functions' instructions with the counts of their probes' keys.
std::vector<CoverFunction>
build(const std::vector<Decoded> &fns, const std::map<uint32_t, ProbeDesc> &probes,
    const AggMap &m, bool rcx, const std::set<uint64_t> &keyed)
{
	// Per address: the probe's keys.
	std::map<uint64_t, uint32_t> probe_at;
	for (const auto &p : probes)
		probe_at[p.second.addr] = p.first;
	std::map<uint32_t, std::vector<CoverKeyCount>> keys;
	for (const auto &e : m)
		keys[e.first.probe_id].push_back(CoverKeyCount{e.first.k0, e.first.k1,
		    e.second.count});
	std::vector<CoverFunction> out;
	for (const auto &d : fns) {
		std::vector<CoverInput> in(d.insns.size());
		for (size_t i = 0; i < d.insns.size(); i++) {
			in[i].insn = &d.insns[i];
			in[i].text = d.texts[i];
			in[i].target = d.targets[i];
			auto it = probe_at.find(d.insns[i].addr);
			in[i].armed = it != probe_at.end();
			in[i].branch_keyed = keyed.count(d.insns[i].addr) != 0;
			if (in[i].armed)
				in[i].keys = keys[it->second];
		}
		out.push_back(cover_build(d.module, d.fn->name, d.fn->addr, d.fn->size, in, rcx));
	}
	return out;
}

// Source lines from the functions' DWARF (debuginfo.cc), when found:
// DebugInfo says once per module what it could not find.
void
add_source_lines(SymbolTable &syms, const DebugOptions &dbg, const std::vector<Decoded> &fns,
    std::vector<CoverFunction> &out, CoverRun &run)
{
	{
		DebugInfo di(syms, dbg);
		for (size_t i = 0; i < out.size() && i < fns.size(); i++)
			for (auto &c : out[i].insns) {
				SrcLoc loc = di.where(fns[i].mi, *fns[i].fn,
				    (uint32_t)(c.addr - fns[i].fn->addr));
				if (loc.known && loc.line > 0) {
					c.line.file = loc.file;
					c.line.line = (int)loc.line;
				}
			}
	}
	bool lines = false;
	for (const auto &f : out)
		for (const auto &c : f.insns)
			lines = lines || c.line.line > 0;
	if (!lines)
		run.source_note = cover_line_info_missing();
}

void
print_cover(const CoverOptions &o, const std::vector<CoverFunction> &out, const CoverRun &run,
    HtmlFile &html)
{
	Writer wr(stdout);
	Style st = Style::detect(stdout, o.out.no_color || o.out.json);
	for (const auto &f : out) {
		if (o.out.json) {
			for (const auto &j : cover_json(f, run))
				wr.line(json_line(j));
		} else {
			wr.put(cover_text(f, st));
			wr.line("");
		}
	}
	if (o.out.json) {
		nlohmann::json j;
		j["schema"] = KINST_JSON_SCHEMA;
		j["type"] = "summary";
		j["hits"] = run.hits;
		j["aggregated"] = run.aggregated;
		j["overflow"] = run.overflow;
		j["nested"] = run.nested;
		j["exact"] = run.exact();
		wr.line(json_line(j));
	}
	wr.flush();
	if (!o.html.empty())
		html.write(cover_html(out, run));
	if (!run.source_note.empty())
		fprintf(stderr, "kinstctl: %s\n", run.source_note.c_str());
	fprintf(stderr, "kinstctl: %" PRIu64 " hits, %" PRIu64 " counted, %" PRIu64
	    " overflowed (table full), %" PRIu64 " nested (not counted)\n", run.hits,
	    run.aggregated, run.overflow, run.nested);
	if (!run.exact())
		fprintf(stderr, "kinstctl: WARNING: counts are not exact: %" PRIu64
		    " hits overflowed (raise --slots), %" PRIu64 " were nested\n",
		    run.overflow, run.nested);
}

int
run_cover(const CoverOptions &o, const std::vector<std::string> &command)
{
	std::vector<Spec> specs = cover_specs(o, command);
	// The HTML file can be written: known before anything is armed.
	HtmlFile html(o.html);
	uint32_t slots = o.slots ? (uint32_t)o.slots : 16384;

	SymbolTable syms;
	load_symbols(SourceOptions(), syms);
	Disassembler dis(o.out.syn());
	std::vector<Decoded> fns;
	bool rcx = false;
	for (const auto &sp : specs) {
		fns.push_back(decode(syms, sp, dis));
		rcx = rcx || has_loop(fns.back());
	}

	std::set<uint64_t> keyed;
	std::string k1 = regfile.a64 ? branch_key(fns, &keyed) : "";
	Plan plan;
	cover_plan(fns, rcx, k1, plan);

	Session dev = Session::open("cover");
	dev.require(Feature::agg, "cover");
	dev.filter("cover", -1, -1);
	uint32_t esize = setup(dev, slots);
	load_programs(dev, plan);

	SignalGuard sg;
	stop_before_arming("cover");
	CoverRun run;
	std::map<uint32_t, ProbeDesc> probes = count(dev, plan, dis, o, command, run);
	uint32_t ncpus = stats(dev, run);
	AggMap m = read_counts(dev, ncpus, slots, esize);
	std::vector<CoverFunction> out = build(fns, probes, m, rcx, keyed);
	add_source_lines(syms, o.dbg, fns, out, run);
	print_cover(o, out, run, html);
	return 0;
}

} // namespace

void
add_cover(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<CoverOptions>();
	CLI::App *sub = app.add_subcommand("cover",
	    "Exact execution count of every instruction of whole functions (counted in the "
	    "kernel), with basic blocks and taken/not-taken counts of every conditional branch.");
	sub->add_option("spec", o->specs, "functions: FUNC or MODULE:FUNC")->required();
	add_output_options(sub, o->out);
	sub->add_option("--duration", o->duration, "stop after this many seconds")
	    ->check(CLI::NonNegativeNumber);
	sub->add_option("--html", o->html,
	    "also write a self-contained HTML heat map of the counts to FILE")
	    ->type_name("FILE");
	sub->add_option("--slots", o->slots,
	    "keys per CPU the kernel preallocates (default 16384; a key is an instruction "
	    "and the flags it saw; hits of further keys make the counts inexact, with a "
	    "warning); " + slot_limit_help(KINST_AGG_COUNT, KINST_AGGF_PROBE))
	    ->check(CLI::Range(1, KINST_AGG_MAX_SLOTS));
	add_debug_options(sub, o->dbg);
	sub->footer("After the functions, -- COMMAND [ARGS...] runs COMMAND and stops when it "
	    "exits.  Without debug information there is no source column (said once).");
	sub->callback([o, &run]() {
		run = [o]() { return run_cover(*o, g_command); };
	});
}

} // namespace kinst
