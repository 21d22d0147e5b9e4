// SPDX-License-Identifier: BSD-2-Clause
// The register file's names, lists and text (regfile.h), over the
// instruction set's description (regfile_x86.cc, regfile_arm64.cc).
#include <algorithm>

#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"

namespace kinst {

using json = nlohmann::json;

// Both layouts are words, the program's numbers in order (each
// instruction set's file asserts the offsets).
const uint64_t *
reg_words(const struct kinst_regs &r)
{
	return reinterpret_cast<const uint64_t *>(&r);
}

const char *
reg_name(int which)
{
	return which >= 0 && which < regfile.count ? regfile.names[which] : "?";
}

int
reg_lookup(const std::string &name)
{
	for (int w = 0; w < regfile.count; w++)
		if (name == regfile.names[w])
			return w;
	for (int i = 0; i < regfile.naliases; i++)
		if (name == regfile.aliases[i].name)
			return regfile.aliases[i].reg;
	return -1;
}

std::string
text_regs(const struct kinst_regs &r, bool all)
{
	std::string s = std::string(reg_name(regfile.pc)) + "=" + hex(reg_value(r, regfile.pc)) +
	    " " + reg_name(regfile.sp) + "=" + hex(reg_value(r, regfile.sp));
	if (!all) {
		for (int i = 0; i < regfile.ncompact; i++)
			s += std::string(" ") + reg_name(regfile.compact[i]) + "=" +
			    hex(reg_value(r, regfile.compact[i]));
		return s;
	}
	for (int w = 0; w < regfile.count; w++) {
		if (w == regfile.pc || w == regfile.sp)
			continue;
		s += std::string(" ") + reg_name(w) + "=" + (w == regfile.flags ?
		    text_flags(reg_value(r, w)) : hex(reg_value(r, w)));
	}
	return s;
}

json
json_regs(const struct kinst_regs &r)
{
	json j = json::object();
	for (int w = 0; w < regfile.count; w++)
		j[reg_name(w)] = hex(reg_value(r, w));
	return j;
}

std::vector<int>
parse_reg_list(const std::string &list, const std::string &what)
{
	std::vector<int> out;
	size_t at = 0;
	for (;;) {
		size_t comma = list.find(',', at);
		std::string name = list.substr(at, comma == std::string::npos ?
		    std::string::npos : comma - at);
		if (name.empty())
			throw Error(Exit::usage, what + " " + list + ": an empty register "
			    "name (registers are " + regfile.known + ", separated by commas)");
		int which = reg_lookup(name);
		if (which < 0)
			throw Error(Exit::usage, what + " " + list + ": no register \"" +
			    name + "\" (registers are " + regfile.known + "; or compact, all)");
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
		s += std::string(reg_name(w)) + "=" + (w == regfile.flags ?
		    text_flags(reg_value(r, w)) : hex(reg_value(r, w)));
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

} // namespace kinst
