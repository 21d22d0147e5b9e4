// SPDX-License-Identifier: BSD-2-Clause
// kinstctl cover: exact per-instruction execution counts of whole functions
// (docs/kinstctl.8, COVER).  The pure part is here: the control flow of a
// function from the engine's own decode (basic blocks, direct branch
// targets), the counts per instruction and per conditional branch from the
// in-kernel aggregation's keyed counts, and the text, JSON and HTML
// renderings, so that tests/cli can check them on synthetic counts.
//
// How taken / not-taken counts are exact.  cover counts in the kernel, per
// probe as count does; the probes of conditional branches (jcc, loop
// family) also run a program whose key word 0 = RFLAGS & 0x8d5 (CF PF AF
// ZF SF OF) and word 1 = the class of %rcx (zero, one, other).  A probe fires before its
// instruction executes, with the interrupted context's registers, so at a
// jcc the key holds exactly the flags the jcc tests: per key, the branch is
// taken for every hit or for none.  Summing the keys whose flags satisfy
// the condition gives the taken count; the rest is not-taken.  No
// derivation from successors' counts (which fails when the fall-through is
// itself a branch target) and no engine change are needed.
#ifndef KINSTCTL_COVER_H
#define KINSTCTL_COVER_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/branch.h"
#include "base/output.h"
#include "base/text.h"
#include "symbols/resolver.h"

namespace kinst {

// ---- source lines (the DWARF work plugs in here) ----
// One source position.  line == 0: unknown.
struct LineInfo {
	std::string file;
	int line = 0;
};
// The one lookup cover makes per instruction (module, absolute address).
// It finds nothing here: run_cover fills the lines from DWARF afterwards
// (debuginfo.cc); without any, cover_line_info_missing() is said once.
bool cover_line_info(const std::string &module, uint64_t addr, LineInfo *out);
const char *cover_line_info_missing();

// ---- the in-kernel program's keys ----
// arm64 (kinstctl built for it, regfile.h): key word 0 is pstate's NZCV
// (bits 3-0: N Z C V), which every b.cond tests; word 1 is, at a
// cbz/cbnz/tbz/tbnz, whether it branches (cover_a64_taken_expr below).
constexpr uint64_t COVER_FLAGS_MASK = 0x8d5;	// CF PF AF ZF SF OF
// Key word 1: the class of %rcx before the instruction.
enum : uint64_t { COVER_RCX_OTHER = 0, COVER_RCX_ZERO = 1, COVER_RCX_ONE = 2 };
// The program's expressions (compiled with compile_expr); the flags' is
// the register file's (x86-64's or arm64's).
extern const char *const cover_flags_expr;
extern const char *const cover_rcx_expr;

// Does a jcc with condition code cc (0..15) jump with these flags?  The
// engine's own answer (kinst_cond): one condition table for the emulator
// and cover, which tests/cli checks cover uses unchanged.
bool cover_cond(unsigned cc, uint64_t rflags);

// ---- control flow of one instruction, from the engine's classifier ----
enum class Flow {
	next,		// falls through only (calls included: a call returns)
	jcc,		// conditional, direct target
	loop,		// loop/loope/loopne/jrcxz: conditional on %rcx (and ZF)
	jmp,		// unconditional, direct target
	jmp_ind,	// unconditional, indirect
	ret,		// ret / ret imm16
	stop,		// never falls through (ud2, int3, hlt...)
	cbz,		// A64 cbz/cbnz/tbz/tbnz: conditional on a register;
			// exact where cover's program keys it (key word 1,
			// cover_a64_taken_expr), else unknown
};
struct FlowInfo {
	Flow flow = Flow::next;
	unsigned cc = 0;		// jcc: the condition code
	unsigned loop_kind = 0;		// loop: KINST_EM_LOOP, _LOOPE, _LOOPNE, _JRCXZ
	bool addr32 = false;		// loop: 0x67 prefix (%ecx, not keyed: unknown)
	bool has_target = false;
	uint64_t target = 0;		// absolute
	bool a64 = false;		// jcc: an A64 b.cond (cc over NZCV)
};
FlowInfo cover_flow(const uint8_t *bytes, size_t len, uint64_t addr);
// The same for an instruction of a function's walk (resolver.h): an A64
// one from its A64 decode (b.cond, cbz/cbnz/tbz/tbnz, b, br, ret; eret and
// udf stop).
FlowInfo cover_flow_of(const Insn &in);

// arm64: whether the cbz/cbnz/tbz/tbnz in branches, as an expression over
// the register file ("(x3 & 0xffffffff) == 0", "((x5 >> 40) & 1) != 0");
// "" for any other instruction.  cover's program keys word 1 at such a
// branch's address as 1 << that (COVER_A64_TAKEN or _NOT_TAKEN); 0 is
// everywhere else.
std::string cover_a64_taken_expr(const Insn &in);
enum : uint64_t { COVER_A64_NOT_TAKEN = 1, COVER_A64_TAKEN = 2 };

// ---- the model ----
enum class CovState { counted, refused, not_armed };

// One key's count at one instruction, as the aggregation read it.
struct CoverKeyCount {
	uint64_t flags = 0;	// key word 0
	uint64_t rcx = 0;	// key word 1: x86-64's %rcx class; arm64's
				// cbz/tbz outcome (COVER_A64_TAKEN, _NOT_TAKEN)
	uint64_t count = 0;
};

struct CoverInsn {
	uint32_t offset = 0;
	uint64_t addr = 0;
	std::string bytes;		// hex, as list-offsets
	std::string text;		// with the branch target's annotation
	BranchTarget target;		// a direct branch out of the function
	CovState state = CovState::counted;
	std::string reason;		// refused / not armed: why
	uint64_t count = 0;		// counted only
	FlowInfo fl;
	bool target_inside = false;	// fl.has_target within the function
	uint32_t target_offset = 0;
	bool conditional = false;	// jcc / loop family
	bool branch_known = false;	// taken / not_taken are exact
	uint64_t taken = 0, not_taken = 0;
	bool leader = false;
	uint32_t block = 0;
	LineInfo line;
};

struct CoverBlock {
	uint32_t id = 0;
	size_t first = 0, last = 0;	// indexes into insns
	bool known = false;		// some instruction of it was counted
	uint64_t count = 0;		// its first counted instruction's count
};

struct CoverFunction {
	std::string module, name;
	uint64_t addr = 0, size = 0;
	std::vector<CoverInsn> insns;
	std::vector<CoverBlock> blocks;
	bool rcx_keyed = false;
	uint64_t counted = 0, refused = 0, not_armed = 0, executed = 0;
	uint64_t blocks_known = 0, blocks_executed = 0;
};

// Input per instruction of the function (from walk_function + the
// kernel's verdicts + what was armed).
struct CoverInput {
	const Insn *insn = nullptr;
	std::string text;
	BranchTarget target;
	bool armed = false;
	std::vector<CoverKeyCount> keys;	// armed: every key seen
	bool branch_keyed = false;	// arm64 cbz/tbz: key word 1 says taken
};

// Builds the function's coverage: states, counts, blocks, branch counts.
CoverFunction cover_build(const std::string &module, const std::string &name,
    uint64_t addr, uint64_t size, const std::vector<CoverInput> &in, bool rcx_keyed);

// Whole run facts shown with the output.
struct CoverRun {
	uint64_t hits = 0, aggregated = 0, overflow = 0, nested = 0;
	bool exact() const { return overflow == 0 && nested == 0; }
	std::string workload;		// "command: ...", "5 s"
	std::string source_note;	// why there is no source column, or ""
};

// ---- renderings ----
std::string cover_text(const CoverFunction &f, const Style &st);
// One JSON object per function, then one per instruction (docs/json.md).
std::vector<nlohmann::json> cover_json(const CoverFunction &f, const CoverRun &r);
// One self-contained HTML document for every function.
std::string cover_html(const std::vector<CoverFunction> &fs, const CoverRun &r);

std::string html_escape(const std::string &s);

} // namespace kinst

#endif
