/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the probe table tests: addresses that collide, and a
 * structural check of the table.
 */
#ifndef PTABLE_UTIL_H
#define PTABLE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinst_abi.h"
#include "kinst_probe.h"

#define	PT_MASK		(KINST_PTABLE_SLOTS - 1u)
#define	PT_BASE		0xffffffff81000000ull	/* kernel text, as on amd64 */

static inline uint64_t
pt_mix(uint64_t x)
{

	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return (x ^ (x >> 31));
}

/*
 * Fill out[0..n) with distinct addresses whose home slot is one of
 * homes[0..nh), round robin, scanning kernel-text-like addresses upwards
 * from *cursor (advanced, so successive calls never repeat an address).
 */
static inline void
pt_colliding(uint64_t *cursor, const uint32_t *homes, uint32_t nh,
    uint64_t *out, uint32_t n)
{
	uint32_t *need, i, j, done;
	uint64_t a;

	need = calloc(nh, sizeof(*need));
	for (i = 0; i < n; i++)
		need[i % nh]++;
	done = 0;
	for (a = *cursor; done < n; a++) {
		uint32_t h = kinst_ptable_home(a);

		for (j = 0; j < nh; j++)
			if (homes[j] == h && need[j] > 0) {
				need[j]--;
				out[done++] = a;
				break;
			}
	}
	*cursor = a;
	free(need);
}

/*
 * Check the table's structure; returns NULL or a description of the first
 * violation (static buffer):
 *  - count and tombstones match the slots;
 *  - (I): every slot between a live probe's home and its slot is non-NULL;
 *  - every tombstone lies on some live probe's path (the sweep leaves none
 *    that could be NULL);
 *  - every live probe is found by lookup, and addresses are unique.
 */
static inline const char *
pt_check(const struct kinst_ptable *t)
{
	static char msg[256];
	static uint8_t covered[KINST_PTABLE_SLOTS];
	struct kinst_probe *p;
	uint32_t i, j, h, live, tombs;

	memset(covered, 0, sizeof(covered));
	live = tombs = 0;
	for (i = 0; i < KINST_PTABLE_SLOTS; i++) {
		p = t->slots[i];
		if (p == NULL)
			continue;
		if (p == KINST_PTABLE_TOMB) {
			tombs++;
			continue;
		}
		live++;
		h = kinst_ptable_home(p->addr);
		for (j = h; j != i; j = (j + 1) & PT_MASK) {
			if (t->slots[j] == NULL) {
				snprintf(msg, sizeof(msg), "slot %u (home %u) "
				    "has an empty slot %u on its path", i, h, j);
				return (msg);
			}
			covered[j] = 1;
		}
		if (kinst_ptable_lookup(t, p->addr) != p) {
			snprintf(msg, sizeof(msg), "probe %#jx in slot %u "
			    "not found", (uintmax_t)p->addr, i);
			return (msg);
		}
	}
	if (live != t->count || tombs != t->tombstones) {
		snprintf(msg, sizeof(msg), "count %u/%u tombstones %u/%u",
		    t->count, live, t->tombstones, tombs);
		return (msg);
	}
	for (i = 0; i < KINST_PTABLE_SLOTS; i++)
		if (t->slots[i] == KINST_PTABLE_TOMB && !covered[i]) {
			snprintf(msg, sizeof(msg), "tombstone in slot %u is on "
			    "no live probe's path: it should be empty", i);
			return (msg);
		}
	return (NULL);
}

#endif /* !PTABLE_UTIL_H */
