/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The frame-pointer walk of x86-64 kernel stacks: see kinst_fpwalk.h.
 */

#include "x86/kinst_fpwalk.h"

/* One frame [fp, fp + 16) inside [lo, hi), aligned, and not below min? */
static bool
fp_frame_ok(const struct kinst_fpwalk *w, uint64_t fp, uint64_t min)
{

	if ((fp & 7) != 0 || fp < w->lo || fp < min)
		return (false);
	return (w->hi >= 16 && fp <= w->hi - 16);
}

uint32_t
kinst_fpwalk(const struct kinst_fpwalk *w, const struct kinst_mem_ops *mem,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	uint64_t frame[2], fp, min, ret;
	uint32_t n;

	n = 0;
	*truncated = false;
	min = w->sp;
	if (w->at_entry && (w->sp & 7) == 0 && w->sp >= w->lo &&
	    w->hi >= 8 && w->sp <= w->hi - 8 &&
	    mem->read(mem->ctx, w->sp, &ret, sizeof(ret)) == 0 &&
	    ret >= w->pc_min) {
		if (max == 0) {
			*truncated = true;
			return (0);
		}
		pcs[n++] = ret;
	}
	/* Each pass stores one address or ends the walk: <= max + 1 reads. */
	for (fp = w->fp; fp_frame_ok(w, fp, min); fp = frame[0]) {
		if (mem->read(mem->ctx, fp, frame, sizeof(frame)) != 0 ||
		    frame[1] < w->pc_min)
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		pcs[n++] = frame[1];
		min = fp + 16;	/* the caller's frame lies above this one */
	}
	return (n);
}
