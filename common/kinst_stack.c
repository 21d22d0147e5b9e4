/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel call stacks at a hit: the STACK record section, and the portable
 * frame-pointer walk the FreeBSD shim uses.  See kinst_stack.h.
 */

#include "kinst_os.h"
#include "kinst_stack.h"

uint32_t
kinst_stack_capture(const struct kinst_regs *regs, void *osctx,
    uint32_t offset, void *sec)
{
	struct kinst_rec_sec *h = sec;
	uint64_t *pcs = (uint64_t *)(h + 1);
	uint32_t n;
	bool truncated;

	truncated = false;
	pcs[0] = regs->rip;
	n = 1 + kinst_os_stack(regs, osctx, offset, pcs + 1,
	    KINST_STACK_MAX - 1, &truncated);
	if (n > KINST_STACK_MAX) {
		/* Never trust a hook to keep its bound: clip. */
		n = KINST_STACK_MAX;
		truncated = true;
	}
	h->type = KINST_SEC_STACK;
	h->flags = truncated ? KINST_SECF_TRUNCATED : 0;
	h->len = n * (uint32_t)sizeof(uint64_t);
	return ((uint32_t)sizeof(*h) + h->len);
}

int
kinst_stack_record(struct kinst_ring *r, const struct kinst_hit_record *rec,
    const struct kinst_regs *regs, void *osctx, uint32_t offset)
{
	union {
		struct kinst_hit_record rec;
		uint64_t	w[KINST_STACK_REC_MAX / sizeof(uint64_t)];
	} b;
	uint32_t len;

	_Static_assert(KINST_STACK_REC_MAX % 8 == 0, "record size alignment");
	b.rec = *rec;
	len = (uint32_t)sizeof(b.rec) + kinst_stack_capture(regs, osctx,
	    offset, (uint8_t *)&b + sizeof(b.rec));
	b.rec.hdr.size = len;
	return (kinst_ring_put(r, &b, len));
}

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
