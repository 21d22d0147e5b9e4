/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64 behind kinst_isa.h, which includes this header (include that
 * one): the decoder, the classifier, trampolines, emulation, detours and
 * jump windows, the frame-pointer walk, the call-graph edges, and the register file's accessors
 * the neutral engine uses (the register file itself is kinst_regs.h's).
 */
#ifndef KINST_X86_ISA_MD_H
#define KINST_X86_ISA_MD_H

#include "x86/kinst_decode.h"
#include "x86/kinst_classify.h"
#include "x86/kinst_relocate.h"
#include "x86/kinst_emulate.h"
#include "x86/kinst_detour.h"
#include "x86/kinst_jopt.h"
#include "x86/kinst_fpwalk.h"
#include "x86/kinst_callgraph.h"
#include "kinst_os.h"		/* kinst_os_text_write */

#define	KINST_BP_BYTE	0xcc	/* int3 */
#define	KINST_BP_LEN	1	/* the breakpoint's bytes */

/* Arm (the int3) or disarm (the original first byte) the probe at addr. */
static inline void
kinst_isa_text_arm(uint64_t addr, bool arm, const uint8_t *orig)
{

	kinst_os_text_write(addr, arm ? KINST_BP_BYTE : orig[0]);
}
#define	KINST_JMP_BYTE	0xe9	/* jmp rel32: kinst_isa_jump()'s first byte */

/* The probed instruction's address (trap time: the int3's). */
static inline uint64_t
kinst_regs_pc(const struct kinst_regs *r)
{

	return (r->rip);
}

static inline void
kinst_regs_set_pc(struct kinst_regs *r, uint64_t pc)
{

	r->rip = pc;
}

/* The interrupted stack pointer. */
static inline uint64_t
kinst_regs_sp(const struct kinst_regs *r)
{

	return (r->gpr[KINST_RSP]);
}

/* A probe program's register reg (< KINST_PREG_COUNT: its verifier's bound). */
static inline uint64_t
kinst_regs_prog(const struct kinst_regs *r, uint8_t reg)
{

	if (reg < KINST_NGPR)
		return (r->gpr[reg]);
	return (reg == KINST_PREG_RIP ? r->rip : r->rflags);
}

/* A copy of r for a hit record, its padding zeroed (never the stack's). */
static inline void
kinst_regs_record(struct kinst_regs *dst, const struct kinst_regs *r)
{

	*dst = *r;
	dst->_pad = 0;
}

/*
 * Out of line: resume at the probe's trampoline (tramp, kinst_relocate.h).
 * In a kernel (manage_if) the trampoline runs with interrupts off so that
 * no thread is ever preempted inside it; the sti variant restores IF with
 * its shadow covering the jump back.
 */
static inline void
kinst_isa_ool(struct kinst_regs *regs, const struct kinst_class *cls,
    uint64_t tramp, bool manage_if)
{
	bool if_was_set;

	if (manage_if) {
		if_was_set = (regs->rflags & KINST_FL_IF) != 0;
		regs->rflags &= ~KINST_FL_IF;
		if (if_was_set && (cls->flags & KINST_CF_NO_STI) == 0)
			regs->rip = tramp + KINST_TRAMP_STI;
		else
			regs->rip = tramp + KINST_TRAMP_NOSTI;
	} else {
		regs->rip = tramp + KINST_TRAMP_NOSTI;
	}
}

#endif /* !KINST_X86_ISA_MD_H */
