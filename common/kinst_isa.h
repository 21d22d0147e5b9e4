/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The instruction set behind one interface.  The ISA-neutral engine (the
 * probe table, sites and subscribers, rings, the control path, the device
 * protocol, programs, aggregation, per-thread state) includes this header
 * for everything that knows instructions, never an instruction set's own
 * headers (tests/lint/cycles_test checks it).  Each instruction set lives
 * in its own folder of common/ (x86/: x86-64; arm64/: A64, issue 44, not
 * in a module yet),
 * selected here by the compiler's target (and, for its register file, in
 * kinst_abi.h); sources.mk lists its sources as KINST_ISA_SRCS.  What an
 * instruction set provides, by what the engine does with it:
 *
 * The register file (its own header, which kinst_abi.h includes: it is in
 * every hit record, so it is the ABI's; x86-64's is the layout kinst always
 * had): struct kinst_regs, the registers a probe program names
 * (KINST_PREG_*, below KINST_PREG_COUNT), and, in trap context,
 *	kinst_regs_pc(), kinst_regs_set_pc()	the probed instruction's address
 *						(the probe table's key); where
 *						execution resumes
 *	kinst_regs_sp()			the interrupted stack pointer
 *	kinst_regs_prog()		program register n
 *	kinst_regs_record()		a copy for a hit record, padding zeroed
 *
 * Decode: struct kinst_insn, whose len is an instruction's length (1 ..
 * KINST_MAX_INSN_LEN), and
 *	kinst_insn_length()		an instruction's length (0: none)
 *	kinst_func_boundary()		is an offset an instruction boundary
 *					of a function decoded from its first
 *					byte?
 *
 * Classify: struct kinst_class, whose treatment is the verdict
 * (KINST_T_OOL, KINST_T_OOL_RIPREL: out of line; KINST_T_EMULATE;
 * KINST_T_REFUSE) and whose reason says why a refused instruction is
 * (kinst_verdict.h: enum kinst_reason, whose codes and names are the
 * ABI's, shared by every instruction set, the control path and the
 * shims); the rest is the instruction set's.
 *
 * Prepare the out-of-line copy, at arm time:
 *	kinst_isa_prepare()		decode, classify, refuse what must be
 *					refused, build the probe's trampoline
 *					image (KINST_TRAMP_SIZE bytes, written
 *					once, never while the probe is armed)
 *
 * Execute, in trap context (no lock, no sleep, no allocation):
 *	kinst_isa_ool()			resume in the trampoline, with the
 *					interrupt state its variant needs
 *	kinst_emulate()			do an emulated instruction (the class's
 *					emul) on the register file, memory
 *					through struct kinst_mem_ops
 *					(kinst_memops.h): KINST_EMU_OK, or the
 *					register file is unchanged
 *
 * Place a jump (jump-optimized probes, issue 13):
 *	KINST_JOPT_WINDOW		the bytes a jump replaces
 *	kinst_jopt_qualify()		which offsets of a function may take one
 *					(KINST_JQ_YES), with the caller's own
 *					refusals (a reason, KINST_JOPT_INDIRECT,
 *					KINST_JOPT_TARGET);
 *	kinst_jopt_qualify_decoded()	the same, from a caller's own decode
 *					of every instruction
 *	kinst_detour_build()		the detour a jump leads to
 *					(KINST_DETOUR_SIZE bytes;
 *					KINST_RELOC_OK)
 *	kinst_isa_jump()		the jump's bytes
 *	KINST_BP_BYTE, KINST_JMP_BYTE	the first byte of kinst's breakpoint and
 *					of its jump: the control path writes
 *					a jump a byte at a time
 *					(kinst_os_text_write), the breakpoint
 *					first
 *	KINST_BP_LEN, kinst_isa_text_arm()	the breakpoint's length, and
 *					the write of it or of the original
 *					first KINST_BP_LEN bytes (a byte on
 *					x86-64, a word stored at once on
 *					arm64: kinst_os_text_write_word)
 *
 * Walk a frame:
 *	kinst_fpwalk()			the callers from a frame-pointer chain
 *					(a shim's kinst_os_stack())
 *
 * Walk the call graph (a shim's load-time exclusion sets, the Linux
 * shim's kinst_linux_trappath.c):
 *	kinst_func_exits()		the direct calls and tail jumps that
 *					leave a function, decoded from its
 *					first byte
 */
#ifndef KINST_ISA_H
#define KINST_ISA_H

#include "kinst_abi.h"
#include "kinst_memops.h"
#include "kinst_verdict.h"

#if defined(__x86_64__) || defined(__amd64__)
#include "x86/kinst_isa_md.h"
#elif defined(__aarch64__)
#include "arm64/kinst_isa_md.h"
#else
#error "kinst: no instruction set for this target (common/kinst_isa.h)"
#endif

struct kinst_probe;

/*
 * Arm time: decode and classify the instruction at p->addr (bytes, avail
 * readable) into p->insn and p->cls and, unless that refuses it, copy it
 * into p->orig and build its image for p->tramp into img: the trampoline
 * of an out-of-line instruction or, for an emulated one that has it, its
 * native image (p->native).  KINST_R_NONE when traceable, or the reason
 * it is not (p->cls says so too).  kinst_probe_prepare() calls it with
 * p's other fields set.
 */
int	kinst_isa_prepare(struct kinst_probe *p, const uint8_t *bytes,
	    size_t avail, uint8_t img[KINST_TRAMP_SIZE]);

/*
 * The KINST_JOPT_WINDOW bytes of a jump at from to to (a detour
 * kinst_detour_build() built for from: it checked the distance).
 */
void	kinst_isa_jump(uint64_t from, uint64_t to,
	    uint8_t out[KINST_JOPT_WINDOW]);

#endif /* !KINST_ISA_H */
