// SPDX-License-Identifier: BSD-2-Clause
// Hit records with sections.  See record.h.
#include "base/record.h"

#include <cstring>

#include "base/error.h"
#include "base/text.h"

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

} // namespace kinst
