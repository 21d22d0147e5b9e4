/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-kernel aggregation, the trap-context half (kinst_agg.h): the
 * program's KEY/VALUE opcodes, the histogram bucket of a value, and adding
 * a hit to this CPU's table (the engine's step that does it for a hit is
 * kinst_agghit.c).  No lock, no allocation, bounded work: a key visits at
 * most KINST_AGG_PROBES slots.
 */

#include "kinst_agg.h"

/* Tests may force hashes (collisions) with their own function. */
#ifdef KINST_AGG_TEST_HASH
uint64_t KINST_AGG_TEST_HASH(const uint64_t *frames, uint32_t nframes);
#define	AGG_STACK_HASH	KINST_AGG_TEST_HASH
#else
#define	AGG_STACK_HASH	kinst_agg_stack_hash
#endif

void
kinst_agg_op(struct kinst_agg_val *out, uint8_t op, uint8_t arg, uint64_t v)
{
	if (out == NULL)
		return;
	if (op == KINST_OP_KEY)
		out->key[arg & 1] = v;
	else
		out->value = v;
}

void
kinst_agg_clock(struct kinst_agg_val *out, uint64_t now)
{
	if (out != NULL)
		out->now = now;
}

uint32_t
kinst_agg_bucket(const struct kinst_agg *a, int64_t v)
{
	switch (a->kind) {
	case KINST_AGG_LOG2:
		if (v < 0)
			return (0);
		if (v == 0)
			return (1);
		/* [2^k, 2^(k+1)) -> 2 + k, k = 0 .. 62 */
		return (2 + (63 - (uint32_t)__builtin_clzll((uint64_t)v)));
	case KINST_AGG_LINEAR:
		if (v < a->lin_min)
			return (0);
		if (v >= a->lin_max)
			return (a->nlinear + 1);
		return (1 + (uint32_t)(((uint64_t)v - (uint64_t)a->lin_min) /
		    (uint64_t)a->lin_step));
	default:
		return (0);
	}
}

struct kinst_agg_slot *
kinst_agg_slot(const struct kinst_agg *a, uint32_t t, uint32_t cpu,
    uint32_t i)
{
	return ((struct kinst_agg_slot *)(a->tables[t] +
	    (size_t)cpu * a->cpu_bytes + (size_t)i * a->stride));
}

static uint32_t
agg_hash(uint32_t probe_id, const uint64_t key[2])
{
	uint64_t h;

	h = key[0] * 0x9e3779b97f4a7c15ull;
	h ^= (h >> 31) ^ (key[1] * 0xc2b2ae3d27d4eb4full);
	h ^= (uint64_t)probe_id * 0x165667b19e3779f9ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return ((uint32_t)h);
}

/* The slot of (probe_id, key) in this CPU's table, claimed if new; or NULL. */
static struct kinst_agg_slot *
agg_find(struct kinst_agg *a, uint32_t t, uint32_t cpu, uint32_t probe_id,
    const struct kinst_agg_val *v)
{
	struct kinst_agg_slot *sl;
	uint32_t h, i, n;

	h = agg_hash(probe_id, v->key);
	n = a->nslots < KINST_AGG_PROBES ? a->nslots : KINST_AGG_PROBES;
	for (i = 0; i < n; i++) {
		sl = kinst_agg_slot(a, t, cpu, (h + i) & (a->nslots - 1));
		if (KINST_LOAD_RELAXED(&sl->state) == KINST_AGG_EMPTY) {
			/* Only this CPU writes here: publish the key last. */
			sl->probe_id = probe_id;
			sl->key[0] = v->key[0];
			sl->key[1] = v->key[1];
			sl->min = (int64_t)v->value;
			sl->max = (int64_t)v->value;
			KINST_STORE_RELEASE(&sl->state, KINST_AGG_USED);
			return (sl);
		}
		if (sl->probe_id == probe_id && sl->key[0] == v->key[0] &&
		    sl->key[1] == v->key[1])
			return (sl);
	}
	return (NULL);
}

bool
kinst_agg_add(struct kinst_agg *a, uint32_t t, uint32_t cpu,
    uint32_t probe_id, const struct kinst_agg_val *v)
{
	struct kinst_agg_cpu_stats *st = &a->stats[cpu].st;
	struct kinst_agg_slot *sl;
	uint64_t *b;
	int64_t x;

	sl = agg_find(a, t, cpu, probe_id, v);
	if (sl == NULL) {
		KINST_AGG_INC(&st->overflow, 1);
		return (false);
	}
	x = (int64_t)v->value;
	KINST_AGG_INC(&sl->count, 1);
	KINST_AGG_INC(&sl->sum, v->value);
	if (x < sl->min)
		KINST_STORE_RELAXED(&sl->min, x);
	if (x > sl->max)
		KINST_STORE_RELAXED(&sl->max, x);
	if (a->nbuckets != 0) {
		b = (uint64_t *)(sl + 1) + kinst_agg_bucket(a, x);
		KINST_AGG_INC(b, 1);
	}
	KINST_AGG_INC(&st->aggregated, 1);
	return (true);
}

uint64_t
kinst_agg_stack_hash(const uint64_t *frames, uint32_t nframes)
{
	uint64_t h;
	uint32_t i;

	h = 0x84222325cbf29ce4ull ^ ((uint64_t)nframes * 0x9e3779b97f4a7c15ull);
	for (i = 0; i < nframes; i++) {
		h ^= frames[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (h);
}

struct kinst_agg_stack_slot *
kinst_agg_stack_slot(const struct kinst_agg *a, uint32_t t, uint32_t cpu,
    uint32_t i)
{
	return (&a->stacks[t][(size_t)cpu * a->nstacks + i]);
}

static bool
agg_same_frames(const struct kinst_agg_stack_slot *sl, const uint64_t *frames,
    uint32_t nframes)
{
	uint32_t i;

	if (sl->nframes != nframes)
		return (false);
	for (i = 0; i < nframes; i++)
		if (sl->frames[i] != frames[i])
			return (false);
	return (true);
}

bool
kinst_agg_stack_find(struct kinst_agg *a, uint32_t t, uint32_t cpu,
    const uint64_t *frames, uint32_t nframes, uint32_t flags, uint64_t *hash)
{
	struct kinst_agg_stack_slot *sl;
	uint64_t h;
	uint32_t i, k, n, start;

	if (nframes == 0 || nframes > KINST_STACK_MAX)
		return (false);
	h = AGG_STACK_HASH(frames, nframes);
	start = (uint32_t)h ^ (uint32_t)(h >> 32);
	n = a->nstacks < KINST_AGG_PROBES ? a->nstacks : KINST_AGG_PROBES;
	for (i = 0; i < n; i++) {
		sl = kinst_agg_stack_slot(a, t, cpu,
		    (start + i) & (a->nstacks - 1));
		if (KINST_LOAD_RELAXED(&sl->state) == KINST_AGG_EMPTY) {
			/* Only this CPU writes here: publish the frames last. */
			sl->nframes = nframes;
			sl->flags = flags;
			sl->hash = h;
			for (k = 0; k < nframes; k++)
				sl->frames[k] = frames[k];
			KINST_STORE_RELEASE(&sl->state, KINST_AGG_USED);
			*hash = h;
			return (true);
		}
		if (sl->hash == h) {
			/* The hash names one stack: a collision is not merged. */
			if (!agg_same_frames(sl, frames, nframes))
				return (false);
			*hash = h;
			return (true);
		}
	}
	return (false);
}
