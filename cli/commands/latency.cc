// SPDX-License-Identifier: BSD-2-Clause
// kinstctl latency (latency.h).
#include "commands/latency.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "commands/agg.h"
#include "debuginfo/btf_types.h"
#include "base/error.h"
#include "base/live.h"
#include "base/regfile.h"
#include "base/text.h"
#include "base/output.h"
#include "output/perfetto.h"
#include "base/spill.h"
#include "plan/prog_compile.h"
#include "base/record.h"
#include "output/record_text.h"
#include "symbols/stack_symbols.h"
#include "symbols/returns.h"
#include "device/plan_arm.h"
#include "device/session.h"
#include "plan/planner.h"
#include "base/spec.h"
#include "plan/trace_vars.h"

namespace kinst {

namespace {

// The session's only activations are latency's: one tag serves.
constexpr uint64_t latency_tag = 0x6c6174;	// "lat"
constexpr uint32_t default_threads = 4096;

std::vector<struct kinst_pinsn>
frame_code(bool framed)
{
	return { framed ? make_pinsn(KINST_OP_REG, (uint8_t)regfile.sp) : make_pinsn(KINST_OP_IMM, 0, 0) };
}

// The code without its final RET (compile_expr()'s value, left on the stack).
std::vector<struct kinst_pinsn>
value_of(std::vector<struct kinst_pinsn> code)
{
	if (code.empty() || code.back().op != KINST_OP_RET)
		throw Error(Exit::usage, "internal: an expression's code does not end in RET");
	code.pop_back();
	return code;
}

} // namespace

const uint64_t latency_from_tag = 0x66726f6d;	// "from"

std::vector<struct kinst_pinsn>
latency_since_code()
{
	std::vector<struct kinst_pinsn> code = frame_code(false);
	code.push_back(make_pinsn(KINST_OP_TS_GET, KINST_TS_ELAPSED | KINST_TSF_SOFT,
	    latency_from_tag));
	return code;
}

Spec
one_instruction(const std::string &arg, const char *role,
    const std::vector<std::string> &debug_files)
{
	std::vector<Spec> v = probe_specs({ arg }, debug_files);
	if (v.size() != 1 || !v[0].has_offset)
		throw Error(Exit::usage, std::string(role) + " " + arg + " names " +
		    (v.size() == 1 ? std::string("every instruction of ") + v[0].function :
		    std::to_string(v.size()) + " instructions") + "; it must name one "
		    "(FUNC+OFFSET, an address, or a FILE:LINE of one instruction)");
	return v[0];
}

namespace {

// The EXPRs of the $entry(EXPR)s in e, in order, each once; *rest: e
// without them (what is evaluated at the end point itself).
std::vector<std::string>
entry_texts(const std::string &e, std::string *rest)
{
	std::vector<std::string> out;
	rest->clear();
	size_t i = 0;
	while (i < e.size()) {
		size_t k = e.find("$entry", i);
		if (k == std::string::npos) {
			*rest += e.substr(i);
			break;
		}
		size_t j = k + 6;
		while (j < e.size() && e[j] == ' ')
			j++;
		bool ident_end = k + 6 >= e.size() || !(isalnum((unsigned char)e[k + 6]) || e[k + 6] == '_');
		if (!ident_end || j >= e.size() || e[j] != '(') {
			*rest += e.substr(i, j - i);
			i = j;
			continue;
		}
		int d = 0;
		size_t b = j + 1, q = j;
		for (; q < e.size(); q++) {
			if (e[q] == '(')
				d++;
			else if (e[q] == ')' && --d == 0)
				break;
		}
		if (q >= e.size())
			throw Error(Exit::usage, "$entry(: expected ')' in '" + e + "'");
		std::string t = e.substr(b, q - b);
		if (std::find(out.begin(), out.end(), t) == out.end())
			out.push_back(t);
		*rest += e.substr(i, k - i) + "0";
		i = q + 1;
	}
	return out;
}

struct Points {
	bool framed = false;
	Spec start;
	std::vector<Spec> ends;
};

Points
plan_specs(const LatencyOptions &o)
{
	Points p;
	if (o.specs.size() == 1) {
		std::vector<Spec> f = probe_specs(o.specs, o.debug_files);
		if (f.size() != 1 || f[0].has_offset || f[0].kind != SpecKind::symbol ||
		    f[0].function.empty())
			throw Error(Exit::usage, "latency: " + o.specs[0] + ": give a function "
			    "(FUNC or MODULE:FUNC), or two instructions FROM TO");
		p.framed = true;
		p.start = f[0];
		p.ends = probe_specs({ o.specs[0] + ":return" }, o.debug_files);
		return p;
	}
	if (o.specs.size() != 2)
		throw Error(Exit::usage, "latency: give FUNC, or FROM TO (two instructions)");
	p.start = one_instruction(o.specs[0], "latency: FROM", o.debug_files);
	p.ends.push_back(one_instruction(o.specs[1], "latency: TO", o.debug_files));
	if (p.start.function == p.ends[0].function && p.start.offset == p.ends[0].offset &&
	    p.start.module == p.ends[0].module)
		throw Error(Exit::usage, "latency: FROM and TO are the same instruction (" +
		    spec_label(p.start) + ")");
	return p;
}

struct Summary {
	uint64_t samples = 0, starts = 0, ends = 0, missed = 0, unclosed = 0;
	uint64_t other = 0;	// ends neither timed nor missed: --if false, a jCC not taken
	uint64_t faults = 0, overflow = 0, nested = 0, nothread = 0, busy = 0;
	bool local_clock = false;	// KINST_TS_LOCAL_CLOCK in force
	int clock_stable = -1;		// local: live_local_clock_stable()
};

void
print_latency_summary(Writer &out, const LatencyOptions &o, const Summary &s,
    const std::string &other_why)
{
	if (o.json) {
		nlohmann::json j;
		j["schema"] = KINST_JSON_SCHEMA;
		j["type"] = "summary";
		j["samples"] = s.samples;
		j["starts"] = s.starts;
		j["ends"] = s.ends;
		j["ends_without_start"] = s.missed;
		j["starts_never_closed"] = s.unclosed;
		j["filtered"] = s.other;
		j["faults"] = s.faults;
		j["overflow"] = s.overflow;
		j["nested"] = s.nested;
		j["nothread"] = s.nothread;
		j["busy"] = s.busy;
		j["clock"] = s.local_clock ? "local" : "mono";
		if (s.local_clock && s.clock_stable >= 0)
			j["clock_stable"] = s.clock_stable == 1;
		out.line(json_line(j));
	}
	out.flush();
	fprintf(stderr, "kinstctl: %" PRIu64 " sample%s; %" PRIu64 " starts, %" PRIu64
	    " ends (%" PRIu64 " without a start seen, %" PRIu64 " %s), %" PRIu64
	    " starts never closed", s.samples, s.samples == 1 ? "" : "s", s.starts, s.ends,
	    s.missed, s.other, other_why.c_str(), s.unclosed);
	if (s.faults)
		fprintf(stderr, ", %" PRIu64 " faulted", s.faults);
	if (s.overflow)
		fprintf(stderr, ", %" PRIu64 " overflowed (table full: raise --slots)", s.overflow);
	if (s.nested)
		fprintf(stderr, ", %" PRIu64 " nested (not timed)", s.nested);
	if (s.nothread || s.busy)
		fprintf(stderr, ", %" PRIu64 " found no thread slot (raise --threads), %" PRIu64
		    " busy", s.nothread, s.busy);
	fprintf(stderr, "\n");
}

} // namespace

std::vector<struct kinst_pinsn>
latency_start_program(bool framed, const std::vector<std::vector<struct kinst_pinsn>> &saved,
    uint64_t tag)
{
	if (saved.size() > KINST_TS_VALS)
		throw Error(Exit::usage, "latency: at most " + std::to_string(KINST_TS_VALS) +
		    " different $entry() values");
	std::vector<struct kinst_pinsn> code = frame_code(framed);
	for (const auto &v : saved)
		code.insert(code.end(), v.begin(), v.end());
	code.push_back(make_pinsn(KINST_OP_TS_PUSH, (uint8_t)saved.size(), tag));
	code.push_back(make_pinsn(KINST_OP_IMM, 0, 0));
	code.push_back(make_pinsn(KINST_OP_RET));
	if (code.size() > KINST_PROG_MAX_INSNS)
		throw Error(Exit::usage, "latency: the $entry() values are too long together (" +
		    std::to_string(code.size()) + " instructions, at most " +
		    std::to_string(KINST_PROG_MAX_INSNS) + ")");
	return code;
}

std::vector<struct kinst_pinsn>
latency_end_program(bool framed, uint64_t tag, const std::string &cond,
    const std::vector<struct kinst_pinsn> &body)
{
	std::vector<struct kinst_pinsn> code;
	size_t jz = 0;
	if (!cond.empty()) {
		code = value_of(compile_expr(cond, "a return's condition"));
		jz = code.size();
		code.push_back(make_pinsn(KINST_OP_JZ));
	}
	// body's value (--if, or true) stays on the stack while the close
	// reads the time: its jumps to its RET land on the frame's push.
	std::vector<struct kinst_pinsn> b = body.empty() ?
	    std::vector<struct kinst_pinsn>{ make_pinsn(KINST_OP_IMM, 0, 1), make_pinsn(KINST_OP_RET) } :
	    body;
	b = value_of(b);
	code.insert(code.end(), b.begin(), b.end());
	for (const auto &in : frame_code(framed))
		code.push_back(in);
	code.push_back(make_pinsn(KINST_OP_TS_GET, KINST_TS_ELAPSED | KINST_TSF_CLOSE, tag));
	code.push_back(make_pinsn(KINST_OP_VALUE));
	code.push_back(make_pinsn(KINST_OP_RET));
	if (!cond.empty()) {
		code[jz].off = (int16_t)(code.size() - jz - 1);
		code.push_back(make_pinsn(KINST_OP_IMM, 0, 0));
		code.push_back(make_pinsn(KINST_OP_RET));
	}
	if (code.size() > KINST_PROG_MAX_INSNS)
		throw Error(Exit::usage, "latency: --by and --if together are too long (" +
		    std::to_string(code.size()) + " instructions, at most " +
		    std::to_string(KINST_PROG_MAX_INSNS) + ")");
	return code;
}

namespace {

// One latency run, step by step (run()): which $entry() values and
// $variables the expressions name; the start's program (the $entry()
// values compiled there); the end points' programs; arming; the report.
class LatencyRun {
public:
	explicit LatencyRun(const LatencyOptions &o)
	    : o_(o), p_(plan_specs(o)), start_types_(o.btf, p_.start.module),
	      tv_start_({}, false, o.debug_files, true, nullptr, KINST_PROG_MAX - 1)
	{
	}
	int run();

private:
	void scan_expressions();
	void open_for_planning();
	void compile_start();
	void compile_ends();
	void add_start(Plan &p);
	std::vector<struct kinst_pinsn> end_program(const TypeEnv *e, const std::string &cond);
	void plan_step(PlanStep s, Plan &p);
	void arm();
	void stream_samples(Workload &w);
	void sample(const HitRecord &r);
	void write_stack_samples(StackSymbolizer &sym);
	void report(const std::vector<struct kinst_probe_info> &pis, const JumpCounts &jc);

	const LatencyOptions &o_;
	Points p_;
	// The EXPRs of $entry(EXPR), and whether they (start) or the rest of
	// --by/--if (end) name $variables: planned per instruction then.
	std::vector<std::string> texts_;
	bool start_dwarf_ = false, end_dwarf_ = false;
	std::optional<Session> dev_;
	TypeSource start_types_;
	TypeEnv start_env_;
	// The start's saved values: code, text, signedness.
	std::vector<std::vector<struct kinst_pinsn>> saved_;
	std::vector<std::string> saved_text_;
	std::vector<bool> saved_sgn_;
	std::vector<struct kinst_pinsn> start_code_;
	TraceVars tv_start_;
	// The end points' plan (planner.h), the start a hidden group of it.
	Plan plan_;
	AggOptions ao_;
	bool by_signed_ = false;
	bool local_clock_ = false;	// the table's clock, as the module said
	int clock_stable_ = -1;		// with it, live_local_clock_stable()
	std::map<std::string, std::vector<Spec>> groups_;	// by return condition
	AggState s_;
	std::unique_ptr<HtmlFile> html_;
	// --perfetto: the file, the spans' name, the end points' names by
	// probe id, and (--by stack) the samples kept on disk until the stacks
	// are read at the end (64 bytes each: no memory grows with the run),
	// with the CPUs they came from.
	std::unique_ptr<PerfettoWriter> pf_;
	std::string span_name_;
	std::map<uint32_t, std::string> end_names_;
	struct StackSample {
		uint64_t end_ns, dur_ns, hash;
		int32_t pid, tid;
		uint32_t cpu, probe_id;
		char comm[KINST_COMM_LEN];
		bool overflow;
	};
	static_assert(sizeof(StackSample) == 64, "kinstctl(8) says 64 bytes a sample");
	std::unique_ptr<Spill<StackSample>> stack_samples_;
	std::set<uint32_t> stack_cpus_;
};

const char *const args_at_end = "latency: --by/--if are evaluated at the end point, "
    "where the arguments are no longer in their registers; save one at the start "
    "with $entry(NAME)";

void
LatencyRun::scan_expressions()
{
	std::string by_rest, if_rest;
	texts_ = entry_texts(o_.by, &by_rest);
	for (const auto &t : entry_texts(o_.if_expr, &if_rest))
		if (std::find(texts_.begin(), texts_.end(), t) == texts_.end())
			texts_.push_back(t);
	for (const auto &t : texts_)
		start_dwarf_ = start_dwarf_ || names_dwarf_variable(t);
	end_dwarf_ = names_dwarf_variable(by_rest) || names_dwarf_variable(if_rest);
}

// Planning $variables reads the live text: the device first, and the
// start at its final instruction.
void
LatencyRun::open_for_planning()
{
	if (!start_dwarf_ && !end_dwarf_)
		return;
	dev_.emplace(Session::open("latency"));
	if (p_.framed) {
		std::vector<Spec> v(1, p_.start);
		dev_->at_entry(v, "latency");
		p_.start = v[0];
	}
}

// $entry(EXPR): compiled at the start point, saved in its activation; with
// $variables, planned at the start instruction now, else compiled as the
// end's expressions name them (env_.entry).
void
LatencyRun::compile_start()
{
	make_type_env(start_env_, start_types_, { p_.start });
	if (start_dwarf_) {
		if (texts_.size() > KINST_TS_VALS)
			throw Error(Exit::usage, "latency: at most " + std::to_string(KINST_TS_VALS) +
			    " different $entry() values");
		std::vector<Spec> sv(1, p_.start);
		saved_sgn_.assign(texts_.size(), false);
		tv_start_.prepare(sv, "", {}, &start_env_, [this](const TypeEnv *e) {
			saved_.clear();
			for (size_t i = 0; i < texts_.size(); i++) {
				bool sg = false;
				saved_.push_back(value_of(compile_expr(texts_[i],
				    "$entry(" + texts_[i] + ")", e, &sg)));
				saved_sgn_[i] = sg;
			}
			return latency_start_program(p_.framed, saved_, latency_tag);
		});
		const TraceVars::Plan *sp = tv_start_.plan(p_.start);
		if (sp == nullptr || sp->code.empty() || !tv_start_.entry_probes().empty())
			throw Error(Exit::usage, "latency: the $entry() values cannot be computed at " +
			    spec_label(p_.start));
		start_code_ = sp->code;
		saved_text_ = texts_;
	}
}

// The end points' types (planner.h's step): $entry(EXPR) compiled at the
// start point, saved in its activation; with $variables, planned at the
// start instruction already (compile_start()), else compiled as the end's
// expressions name them (env.entry).  With $variables at the ends, no
// conditional return points.
void
LatencyRun::plan_step(PlanStep s, Plan &p)
{
	if (s == PlanStep::vars) {
		if (groups_.size() > 1 || !groups_.count(""))
			throw Error(Exit::usage, "latency: $variables at conditional return points "
			    "(" + p_.ends[0].text + ") are not supported");
		return;
	}
	if (s == PlanStep::programs) {
		add_start(p);
		return;
	}
	if (s != PlanStep::types)
		return;
	p.env.entry = [this](const std::string &e, bool *sgn) {
		for (size_t i = 0; i < saved_text_.size(); i++)
			if (saved_text_[i] == e) {
				if (start_dwarf_)
					*sgn = saved_sgn_[i];
				return (int)i;
			}
		if (start_dwarf_)
			throw Error(Exit::usage, "not planned at the start");
		if (saved_.size() >= KINST_TS_VALS)
			throw Error(Exit::usage, "at most " + std::to_string(KINST_TS_VALS) +
			    " different $entry() values");
		saved_.push_back(value_of(compile_expr(e, "$entry(" + e + ")", &start_env_, sgn)));
		saved_text_.push_back(e);
		return (int)saved_.size() - 1;
	};
	p.env.entry_frame = frame_code(p_.framed);
	p.env.entry_tag = latency_tag;
}

// An end point's program: --by/--if, then the close, for a return
// condition ("": none).
std::vector<struct kinst_pinsn>
LatencyRun::end_program(const TypeEnv *e, const std::string &cond)
{
	// Arguments are refused before the close is added to the body, or,
	// per instruction ($variables), after.
	std::vector<struct kinst_pinsn> body = agg_program(ao_, e, &by_signed_);
	if (e->used_args && !end_dwarf_)
		throw Error(Exit::usage, args_at_end);
	std::vector<struct kinst_pinsn> c = latency_end_program(p_.framed, latency_tag, cond, body);
	if (e->used_args)
		throw Error(Exit::usage, args_at_end);
	return c;
}

// The end points' programs: --by/--if, then the close; per return
// condition, or (with $variables) per instruction.  The start's program
// last: the ends' expressions decide its $entry() values.
void
LatencyRun::compile_ends()
{
	ao_.hist = true;
	ao_.by = o_.by;
	ao_.if_expr = o_.if_expr;
	ao_.linear = o_.linear;
	ao_.slots = o_.slots;
	ao_.json = o_.json;
	ao_.no_color = o_.no_color;
	ao_.folded = o_.folded;
	groups_ = by_return_condition(p_.ends);
	PlanRequest req;
	req.resolved = &p_.ends;
	req.debug_files = o_.debug_files;
	req.btf = o_.btf;
	req.flags = KINST_ARM_AGG;
	req.early = true;
	req.program = [this](const TypeEnv *e, const std::string &cond) {
		return end_program(e, cond);
	};
	req.what = "--by/--if";
	req.cond_what = "--by/--if at a conditional return";
	req.dollar = end_dwarf_;
	req.max_programs = KINST_PROG_MAX - 1;
	req.step = [this](PlanStep s, Plan &p) { plan_step(s, p); };
	make_plan(req, plan_);
	if (end_dwarf_) {
		for (const auto &e : p_.ends)
			if (plan_.tv->plan(e) == nullptr)
				throw Error(Exit::usage, "latency: --by/--if cannot be computed at " +
				    spec_label(e) + ", an end point (see the note above)");
		if (!plan_.tv->entry_probes().empty())
			throw Error(Exit::usage, "latency: a $variable in --by/--if is an entry value at "
			    "the end point (its register was reused): save it at the start with "
			    "$entry($NAME)");
	}
}

// The start (planner.h's last step): a hidden group, armed first, with the
// $entry() values the ends' programs named (with $variables, the program
// compile_start() planned).  Without $variables it moves to the function's
// entry when armed if it opens the frame or reads arguments; with them,
// open_for_planning() put it there already.
void
LatencyRun::add_start(Plan &p)
{
	if (!start_dwarf_)
		start_code_ = latency_start_program(p_.framed, saved_, latency_tag);
	PlanGroup start;
	start.hidden = true;
	start.specs.push_back(p_.start);
	start.code = start_code_;
	start.what = "latency's start";
	start.flags = KINST_ARM_AGG;
	start.early = true;
	if (!(start_dwarf_ || end_dwarf_) && (p_.framed || start_env_.used_args))
		start.entry_why = "latency";
	p.groups.insert(p.groups.begin(), start);
}

// The device's side: the start at the function's entry, the per-thread
// table, the histograms, the programs, then the probes (the start first).
void
LatencyRun::arm()
{
	if (!dev_)
		dev_.emplace(Session::open("latency"));
	Session &dev = *dev_;
	dev.require(Feature::agg, "latency");
	if (o_.by == "stack")
		dev.require(Feature::agg_stack, "latency --by stack");
	place_at_entry(dev, plan_);
	p_.start = plan_.groups.at(0).specs.at(0);	// add_start()'s, perhaps moved
	for (const auto &e : p_.ends)
		if (e.function == p_.start.function && e.offset == p_.start.offset &&
		    e.module == p_.start.module)
			throw Error(Exit::usage, "latency: " + spec_label(p_.start) + ": the entry "
			    "of " + p_.start.function + " is one of its return points");
	dev.filter("latency", -1, -1);
	local_clock_ = (dev.ts_setup(o_.threads ? o_.threads : default_threads, "latency",
	    o_.clock == "local" ? KINST_TS_LOCAL_CLOCK : 0) & KINST_TS_LOCAL_CLOCK) != 0;
	if (!o_.perfetto.empty()) {
		dev.require(Feature::agg_record, "latency --perfetto");
		(void)dev.ring_size(0, "latency --perfetto");
		ao_.record = true;
	}
	s_.latency = true;
	s_.by_signed = by_signed_;
	setup_agg(dev, s_, ao_);
	load_programs(dev, plan_);
	dev.no_optimize(o_.no_optimize);
	PlanArmed pa = arm_plan(dev, plan_, false);
	s_.prog_id = pa.prog_id;
	uint64_t armed = pa.armed;
	if (armed == 0)
		throw Error(Exit::refused, "latency: every end point was refused");
	fprintf(stderr, "kinstctl: timing %s%s%s (%" PRIu64 " end point%s%s)%s\n",
	    spec_label(p_.start).c_str(), p_.framed ? " to its returns" : " to ",
	    p_.framed ? "" : spec_label(p_.ends[0]).c_str(), armed, armed == 1 ? "" : "s",
	    local_clock_ ? "; the per-CPU clock" : "",
	    o_.command.empty() ? "; Ctrl-C to stop" : (" while " + o_.command[0] + " runs").c_str());
	if (local_clock_)
		clock_stable_ = live_local_clock_stable();
	if (local_clock_ && clock_stable_ == 0)
		fprintf(stderr, "kinstctl: note: this kernel's scheduler clock is "
		    "unstable (sched_clock_stable() is 0), so --clock local's durations are "
		    "right only to a tick or two, more where ticks come late (it is the "
		    "CPU's raw clock, the TSC, kept within a tick of the global clock); "
		    "--clock mono reads the global clock\n");
}

// --perfetto: one sample record (KINST_SEC_AGG: the key and the time
// since the start) as a span on its thread's track, ending at the record's
// time; --by stack's wait for the stack tables (write_stack_samples()).
void
LatencyRun::sample(const HitRecord &r)
{
	if (!r.has_agg)
		return;		// not a sample: no other probe of this session records
	const struct kinst_hit_record &h = r.hit;
	if (o_.by == "stack") {
		StackSample ss;
		ss.end_ns = h.timestamp_ns;
		ss.dur_ns = r.agg.value;
		ss.hash = r.agg.key[1];
		ss.pid = h.pid;
		ss.tid = h.tid;
		ss.cpu = h.cpu;
		ss.probe_id = h.probe_id;
		memcpy(ss.comm, h.comm, sizeof(ss.comm));
		ss.overflow = r.agg_overflow;
		stack_samples_->push(ss);
		stack_cpus_.insert(ss.cpu);
		return;
	}
	SpanArgs a;
	a.cpu = h.cpu;
	a.latency_ns = r.agg.value;
	auto it = end_names_.find(h.probe_id);
	std::string addr;
	if (it != end_names_.end()) {
		a.end = it->second;
	} else {
		addr = hex(h.addr);
		a.end = addr;
	}
	std::string by;
	if (!o_.by.empty()) {
		AggKey k;
		k.k0 = r.agg.key[0];
		k.k1 = r.agg.key[1];
		by = key_text(o_.by, k, by_signed_);
		a.by = &by;
	}
	a.overflow = r.agg_overflow;	// not in the histograms: --slots
	pf_->span(h, r.agg.value, span_name_, a);
}

// The samples --by stack kept: each one's stack from its CPU's table (read
// after the run, as the histograms are), symbolized.
void
LatencyRun::write_stack_samples(StackSymbolizer &sym)
{
	if (!stack_samples_ || stack_samples_->empty())
		return;
	std::map<std::pair<uint32_t, uint64_t>, std::vector<std::string>> frames;
	std::set<std::pair<uint32_t, uint64_t>> truncated;
	std::vector<struct kinst_agg_stack> stk(s_.su.nstacks);
	for (uint32_t c : stack_cpus_) {
		uint32_t n = std::min(dev_->agg_stacks(c, stk.data(), s_.su.nstacks), s_.su.nstacks);
		for (uint32_t i = 0; i < n; i++) {
			const struct kinst_agg_stack &st = stk[i];
			std::vector<std::string> &f = frames[{ c, st.hash }];
			uint32_t nf = std::min<uint32_t>(st.nframes, KINST_STACK_MAX);
			for (uint32_t j = 0; j < nf; j++)
				f.push_back(text_frame(sym.frame(st.frames[j], j)));
			if (st.flags & KINST_SECF_TRUNCATED)
				truncated.insert({ c, st.hash });
		}
	}
	stack_samples_->drain([&](const StackSample &ss) {
		struct kinst_hit_record h;
		memset(&h, 0, sizeof(h));
		h.timestamp_ns = ss.end_ns;
		h.pid = ss.pid;
		h.tid = ss.tid;
		h.cpu = ss.cpu;
		memcpy(h.comm, ss.comm, sizeof(h.comm));
		SpanArgs a;
		a.cpu = ss.cpu;
		a.latency_ns = ss.dur_ns;
		auto it = end_names_.find(ss.probe_id);
		a.end = it != end_names_.end() ? std::string_view(it->second) : std::string_view("?");
		auto f = frames.find({ ss.cpu, ss.hash });
		if (ss.overflow || f == frames.end()) {
			a.stack_unknown = true;	// the table was full
		} else {
			a.stack = &f->second;
			a.stack_truncated = truncated.count({ ss.cpu, ss.hash }) != 0;
		}
		a.overflow = ss.overflow;
		pf_->span(h, ss.dur_ns, span_name_, a);
	});
}

// --perfetto: the run, reading the sample records as they come, until the
// workload's end (the command's exit, --duration) or a signal.
void
LatencyRun::stream_samples(Workload &w)
{
	for (const auto &pi : dev_->probe_infos()) {
		std::string mod(pi.module, strnlen(pi.module, sizeof(pi.module)));
		std::string fn(pi.function, strnlen(pi.function, sizeof(pi.function)));
		end_names_[pi.probe_id] = mod + ":" + fn + "+" + hex(pi.offset);
	}
	RecordSink sink;
	sink.hit = [this](const HitRecord &r) {
		sample(r);
		return true;
	};
	sink.batch = []() {};
	sink.stop = [&w]() { return w.done(); };
	(void)dev_->stream(0, sink);
}

void
LatencyRun::report(const std::vector<struct kinst_probe_info> &pis, const JumpCounts &jc)
{
	Session &dev = *dev_;
	AggMap m = read_all(dev, s_, totals(dev, s_).ncpus);
	Totals t = totals(dev, s_);
	struct kinst_ts_stats ts = dev.ts_stats();
	Summary sm;
	sm.samples = t.aggregated;
	sm.starts = hits_at(pis, { p_.start });
	sm.ends = hits_at(pis, p_.ends);
	sm.missed = ts.missed;
	sm.unclosed = ts.pushed > ts.closed ? ts.pushed - ts.closed : 0;
	sm.faults = t.faults;
	sm.overflow = t.overflow;
	sm.nested = t.nested;
	sm.nothread = ts.nothread;
	sm.busy = ts.busy;
	sm.local_clock = local_clock_;
	sm.clock_stable = clock_stable_;
	uint64_t accounted = sm.samples + sm.missed + sm.overflow + sm.nested;
	sm.other = sm.ends > accounted ? sm.ends - accounted : 0;
	std::string why = o_.if_expr.empty() ? "" : "not matching --if";
	if (groups_.size() > 1 || !groups_.count(""))
		why += why.empty() ? "a conditional return not taken" :
		    " or a conditional return not taken";
	if (why.empty())
		why = "not timed";
	Writer out(stdout);
	std::string page;
	print_hist(out, ao_, s_, m, html_->wanted() ? &page : nullptr,
	    html_title("latency", o_.specs));
	if (html_->wanted())
		html_->write(page);
	if (m.empty() && !o_.json)
		out.line("(no samples)");
	print_latency_summary(out, o_, sm, why);
	dev.print_jump_summary(jc);
	if (pf_) {
		StackSymbolizer sym;
		write_stack_samples(sym);
		pf_->finish();
		fprintf(stderr, "kinstctl: %" PRIu64 " sample%s written to %s (Trace Event Format: "
		    "ui.perfetto.dev, chrome://tracing)\n", pf_->events(),
		    pf_->events() == 1 ? "" : "s", o_.perfetto.c_str());
		// Every sample the tables took made a record: the ring kept it
		// (written) or dropped it.
		if (t.dropped != 0)
			fprintf(stderr, "kinstctl: WARNING: %" PRIu64 " sample%s not in %s: the "
			    "reader fell behind and the module dropped %s (the histograms have "
			    "them)\n", t.dropped, t.dropped == 1 ? " is" : "s are",
			    o_.perfetto.c_str(), t.dropped == 1 ? "it" : "them");
	}
}

int
LatencyRun::run()
{
	scan_expressions();
	open_for_planning();
	compile_start();
	compile_ends();
	html_ = std::make_unique<HtmlFile>(o_.html);
	// Before arming: a SIGINT sent on seeing the "timing" line, or while
	// arming, must find the handler.
	SignalGuard sg;
	stop_before_arming("latency");
	if (!o_.perfetto.empty()) {
		pf_ = std::make_unique<PerfettoWriter>(o_.perfetto, "kinstctl latency");
		if (o_.by == "stack")
			stack_samples_ = std::make_unique<Spill<StackSample>>(o_.perfetto,
			    "latency --perfetto --by stack");
		span_name_ = p_.framed ? p_.start.function : spec_label(p_.start) + " to " +
		    spec_label(p_.ends[0]);
	}
	arm();
	Workload w(o_.command, o_.duration);
	w.start();
	if (pf_)
		stream_samples(w);
	else
		w.wait();
	std::vector<struct kinst_probe_info> pis = dev_->probe_infos();
	JumpCounts jc = dev_->jump_probes();
	dev_->disarm_all();
	if (pf_) {
		// What the module had delivered before the disarm.
		RecordSink sink;
		sink.hit = [this](const HitRecord &r) {
			sample(r);
			return true;
		};
		sink.batch = []() {};
		(void)dev_->drain(sink);
	}
	w.finish();
	report(pis, jc);
	return 0;
}

} // namespace

int
run_latency(const LatencyOptions &o)
{
	if (o.duration > 0 && !o.command.empty())
		throw Error(Exit::usage, "latency: --duration and -- COMMAND exclude each other");
	if (!o.linear.empty())
		(void)parse_linear(o.linear);
	LatencyOptions lo = o;
	lo.folded = check_folded("latency", o.folded, o.by, o.json);
	if (!lo.html.empty() && !lo.folded.empty())
		throw Error(Exit::usage, "latency: --html and --folded exclude each other");
	return LatencyRun(lo).run();
}

} // namespace kinst
