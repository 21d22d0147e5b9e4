/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A64 trampolines (kinst_a64_tramp.h): their image, entering one from a
 * hit and resuming from the brk that ends it.
 */

#include "kinst_a64_tramp.h"

#define	UDF	0x00000000u		/* udf #0: never reached */

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

bool
kinst_a64_tramp_build(uint32_t word, uint64_t addr, uint64_t tramp,
    uint8_t img[KINST_A64_TRAMP_SIZE])
{
	uint64_t back = addr + 4, from = tramp + 4;
	int64_t off = (int64_t)(back - from);
	bool reach = off >= -(1ll << 27) && off < (1ll << 27);
	unsigned k, i;

	for (i = 0; i < KINST_A64_TRAMP_SIZE; i += 4)
		put32(img + i, UDF);
	for (k = 0; k < KINST_A64_TRAMP_VARIANTS; k++) {
		put32(img + 8 * k, word);
		put32(img + 8 * k + 4, KINST_A64_BRK(KINST_A64_BRK_RESUME + k));
	}
	if (reach)
		put32(img + 4, 0x14000000u | (uint32_t)((off >> 2) & 0x3ffffff));
	for (i = 0; i < 8; i++)
		img[KINST_A64_TRAMP_BACK + i] = (uint8_t)(back >> (8 * i));
	return reach;
}

void
kinst_a64_tramp_enter(struct kinst_a64_regs *r, uint64_t tramp, bool mask_irq)
{
	unsigned k = 0;

	if (mask_irq) {
		if ((r->pstate & KINST_A64_PSTATE_I) == 0)
			k |= 2;
		if ((r->pstate & KINST_A64_PSTATE_F) == 0)
			k |= 1;
		r->pstate |= KINST_A64_PSTATE_I | KINST_A64_PSTATE_F;
	}
	r->pc = tramp + 8 * k;
}

int
kinst_a64_tramp_resume(struct kinst_a64_regs *r, uint64_t tramp,
    uint32_t word, uint64_t back)
{
	uint64_t at = r->pc - tramp;
	unsigned k;

	if (r->pc < tramp || at >= 8 * KINST_A64_TRAMP_VARIANTS || at % 8 != 4)
		return -1;
	k = (unsigned)(at / 8);
	if (word != KINST_A64_BRK(KINST_A64_BRK_RESUME + k))
		return -1;
	if (k & 2)
		r->pstate &= ~KINST_A64_PSTATE_I;
	if (k & 1)
		r->pstate &= ~KINST_A64_PSTATE_F;
	r->pc = back;
	return 0;
}
