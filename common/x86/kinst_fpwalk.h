/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64's frame walk (kinst_isa.h): the callers of a hit from its frame
 * pointer chain, for a kernel built with frame pointers (the FreeBSD
 * shim's kinst_os_stack()).
 */
#ifndef KINST_X86_FPWALK_H
#define KINST_X86_FPWALK_H

#include "kinst_memops.h"

/*
 * Frame-pointer walk (FreeBSD, whose kernel keeps frame pointers): from
 * fp, each frame is [fp] = the caller's fp, [fp + 8] = a return address.
 * Every frame must lie inside [lo, hi) (the thread's kernel stack), be
 * 8-byte aligned, not below sp, and above the previous frame (so a loop or
 * a frame pointer that goes down ends the walk); a return address below
 * pc_min (not kernel text) or a failed read also ends it.  Every word is
 * read through mem (fault-safe in a kernel).  With at_entry (the probe is
 * the function's first instruction: it has not pushed %rbp yet, so %rbp
 * is still its caller's frame), the return address at [sp] comes first.
 * Stores at most max addresses into pcs; *truncated says whether the walk
 * found more.  Returns the number stored.  Reads at most max + 2 times.
 */
struct kinst_fpwalk {
	uint64_t	fp;		/* the interrupted %rbp */
	uint64_t	sp;		/* the interrupted %rsp */
	uint64_t	lo, hi;		/* stack bounds: lo <= frame < hi */
	uint64_t	pc_min;		/* lowest plausible return address */
	bool		at_entry;
};

uint32_t kinst_fpwalk(const struct kinst_fpwalk *w,
	    const struct kinst_mem_ops *mem, uint64_t *pcs, uint32_t max,
	    bool *truncated);

#endif /* !KINST_X86_FPWALK_H */
