/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trap-time entry point, and probe preparation at arm time.
 *
 * Probe context rules (DESIGN.md): no lock, no sleep, no allocation, no
 * direct wakeup, no call to anything traceable.  kinst_engine_hit() calls
 * only the probe table lookup, the ring, the emulator and the kinst_os_*
 * trap-context functions, all of which obey the same rules.
 */

#include "kinst_engine.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_stack.h"

void
kinst_engine_init(struct kinst_engine *e, uint32_t ncpus, bool manage_if)
{
	uint32_t i;

	kinst_ptable_init(&e->table);
	e->ncpus = ncpus > KINST_MAXCPU ? KINST_MAXCPU : ncpus;
	e->manage_if = manage_if ? 1 : 0;
	for (i = 0; i < KINST_MAXCPU; i++) {
		e->cpu[i].depth = 0;
		e->cpu[i].hdepth = 0;
		e->cpu[i].jhits = 0;
	}
	e->tripped = 0;
	e->native_runs = 0;
}

void
kinst_session_init(struct kinst_session *s, struct kinst_ring *rings,
    struct kinst_pcpu_count *hits, uint32_t ncpus)
{
	uint32_t i;

	s->rings = rings;
	s->hits = hits;
	s->ncpus = ncpus;
	s->filter_pid = -1;
	s->filter_cpu = -1;
	s->exclude_pid = -1;
	s->wake_bytes = 0;
	s->os_priv = NULL;
	s->pstats = NULL;
	s->agg = NULL;
	s->capbuf = NULL;
	s->ts = NULL;
	for (i = 0; i < ncpus; i++)
		hits[i].n = 0;
}

static int
mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	return (kinst_os_read(addr, buf, len));
}

static int
mem_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx;
	return (kinst_os_write_stack(addr, buf, len));
}

static const struct kinst_mem_ops os_mem = {
	.read = mem_read,
	.write = mem_write,
	.ctx = NULL,
};

/*
 * A record with captures (and maybe a stack), built in this CPU's capture
 * buffer: the fixed part, the STACK section, one MEM/STR section per
 * capture the program reached.  The buffer is this CPU's alone at record
 * depth 1.
 */
static int
record_caps(struct kinst_probe *p, struct kinst_session *s, uint32_t cpu,
    struct kinst_hit_record *rec, const struct kinst_regs *regs, void *osctx,
    const struct kinst_cap_set *caps)
{
	uint64_t *base;
	uint8_t *b;
	uint32_t len, i;

	/* Published before any probe with captures was armed. */
	base = KINST_LOAD_ACQUIRE(&s->capbuf);
	if (base == NULL) {	/* not reached: kinst_ctl_prog_load */
		kinst_ring_count_drop(&s->rings[cpu]);
		return (-1);
	}
	b = (uint8_t *)(base +
	    (size_t)cpu * (KINST_CAP_REC_MAX / sizeof(uint64_t)));
	len = (uint32_t)sizeof(*rec);
	if ((p->flags & KINST_PF_STACK) != 0)
		len += kinst_stack_capture(regs, osctx, p->offset, b + len);
	for (i = 0; i < caps->n; i++)
		len += kinst_cap_section(&caps->req[i], b + len);
	rec->hdr.size = len;
	*(struct kinst_hit_record *)b = *rec;
	return (kinst_ring_put(&s->rings[cpu], b, len));
}

static void
record(struct kinst_engine *e, struct kinst_probe *p, struct kinst_session *s,
    uint32_t cpu, const struct kinst_regs *regs, void *osctx)
{
	struct kinst_tstate *ts;
	/* Every byte written before it is put: comm here, kinst_hit_fill(). */
	struct kinst_hit_record rec KINST_NOINIT;
	struct kinst_cap_set caps KINST_NOINIT;	/* n, then req[0..n) */
	struct kinst_ring *ring;
	int32_t pid, tid;
	uint32_t depth, need;
	int i, put;

	for (i = 0; i < KINST_COMM_LEN; i++)
		rec.comm[i] = 0;
	kinst_os_thread(&pid, &tid, rec.comm);
	/* Filters (KINST_IOC_FILTER); read racily on purpose: any value is valid. */
	if (KINST_LOAD_RELAXED(&s->filter_pid) >= 0 &&
	    pid != KINST_LOAD_RELAXED(&s->filter_pid))
		return;
	if (KINST_LOAD_RELAXED(&s->filter_cpu) >= 0 &&
	    cpu != (uint32_t)KINST_LOAD_RELAXED(&s->filter_cpu))
		return;
	if (pid == KINST_LOAD_RELAXED(&s->exclude_pid))
		return;

	/* Counted here, so that hits == delivered + dropped for the session. */
	__atomic_fetch_add(&s->hits[cpu].n, 1, __ATOMIC_RELAXED);
	/*
	 * Per-thread state only for the outermost hit on this CPU: a nested
	 * one (an NMI) could interrupt the thread's own operation on it.
	 */
	ts = e->cpu[cpu].hdepth == 1 ? KINST_LOAD_ACQUIRE(&s->ts) : NULL;
	/* Aggregation instead of a record (its program runs in there). */
	if ((p->flags & KINST_PF_AGG) != 0) {
		kinst_agg_hit(e, p, s, cpu, pid, tid, rec.comm, regs, osctx,
		    ts);
		return;
	}
	/* The predicate, before any record is built (counted if false). */
	caps.n = 0;
	if (p->prog != NULL && !kinst_prog_pass(p->prog, s, cpu, pid, tid,
	    rec.comm, regs, &caps, ts))
		return;
	ring = &s->rings[cpu];

	/*
	 * A hit nested inside another hit on this CPU (an NMI, or a probe on
	 * something the handler's path could not exclude) must not touch the
	 * ring the outer hit may be writing: count it as dropped.  The
	 * increment/decrement pair is balanced before any nested hit returns,
	 * so a plain per-CPU counter suffices.
	 */
	depth = ++e->cpu[cpu].depth;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/*
	 * Stack probes reserve room for the largest STACK section, programs
	 * with captures for the largest sections of all their captures.
	 */
	need = (p->flags & KINST_PF_STACK) != 0 ? KINST_STACK_REC_MAX :
	    sizeof(rec);
	if (p->prog != NULL)
		need += p->prog->cap_bytes;
	if (depth != 1 || !kinst_ring_room(ring, need)) {
		/* Nested, or the reader fell behind: drop without the work. */
		kinst_ring_count_drop(ring);
	} else {
		kinst_hit_fill(&rec, p, cpu, kinst_os_now_ns(), pid, tid, regs);
		if (caps.n != 0)
			put = record_caps(p, s, cpu, &rec, regs, osctx, &caps);
		else if ((p->flags & KINST_PF_STACK) != 0)
			put = kinst_stack_record(ring, &rec, regs, osctx,
			    p->offset);
		else
			put = kinst_ring_put(ring, &rec, sizeof(rec));
		if (put == 0 && kinst_session_wake_due(ring, s))
			kinst_os_wake_deferred(s);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->cpu[cpu].depth--;
}

/* Emulate or redirect to the trampoline: the instruction's execution. */
static int
execute(struct kinst_engine *e, struct kinst_probe *p, struct kinst_regs *regs)
{
	struct kinst_regs r KINST_NOINIT;	/* a copy of *regs first */
	uint64_t jr;

	if (p->cls.treatment == KINST_T_EMULATE) {
		r = *regs;
		if (kinst_emulate(&p->insn, p->cls.emul, &r, &os_mem) ==
		    KINST_EMU_OK) {
			*regs = r;
			return (KINST_HIT_EMULATED);
		}
		/*
		 * A read the no-fault copy would not do: let the CPU do it,
		 * in the native image (an indirect call or jump through
		 * memory), as if there were no probe.  Else the shim hands
		 * the breakpoint to the kernel.
		 */
		if (!p->native)
			return (KINST_HIT_ERROR);
		__atomic_fetch_add(&e->native_runs, 1, __ATOMIC_RELAXED);
	}

	/*
	 * A jump being installed or removed: the whole window runs in the
	 * detour, IF untouched (a detour is freed only after the shim's
	 * kinst_os_sync_tasks(), which also covers threads preempted in it).
	 */
	jr = KINST_LOAD_ACQUIRE(&p->jresume);
	if (jr != 0) {
		kinst_regs_set_pc(regs, jr);
		return (KINST_HIT_REDIRECT);
	}

	/*
	 * Out of line.  In a kernel the trampoline runs with interrupts off
	 * so that no thread is ever preempted inside it (kinst_isa_ool).
	 */
	kinst_isa_ool(regs, &p->cls, p->tramp, e->manage_if != 0);
	return (KINST_HIT_REDIRECT);
}

static int hit(struct kinst_engine *e, struct kinst_regs *regs, void *osctx,
    bool jump);

int
kinst_engine_hit(struct kinst_engine *e, struct kinst_regs *regs)
{

	return (kinst_engine_hit_ctx(e, regs, NULL));
}

int
kinst_engine_hit_ctx(struct kinst_engine *e, struct kinst_regs *regs,
    void *osctx)
{

	return (hit(e, regs, osctx, false));
}

bool
kinst_engine_trap(struct kinst_engine *e, struct kinst_regs *regs,
    void *osctx, uint64_t *trap_sp, uint64_t *faults)
{
	uint64_t saved;
	int res;

	saved = *trap_sp;
	*trap_sp = kinst_regs_sp(regs);
	/* Not reordered with the engine's stack writes (a nested trap). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	res = kinst_engine_hit_ctx(e, regs, osctx);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*trap_sp = saved;
	switch (res) {
	case KINST_HIT_REDIRECT:
	case KINST_HIT_EMULATED:
		return (true);
	case KINST_HIT_ERROR:
		/*
		 * Ours, but emulating it read or wrote memory it may not: the
		 * shim lets the kernel report the breakpoint.
		 */
		(*faults)++;
		return (false);
	default:
		return (false);
	}
}

int
kinst_engine_jhit(struct kinst_engine *e, struct kinst_regs *regs,
    void *osctx)
{

	return (hit(e, regs, osctx, true));
}

/*
 * One more hit of p: on this CPU's own line where p has per-CPU counters
 * (atomic only against a nested hit on this CPU), else in p->hits.  The
 * caller has checked cpu < e->ncpus.
 */
static inline void
count_hit(struct kinst_probe *p, uint32_t cpu)
{
	if (p->hitc != NULL)
		__atomic_fetch_add(&p->hitc[(size_t)cpu * KINST_HITC_PER], 1,
		    __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&p->hits, 1, __ATOMIC_RELAXED);
}

/* A hit at regs' pc: count, record, then execute (trap) or not (jump). */
static int
hit(struct kinst_engine *e, struct kinst_regs *regs, void *osctx, bool jump)
{
	struct kinst_probe *p, *q;
	struct kinst_session *s;
	uint32_t cpu, depth;
	int res;

	p = kinst_ptable_lookup(&e->table, kinst_regs_pc(regs));
	if (p == NULL)
		return (KINST_HIT_NOT_OURS);

	cpu = kinst_os_cpu();
	if (cpu >= e->ncpus) {
		/* No per-CPU state: counted in the shared word, never records. */
		__atomic_fetch_add(&p->hits, 1, __ATOMIC_RELAXED);
		return (jump ? KINST_HIT_JUMP : execute(e, p, regs));
	}
	count_hit(p, cpu);

	/* Nesting guard (kinst_engine.h); balanced before any return. */
	depth = ++e->cpu[cpu].hdepth;
	if (jump)
		e->cpu[cpu].jhits++;	/* read racily (debugfs) */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (depth > KINST_NEST_MAX) {
		__atomic_store_n(&p->tripped, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&e->tripped, 1, __ATOMIC_RELAXED);
	} else {
		/*
		 * Every subscriber records for its own session, with its own
		 * program, in the order of the chain; regs is not changed
		 * before execute().  A chained subscriber counts its own hits
		 * (the site's count covers every hit of the instruction).
		 */
		for (q = p; q != NULL; q = KINST_LOAD_ACQUIRE(&q->next)) {
			if (q != p)
				count_hit(q, cpu);
			s = KINST_LOAD_ACQUIRE(&q->session);
			if (s != NULL && cpu < s->ncpus)
				record(e, q, s, cpu, regs, osctx);
		}
	}
	res = jump ? KINST_HIT_JUMP : execute(e, p, regs);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->cpu[cpu].hdepth--;
	return (res);
}
