// SPDX-License-Identifier: BSD-2-Clause
// The register file of the kernel kinstctl runs on: struct kinst_regs of
// kinst_abi.h, which the target kinstctl is built for chooses (x86-64's
// or arm64's).  Everything in cli/ that names a register, reads one from a
// hit, or knows the calling convention or the DWARF numbering asks here;
// one file per instruction set answers (regfile_x86.cc, regfile_arm64.cc,
// chosen by cli/CMakeLists.txt), and regfile.cc builds the lists and text
// on top of it (the base layer: cli/README.md).
//
// A register is named by a number: its probe-program number (KINST_OP_REG,
// KINST_PREG_*) below KINST_PREG_COUNT; past it, what a hit record carries
// that no program reads (x86-64's cs and ss).
#ifndef KINSTCTL_REGFILE_H
#define KINSTCTL_REGFILE_H

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/abi.h"

namespace kinst {

struct RegAlias {
	const char *name;
	int reg;
};

struct RegFile {
	const char *isa;		// "x86-64", "arm64"
	bool a64;			// the kernel's code is A64
	int count;			// registers a record carries: 0 .. count-1
	const char *const *names;	// by number
	int pc, sp, flags;		// rip/pc, rsp/sp, rflags/pstate
	int retval;			// rax/x0: an integer or pointer return value
	const int *args;		// the calling convention's argument registers
	int nargs;
	const int *compact;		// trace's one-line view, after pc and sp
	int ncompact;
	const RegAlias *aliases;	// other names programs and --regs accept
	int naliases;
	const char *known;		// the names, for messages
	// What a call pushes (x86-64: the return address, 8; arm64: nothing,
	// bl puts it in x30): the stack pointer at a function's entry is
	// the CFA less this.
	int call_push;
};
extern const RegFile regfile;

// The hit's registers as words indexed by number, [0, KINST_PREG_COUNT).
const uint64_t *reg_words(const struct kinst_regs &r);
uint64_t reg_value(const struct kinst_regs &r, int which);
const char *reg_name(int which);
// A name's number (also arm64's aliases fp and lr), or -1.
int reg_lookup(const std::string &name);
// The flags word with its set bits named: "0x246[PF ZF IF]",
// "0x60000005[Z C]".
std::string text_flags(uint64_t fl);

// DWARF's register numbers (x86-64: the System V psABI's "DWARF Register
// Number Mapping", 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
// 8-15 r8-r15, 16 the return address, 17-32 xmm0-15, 33-40 st0-7, 41-48
// mm0-7, 49 rflags; AArch64: the AAPCS64's DWARF, 0-30 x0-x30, 31 sp,
// 64-95 v0-v31).  The register's number here, or -1 when a hit does not
// record it.
int dwarf_reg(uint64_t dwreg);
// "rdi", "xmm3", "v3", "DWARF register 57".
std::string dwarf_reg_name(uint64_t dwreg);
// llvm-dwarfdump's name for it ("RDI", "W0"), to compare the two tools.
std::string dwarf_reg_llvm_name(uint64_t dwreg);

// Compact: pc, sp and the calling convention's registers; all: every
// register a record carries, the flags decoded.
std::string text_regs(const struct kinst_regs &r, bool all);
nlohmann::json json_regs(const struct kinst_regs &r);

// --regs LIST: "rdi,rsi,rip": those registers, in that order, each once
// (a repeated name is kept where it first stands).  Throws
// Error(Exit::usage), prefixed with what ("trace: --regs"), for an empty
// list or element and for an unknown name.
std::vector<int> parse_reg_list(const std::string &list, const std::string &what);
std::string reg_list_text(const std::vector<int> &l);	// "rdi,rsi,rip"
// "rdi=0x1 rsi=0x2 rflags=0x246[PF ZF IF]": the list's registers, in its order.
std::string text_regs_list(const struct kinst_regs &r, const std::vector<int> &l);
// json_regs() with only the list's members.
nlohmann::json json_regs_list(const struct kinst_regs &r, const std::vector<int> &l);

} // namespace kinst

#endif
