/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64's RFLAGS bits, apart from the register file (x86/kinst_regs.h
 * includes this header) so that the classifier, which kinstctl builds for
 * an arm64 host too, reads them without x86-64's struct kinst_regs.
 */
#ifndef KINST_X86_FLAGS_H
#define KINST_X86_FLAGS_H

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

#endif /* !KINST_X86_FLAGS_H */
