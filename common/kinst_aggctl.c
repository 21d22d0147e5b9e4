/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-kernel aggregation, the control half (kinst_agg.h, kinst_control.h):
 * set up (validate, preallocate every table), read one CPU's entries,
 * clear, counters, free at close.  Thread context, control lock.
 */

#include "kinst_agg.h"
#include "kinst_bytes.h"
#include "kinst_control.h"
#include "kinst_engine.h"
#include "kinst_os.h"

/* Bytes of one set's stack tables (every CPU). */
static size_t
agg_stack_bytes(const struct kinst_agg *a)
{
	return ((size_t)a->ncpus * a->nstacks *
	    sizeof(struct kinst_agg_stack_slot));
}

static void
agg_free(struct kinst_agg *a)
{
	size_t tb = (size_t)a->ncpus * a->cpu_bytes;

	if (a->tables[0] != NULL)
		kinst_os_free(a->tables[0], tb);
	if (a->tables[1] != NULL)
		kinst_os_free(a->tables[1], tb);
	if (a->stats != NULL)
		kinst_os_free(a->stats, (size_t)a->ncpus * sizeof(*a->stats));
	if (a->stacks[0] != NULL)
		kinst_os_free(a->stacks[0], agg_stack_bytes(a));
	if (a->stacks[1] != NULL)
		kinst_os_free(a->stacks[1], agg_stack_bytes(a));
	kinst_os_free(a, sizeof(*a));
}

int
kinst_ctl_agg_setup(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_agg_setup *su)
{
	struct kinst_agg g, *a;
	size_t tb;
	int err;

	(void)c;
	su->nbuckets = 0;
	su->entry_size = 0;
	if ((err = kinst_agg_geometry(su, cs->s.ncpus, &g)) != KINST_E_OK)
		return (err);
	if ((a = kinst_os_alloc(sizeof(*a))) == NULL)
		return (KINST_E_NOMEM);
	*a = g;
	tb = (size_t)g.ncpus * g.cpu_bytes;
	a->tables[0] = kinst_os_alloc(tb);
	a->tables[1] = kinst_os_alloc(tb);
	a->stats = kinst_os_alloc((size_t)g.ncpus * sizeof(*a->stats));
	if (g.nstacks != 0) {
		a->stacks[0] = kinst_os_alloc(agg_stack_bytes(&g));
		a->stacks[1] = kinst_os_alloc(agg_stack_bytes(&g));
	}
	if (a->tables[0] == NULL || a->tables[1] == NULL || a->stats == NULL ||
	    (g.nstacks != 0 && (a->stacks[0] == NULL || a->stacks[1] == NULL))) {
		agg_free(a);
		return (KINST_E_NOMEM);
	}
	kinst_os_ctl_lock();
	if (cs->s.agg != NULL) {
		kinst_os_ctl_unlock();
		agg_free(a);
		return (KINST_E_EXIST);
	}
	/* Published before any probe that could use it is armed. */
	KINST_STORE_RELEASE(&cs->s.agg, a);
	kinst_os_ctl_unlock();
	su->nslots = g.nslots;
	su->nstacks = g.nstacks;
	su->nbuckets = g.nbuckets;
	su->entry_size = (uint32_t)(sizeof(struct kinst_agg_entry) +
	    (size_t)g.nbuckets * sizeof(uint64_t));
	return (KINST_E_OK);
}

int
kinst_ctl_agg_geom(struct kinst_csession *cs, uint32_t *nslots,
    uint32_t *entry_size)
{
	struct kinst_agg *a = cs->s.agg;

	if (a == NULL)
		return (KINST_E_INVAL);
	*nslots = a->nslots;
	*entry_size = (uint32_t)(sizeof(struct kinst_agg_entry) +
	    (size_t)a->nbuckets * sizeof(uint64_t));
	return (KINST_E_OK);
}

uint32_t
kinst_agg_snapshot(const struct kinst_agg *a, uint32_t t, uint32_t cpu,
    uint8_t *out, uint32_t cap)
{
	const struct kinst_agg_slot *sl;
	struct kinst_agg_entry *en;
	const uint64_t *b;
	uint64_t *ob;
	size_t esize;
	uint32_t i, k, n;

	esize = sizeof(*en) + (size_t)a->nbuckets * sizeof(uint64_t);
	n = 0;
	for (i = 0; i < a->nslots && n < cap; i++) {
		sl = kinst_agg_slot(a, t, cpu, i);
		if (KINST_LOAD_ACQUIRE(&sl->state) != KINST_AGG_USED)
			continue;
		en = (struct kinst_agg_entry *)(out + (size_t)n * esize);
		en->key[0] = sl->key[0];
		en->key[1] = sl->key[1];
		en->probe_id = sl->probe_id;
		en->_pad = 0;
		en->count = KINST_LOAD_RELAXED(&sl->count);
		en->sum = KINST_LOAD_RELAXED(&sl->sum);
		en->min = KINST_LOAD_RELAXED(&sl->min);
		en->max = KINST_LOAD_RELAXED(&sl->max);
		b = (const uint64_t *)(sl + 1);
		ob = (uint64_t *)(en + 1);
		for (k = 0; k < a->nbuckets; k++)
			ob[k] = KINST_LOAD_RELAXED(&b[k]);
		n++;
	}
	return (n);
}

int
kinst_ctl_agg_stack_geom(struct kinst_csession *cs, uint32_t *nstacks)
{
	struct kinst_agg *a = cs->s.agg;

	if (a == NULL || a->nstacks == 0)
		return (KINST_E_INVAL);
	*nstacks = a->nstacks;
	return (KINST_E_OK);
}

uint32_t
kinst_agg_stack_snapshot(const struct kinst_agg *a, uint32_t t, uint32_t cpu,
    struct kinst_agg_stack *out, uint32_t cap)
{
	const struct kinst_agg_stack_slot *sl;
	struct kinst_agg_stack *en;
	uint32_t i, k, n;

	n = 0;
	for (i = 0; i < a->nstacks && n < cap; i++) {
		sl = kinst_agg_stack_slot(a, t, cpu, i);
		if (KINST_LOAD_ACQUIRE(&sl->state) != KINST_AGG_USED)
			continue;
		en = &out[n++];
		en->hash = sl->hash;
		en->nframes = sl->nframes;
		en->flags = sl->flags;
		/* Every word written: no kernel memory leaks past nframes. */
		for (k = 0; k < KINST_STACK_MAX; k++)
			en->frames[k] = k < sl->nframes ? sl->frames[k] : 0;
	}
	return (n);
}

int
kinst_ctl_agg_stacks(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_agg_read *rd, struct kinst_agg_stack *out, uint32_t cap)
{
	struct kinst_agg *a = cs->s.agg;

	(void)c;
	rd->count = 0;
	if (a == NULL || a->nstacks == 0 || rd->flags != 0 ||
	    rd->cpu >= a->ncpus)
		return (KINST_E_INVAL);
	kinst_os_ctl_lock();
	rd->count = kinst_agg_stack_snapshot(a, KINST_LOAD_RELAXED(&a->active),
	    rd->cpu, out, cap);
	kinst_os_ctl_unlock();
	return (KINST_E_OK);
}

uint32_t
kinst_agg_used(const struct kinst_agg *a, uint32_t t, uint32_t cpu)
{
	uint32_t i, n;

	n = 0;
	for (i = 0; i < a->nslots; i++)
		if (KINST_LOAD_ACQUIRE(&kinst_agg_slot(a, t, cpu, i)->state) ==
		    KINST_AGG_USED)
			n++;
	return (n);
}

int
kinst_ctl_agg_read(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_agg_read *rd, uint8_t *out, uint32_t cap)
{
	struct kinst_agg *a = cs->s.agg;

	(void)c;
	rd->count = 0;
	if (a == NULL || rd->flags != 0 || rd->cpu >= a->ncpus)
		return (KINST_E_INVAL);
	kinst_os_ctl_lock();
	rd->count = kinst_agg_snapshot(a, KINST_LOAD_RELAXED(&a->active),
	    rd->cpu, out, cap);
	kinst_os_ctl_unlock();
	return (KINST_E_OK);
}

int
kinst_ctl_agg_clear(struct kinst_ctl *c, struct kinst_csession *cs,
    const struct kinst_agg_clear *cl)
{
	struct kinst_agg *a = cs->s.agg;
	uint32_t old;

	(void)c;
	if (a == NULL || cl->flags != 0 || cl->_pad != 0)
		return (KINST_E_INVAL);
	kinst_os_ctl_lock();
	old = a->active;
	KINST_STORE_RELEASE(&a->active, 1 - old);
	/* No CPU is still in a hit that chose the old set. */
	kinst_os_quiesce();
	kinst_bzero(a->tables[old], (size_t)a->ncpus * a->cpu_bytes);
	/* The stacks with their counts: no entry names a stack that is gone. */
	if (a->nstacks != 0)
		kinst_bzero(a->stacks[old], agg_stack_bytes(a));
	kinst_os_ctl_unlock();
	return (KINST_E_OK);
}

int
kinst_ctl_agg_stats(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_agg_cpu_stats *out, uint32_t cap, struct kinst_agg_stats *st)
{
	struct kinst_agg *a = cs->s.agg;
	uint32_t i, n, t;

	(void)c;
	st->ncpus = 0;
	st->nslots = 0;
	if (a == NULL || st->flags != 0)
		return (KINST_E_INVAL);
	kinst_os_ctl_lock();
	t = a->active;
	n = cap < a->ncpus ? cap : a->ncpus;
	for (i = 0; i < n; i++) {
		out[i].aggregated = KINST_LOAD_RELAXED(&a->stats[i].st.aggregated);
		out[i].overflow = KINST_LOAD_RELAXED(&a->stats[i].st.overflow);
		out[i].nested = KINST_LOAD_RELAXED(&a->stats[i].st.nested);
		out[i].used = kinst_agg_used(a, t, i);
	}
	kinst_os_ctl_unlock();
	st->ncpus = a->ncpus;
	st->nslots = a->nslots;
	return (KINST_E_OK);
}

void
kinst_ctl_agg_fini(struct kinst_csession *cs)
{
	if (cs->s.agg != NULL) {
		agg_free(cs->s.agg);
		cs->s.agg = NULL;
	}
}
