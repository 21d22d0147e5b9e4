// SPDX-License-Identifier: BSD-2-Clause
// kinstctl trace: a driver over the device session (session.h).  The
// module resolves functions and checks offsets itself (it never trusts us);
// here we only name things for the user, print hits and summarize.
#include "commands/trace.h"

#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "debuginfo/btf_types.h"
#include "device/capture.h"
#include "output/perfetto.h"
#include "base/error.h"
#include "base/text.h"
#include "output/hitfmt.h"
#include "base/output.h"
#include "plan/prog_compile.h"
#include "base/record.h"
#include "output/record_text.h"
#include "symbols/stack_symbols.h"
#include "commands/latency.h"
#include "symbols/returns.h"
#include "device/plan_arm.h"
#include "device/session.h"
#include "base/spec.h"
#include "plan/planner.h"
#include "plan/trace_vars.h"

#include "base/abi.h"

namespace kinst {

namespace {

// --args: the prototype (the specs must all be one function).
ArgsView
args_view(const TraceOptions &o, TypeSource &types, const TypeEnv &env)
{
	ArgsView av;
	if (!o.args)
		return av;
	if (env.func.empty())
		throw Error(Exit::usage, "trace --args: the specs must all be one "
		    "function (its entry is traced)");
	av.btf = &types.get("--args");
	av.func = av.btf->func(env.func);
	return av;
}

// Whether --if, --mem or --str name a $variable.
bool
uses_vars(const TraceOptions &o)
{
	bool u = names_dwarf_variable(o.if_expr);
	for (const auto &m : o.mems)
		u = u || names_dwarf_variable(m);
	for (const auto &m : o.strs)
		u = u || names_dwarf_variable(m);
	return u;
}

// --if and the captures (--mem/--str) after it, in one program; capd: how
// the captures are printed.
std::vector<struct kinst_pinsn>
trace_program(const TraceOptions &o, const TypeEnv &env, std::vector<CaptureDesc> &capd,
    std::vector<Capture> &caps, const std::vector<RawCapture> &raw)
{
	for (const auto &m : o.mems)
		caps.push_back(parse_capture(m, false, &env));
	for (const auto &m : o.strs)
		caps.push_back(parse_capture(m, true, &env));
	for (const auto &c : caps)
		capd.push_back(CaptureDesc{c.expr, c.str, c.len});
	if (uses_vars(o))
		return {};	// compiled per instruction (trace_vars.h)
	return compile_trace_prog(o.if_expr, caps, &env, &raw);
}

// --latency-from: the value capture after the user's (rank capd.size()).
RawCapture
since_capture()
{
	RawCapture c;
	c.addr = latency_since_code();
	c.len = 8;
	c.value = true;
	return c;
}

// The summary: what the module counted, per CPU.  With --if, hits ==
// delivered + dropped + not matching, per CPU.  In the totals, the hits
// of hidden entry probes (trace_vars.h), which their programs filter, are
// told apart from the hits that did not match: hits == delivered +
// dropped + not matching + hidden.
nlohmann::json
print_summary(Session &dev, uint32_t prog_id, uint64_t printed, uint64_t filtered,
    const JumpCounts &jc, uint64_t hidden, const char *what_printed)
{
	std::vector<struct kinst_cpu_stats> cs = dev.stats();
	std::vector<struct kinst_prog_cpu_stats> ps;
	if (prog_id != 0 || hidden != 0)
		ps = dev.prog_stats();
	uint64_t th = 0, td = 0, tdr = 0, tnm = 0, tft = 0;
	std::string percpu;
	for (uint32_t c = 0; c < cs.size(); c++) {
		uint64_t nm = c < ps.size() ? ps[c].filtered : 0;
		th += cs[c].hits;
		td += cs[c].delivered;
		tdr += cs[c].dropped;
		tnm += nm;
		tft += c < ps.size() ? ps[c].faults : 0;
		if (cs[c].hits)
			percpu += "  cpu" + std::to_string(c) + ": hits " + std::to_string(cs[c].hits) +
			    ", delivered " + std::to_string(cs[c].delivered) + ", dropped " +
			    std::to_string(cs[c].dropped) +
			    (prog_id || hidden ? ", not matching " + std::to_string(nm) : "") + "\n";
	}
	hidden = std::min(hidden, tnm);
	tnm -= hidden;
	fprintf(stderr, "kinstctl: %llu hits, %llu delivered, %llu dropped, %llu %s",
	    (unsigned long long)th, (unsigned long long)td, (unsigned long long)tdr,
	    (unsigned long long)printed, what_printed);
	if (filtered)
		fprintf(stderr, ", %llu filtered out", (unsigned long long)filtered);
	if (prog_id != 0 || hidden != 0)
		fprintf(stderr, ", %llu not matching --if (%llu of them faulted)",
		    (unsigned long long)tnm, (unsigned long long)tft);
	if (hidden != 0)
		fprintf(stderr, ", %llu at hidden probes", (unsigned long long)hidden);
	fprintf(stderr, "\n%s", percpu.c_str());
	dev.print_jump_summary(jc);
	if (tdr)
		fprintf(stderr, "kinstctl: WARNING: %llu hits were dropped (the reader fell behind or hits nested)\n",
		    (unsigned long long)tdr);
	return {{"hits", th}, {"delivered", td}, {"dropped", tdr}, {"records", printed},
	    {"filtered", filtered}, {"not_matching", tnm}, {"hidden", hidden},
	    {"shared", jc.shared}};
}

// After drops: which knob would have avoided them.
void
drop_advice(const Session &dev, const TraceOptions &o, uint32_t ring, uint32_t ncpus)
{
	auto mib = [](uint64_t b) {
		char s[32];
		snprintf(s, sizeof(s), b >= (1u << 20) ? "%.0fM" : "%.0fK",
		    b >= (1u << 20) ? b / 1048576.0 : b / 1024.0);
		return std::string(s);
	};
	if (dev.backlog_was_full()) {
		fprintf(stderr, "kinstctl: the records waiting to be %s filled the backlog (--backlog %s): "
		    "raise --backlog%s\n", o.output.empty() ? "printed" : "written",
		    mib(dev.backlog()).c_str(),
		    o.output.empty() ? ", or record to a file (--output FILE, then kinstctl print)" : "");
		return;
	}
	if (ring != 0)
		fprintf(stderr, "kinstctl: the kernel's rings (%s per CPU, %u CPUs) filled while the "
		    "reader was off the CPU: raise --buffer-size (up to 64M)%s\n", mib(ring).c_str(),
		    ncpus, o.output.empty() ? ", or record to a file (--output FILE)" : "");
	else
		fprintf(stderr, "kinstctl: the kernel's rings filled: reload kinst with a larger "
		    "ring_size (this module has no --buffer-size)\n");
}

// --perfetto and --output take the records as they are: what they cannot
// carry is a usage error, before the device is opened.
static void
check_trace_outputs(const TraceOptions &o, bool vars, bool captures)
{
	if (!o.perfetto.empty()) {
		const char *no = !o.output.empty() ? "--output" : o.json ? "--json" :
		    o.args ? "--args" : vars ? "--var/--vars and $variables" :
		    o.stack ? "--stack" : captures ? "--mem/--str" : nullptr;
		if (no)
			throw Error(Exit::usage, std::string("trace --perfetto: ") + no +
			    " is not supported with it (the events carry the registers)");
	}
	if (!o.output.empty()) {
		const char *no = o.args ? "--args" : vars ? "--var/--vars and $variables" :
		    o.stack ? "--stack" : o.json ? "--json (give it to kinstctl print)" : nullptr;
		if (no)
			throw Error(Exit::usage, std::string("trace --output: ") + no +
			    " is not supported with a capture file");
	}
}

// What trace arms and how, decided before the device is opened (a typo,
// or a combination it cannot do, is a usage error then): the plan
// (planner.h: the specs, the types, the --if/--mem/--str program, the
// variables) with --latency-from's hidden probe, and what trace prints
// besides: the prototype (--args), the captures.  Its steps say what trace
// adds, in the order the messages it may print come in.
struct TracePlan {
	explicit TracePlan(const TraceOptions &o);
	TracePlan(const TracePlan &) = delete;
	TracePlan &operator=(const TracePlan &) = delete;
	void step(const TraceOptions &o, PlanStep s, Plan &p);

	ArgsView av;
	std::vector<CaptureDesc> capd;
	std::vector<Capture> caps;
	std::vector<RawCapture> raw;
	Plan plan;
};

void
TracePlan::step(const TraceOptions &o, PlanStep s, Plan &p)
{
	if (s == PlanStep::types) {
		av = args_view(o, *p.types, p.env);
		if (o.args)
			p.entry_why = "--args";
		// --latency-from SPEC: a hidden probe there opens an activation;
		// every traced hit reads the time since (trace_program's value
		// capture).
		if (!o.latency_from.empty()) {
			PlanGroup g;
			g.hidden = true;
			g.specs.push_back(one_instruction(o.latency_from, "trace: --latency-from",
			    o.debug_files));
			g.code = latency_start_program(false, {}, latency_from_tag);
			g.what = "--latency-from";
			g.note = "kinstctl: note: " + spec_label(g.specs[0]) + ": a hidden probe opens "
			    "the time of --latency-from (its hits are counted apart in the summary)\n";
			p.groups.push_back(g);
			raw.push_back(since_capture());
		}
	} else if (s == PlanStep::vars) {
		if (o.args)
			throw Error(Exit::usage, "trace: --args and --var/--vars: choose one");
		if (!o.latency_from.empty())
			throw Error(Exit::usage, "trace: --latency-from and $variables or "
			    "--var/--vars: not together yet");
	}
}

TracePlan::TracePlan(const TraceOptions &o)
{
	PlanRequest req;
	req.specs = o.specs;
	req.debug_files = o.debug_files;
	req.btf = o.btf;
	req.flags = o.stack ? KINST_ARM_STACK : 0;
	// --if, then --mem/--str: the captures, after it in the same program;
	// at a conditional return, with its condition.
	req.program = [this, &o](const TypeEnv *e, const std::string &cond) {
		if (cond.empty())
			return trace_program(o, *e, capd, caps, raw);
		TraceOptions oc = o;
		oc.if_expr = with_return_condition(cond, o.if_expr);
		std::vector<CaptureDesc> cd;
		std::vector<Capture> cs;
		return trace_program(oc, *e, cd, cs, raw);
	};
	req.cond_what = "a conditional return's --if";
	// --var/--vars: every instruction planned on its own (trace_vars.h).
	req.var_names = o.var_names;
	req.all_vars = o.vars;
	req.dollar = uses_vars(o);
	req.vars_if = o.if_expr;
	req.vars_caps = &caps;
	req.step = [this, &o](PlanStep s, Plan &p) { step(o, s, p); };
	make_plan(req, plan);
	plan.what = plan.vars() ? (plan.tv->prints() ? "--var/--vars" : "$variables") :
	    capd.empty() ? "--if" : o.if_expr.empty() ? "--mem/--str" : "--if/--mem/--str";
	if (plan.vars())
		for (const auto &sp : plan.specs)
			if (!sp.ret_if.empty())
				throw Error(Exit::usage, "trace: $variables at conditional return points (" +
				    sp.text + ") are not supported");
	check_trace_outputs(o, plan.vars(), !capd.empty());
}

// What every sink does with a hit: --pid/--cpu for a module that cannot
// filter (the kernel does), the counts, the -n limit.
struct HitGate {
	const TraceOptions &o;
	uint64_t printed = 0, filtered = 0;

	// False: filtered out (counted).
	bool keep(const struct kinst_hit_record &h)
	{
		if ((o.pid >= 0 && h.pid != o.pid) || (o.cpu >= 0 && (int)h.cpu != o.cpu)) {
			filtered++;
			return false;
		}
		return true;
	}
	// A hit written; false at the -n limit.
	bool more()
	{
		printed++;
		return !(o.count && printed >= o.count);
	}
};

// --perfetto: trace events instead of the text (sink.hit replaced).
static std::unique_ptr<PerfettoWriter>
perfetto_sink(const TraceOptions &o, HitGate &gate,
    const std::map<uint32_t, ProbeDesc> &probes, RecordSink &sink)
{
	if (o.perfetto.empty())
		return nullptr;
	auto pf = std::make_unique<PerfettoWriter>(o.perfetto);
	PerfettoWriter *w = pf.get();
	sink.hit = [&gate, &probes, w](const HitRecord &r) {
		if (!gate.keep(r.hit))
			return true;
		auto it = probes.find(r.hit.probe_id);
		w->hit(r, it != probes.end() ? &it->second : nullptr);
		return gate.more();
	};
	return pf;
}

// --output: the records as they came, unparsed (sink.raw).
static std::unique_ptr<CaptureWriter>
capture_sink(const TraceOptions &o, HitGate &gate, const std::vector<CaptureDesc> &capd,
    const std::map<uint32_t, ProbeDesc> &probes, RecordSink &sink)
{
	if (o.output.empty())
		return nullptr;
	CaptureHeader ch;
	ch.regs_all = o.regs_all;
	ch.regs_list = o.regs_list;
	ch.latency_from = !o.latency_from.empty();
	ch.capd = capd;
	ch.probes = probes;
	auto cap = std::make_unique<CaptureWriter>(o.output, ch);
	CaptureWriter *w = cap.get();
	sink.raw = [&gate, w](const uint8_t *p, size_t n) {
		struct kinst_hit_record h;
		memcpy(&h, p, sizeof(h));
		if (!gate.keep(h))
			return true;
		w->record(p, n);
		return gate.more();
	};
	return cap;
}

// After the stream: the jump counts and the hidden probes' hits while they
// are still armed; then, stopped by a signal or --duration, the disarm and
// what the module had delivered; the summary; the files finished.
static void
finish_trace(Session &dev, const TraceOptions &o, const Plan &plan, bool done,
    RecordSink &sink, Writer &out, const HitGate &gate, uint32_t prog_id,
    PerfettoWriter *pf, CaptureWriter *cap, uint32_t ring, uint32_t ncpus)
{
	// How many probes are jump-optimized, while they are still armed.
	JumpCounts jc = dev.jump_probes();
	// And the hits of hidden entry probes so far (one at a hidden probe
	// between this and the disarm below counts as not matching).
	uint64_t hidden = hidden_hits(dev, plan);

	// Stopped by a signal or --duration: disarm (no new hits), then print
	// what the module had already delivered, so that printed + filtered ==
	// delivered.  At the -n limit the rest is deliberately left unread.
	if (!done) {
		dev.disarm_all();
		dev.drain(sink);
	}
	out.flush();
	nlohmann::json sum = print_summary(dev, prog_id, gate.printed, gate.filtered, jc, hidden,
	    cap != nullptr || pf != nullptr ? "written" : "printed");
	if (sum["dropped"].get<uint64_t>() != 0)
		drop_advice(dev, o, ring, ncpus);
	if (pf) {
		pf->finish();
		fprintf(stderr, "kinstctl: %llu events written to %s (Trace Event Format: "
		    "ui.perfetto.dev, chrome://tracing)\n", (unsigned long long)pf->events(),
		    o.perfetto.c_str());
	}
	if (cap) {
		cap->finish(sum);
		fprintf(stderr, "kinstctl: %llu records written to %s (kinstctl print %s)\n",
		    (unsigned long long)cap->records(), o.output.c_str(), o.output.c_str());
	}
}

} // namespace

int
run_trace(const TraceOptions &o)
{
	if (o.specs.empty())
		throw Error(Exit::usage, "trace: give at least one probe spec");
	TracePlan tp(o);
	Plan &plan = tp.plan;
	TraceVars &tv = *plan.tv;
	const std::vector<CaptureDesc> &capd = tp.capd;

	Session dev = Session::open("trace");
	uint32_t ncpus = 0;
	uint32_t ring = dev.ring_size(o.buffer_size, "trace", &ncpus);
	dev.set_backlog((size_t)o.backlog);
	place_at_entry(dev, plan);
	if (o.stack)
		dev.require(Feature::stack, "trace --stack");
	if (!capd.empty())
		dev.require(Feature::mem_capture, "trace --mem/--str");
	if (tv.active())
		dev.require(Feature::mem_capture, "trace --var/--vars");
	StackSymbolizer sym;
	if (o.stack)
		sym.load();	// before the first hit: not while the traced code runs
	Disassembler dis(o.syntax);
	Style st = Style::detect(stdout, o.no_color);

	// Filters in the kernel, so that filtered hits cost no ring space.  The
	// check of each hit below stays, for a module without FILTER.
	if (o.pid > INT32_MAX)
		throw Error(Exit::usage, "trace: --pid " + std::to_string(o.pid) + " is not a process id");
	dev.filter("trace", o.pid >= 0 ? (int32_t)o.pid : -1, o.cpu);
	load_programs(dev, plan);
	// From here on SIGINT and SIGTERM stop the trace cleanly (disarm, drain,
	// summary), also while arming.  Installed before the first probe is
	// armed and so before "tracing" is printed: a signal sent on seeing
	// that line must find the handler.  (Installed after it, a SIGINT in
	// between was lost when the shell had started kinstctl in the
	// background, SIGINT ignored: the trace never stopped.)
	SignalGuard sg;
	stop_before_arming("trace");

	// Arm everything first; a refused explicit offset is fatal, refused
	// instructions of a whole function are reported and skipped.  A stop
	// requested while arming arms nothing more.
	dev.no_optimize(o.no_optimize);
	if (!o.latency_from.empty())
		dev.ts_setup(1024, "trace --latency-from");
	PlanArmed pa = arm_plan(dev, plan, true);
	uint64_t armed = pa.armed;
	uint32_t prog_id = pa.prog_id;
	if (armed == 0 && !g_stop)
		throw Error(Exit::refused, "nothing to trace: every instruction was refused");
	std::map<uint32_t, ProbeDesc> probes = dev.probes(dis);
	(void)dev.map_rings();	// before "tracing": stream() reads through them
	if (g_stop)
		fprintf(stderr, "kinstctl: stopped while arming (%llu probe%s armed)\n",
		    (unsigned long long)armed, armed == 1 ? "" : "s");
	else
		fprintf(stderr, "kinstctl: tracing %llu probe%s; Ctrl-C to stop\n",
		    (unsigned long long)armed, armed == 1 ? "" : "s");

	Writer out(stdout);
	bool flush_each = out.tty();
	HitFormat hf;
	hf.json = o.json;
	hf.regs_all = o.regs_all;
	hf.regs_list = o.regs_list;
	hf.latency_from = !o.latency_from.empty();
	hf.st = st;
	hf.capd = capd;
	hf.av = &tp.av;
	hf.tv = &tv;
	hf.sym = &sym;
	HitFormatter fmt(hf, probes);
	HitGate gate{o};
	RecordSink sink;
	sink.hit = [&](const HitRecord &r) {
		if (!gate.keep(r.hit))
			return true;
		fmt.format(r, out.buffer());
		out.commit();
		return gate.more();
	};
	std::unique_ptr<PerfettoWriter> pf = perfetto_sink(o, gate, probes, sink);
	std::unique_ptr<CaptureWriter> cap = capture_sink(o, gate, capd, probes, sink);
	sink.batch = [&]() {
		if (flush_each || o.json)
			out.flush();
	};
	bool done = dev.stream(o.duration, sink);

	finish_trace(dev, o, tp.plan, done, sink, out, gate, prog_id, pf.get(), cap.get(), ring, ncpus);
	// Closing the device disarms every probe (Session's destructor).
	return 0;
}

} // namespace kinst
