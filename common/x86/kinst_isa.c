/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64 behind kinst_isa.h: a probe's preparation at arm time (decode,
 * classify, refuse what must be refused, build the trampoline image) and
 * the bytes of a jump to a detour.
 */

#include "kinst_isa.h"
#include "kinst_probe.h"

int
kinst_isa_prepare(struct kinst_probe *p, const uint8_t *bytes, size_t avail,
    uint8_t img[KINST_TRAMP_SIZE])
{
	int st;
	size_t i;

	for (i = 0; i < KINST_TRAMP_SIZE; i++)
		img[i] = KINST_BP_BYTE;

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
		p->native = kinst_native_build(bytes, &p->insn, &p->cls,
		    p->addr, p->tramp, img) == KINST_RELOC_OK;
		return (KINST_R_NONE);
	}
	if (kinst_tramp_build(bytes, &p->insn, &p->cls, p->addr, p->tramp,
	    img) != KINST_RELOC_OK) {
		p->cls.treatment = KINST_T_REFUSE;
		p->cls.emul = KINST_EM_NONE;
		p->cls.reason = KINST_R_RIPREL_RANGE;
		return (p->cls.reason);
	}
	return (KINST_R_NONE);
}

void
kinst_isa_jump(uint64_t from, uint64_t to, uint8_t out[KINST_JOPT_WINDOW])
{
	uint32_t k, rel;

	rel = (uint32_t)(to - (from + KINST_JOPT_WINDOW));
	out[0] = KINST_JMP_BYTE;
	for (k = 1; k < KINST_JOPT_WINDOW; k++)
		out[k] = (uint8_t)(rel >> (8 * (k - 1)));
}
