// SPDX-License-Identifier: BSD-2-Clause
#include "output/hitfmt.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "base/regfile.h"
#include "base/text.h"
#include "plan/trace_vars.h"

namespace kinst {

namespace {

// The members of a hit line, in the order dump() writes them (by key).
enum Slot {
	S_ADDRESS, S_ARGS, S_COMM, S_CPU, S_FUNCTION, S_INSN, S_MEM, S_MODULE,
	S_OFFSET, S_PID, S_PROBE, S_PROBE_ID, S_REGS, S_SCHEMA, S_SINCE_NS,
	S_STACK, S_STACK_TRUNCATED, S_STR, S_TARGET, S_TID, S_TIME_NS, S_TYPE,
	S_VARS, S_COUNT
};
const char *const slot_keys[S_COUNT] = {
	"address", "args", "comm", "cpu", "function", "insn", "mem", "module",
	"offset", "pid", "probe", "probe_id", "regs", "schema", "since_ns",
	"stack", "stack_truncated", "str", "target", "tid", "time_ns", "type",
	"vars",
};

Slot
slot_of(const std::string &key)
{
	for (int i = 0; i < S_COUNT; i++)
		if (key == slot_keys[i])
			return (Slot)i;
	throw std::logic_error("hit JSON: no slot for member " + key);
}

std::string
dump(const nlohmann::json &j)
{
	return json_line(j);
}

} // namespace

void
append_json_as_dump(std::string &out, std::string_view s)
{
	for (unsigned char c : s)
		if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
			out += dump(nlohmann::json(std::string(s)));
			return;
		}
	out += '"';
	out.append(s.data(), s.size());
	out += '"';
}

HitFormatter::HitFormatter(const HitFormat &f, const std::map<uint32_t, ProbeDesc> &probes)
    : f_(f), probes_(probes)
{
	// json_regs()'s members (or --regs LIST's), sorted by name as dump() sorts them.
	std::vector<int> which = f_.regs_list;
	if (which.empty())
		for (int w = 0; w < regfile.count; w++)
			which.push_back(w);
	std::sort(which.begin(), which.end(), [](int a, int b) {
		return strcmp(reg_name(a), reg_name(b)) < 0;
	});
	for (size_t i = 0; i < which.size(); i++)
		json_regs_.emplace_back(std::string(i ? ",\"" : "{\"") + reg_name(which[i]) +
		    "\":\"", which[i]);
}

void
HitFormatter::format(const HitRecord &full, std::string &out)
{
	const struct kinst_hit_record &h = full.hit;
	auto it = probes_.find(h.probe_id);
	// --latency-from: its value capture follows the user's.
	bool has_since = false;
	uint64_t since = 0;
	if (f_.latency_from)
		for (const auto &c : full.caps)
			if (c.value && c.index == f_.capd.size() && c.bytes.size() == 8 &&
			    (c.flags & KINST_SECF_NOSTATE) == 0) {
				memcpy(&since, c.bytes.data(), 8);
				has_since = true;
			}
	// --var/--vars, --latency-from: only the user's captures are shown
	// as --mem/--str.
	HitRecord user;
	const HitRecord *rp = &full;
	if ((f_.tv && f_.tv->active()) || f_.latency_from) {
		user = full;
		user.caps.clear();
		for (const auto &c : full.caps)
			if (c.index < f_.capd.size())
				user.caps.push_back(c);
		rp = &user;
	}
	const ProbeDesc *d = it != probes_.end() ? &it->second : nullptr;
	if (f_.json) {
		json(full, *rp, d, has_since, since, out);
		return;
	}
	static const ProbeDesc unknown;
	text(full, *rp, d ? *d : unknown,
	    d ? d->name : "probe#" + std::to_string(h.probe_id), has_since, since, out);
}

void
HitFormatter::text(const HitRecord &full, const HitRecord &r, const ProbeDesc &d,
    const std::string &name, bool has_since, uint64_t since, std::string &out)
{
	const struct kinst_hit_record &h = full.hit;
	char head[160];
	snprintf(head, sizeof(head), "%llu.%06llu cpu%u %d/%d %-16.*s ",
	    (unsigned long long)(h.timestamp_ns / 1000000000ull),
	    (unsigned long long)(h.timestamp_ns % 1000000000ull / 1000),
	    h.cpu, h.pid, h.tid, (int)strnlen(h.comm, sizeof(h.comm)), h.comm);
	out += head;
	if (f_.st.color)
		out += f_.st.paint("1", name);
	else
		out += name;
	out += "  ";
	out += d.insn;
	out += d.branch.annotation();
	if (f_.latency_from) {
		if (has_since) {
			out += "  since=";
			append_u64(out, since);
			out += "ns";
		} else {
			out += "  since=-";
		}
	}
	if (f_.av && f_.av->btf)
		out += "  " + args_text(f_.av->func.name,
		    read_args(*f_.av->btf, f_.av->func, reg_words(h.regs)));
	const struct kinst_regs &rg = h.regs;
	if (!f_.regs_list.empty()) {
		out += "  ";
		out += text_regs_list(rg, f_.regs_list);
	} else if (f_.regs_all) {
		out += "\n    ";
		out += text_regs(rg, true);
	} else {
		// text_regs(rg, false), without its temporaries.
		out += "  ";
		out += reg_name(regfile.pc);
		out += '=';
		append_hex0x(out, reg_value(rg, regfile.pc));
		out += ' ';
		out += reg_name(regfile.sp);
		out += '=';
		append_hex0x(out, reg_value(rg, regfile.sp));
		for (int i = 0; i < regfile.ncompact; i++) {
			out += ' ';
			out += reg_name(regfile.compact[i]);
			out += '=';
			append_hex0x(out, reg_value(rg, regfile.compact[i]));
		}
	}
	if (f_.tv && f_.tv->prints()) {
		const TraceVars::Plan *plan = probes_.count(h.probe_id) ?
		    f_.tv->plan(d.function, d.offset) : nullptr;
		if (plan)
			out += "\n    " + f_.tv->text(*plan, full);
	}
	if (r.has_stack && f_.sym)
		out += text_stack(r, *f_.sym);
	if (!r.caps.empty())
		out += text_captures(r, f_.capd);
	out += '\n';
}

const std::vector<std::string> &
HitFormatter::cached(uint32_t probe_id)
{
	auto it = cache_.find(probe_id);
	if (it != cache_.end())
		return it->second;
	auto p = probes_.find(probe_id);
	ProbeDesc unknown;
	const ProbeDesc &d = p != probes_.end() ? p->second : unknown;
	std::string name = p != probes_.end() ? d.name : "probe#" + std::to_string(probe_id);
	std::vector<std::string> v(7);
	append_json_as_dump(v[0], d.function);
	append_json_as_dump(v[1], d.insn);
	append_json_as_dump(v[2], d.module);
	append_u64(v[3], d.offset);
	append_json_as_dump(v[4], name);
	append_u64(v[5], probe_id);
	if (d.branch.set)
		v[6] = dump(d.branch.json());	// "" : no target member
	return cache_.emplace(probe_id, std::move(v)).first->second;
}

// "args": each argument by name (BTF), null where it is not known.
static nlohmann::json
json_args(const ArgsView &av, const struct kinst_hit_record &h)
{
	nlohmann::json a = nlohmann::json::object();
	for (const auto &v : read_args(*av.btf, av.func, reg_words(h.regs))) {
		if (!v.known)
			a[v.name] = nullptr;
		else if (v.pointer)
			a[v.name] = hex(v.value);
		else if (v.sgn)
			a[v.name] = (int64_t)v.value;
		else
			a[v.name] = v.value;
	}
	return a;
}

void
HitFormatter::json(const HitRecord &full, const HitRecord &r, const ProbeDesc *d,
    bool has_since, uint64_t since, std::string &out)
{
	const struct kinst_hit_record &h = full.hit;
	const std::vector<std::string> &pc = cached(h.probe_id);
	// The members that are not always there, each rendered by dump().
	std::string extra[S_COUNT];
	bool have[S_COUNT] = {};
	if (f_.latency_from) {
		have[S_SINCE_NS] = true;
		if (has_since)
			append_u64(extra[S_SINCE_NS], since);
		else
			extra[S_SINCE_NS] = "null";
	}
	if (f_.av && f_.av->btf) {
		have[S_ARGS] = true;
		extra[S_ARGS] = dump(json_args(*f_.av, h));
	}
	if (f_.tv && f_.tv->prints()) {
		const TraceVars::Plan *plan = d ? f_.tv->plan(d->function, d->offset) : nullptr;
		have[S_VARS] = true;
		extra[S_VARS] = plan ? dump(f_.tv->json(*plan, full)) : "null";
	}
	if ((r.has_stack && f_.sym) || !r.caps.empty()) {
		nlohmann::json j = nlohmann::json::object();
		if (r.has_stack && f_.sym)
			json_stack(j, r, *f_.sym);
		json_captures(j, r, f_.capd);
		for (auto m = j.begin(); m != j.end(); ++m) {
			Slot s = slot_of(m.key());
			have[s] = true;
			extra[s] = dump(m.value());
		}
	}

	char sep = '{';
	auto key = [&](Slot s) {
		out += sep;
		sep = ',';
		out += '"';
		out += slot_keys[s];
		out += "\":";
	};
	for (int s = 0; s < S_COUNT; s++) {
		switch (s) {
		case S_ADDRESS:
			key(S_ADDRESS);
			out += '"';
			append_hex0x(out, h.addr);
			out += '"';
			break;
		case S_COMM:
			key(S_COMM);
			append_json_as_dump(out, std::string_view(h.comm, strnlen(h.comm, sizeof(h.comm))));
			break;
		case S_CPU:
			key(S_CPU);
			append_u64(out, h.cpu);
			break;
		case S_FUNCTION: key(S_FUNCTION); out += pc[0]; break;
		case S_INSN: key(S_INSN); out += pc[1]; break;
		case S_MODULE: key(S_MODULE); out += pc[2]; break;
		case S_OFFSET: key(S_OFFSET); out += pc[3]; break;
		case S_PID:
			key(S_PID);
			append_i64(out, h.pid);
			break;
		case S_PROBE: key(S_PROBE); out += pc[4]; break;
		case S_PROBE_ID: key(S_PROBE_ID); out += pc[5]; break;
		case S_TARGET:
			if (!pc[6].empty()) {
				key(S_TARGET);
				out += pc[6];
			}
			break;
		case S_REGS: {
			key(S_REGS);
			for (const auto &rr : json_regs_) {
				out += rr.first;
				append_hex0x(out, reg_value(h.regs, rr.second));
				out += '"';
			}
			out += '}';
			break;
		}
		case S_SCHEMA:
			key(S_SCHEMA);
			append_u64(out, KINST_JSON_SCHEMA);
			break;
		case S_TID:
			key(S_TID);
			append_i64(out, h.tid);
			break;
		case S_TIME_NS:
			key(S_TIME_NS);
			append_u64(out, h.timestamp_ns);
			break;
		case S_TYPE:
			key(S_TYPE);
			out += "\"hit\"";
			break;
		default:
			if (have[s]) {
				key((Slot)s);
				out += extra[s];
			}
			break;
		}
	}
	out += "}\n";
}

} // namespace kinst
