// SPDX-License-Identifier: BSD-2-Clause
// x86-64's register file (regfile.h): struct kinst_regs of
// common/x86/kinst_regs.h, the System V calling convention and psABI
// DWARF numbering.
#include <cstddef>
#include <string>

#include "base/regfile.h"
#include "base/text.h"

namespace kinst {

static_assert(offsetof(struct kinst_regs, rip) == 8 * KINST_PREG_RIP &&
    offsetof(struct kinst_regs, rflags) == 8 * KINST_PREG_RFLAGS,
    "the program's register numbers index struct kinst_regs' words");

namespace {

constexpr int reg_cs = KINST_PREG_COUNT, reg_ss = KINST_PREG_COUNT + 1;

const char *const names[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi",
    "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "rflags",
    "cs", "ss"};
static_assert(sizeof(names) / sizeof(names[0]) == KINST_PREG_COUNT + 2, "names");

const int args[] = {KINST_RDI, KINST_RSI, KINST_RDX, KINST_RCX, KINST_R8, KINST_R9};
// The argument and return registers.
const int compact[] = {KINST_RAX, KINST_RDI, KINST_RSI, KINST_RDX, KINST_RCX,
    KINST_R8, KINST_R9};

} // namespace

const RegFile regfile = {
	"x86-64", false, KINST_PREG_COUNT + 2, names,
	KINST_PREG_RIP, KINST_RSP, KINST_PREG_RFLAGS, KINST_RAX,
	args, 6, compact, 7, nullptr, 0,
	"rax rbx rcx rdx rsi rdi rbp rsp r8 .. r15, rip, rflags, cs, ss", 8,
};

uint64_t
reg_value(const struct kinst_regs &r, int which)
{
	if (which == reg_cs)
		return r.cs;
	if (which == reg_ss)
		return r.ss;
	return reg_words(r)[which];
}

std::string
text_flags(uint64_t fl)
{
	static const struct { uint64_t bit; const char *name; } bits[] = {
		{KINST_FL_CF, "CF"}, {KINST_FL_PF, "PF"}, {KINST_FL_AF, "AF"},
		{KINST_FL_ZF, "ZF"}, {KINST_FL_SF, "SF"}, {KINST_FL_TF, "TF"},
		{KINST_FL_IF, "IF"}, {KINST_FL_DF, "DF"}, {KINST_FL_OF, "OF"},
		{KINST_FL_NT, "NT"}, {KINST_FL_RF, "RF"}, {KINST_FL_AC, "AC"},
		{KINST_FL_ID, "ID"},
	};
	std::string s = hex(fl) + "[";
	bool first = true;
	for (const auto &b : bits)
		if (fl & b.bit) {
			s += (first ? "" : " ") + std::string(b.name);
			first = false;
		}
	return s + "]";
}

int
dwarf_reg(uint64_t r)
{
	static const int map[16] = {KINST_RAX, KINST_RDX, KINST_RCX, KINST_RBX,
	    KINST_RSI, KINST_RDI, KINST_RBP, KINST_RSP, KINST_R8, KINST_R9,
	    KINST_R10, KINST_R11, KINST_R12, KINST_R13, KINST_R14, KINST_R15};
	return r < 16 ? map[r] : -1;
}

std::string
dwarf_reg_name(uint64_t r)
{
	static const char *const gpr[] = {"rax", "rdx", "rcx", "rbx", "rsi",
	    "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
	    "r15", "the return address"};
	if (r < 17)
		return gpr[r];
	if (r < 33)
		return "xmm" + std::to_string(r - 17);
	if (r < 41)
		return "st" + std::to_string(r - 33);
	if (r < 49)
		return "mm" + std::to_string(r - 41);
	if (r == 49)
		return "rflags";
	return "DWARF register " + std::to_string(r);
}

std::string
dwarf_reg_llvm_name(uint64_t r)
{
	static const char *const gpr[] = {"RAX", "RDX", "RCX", "RBX", "RSI",
	    "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14",
	    "R15", "RIP"};
	if (r < 17)
		return gpr[r];
	if (r < 33)
		return "XMM" + std::to_string(r - 17);
	if (r < 41)
		return "ST" + std::to_string(r - 33);
	if (r < 49)
		return "MM" + std::to_string(r - 41);
	return "<unknown register " + std::to_string(r) + ">";
}

} // namespace kinst
