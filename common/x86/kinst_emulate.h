/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Control-flow emulation on a saved register file.  On success regs->rip is
 * where execution resumes and any stack traffic has been done through mem.
 * regs->rip must be the address of the instruction on entry.
 */
#ifndef KINST_EMULATE_H
#define KINST_EMULATE_H

#include "kinst_abi.h"
#include "kinst_memops.h"	/* the emulator's memory access */
#include "x86/kinst_classify.h"

enum kinst_emu_err {
	KINST_EMU_OK = 0,
	KINST_EMU_FAULT = 1,	/* a memory read or write failed; regs unchanged */
	KINST_EMU_BADINSN = 2,	/* not an emulatable instruction; regs unchanged */
};

int	kinst_emulate(const struct kinst_insn *insn, int emul,
	    struct kinst_regs *regs, const struct kinst_mem_ops *mem);

/* Effective address of insn's ModRM memory operand (mod != 3), at regs->rip. */
uint64_t kinst_effective_addr(const struct kinst_insn *insn,
	    const struct kinst_regs *regs);

#endif /* !KINST_EMULATE_H */
