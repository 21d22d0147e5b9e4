// SPDX-License-Identifier: BSD-2-Clause
// kinstctl count / hist (agg.h): program, setup, arm, wait (Ctrl-C,
// --duration or the command after --), disarm, read every CPU, merge, print;
// the device through the session (session.h).
#include "commands/agg.h"

#include <cmath>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include <nlohmann/json.hpp>

#include "plan/cover.h"
#include "debuginfo/debuginfo.h"
#include "base/error.h"
#include "base/text.h"
#include "base/output.h"
#include "debuginfo/btf_types.h"
#include "plan/prog_compile.h"
#include "plan/planner.h"
#include "plan/trace_vars.h"
#include "base/record.h"
#include "output/record_text.h"
#include "symbols/stack_symbols.h"
#include "symbols/returns.h"
#include "device/plan_arm.h"
#include "device/session.h"
#include "base/spec.h"

namespace kinst {

namespace {

// An expression's code without its RET: what follows it (KEY, VALUE, the
// next part) is where its jumps to the end land.
std::vector<struct kinst_pinsn>
value_code(const std::string &expr, const std::string &what, const TypeEnv *env)
{
	std::vector<struct kinst_pinsn> c = compile_expr(expr, what, env);
	c.pop_back();
	return c;
}

bool
parse_int64(const std::string &s, int64_t *v)
{
	std::string t = s;
	bool neg = false;
	if (!t.empty() && t[0] == '-') {
		neg = true;
		t = t.substr(1);
	}
	uint64_t u;
	if (!parse_number(t, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &u))
		return false;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

std::string
suffixed(uint64_t v)
{
	static const char *const sfx[] = {"", "K", "M", "G", "T", "P", "E"};
	int i = 0;
	while (v != 0 && v % 1024 == 0 && i < 6) {
		v /= 1024;
		i++;
	}
	return std::to_string(v) + sfx[i];
}

} // namespace

Linear
parse_linear(const std::string &s)
{
	Linear l;
	size_t a = s.find(','), b = a == std::string::npos ? a : s.find(',', a + 1);
	if (b == std::string::npos || s.find(',', b + 1) != std::string::npos ||
	    !parse_int64(s.substr(0, a), &l.min) ||
	    !parse_int64(s.substr(a + 1, b - a - 1), &l.max) ||
	    !parse_int64(s.substr(b + 1), &l.step))
		throw Error(Exit::usage, "--linear " + s + ": expected MIN,MAX,STEP (integers)");
	if (l.step <= 0 || l.min >= l.max)
		throw Error(Exit::usage, "--linear " + s + ": needs MIN < MAX and STEP > 0");
	uint64_t span = (uint64_t)l.max - (uint64_t)l.min;
	uint64_t n = span / (uint64_t)l.step + (span % (uint64_t)l.step != 0);
	if (n > KINST_AGG_MAX_LINEAR)
		throw Error(Exit::usage, "--linear " + s + ": more than " +
		    std::to_string(KINST_AGG_MAX_LINEAR) + " buckets");
	return l;
}

std::vector<struct kinst_pinsn>
agg_program(const AggOptions &o, const TypeEnv *env, bool *by_signed)
{
	std::vector<struct kinst_pinsn> code, part;
	if (o.by == "stack") {
		// The kernel makes key word 1 (KINST_AGGF_STACK): no code.
	} else if (o.by == "comm") {
		code = { make_pinsn(KINST_OP_CTX, KINST_PCTX_COMM0), make_pinsn(KINST_OP_KEY, 0),
		    make_pinsn(KINST_OP_CTX, KINST_PCTX_COMM8), make_pinsn(KINST_OP_KEY, 1) };
	} else if (o.by == "pid") {
		code = { make_pinsn(KINST_OP_CTX, KINST_PCTX_PID), make_pinsn(KINST_OP_KEY, 0) };
	} else if (!o.by.empty()) {
		code = compile_expr(o.by, "--by", env, by_signed);
		code.pop_back();
		code.push_back(make_pinsn(KINST_OP_KEY, 0));
	}
	if (!o.value_expr.empty()) {
		part = value_code(o.value_expr, "--value", env);
		code.insert(code.end(), part.begin(), part.end());
		code.push_back(make_pinsn(KINST_OP_VALUE));
	}
	if (!o.if_expr.empty()) {
		part = compile_expr(o.if_expr, "--if", env);
		code.insert(code.end(), part.begin(), part.end());
	} else if (!code.empty()) {
		code.push_back(make_pinsn(KINST_OP_IMM, 0, 1));
		code.push_back(make_pinsn(KINST_OP_RET));
	}
	if (code.size() > KINST_PROG_MAX_INSNS)
		throw Error(Exit::usage, "--by, --value and --if together are too long (" +
		    std::to_string(code.size()) + " instructions, at most " +
		    std::to_string(KINST_PROG_MAX_INSNS) + ")");
	return code;
}

void
agg_merge(AggMap &m, const uint8_t *buf, uint32_t n, uint32_t entry_size,
    uint32_t nbuckets)
{
	for (uint32_t i = 0; i < n; i++) {
		struct kinst_agg_entry e;
		const uint8_t *p = buf + (size_t)i * entry_size;
		memcpy(&e, p, sizeof(e));
		if (e.count == 0)
			continue;	// claimed, not yet counted
		AggVal &v = m[AggKey{e.probe_id, e.key[0], e.key[1]}];
		v.count += e.count;
		v.sum += e.sum;
		v.min = std::min(v.min, e.min);
		v.max = std::max(v.max, e.max);
		v.buckets.resize(nbuckets);
		for (uint32_t k = 0; k < nbuckets; k++) {
			uint64_t b;
			memcpy(&b, p + sizeof(e) + k * sizeof(b), sizeof(b));
			v.buckets[k] += b;
		}
	}
}

uint64_t
StackSet::id(const std::vector<uint64_t> &f, bool trunc)
{
	auto it = ids.find(f);
	if (it != ids.end()) {
		if (trunc)
			truncated[it->second] = true;
		return it->second;
	}
	uint64_t i = frames.size();
	frames.push_back(f);
	truncated.push_back(trunc);
	ids[f] = i;
	return i;
}

void
agg_merge_stacks(AggMap &m, StackSet &ss, const uint8_t *buf, uint32_t n,
    uint32_t entry_size, uint32_t nbuckets, const struct kinst_agg_stack *stacks,
    uint32_t nstacks)
{
	// Within one CPU a hash names one stack (the kernel refuses collisions).
	std::map<uint64_t, uint64_t> by_hash;
	for (uint32_t i = 0; i < nstacks; i++) {
		uint32_t nf = std::min<uint32_t>(stacks[i].nframes, KINST_STACK_MAX);
		std::vector<uint64_t> f(stacks[i].frames, stacks[i].frames + nf);
		by_hash[stacks[i].hash] = ss.id(f, (stacks[i].flags & KINST_SECF_TRUNCATED) != 0);
	}
	std::vector<uint8_t> t(buf, buf + (size_t)n * entry_size);
	for (uint32_t i = 0; i < n; i++) {
		struct kinst_agg_entry e;
		uint8_t *p = t.data() + (size_t)i * entry_size;
		memcpy(&e, p, sizeof(e));
		auto it = by_hash.find(e.key[1]);
		e.key[1] = it != by_hash.end() ? it->second : ss.id({}, false);
		memcpy(p, &e, sizeof(e));
	}
	agg_merge(m, t.data(), n, entry_size, nbuckets);
}

Bucket
log2_bucket(uint32_t i)
{
	Bucket b;
	if (i == 0) {
		b.has_low = false;
		b.high = 0;
		b.label = "(..., 0)";
	} else if (i == 1) {
		b.low = 0;
		b.high = 1;
		b.label = "[0]";
	} else if (i == 2) {
		b.low = 1;
		b.high = 2;
		b.label = "[1]";
	} else {
		uint32_t k = i - 2;
		b.low = (int64_t)1 << k;
		if (k == 62) {
			b.has_high = false;
			b.label = "[" + suffixed((uint64_t)b.low) + ", ...)";
		} else {
			b.high = (int64_t)1 << (k + 1);
			b.label = "[" + suffixed((uint64_t)b.low) + ", " +
			    suffixed((uint64_t)b.high) + ")";
		}
	}
	return b;
}

Bucket
linear_bucket(const Linear &l, uint32_t nlinear, uint32_t i)
{
	Bucket b;
	if (i == 0) {
		b.has_low = false;
		b.high = l.min;
		b.label = "(..., " + std::to_string(l.min) + ")";
	} else if (i > nlinear) {
		b.low = l.max;
		b.has_high = false;
		b.label = "[" + std::to_string(l.max) + ", ...)";
	} else {
		b.low = (int64_t)((uint64_t)l.min + (uint64_t)(i - 1) * (uint64_t)l.step);
		b.high = i == nlinear ? l.max :
		    (int64_t)((uint64_t)b.low + (uint64_t)l.step);
		b.label = "[" + std::to_string(b.low) + ", " + std::to_string(b.high) + ")";
	}
	return b;
}

std::string
render_hist(const std::vector<Bucket> &b, const std::vector<uint64_t> &counts)
{
	const int width = 52;
	size_t first = counts.size(), last = 0;
	uint64_t top = 0;
	for (size_t i = 0; i < counts.size(); i++)
		if (counts[i] != 0) {
			first = std::min(first, i);
			last = i;
			top = std::max(top, counts[i]);
		}
	std::string out;
	for (size_t i = first; i <= last && i < counts.size(); i++) {
		int bar = (int)(counts[i] * width / top);
		char head[64];
		snprintf(head, sizeof(head), "%-20s %8" PRIu64 " |", b[i].label.c_str(), counts[i]);
		out += head + std::string(bar, '@') + std::string(width - bar, ' ') + "|\n";
	}
	return out;
}

std::string
html_title(const char *cmd, const std::vector<std::string> &specs)
{
	std::string t = std::string("kinst ") + cmd;
	for (const auto &sp : specs)
		t += " " + sp;
	return t;
}

std::string
hist_html(const std::string &title, const std::string &note,
    const std::vector<Bucket> &b, const std::vector<HistPanel> &panels)
{
	const int label_w = 170, bar_w = 520, row_h = 20, width = 800;
	std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<title>" + html_escape(title) + "</title>\n<style>\n"
	    "body{font-family:sans-serif;margin:1em}\n"
	    "section.hist{margin-bottom:1.5em}\n"
	    "svg.hist text{font-family:monospace;font-size:12px}\n"
	    "svg.hist rect{fill:#4a7bd0}\n"
	    "svg.hist g.bucket:hover rect{fill:#d0704a}\n"
	    ".note,.summary{color:#555}\n"
	    "</style>\n</head>\n<body>\n<h1>" + html_escape(title) + "</h1>\n";
	if (!note.empty())
		h += "<p class=\"note\">" + html_escape(note) + "</p>\n";
	if (panels.empty())
		h += "<p class=\"note\">(no samples)</p>\n";
	for (const auto &p : panels) {
		size_t first = p.counts.size(), last = 0;
		uint64_t top = 0;
		for (size_t i = 0; i < p.counts.size(); i++)
			if (p.counts[i] != 0) {
				first = std::min(first, i);
				last = i;
				top = std::max(top, p.counts[i]);
			}
		h += "<section class=\"hist\" data-key=\"" + html_escape(p.key) + "\">\n";
		if (!p.key.empty())
			h += "<h2><code>" + html_escape(p.key) + "</code></h2>\n";
		size_t rows = top == 0 ? 0 : last - first + 1;
		h += "<svg class=\"hist\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
		    std::to_string(width) + "\" height=\"" + std::to_string(rows * row_h + 4) +
		    "\" role=\"img\" aria-label=\"" + html_escape("histogram" +
		    (p.key.empty() ? std::string() : " of " + p.key)) + "\">\n";
		for (size_t i = first; top != 0 && i <= last && i < b.size(); i++) {
			uint64_t c = p.counts[i];
			// A non-empty bucket is at least one pixel long.
			long w = (long)((double)c * bar_w / (double)top + 0.5);
			if (c != 0 && w == 0)
				w = 1;
			int y = (int)(i - first) * row_h;
			h += "<g class=\"bucket\"";
			if (b[i].has_low)
				h += " data-low=\"" + std::to_string(b[i].low) + "\"";
			if (b[i].has_high)
				h += " data-high=\"" + std::to_string(b[i].high) + "\"";
			h += " data-count=\"" + std::to_string(c) + "\" transform=\"translate(0," +
			    std::to_string(y) + ")\"><title>" + html_escape(b[i].label) + ": " +
			    std::to_string(c) + "</title><text class=\"label\" x=\"" +
			    std::to_string(label_w - 6) + "\" y=\"15\" text-anchor=\"end\">" +
			    html_escape(b[i].label) + "</text><rect x=\"" + std::to_string(label_w) +
			    "\" y=\"3\" width=\"" + std::to_string(w) + "\" height=\"" +
			    std::to_string(row_h - 6) + "\"></rect><text class=\"count\" x=\"" +
			    std::to_string(label_w + w + 6) + "\" y=\"15\">" + std::to_string(c) +
			    "</text></g>\n";
		}
		h += "</svg>\n<p class=\"summary\">" + html_escape(p.summary) + "</p>\n</section>\n";
	}
	h += "</body>\n</html>\n";
	return h;
}

std::string
key_text(const std::string &by, const AggKey &k, bool sgn)
{
	if (by == "comm") {
		char c[17];
		memcpy(c, &k.k0, 8);
		memcpy(c + 8, &k.k1, 8);
		c[16] = 0;
		return std::string(c);
	}
	if (by == "pid" || sgn)
		return std::to_string((int64_t)k.k0);
	return std::to_string(k.k0);
}

namespace {

nlohmann::json
key_json(const std::string &by, const AggKey &k, bool sgn)
{
	if (by == "comm")
		return key_text(by, k);
	if (by == "pid" || sgn)
		return (int64_t)k.k0;
	return k.k0;
}

} // namespace

// What count/hist set up in the session and read back from it.

void
setup_agg(Session &dev, AggState &s, const AggOptions &o)
{
	memset(&s.su, 0, sizeof(s.su));
	s.su.kind = !o.hist ? KINST_AGG_COUNT :
	    o.linear.empty() ? KINST_AGG_LOG2 : KINST_AGG_LINEAR;
	s.su.flags = o.by.empty() && !o.hist ? KINST_AGGF_PROBE : 0;
	s.su.nslots = o.slots ? o.slots : o.hist ? 256 : 8192;
	if (o.by == "stack") {
		// Stacks are 528 bytes each: fewer of them by default.
		s.su.flags |= KINST_AGGF_STACK;
		s.su.nslots = o.slots ? o.slots : o.hist ? 256 : 1024;
		s.su.nstacks = std::min<uint32_t>(s.su.nslots, KINST_AGG_MAX_STACKS);
	}
	if (o.record)
		s.su.flags |= KINST_AGGF_RECORD;
	if (!o.linear.empty()) {
		Linear l = parse_linear(o.linear);
		s.su.lin_min = l.min;
		s.su.lin_max = l.max;
		s.su.lin_step = l.step;
	}
	dev.agg_setup(s.su);
}

AggMap
read_all(Session &dev, AggState &s, uint32_t ncpus)
{
	AggMap m;
	std::vector<uint8_t> buf((size_t)s.su.nslots * s.su.entry_size);
	std::vector<struct kinst_agg_stack> stk(s.su.nstacks);
	for (uint32_t c = 0; c < ncpus; c++) {
		uint32_t n = dev.agg_read(c, buf.data(), s.su.nslots);
		if ((s.su.flags & KINST_AGGF_STACK) == 0) {
			agg_merge(m, buf.data(), n, s.su.entry_size, s.su.nbuckets);
			continue;
		}
		// After the entries: every stack they name is in the table.
		uint32_t ns = dev.agg_stacks(c, stk.data(), s.su.nstacks);
		agg_merge_stacks(m, s.stacks, buf.data(), n, s.su.entry_size,
		    s.su.nbuckets, stk.data(), std::min(ns, s.su.nstacks));
	}
	return m;
}


Totals
totals(Session &dev, const AggState &s)
{
	Totals t;
	std::vector<struct kinst_agg_cpu_stats> as = dev.agg_stats();
	t.ncpus = (uint32_t)as.size();
	for (const auto &a : as) {
		t.aggregated += a.aggregated;
		t.overflow += a.overflow;
		t.nested += a.nested;
	}
	for (const auto &c : dev.stats()) {
		t.hits += c.hits;
		t.delivered += c.delivered;
		t.dropped += c.dropped;
	}
	if (s.prog_id != 0)
		for (const auto &p : dev.prog_stats()) {
			t.filtered += p.filtered;
			t.faults += p.faults;
		}
	return t;
}

void
print_summary(Writer &out, const AggOptions &o, const Totals &t)
{
	if (o.json) {
		nlohmann::json j;
		j["schema"] = KINST_JSON_SCHEMA;
		j["type"] = "summary";
		j["hits"] = t.hits;
		j["aggregated"] = t.aggregated;
		j["filtered"] = t.filtered;
		j["faults"] = t.faults;
		j["overflow"] = t.overflow;
		j["nested"] = t.nested;
		j["hidden"] = t.hidden;
		j["probes"] = t.probes;
		j["jump_optimized"] = t.jump;
		j["shared"] = t.shared;
		out.line(json_line(j));
	}
	out.flush();
	fprintf(stderr, "kinstctl: %" PRIu64 " hits, %" PRIu64 " aggregated, %" PRIu64
	    " not matching --if (%" PRIu64 " faulted), %" PRIu64 " overflowed (table full), %"
	    PRIu64 " nested (not counted)", t.hits, t.aggregated, t.filtered, t.faults,
	    t.overflow, t.nested);
	if (t.hidden)
		fprintf(stderr, ", %" PRIu64 " at hidden probes", t.hidden);
	fprintf(stderr, "\n");
	if (t.overflow)
		fprintf(stderr, "kinstctl: WARNING: %" PRIu64 " hits found no free slot; "
		    "raise --slots\n", t.overflow);
}

namespace {

// --by stack: the stack of key k, symbolized one frame per line (as
// trace --stack), frame 0 the probed instruction.
std::string
stack_text(const StackSet &ss, const AggKey &k, StackSymbolizer &sym)
{
	if (k.k1 >= ss.frames.size() || ss.frames[k.k1].empty())
		return "        (stack not read: the table changed)\n";
	std::string t;
	const std::vector<uint64_t> &f = ss.frames[k.k1];
	for (size_t i = 0; i < f.size(); i++)
		t += "        " + text_frame(sym.frame(f[i], i)) + "\n";
	if (ss.truncated[k.k1])
		t += "        ... (truncated at " + std::to_string(KINST_STACK_MAX) + " frames)\n";
	return t;
}

void
stack_json(nlohmann::json &j, const StackSet &ss, const AggKey &k, StackSymbolizer &sym)
{
	nlohmann::json a = nlohmann::json::array();
	bool trunc = false;
	if (k.k1 < ss.frames.size()) {
		const std::vector<uint64_t> &f = ss.frames[k.k1];
		for (size_t i = 0; i < f.size(); i++)
			a.push_back(json_frame(sym.frame(f[i], i)));
		trunc = ss.truncated[k.k1];
	}
	j["by"] = "stack";
	j["stack"] = a;
	j["stack_truncated"] = trunc;
}

// --folded: one line per stack, root first, frames joined by ';', a space
// and the weight (FlameGraph's collapsed format, which speedscope and
// inferno read).  Stacks that fold to the same line (--folded=functions)
// are one line.  A stack cut at KINST_STACK_MAX frames gets a
// "[truncated]" root, one not read "[unknown]".
void
print_folded(Writer &out, const AggOptions &o, const AggState &s, const AggMap &m,
    StackSymbolizer &sym, uint64_t (*weight)(const AggVal &))
{
	bool functions = o.folded == "functions";
	std::map<std::string, uint64_t> lines;
	for (const auto &r : m) {
		uint64_t w = weight(r.second);
		if (w == 0)
			continue;
		std::string line;
		const AggKey &k = r.first;
		if (k.k1 >= s.stacks.frames.size() || s.stacks.frames[k.k1].empty()) {
			line = "[unknown]";
		} else {
			const std::vector<uint64_t> &f = s.stacks.frames[k.k1];
			if (s.stacks.truncated[k.k1])
				line = "[truncated]";
			for (size_t i = f.size(); i-- > 0; ) {
				if (!line.empty())
					line += ';';
				line += folded_frame(sym.frame(f[i], i), functions);
			}
		}
		lines[line] += w;
	}
	for (const auto &l : lines)
		out.line(l.first + " " + std::to_string(l.second));
}

uint64_t
weight_count(const AggVal &v)
{
	return v.count;
}

// latency: the time spent (ns), what a flame graph of latency shows.
uint64_t
weight_sum(const AggVal &v)
{
	return (int64_t)v.sum > 0 ? v.sum : 0;
}

void
print_count(Writer &out, const AggOptions &o, const AggState &s, const AggMap &m,
    const std::map<uint32_t, ProbeDesc> &probes)
{
	if (!o.folded.empty()) {
		StackSymbolizer sym;
		print_folded(out, o, s, m, sym, weight_count);
		return;
	}
	// Per probe: every armed instruction in address order for a whole
	// function, else by count.
	std::vector<std::pair<AggKey, AggVal>> rows(m.begin(), m.end());
	if (o.by.empty() && s.whole) {
		for (const auto &p : probes)
			if (m.find(AggKey{p.first, 0, 0}) == m.end())
				rows.push_back({AggKey{p.first, 0, 0}, AggVal{0, 0, 0, 0, {}}});
		std::sort(rows.begin(), rows.end(), [&](const auto &a, const auto &b) {
			auto ia = probes.find(a.first.probe_id), ib = probes.find(b.first.probe_id);
			uint64_t x = ia == probes.end() ? UINT64_MAX : ia->second.addr;
			uint64_t y = ib == probes.end() ? UINT64_MAX : ib->second.addr;
			return x < y;
		});
	} else {
		std::stable_sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
			return a.second.count > b.second.count;
		});
	}
	bool with_value = !o.value_expr.empty();
	bool by_stack = o.by == "stack";
	StackSymbolizer sym;
	if (!o.json && !by_stack)
		out.line(std::string(o.by.empty() ? "           COUNT  PROBE" :
		    "           COUNT  KEY") + (with_value ? "  (sum min max)" : ""));
	for (const auto &r : rows) {
		if (o.json) {
			nlohmann::json j;
			j["schema"] = KINST_JSON_SCHEMA;
			j["type"] = "count";
			if (o.by.empty()) {
				auto it = probes.find(r.first.probe_id);
				ProbeDesc d = it != probes.end() ? it->second : ProbeDesc();
				j["probe_id"] = r.first.probe_id;
				j["probe"] = d.name;
				j["function"] = d.function;
				j["offset"] = d.offset;
				j["address"] = hex(d.addr);
				j["insn"] = d.insn;
			} else if (by_stack) {
				stack_json(j, s.stacks, r.first, sym);
			} else {
				j["by"] = o.by;
				j["key"] = key_json(o.by, r.first, s.by_signed);
			}
			j["count"] = r.second.count;
			if (with_value && r.second.count) {
				j["sum"] = (int64_t)r.second.sum;
				j["min"] = r.second.min;
				j["max"] = r.second.max;
			}
			out.line(json_line(j));
			continue;
		}
		std::string vals = with_value && r.second.count ? "  (" +
		    std::to_string((int64_t)r.second.sum) + " " + std::to_string(r.second.min) +
		    " " + std::to_string(r.second.max) + ")" : "";
		if (by_stack) {
			// bpftrace's @[kstack]: the frames, then the count.
			out.put("@[\n" + stack_text(s.stacks, r.first, sym) + "]: " +
			    std::to_string(r.second.count) + vals + "\n\n");
			continue;
		}
		char c[32];
		snprintf(c, sizeof(c), "%16" PRIu64 "  ", r.second.count);
		std::string line = c;
		if (o.by.empty()) {
			auto it = probes.find(r.first.probe_id);
			if (it != probes.end()) {
				char n[64];
				snprintf(n, sizeof(n), "%-40s  ", it->second.name.c_str());
				line += n + it->second.insn;
			} else {
				line += "probe#" + std::to_string(r.first.probe_id);
			}
		} else {
			line += key_text(o.by, r.first, s.by_signed);
		}
		out.line(line + vals);
	}
}

} // namespace

namespace {

// The line under a histogram: count, sum, min, max, avg, or with latency
// nanoseconds, mean and approximate percentiles.
std::string
hist_summary(const AggState &s, const AggVal &v, const std::vector<Bucket> &b)
{
	if (s.latency) {
		char l[256];
		snprintf(l, sizeof(l), "count %" PRIu64 ", min %" PRId64 " ns, max %" PRId64
		    " ns, mean %.0f ns, p50 ~%.0f ns, p90 ~%.0f ns, p99 ~%.0f ns", v.count,
		    v.min, v.max, v.count ? (double)(int64_t)v.sum / (double)v.count : 0.0,
		    hist_quantile(b, v, 0.50), hist_quantile(b, v, 0.90),
		    hist_quantile(b, v, 0.99));
		return l;
	}
	return "count " + std::to_string(v.count) + ", sum " +
	    std::to_string((int64_t)v.sum) + ", min " + std::to_string(v.min) +
	    ", max " + std::to_string(v.max) + ", avg " +
	    std::to_string(v.count ? (double)(int64_t)v.sum / (double)v.count : 0.0);
}

HistPanel
hist_panel(const AggOptions &o, const AggState &s, const AggKey &k, const AggVal &v,
    const std::vector<Bucket> &b, StackSymbolizer &sym)
{
	HistPanel p;
	if (o.by == "stack")
		p.key = stack_text(s.stacks, k, sym);
	else if (!o.by.empty())
		p.key = key_text(o.by, k, s.by_signed);
	p.counts = v.buckets;
	p.summary = hist_summary(s, v, b);
	return p;
}

} // namespace

void
print_hist(Writer &out, const AggOptions &o, const AggState &s, const AggMap &m,
    std::string *html, const std::string &title)
{
	std::vector<HistPanel> panels;
	Linear l;
	uint32_t nlinear = 0;
	if (!o.linear.empty()) {
		l = parse_linear(o.linear);
		nlinear = s.su.nbuckets - 2;
	}
	std::vector<Bucket> b;
	for (uint32_t i = 0; i < s.su.nbuckets; i++)
		b.push_back(o.linear.empty() ? log2_bucket(i) : linear_bucket(l, nlinear, i));
	bool by_stack = o.by == "stack";
	StackSymbolizer sym;
	if (!o.folded.empty()) {
		print_folded(out, o, s, m, sym, s.latency ? weight_sum : weight_count);
		return;
	}
	for (const auto &r : m) {
		const AggVal &v = r.second;
		// The key as text and the summary line: the text output's and the page's.
		HistPanel p;
		if (!o.json || html != nullptr)
			p = hist_panel(o, s, r.first, v, b, sym);
		if (html != nullptr)
			panels.push_back(p);
		if (o.json) {
			nlohmann::json j;
			j["schema"] = KINST_JSON_SCHEMA;
			j["type"] = "hist";
			j["kind"] = o.linear.empty() ? "log2" : "linear";
			if (by_stack) {
				stack_json(j, s.stacks, r.first, sym);
			} else if (!o.by.empty()) {
				j["by"] = o.by;
				j["key"] = key_json(o.by, r.first, s.by_signed);
			}
			j["count"] = v.count;
			j["sum"] = (int64_t)v.sum;
			j["min"] = v.min;
			j["max"] = v.max;
			if (s.latency) {
				j["unit"] = "ns";
				j["mean"] = v.count ? (double)(int64_t)v.sum / (double)v.count : 0.0;
				j["p50"] = hist_quantile(b, v, 0.50);
				j["p90"] = hist_quantile(b, v, 0.90);
				j["p99"] = hist_quantile(b, v, 0.99);
			}
			nlohmann::json bj = nlohmann::json::array();
			for (size_t i = 0; i < v.buckets.size(); i++) {
				if (v.buckets[i] == 0)
					continue;
				nlohmann::json e;
				e["low"] = b[i].has_low ? nlohmann::json(b[i].low) : nlohmann::json();
				e["high"] = b[i].has_high ? nlohmann::json(b[i].high) : nlohmann::json();
				e["count"] = v.buckets[i];
				bj.push_back(e);
			}
			j["buckets"] = bj;
			out.line(json_line(j));
			continue;
		}
		if (by_stack)
			out.put("@[\n" + p.key + "]:\n");
		else if (!o.by.empty())
			out.line("@[" + p.key + "]:");
		out.put(render_hist(b, v.buckets));
		out.line(p.summary);
		out.line("");
	}
	if (html != nullptr) {
		std::string note = (s.latency ? std::string("nanoseconds") :
		    "value " + o.value_expr) + (o.linear.empty() ? ", log2 buckets" :
		    ", linear buckets " + o.linear) + (o.by.empty() ? std::string() :
		    "; one histogram per --by " + o.by);
		*html = hist_html(title, note, b, panels);
	}
}


double
hist_quantile(const std::vector<Bucket> &b, const AggVal &v, double q)
{
	if (v.count == 0)
		return 0;
	double rank = std::ceil(q * (double)v.count);
	if (rank < 1)
		rank = 1;
	double cum = 0;
	for (size_t i = 0; i < v.buckets.size() && i < b.size(); i++) {
		double c = (double)v.buckets[i];
		if (c == 0 || cum + c < rank) {
			cum += c;
			continue;
		}
		double lo = b[i].has_low ? (double)b[i].low : (double)v.min;
		double hi = b[i].has_high ? (double)b[i].high : (double)v.max + 1;
		lo = std::max(lo, (double)v.min);
		hi = std::min(hi, (double)v.max + 1);
		// The middle of the rank's share of the bucket.
		double x = lo + (rank - cum - 0.5) / c * (hi - lo);
		return std::min(std::max(x, (double)v.min), (double)v.max);
	}
	return (double)v.max;
}

std::string
check_folded(const char *cmd, const std::string &folded, const std::string &by, bool json)
{
	if (folded.empty())
		return "";
	if (folded != "true" && folded != "offsets" && folded != "functions")
		throw Error(Exit::usage, std::string(cmd) + ": --folded=" + folded +
		    ": expected --folded (function+0xoff frames) or --folded=functions");
	if (by != "stack")
		throw Error(Exit::usage, std::string(cmd) + ": --folded needs --by stack");
	if (json)
		throw Error(Exit::usage, std::string(cmd) + ": --folded and --json exclude each other");
	return folded == "functions" ? folded : "offsets";
}

// The plan (planner.h): --by/--value/--if compiled for the specs' types,
// with a conditional return's condition in its --if; with $variables
// (DWARF) in them, a program per instruction.  *by_signed: --by's value
// is signed.
static void
plan_agg(const AggOptions &o, const char *cmd, Plan &plan, bool *by_signed)
{
	PlanRequest req;
	req.specs = o.specs;
	req.debug_files = o.debug_files;
	req.btf = o.btf;
	req.flags = KINST_ARM_AGG;
	req.program = [&o, by_signed](const TypeEnv *e, const std::string &cond) {
		if (cond.empty())
			return agg_program(o, e, by_signed);
		AggOptions oc = o;
		oc.if_expr = with_return_condition(cond, o.if_expr);
		return agg_program(oc, e);
	};
	req.what = "--by/--value/--if";
	req.cond_what = "a conditional return's --if";
	req.dollar = names_dwarf_variable(o.if_expr) ||
	    names_dwarf_variable(o.value_expr) ||
	    (o.by != "comm" && o.by != "pid" && o.by != "stack" &&
	    names_dwarf_variable(o.by));
	req.step = [&o, cmd](PlanStep s, Plan &p) {
		if (s == PlanStep::specs && !o.linear.empty())
			(void)parse_linear(o.linear);	// a usage error before the device
		if (s != PlanStep::vars)
			return;
		// Conditional return points (returns.h) would need a program
		// of their own each.
		std::map<std::string, std::vector<Spec>> groups = by_return_condition(p.specs);
		if (groups.size() > 1 || !groups.count(""))
			throw Error(Exit::usage, std::string(cmd) + ": $variables at conditional "
			    "return points (" + p.specs[0].text + ") are not supported");
	};
	make_plan(req, plan);
}

int
run_agg(const AggOptions &opts)
{
	AggOptions o = opts;
	const char *cmd = o.hist ? "hist" : "count";
	if (o.specs.empty())
		throw Error(Exit::usage, std::string(cmd) + ": give at least one probe spec");
	o.folded = check_folded(cmd, o.folded, o.by, o.json);
	if (o.duration > 0 && !o.command.empty())
		throw Error(Exit::usage, std::string(cmd) + ": --duration and -- COMMAND exclude each other");
	if (!o.html.empty() && !o.folded.empty())
		throw Error(Exit::usage, std::string(cmd) + ": --html and --folded exclude each other");
	Plan plan;
	bool by_signed = false;
	plan_agg(o, cmd, plan, &by_signed);

	HtmlFile html(o.html);
	Session dev = Session::open(cmd);
	dev.require(Feature::agg, cmd);
	if (o.by == "stack")
		dev.require(Feature::agg_stack, cmd);
	AggState s;
	place_at_entry(dev, plan);
	dev.filter(cmd, -1, -1);
	setup_agg(dev, s, o);
	load_programs(dev, plan);
	// Before arming, as in trace: a SIGINT sent by a script on seeing the
	// "counting" line, or while arming, must find the handler (a
	// background process of a script starts with SIGINT ignored).
	SignalGuard sg;
	stop_before_arming(cmd);
	dev.no_optimize(o.no_optimize);
	PlanArmed at = arm_plan(dev, plan, false);
	s.prog_id = at.prog_id;
	if (at.armed == 0)
		throw Error(Exit::refused, "nothing to count: every instruction was refused");
	s.whole = at.whole;
	s.by_signed = by_signed;
	Disassembler dis(o.syntax);
	std::map<uint32_t, ProbeDesc> probes = dev.probes(dis);

	Workload w(o.command, o.duration);
	if (!o.command.empty())
		fprintf(stderr, "kinstctl: counting %" PRIu64 " probe%s while %s runs\n",
		    at.armed, at.armed == 1 ? "" : "s", o.command[0].c_str());
	else
		fprintf(stderr, "kinstctl: counting %" PRIu64 " probe%s; Ctrl-C to stop\n",
		    at.armed, at.armed == 1 ? "" : "s");
	w.start();
	w.wait();
	JumpCounts jc = dev.jump_probes();
	// The hidden entry probes' hits so far (one between this and the
	// disarm counts as not matching).
	uint64_t hidden = hidden_hits(dev, plan);
	dev.disarm_all();
	w.finish();

	AggMap m = read_all(dev, s, totals(dev, s).ncpus);
	Totals t = totals(dev, s);
	if (hidden && s.prog_id == 0)
		for (const auto &p : dev.prog_stats())
			t.filtered += p.filtered;	// the entry probes' own program
	t.hidden = std::min(hidden, t.filtered);
	t.filtered -= t.hidden;
	t.probes = jc.total;
	t.jump = jc.jump;
	t.shared = jc.shared;
	Writer out(stdout);
	if (o.hist) {
		std::string page;
		print_hist(out, o, s, m, html.wanted() ? &page : nullptr, html_title("hist", o.specs));
		if (html.wanted())
			html.write(page);
	} else
		print_count(out, o, s, m, probes);
	print_summary(out, o, t);
	dev.print_jump_summary(jc);
	return 0;
}

} // namespace kinst
