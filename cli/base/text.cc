// SPDX-License-Identifier: BSD-2-Clause
#include "base/text.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/branch.h"
#include "base/error.h"

namespace kinst {

using nlohmann::json;

char *
hex_digits(char *end, uint64_t v, int width)
{
	static const char digits[] = "0123456789abcdef";
	char *p = end;
	do {
		*--p = digits[v & 15];
		v >>= 4;
	} while (v != 0);
	while (end - p < width && end - p < 16)
		*--p = '0';
	return p;
}

char *
u64_digits(char *end, uint64_t v)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return p;
}

// Appends v in lower-case hex, at least width (at most 16) digits, no
// prefix, in one append (the hit formatter calls it ~20 times a record).
void
append_hex(std::string &s, uint64_t v, int width)
{
	char b[16];
	char *p = hex_digits(b + sizeof(b), v, width);
	s.append(p, (size_t)(b + sizeof(b) - p));
}

void
append_hex0x(std::string &s, uint64_t v)
{
	s += "0x";
	append_hex(s, v, 0);
}

void
append_u64(std::string &out, uint64_t v)
{
	char b[24];
	char *p = u64_digits(b + sizeof(b), v);
	out.append(p, (size_t)(b + sizeof(b) - p));
}

void
append_i64(std::string &out, int64_t v)
{
	if (v < 0) {
		out += '-';
		append_u64(out, (uint64_t)0 - (uint64_t)v);
	} else {
		append_u64(out, (uint64_t)v);
	}
}

std::string
hex(uint64_t v)
{
	std::string s;
	append_hex0x(s, v);
	return s;
}

void
append_hex_bytes(std::string &s, const uint8_t *p, size_t n, const char *sep)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		if (i && *sep)
			s += sep;
		s += digits[p[i] >> 4];
		s += digits[p[i] & 15];
	}
}

std::string
hex_bytes(const uint8_t *p, size_t n, const char *sep)
{
	std::string s;
	s.reserve(n * 3);
	append_hex_bytes(s, p, n, sep);
	return s;
}

std::string
BranchTarget::annotation() const
{
	if (!set || !resolved)
		return "";
	std::string a = " <";
	if (other_module)
		a += module + ":";
	a += function;
	if (offset)
		a += "+" + hex(offset);
	return a + ">";
}

nlohmann::json
BranchTarget::json() const
{
	nlohmann::json t;
	t["address"] = hex(address);
	t["function"] = resolved ? nlohmann::json(function) : nlohmann::json();
	t["module"] = resolved ? nlohmann::json(module) : nlohmann::json();
	t["offset"] = resolved ? nlohmann::json(offset) : nlohmann::json();
	return t;
}

char *
json_string_into(char *o, const char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	*o++ = '"';
	// Runs that need no escape are copied whole (list-offsets --json
	// writes a few names per instruction).
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c != '"' && c != '\\' && c >= 0x20 && c < 0x7f)
			continue;
		memcpy(o, p + run, i - run);
		o += i - run;
		run = i + 1;
		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = (char)c;
		} else {
			memcpy(o, "\\u00", 4);
			o[4] = digits[c >> 4];
			o[5] = digits[c & 15];
			o += 6;
		}
	}
	memcpy(o, p + run, n - run);
	o += n - run;
	*o++ = '"';
	return o;
}

void
append_json_string(std::string &out, const std::string &s)
{
	size_t old = out.size();
	out.resize(old + json_string_room(s.size()));
	char *end = json_string_into(&out[old], s.data(), s.size());
	out.resize((size_t)(end - out.data()));
}

std::string
json_line(const json &j)
{
	return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// ---- registers ----

const char *const gpr_names[KINST_NGPR] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp",
    "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};

std::string
text_rflags(uint64_t fl)
{
	static const struct { uint64_t bit; const char *name; } bits[] = {
		{KINST_FL_CF, "CF"}, {KINST_FL_PF, "PF"}, {KINST_FL_AF, "AF"},
		{KINST_FL_ZF, "ZF"}, {KINST_FL_SF, "SF"}, {KINST_FL_TF, "TF"},
		{KINST_FL_IF, "IF"}, {KINST_FL_DF, "DF"}, {KINST_FL_OF, "OF"},
		{KINST_FL_NT, "NT"}, {KINST_FL_RF, "RF"}, {KINST_FL_AC, "AC"},
		{KINST_FL_ID, "ID"},
	};
	std::string s = hex(fl) + "[";
	bool first = true;
	for (const auto &b : bits)
		if (fl & b.bit) {
			s += (first ? "" : " ") + std::string(b.name);
			first = false;
		}
	return s + "]";
}

std::string
text_regs(const struct kinst_regs &r, bool all)
{
	std::string s = "rip=" + hex(r.rip) + " rsp=" + hex(r.gpr[KINST_RSP]);
	if (!all) {
		// The System V argument and return registers.
		static const int order[] = {KINST_RAX, KINST_RDI, KINST_RSI, KINST_RDX,
		    KINST_RCX, KINST_R8, KINST_R9};
		for (int g : order)
			s += std::string(" ") + gpr_names[g] + "=" + hex(r.gpr[g]);
		return s;
	}
	for (int g = 0; g < KINST_NGPR; g++)
		if (g != KINST_RSP)
			s += std::string(" ") + gpr_names[g] + "=" + hex(r.gpr[g]);
	s += " rflags=" + text_rflags(r.rflags) + " cs=" + hex(r.cs) + " ss=" + hex(r.ss);
	return s;
}

json
json_regs(const struct kinst_regs &r)
{
	json j = json::object();
	for (int g = 0; g < KINST_NGPR; g++)
		j[gpr_names[g]] = hex(r.gpr[g]);
	j["rip"] = hex(r.rip);
	j["rflags"] = hex(r.rflags);
	j["cs"] = hex(r.cs);
	j["ss"] = hex(r.ss);
	return j;
}

uint64_t
reg_value(const struct kinst_regs &r, int which)
{
	switch (which) {
	case KREG_RIP: return r.rip;
	case KREG_RFLAGS: return r.rflags;
	case KREG_CS: return r.cs;
	case KREG_SS: return r.ss;
	default: return r.gpr[which];
	}
}

const char *
reg_name(int which)
{
	switch (which) {
	case KREG_RIP: return "rip";
	case KREG_RFLAGS: return "rflags";
	case KREG_CS: return "cs";
	case KREG_SS: return "ss";
	default: return gpr_names[which];
	}
}

std::vector<int>
parse_reg_list(const std::string &list, const std::string &what)
{
	static const char *const known = "rax rbx rcx rdx rsi rdi rbp rsp r8 .. r15, "
	    "rip, rflags, cs, ss";
	std::vector<int> out;
	size_t at = 0;
	for (;;) {
		size_t comma = list.find(',', at);
		std::string name = list.substr(at, comma == std::string::npos ?
		    std::string::npos : comma - at);
		if (name.empty())
			throw Error(Exit::usage, what + " " + list + ": an empty register "
			    "name (registers are " + known + ", separated by commas)");
		int which = 0;
		bool found = false;
		for (int w = KREG_SS; w < KINST_NGPR && !found; w++)
			if (name == reg_name(w)) {
				which = w;
				found = true;
			}
		if (!found)
			throw Error(Exit::usage, what + " " + list + ": no register \"" +
			    name + "\" (registers are " + known + "; or compact, all)");
		if (std::find(out.begin(), out.end(), which) == out.end())
			out.push_back(which);
		if (comma == std::string::npos)
			return out;
		at = comma + 1;
	}
}

std::string
reg_list_text(const std::vector<int> &l)
{
	std::string s;
	for (int w : l)
		s += (s.empty() ? "" : ",") + std::string(reg_name(w));
	return s;
}

std::string
text_regs_list(const struct kinst_regs &r, const std::vector<int> &l)
{
	std::string s;
	for (int w : l) {
		if (!s.empty())
			s += ' ';
		s += std::string(reg_name(w)) + "=" + (w == KREG_RFLAGS ?
		    text_rflags(r.rflags) : hex(reg_value(r, w)));
	}
	return s;
}

json
json_regs_list(const struct kinst_regs &r, const std::vector<int> &l)
{
	json j = json::object();
	for (int w : l)
		j[reg_name(w)] = hex(reg_value(r, w));
	return j;
}

std::string
c_quote(const std::string &s)
{
	std::string q = "\"";
	for (unsigned char ch : s) {
		switch (ch) {
		case '\\': q += "\\\\"; break;
		case '"': q += "\\\""; break;
		case '\n': q += "\\n"; break;
		case '\t': q += "\\t"; break;
		case '\r': q += "\\r"; break;
		default:
			if (ch < 0x20 || ch >= 0x7f) {
				char b[8];
				snprintf(b, sizeof(b), "\\%03o", ch);
				q += b;
			} else
				q += (char)ch;
		}
	}
	return q + "\"";
}

} // namespace kinst