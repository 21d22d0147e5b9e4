// SPDX-License-Identifier: BSD-2-Clause
#include "base/spec.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/text.h"
#include "base/abi.h"

namespace kinst {

namespace {

[[noreturn]] void
bad(const std::string &text, const std::string &why)
{
	// Quote the spec but keep the message on one line and printable.
	std::string q;
	for (unsigned char c : text.substr(0, 160)) {
		if (c >= 0x20 && c < 0x7f) {
			q += (char)c;
		} else {
			char b[8];
			snprintf(b, sizeof(b), "\\x%02x", c);
			q += b;
		}
	}
	if (text.size() > 160)
		q += "...";
	throw Error(Exit::bad_spec, "probe spec '" + q + "': " + why);
}

bool
is_func_char(char c, bool first)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '.' || c == '$')
		return true;
	return !first && c >= '0' && c <= '9';
}

bool
is_mod_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '_' || c == '.' || c == '-';
}

// A source file name: a path, or a name with a source suffix.
bool
looks_like_file(const std::string &s)
{
	static const char *const sfx[] = { ".c", ".h", ".S", ".s", ".cc", ".cpp" };
	if (s.find('/') != std::string::npos)
		return true;
	for (const char *x : sfx) {
		size_t n = strlen(x);
		if (s.size() > n && s.compare(s.size() - n, n, x) == 0)
			return true;
	}
	return false;
}

bool
is_decimal(const std::string &s)
{
	if (s.empty() || s.size() > 9)
		return false;
	for (char c : s)
		if (c < '0' || c > '9')
			return false;
	return true;
}

} // namespace

bool
parse_number(const std::string &s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	unsigned base = 10;
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i >= s.size())
		return false;
	for (; i < s.size(); i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		if (v > (max - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

uint64_t
parse_size(const std::string &s, const std::string &what)
{
	std::string n = s;
	unsigned shift = 0;
	if (!n.empty()) {
		char c = n.back();
		if (c == 'k' || c == 'K')
			shift = 10;
		else if (c == 'm' || c == 'M')
			shift = 20;
		else if (c == 'g' || c == 'G')
			shift = 30;
		if (shift)
			n.pop_back();
	}
	uint64_t v;
	if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos ||
	    !parse_number(n, UINT64_MAX >> shift, &v))
		throw Error(Exit::usage, what + " " + s + ": not a size (bytes, or a number "
		    "with K, M or G)");
	return v << shift;
}

static bool
is_number_syntax(const std::string &s)
{
	uint64_t dummy;
	return parse_number(s, UINT64_MAX, &dummy);
}

static uint32_t
parse_offset(const std::string &text, const std::string &s)
{
	uint64_t v;
	if (s.empty())
		bad(text, "empty offset");
	if (parse_number(s, UINT32_MAX, &v))
		return (uint32_t)v;
	if (s.size() < 200 && is_number_syntax(s))
		bad(text, "offset " + s + " is absurdly large (functions are smaller than 4 GiB)");
	bool digits = true;
	for (size_t i = (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 2 : 0;
	    i < s.size(); i++)
		if (!isxdigit((unsigned char)s[i]))
			digits = false;
	if (digits && s.size() >= 200)
		bad(text, "offset is absurdly large");
	bad(text, "offset '" + s.substr(0, 40) + "' is not a decimal or 0x-hex number");
}

static void
check_module(const std::string &text, const std::string &m)
{
	if (m.size() >= KINST_MODNAME_MAX)
		bad(text, "module name longer than " + std::to_string(KINST_MODNAME_MAX - 1) + " characters");
	for (char c : m)
		if (!is_mod_char(c))
			bad(text, "bad character in module name");
}

static void
check_func(const std::string &text, const std::string &func)
{
	if (func.empty())
		bad(text, "no function name");
	if (func.size() >= KINST_NAME_MAX)
		bad(text, "function name longer than " + std::to_string(KINST_NAME_MAX - 1) + " characters");
	for (size_t i = 0; i < func.size(); i++)
		if (!is_func_char(func[i], i == 0))
			bad(text, i == 0 && func[i] >= '0' && func[i] <= '9' ?
			    "a function name cannot start with a digit (addresses are written 0x...)" :
			    "bad character in function name");
}

// FILE:LINE, MODULE:FILE:LINE, FUNC:LINE, [MODULE:]FUNC:entry|return.
// False if the spec is not one of them.
static bool
parse_source_spec(const std::string &text, const std::vector<std::string> &parts, Spec &sp)
{
	size_t n = parts.size();
	if (n < 2 || n > 3)
		return false;
	const std::string &last = parts[n - 1], &name = parts[n - 2];
	if (last == "entry" || last == "return") {
		sp.kind = last == "entry" ? SpecKind::inline_entry : SpecKind::inline_return;
		check_func(text, name);
		sp.function = name;
		if (n == 3) {
			check_module(text, parts[0]);
			sp.module = parts[0];
		}
		return true;
	}
	if (looks_like_file(name)) {
		if (!is_decimal(last) || last == "0")
			bad(text, "line '" + last.substr(0, 40) + "' of " + name.substr(0, 80) +
			    " is not a line number (1 or more, decimal)");
		for (unsigned char c : name)
			if (c <= 0x20 || c >= 0x7f)
				bad(text, "bad character in file name");
		sp.kind = SpecKind::file_line;
		sp.file = name;
		sp.line = (uint32_t)std::stoul(last);
		if (n == 3) {
			check_module(text, parts[0]);
			sp.module = parts[0];
		}
		return true;
	}
	if (n == 2 && is_decimal(last) && !name.empty() && is_func_char(name[0], true)) {
		check_func(text, name);
		if (last == "0")
			bad(text, "line 0 is not a line number");
		sp.kind = SpecKind::func_line;
		sp.function = name;
		sp.line = (uint32_t)std::stoul(last);
		return true;
	}
	return false;
}

Spec
parse_spec(const std::string &text)
{
	Spec sp;
	sp.text = text;
	if (text.empty())
		bad(text, "empty spec (expected FUNC, FUNC+OFFSET, MODULE:FUNC[:OFFSET] or 0xADDRESS)");
	if (text.size() > 1024)
		bad(text, "absurdly long (over 1024 characters)");

	if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		uint64_t v;
		if (!parse_number(text, UINT64_MAX, &v)) {
			bool hex = true;
			for (size_t i = 2; i < text.size(); i++)
				if (!isxdigit((unsigned char)text[i]))
					hex = false;
			bad(text, hex ? "address does not fit in 64 bits" : "bad hexadecimal address");
		}
		sp.is_address = true;
		sp.address = v;
		return sp;
	}

	std::vector<std::string> parts;
	size_t start = 0;
	for (;;) {
		size_t c = text.find(':', start);
		parts.push_back(text.substr(start, c == std::string::npos ? std::string::npos : c - start));
		if (c == std::string::npos)
			break;
		start = c + 1;
	}
	if (parts.size() >= 2 && parts[0] == "kinst" && parts.size() <= 4 &&
	    (parts.size() == 4 || parts.size() == 3)) {
		// DTrace-like "kinst:module:func[:offset]": drop the provider
		// only if what remains is still well-formed.
		if (parts.size() == 4 || (parts.size() == 3 && !is_number_syntax(parts[2])))
			parts.erase(parts.begin());
	}
	if (parse_source_spec(text, parts, sp))
		return sp;
	std::string func;
	switch (parts.size()) {
	case 1:
		func = parts[0];
		break;
	case 2:
		sp.module = parts[0];
		func = parts[1];
		break;
	case 3:
		sp.module = parts[0];
		func = parts[1];
		if (func.find('+') != std::string::npos)
			bad(text, "both '+OFFSET' and ':OFFSET' given");
		sp.offset = parse_offset(text, parts[2]);
		sp.has_offset = true;
		break;
	default:
		bad(text, "too many ':' (expected MODULE:FUNC:OFFSET at most)");
	}
	size_t plus = func.find('+');
	if (plus != std::string::npos) {
		sp.offset = parse_offset(text, func.substr(plus + 1));
		sp.has_offset = true;
		func.resize(plus);
	}
	if (sp.module.size() >= KINST_MODNAME_MAX)
		bad(text, "module name longer than " + std::to_string(KINST_MODNAME_MAX - 1) + " characters");
	for (char c : sp.module)
		if (!is_mod_char(c))
			bad(text, "bad character in module name");
	check_func(text, func);
	sp.function = func;
	return sp;
}

std::string
spec_label(const Spec &sp)
{
	std::string s = sp.module.empty() ? sp.function : sp.module + ":" + sp.function;
	if (sp.has_offset)
		s += "+" + hex(sp.offset);
	return s;
}

} // namespace kinst
