// SPDX-License-Identifier: BSD-2-Clause
// kinstctl trace: a driver over the device session (session.h).  The
// module resolves functions and checks offsets itself (it never trusts us);
// here we only name things for the user, print hits and summarize.
#include "trace.h"

#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "btf_types.h"
#include "error.h"
#include "format.h"
#include "output.h"
#include "prog_compile.h"
#include "record.h"
#include "latency.h"
#include "returns.h"
#include "session.h"
#include "spec.h"
#include "trace_vars.h"

#include "abi.h"

namespace kinst {

namespace {

std::string
comm_of(const struct kinst_hit_record &h)
{
	return std::string(h.comm, strnlen(h.comm, sizeof(h.comm)));
}

// --args: the prototype whose arguments each hit prints.
struct ArgsView {
	const Types *btf = nullptr;
	Types::Func func;
};

void
print_hit(Writer &out, const Style &st, const TraceOptions &o,
    const std::map<uint32_t, ProbeDesc> &probes, const HitRecord &full, StackSymbolizer &sym,
    const std::vector<CaptureDesc> &capd, const ArgsView &av, const TraceVars &tv)
{
	const struct kinst_hit_record &h = full.hit;
	auto it = probes.find(h.probe_id);
	ProbeDesc unknown;
	const ProbeDesc &d = it != probes.end() ? it->second : unknown;
	// --var/--vars: the variables' captures follow the user's; only those
	// are shown as --mem/--str.
	const TraceVars::Plan *plan = tv.active() && it != probes.end() ?
	    tv.plan(d.function, d.offset) : nullptr;
	HitRecord user;
	const HitRecord *rp = &full;
	// --latency-from: its value capture follows the user's.
	bool has_since = false;
	uint64_t since = 0;
	if (!o.latency_from.empty())
		for (const auto &c : full.caps)
			if (c.value && c.index == capd.size() && c.bytes.size() == 8 &&
			    (c.flags & KINST_SECF_NOSTATE) == 0) {
				memcpy(&since, c.bytes.data(), 8);
				has_since = true;
			}
	if (tv.active() || !o.latency_from.empty()) {
		user = full;
		user.caps.clear();
		for (const auto &c : full.caps)
			if (c.index < capd.size())
				user.caps.push_back(c);
		rp = &user;
	}
	const HitRecord &r = *rp;
	std::string name = it != probes.end() ? d.name : "probe#" + std::to_string(h.probe_id);
	if (o.json) {
		nlohmann::json j;
		j["schema"] = KINST_JSON_SCHEMA;
		j["type"] = "hit";
		j["time_ns"] = h.timestamp_ns;
		j["cpu"] = h.cpu;
		j["pid"] = h.pid;
		j["tid"] = h.tid;
		j["comm"] = comm_of(h);
		j["probe_id"] = h.probe_id;
		j["probe"] = name;
		j["module"] = d.module;
		j["function"] = d.function;
		j["offset"] = d.offset;
		j["address"] = hex(h.addr);
		j["insn"] = d.insn;
		j["regs"] = json_regs(h.regs);
		if (!o.latency_from.empty())
			j["since_ns"] = has_since ? nlohmann::json(since) : nlohmann::json(nullptr);
		if (av.btf) {
			nlohmann::json a = nlohmann::json::object();
			for (const auto &v : read_args(*av.btf, av.func, h.regs.gpr)) {
				if (!v.known)
					a[v.name] = nullptr;
				else if (v.pointer)
					a[v.name] = hex(v.value);
				else if (v.sgn)
					a[v.name] = (int64_t)v.value;
				else
					a[v.name] = v.value;
			}
			j["args"] = a;
		}
		if (tv.prints())
			j["vars"] = plan ? tv.json(*plan, full) : nlohmann::json(nullptr);
		if (r.has_stack)
			json_stack(j, r, sym);
		json_captures(j, r, capd);
		out.line(json_line(j));
		return;
	}
	char head[160];
	snprintf(head, sizeof(head), "%llu.%06llu cpu%u %d/%d %-16s ",
	    (unsigned long long)(h.timestamp_ns / 1000000000ull),
	    (unsigned long long)(h.timestamp_ns % 1000000000ull / 1000),
	    h.cpu, h.pid, h.tid, comm_of(h).c_str());
	std::string line = head;
	line += st.paint("1", name) + "  " + d.insn;
	if (!o.latency_from.empty())
		line += has_since ? "  since=" + std::to_string(since) + "ns" : std::string("  since=-");
	if (av.btf)
		line += "  " + args_text(av.func.name, read_args(*av.btf, av.func, h.regs.gpr));
	if (o.regs_all)
		line += "\n    " + text_regs(h.regs, true);
	else
		line += "  " + text_regs(h.regs, false);
	if (plan && tv.prints())
		line += "\n    " + tv.text(*plan, full);
	if (r.has_stack)
		line += text_stack(r, sym);
	line += text_captures(r, capd);
	out.line(line);
}

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
void
print_summary(Session &dev, uint32_t prog_id, uint64_t printed, uint64_t filtered,
    const JumpCounts &jc, uint64_t hidden)
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
	fprintf(stderr, "kinstctl: %llu hits, %llu delivered, %llu dropped, %llu printed",
	    (unsigned long long)th, (unsigned long long)td, (unsigned long long)tdr,
	    (unsigned long long)printed);
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
}

} // namespace

int
run_trace(const TraceOptions &o)
{
	if (o.specs.empty())
		throw Error(Exit::usage, "trace: give at least one probe spec");
	std::vector<Spec> specs = probe_specs(o.specs, o.debug_files);
	// --if: compiled before the device is opened (a typo is a usage error).
	// --mem/--str: the captures, after it in the same program.
	// Types (BTF) only if --args or an expression needs them.
	TypeSource types(o.btf, specs[0].module);
	TypeEnv env;
	make_type_env(env, types, specs);
	DwarfReturnTypes rtypes(specs, o.debug_files);	// $retval without BTF/CTF
	env.ret_types = rtypes.types();
	ArgsView av = args_view(o, types, env);
	std::vector<CaptureDesc> capd;
	std::vector<Capture> caps;
	// --latency-from SPEC: a hidden probe there opens an activation; every
	// traced hit reads the time since (trace_program's value capture).
	Spec since_spec;
	std::vector<RawCapture> raw;
	if (!o.latency_from.empty()) {
		since_spec = one_instruction(o.latency_from, "trace: --latency-from", o.debug_files);
		raw.push_back(since_capture());
	}
	std::vector<struct kinst_pinsn> pred = trace_program(o, env, capd, caps, raw);
	std::string prog_what = capd.empty() ? "--if" : o.if_expr.empty() ?
	    "--mem/--str" : "--if/--mem/--str";
	// --var/--vars: every instruction planned on its own (trace_vars.h).
	TraceVars tv(o.var_names, o.vars, o.debug_files, uses_vars(o));
	if (tv.active()) {
		if (o.args)
			throw Error(Exit::usage, "trace: --args and --var/--vars: choose one");
		if (!o.latency_from.empty())
			throw Error(Exit::usage, "trace: --latency-from and $variables or "
			    "--var/--vars: not together yet");
		tv.prepare(specs, o.if_expr, caps, &env);
		prog_what = tv.prints() ? "--var/--vars" : "$variables";
		for (const auto &sp : specs)
			if (!sp.ret_if.empty())
				throw Error(Exit::usage, "trace: $variables at conditional return points (" +
				    sp.text + ") are not supported");
	}

	Session dev = Session::open("trace");
	if (o.args || env.used_args)
		dev.at_entry(specs, o.args ? "--args" : "argument names");
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
	uint32_t prog_id = pred.empty() || tv.active() ? 0 : dev.load_prog(pred, prog_what);
	// From here on SIGINT and SIGTERM stop the trace cleanly (disarm, drain,
	// summary), also while arming.  Installed before the first probe is
	// armed and so before "tracing" is printed: a signal sent on seeing
	// that line must find the handler.  (Installed after it, a SIGINT in
	// between was lost when the shell had started kinstctl in the
	// background, SIGINT ignored: the trace never stopped.)
	SignalGuard sg;

	// Arm everything first; a refused explicit offset is fatal, refused
	// instructions of a whole function are reported and skipped.  A stop
	// requested while arming arms nothing more.
	dev.no_optimize(o.no_optimize);
	uint32_t flags = o.stack ? KINST_ARM_STACK : 0;
	uint64_t armed = 0;
	if (!o.latency_from.empty()) {
		dev.ts_setup(1024, "trace --latency-from");
		dev.arm(since_spec, 0, dev.load_prog(latency_start_program(false, {},
		    latency_from_tag), "--latency-from"));
		fprintf(stderr, "kinstctl: note: %s: a hidden probe opens the time of "
		    "--latency-from (its hits are counted apart in the summary)\n",
		    spec_label(since_spec).c_str());
	}
	if (tv.active()) {
		armed = tv.arm(dev, specs, flags, prog_what, &prog_id);
	} else {
		// Conditional return points (FUNC:return, returns.h): a hit is
		// printed only when the jump is taken, through a program each.
		for (const auto &g : by_return_condition(specs)) {
			uint32_t id = prog_id;
			if (!g.first.empty()) {
				TraceOptions oc = o;
				oc.if_expr = with_return_condition(g.first, o.if_expr);
				std::vector<CaptureDesc> cd;
				std::vector<Capture> cs;
				id = dev.load_prog(trace_program(oc, env, cd, cs, raw),
				    "a conditional return's --if");
				if (prog_id == 0)
					prog_id = id;
			}
			armed += dev.arm_specs(g.second, flags, id, true).armed;
		}
	}
	if (armed == 0 && !g_stop)
		throw Error(Exit::refused, "nothing to trace: every instruction was refused");
	std::map<uint32_t, ProbeDesc> probes = dev.probes(dis);
	if (g_stop)
		fprintf(stderr, "kinstctl: stopped while arming (%llu probe%s armed)\n",
		    (unsigned long long)armed, armed == 1 ? "" : "s");
	else
		fprintf(stderr, "kinstctl: tracing %llu probe%s; Ctrl-C to stop\n",
		    (unsigned long long)armed, armed == 1 ? "" : "s");

	Writer out(stdout);
	bool flush_each = out.tty();
	uint64_t printed = 0, filtered = 0;
	RecordSink sink;
	sink.hit = [&](const HitRecord &r) {
		const struct kinst_hit_record &h = r.hit;
		if ((o.pid >= 0 && h.pid != o.pid) || (o.cpu >= 0 && (int)h.cpu != o.cpu)) {
			filtered++;
			return true;
		}
		print_hit(out, st, o, probes, r, sym, capd, av, tv);
		printed++;
		return !(o.count && printed >= o.count);	// the -n limit
	};
	sink.batch = [&]() {
		if (flush_each || o.json)
			out.flush();
	};
	bool done = dev.stream(o.duration, sink);

	// How many probes are jump-optimized, while they are still armed.
	JumpCounts jc = dev.jump_probes();
	// And the hits of hidden entry probes so far (one at a hidden probe
	// between this and the disarm below counts as not matching).
	uint64_t hidden = 0;
	if (tv.active() || !o.latency_from.empty()) {
		std::vector<struct kinst_probe_info> pis = dev.probe_infos();
		hidden = tv.active() ? tv.hidden_hits(pis) : hits_at(pis, { since_spec });
	}

	// Stopped by a signal or --duration: disarm (no new hits), then print
	// what the module had already delivered, so that printed + filtered ==
	// delivered.  At the -n limit the rest is deliberately left unread.
	if (!done) {
		dev.disarm_all();
		dev.drain(sink);
	}
	out.flush();
	print_summary(dev, prog_id, printed, filtered, jc, hidden);
	// Closing the device disarms every probe (Session's destructor).
	return 0;
}

} // namespace kinst
