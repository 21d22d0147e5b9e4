// SPDX-License-Identifier: BSD-2-Clause
// DWARF location expressions (DWARF 5, section 2.5 and 2.6) compiled into
// expression trees over a hit's state: the recorded registers and
// fault-safe memory reads.  A tree becomes probe bytecode (kinst_abi.h,
// struct kinst_pinsn) for --if/--by/--value, or is evaluated by kinstctl
// on a hit's record (registers, and the memory the probe captured) to
// print a variable.
//
// The compiler runs the DWARF stack machine symbolically: every stack
// entry is a tree, so DW_OP_dup/over/pick/swap/rot/drop cost nothing at
// hit time.  What a probe cannot compute (division, typed stack entries,
// a branch on a run-time value, a register kinst does not record) is an
// error with the operation's name, never a guess.  No libdw type appears
// here: libdw's operations are converted by the caller (dwarf_vars.cc), so
// the compiler is tested and fuzzed on its own.
#ifndef KINSTCTL_DWARF_LOC_H
#define KINSTCTL_DWARF_LOC_H

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/abi.h"

namespace kinst {

// One DWARF operation, as libdw decodes it (Dwarf_Op: atom, number,
// number2), with what refers outside the operation resolved.
struct LocOp {
	uint8_t atom = 0;
	uint64_t n1 = 0, n2 = 0;
	std::vector<LocOp> sub;		// DW_OP_entry_value's own expression
	std::string block;		// DW_OP_implicit_value's bytes
};
using LocExpr = std::vector<LocOp>;

// llvm-dwarfdump's spelling of an expression ("DW_OP_breg7 RSP+8,
// DW_OP_deref"), so that tests can compare the two tools' views.
std::string loc_text(const LocExpr &e);
// The kind of location e describes, from its operations alone (whether or
// not kinst can compile it): as Location::kind().
std::string loc_kind(const LocExpr &e);

// A tree over the hit's state.
struct LocNode;
using LocNodeP = std::shared_ptr<const LocNode>;
struct LocNode {
	enum Kind { konst, reg, entry_reg, load, binary, unary } kind = konst;
	uint64_t value = 0;	// konst
	int gpr = -1;		// reg, entry_reg: its number (regfile.h)
	unsigned size = 0;	// load: 1, 2, 4 or 8 bytes
	uint8_t op = 0;		// binary, unary: KINST_OP_*
	LocNodeP a, b;
};

// One piece of an object (DW_OP_piece, DW_OP_bit_piece), or the whole
// object (bits 0).
struct LocPiece {
	enum Kind { reg, memory, value, implicit, empty } kind = empty;
	uint64_t dwreg = 0;	// reg: the DWARF register
	LocNodeP expr;		// memory: the address; value: the value
	std::string bytes;	// implicit: the value's bytes
	uint32_t bits = 0;	// bits of the object it holds (0: all of it)
	uint32_t bit_offset = 0;	// DW_OP_bit_piece: where they start in the source
	// The source's bytes the piece needs (memory: what to read), 0 for
	// the whole object.
	uint32_t src_bytes() const { return bits ? (bit_offset + bits + 7) / 8 : 0; }
};

struct Location {
	std::vector<LocPiece> pieces;
	bool entry = false;	// reads a register's value at the function's entry
	bool cfa = false;	// through the frame base or the CFA
	// Not empty: the location cannot be read by a probe, and why ("DW_OP_div:
	// a probe program has no division").  pieces may still describe it.
	std::string why;
	// "register", "memory", "value", "implicit", "pieces", "empty"
	// (optimized out) or "entry_value" (a value that needs one).
	std::string kind() const;
	// The whole object at one address (its members read from there).
	bool in_memory() const { return pieces.size() == 1 && pieces[0].kind == LocPiece::memory; }
	// "rdi", "[rsp+0x10]", "rdi at entry + 1", "pieces: [0..4) rax, [4..8) rdx".
	std::string describe() const;
};

// What DW_OP_fbreg and DW_OP_call_frame_cfa refer to at the instruction.
struct LocEnv {
	// The function's DW_AT_frame_base at the instruction (null: none; then
	// frame_base_why says why).
	const LocExpr *frame_base = nullptr;
	std::string frame_base_why = "no DW_AT_frame_base";
	// The CFA rule at the instruction, as libdw's CFI gives it (null:
	// none, cfa_why says why).
	const LocExpr *cfa = nullptr;
	std::string cfa_why = "no call frame information";
	// DW_OP_addr's operand, a debug-file address, to the address in the
	// memory the probe reads (null: as it is).  false with a reason when
	// it cannot be placed.
	std::function<bool(uint64_t, uint64_t *, std::string *)> addr;
};

// Compiles e.  Never throws for a bad expression: an operation kinst
// cannot compile, a malformed expression (stack underflow, a piece past
// 64 KiB, nesting), gives Location::why.
Location compile_location(const LocExpr &e, const LocEnv &env);

// Where a probe finds registers' values at the function's entry: the
// activation a hidden probe at the entry pushed (kinst_abi.h, per-thread
// state) with tag, framed by the entry's rsp, which frame (the CFA - 8 at
// the instruction) computes; slot[gpr]: the saved word holding the
// register (-1: not saved).
struct EntryCtx {
	uint64_t tag = 0;
	std::vector<struct kinst_pinsn> frame;
	int slot[KINST_PREG_COUNT];	// -1: not saved
	EntryCtx() { std::fill(slot, slot + KINST_PREG_COUNT, -1); }
};

// A value's bytecode: the tree's code, pushing one 64-bit value.  loadc:
// reads are KINST_OP_LOADC (an address for a capture), and an entry
// register's lookup is soft (a miss flags the capture).  Throws
// Error(Exit::usage) for an entry register without entry (or not saved).
void emit_node(const LocNode &n, std::vector<struct kinst_pinsn> &code, bool loadc,
    const EntryCtx *entry = nullptr);

// The whole value of a location of size bytes (1..8) as one 64-bit value
// (pieces assembled, little-endian).  Throws Error(Exit::usage, why) when
// it cannot be computed in a probe.
void emit_location_value(const Location &l, uint32_t size,
    std::vector<struct kinst_pinsn> &code, const EntryCtx *entry = nullptr);

// Bits [bit_off, bit_off + nbits) (nbits 1..64) of an object of obj_bytes
// whose location is l (pieces, a register, a value), as one 64-bit value:
// a member of a struct held in pieces of any size.  Throws
// Error(Exit::usage, why) when a bit of it lies in an optimized-out piece
// (naming those bytes) or cannot be read in a probe.
void emit_location_bits(const Location &l, uint32_t obj_bytes, uint32_t bit_off,
    uint32_t nbits, std::vector<struct kinst_pinsn> &code, const EntryCtx *entry = nullptr);

// Evaluation on a hit's record: registers, and a reader for memory (the
// captured bytes; false when not captured or faulted).
struct LocState {
	const uint64_t *gpr = nullptr;	// by number: reg_words() (regfile.h)
	std::function<bool(uint64_t addr, uint32_t len, uint8_t *out)> read;
	// A register's value at the function's entry (false, why: none).
	std::function<bool(int gpr, uint64_t *v, std::string *why)> entry;
};
// n's value; false with *why when a read fails.
bool eval_node(const LocNode &n, const LocState &s, uint64_t *v, std::string *why);

// Every load of a tree, innermost first: what a probe must capture for
// eval_node to run on the record.
void node_loads(const LocNodeP &n, std::vector<LocNodeP> &out);

} // namespace kinst

#endif
