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
// Source specs (DWARF, cli/debuginfo/debuginfo.h):
//   [ module ":" ] file ":" line     file: has a '/' or a source suffix (.c .h .S)
//   func ":" line                    lines of func's own file inside func
//   [ module ":" ] func ":entry"     first instruction of each inlined copy of func
//   [ module ":" ] func ":return"    where control goes on leaving each copy
//
// No offset means every instruction of the function.
#ifndef KINSTCTL_SPEC_H
#define KINSTCTL_SPEC_H

#include <cstdint>
#include <string>

namespace kinst {

enum class SpecKind { symbol, file_line, func_line, inline_entry, inline_return };

struct Spec {
	std::string text;		// as written
	SpecKind kind = SpecKind::symbol;	// symbol: function/offset/address
	std::string file;		// file_line
	uint32_t line = 0;		// file_line, func_line
	bool is_source() const { return kind != SpecKind::symbol; }
	std::string module;		// "" = any
	std::string function;		// "" for an address spec
	bool has_offset = false;
	uint32_t offset = 0;
	bool is_address = false;
	uint64_t address = 0;
	// Set by the expansion of FUNC:return for a function out of line
	// (returns.h): the instruction is one of its return points, where
	// $retval is rax; ret_if: when the call ends there only sometimes,
	// the expression true when it does (ReturnPoint::leaves_if).
	bool at_return = false;
	std::string ret_if;
};

// Throws Error(Exit::bad_spec) with a message naming the problem.
Spec parse_spec(const std::string &text);

// The spec as messages name it: [module:]function[+0xoff].
std::string spec_label(const Spec &sp);

// Parses a decimal or 0x-hex number; false on syntax error or overflow of max.
bool parse_number(const std::string &s, uint64_t max, uint64_t *out);
// A size: decimal bytes, or with a K, M or G suffix (powers of 1024).
// Throws Error(Exit::usage, "WHAT S: not a size ...").
uint64_t parse_size(const std::string &s, const std::string &what);

} // namespace kinst

#endif
