// SPDX-License-Identifier: BSD-2-Clause
// kinstctl latency (latency.h).
#include "latency.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstring>
#include <optional>

#include <nlohmann/json.hpp>

#include "agg.h"
#include "btf_types.h"
#include "error.h"
#include "format.h"
#include "output.h"
#include "prog_compile.h"
#include "record.h"
#include "returns.h"
#include "session.h"
#include "spec.h"
#include "trace_vars.h"

namespace kinst {

namespace {

// The session's only activations are latency's: one tag serves.
constexpr uint64_t latency_tag = 0x6c6174;	// "lat"
constexpr uint32_t default_threads = 4096;

std::vector<struct kinst_pinsn>
frame_code(bool framed)
{
	return { framed ? make_pinsn(KINST_OP_REG, KINST_RSP) : make_pinsn(KINST_OP_IMM, 0, 0) };
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

uint64_t
hits_at(const std::vector<struct kinst_probe_info> &pis, const std::vector<Spec> &specs)
{
	uint64_t n = 0;
	for (const auto &pi : pis) {
		std::string fn(pi.function, strnlen(pi.function, sizeof(pi.function)));
		for (const auto &sp : specs)
			if (sp.function == fn && sp.offset == pi.offset)
				n += pi.hits;
	}
	return n;
}

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

struct Plan {
	bool framed = false;
	Spec start;
	std::vector<Spec> ends;
};

Plan
plan_specs(const LatencyOptions &o)
{
	Plan p;
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

int
run_latency(const LatencyOptions &o)
{
	if (o.duration > 0 && !o.command.empty())
		throw Error(Exit::usage, "latency: --duration and -- COMMAND exclude each other");
	if (!o.linear.empty())
		(void)parse_linear(o.linear);
	Plan p = plan_specs(o);

	// $entry(EXPR): compiled at the start point, saved in its activation.
	// $variables (DWARF) are planned for the instruction they are read at
	// (trace_vars.h): the start's in $entry(), the end points' elsewhere.
	std::string by_rest, if_rest;
	std::vector<std::string> texts = entry_texts(o.by, &by_rest);
	for (const auto &t : entry_texts(o.if_expr, &if_rest))
		if (std::find(texts.begin(), texts.end(), t) == texts.end())
			texts.push_back(t);
	bool start_dwarf = false;
	for (const auto &t : texts)
		start_dwarf = start_dwarf || names_dwarf_variable(t);
	bool end_dwarf = names_dwarf_variable(by_rest) || names_dwarf_variable(if_rest);
	// Planning $variables reads the live text: the device first, and the
	// start at its final instruction.
	std::optional<Session> devo;
	if (start_dwarf || end_dwarf) {
		devo.emplace(Session::open("latency"));
		if (p.framed) {
			std::vector<Spec> v(1, p.start);
			devo->at_entry(v, "latency");
			p.start = v[0];
		}
	}

	TypeSource start_types(o.btf, p.start.module);
	TypeEnv start_env;
	make_type_env(start_env, start_types, { p.start });
	std::vector<std::vector<struct kinst_pinsn>> saved;
	std::vector<std::string> saved_text;
	std::vector<bool> saved_sgn;
	std::vector<struct kinst_pinsn> start_code;
	TraceVars tv_start({}, false, o.debug_files, true, nullptr, KINST_PROG_MAX - 1);
	if (start_dwarf) {
		if (texts.size() > KINST_TS_VALS)
			throw Error(Exit::usage, "latency: at most " + std::to_string(KINST_TS_VALS) +
			    " different $entry() values");
		std::vector<Spec> sv(1, p.start);
		saved_sgn.assign(texts.size(), false);
		tv_start.prepare(sv, "", {}, &start_env, [&](const TypeEnv *e) {
			saved.clear();
			for (size_t i = 0; i < texts.size(); i++) {
				bool sg = false;
				saved.push_back(value_of(compile_expr(texts[i], "$entry(" + texts[i] + ")",
				    e, &sg)));
				saved_sgn[i] = sg;
			}
			return latency_start_program(p.framed, saved, latency_tag);
		});
		const TraceVars::Plan *sp = tv_start.plan(p.start);
		if (sp == nullptr || sp->code.empty() || !tv_start.entry_probes().empty())
			throw Error(Exit::usage, "latency: the $entry() values cannot be computed at " +
			    spec_label(p.start));
		start_code = sp->code;
		saved_text = texts;
	}
	TypeSource end_types(o.btf, p.ends[0].module);
	TypeEnv env;
	make_type_env(env, end_types, p.ends);
	DwarfReturnTypes rtypes(p.ends, o.debug_files);
	env.ret_types = rtypes.types();
	env.entry = [&](const std::string &e, bool *sgn) {
		for (size_t i = 0; i < saved_text.size(); i++)
			if (saved_text[i] == e) {
				if (start_dwarf)
					*sgn = saved_sgn[i];
				return (int)i;
			}
		if (start_dwarf)
			throw Error(Exit::usage, "not planned at the start");
		if (saved.size() >= KINST_TS_VALS)
			throw Error(Exit::usage, "at most " + std::to_string(KINST_TS_VALS) +
			    " different $entry() values");
		saved.push_back(value_of(compile_expr(e, "$entry(" + e + ")", &start_env, sgn)));
		saved_text.push_back(e);
		return (int)saved.size() - 1;
	};
	env.entry_frame = frame_code(p.framed);
	env.entry_tag = latency_tag;

	AggOptions ao;
	ao.hist = true;
	ao.by = o.by;
	ao.if_expr = o.if_expr;
	ao.linear = o.linear;
	ao.slots = o.slots;
	ao.json = o.json;
	ao.no_color = o.no_color;
	bool by_signed = false;
	const char *args_at_end = "latency: --by/--if are evaluated at the end point, where "
	    "the arguments are no longer in their registers; save one at the start with "
	    "$entry(NAME)";
	std::map<std::string, std::vector<Spec>> groups = by_return_condition(p.ends);
	std::map<std::string, std::vector<struct kinst_pinsn>> end_code;
	TraceVars tv_end({}, false, o.debug_files, true, nullptr, KINST_PROG_MAX - 1);
	std::vector<Spec> planned_ends = p.ends;
	if (end_dwarf) {
		if (groups.size() > 1 || !groups.count(""))
			throw Error(Exit::usage, "latency: $variables at conditional return points "
			    "(" + p.ends[0].text + ") are not supported");
		tv_end.prepare(planned_ends, "", {}, &env, [&](const TypeEnv *e) {
			std::vector<struct kinst_pinsn> c = latency_end_program(p.framed,
			    latency_tag, "", agg_program(ao, e, &by_signed));
			if (e->used_args)
				throw Error(Exit::usage, args_at_end);
			return c;
		});
		for (const auto &e : p.ends)
			if (tv_end.plan(e) == nullptr)
				throw Error(Exit::usage, "latency: --by/--if cannot be computed at " +
				    spec_label(e) + ", an end point (see the note above)");
		if (!tv_end.entry_probes().empty())
			throw Error(Exit::usage, "latency: a $variable in --by/--if is an entry value at "
			    "the end point (its register was reused): save it at the start with "
			    "$entry($NAME)");
	} else {
		std::vector<struct kinst_pinsn> body = agg_program(ao, &env, &by_signed);
		if (env.used_args)
			throw Error(Exit::usage, args_at_end);
		for (const auto &g : groups)
			end_code[g.first] = latency_end_program(p.framed, latency_tag, g.first, body);
	}
	if (!start_dwarf)
		start_code = latency_start_program(p.framed, saved, latency_tag);

	if (!devo)
		devo.emplace(Session::open("latency"));
	Session &dev = *devo;
	dev.require(Feature::agg, "latency");
	if (o.by == "stack")
		dev.require(Feature::agg_stack, "latency --by stack");
	if (!(start_dwarf || end_dwarf) && (p.framed || start_env.used_args)) {
		std::vector<Spec> v(1, p.start);
		dev.at_entry(v, "latency");
		p.start = v[0];
	}
	for (const auto &e : p.ends)
		if (e.function == p.start.function && e.offset == p.start.offset &&
		    e.module == p.start.module)
			throw Error(Exit::usage, "latency: " + spec_label(p.start) + ": the entry "
			    "of " + p.start.function + " is one of its return points");
	dev.filter("latency", -1, -1);
	dev.ts_setup(o.threads ? o.threads : default_threads, "latency");
	AggState s;
	s.latency = true;
	s.by_signed = by_signed;
	setup_agg(dev, s, ao);
	uint32_t start_id = dev.load_prog(start_code, "latency's start");
	std::map<std::string, uint32_t> end_ids;
	for (const auto &c : end_code)
		end_ids[c.first] = dev.load_prog(c.second, c.first.empty() ? "--by/--if" :
		    "--by/--if at a conditional return");
	if (!end_ids.empty())
		s.prog_id = end_ids.begin()->second;

	SignalGuard sg;
	dev.no_optimize(o.no_optimize);
	dev.arm(p.start, KINST_ARM_AGG, start_id);
	uint64_t armed = 0;
	if (end_dwarf)
		armed = tv_end.arm(dev, planned_ends, KINST_ARM_AGG, "--by/--if", &s.prog_id);
	else
		for (const auto &g : groups)
			armed += dev.arm_specs(g.second, KINST_ARM_AGG, end_ids[g.first], false).armed;
	if (armed == 0)
		throw Error(Exit::refused, "latency: every end point was refused");

	Workload w(o.command, o.duration);
	fprintf(stderr, "kinstctl: timing %s%s%s (%" PRIu64 " end point%s)%s\n",
	    spec_label(p.start).c_str(), p.framed ? " to its returns" : " to ",
	    p.framed ? "" : spec_label(p.ends[0]).c_str(), armed, armed == 1 ? "" : "s",
	    o.command.empty() ? "; Ctrl-C to stop" : (" while " + o.command[0] + " runs").c_str());
	w.start();
	w.wait();
	std::vector<struct kinst_probe_info> pis = dev.probe_infos();
	JumpCounts jc = dev.jump_probes();
	dev.disarm_all();
	w.finish();

	AggMap m = read_all(dev, s, totals(dev, s).ncpus);
	Totals t = totals(dev, s);
	struct kinst_ts_stats ts = dev.ts_stats();
	Summary sm;
	sm.samples = t.aggregated;
	sm.starts = hits_at(pis, { p.start });
	sm.ends = hits_at(pis, p.ends);
	sm.missed = ts.missed;
	sm.unclosed = ts.pushed > ts.closed ? ts.pushed - ts.closed : 0;
	sm.faults = t.faults;
	sm.overflow = t.overflow;
	sm.nested = t.nested;
	sm.nothread = ts.nothread;
	sm.busy = ts.busy;
	uint64_t accounted = sm.samples + sm.missed + sm.overflow + sm.nested;
	sm.other = sm.ends > accounted ? sm.ends - accounted : 0;
	std::string why = o.if_expr.empty() ? "" : "not matching --if";
	if (groups.size() > 1 || !groups.count(""))
		why += why.empty() ? "a conditional return not taken" :
		    " or a conditional return not taken";
	if (why.empty())
		why = "not timed";
	Writer out(stdout);
	print_hist(out, ao, s, m);
	if (m.empty() && !o.json)
		out.line("(no samples)");
	print_latency_summary(out, o, sm, why);
	dev.print_jump_summary(jc);
	return 0;
}

} // namespace kinst
