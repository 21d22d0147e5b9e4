/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Arm-time preparation of a probe: its site fields, then the instruction
 * set's part (kinst_isa_prepare: decode, classify, refuse what must be
 * refused, build the trampoline image).  Kept apart from the trap path
 * (kinst_engine.c) so that kinstctl can give exactly the module's verdict
 * without linking the OS interface.
 */

#include "kinst_engine.h"

int
kinst_probe_prepare(struct kinst_probe *p, const uint8_t *bytes,
    size_t avail, uint64_t addr, uint64_t tramp,
    uint8_t img[KINST_TRAMP_SIZE])
{
	size_t i;

	p->addr = addr;
	p->tramp = tramp;
	p->hits = 0;
	p->hitc = NULL;
	p->next = NULL;
	p->tripped = 0;
	p->jresume = 0;
	p->native = 0;
	for (i = 0; i < sizeof(p->orig); i++)
		p->orig[i] = 0;
	return (kinst_isa_prepare(p, bytes, avail, img));
}
