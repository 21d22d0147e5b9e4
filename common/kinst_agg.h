/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-kernel aggregation (kinst_abi.h, "aggregation"): per-CPU tables of
 * keyed counters and histograms, preallocated when the session sets the
 * aggregation up, filled in trap context instead of a ring record.
 *
 * Each CPU's table is an open-addressing hash of nslots (a power of two)
 * slots of stride bytes: struct kinst_agg_slot, then nbuckets uint64_t.
 * Only the CPU itself writes its table, and never from a nested hit (the
 * engine's per-CPU depth), so trap context needs no atomic read-modify-
 * write: a slot is claimed by writing its key and then publishing its
 * state with a release store; counters are single-writer relaxed stores.
 * Readers (the control path, another CPU) see each counter whole.
 *
 * Two sets of tables: trap context fills the active one.  Clearing flips
 * the active index, waits until no CPU can still be in a hit that read the
 * old index (kinst_os_quiesce), then zeroes the old set.
 *
 * With KINST_AGGF_STACK each set also has, per CPU, a stack table of
 * nstacks (a power of two) struct kinst_agg_stack_slot, filled the same
 * way (single writer, frames written before the state's release store)
 * and zeroed with its set, so a count never outlives its stack.  The
 * stack's 64-bit hash is the entry's key word 1; a hash that is already
 * there for different frames is a collision, counted as overflow.
 */
#ifndef KINST_AGG_H
#define KINST_AGG_H

#include "kinst_abi.h"

struct kinst_engine;
struct kinst_probe;
struct kinst_session;
struct kinst_tstate;

/* kinst_probe.flags: the probe aggregates (KINST_ARM_AGG); see kinst_stack.h. */
#define	KINST_PF_AGG	0x0002u

/* What a program's KINST_OP_KEY / KINST_OP_VALUE produced for one hit. */
struct kinst_agg_val {
	uint64_t	key[2];
	uint64_t	value;
	/*
	 * The clock reading the program's per-thread state ops used (the one
	 * a latency's VALUE was computed from), 0: it read none.  A sample
	 * record (KINST_AGGF_RECORD) carries it as its timestamp, so that the
	 * sample ends exactly at it.
	 */
	uint64_t	now;
};

/*
 * A single-writer counter of a table (trap context, this CPU's): a whole
 * store for concurrent readers, no read-modify-write.
 */
#define	KINST_AGG_INC(p, d)	\
	KINST_STORE_RELAXED((p), KINST_LOAD_RELAXED(p) + (d))

#define	KINST_AGG_EMPTY	0u	/* slot state: free */
#define	KINST_AGG_USED	1u	/* key written and published */

struct kinst_agg_slot {
	uint32_t	state;		/* KINST_AGG_EMPTY / USED */
	uint32_t	probe_id;
	uint64_t	key[2];
	uint64_t	count;
	uint64_t	sum;
	int64_t		min;
	int64_t		max;
	/* then uint64_t buckets[nbuckets] */
};

struct kinst_agg_stack_slot {
	uint32_t	state;		/* KINST_AGG_EMPTY / USED */
	uint32_t	nframes;	/* 1 .. KINST_STACK_MAX */
	uint32_t	flags;		/* KINST_SECF_TRUNCATED */
	uint32_t	_pad;
	uint64_t	hash;
	uint64_t	frames[KINST_STACK_MAX];
};

/* One CPU's counters, alone on its cache line (kinst_types.h). */
struct kinst_agg_cpu {
	struct kinst_agg_cpu_stats st;
} KINST_CACHE_ALIGNED;

struct kinst_agg {
	uint32_t	kind;		/* KINST_AGG_* */
	uint32_t	flags;		/* KINST_AGGF_* */
	uint32_t	nslots;		/* per CPU, a power of two */
	uint32_t	nbuckets;
	int64_t		lin_min, lin_max, lin_step;
	uint32_t	nlinear;	/* LINEAR: buckets inside [min, max) */
	uint32_t	ncpus;
	size_t		stride;		/* bytes per slot */
	size_t		cpu_bytes;	/* bytes per CPU table */
	uint32_t	active;		/* 0 or 1: the set trap context fills */
	uint32_t	_pad;
	uint8_t		*tables[2];	/* [ncpus][cpu_bytes] each */
	struct kinst_agg_cpu *stats;	/* [ncpus], cumulative */
	uint32_t	nstacks;	/* KINST_AGGF_STACK: per CPU, a power
					   of two; else 0 */
	uint32_t	_pad2;
	struct kinst_agg_stack_slot *stacks[2];	/* [ncpus][nstacks] each */
};

/* The histogram bucket of value v (0 .. nbuckets-1); 0 without buckets. */
uint32_t kinst_agg_bucket(const struct kinst_agg *a, int64_t v);

/* Slot i of CPU cpu in table set t. */
struct kinst_agg_slot *kinst_agg_slot(const struct kinst_agg *a, uint32_t t,
	    uint32_t cpu, uint32_t i);

/*
 * The interpreter's KINST_OP_KEY / KINST_OP_VALUE (kinst_prog.c): store v
 * in out (NULL outside aggregation: the value is only popped).
 */
void	kinst_agg_op(struct kinst_agg_val *out, uint8_t op, uint8_t arg,
	    uint64_t v);
/* The program read the clock: out->now (nothing if out is NULL). */
void	kinst_agg_clock(struct kinst_agg_val *out, uint64_t now);

/*
 * The engine's aggregation step (kinst_agghit.c; called by kinst_engine.c
 * record(), trap context),
 * after the filters, for a KINST_PF_AGG probe: run its program (a false
 * result or a fault is counted as filtered), then add the hit to its key.
 * ts: as kinst_prog_pass()'s.
 */
void	kinst_agg_hit(struct kinst_engine *e, const struct kinst_probe *p,
	    struct kinst_session *s, uint32_t cpu, int32_t pid, int32_t tid,
	    const char *comm, const struct kinst_regs *regs, void *osctx,
	    struct kinst_tstate *ts);

/*
 * KINST_AGGF_STACK (trap context; tests call it too): find the stack of
 * nframes frames (flags: KINST_SECF_TRUNCATED) in table set t of cpu,
 * adding it if new, and store its hash in *hash.  Returns false when it is
 * not there and cannot be added: no free slot within KINST_AGG_PROBES, or
 * another stack has the same hash (the caller counts the hit as overflow).
 */
bool	kinst_agg_stack_find(struct kinst_agg *a, uint32_t t, uint32_t cpu,
	    const uint64_t *frames, uint32_t nframes, uint32_t flags,
	    uint64_t *hash);

/* The hash of a stack (every frame and the count of frames). */
uint64_t kinst_agg_stack_hash(const uint64_t *frames, uint32_t nframes);

/* Stack slot i of CPU cpu in table set t. */
struct kinst_agg_stack_slot *kinst_agg_stack_slot(const struct kinst_agg *a,
	    uint32_t t, uint32_t cpu, uint32_t i);

/*
 * Add one hit to table set t of cpu (trap context; tests call it too);
 * false when its key found no slot (counted as overflow).
 */
bool	kinst_agg_add(struct kinst_agg *a, uint32_t t, uint32_t cpu,
	    uint32_t probe_id, const struct kinst_agg_val *v);

/*
 * Control path (kinst_agggeom.c).  Validate a setup request and fill a's
 * geometry, without allocating: a KINST_E_* code.
 */
int	kinst_agg_geometry(const struct kinst_agg_setup *su, uint32_t ncpus,
	    struct kinst_agg *a);

/*
 * Copy the used entries of table set t of cpu into out (cap entries of
 * entry_size bytes, kernel memory); returns how many were copied.
 */
uint32_t kinst_agg_snapshot(const struct kinst_agg *a, uint32_t t,
	    uint32_t cpu, uint8_t *out, uint32_t cap);

/*
 * Copy the used stacks of table set t of cpu into out (cap of them);
 * returns how many were copied.
 */
uint32_t kinst_agg_stack_snapshot(const struct kinst_agg *a, uint32_t t,
	    uint32_t cpu, struct kinst_agg_stack *out, uint32_t cap);

/* Entries in use in table set t of cpu. */
uint32_t kinst_agg_used(const struct kinst_agg *a, uint32_t t, uint32_t cpu);

#endif /* !KINST_AGG_H */
