/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Arm-time preparation of a probe: decode, classify, refuse what must be
 * refused, build the trampoline image.  Kept apart from the trap path
 * (kinst_engine.c) so that kinstctl can give exactly the module's verdict
 * without linking the OS interface.
 */

#include "kinst_engine.h"

int
kinst_probe_prepare(struct kinst_probe *p, const uint8_t *bytes,
    size_t avail, uint64_t addr, uint64_t tramp,
    uint8_t img[KINST_TRAMP_SIZE])
{
	int st;
	size_t i;

	p->addr = addr;
	p->tramp = tramp;
	p->hits = 0;
	p->next = NULL;
	p->tripped = 0;
	p->jresume = 0;
	p->native = 0;
	for (i = 0; i < sizeof(p->orig); i++)
		p->orig[i] = 0;
	for (i = 0; i < KINST_TRAMP_SIZE; i++)
		img[i] = 0xcc;

	st = kinst_decode(bytes, avail, &p->insn);
	kinst_classify(st, &p->insn, bytes, &p->cls);
	if (p->cls.treatment == KINST_T_REFUSE)
		return (p->cls.reason);
	for (i = 0; i < p->insn.len; i++)
		p->orig[i] = bytes[i];

	if (kinst_sti_shadow_matters(&p->insn, bytes + p->insn.len,
	    avail - p->insn.len)) {
		p->cls.treatment = KINST_T_REFUSE;
		p->cls.reason = KINST_R_STI_SHADOW;
		return (p->cls.reason);
	}
	/* Emulated; the slot may hold the native fallback (kinst_relocate.h). */
	if (p->cls.treatment == KINST_T_EMULATE) {
		p->native = kinst_native_build(bytes, &p->insn, &p->cls, addr,
		    tramp, img) == KINST_RELOC_OK;
		return (KINST_R_NONE);
	}
	if (kinst_tramp_build(bytes, &p->insn, &p->cls, addr, tramp, img) !=
	    KINST_RELOC_OK) {
		p->cls.treatment = KINST_T_REFUSE;
		p->cls.emul = KINST_EM_NONE;
		p->cls.reason = KINST_R_RIPREL_RANGE;
		return (p->cls.reason);
	}
	return (KINST_R_NONE);
}
