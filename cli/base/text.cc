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

int
sched_clock_stable_in(const std::string &text)
{
	static const char name[] = "sched_clock_stable()";
	for (size_t pos = 0; pos < text.size(); ) {
		size_t end = text.find('\n', pos);
		if (end == std::string::npos)
			end = text.size();
		if (text.compare(pos, sizeof(name) - 1, name) == 0) {
			size_t i = pos + sizeof(name) - 1;
			while (i < end && text[i] == ' ')
				i++;
			if (i == end || text[i] != ':')
				return -1;
			for (i++; i < end && text[i] == ' '; i++)
				;
			if (end - i == 1 && (text[i] == '0' || text[i] == '1'))
				return text[i] - '0';
			return -1;
		}
		pos = end + 1;
	}
	return -1;
}

} // namespace kinst
