/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What an x86-64 instruction needs to be traced: run out of line in a
 * trampoline (optionally with its RIP-relative displacement rewritten),
 * emulated in the trap handler (which kind), or refused (and why: the
 * treatments and reasons are kinst_verdict.h's).  See docs/engine.md for
 * the table and the reasoning behind every row.
 */
#ifndef KINST_CLASSIFY_H
#define KINST_CLASSIFY_H

#include "kinst_verdict.h"	/* the treatments and the reasons */
#include "x86/kinst_decode.h"

enum kinst_emul {
	KINST_EM_NONE = 0,
	KINST_EM_JCC,		/* 70-7f rel8, 0f 80-8f rel32 */
	KINST_EM_JMP_REL,	/* eb rel8, e9 rel32 */
	KINST_EM_CALL_REL,	/* e8 rel32 */
	KINST_EM_CALL_IND,	/* ff /2: register or memory */
	KINST_EM_JMP_IND,	/* ff /4: register or memory */
	KINST_EM_LOOP,		/* e2 */
	KINST_EM_LOOPE,		/* e1 */
	KINST_EM_LOOPNE,	/* e0 */
	KINST_EM_JRCXZ,		/* e3 (jecxz with 67) */
	KINST_EM_RET,		/* c3 */
	KINST_EM_RET_IMM,	/* c2 iw */
	KINST_EM_PUSHF,		/* 9c */
	KINST_EM_POPF,		/* 9d */
	KINST_EM_COUNT
};


#define	KINST_CF_NO_STI	0x01	/* changes IF itself: use the trampoline variant without sti */
#define	KINST_CF_RIPREL	0x02	/* has a RIP-relative disp32 */
#define	KINST_CF_NOFALL	0x04	/* never continues at the next instruction (jmp, ret, ud2, iret...) */

struct kinst_class {
	uint8_t		treatment;	/* enum kinst_treatment */
	uint8_t		emul;		/* enum kinst_emul, when KINST_T_EMULATE */
	uint8_t		reason;		/* enum kinst_reason, when KINST_T_REFUSE */
	uint8_t		flags;		/* KINST_CF_* */
};

/*
 * Classify a decoded instruction.  dec_status is kinst_decode()'s return
 * value for it (anything but KINST_DEC_OK is refused as undecodable); bytes
 * are the instruction's bytes.
 */
void	kinst_classify(int dec_status, const struct kinst_insn *insn,
	    const uint8_t *bytes, struct kinst_class *out);

/*
 * The near branch insn is from its opcode alone (KINST_EM_JCC ..
 * KINST_EM_RET_IMM; KINST_EM_NONE if none): what kinst_classify() emulates,
 * unless a prefix makes it refuse (KINST_R_BRANCH_OPSIZE, KINST_R_SEGMENT).
 * The one table of branch kinds; kinst_callgraph.c and kinstctl cover
 * read it here.
 */
int	kinst_branch_kind(const struct kinst_insn *insn);

/*
 * Is insn an sti immediately followed (next, avail bytes) by an instruction
 * that halts?  Then its interrupt shadow matters and it must be refused
 * (KINST_R_STI_SHADOW); kinst_isa_prepare() checks this.
 */
bool	kinst_sti_shadow_matters(const struct kinst_insn *insn,
	    const uint8_t *next, size_t avail);

const char	*kinst_emul_name(int emul);		/* "jcc", "call", ... */

/*
 * Walk a function's bytes from its first byte.  kinst_func_boundary() says
 * whether off is an instruction boundary strictly inside [0, size): returns
 * 1 if it is, 0 if it is not (then prev and next, when not NULL, get the
 * nearest boundaries below and above, next == size if none), -1 if the
 * function could not be decoded up to off (an undecodable instruction before
 * it).
 */
int	kinst_func_boundary(const uint8_t *func, size_t size, uint32_t off,
	    uint32_t *prev, uint32_t *next);

/* Does RFLAGS satisfy condition code cc (0..15, the low nibble of jcc)? */
bool	kinst_cond(unsigned cc, uint64_t rflags);

#endif /* !KINST_CLASSIFY_H */
