/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-probe trampolines.  A trampoline is KINST_TRAMP_SIZE bytes holding two
 * variants of the same code, built once at arm time and never written again
 * while the probe is armed:
 *
 *   tramp + KINST_TRAMP_NOSTI:  [relocated insn] [jmp rel32 -> addr + len]
 *   tramp + KINST_TRAMP_STI:    [relocated insn] [sti] [jmp rel32 -> addr + len]
 *
 * The handler enters the sti variant when the interrupted context had IF set
 * (it clears IF in the saved RFLAGS first), so the instruction runs with
 * interrupts off and sti's one-instruction shadow covers the jump back.
 * Instructions that change IF themselves (KINST_CF_NO_STI) use the no-sti
 * variant for both.  Unused bytes are int3.
 */
#ifndef KINST_RELOCATE_H
#define KINST_RELOCATE_H

#include "x86/kinst_classify.h"
#include "kinst_jopt_api.h"

#define	KINST_TRAMP_SIZE	64
#define	KINST_TRAMP_NOSTI	0
#define	KINST_TRAMP_STI		32


/*
 * Build the trampoline image for the instruction at addr (bytes/insn/cls
 * describe it) to be placed at tramp.  out receives KINST_TRAMP_SIZE bytes.
 */
int	kinst_tramp_build(const uint8_t *bytes, const struct kinst_insn *insn,
	    const struct kinst_class *cls, uint64_t addr, uint64_t tramp,
	    uint8_t out[KINST_TRAMP_SIZE]);

/*
 * The native image of an emulated indirect call or jump through memory
 * (KINST_EM_CALL_IND, KINST_EM_JMP_IND with a memory operand), in the
 * probe's otherwise unused trampoline slot, in the same two variants:
 *
 *   tramp + KINST_TRAMP_NOSTI:  [push $next] [jmp *mem]
 *   tramp + KINST_TRAMP_STI:    [push $next] [sti] [jmp *mem]
 *
 * (a jmp has no push; next = addr + len, pushed as a sign-extended imm32,
 * so it must lie in the top or bottom 2 GiB, as kernel text does; jmp *mem
 * is the call's own bytes with ModRM.reg 2 -> 4, a RIP-relative disp32
 * rewritten for its new address).  It does what the instruction does but
 * with the CPU's own read of the operand: the engine runs it when the
 * emulator's no-fault read fails (kinst_os_read refuses more than the
 * hardware does, or the memory is not mapped yet), so that a probe never
 * turns an instruction the kernel would have executed into a fatal
 * breakpoint trap.  The jump leaves the trampoline, so nothing runs in it
 * after the sti shadow.  KINST_RELOC_NOTOOL when there is no such image:
 * another instruction, a register operand, or an operand addressed through
 * %rsp (the push would move it); KINST_RELOC_RANGE when next or the
 * displacement does not fit.
 */
int	kinst_native_build(const uint8_t *bytes, const struct kinst_insn *insn,
	    const struct kinst_class *cls, uint64_t addr, uint64_t tramp,
	    uint8_t out[KINST_TRAMP_SIZE]);

/* Can code at tramp reach every target it must (disp32, jmp back)? */
bool	kinst_tramp_reaches(const struct kinst_insn *insn, uint64_t addr,
	    uint64_t tramp);

#endif /* !KINST_RELOCATE_H */
