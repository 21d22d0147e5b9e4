// SPDX-License-Identifier: BSD-2-Clause
#include "output/record_text.h"

#include "base/text.h"

namespace kinst {

namespace {

const CaptureDesc *
desc_of(const CaptureData &c, const std::vector<CaptureDesc> &d)
{
	return c.index < d.size() && d[c.index].str == c.str ? &d[c.index] : nullptr;
}

std::string
cap_name(const CaptureData &c, const std::vector<CaptureDesc> &d)
{
	const CaptureDesc *cd = desc_of(c, d);
	return cd ? cd->expr : "capture#" + std::to_string(c.index);
}

// hexdump -C: offset, 16 bytes in two groups of 8, |ASCII|.
std::string
hexdump(const std::string &b, const char *indent)
{
	std::string s;
	for (size_t off = 0; off < b.size(); off += 16) {
		char line[96];
		int n = snprintf(line, sizeof(line), "%s%08zx  ", indent, off);
		std::string l(line, (size_t)n);
		for (size_t i = 0; i < 16; i++) {
			if (off + i < b.size()) {
				snprintf(line, sizeof(line), "%02x ", (unsigned char)b[off + i]);
				l += line;
			} else
				l += "   ";
			if (i == 7)
				l += " ";
		}
		l += " |";
		for (size_t i = 0; i < 16 && off + i < b.size(); i++) {
			unsigned char ch = (unsigned char)b[off + i];
			l += ch >= 0x20 && ch < 0x7f ? (char)ch : '.';
		}
		s += "\n" + l + "|";
	}
	return s;
}

} // namespace

std::string
text_captures(const HitRecord &r, const std::vector<CaptureDesc> &d)
{
	std::string s;
	for (const CaptureData &c : r.caps) {
		s += "\n    " + std::string(c.str ? "str " : "mem ") + cap_name(c, d);
		if (c.flags & KINST_SECF_DEREF) {
			s += ": fault computing the address";
			continue;
		}
		s += " @ " + hex(c.address) + ": ";
		if (c.flags & KINST_SECF_FAULT) {
			s += "fault reading the " + std::string(c.str ? "string" : "bytes");
			continue;
		}
		if (c.str) {
			s += c_quote(c.bytes);
			if (c.flags & KINST_SECF_TRUNCATED)
				s += "... (cut at " + std::to_string(c.bytes.size()) + " bytes)";
		} else {
			s += std::to_string(c.bytes.size()) + " bytes";
			s += hexdump(c.bytes, "        ");
		}
	}
	return s;
}

void
json_captures(nlohmann::json &j, const HitRecord &r, const std::vector<CaptureDesc> &d)
{
	nlohmann::json mem = nlohmann::json::array(), str = nlohmann::json::array();
	for (const CaptureData &c : r.caps) {
		nlohmann::json o;
		o["expr"] = cap_name(c, d);
		if (c.flags & KINST_SECF_DEREF) {
			o["address"] = nullptr;
			o["fault"] = "address";
		} else if (c.flags & KINST_SECF_FAULT) {
			o["address"] = hex(c.address);
			o["fault"] = "read";
		} else {
			o["address"] = hex(c.address);
			if (c.str) {
				o["string"] = c.bytes;
				o["truncated"] = (c.flags & KINST_SECF_TRUNCATED) != 0;
			} else {
				std::string h;
				for (unsigned char ch : c.bytes) {
					char b[3];
					snprintf(b, sizeof(b), "%02x", ch);
					h += b;
				}
				o["bytes"] = h;
			}
		}
		(c.str ? str : mem).push_back(o);
	}
	if (!mem.empty())
		j["mem"] = mem;
	if (!str.empty())
		j["str"] = str;
}

std::string
text_frame(const Frame &f)
{
	if (!f.resolved)
		return hex(f.address) + " [?]";
	return f.function + "+" + hex(f.offset) + " [" + f.module + "]";
}

std::string
folded_frame(const Frame &f, bool functions)
{
	if (!f.resolved)
		return hex(f.address);
	std::string n = f.module.empty() || f.module == "kernel" ? "" : f.module + ":";
	n += f.function;
	if (!functions)
		n += "+" + hex(f.offset);
	// Symbol names have neither; a name that did would break the format.
	for (char &c : n)
		if (c == ' ' || c == ';' || c == '\t' || c == '\n')
			c = '_';
	return n;
}

nlohmann::json
json_frame(const Frame &f)
{
	nlohmann::json j;
	j["address"] = hex(f.address);
	if (f.resolved) {
		j["function"] = f.function;
		j["offset"] = f.offset;
		j["module"] = f.module;
	} else {
		j["function"] = nullptr;
		j["offset"] = nullptr;
		j["module"] = nullptr;
	}
	return j;
}

std::string
text_stack(const HitRecord &r, StackSymbolizer &sym)
{
	std::string s;
	for (size_t i = 0; i < r.stack.size(); i++)
		s += "\n        " + text_frame(sym.frame(r.stack[i], i));
	if (r.stack_truncated)
		s += "\n        ... (truncated at " + std::to_string(KINST_STACK_MAX) + " frames)";
	return s;
}

void
json_stack(nlohmann::json &j, const HitRecord &r, StackSymbolizer &sym)
{
	nlohmann::json a = nlohmann::json::array();
	for (size_t i = 0; i < r.stack.size(); i++)
		a.push_back(json_frame(sym.frame(r.stack[i], i)));
	j["stack"] = a;
	j["stack_truncated"] = r.stack_truncated;
}

} // namespace kinst
