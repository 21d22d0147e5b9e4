/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-thread state, the control half (kinst_tstate.h, kinst_control.h):
 * validate and preallocate the table, read its counters, free it at
 * close.  Thread context.
 */

#include "kinst_bytes.h"
#include "kinst_control.h"
#include "kinst_os.h"
#include "kinst_tstate.h"

int
kinst_ts_create(struct kinst_ts_setup *su, uint32_t ncpus,
    struct kinst_tstate **out)
{
	struct kinst_tstate *t;
	uint32_t n;

	*out = NULL;
	if ((su->flags & ~KINST_TS_FLAGS) != 0 || su->nthreads == 0 ||
	    su->nthreads > KINST_TS_MAX_THREADS || ncpus == 0)
		return (KINST_E_INVAL);
	for (n = 1; n < su->nthreads; n <<= 1)
		;
	if ((t = kinst_os_alloc(sizeof(*t))) == NULL)
		return (KINST_E_NOMEM);
	t->nslots = n;
	t->ncpus = ncpus;
	t->idle_ns = su->idle_ns != 0 ? su->idle_ns : KINST_TS_IDLE_NS;
	t->flags = su->flags;
	t->epoch = 1;
	t->slots = kinst_os_alloc((size_t)n * sizeof(*t->slots));
	t->stats = kinst_os_alloc((size_t)ncpus * sizeof(*t->stats));
	if (t->slots == NULL || t->stats == NULL) {
		kinst_ts_free(t);
		return (KINST_E_NOMEM);
	}
	su->nthreads = n;
	su->idle_ns = t->idle_ns;
	*out = t;
	return (KINST_E_OK);
}

void
kinst_ts_free(struct kinst_tstate *t)
{
	if (t == NULL)
		return;
	if (t->slots != NULL)
		kinst_os_free(t->slots, (size_t)t->nslots * sizeof(*t->slots));
	if (t->stats != NULL)
		kinst_os_free(t->stats, (size_t)t->ncpus * sizeof(*t->stats));
	kinst_os_free(t, sizeof(*t));
}

int
kinst_ctl_ts_setup(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_ts_setup *su)
{
	struct kinst_tstate *t;
	int err;

	(void)c;
	if ((err = kinst_ts_create(su, cs->s.ncpus, &t)) != KINST_E_OK)
		return (err);
	kinst_os_ctl_lock();
	if (cs->s.ts != NULL) {
		kinst_os_ctl_unlock();
		kinst_ts_free(t);
		return (KINST_E_EXIST);
	}
	/* Published before any probe that could use it is armed. */
	KINST_STORE_RELEASE(&cs->s.ts, t);
	kinst_os_ctl_unlock();
	return (KINST_E_OK);
}

int
kinst_ctl_ts_stats(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_ts_stats *st)
{
	struct kinst_tstate *t;

	(void)c;
	kinst_bzero(st, sizeof(*st));
	kinst_os_ctl_lock();
	t = cs->s.ts;
	if (t != NULL)
		kinst_ts_read_stats(t, st);
	kinst_os_ctl_unlock();
	return (KINST_E_OK);
}
