// SPDX-License-Identifier: BSD-2-Clause
// Probe spec grammar, shared by every subcommand (see kinstctl(8)):
//
//   spec    := [ "kinst:" ] [ module ":" ] func [ "+" offset ]
//            | [ "kinst:" ] module ":" func ":" offset
//            | "0x" hexdigits                       (an address)
//   module  := [A-Za-z0-9_.-]{0,63}                  ("" = any module)
//   func    := [A-Za-z_.$][A-Za-z0-9_.$]{0,126}
//   offset  := decimal | "0x" hexdigits              (< 2^32)
//
// No offset means every instruction of the function.
#ifndef KINSTCTL_SPEC_H
#define KINSTCTL_SPEC_H

#include <cstdint>
#include <string>

namespace kinst {

struct Spec {
	std::string text;		// as written
	std::string module;		// "" = any
	std::string function;		// "" for an address spec
	bool has_offset = false;
	uint32_t offset = 0;
	bool is_address = false;
	uint64_t address = 0;
};

// Throws Error(Exit::bad_spec) with a message naming the problem.
Spec parse_spec(const std::string &text);

// Parses a decimal or 0x-hex number; false on syntax error or overflow of max.
bool parse_number(const std::string &s, uint64_t max, uint64_t *out);

} // namespace kinst

#endif
