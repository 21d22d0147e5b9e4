// SPDX-License-Identifier: BSD-2-Clause
// Stack frames by symbol (the running kernel's symbols), for trace --stack,
// count --by stack and the folded and Perfetto outputs (the symbols layer:
// cli/README.md).
#ifndef KINSTCTL_STACK_SYMBOLS_H
#define KINSTCTL_STACK_SYMBOLS_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kinst {

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

} // namespace kinst

#endif
