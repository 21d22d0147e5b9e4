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

struct HitRecord {
	struct kinst_hit_record hit;
	bool has_stack = false;
	bool stack_truncated = false;
	std::vector<uint64_t> stack;	// [0] = the probed instruction
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

// "function+0xoff [module]" or "0xaddr [?]".
std::string text_frame(const Frame &f);
// {"address","function","offset","module"} (null when unresolved).
nlohmann::json json_frame(const Frame &f);

} // namespace kinst

#endif
