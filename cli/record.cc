// SPDX-License-Identifier: BSD-2-Clause
// Hit records with sections; stack symbolization.  See record.h.
#include "record.h"

#include <cstring>

#include "error.h"
#include "format.h"
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
text_frame(const Frame &f)
{
	if (!f.resolved)
		return hex(f.address) + " [?]";
	return f.function + "+" + hex(f.offset) + " [" + f.module + "]";
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
