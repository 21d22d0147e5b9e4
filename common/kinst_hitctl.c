/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-CPU hit counters for sites and subscribers (kinst_control.h,
 * "Hit counters"), control path only (the control lock held).  A chunk
 * holds KINST_HITC_PER counters: one row of KINST_HITC_PER words per CPU,
 * CPU n's row at mem + n * KINST_HITC_PER, so that what one CPU writes
 * at a hit shares no line with what another writes.  A counter is the
 * address of its word in CPU 0's row.  A chunk is allocated when every
 * other is full and freed when its last counter is put back; a counter is
 * put back only where its probe is freed, once no CPU can reach it.
 */

#include "kinst_bytes.h"
#include "kinst_control.h"
#include "kinst_os.h"

/* A new, empty chunk in slot i, or NULL without memory. */
static struct kinst_hitc_chunk *
hitc_chunk_new(struct kinst_ctl *c, uint32_t i)
{
	struct kinst_hitc_chunk *k;

	k = kinst_os_alloc(sizeof(*k));
	if (k == NULL)
		return (NULL);
	kinst_bzero(k, sizeof(*k));
	k->mem = kinst_os_alloc((size_t)c->engine->ncpus * KINST_HITC_PER *
	    sizeof(uint64_t));
	if (k->mem == NULL) {
		kinst_os_free(k, sizeof(*k));
		return (NULL);
	}
	c->hitc[i] = k;
	return (k);
}

/*
 * A free counter, zeroed on every CPU's row: from the first chunk that has
 * one, else from a new chunk in the first empty slot (so that a freed slot
 * before a chunk with room costs no allocation).
 */
uint64_t *
kinst_hitc_get(struct kinst_ctl *c)
{
	struct kinst_hitc_chunk *k;
	uint32_t i, j, b;

	k = NULL;
	for (i = 0; i < KINST_HITC_CHUNKS; i++)
		if (c->hitc[i] != NULL && c->hitc[i]->used < KINST_HITC_PER) {
			k = c->hitc[i];
			break;
		}
	for (i = 0; k == NULL && i < KINST_HITC_CHUNKS; i++)
		if (c->hitc[i] == NULL) {
			k = hitc_chunk_new(c, i);
			if (k == NULL)
				return (NULL);
		}
	if (k == NULL)		/* every chunk full */
		return (NULL);
	for (j = 0; j < KINST_HITC_PER; j++) {
		b = j / 64;
		if ((k->map[b] & (1ull << (j % 64))) != 0)
			continue;
		k->map[b] |= 1ull << (j % 64);
		k->used++;
		for (b = 0; b < c->engine->ncpus; b++)
			k->mem[(size_t)b * KINST_HITC_PER + j] = 0;
		return (&k->mem[j]);
	}
	return (NULL);
}

void
kinst_hitc_put(struct kinst_ctl *c, uint64_t *h)
{
	struct kinst_hitc_chunk *k;
	uint32_t i, j;

	if (h == NULL)
		return;
	for (i = 0; i < KINST_HITC_CHUNKS; i++) {
		k = c->hitc[i];
		if (k == NULL || h < k->mem || h >= k->mem + KINST_HITC_PER)
			continue;
		j = (uint32_t)(h - k->mem);
		k->map[j / 64] &= ~(1ull << (j % 64));
		if (--k->used == 0) {
			kinst_os_free(k->mem, (size_t)c->engine->ncpus *
			    KINST_HITC_PER * sizeof(uint64_t));
			kinst_os_free(k, sizeof(*k));
			c->hitc[i] = NULL;
		}
		return;
	}
}
