/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64's register file: what every hit record carries (kinst_abi.h
 * includes this header; it is part of the ABI, shared with kinstctl) and
 * what the engine emulates on.  Include kinst_abi.h, not this header.
 */
#ifndef KINST_X86_REGS_H
#define KINST_X86_REGS_H

#include "kinst_types.h"

/* General registers in x86 encoding order: the ModRM/REX number indexes gpr[]. */
enum kinst_gpr {
	KINST_RAX = 0, KINST_RCX, KINST_RDX, KINST_RBX,
	KINST_RSP, KINST_RBP, KINST_RSI, KINST_RDI,
	KINST_R8, KINST_R9, KINST_R10, KINST_R11,
	KINST_R12, KINST_R13, KINST_R14, KINST_R15,
	KINST_NGPR
};

#include "x86/kinst_flags.h"	/* RFLAGS' bits */

/*
 * The register file as the traced instruction sees it: rip is the address of
 * the probed instruction, rsp the interrupted stack pointer, rflags the
 * interrupted flags.
 */
struct kinst_regs {
	uint64_t	gpr[KINST_NGPR];
	uint64_t	rip;
	uint64_t	rflags;
	uint16_t	cs, ss;
	uint32_t	_pad;
};

/* Its size, checked by kinst_abi.h. */
#define	KINST_REGS_SIZE		152

/* The registers a probe program's KINST_OP_REG names. */
#define	KINST_PREG_RIP		16	/* registers: 0-15 enum kinst_gpr, then: */
#define	KINST_PREG_RFLAGS	17
#define	KINST_PREG_COUNT	18

#endif /* !KINST_X86_REGS_H */
