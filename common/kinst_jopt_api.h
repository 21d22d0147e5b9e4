/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What every instruction set declares the same way behind kinst_isa.h:
 * the verdicts of jump-optimization qualification and their callbacks,
 * a detour's specification and the relocation results, and the call
 * graph's edges.  Each instruction set defines the functions and its own
 * sizes (KINST_JOPT_WINDOW, KINST_DETOUR_SIZE, KINST_TRAMP_SIZE).
 */
#ifndef KINST_JOPT_API_H
#define KINST_JOPT_API_H

#include "kinst_types.h"

struct kinst_insn;
struct kinst_class;

/* Verdicts, one per byte offset of the function. */
enum kinst_jopt_verdict {
	KINST_JQ_NOT_INSN = 0,	/* not the first byte of an instruction */
	KINST_JQ_YES,		/* "jump-optimizable" */
	KINST_JQ_END,		/* "window-past-end": fewer than 5 bytes to the end */
	KINST_JQ_INSN,		/* "window-instruction": an instruction of the window cannot run in a detour */
	KINST_JQ_TARGET,	/* "branch-target-in-window" */
	KINST_JQ_INDIRECT,	/* "indirect-jump-in-function" */
	KINST_JQ_FIXUP,		/* "fixup-in-function" */
	KINST_JQ_UNDECODED,	/* "undecodable-function": the walk stopped before the window's end */
	KINST_JQ_REFUSED,	/* "not-traceable": the instruction itself is refused */
	KINST_JQ_COUNT
};

/*
 * The caller's extra refusals, those only it knows (a live kernel's fixups,
 * patched sites, excluded functions): the KINST_R_* reason for the
 * instruction at off, KINST_JOPT_INDIRECT, or KINST_R_NONE.  May be NULL.
 */
typedef int (*kinst_jopt_refusal_fn)(void *ctx, uint32_t off);

/*
 * What a refusal callback returns for an instruction that is traceable but
 * is an indirect jump in disguise (a `jmp` to a retpoline thunk, which may
 * land anywhere in the function): the function is not optimized.
 */
#define	KINST_JOPT_INDIRECT	0x100
/*
 * ... for a traceable instruction that a branch the decoder cannot see
 * lands on (the target of a Linux jump label, whose site is a nop until a
 * static key flips it): no window may hold it but as its first byte.
 */
#define	KINST_JOPT_TARGET	0x200

/*
 * Fill out[0 .. size-1] with a verdict per byte offset of func (size bytes,
 * the function's whole text).  Returns the number of offsets that qualify.
 * No allocation; O(size) time plus a decode of every instruction.
 */
uint32_t	kinst_jopt_qualify(const uint8_t *func, uint32_t size,
	    kinst_jopt_refusal_fn refusal, void *ctx, uint8_t *out);

/*
 * The instruction at pos of func (size bytes), as the caller decoded and
 * classified it already: KINST_DEC_OK with *insn and *cls filled exactly as
 * kinst_decode(func + pos, size - pos) and kinst_classify() would, or any
 * other status where that decode fails.
 */
typedef int (*kinst_jopt_decode_fn)(void *ctx, uint32_t pos,
	    struct kinst_insn *insn, struct kinst_class *cls);

/*
 * kinst_jopt_qualify() for a caller that has every instruction of the
 * function decoded already (kinstctl's listings): decode is asked for each
 * instruction start in order, instead of the engine decoding each again.
 * The same verdicts when decode answers as it must; a length it gives
 * that is 0 or runs past size counts as undecodable.
 */
uint32_t	kinst_jopt_qualify_decoded(const uint8_t *func, uint32_t size,
	    kinst_jopt_decode_fn decode, kinst_jopt_refusal_fn refusal,
	    void *ctx, uint8_t *out);

/* Where a jump-optimized probe's detour goes and what it calls. */
struct kinst_detour_spec {
	uint64_t	addr;		/* the probed instruction: window start */
	uint64_t	at;		/* where the detour will be placed */
	uint64_t	handler;	/* void handler(void *arg, struct kinst_regs *) */
	uint64_t	arg;
	uint32_t	redzone;	/* bytes below the stack pointer the
					   interrupted code owns */
	uint32_t	flags;		/* KINST_DETOUR_* */
};

/*
 * x86: the CPU has SMAP (clac and stac exist).  A window inside a
 * user-access region (between stac and clac) runs with EFLAGS.AC set: SMAP
 * is off there.  The detour then clears AC before the handler, as the
 * int3 path's kernel entry does, and its popfq gives the window AC back.
 */
#define	KINST_DETOUR_SMAP	0x1u

/* Trampoline, native image and detour builders' results. */
enum kinst_reloc_err {
	KINST_RELOC_OK = 0,
	KINST_RELOC_RANGE = 1,	/* a displacement or branch does not reach */
	KINST_RELOC_NOTOOL = 2,	/* the instruction is not an out-of-line one */
};

/*
 * The call graph's edges (a shim's load-time exclusion sets): the direct
 * branches that leave a function, by kind.
 */
enum kinst_exit_kind {
	KINST_EXIT_CALL = 1,	/* x86-64 e8 rel32; A64 bl */
	KINST_EXIT_JMP = 2,	/* e9 rel32, eb rel8; b: a tail call */
	KINST_EXIT_JCC = 3,	/* 7x rel8, 0f 8x rel32; b.cond, cbz, tbz: a
				   conditional tail call */
};

/*
 * Called once per exit, in address order: from is the branch instruction's
 * address, to its target.  A non-zero return stops the walk.
 */
typedef int (*kinst_exit_fn)(void *arg, uint64_t from, uint64_t to, int kind);

/*
 * Walk text[0 .. size) (the function's bytes, base its address).  Returns
 * the number of bytes decoded: size when the whole function decoded, less
 * when an undecodable instruction (or fn) stopped the walk.
 */
size_t	kinst_func_exits(const uint8_t *text, size_t size, uint64_t base,
	    kinst_exit_fn fn, void *arg);

#endif /* !KINST_JOPT_API_H */
