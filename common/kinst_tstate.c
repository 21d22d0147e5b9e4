/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-thread state, trap context: the try-locked slots and the activation
 * stacks (kinst_tstate.h says what matches what and why no lookup ever
 * matches an activation it should not).  The control half, in thread
 * context, is kinst_tstatectl.c.
 */

#include "kinst_bytes.h"
#include "kinst_os.h"
#include "kinst_tstate.h"

#define	TS_INC(t, cpu, field)	\
	__atomic_store_n(&(t)->stats[cpu].st.field, \
	    __atomic_load_n(&(t)->stats[cpu].st.field, __ATOMIC_RELAXED) + 1, \
	    __ATOMIC_RELAXED)
#define	TS_ADD(t, cpu, field, k)	\
	__atomic_store_n(&(t)->stats[cpu].st.field, \
	    __atomic_load_n(&(t)->stats[cpu].st.field, __ATOMIC_RELAXED) + (k), \
	    __ATOMIC_RELAXED)

void
kinst_ts_read_stats(const struct kinst_tstate *t, struct kinst_ts_stats *out)
{
	const struct kinst_ts_stats *c;
	uint32_t i;

	kinst_bzero(out, sizeof(*out));
	for (i = 0; i < t->ncpus; i++) {
		c = &t->stats[i].st;
		out->pushed += KINST_LOAD_RELAXED(&c->pushed);
		out->superseded += KINST_LOAD_RELAXED(&c->superseded);
		out->evicted += KINST_LOAD_RELAXED(&c->evicted);
		out->flushed += KINST_LOAD_RELAXED(&c->flushed);
		out->matched += KINST_LOAD_RELAXED(&c->matched);
		out->missed += KINST_LOAD_RELAXED(&c->missed);
		out->closed += KINST_LOAD_RELAXED(&c->closed);
		out->nothread += KINST_LOAD_RELAXED(&c->nothread);
		out->reclaimed += KINST_LOAD_RELAXED(&c->reclaimed);
		out->busy += KINST_LOAD_RELAXED(&c->busy);
	}
	for (i = 0; i < t->nslots; i++)
		if (KINST_LOAD_RELAXED(&t->slots[i].key[0]) != 0 ||
		    KINST_LOAD_RELAXED(&t->slots[i].key[1]) != 0)
			out->used++;
	out->nslots = t->nslots;
}

void
kinst_ts_new_epoch(struct kinst_tstate *t)
{
	__atomic_fetch_add(&t->epoch, 1, __ATOMIC_RELEASE);
}

static bool
ts_trylock(struct kinst_ts_slot *s)
{
	uint32_t free = 0;

	return (__atomic_compare_exchange_n(&s->lock, &free, 1, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
}

static void
ts_unlock(struct kinst_ts_slot *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* Held by a thread that is not its owner, and not taken over: see flush. */
static void
ts_unlock_foreign(struct kinst_ts_slot *s)
{
	KINST_STORE_RELAXED(&s->flush, 1);
	ts_unlock(s);
}

static bool
ts_is(const struct kinst_ts_slot *s, const uint64_t key[2])
{
	return (KINST_LOAD_RELAXED(&s->key[0]) == key[0] &&
	    KINST_LOAD_RELAXED(&s->key[1]) == key[1]);
}

static void
ts_take(struct kinst_ts_slot *s, const uint64_t key[2], uint64_t now)
{
	KINST_STORE_RELAXED(&s->key[0], key[0]);
	KINST_STORE_RELAXED(&s->key[1], key[1]);
	s->n = 0;
	s->flush = 0;
	s->last_ns = now;
}

static uint32_t
ts_hash(const struct kinst_tstate *t, const uint64_t key[2])
{
	uint64_t h;

	h = (key[0] ^ (key[1] * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return ((uint32_t)(h >> 32) & (t->nslots - 1));
}

/*
 * The thread's slot, locked, or NULL: not found (claim false), no slot
 * free or idle (counted nothread), or its slot locked by another (busy).
 */
static struct kinst_ts_slot *
ts_own(struct kinst_tstate *t, uint32_t cpu, const uint64_t key[2],
    uint64_t now, bool claim)
{
	struct kinst_ts_slot *s, *best;
	uint64_t last, best_last;
	uint32_t base, i;

	base = ts_hash(t, key);
	for (i = 0; i < KINST_TS_PROBES; i++) {
		s = &t->slots[(base + i) & (t->nslots - 1)];
		if (!ts_is(s, key))
			continue;
		if (!ts_trylock(s)) {
			TS_INC(t, cpu, busy);
			return (NULL);
		}
		if (ts_is(s, key)) {
			if (s->flush != 0) {
				TS_ADD(t, cpu, flushed, s->n);
				s->n = 0;
				s->flush = 0;
			}
			s->last_ns = now;
			return (s);
		}
		ts_unlock_foreign(s);	/* reclaimed meanwhile */
	}
	if (!claim)
		return (NULL);
	for (i = 0; i < KINST_TS_PROBES; i++) {
		s = &t->slots[(base + i) & (t->nslots - 1)];
		if (KINST_LOAD_RELAXED(&s->key[0]) != 0 ||
		    KINST_LOAD_RELAXED(&s->key[1]) != 0 || !ts_trylock(s))
			continue;
		if (s->key[0] == 0 && s->key[1] == 0) {
			ts_take(s, key, now);
			return (s);
		}
		ts_unlock_foreign(s);
	}
	best = NULL;
	best_last = 0;
	for (i = 0; i < KINST_TS_PROBES; i++) {
		s = &t->slots[(base + i) & (t->nslots - 1)];
		last = KINST_LOAD_RELAXED(&s->last_ns);
		if (now - last >= t->idle_ns && last <= now &&
		    (best == NULL || last < best_last)) {
			best = s;
			best_last = last;
		}
	}
	if (best != NULL && ts_trylock(best)) {
		last = best->last_ns;
		if (now - last >= t->idle_ns && last <= now) {
			ts_take(best, key, now);
			TS_INC(t, cpu, reclaimed);
			return (best);
		}
		ts_unlock_foreign(best);
	}
	TS_INC(t, cpu, nothread);
	return (NULL);
}

static bool
ts_same_stack(uint64_t a, uint64_t b)
{
	return ((a > b ? a - b : b - a) < KINST_TS_SAME_STACK);
}

int
kinst_ts_push(struct kinst_tstate *t, uint32_t cpu, const uint64_t key[2],
    uint64_t now, uint64_t tag, uint64_t frame, const uint64_t *vals,
    uint32_t n)
{
	struct kinst_ts_slot *s;
	struct kinst_ts_act *a;
	uint64_t epoch;
	uint32_t i, j, dead;
	bool gone;

	if ((s = ts_own(t, cpu, key, now, true)) == NULL)
		return (-1);
	epoch = KINST_LOAD_ACQUIRE(&t->epoch);
	/*
	 * Close what this entry proves returned: on this stack, every
	 * framed activation at or below the new frame; unframed, the
	 * previous start of this tag.  Older epochs go too.
	 */
	dead = 0;
	for (i = j = 0; i < s->n && i < KINST_TS_DEPTH; i++) {
		a = &s->act[i];
		if (a->epoch != epoch)
			gone = true;
		else if (frame != 0)
			gone = a->frame != 0 && a->frame <= frame &&
			    ts_same_stack(a->frame, frame);
		else
			gone = a->frame == 0 && a->tag == tag;
		if (gone)
			dead++;
		else if (j++ != i)
			s->act[j - 1] = *a;
	}
	if (dead != 0)
		TS_ADD(t, cpu, superseded, dead);
	if (j == KINST_TS_DEPTH) {
		/* Full of live-looking activations: the oldest goes. */
		for (i = 1; i < KINST_TS_DEPTH; i++)
			s->act[i - 1] = s->act[i];
		j--;
		TS_INC(t, cpu, evicted);
	}
	a = &s->act[j];
	a->tag = tag;
	a->frame = frame;
	a->start_ns = now;
	a->epoch = epoch;
	for (i = 0; i < KINST_TS_VALS; i++)
		a->vals[i] = i < n ? vals[i] : 0;
	s->n = j + 1;
	TS_INC(t, cpu, pushed);
	ts_unlock(s);
	return (0);
}

int
kinst_ts_get(struct kinst_tstate *t, uint32_t cpu, const uint64_t key[2],
    uint64_t now, uint64_t tag, uint64_t frame, uint32_t item, bool close,
    uint64_t *v)
{
	struct kinst_ts_slot *s;
	struct kinst_ts_act *a;
	uint64_t epoch;
	uint32_t i, j, k, n;
	int found;

	*v = 0;
	if ((s = ts_own(t, cpu, key, now, false)) == NULL) {
		TS_INC(t, cpu, missed);
		return (-1);
	}
	epoch = KINST_LOAD_ACQUIRE(&t->epoch);
	n = s->n < KINST_TS_DEPTH ? s->n : KINST_TS_DEPTH;
	found = -1;
	for (i = n; i-- > 0;) {
		a = &s->act[i];
		if (a->tag == tag && a->frame == frame && a->epoch == epoch) {
			found = (int)i;
			break;
		}
	}
	if (found < 0) {
		ts_unlock(s);
		TS_INC(t, cpu, missed);
		return (-1);
	}
	a = &s->act[found];
	if (item == KINST_TS_ELAPSED)
		*v = now - a->start_ns;
	else if (item == KINST_TS_START)
		*v = a->start_ns;
	else if (item < KINST_TS_VALS)
		*v = a->vals[item];
	TS_INC(t, cpu, matched);
	if (close) {
		/*
		 * It returned: so did every newer activation below it on
		 * its stack (framed); an unframed one closes alone.
		 */
		k = 0;
		for (i = j = 0; i < n; i++) {
			a = &s->act[i];
			if (i == (uint32_t)found || (frame != 0 &&
			    i > (uint32_t)found && a->frame != 0 &&
			    a->frame < frame && ts_same_stack(a->frame, frame)))
				k++;
			else if (j++ != i)
				s->act[j - 1] = *a;
		}
		s->n = j;
		TS_INC(t, cpu, closed);
		if (k > 1)
			TS_ADD(t, cpu, superseded, k - 1);
	}
	ts_unlock(s);
	return (0);
}
