// SPDX-License-Identifier: BSD-2-Clause
// kinstctl cover: control flow, counts and renderings (cover.h).
#include "plan/cover.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <set>

#include "base/regfile.h"

extern "C" {
#include "x86/kinst_classify.h"
#include "x86/kinst_decode.h"
}

namespace kinst {

// ---- source lines ----

bool
cover_line_info(const std::string &, uint64_t, LineInfo *out)
{
	// cover_build leaves lines empty; run_cover fills them from the
	// functions' DWARF (debuginfo.cc) afterwards.
	*out = LineInfo();
	return false;
}

const char *
cover_line_info_missing()
{
	return "no source lines: no debug information for these functions";
}

// ---- keys ----

const char *const cover_flags_expr = regfile.a64 ? "(pstate >> 28) & 0xf" :
    "rflags & 0x8d5";
const char *const cover_rcx_expr = "(rcx == 0) | ((rcx == 1) << 1)";

bool
cover_cond(unsigned cc, uint64_t fl)
{
	return kinst_cond(cc, fl);
}

FlowInfo
cover_flow(const uint8_t *bytes, size_t len, uint64_t addr)
{
	FlowInfo f;
	struct kinst_insn d;
	struct kinst_class cls;
	if (kinst_decode(bytes, len, &d) != KINST_DEC_OK)
		return f;
	// The classifier's answers: the branch kind from its opcode table,
	// whatever the treatment (a refused 66-prefixed jmp still ends its
	// block), and whether execution can continue at the next instruction.
	kinst_classify(KINST_DEC_OK, &d, bytes, &cls);
	uint64_t next = addr + d.len;
	auto direct = [&](Flow fl) {
		f.flow = fl;
		f.has_target = true;
		f.target = next + (uint64_t)d.imm;
	};
	int kind = kinst_branch_kind(&d);
	switch (kind) {
	case KINST_EM_JCC:
		direct(Flow::jcc);
		f.cc = d.opcode & 0xf;	// as kinst_emulate reads it
		break;
	case KINST_EM_JMP_REL:
		direct(Flow::jmp);
		break;
	case KINST_EM_LOOP:
	case KINST_EM_LOOPE:
	case KINST_EM_LOOPNE:
	case KINST_EM_JRCXZ:
		direct(Flow::loop);
		f.loop_kind = (unsigned)kind;
		f.addr32 = d.addrsize == 4;
		break;
	case KINST_EM_RET:
	case KINST_EM_RET_IMM:
		f.flow = Flow::ret;
		break;
	case KINST_EM_JMP_IND:
		f.flow = Flow::jmp_ind;
		break;
	default:
		// ud2, int3 (padding), iret, far jmp/ret, sysret...
		if ((cls.flags & KINST_CF_NOFALL) != 0)
			f.flow = Flow::stop;
		break;
	}
	return f;
}

std::string
cover_a64_taken_expr(const Insn &in)
{
	if (!in.a64 || in.len != 4)
		return "";
	const struct kinst_a64_insn &d = in.a64d;
	bool zero;	// branches when the tested value is zero
	switch (d.emul) {
	case KINST_A64_EM_CBZ:
	case KINST_A64_EM_TBZ:
		zero = true;
		break;
	case KINST_A64_EM_CBNZ:
	case KINST_A64_EM_TBNZ:
		zero = false;
		break;
	default:
		return "";
	}
	if (d.rt == 31)		// xzr/wzr: always zero
		return zero ? "1" : "0";
	std::string r = "x" + std::to_string(d.rt), v;
	if (d.emul == KINST_A64_EM_TBZ || d.emul == KINST_A64_EM_TBNZ)
		v = "((" + r + " >> " + std::to_string(d.bit) + ") & 1)";
	else
		v = d.sf ? r : "(" + r + " & 0xffffffff)";
	return "(" + v + (zero ? " == 0)" : " != 0)");
}

FlowInfo
cover_flow_of(const Insn &in)
{
	if (!in.a64)
		return cover_flow(in.bytes, in.len, in.addr);
	FlowInfo f;
	f.a64 = true;
	if (in.len != 4)
		return f;	// a function's tail shorter than a word
	const struct kinst_a64_insn &d = in.a64d;
	auto direct = [&](Flow fl) {
		f.flow = fl;
		f.has_target = true;
		f.target = kinst_a64_target(&d, in.addr);
	};
	switch (d.emul) {
	case KINST_A64_EM_BCOND:
		direct(Flow::jcc);
		f.cc = d.cond;
		break;
	case KINST_A64_EM_CBZ:
	case KINST_A64_EM_CBNZ:
	case KINST_A64_EM_TBZ:
	case KINST_A64_EM_TBNZ:
		direct(Flow::cbz);
		break;
	case KINST_A64_EM_B:
		direct(Flow::jmp);
		break;
	case KINST_A64_EM_BR:
	case KINST_A64_EM_BR_PAC:
		f.flow = Flow::jmp_ind;
		break;
	case KINST_A64_EM_RET:
	case KINST_A64_EM_RET_PAC:
		f.flow = Flow::ret;
		break;
	default:
		if (d.treatment == KINST_T_REFUSE &&
		    (d.reason == KINST_R_ERET || d.reason == KINST_R_UD))
			f.flow = Flow::stop;
		break;
	}
	return f;
}

// ---- the model ----

namespace {

// Does a loop-family instruction jump, given the key's flags and %rcx class?
bool
loop_taken(unsigned kind, uint64_t flags, uint64_t rcx)
{
	bool zf = (flags & 0x040) != 0;
	bool cont = rcx != COVER_RCX_ONE;	// %rcx - 1 != 0
	switch (kind) {
	case KINST_EM_LOOPNE: return cont && !zf;
	case KINST_EM_LOOPE: return cont && zf;
	case KINST_EM_LOOP: return cont;
	default: return rcx == COVER_RCX_ZERO;	// jrcxz
	}
}

// Does the conditional branch fl jump for every hit of key k (one whose
// split is known)?
bool
branch_taken(const FlowInfo &fl, const CoverKeyCount &k)
{
	switch (fl.flow) {
	case Flow::cbz:
		return k.rcx == COVER_A64_TAKEN;
	case Flow::loop:
		return loop_taken(fl.loop_kind, k.flags, k.rcx);
	default:	// jcc: x86-64's or an A64 b.cond
		return fl.a64 ? kinst_a64_cond_holds(fl.cc, k.flags << 28) :
		    cover_cond(fl.cc, k.flags);
	}
}

} // namespace

CoverFunction
cover_build(const std::string &module, const std::string &name, uint64_t addr,
    uint64_t size, const std::vector<CoverInput> &in, bool rcx_keyed)
{
	CoverFunction f;
	f.module = module;
	f.name = name;
	f.addr = addr;
	f.size = size;
	f.rcx_keyed = rcx_keyed;
	std::set<uint32_t> boundaries;
	for (const auto &x : in)
		boundaries.insert(x.insn->offset);
	std::set<uint32_t> targets;
	for (const auto &x : in) {
		const Insn &i = *x.insn;
		CoverInsn c;
		c.offset = i.offset;
		c.addr = i.addr;
		c.bytes = hex_bytes(i.bytes, i.len, "");
		c.text = x.text;
		c.target = x.target;
		if (!i.unreachable)
			c.fl = cover_flow_of(i);
		if (c.fl.has_target && c.fl.target >= addr && c.fl.target - addr < size &&
		    boundaries.count((uint32_t)(c.fl.target - addr))) {
			c.target_inside = true;
			c.target_offset = (uint32_t)(c.fl.target - addr);
			targets.insert(c.target_offset);
		}
		c.conditional = c.fl.flow == Flow::jcc || c.fl.flow == Flow::loop ||
		    c.fl.flow == Flow::cbz;
		if (x.armed) {
			c.state = CovState::counted;
			for (const auto &k : x.keys)
				c.count += k.count;
		} else if (!traceable(i) || i.unreachable) {
			c.state = CovState::refused;
			c.reason = i.unreachable ? "after-undecodable" : reason_name(i);
		} else {
			c.state = CovState::not_armed;
			c.reason = "not armed (the kernel refused it when arming)";
		}
		if (c.state == CovState::counted && c.conditional) {
			bool known = c.fl.flow == Flow::jcc ||
			    (c.fl.flow == Flow::loop && rcx_keyed && !c.fl.addr32) ||
			    (c.fl.flow == Flow::cbz && x.branch_keyed);
			if (known) {
				c.branch_known = true;
				for (const auto &k : x.keys)
					(branch_taken(c.fl, k) ? c.taken : c.not_taken) += k.count;
			}
		}
		f.insns.push_back(c);
	}
	// Leaders: the entry, every direct target inside, and every
	// instruction after one that does not simply fall through.
	for (size_t i = 0; i < f.insns.size(); i++) {
		CoverInsn &c = f.insns[i];
		c.leader = i == 0 || targets.count(c.offset) != 0 ||
		    f.insns[i - 1].fl.flow != Flow::next;
		if (c.leader) {
			CoverBlock b;
			b.id = (uint32_t)f.blocks.size();
			b.first = i;
			f.blocks.push_back(b);
		}
		CoverBlock &b = f.blocks.back();
		b.last = i;
		c.block = b.id;
		if (!b.known && c.state == CovState::counted) {
			b.known = true;
			b.count = c.count;
		}
	}
	for (const auto &c : f.insns) {
		f.counted += c.state == CovState::counted;
		f.refused += c.state == CovState::refused;
		f.not_armed += c.state == CovState::not_armed;
		f.executed += c.state == CovState::counted && c.count != 0;
	}
	for (const auto &b : f.blocks) {
		f.blocks_known += b.known;
		f.blocks_executed += b.known && b.count != 0;
	}
	for (auto &c : f.insns)
		cover_line_info(module, c.addr, &c.line);
	return f;
}

// ---- text ----

namespace {

std::string
state_name(CovState s)
{
	return s == CovState::counted ? "counted" : s == CovState::refused ?
	    "refused" : "not-armed";
}

std::string
branch_text(const CoverInsn &c)
{
	if (!c.conditional || c.state != CovState::counted)
		return "";
	if (!c.branch_known)
		return "taken ?, not taken ?";
	return "taken " + std::to_string(c.taken) + ", not taken " +
	    std::to_string(c.not_taken);
}

std::string
target_text(const CoverFunction &f, const CoverInsn &c)
{
	(void)f;
	if (!c.target_inside)
		return "";
	return "-> +" + hex(c.target_offset);
}

} // namespace

std::string
cover_text(const CoverFunction &f, const Style &st)
{
	std::string out;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s:%s (%s, %" PRIu64 " bytes): %zu instructions, "
	    "%" PRIu64 " counted (%" PRIu64 " executed, %" PRIu64 " never), %" PRIu64
	    " refused, %" PRIu64 " not armed; %zu blocks, %" PRIu64 " executed, %" PRIu64
	    " never\n", f.module.c_str(), f.name.c_str(), hex(f.addr).c_str(), f.size,
	    f.insns.size(), f.counted, f.executed, f.counted - f.executed, f.refused,
	    f.not_armed, f.blocks.size(), f.blocks_executed, f.blocks_known - f.blocks_executed);
	out += st.paint("1", buf);
	snprintf(buf, sizeof(buf), "  %-14s %-9s %12s  %s\n", "BLOCK", "OFFSET", "COUNT",
	    "INSTRUCTION");
	out += buf;
	for (const auto &c : f.insns) {
		std::string blk;
		if (c.leader) {
			const CoverBlock &b = f.blocks[c.block];
			blk = "B" + std::to_string(b.id) + " " +
			    (b.known ? (b.count ? "x" + std::to_string(b.count) : "#####") : "?");
		}
		std::string cnt = c.state == CovState::counted ?
		    (c.count ? std::to_string(c.count) : "#####") : state_name(c.state);
		std::string extra;
		std::string t = target_text(f, c), br = branch_text(c);
		if (!t.empty())
			extra += "  " + t;
		if (!br.empty())
			extra += "  [" + br + "]";
		if (c.state != CovState::counted)
			extra += "  (" + c.reason + ")";
		snprintf(buf, sizeof(buf), "  %-14s %-9s %12s  %s", blk.c_str(),
		    ("+" + hex(c.offset)).c_str(), cnt.c_str(), c.text.c_str());
		std::string line = std::string(buf) + extra;
		if (c.state == CovState::counted && c.count == 0)
			line = st.paint("31", line);
		else if (c.state != CovState::counted)
			line = st.paint("2", line);
		out += line + "\n";
	}
	return out;
}

// ---- JSON ----

std::vector<nlohmann::json>
cover_json(const CoverFunction &f, const CoverRun &r)
{
	std::vector<nlohmann::json> v;
	nlohmann::json j;
	j["schema"] = KINST_JSON_SCHEMA;
	j["type"] = "cover_function";
	j["module"] = f.module;
	j["function"] = f.name;
	j["address"] = hex(f.addr);
	j["size"] = f.size;
	j["instructions"] = f.insns.size();
	j["counted"] = f.counted;
	j["executed"] = f.executed;
	j["never_executed"] = f.counted - f.executed;
	j["refused"] = f.refused;
	j["not_armed"] = f.not_armed;
	nlohmann::json bl = nlohmann::json::array();
	for (const auto &b : f.blocks) {
		nlohmann::json o;
		o["block"] = b.id;
		o["offset"] = f.insns[b.first].offset;
		o["end"] = f.insns[b.last].offset + (uint32_t)f.insns[b.last].bytes.size() / 2;
		o["count"] = b.known ? nlohmann::json(b.count) : nlohmann::json();
		bl.push_back(o);
	}
	j["blocks"] = bl;
	j["blocks_executed"] = f.blocks_executed;
	j["exact"] = r.exact();
	j["source"] = r.source_note.empty() ? nlohmann::json(true) : nlohmann::json(false);
	v.push_back(j);
	for (const auto &c : f.insns) {
		nlohmann::json o;
		o["schema"] = KINST_JSON_SCHEMA;
		o["type"] = "cover_insn";
		o["module"] = f.module;
		o["function"] = f.name;
		o["offset"] = c.offset;
		o["address"] = hex(c.addr);
		o["bytes"] = c.bytes;
		o["text"] = c.text;
		if (c.target.set)
			o["target"] = c.target.json();
		o["state"] = state_name(c.state);
		if (c.state != CovState::counted)
			o["reason"] = c.reason;
		o["count"] = c.state == CovState::counted ? nlohmann::json(c.count) :
		    nlohmann::json();
		o["block"] = c.block;
		o["leader"] = c.leader;
		if (c.target_inside)
			o["target"] = c.target_offset;
		if (c.conditional) {
			bool k = c.state == CovState::counted && c.branch_known;
			o["taken"] = k ? nlohmann::json(c.taken) : nlohmann::json();
			o["not_taken"] = k ? nlohmann::json(c.not_taken) : nlohmann::json();
		}
		if (c.line.line > 0) {
			o["file"] = c.line.file;
			o["line"] = c.line.line;
		}
		v.push_back(o);
	}
	return v;
}

// ---- HTML ----

std::string
html_escape(const std::string &s)
{
	std::string o;
	for (char ch : s) {
		switch (ch) {
		case '&': o += "&amp;"; break;
		case '<': o += "&lt;"; break;
		case '>': o += "&gt;"; break;
		case '"': o += "&quot;"; break;
		case '\'': o += "&#39;"; break;
		default: o += ch;
		}
	}
	return o;
}

namespace {

const char *const html_head =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<title>kinst cover</title>\n<style>\n"
    "body{font-family:sans-serif;margin:1em}\n"
    "table.cover{border-collapse:collapse;font-family:monospace;font-size:13px}\n"
    "table.cover th{cursor:pointer;background:#eee;text-align:left;padding:2px 8px}\n"
    "table.cover td{padding:1px 8px;white-space:pre}\n"
    "td.count{text-align:right}\n"
    "tr.leader td{border-top:1px solid #bbb}\n"
    "tr.never{background:#f8c8c8}\n"
    "tr.never td.count{color:#b00;font-weight:bold}\n"
    "tr.refused,tr.not-armed{color:#888;background:#f4f4f4}\n"
    "table.nosrc .src{display:none}\n"
    ".note{color:#555}\n"
    "</style>\n</head>\n<body>\n<h1>kinst cover</h1>\n";

// Click a header with data-sort: rows sorted by that numeric attribute
// (again: the other way).  Inline, no external asset.
const char *const html_script =
    "<script>\n"
    "document.querySelectorAll('table.cover th[data-sort]').forEach(function(th){\n"
    " th.addEventListener('click',function(){\n"
    "  var tb=th.closest('table').tBodies[0],k=th.getAttribute('data-sort');\n"
    "  var d=th.getAttribute('data-dir')==='desc'?'asc':'desc';th.setAttribute('data-dir',d);\n"
    "  var rows=Array.prototype.slice.call(tb.rows);\n"
    "  rows.sort(function(a,b){var x=Number(a.getAttribute('data-'+k)),y=Number(b.getAttribute('data-'+k));\n"
    "   return d==='asc'?x-y:y-x;});\n"
    "  rows.forEach(function(r){tb.appendChild(r);});\n"
    " });\n"
    "});\n"
    "</script>\n";

} // namespace

std::string
cover_html(const std::vector<CoverFunction> &fs, const CoverRun &r)
{
	std::string h = html_head;
	h += "<p class=\"note\">" + html_escape(r.workload) + "; " +
	    std::to_string(r.hits) + " hits, " + std::to_string(r.aggregated) + " counted, " +
	    std::to_string(r.overflow) + " overflowed, " + std::to_string(r.nested) +
	    " nested: counts are " + (r.exact() ? "exact" : "NOT exact (see the warnings)") +
	    ".</p>\n";
	if (!r.source_note.empty())
		h += "<p class=\"note\">" + html_escape(r.source_note) + "</p>\n";
	for (const auto &f : fs) {
		uint64_t top = 0;
		for (const auto &c : f.insns)
			top = std::max(top, c.count);
		h += "<section class=\"function\" data-module=\"" + html_escape(f.module) +
		    "\" data-function=\"" + html_escape(f.name) + "\">\n<h2>" +
		    html_escape(f.module + ":" + f.name) + "</h2>\n<p class=\"note\">" +
		    std::to_string(f.insns.size()) + " instructions: " +
		    std::to_string(f.counted) + " counted (" + std::to_string(f.executed) +
		    " executed, " + std::to_string(f.counted - f.executed) + " never), " +
		    std::to_string(f.refused) + " refused, " + std::to_string(f.not_armed) +
		    " not armed; " + std::to_string(f.blocks.size()) + " blocks, " +
		    std::to_string(f.blocks_executed) + " executed.</p>\n";
		bool src = r.source_note.empty();
		h += std::string("<table class=\"cover") + (src ? "" : " nosrc") + "\">\n"
		    "<thead><tr><th data-sort=\"offset\">offset</th>"
		    "<th data-sort=\"count\">count</th><th>block</th>"
		    "<th class=\"src\">source</th><th>instruction</th><th>branch</th></tr></thead>\n<tbody>\n";
		for (const auto &c : f.insns) {
			std::string cls = state_name(c.state);
			if (c.state == CovState::counted && c.count == 0)
				cls = "never";
			if (c.leader)
				cls += " leader";
			h += "<tr class=\"" + cls + "\" data-offset=\"" + std::to_string(c.offset) +
			    "\" data-count=\"" + (c.state == CovState::counted ?
			    std::to_string(c.count) : std::string("-1")) + "\"";
			if (c.conditional && c.branch_known && c.state == CovState::counted)
				h += " data-taken=\"" + std::to_string(c.taken) +
				    "\" data-not-taken=\"" + std::to_string(c.not_taken) + "\"";
			if (c.state == CovState::counted && c.count != 0 && top != 0) {
				// Heat: a log scale of the function's largest count.
				double x = std::log((double)c.count + 1) / std::log((double)top + 1);
				char st[64];
				snprintf(st, sizeof(st), " style=\"background:hsl(%d,95%%,%d%%)\"",
				    (int)(60 - 60 * x), (int)(92 - 30 * x));
				h += st;
			}
			h += "><td>+" + hex(c.offset) + "</td><td class=\"count\">" +
			    (c.state == CovState::counted ? (c.count ? std::to_string(c.count) :
			    std::string("0")) : html_escape(state_name(c.state))) + "</td><td>" +
			    (c.leader ? "B" + std::to_string(c.block) : std::string()) +
			    "</td><td class=\"src\">" + (c.line.line > 0 ?
			    html_escape(c.line.file + ":" + std::to_string(c.line.line)) : "") +
			    "</td><td><code>" + html_escape(c.text) + "</code>" +
			    (c.target_inside ? " &rarr; +" + hex(c.target_offset) : "") +
			    (c.state != CovState::counted ? " <i>(" + html_escape(c.reason) + ")</i>" : "") +
			    "</td><td>" + html_escape(branch_text(c)) + "</td></tr>\n";
		}
		h += "</tbody>\n</table>\n</section>\n";
	}
	h += html_script;
	h += "</body>\n</html>\n";
	return h;
}

} // namespace kinst
