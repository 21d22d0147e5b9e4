/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Probe programs on the control path (kinst_control.h): load (verify and
 * keep), look up for KINST_ARM_PROG, per-CPU counters, free at close.
 *
 * A session's programs are immutable once loaded and live until the
 * session ends, after every probe that could run them has been disarmed
 * and quiesced (kinst_ctl_session_fini), so trap context reads them with
 * no reference counting.
 */

#include "kinst_control.h"
#include "kinst_os.h"
#include "kinst_prog.h"

/* The session's per-CPU program counters, allocated once; control lock held. */
static int
progctl_pstats(struct kinst_csession *cs)
{
	struct kinst_prog_cpu *ps;

	if (cs->s.pstats != NULL)
		return (KINST_E_OK);
	ps = kinst_os_alloc((size_t)cs->s.ncpus * sizeof(*ps));
	if (ps == NULL)
		return (KINST_E_NOMEM);
	/* Published before any probe that could use it is armed. */
	KINST_STORE_RELEASE(&cs->s.pstats, ps);
	return (KINST_E_OK);
}

/*
 * The session's per-CPU capture buffers (kinst_engine.c record_caps), for
 * a program with captures, allocated once; control lock held.
 */
static int
progctl_capbuf(struct kinst_csession *cs)
{
	uint64_t *b;

	_Static_assert(KINST_CAP_REC_MAX % 8 == 0, "capture record alignment");
	if (cs->s.capbuf != NULL)
		return (KINST_E_OK);
	b = kinst_os_alloc((size_t)cs->s.ncpus * KINST_CAP_REC_MAX);
	if (b == NULL)
		return (KINST_E_NOMEM);
	/* Published before any probe that could use it is armed. */
	KINST_STORE_RELEASE(&cs->s.capbuf, b);
	return (KINST_E_OK);
}

int
kinst_ctl_prog_load(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_prog_load *pl, const struct kinst_pinsn *code)
{
	struct kinst_prog *p;
	uint32_t bad_pc, verdict;
	int err;

	(void)c;
	pl->prog_id = 0;
	pl->error_pc = 0;
	pl->verdict = KINST_PV_OK;
	if (pl->flags != 0 || pl->_pad != 0)
		return (KINST_E_INVAL);
	if (code == NULL || pl->ninsns == 0 ||
	    pl->ninsns > KINST_PROG_MAX_INSNS) {
		pl->verdict = pl->ninsns == 0 ? KINST_PV_EMPTY :
		    KINST_PV_TOO_LONG;
		pl->error_pc = pl->ninsns;
		return (KINST_E_INVAL);
	}
	p = kinst_os_alloc(sizeof(*p));
	if (p == NULL)
		return (KINST_E_NOMEM);
	verdict = kinst_prog_verify(code, pl->ninsns, p, &bad_pc);
	if (verdict != KINST_PV_OK) {
		kinst_os_free(p, sizeof(*p));
		pl->verdict = verdict;
		pl->error_pc = bad_pc;
		return (KINST_E_INVAL);
	}
	kinst_os_ctl_lock();
	if (cs->nprogs >= KINST_PROG_MAX) {
		err = KINST_E_NOSPC;
		goto fail;
	}
	if ((err = progctl_pstats(cs)) != KINST_E_OK)
		goto fail;
	if (p->ncaps != 0 && (err = progctl_capbuf(cs)) != KINST_E_OK)
		goto fail;
	p->id = cs->nprogs + 1;
	cs->progs[cs->nprogs++] = p;
	kinst_os_ctl_unlock();
	pl->prog_id = p->id;
	return (KINST_E_OK);
fail:
	kinst_os_ctl_unlock();
	kinst_os_free(p, sizeof(*p));
	return (err);
}

const struct kinst_prog *
kinst_ctl_prog_get(struct kinst_csession *cs, uint32_t id)
{
	if (id == 0 || id > cs->nprogs)
		return (NULL);
	return (cs->progs[id - 1]);
}

void
kinst_ctl_prog_stats(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_prog_cpu_stats *out, uint32_t cap,
    struct kinst_prog_stats *ps)
{
	struct kinst_prog_cpu *st;
	uint32_t i, n;

	(void)c;
	n = cap < cs->s.ncpus ? cap : cs->s.ncpus;
	st = KINST_LOAD_ACQUIRE(&cs->s.pstats);
	for (i = 0; i < n; i++) {
		out[i].filtered = st == NULL ? 0 :
		    KINST_LOAD_RELAXED(&st[i].st.filtered);
		out[i].faults = st == NULL ? 0 :
		    KINST_LOAD_RELAXED(&st[i].st.faults);
	}
	ps->ncpus = cs->s.ncpus;
}

void
kinst_ctl_prog_fini(struct kinst_csession *cs)
{
	uint32_t i;

	for (i = 0; i < cs->nprogs; i++) {
		kinst_os_free(cs->progs[i], sizeof(*cs->progs[i]));
		cs->progs[i] = NULL;
	}
	cs->nprogs = 0;
	if (cs->s.pstats != NULL) {
		kinst_os_free(cs->s.pstats,
		    (size_t)cs->s.ncpus * sizeof(*cs->s.pstats));
		cs->s.pstats = NULL;
	}
	if (cs->s.capbuf != NULL) {
		kinst_os_free(cs->s.capbuf,
		    (size_t)cs->s.ncpus * KINST_CAP_REC_MAX);
		cs->s.capbuf = NULL;
	}
}
