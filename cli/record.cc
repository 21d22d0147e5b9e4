// SPDX-License-Identifier: BSD-2-Clause
// Hit records with sections; stack symbolization.  See record.h.
#include "record.h"

#include <cstring>

#include "error.h"
#include "format.h"
#include "live.h"
#include "sources.h"
#include "symbols.h"

namespace kinst {

namespace {

[[noreturn]] void
malformed(const std::string &why)
{
	throw Error(Exit::live, "read: malformed record from the module: " + why);
}

void
parse_stack(HitRecord &r, const struct kinst_rec_sec &s, const uint8_t *payload)
{
	if (r.has_stack)
		malformed("two stack sections");
	if (s.len % 8 != 0 || s.len == 0 || s.len / 8 > KINST_STACK_MAX)
		malformed("stack section of " + std::to_string(s.len) + " bytes");
	r.has_stack = true;
	r.stack_truncated = (s.flags & KINST_SECF_TRUNCATED) != 0;
	r.stack.resize(s.len / 8);
	memcpy(r.stack.data(), payload, s.len);
}

void
parse_capture_sec(HitRecord &r, const struct kinst_rec_sec &s, const uint8_t *payload)
{
	struct kinst_rec_cap c;
	const char *what = s.type == KINST_SEC_STR ? "string" :
	    s.type == KINST_SEC_VAL ? "value" : "memory";
	if (s.len < sizeof(c))
		malformed(std::string(what) + " section of " + std::to_string(s.len) + " bytes");
	memcpy(&c, payload, sizeof(c));
	uint32_t max = s.type == KINST_SEC_STR ? KINST_CAP_STR_MAX :
	    s.type == KINST_SEC_VAL ? 8 : KINST_CAP_MEM_MAX;
	if (c.size != s.len - sizeof(c) || c.size > max || c.index >= KINST_CAP_MAX ||
	    (s.type == KINST_SEC_VAL && c.size != 0 && c.size != 8))
		malformed(std::string(what) + " section: " + std::to_string(c.size) +
		    " bytes of capture " + std::to_string(c.index) + " in " +
		    std::to_string(s.len));
	CaptureData d;
	d.str = s.type == KINST_SEC_STR;
	d.value = s.type == KINST_SEC_VAL;
	d.index = c.index;
	d.flags = s.flags;
	d.address = c.addr;
	d.bytes.assign((const char *)payload + sizeof(c), c.size);
	r.caps.push_back(std::move(d));
}

// A KINST_SEC_AGG section: exactly one struct kinst_rec_agg, once.
void
parse_agg_sec(HitRecord &r, const struct kinst_rec_sec &s, const uint8_t *p)
{
	if (s.len != sizeof(r.agg))
		malformed("AGG section of " + std::to_string(s.len) + " bytes, not " +
		    std::to_string(sizeof(r.agg)));
	if (r.has_agg)
		malformed("two AGG sections");
	if ((s.flags & ~KINST_SECF_OVERFLOW) != 0)
		malformed("AGG section with flags " + std::to_string(s.flags));
	memcpy(&r.agg, p, sizeof(r.agg));
	r.has_agg = true;
	r.agg_overflow = (s.flags & KINST_SECF_OVERFLOW) != 0;
}

} // namespace

HitRecord
parse_hit_record(const uint8_t *p, size_t size)
{
	HitRecord r;
	if (size < sizeof(r.hit))
		malformed("hit record of " + std::to_string(size) + " bytes");
	memcpy(&r.hit, p, sizeof(r.hit));
	size_t pos = sizeof(r.hit);
	while (pos < size) {
		struct kinst_rec_sec s;
		if (size - pos < sizeof(s))
			malformed("truncated section header at byte " + std::to_string(pos));
		memcpy(&s, p + pos, sizeof(s));
		pos += sizeof(s);
		uint64_t padded = ((uint64_t)s.len + 7) & ~(uint64_t)7;
		if (padded > size - pos)
			malformed("section of type " + std::to_string(s.type) + " claims " +
			    std::to_string(s.len) + " bytes, " + std::to_string(size - pos) + " left");
		if (s.type == KINST_SEC_STACK)
			parse_stack(r, s, p + pos);
		else if (s.type == KINST_SEC_MEM || s.type == KINST_SEC_STR ||
		    s.type == KINST_SEC_VAL)
			parse_capture_sec(r, s, p + pos);
		else if (s.type == KINST_SEC_AGG)
			parse_agg_sec(r, s, p + pos);
		else
			r.unknown_sections++;
		pos += (size_t)padded;
	}
	return r;
}

struct StackSymbolizer::Impl {
	bool loaded = false;
	SymbolTable syms;
};

StackSymbolizer::StackSymbolizer() : impl_(std::make_unique<Impl>()) {}
StackSymbolizer::~StackSymbolizer() = default;

void
StackSymbolizer::load()
{
	if (!impl_->loaded) {
		impl_->loaded = true;
		load_live_symbols(impl_->syms);
	}
}

Frame
StackSymbolizer::frame(uint64_t addr, size_t i)
{
	load();
	Frame f;
	f.address = addr;
	uint64_t look = i > 0 && addr > 0 ? addr - 1 : addr;
	std::vector<SymbolTable::Ref> refs = impl_->syms.containing(look);
	if (refs.empty())
		return f;
	const Function &fn = impl_->syms.function(refs.front());
	f.resolved = true;
	f.function = fn.name;
	f.offset = addr - fn.addr;
	f.module = impl_->syms.module(refs.front().module).name();
	return f;
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
