// SPDX-License-Identifier: BSD-2-Clause
// A hit record as read(2) returns it: the fixed struct kinst_hit_record and
// the sections that follow it (ABI 1.4, docs/engine.md), parsed generically:
// unknown section types are skipped, every length is checked, and a
// malformed record is an Error, never a read out of bounds (the base
// layer: cli/README.md).  Its stack is symbolized by stack_symbols.h and
// shown by record_text.h.
#ifndef KINSTCTL_RECORD_H
#define KINSTCTL_RECORD_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/abi.h"

namespace kinst {

// One MEM or STR section (ABI 1.7).
struct CaptureData {
	bool str = false;
	bool value = false;	// a VAL section (ABI 1.10): bytes is the value
	uint32_t index = 0;	// the capture's rank in the program
	uint16_t flags = 0;	// KINST_SECF_FAULT, _DEREF, _TRUNCATED, _NOSTATE
	uint64_t address = 0;
	std::string bytes;	// as read (a string without its NUL)
};

struct HitRecord {
	struct kinst_hit_record hit;
	std::vector<CaptureData> caps;	// in record order
	bool has_stack = false;
	bool stack_truncated = false;
	std::vector<uint64_t> stack;	// [0] = the probed instruction
	// A sample of an aggregation (KINST_SEC_AGG, ABI 1.14): the key and
	// value the tables took from this hit; overflow: they did not.
	bool has_agg = false;
	bool agg_overflow = false;
	struct kinst_rec_agg agg = {};
	unsigned unknown_sections = 0;	// skipped
};

// Parses one KINST_REC_HIT record of size bytes (hdr.size) at p.  Throws
// Error(Exit::live, "read: malformed record ...: <why>").
HitRecord parse_hit_record(const uint8_t *p, size_t size);

// What the trace asked to capture, in program order (the text the user
// gave, --str or --mem, the length).
struct CaptureDesc {
	std::string expr;
	bool str = false;
	uint32_t len = 0;
};

} // namespace kinst

#endif
