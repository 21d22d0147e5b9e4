// SPDX-License-Identifier: BSD-2-Clause
// arm64's register file (regfile.h): struct kinst_regs of
// common/arm64/kinst_regs.h, the AAPCS64 calling convention and its DWARF
// numbering.
#include <cstddef>
#include <string>

#include "base/regfile.h"
#include "base/text.h"

namespace kinst {

static_assert(offsetof(struct kinst_regs, sp) == 8 * KINST_PREG_SP &&
    offsetof(struct kinst_regs, pc) == 8 * KINST_PREG_PC &&
    offsetof(struct kinst_regs, pstate) == 8 * KINST_PREG_PSTATE,
    "the program's register numbers index struct kinst_regs' words");

namespace {

const char *const names[] = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7",
    "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18",
    "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29",
    "x30", "sp", "pc", "pstate"};
static_assert(sizeof(names) / sizeof(names[0]) == KINST_PREG_COUNT, "names");

const int args[] = {0, 1, 2, 3, 4, 5, 6, 7};
// The argument and return registers and the link register.
const int compact[] = {0, 1, 2, 3, 4, 5, 30};
const RegAlias aliases[] = {{"fp", 29}, {"lr", 30}};

} // namespace

const RegFile regfile = {
	"arm64", true, KINST_PREG_COUNT, names,
	KINST_PREG_PC, KINST_PREG_SP, KINST_PREG_PSTATE, 0,
	args, 8, compact, 7, aliases, 2,
	"x0 .. x30 (fp is x29, lr x30), sp, pc, pstate", 0,
};

uint64_t
reg_value(const struct kinst_regs &r, int which)
{
	return reg_words(r)[which];
}

// NZCV (bits 31-28), DAIF (9-6), and the rest of SPSR_EL1 that a kernel
// hit can show: PAN (22), SSBS (12), BTYPE (11-10, a number), the mode.
std::string
text_flags(uint64_t fl)
{
	static const struct { uint64_t bit; const char *name; } bits[] = {
		{1ull << 31, "N"}, {1ull << 30, "Z"}, {1ull << 29, "C"},
		{1ull << 28, "V"}, {1ull << 22, "PAN"}, {1ull << 12, "SSBS"},
		{1ull << 9, "D"}, {1ull << 8, "A"}, {1ull << 7, "I"},
		{1ull << 6, "F"},
	};
	static const char *const modes[16] = {"EL0t", "?", "?", "?", "EL1t", "EL1h",
	    "?", "?", "EL2t", "EL2h", "?", "?", "EL3t", "EL3h", "?", "?"};
	std::string s = hex(fl) + "[";
	for (const auto &b : bits)
		if (fl & b.bit)
			s += std::string(b.name) + " ";
	if ((fl >> 10) & 3)
		s += "BTYPE=" + std::to_string((fl >> 10) & 3) + " ";
	return s + (fl & 0x10 ? "AArch32" : modes[fl & 15]) + "]";
}

int
dwarf_reg(uint64_t r)
{
	return r < 32 ? (int)r : -1;	// x0-x30, then sp: the same numbers
}

std::string
dwarf_reg_name(uint64_t r)
{
	if (r < 31)
		return "x" + std::to_string(r);
	if (r == 31)
		return "sp";
	if (r >= 64 && r < 96)
		return "v" + std::to_string(r - 64);
	return "DWARF register " + std::to_string(r);
}

// llvm-dwarfdump 14 names x0-x30 by their 32-bit halves.
std::string
dwarf_reg_llvm_name(uint64_t r)
{
	if (r < 31)
		return "W" + std::to_string(r);
	return "<unknown register " + std::to_string(r) + ">";
}

} // namespace kinst
