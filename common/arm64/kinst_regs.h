/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * arm64's register file: what every hit record carries on an arm64 kernel
 * (kinst_abi.h includes this header for an aarch64 target; it is part of
 * the ABI, shared with kinstctl) and what the engine emulates on.  The
 * same layout as the A64 emulator's struct kinst_a64_regs
 * (arm64/kinst_a64.h), which the arm64 side of kinst_isa.h converts to.
 * Include kinst_abi.h, not this header.
 */
#ifndef KINST_ARM64_REGS_H
#define KINST_ARM64_REGS_H

#include "kinst_types.h"

/*
 * The registers as the traced instruction sees them: pc is the address
 * of the probed instruction, sp the interrupted stack pointer, pstate the
 * interrupted SPSR (NZCV in bits 31-28, DAIF in 9-6).
 */
struct kinst_regs {
	uint64_t	x[31];		/* x0-x30: x29 the frame pointer, x30 the link register */
	uint64_t	sp;
	uint64_t	pc;
	uint64_t	pstate;
};

/* Its size, checked by kinst_abi.h. */
#define	KINST_REGS_SIZE		272

/* The registers a probe program's KINST_OP_REG names: 0-30 x0-x30, then: */
#define	KINST_PREG_SP		31
#define	KINST_PREG_PC		32
#define	KINST_PREG_PSTATE	33
#define	KINST_PREG_COUNT	34

#endif /* !KINST_ARM64_REGS_H */
