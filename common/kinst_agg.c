/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-kernel aggregation, the trap-context half (kinst_agg.h): the
 * program's KEY/VALUE opcodes, the histogram bucket of a value, and adding
 * a hit to this CPU's table.  No lock, no allocation, bounded work: a key
 * visits at most KINST_AGG_PROBES slots.
 */

#include "kinst_agg.h"
#include "kinst_engine.h"
#include "kinst_os.h"
#include "kinst_prog.h"

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

/* Single-writer counter: a whole store for concurrent readers, no RMW. */
#define	AGG_INC(p, d)	KINST_STORE_RELAXED((p), KINST_LOAD_RELAXED(p) + (d))

bool
kinst_agg_add(struct kinst_agg *a, uint32_t t, uint32_t cpu,
    uint32_t probe_id, const struct kinst_agg_val *v)
{
	struct kinst_agg_cpu_stats *st = &a->stats[cpu];
	struct kinst_agg_slot *sl;
	uint64_t *b;
	int64_t x;

	sl = agg_find(a, t, cpu, probe_id, v);
	if (sl == NULL) {
		AGG_INC(&st->overflow, 1);
		return (false);
	}
	x = (int64_t)v->value;
	AGG_INC(&sl->count, 1);
	AGG_INC(&sl->sum, v->value);
	if (x < sl->min)
		KINST_STORE_RELAXED(&sl->min, x);
	if (x > sl->max)
		KINST_STORE_RELAXED(&sl->max, x);
	if (a->nbuckets != 0) {
		b = (uint64_t *)(sl + 1) + kinst_agg_bucket(a, x);
		AGG_INC(b, 1);
	}
	AGG_INC(&st->aggregated, 1);
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
	pcs[0] = regs->rip;
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
	struct kinst_prog_ctx c;
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
			ps = &KINST_LOAD_ACQUIRE(&s->pstats)[cpu];
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
	depth = ++e->depth[cpu];
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (depth != 1) {
		__atomic_fetch_add(&a->stats[cpu].nested, 1, __ATOMIC_RELAXED);
	} else {
		t = KINST_LOAD_ACQUIRE(&a->active);
		if ((a->flags & KINST_AGGF_STACK) != 0 &&
		    !agg_stack_key(a, t, cpu, p, regs, osctx, &v)) {
			AGG_INC(&a->stats[cpu].overflow, 1);
			added = false;
		} else {
			added = kinst_agg_add(a, t, cpu,
			    (a->flags & KINST_AGGF_PROBE) != 0 ? p->id : 0, &v);
		}
		if ((a->flags & KINST_AGGF_RECORD) != 0)
			agg_sample(p, s, cpu, pid, tid, comm, regs, &v, added);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->depth[cpu]--;
}
