/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A64 (arm64) decode and classification: the first piece of the engine's
 * second instruction set (issue 44).  Every A64 instruction is one 32-bit
 * little-endian word; kinst_a64_decode() says what an instruction is as
 * far as tracing it goes, kinst_a64_classify() gives the verdict and the
 * reason with the codes every instruction set shares (kinst_verdict.h),
 * and kinst_a64_exclusive() refuses what lies inside a load/store
 * exclusive sequence.  docs/engine.md, "arm64: the classifier", gives
 * every rule and why.
 *
 * Freestanding (no libc), like the rest of common/, and ISA-neutral in
 * what it includes, so the host's tests build it on x86-64 too; the arm64
 * shim (to come) selects it through kinst_isa.h.
 */
#ifndef KINST_A64_H
#define KINST_A64_H

#include "../kinst_memops.h"
#include "../kinst_types.h"
#include "../kinst_verdict.h"

/*
 * What an emulated instruction does: those that read the PC or change
 * the flow of control, which cannot run from a trampoline as they are.
 */
enum kinst_a64_emul {
	KINST_A64_EM_NONE = 0,
	KINST_A64_EM_B,		/* b label */
	KINST_A64_EM_BL,	/* bl label: x30 = pc + 4 */
	KINST_A64_EM_BCOND,	/* b.cond / bc.cond label (cond) */
	KINST_A64_EM_CBZ,	/* cbz Wt|Xt (sf), label */
	KINST_A64_EM_CBNZ,
	KINST_A64_EM_TBZ,	/* tbz Rt, #bit (0..63), label */
	KINST_A64_EM_TBNZ,
	KINST_A64_EM_BR,	/* br Xn */
	KINST_A64_EM_BLR,	/* blr Xn: x30 = pc + 4 */
	KINST_A64_EM_RET,	/* ret Xn */
	/*
	 * The pointer-authenticated forms (ARMv8.3 PAC): the target is Xn
	 * (x30 for reta*) authenticated with key A or B (pac_key) and the
	 * modifier Xm, sp (reta*) or zero (the *z forms) (pac_mod).
	 */
	KINST_A64_EM_BR_PAC,
	KINST_A64_EM_BLR_PAC,
	KINST_A64_EM_RET_PAC,
	KINST_A64_EM_ADR,	/* adr Xd, label */
	KINST_A64_EM_ADRP,	/* adrp Xd, label: the label's 4 KiB page */
	KINST_A64_EM_LDR_LIT,	/* ldr Wt|Xt|St|Dt|Qt, label (size, simd) */
	KINST_A64_EM_LDRSW_LIT,	/* ldrsw Xt, label */
	KINST_A64_EM_PRFM_LIT,	/* prfm op, label: a hint, nothing to do */
	/*
	 * mrs Xt, daif: a trampoline runs with interrupts masked (no thread
	 * is ever preempted inside one), so the CPU there would read the
	 * trampoline's DAIF; the interrupted one is the saved pstate's.
	 */
	KINST_A64_EM_MRS_DAIF,
	KINST_A64_EM_COUNT
};

/* Which modifier a pointer-authenticated branch uses (pac_mod). */
enum kinst_a64_pac_mod {
	KINST_A64_PAC_REG = 0,	/* Xm (rm; never 31, which is sp) */
	KINST_A64_PAC_SP = 1,	/* sp (reta*) */
	KINST_A64_PAC_ZERO = 2,	/* zero (braaz, blraaz, ...) */
};

/* A load/store exclusive (excl). */
enum kinst_a64_excl {
	KINST_A64_EXCL_NONE = 0,
	KINST_A64_EXCL_LOAD = 1,	/* ldxr, ldaxr, ldxp, ldaxp (any size) */
	KINST_A64_EXCL_STORE = 2,	/* stxr, stlxr, stxp, stlxp */
};

struct kinst_a64_insn {
	uint32_t	word;
	uint8_t		emul;		/* enum kinst_a64_emul */
	uint8_t		rt;		/* the register it reads or writes: Rt
					   (cbz, tbz, literal loads, mrs, msr),
					   Rd (adr),
					   Rn (br, blr, ret and PAC forms) */
	uint8_t		rm;		/* PAC branches' modifier register */
	uint8_t		sf;		/* 1: the 64-bit form (cbz/cbnz Xt;
					   ldr Xt) */
	uint8_t		cond;		/* b.cond's condition, 0..15 */
	uint8_t		bit;		/* tbz/tbnz's bit number, 0..63 */
	uint8_t		size;		/* ldr literal: bytes loaded, 4/8/16 */
	uint8_t		simd;		/* ldr literal into St/Dt/Qt */
	uint8_t		pac_key;	/* 0: key A, 1: key B */
	uint8_t		pac_mod;	/* enum kinst_a64_pac_mod */
	uint8_t		excl;		/* enum kinst_a64_excl */
	uint8_t		landing;	/* bti c/j/jc, paciasp, pacibsp: where
					   an indirect branch may land when
					   the kernel enforces BTI */
	uint8_t		treatment;	/* KINST_T_OOL, _EMULATE or _REFUSE */
	uint8_t		reason;		/* enum kinst_reason when refused */
	int64_t		off;		/* branch, literal and adr: the byte
					   offset from the instruction's
					   address; adrp: from its page */
};

/* The instruction word at p (little-endian, as A64 text always is). */
static inline uint32_t
kinst_a64_word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/*
 * Decode and classify the instruction word w (as it is in memory, read as
 * a little-endian 32-bit value) into *d.  Always fills every field.
 */
void	kinst_a64_decode(uint32_t w, struct kinst_a64_insn *d);

/*
 * Where a direct branch at pc goes, what adr/adrp compute, or where a
 * literal is loaded from; pc itself for anything else.
 */
uint64_t kinst_a64_target(const struct kinst_a64_insn *d, uint64_t pc);

/*
 * Inside an exclusive sequence: the instruction words[i] of a function of
 * n words (words[0] its first) would be refused because a breakpoint there
 * clears the exclusive monitor, so the store-exclusive that closes the
 * sequence fails every time and the retry loop never ends.  True when
 * words[i] is itself a load- or store-exclusive, or when, going back from
 * i within the function and at most KINST_A64_EXCL_SPAN words, a
 * load-exclusive comes before any store-exclusive.
 */
#define	KINST_A64_EXCL_SPAN	32	/* 128 bytes: the Arm ARM's limit
					   between a load- and a
					   store-exclusive for a loop sure
					   to make progress */
bool	kinst_a64_exclusive(const uint32_t *words, size_t n, size_t i);

const char *kinst_a64_emul_name(int emul);	/* "b", "cbz", ...; "" if none */

/*
 * The registers an emulated instruction reads and writes: x0-x30, sp, pc
 * and pstate (NZCV in bits 31-28), as a hit record will carry them.
 */
struct kinst_a64_regs {
	uint64_t	x[31];
	uint64_t	sp;
	uint64_t	pc;
	uint64_t	pstate;
};

enum {
	KINST_A64_EMU_OK = 0,
	KINST_A64_EMU_FAULT = 1,	/* a literal's read failed; r unchanged */
	KINST_A64_EMU_BADINSN = 2,	/* not emulated here; r unchanged */
	KINST_A64_EMU_AUTH = 3,		/* a PAC branch's target failed its
					   authentication; r unchanged */
};

/*
 * Pointer authentication, for the PAC branches: the CPU's own, with the
 * keys of the context that was interrupted (a kernel's handler runs with
 * the kernel's keys, user space with its own).  sign is pacia (key 0) or
 * pacib (key 1) of ptr with modifier mod; strip is xpaci.  The emulator
 * authenticates by stripping the signed pointer and signing it again:
 * equal, the pointer is authentic and the branch goes to the stripped
 * address.  It never runs aut*, which with FEAT_FPAC raises an exception
 * on a failure, inside the breakpoint handler.
 */
struct kinst_a64_pac_ops {
	uint64_t	(*sign)(void *ctx, unsigned key, uint64_t ptr, uint64_t mod);
	uint64_t	(*strip)(void *ctx, uint64_t ptr);
	void		*ctx;
};

#define	KINST_A64_PSTATE_DAIF	0x3c0ull	/* D, A, I, F: bits 9-6 */

/* Does b.cond's condition cond (0..15) hold for pstate's NZCV? */
bool	kinst_a64_cond_holds(unsigned cond, uint64_t pstate);

/*
 * Do the emulated instruction d at r->pc on r: KINST_A64_EMU_OK and r as
 * the instruction leaves it (pc the next instruction or the target), or r
 * unchanged.  Literal loads read through m, the PAC branches authenticate
 * through pac (NULL: KINST_A64_EMU_BADINSN).  A failed authentication is
 * KINST_A64_EMU_AUTH: the native branch would have faulted (at the
 * target without FEAT_FPAC, at the branch with it), and the caller must
 * not resume as if it had not.  Not here, and so KINST_A64_EMU_BADINSN:
 * literal loads into St/Dt/Qt (the SIMD registers are the CPU's, not in
 * r).
 */
int	kinst_a64_emulate(const struct kinst_a64_insn *d, struct kinst_a64_regs *r,
	    const struct kinst_mem_ops *m, const struct kinst_a64_pac_ops *pac);

#endif /* !KINST_A64_H */
