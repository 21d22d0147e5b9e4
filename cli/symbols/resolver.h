// SPDX-License-Identifier: BSD-2-Clause
// From a probe spec to functions and instructions, with the engine's own
// decoder and classifier (common/), so that what kinstctl calls traceable
// is what the module accepts.  Shared by list-offsets, resolve and trace.
#ifndef KINSTCTL_RESOLVER_H
#define KINSTCTL_RESOLVER_H

#include <cstdint>
#include <string>
#include <vector>

#include "symbols/disasm.h"
#include "base/spec.h"
#include "symbols/symbols.h"

extern "C" {
#include "x86/kinst_classify.h"
#include "x86/kinst_jopt.h"
#include "arm64/kinst_a64.h"
}

namespace kinst {

// One instruction of a function, as the engine sees it.
struct Insn {
	// Ordered widest first, and the two instruction sets' decodes share
	// their bytes: list-offsets holds a whole function's Insns at once,
	// and its largest function sets the peak memory.
	uint64_t addr = 0;
	const uint8_t *bytes = nullptr;
	uint32_t offset = 0;
	int dec_status = KINST_DEC_INVALID;
	struct kinst_class cls = {};
	// Live: the kinst sessions tracing it now (KINST_ARM_CHECK, ABI 1.13).
	uint32_t sessions = 0;
	uint8_t len = 0;
	// The engine could not decode an earlier instruction, so it cannot
	// reach this one (the module would refuse it); its length is
	// Capstone's (or 1) so that the listing can go on.
	bool unreachable = false;
	// Jump-optimization qualification (common/kinst_jopt.h, KINST_JQ_*);
	// 0 when not computed.
	uint8_t jopt = 0;
	// Where len came from: the engine's decoder, or, after the engine
	// gave up (undecodable), Capstone's length or 1.  Counted in the
	// summaries (length_fallbacks) so that a listing that only went on
	// thanks to Capstone can be told from one the engine delimited.
	enum class LenFrom : uint8_t { engine, capstone, one } len_from = LenFrom::engine;
	// AArch64 (walk_function_a64): a64d is the A64 decode and cls.emul an
	// enum kinst_a64_emul; otherwise dec is x86-64's.
	bool a64 = false;
	union {
		// The engine's decode, when dec_status is KINST_DEC_OK
		// (walk_function).
		struct kinst_insn dec = {};
		struct kinst_a64_insn a64d;
	};
};
// The engine's decode of in (its own, kept by walk_function, or decoded
// again from in.bytes for an Insn made otherwise); false when it does
// not decode in its in.len bytes.
bool insn_decode(const Insn &in, struct kinst_insn *d);
const char *len_from_name(const Insn &i);	// "engine", "capstone", "one-byte"

// Stable verdict names used in text and JSON (docs/json.md).
const char *verdict_name(const Insn &i);	// out-of-line, out-of-line-riprel, emulated, refused
std::string reason_name(const Insn &i);		// refused: engine reason, or "after-undecodable"
// A refusal's class: for "excluded-function (CLASS)" the CLASS (which list
// or derivation excluded the function, and why); "excluded" for a bare
// excluded-function; "kernel text" (text-patched, exception-fixup,
// onfault-function), "sharing" (shared-by-too-many), else "instruction".
std::string refusal_class(const std::string &reason);
std::string emulation_name(const Insn &i);	// emulated: engine kind
bool traceable(const Insn &i);

// Decodes a whole function from its first byte.
std::vector<Insn> walk_function(const Bytes &b, uint64_t addr, Disassembler &dis);
// The same for AArch64 code: a word per instruction, each classified, and
// what lies in an exclusive sequence refused (kinst_a64_exclusive); a
// tail shorter than a word is one undecodable instruction.
std::vector<Insn> walk_function_a64(const Bytes &b, uint64_t addr);
// Either, by f's module's instruction set.
std::vector<Insn> walk(Module &m, const Function &f, Disassembler &dis);

struct Target {
	size_t module = 0;
	const Function *fn = nullptr;
	bool whole = true;		// no offset: every instruction
	uint32_t offset = 0;		// checked: an instruction boundary
};

// Resolves a spec to one function (and a checked offset).  Throws Error:
// unknown_function, ambiguous (listing the candidates), bad_offset.
Target resolve_target(const Spec &sp, SymbolTable &syms);

// "module:function+0xoff"
std::string probe_name(const SymbolTable &syms, const Target &t, uint32_t off);

// One line describing a function for ambiguity lists.
std::string describe_function(const SymbolTable &syms, const Function &f);

} // namespace kinst

#endif
