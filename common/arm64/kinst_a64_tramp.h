/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A64 trampolines: where an out-of-line instruction runs (issue 44).
 *
 * A trampoline is KINST_A64_TRAMP_SIZE bytes, aligned to its size, built
 * once at arm time and never written while its probe is armed.  It holds
 * four variants of 8 bytes, one for each pair of interrupt masks (F, I)
 * the handler had to set to enter it, and the address to resume at:
 *
 *	tramp + 8k	the instruction, then
 *	tramp + 8k + 4	brk #(KINST_A64_BRK_RESUME + k)   (k = 1, 2, 3)
 *			b addr + 4 when within +-128 MiB, else
 *			brk #KINST_A64_BRK_RESUME          (k = 0)
 *	tramp + 32	udf (never reached)
 *	tramp + 48	addr + 4, 8 bytes (the resume address)
 *
 * In a kernel the handler masks IRQ and FIQ in the saved pstate before
 * it enters the trampoline, so no thread is ever preempted inside one (as
 * x86-64's run with IF clear): once a probe is disarmed, one round in
 * which every CPU takes an interrupt proves no CPU is still in its
 * trampoline.  k says which of the two it set (bit 1: I, bit 0: F); the
 * brk that ends the variant clears exactly those and resumes at addr + 4.
 * With neither to clear (the context had both masked, or user space,
 * where they cannot be set) variant 0 branches back without a second
 * exception when the trampoline is within reach of the text.  The
 * variant and its brk carry the state: nothing is kept per CPU, so an
 * exception taken inside a trampoline (a fault of its load, a nested
 * probe) cannot overwrite it.
 *
 * Freestanding, like the rest of common/.
 */
#ifndef KINST_A64_TRAMP_H
#define KINST_A64_TRAMP_H

#include "kinst_a64.h"

#define	KINST_A64_BRK(imm)	(0xd4200000u | ((uint32_t)(imm) << 5))
#define	KINST_A64_BRK_IMM(w)	(((w) >> 5) & 0xffffu)
#define	KINST_A64_IS_BRK(w)	(((w) & 0xffe0001fu) == 0xd4200000u)

/*
 * kinst's brk immediates (Linux's arm64 brk-imm.h uses 0x004-0x007 for
 * kprobes and uprobes, 0x100, 0x400-0x401, 0x800, 0x900-0x9ff,
 * 0x5500-0x55ff and 0x8000 and up; these are free).
 */
#define	KINST_A64_BRK_PROBE	0x4b0	/* the breakpoint at a probed instruction */
#define	KINST_A64_BRK_RESUME	0x4b4	/* +k: the end of trampoline variant k */

#define	KINST_A64_TRAMP_SIZE	64
#define	KINST_A64_TRAMP_BACK	48	/* offset of the resume address */
#define	KINST_A64_TRAMP_VARIANTS 4

/* pstate's interrupt masks the handler sets for a trampoline. */
#define	KINST_A64_PSTATE_I	0x080ull
#define	KINST_A64_PSTATE_F	0x040ull

/*
 * Build the trampoline of the out-of-line instruction word, probed at
 * addr, for the address tramp (aligned to KINST_A64_TRAMP_SIZE) into img.
 * Returns whether variant 0 branches back (true) or ends in a brk.
 */
bool	kinst_a64_tramp_build(uint32_t word, uint64_t addr, uint64_t tramp,
	    uint8_t img[KINST_A64_TRAMP_SIZE]);

/*
 * Enter the trampoline at tramp from a hit whose registers are r: with
 * mask_irq (a kernel), IRQ and FIQ masked and the variant that unmasks
 * what was unmasked; without, variant 0 and pstate untouched.
 */
void	kinst_a64_tramp_enter(struct kinst_a64_regs *r, uint64_t tramp,
	    bool mask_irq);

/*
 * The brk word at r->pc ended a variant of the trampoline at tramp, whose
 * resume address is back (read from tramp + KINST_A64_TRAMP_BACK): clear
 * the masks its variant set and resume at back.  -1, r unchanged, when
 * r->pc and the word are not the end of one of tramp's variants.
 */
int	kinst_a64_tramp_resume(struct kinst_a64_regs *r, uint64_t tramp,
	    uint32_t word, uint64_t back);

#endif /* !KINST_A64_TRAMP_H */
