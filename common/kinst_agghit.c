/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The engine's aggregation step (kinst_agg.h, kinst_agg_hit): a
 * KINST_PF_AGG probe's hit, from kinst_engine.c record() in trap context,
 * runs its program, then adds itself to this CPU's table
 * (kinst_agg.c) and, with KINST_AGGF_RECORD, writes a sample record.  Apart
 * from the tables so that they depend on nothing of the engine or the
 * interpreter (which calls their KEY/VALUE opcodes).  No lock, no
 * allocation, bounded work.
 */

#include "kinst_agg.h"
#include "kinst_engine.h"
#include "kinst_os.h"
#include "kinst_prog.h"

/* KINST_AGGF_STACK: the stack at this hit, as key word 1; false: overflow. */
static bool
agg_stack_key(struct kinst_agg *a, uint32_t t, uint32_t cpu,
    const struct kinst_probe *p, const struct kinst_regs *regs, void *osctx,
    struct kinst_agg_val *v)
{
	uint64_t pcs[KINST_STACK_MAX];
	uint32_t n;
	bool truncated;

	truncated = false;
	pcs[0] = kinst_regs_pc(regs);
	n = 1 + kinst_os_stack(regs, osctx, p->offset, pcs + 1,
	    KINST_STACK_MAX - 1, &truncated);
	if (n > KINST_STACK_MAX) {
		/* Never trust a hook to keep its bound: clip. */
		n = KINST_STACK_MAX;
		truncated = true;
	}
	return (kinst_agg_stack_find(a, t, cpu, pcs, n,
	    truncated ? KINST_SECF_TRUNCATED : 0, &v->key[1]));
}

/*
 * KINST_AGGF_RECORD: the hit's record, with its key and value (added:
 * whether the tables took it), in this CPU's ring; a full ring drops it.
 * Called at record depth 1 only, like every ring write.
 */
static void
agg_sample(const struct kinst_probe *p, struct kinst_session *s,
    uint32_t cpu, int32_t pid, int32_t tid, const char *comm,
    const struct kinst_regs *regs, const struct kinst_agg_val *v, bool added)
{
	struct {
		struct kinst_hit_record h;
		struct kinst_rec_sec sec;
		struct kinst_rec_agg agg;
	} r;
	struct kinst_ring *ring;
	int i;

	if (cpu >= s->ncpus)
		return;
	ring = &s->rings[cpu];
	/* A latency ends where its program read the clock. */
	kinst_hit_fill(&r.h, p, cpu, v->now != 0 ? v->now : kinst_os_now_ns(),
	    pid, tid, regs);
	r.h.hdr.size = sizeof(r);
	for (i = 0; i < KINST_COMM_LEN; i++)
		r.h.comm[i] = comm[i];
	r.sec.type = KINST_SEC_AGG;
	r.sec.flags = added ? 0 : KINST_SECF_OVERFLOW;
	r.sec.len = sizeof(r.agg);
	r.agg.key[0] = v->key[0];
	r.agg.key[1] = v->key[1];
	r.agg.value = v->value;
	if (kinst_ring_put(ring, &r, sizeof(r)) == 0 &&
	    kinst_session_wake_due(ring, s))
		kinst_os_wake_deferred(s);
}

void
kinst_agg_hit(struct kinst_engine *e, const struct kinst_probe *p,
    struct kinst_session *s, uint32_t cpu, int32_t pid, int32_t tid,
    const char *comm, const struct kinst_regs *regs, void *osctx,
    struct kinst_tstate *ts)
{
	struct kinst_prog_cpu_stats *ps;
	struct kinst_agg_val v = { { 0, 0 }, 0, 0 };
	struct kinst_prog_ctx c KINST_NOINIT;	/* every member set before the run */
	struct kinst_agg *a;
	uint64_t res;
	uint32_t depth, t;
	bool added;
	int r;

	/* Set up before any KINST_ARM_AGG probe was armed (kinst_aggctl.c). */
	a = KINST_LOAD_ACQUIRE(&s->agg);
	if (a == NULL || cpu >= a->ncpus)
		return;
	if (p->prog != NULL) {
		c.regs = regs;
		c.pid = pid;
		c.tid = tid;
		c.cpu = cpu;
		c.comm = comm;
		c.out = &v;
		c.ts = ts;
		r = kinst_prog_run(p->prog, &c, &res);
		if (r != KINST_PROG_TRUE) {
			ps = &KINST_LOAD_ACQUIRE(&s->pstats)[cpu].st;
			__atomic_fetch_add(&ps->filtered, 1, __ATOMIC_RELAXED);
			if (r == KINST_PROG_FAULT)
				__atomic_fetch_add(&ps->faults, 1,
				    __ATOMIC_RELAXED);
			return;
		}
	}
	/*
	 * Only the outermost hit on this CPU writes its table (and, with
	 * KINST_AGGF_RECORD, its ring).
	 */
	depth = ++e->cpu[cpu].depth;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (depth != 1) {
		__atomic_fetch_add(&a->stats[cpu].st.nested, 1, __ATOMIC_RELAXED);
	} else {
		t = KINST_LOAD_ACQUIRE(&a->active);
		if ((a->flags & KINST_AGGF_STACK) != 0 &&
		    !agg_stack_key(a, t, cpu, p, regs, osctx, &v)) {
			KINST_AGG_INC(&a->stats[cpu].st.overflow, 1);
			added = false;
		} else {
			added = kinst_agg_add(a, t, cpu,
			    (a->flags & KINST_AGGF_PROBE) != 0 ? p->id : 0, &v);
		}
		if ((a->flags & KINST_AGGF_RECORD) != 0)
			agg_sample(p, s, cpu, pid, tid, comm, regs, &v, added);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->cpu[cpu].depth--;
}
