/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Probes and the probe table.
 *
 * The table is an open-addressing hash of probe pointers keyed by address.
 * Lookups (trap context, any number of CPUs, nested) take no lock: they read
 * slots with acquire loads.  Inserts and removals are serialized by the
 * caller (a mutex in the shim's control path).  A removed slot becomes a
 * tombstone, never moves another probe, and is recycled only when that cannot
 * break a concurrent lookup's probe sequence.  A removed probe must stay
 * readable until the shim has proven that no CPU can still be looking at it
 * (the same quiescence that guards its trampoline).
 */
#ifndef KINST_PROBE_H
#define KINST_PROBE_H

#include "kinst_isa.h"

struct kinst_session;
struct kinst_prog;

/*
 * A probe plays two parts.  As a site -- what the table holds, one per
 * patched instruction -- its addr, tramp, insn, cls, orig, native and
 * jresume run the instruction, and hits and tripped count every hit of
 * it.  As a subscriber -- one session's interest in that instruction --
 * its session, id, offset, flags and prog make that session's record.  A
 * site with a session is its own first subscriber (the engine tests' one
 * probe per address); the control path's sites have none and chain every
 * subscriber after them on next (kinst_control.h, "Sharing"): the engine
 * walks the chain in trap context without a lock, each subscriber
 * recording for its own session, then runs the instruction once.
 */
struct kinst_probe {
	uint64_t	addr;		/* address of the probed instruction */
	uint64_t	tramp;		/* trampoline address (KINST_TRAMP_SIZE bytes) */
	struct kinst_session *session;	/* owner (the open file), or NULL (a site) */
	/*
	 * The next subscriber: loaded with acquire in trap context, stored
	 * with release by the control path (which keeps a subscriber it
	 * unlinks readable until kinst_os_quiesce() has returned).
	 */
	struct kinst_probe *next;
	/*
	 * Hits: with hitc, CPU n counts at hitc[n * KINST_HITC_PER] (lines
	 * no other CPU writes: a probe that all CPUs hit keeps no shared
	 * counter); without it (a probe set up without kinst_ctl, or when
	 * no counter could be had), in hits, one atomic counter for every
	 * CPU.  kinst_probe_hits() sums both.
	 */
	uint64_t	hits;
	uint64_t	*hitc;
	uint32_t	id;
	uint32_t	offset;		/* offset inside its function */
	/* The instruction set's, filled by kinst_isa_prepare (kinst_isa.h): */
	struct kinst_insn insn;		/* decoded; insn.len its length */
	struct kinst_class cls;		/* the verdict and its reason */
	uint8_t		orig[KINST_MAX_INSN_LEN + 1];	/* original bytes */
	void		*os_priv;	/* the shim's */
	uint32_t	tripped;	/* set in trap context by the nesting guard */
	uint32_t	flags;		/* KINST_PF_* (kinst_stack.h), from the arm request */
	uint32_t	native;		/* an emulated probe's trampoline slot
					   holds its native image
					   (kinst_isa_prepare) */
	const struct kinst_prog *prog;	/* predicate (KINST_ARM_PROG) or NULL */
	/*
	 * Jump optimization (kinst_control.c): while not 0, the int3 path
	 * resumes an out-of-line hit here -- the probe's detour's relocated
	 * window -- instead of at the trampoline, with IF as it was, so that
	 * no thread enters the window's interior while its jump is written
	 * or removed.  Written by the control path (release), read in trap
	 * context (acquire).
	 */
	uint64_t	jresume;
};

/* Words of one CPU's row in a chunk of per-CPU hit counters (kinst_hitctl.c). */
#define	KINST_HITC_PER	512

/* p's hits: hits, and hitc's words of CPUs 0 .. ncpus-1 (racy reads). */
uint64_t	kinst_probe_hits(const struct kinst_probe *p, uint32_t ncpus);

#define	KINST_PTABLE_SLOTS	16384	/* power of two, 2 x KINST_MAX_PROBES */

struct kinst_ptable {
	struct kinst_probe *slots[KINST_PTABLE_SLOTS];
	uint32_t	count;		/* live probes */
	uint32_t	tombstones;
};

enum kinst_ptable_err {
	KINST_PT_OK = 0,
	KINST_PT_FULL = 1,
	KINST_PT_EXISTS = 2,
	KINST_PT_NOENT = 3,
};

void	kinst_ptable_init(struct kinst_ptable *t);
int	kinst_ptable_insert(struct kinst_ptable *t, struct kinst_probe *p);
int	kinst_ptable_remove(struct kinst_ptable *t, struct kinst_probe *p);
struct kinst_probe *kinst_ptable_lookup(const struct kinst_ptable *t, uint64_t addr);

/*
 * Introspection for tests and debugging: the slot a lookup for addr starts
 * at, and the value a tombstone slot holds (never a valid probe pointer,
 * never dereferenced).
 */
uint32_t kinst_ptable_home(uint64_t addr);
#define	KINST_PTABLE_TOMB	((struct kinst_probe *)(uintptr_t)1)

#endif /* !KINST_PROBE_H */
