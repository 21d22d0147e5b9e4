// SPDX-License-Identifier: BSD-2-Clause
// kinstctl errors: one exception type, one exit code per class of error.
// main() catches every Error once and prints "kinstctl: <what>: <why>".
// The exit codes are documented in kinstctl(8) (EXIT STATUS); keep in sync.
#ifndef KINSTCTL_ERROR_H
#define KINSTCTL_ERROR_H

#include <stdexcept>
#include <string>

namespace kinst {

enum class Exit : int {
	ok = 0,
	internal = 1,		// a bug or an unexpected library failure
	usage = 2,		// bad command line
	file = 3,		// cannot open/read a file (missing, directory, I/O)
	bad_elf = 4,		// not ELF, truncated, corrupt headers/sections/symbols
	unsupported_elf = 5,	// ELF, but not 64-bit little-endian x86-64 (or AArch64 where read)
	no_symbols = 6,		// no symbol table (stripped) or no functions
	bad_spec = 7,		// probe spec syntax, empty spec, absurd number
	unknown_function = 8,	// no such function / address in no function
	ambiguous = 9,		// several functions match; the message lists them
	bad_offset = 10,	// offset outside the function or mid-instruction
	live = 11,		// live system: kallsyms, device, permissions, module
	refused = 12,		// trace: explicit probe refused, already traced, too many probes
};

class Error : public std::runtime_error {
public:
	Error(Exit code, const std::string &what)
	    : std::runtime_error(what), code_(code) {}
	Exit code() const noexcept { return code_; }

private:
	Exit code_;
};

} // namespace kinst

#endif
