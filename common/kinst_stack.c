/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel call stacks at a hit: the STACK record section.  See
 * kinst_stack.h (the frame-pointer walk the FreeBSD shim uses is the
 * instruction set's: x86/kinst_fpwalk.c).
 */

#include "kinst_isa.h"
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
	pcs[0] = kinst_regs_pc(regs);
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
