/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-kernel aggregation: the geometry of a setup request (kinst_agg.h),
 * validated and sized without allocating.  A file of its own, calling
 * nothing: kinstctl links it to say how many --slots fit.
 */

#include "kinst_agg.h"
#include "kinst_control.h"

/* LINEAR: buckets inside [min, max), or 0 when the range is refused. */
static uint32_t
agg_nlinear(const struct kinst_agg_setup *su)
{
	uint64_t span, n;

	if (su->lin_step <= 0 || su->lin_min >= su->lin_max)
		return (0);
	span = (uint64_t)su->lin_max - (uint64_t)su->lin_min;
	n = span / (uint64_t)su->lin_step +
	    (span % (uint64_t)su->lin_step != 0 ? 1 : 0);
	return (n > KINST_AGG_MAX_LINEAR ? 0 : (uint32_t)n);
}

int
kinst_agg_geometry(const struct kinst_agg_setup *su, uint32_t ncpus,
    struct kinst_agg *a)
{
	uint64_t total;
	uint32_t n;

	if (su->kind == 0 || su->kind >= KINST_AGG_KIND_COUNT_ ||
	    (su->flags & ~(KINST_AGGF_PROBE | KINST_AGGF_STACK |
	    KINST_AGGF_RECORD)) != 0 ||
	    su->nslots == 0 || su->nslots > KINST_AGG_MAX_SLOTS ||
	    ncpus == 0)
		return (KINST_E_INVAL);
	if ((su->flags & KINST_AGGF_STACK) != 0 ? (su->nstacks == 0 ||
	    su->nstacks > KINST_AGG_MAX_STACKS) : su->nstacks != 0)
		return (KINST_E_INVAL);
	a->nlinear = 0;
	if (su->kind == KINST_AGG_LINEAR) {
		if ((a->nlinear = agg_nlinear(su)) == 0)
			return (KINST_E_INVAL);
	} else if (su->lin_min != 0 || su->lin_max != 0 ||
	    su->lin_step != 0)
		return (KINST_E_INVAL);
	a->kind = su->kind;
	a->flags = su->flags;
	for (n = 1; n < su->nslots; n <<= 1)
		;
	a->nslots = n;
	a->nbuckets = su->kind == KINST_AGG_LOG2 ? KINST_AGG_LOG2_BUCKETS :
	    su->kind == KINST_AGG_LINEAR ? a->nlinear + 2 : 0;
	a->lin_min = su->lin_min;
	a->lin_max = su->lin_max;
	a->lin_step = su->lin_step;
	a->ncpus = ncpus;
	a->stride = sizeof(struct kinst_agg_slot) +
	    (size_t)a->nbuckets * sizeof(uint64_t);
	a->cpu_bytes = a->stride * a->nslots;
	a->nstacks = 0;
	if ((su->flags & KINST_AGGF_STACK) != 0)
		for (a->nstacks = 1; a->nstacks < su->nstacks; a->nstacks <<= 1)
			;
	/* Entries and stacks, both sets: bounded before any multiplication overflows. */
	total = 2 * (uint64_t)ncpus * (a->cpu_bytes + (uint64_t)a->nstacks *
	    sizeof(struct kinst_agg_stack_slot));
	if (total > KINST_AGG_MAX_BYTES)
		return (KINST_E_TOOBIG);
	a->active = 0;
	a->_pad = 0;
	a->_pad2 = 0;
	a->tables[0] = a->tables[1] = NULL;
	a->stacks[0] = a->stacks[1] = NULL;
	a->stats = NULL;
	return (KINST_E_OK);
}
