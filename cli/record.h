// SPDX-License-Identifier: BSD-2-Clause
// A hit record as read(2) returns it: the fixed struct kinst_hit_record and
// the sections that follow it (ABI 1.4, docs/engine.md), parsed generically:
// unknown section types are skipped, every length is checked, and a
// malformed record is an Error, never a read out of bounds.  Also the
// symbolization of stack frames for trace --stack.
#ifndef KINSTCTL_RECORD_H
#define KINSTCTL_RECORD_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "abi.h"

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

struct Frame {
	uint64_t address = 0;
	bool resolved = false;
	std::string function, module;
	uint64_t offset = 0;
};

// Names stack addresses with the running system's symbols (loaded on first
// use: /proc/kallsyms on Linux, the kernel and module files on FreeBSD).
class StackSymbolizer {
public:
	StackSymbolizer();
	~StackSymbolizer();
	// Loads the symbols now (frame() would on first use).  Throws Error.
	void load();
	// Frame i of a stack: i == 0 is an instruction address; the others
	// are return addresses, looked up at address - 1 (a call that ends a
	// function returns to the next one's first byte).
	Frame frame(uint64_t addr, size_t i);
private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// The record's stack for trace: one indented "function+0xoff [module]"
// line per frame (text), or "stack" and "stack_truncated" members (JSON).
std::string text_stack(const HitRecord &r, StackSymbolizer &sym);
void json_stack(nlohmann::json &j, const HitRecord &r, StackSymbolizer &sym);

// The captures under a hit: memory as hexdump -C lines, strings quoted
// with C escapes (text); "mem" and "str" arrays (JSON).  exprs[i] names
// capture i, mem says whether it is a --mem (else --str).
struct CaptureDesc {
	std::string expr;
	bool str = false;
	uint32_t len = 0;
};
std::string text_captures(const HitRecord &r, const std::vector<CaptureDesc> &d);
void json_captures(nlohmann::json &j, const HitRecord &r,
    const std::vector<CaptureDesc> &d);
// Bytes as C would write them in a string literal, quoted.
std::string c_quote(const std::string &s);

// "function+0xoff [module]" or "0xaddr [?]".
std::string text_frame(const Frame &f);
// {"address","function","offset","module"} (null when unresolved).
nlohmann::json json_frame(const Frame &f);
// A frame of a folded stack (FlameGraph's collapsed format): no space and
// no ';' in it.  "function+0xoff", or "function" when functions; a
// module's code "module:function..."; unresolved "0xaddr".
std::string folded_frame(const Frame &f, bool functions);

} // namespace kinst

#endif
