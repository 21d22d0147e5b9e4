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

/* RFLAGS bits the engine cares about. */
#define	KINST_FL_CF	0x00000001ull
#define	KINST_FL_PF	0x00000004ull
#define	KINST_FL_AF	0x00000010ull
#define	KINST_FL_ZF	0x00000040ull
#define	KINST_FL_SF	0x00000080ull
#define	KINST_FL_TF	0x00000100ull
#define	KINST_FL_IF	0x00000200ull
#define	KINST_FL_DF	0x00000400ull
#define	KINST_FL_OF	0x00000800ull
#define	KINST_FL_IOPL	0x00003000ull
#define	KINST_FL_NT	0x00004000ull
#define	KINST_FL_RF	0x00010000ull
#define	KINST_FL_VM	0x00020000ull
#define	KINST_FL_AC	0x00040000ull
#define	KINST_FL_VIF	0x00080000ull
#define	KINST_FL_VIP	0x00100000ull
#define	KINST_FL_ID	0x00200000ull
#define	KINST_FL_ARITH	(KINST_FL_CF | KINST_FL_PF | KINST_FL_AF | \
			 KINST_FL_ZF | KINST_FL_SF | KINST_FL_OF)

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
