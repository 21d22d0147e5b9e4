/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Jump-optimized probes (issue 13): the per-probe detour that a 5-byte
 * `jmp rel32` over the probed instruction's window leads to, instead of an
 * int3.  Built once at optimize time, never written while in use:
 *
 *   lea   -(redzone + 152)(%rsp), %rsp     the interrupted code's red zone
 *                                          (user space: 128; kernels: 0) is
 *                                          skipped, then a struct kinst_regs
 *   pushfq; popq 136(%rsp)                 rflags
 *   mov   %reg, 8*n(%rsp)                  every GPR in kinst_regs order
 *   rsp, rip (the probed address), cs, ss  as the int3 path would see them
 *   [testb $4,138(%rsp); jz 1f; clac; 1:]  KINST_DETOUR_SMAP: AC clear
 *   mov %rsp,%rsi; movabs $arg,%rdi        handler(arg, regs)
 *   mov %rsp,%rbx; and $-16,%rsp; cld      the handler is C: DF clear
 *   call handler; mov %rbx,%rsp
 *   pushq 136(%rsp); popfq                 rflags back (DF and AC too)
 *   mov   8*n(%rsp), %reg                  every GPR back (rsp last, by lea)
 *   lea   (redzone + 152)(%rsp), %rsp
 *   [the window's instructions, relocated] run as the original would
 *   jmp   rel32 -> addr + window length
 *
 * (for a return padded to a jump's size, kinst_jopt_padded_ret(), the
 * window is the ret and four int3 that never run: the detour ends with
 * the ret)
 *
 * The handler must not change the register file: the saved one is what
 * the window then runs on.  It records only (kinst_engine_jhit); the
 * window's execution is the detour's.  Interrupts stay as the interrupted
 * code had them; a kernel shim's handler makes its own per-CPU section.
 * The window must have qualified (kinst_jopt_qualify); the builder checks
 * again that every instruction of it can be relocated.
 */
#ifndef KINST_DETOUR_H
#define KINST_DETOUR_H

#include "x86/kinst_relocate.h"
#include "kinst_abi.h"

#define	KINST_DETOUR_SIZE	320	/* bytes per detour, int3-filled */


/*
 * Build the detour for the window that starts at window[0] (avail readable
 * bytes of the function from there).  On KINST_RELOC_OK, out holds
 * KINST_DETOUR_SIZE bytes, *wlen the window's length (its whole
 * instructions, >= 5) and *wstart (when not NULL) the offset in the detour
 * of the relocated window: where the int3 path resumes a hit of a probe
 * whose jump is being installed (kinst_control.c), so that no thread
 * enters the window's interior meanwhile.  KINST_RELOC_NOTOOL: an instruction of the window
 * cannot run in a detour; KINST_RELOC_RANGE: a rel32 does not reach or the
 * code does not fit.
 */
int	kinst_detour_build(const uint8_t *window, uint32_t avail,
	    const struct kinst_detour_spec *sp, uint8_t out[KINST_DETOUR_SIZE],
	    uint32_t *wlen, uint32_t *wstart);

#endif /* !KINST_DETOUR_H */
