// SPDX-License-Identifier: BSD-2-Clause
// Capstone, for the text of an instruction.  The engine's decoder decides
// instruction boundaries (what the module will accept); Capstone only
// renders the instruction and, as a cross-check, its own length.
#ifndef KINSTCTL_DISASM_H
#define KINSTCTL_DISASM_H

#include <capstone/capstone.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kinst {

enum class Syntax { att, intel };

class Disassembler {
public:
	explicit Disassembler(Syntax syntax);
	~Disassembler();
	Disassembler(const Disassembler &) = delete;
	Disassembler &operator=(const Disassembler &) = delete;

	struct Text {
		std::string mnemonic, operands;
		unsigned len = 0;	// Capstone's length; 0 if it cannot decode
	};
	// A Text's parts without their storage: what same_anywhere() and
	// branch() return (a cache hit points into its slot).
	struct TextView {
		std::string_view mnemonic, operands;
		unsigned len = 0;
	};
	static TextView view(const Text &t) { return { t.mnemonic, t.operands, t.len }; }
	// Disassembles one instruction at code[0..avail) located at addr.
	Text one(const uint8_t *code, size_t avail, uint64_t addr);
	// The same for the len bytes of one instruction whose text does not
	// depend on where it is (no relative or RIP-relative operand: the
	// caller decoded it): its last text, if the same bytes were rendered
	// recently, else Capstone's.  Valid until the next call.  Most of a
	// kernel's instructions repeat (push %rbp, ret, ...): list-offsets
	// spent a third of its time in Capstone.
	TextView same_anywhere(const uint8_t *code, size_t len, uint64_t addr);
	// The same for a direct branch (call, jmp, jcc, loop, jrcxz) of len
	// bytes at addr that goes to target (the caller decoded it): from
	// the cache when these bytes were rendered before and Capstone's
	// operand was then "0x" and the target's hex digits, at addr and at
	// an address far from it (so not a target cut to 16 or 32 bits);
	// the operand is then written for this target.  A target below
	// 0x10 (Capstone writes those in decimal) is always Capstone's.
	TextView branch(const uint8_t *code, size_t len, uint64_t addr, uint64_t target);
	// Does this Capstone write a RIP-relative operand as its
	// displacement, the same text wherever the instruction is (asked
	// of it once, at construction)?  Then such instructions may use
	// same_anywhere.
	bool riprel_same_anywhere() const { return riprel_same_; }
	// One AArch64 instruction (a little-endian word at code) at addr,
	// from a second Capstone handle opened on first use.
	Text a64(const uint8_t *code, uint64_t addr);

private:
	csh handle_ = 0, a64_ = 0;
	struct InsnFree { void operator()(cs_insn *i) const { cs_free(i, 1); } };
	std::unique_ptr<cs_insn, InsnFree> insn_, a64_insn_;
	// Two-way set-associative by a hash of the bytes.  A slot holds its
	// text in place (mnemonic, then operands; 64 bytes a slot, no heap
	// behind it: peak RSS), and a hit is a view of it; a text longer
	// than text_cap is not kept.  miss_'s strings keep their capacity,
	// so a hit or a refill allocates nothing once warm.
	static constexpr size_t text_cap = 44;
	struct Slot {
		uint8_t len = 0;	// 0: empty
		bool branch = false;	// branch(): no operands kept
		bool first_recent = false;	// a set's first slot: it was used last
		uint8_t mlen = 0, olen = 0;	// text[0..mlen), text[mlen..mlen+olen)
		uint8_t bytes[15] = {};
		char text[text_cap];
	};
	static constexpr size_t cache_slots = 8192;
	std::unique_ptr<Slot[]> cache_;
	Text miss_;
	static void keep(Slot *s, const uint8_t *code, size_t len, bool branch, const Text &t);
	bool riprel_same_ = false;
	Slot *slot(const uint8_t *code, size_t len, bool branch, bool *hit);
	static Text render(csh h, cs_insn *in, const uint8_t *code, size_t avail, uint64_t addr);
};

} // namespace kinst

#endif
