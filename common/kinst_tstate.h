/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-thread state (kinst_abi.h, "per-thread state"): a session's bounded
 * table of threads, each with a small stack of activations opened by one
 * probe (KINST_OP_TS_PUSH: a function's entry, a FROM instruction) and
 * read, or closed, at a later hit of the same thread (KINST_OP_TS_GET: an
 * instruction inside the function that needs an entry value, a return, a
 * TO instruction).  Preallocated at KINST_IOC_TS_SETUP; trap context only
 * reads and writes it.
 *
 * Matching.  An activation is (tag, frame, start time, saved words).  A
 * lookup names a tag and a frame and finds the activation with exactly
 * both, newest first.  A framed activation (frame != 0) is the stack
 * pointer at the function's entry: a return (rsp at ret is the entry rsp)
 * and an instruction inside (its CFA - 8) compute the same value, so the
 * lookup never confuses two activations of one thread, nor a live one
 * with one that returned unseen.  A push at frame F closes, unseen, every
 * activation of the thread at a frame <= F (they returned: the new entry
 * reuses their stack); an unframed push (frame 0) closes the previous
 * open activation of its tag (a start never closed).  A full stack drops
 * its oldest activation.  None of these ever makes a wrong match: an
 * activation whose entry was not seen (armed mid-call, dropped) is a miss.
 *
 * Concurrency.  Each slot has a try-lock (one compare-and-swap, never a
 * wait): an operation that finds it held is skipped and counted (busy).
 * Normally only the owning thread touches its slot, interrupts off, so
 * the lock is uncontended; another thread takes it only to claim a free
 * slot or reclaim an idle one (no operation for idle_ns: a thread that
 * exited, or one blocked that long).  A thread that held the lock
 * without taking the slot over sets `flush': the owner's next operation
 * drops all its activations first, because a push of its own may have
 * been skipped meanwhile, and a skipped push could otherwise let a lookup
 * match an older activation at the same frame.  Nested hits (an NMI in a
 * hit) never touch the table: the engine passes no table to their
 * programs (kinst_prog_ctx.ts NULL), so they push nothing and miss.
 *
 * Thread identity is kinst_os_thread_key(): two words that no other live
 * thread has (Linux: task pointer and start time, which no later thread
 * has either; FreeBSD: thread pointer and tid, which a later thread can
 * have again: docs/freebsd.md says what that leaves).
 */
#ifndef KINST_TSTATE_H
#define KINST_TSTATE_H

#include "kinst_abi.h"

struct kinst_ts_act {
	uint64_t	tag;		/* the TS_PUSH's imm (never 0) */
	uint64_t	frame;
	uint64_t	start_ns;
	uint64_t	epoch;		/* the table's epoch at the push */
	uint64_t	vals[KINST_TS_VALS];
};

struct kinst_ts_slot {
	uint64_t	key[2];		/* owner; 0, 0: free */
	uint64_t	last_ns;	/* the owner's last operation */
	uint32_t	lock;		/* 0 free, 1 held */
	uint32_t	flush;		/* drop every activation first */
	uint32_t	n;		/* act[0 .. n-1] open, oldest first */
	uint32_t	_pad;
	struct kinst_ts_act act[KINST_TS_DEPTH];
};

/* One CPU's counters, alone on its cache line (kinst_types.h). */
struct kinst_ts_cpu {
	struct kinst_ts_stats st;
} KINST_CACHE_ALIGNED;

struct kinst_tstate {
	uint32_t	nslots;		/* a power of two */
	uint32_t	ncpus;
	uint64_t	idle_ns;
	uint32_t	flags;		/* KINST_TS_LOCAL_CLOCK: the clock */
	uint32_t	_pad;
	/*
	 * Bumped when a probe whose program pushes is disarmed: activations
	 * of an earlier epoch never match, so a function entered after its
	 * entry probe is gone cannot find the activation an earlier call
	 * left at the same frame.
	 */
	uint64_t	epoch;
	struct kinst_ts_slot *slots;
	struct kinst_ts_cpu *stats;	/* [ncpus], single writer each */
};

/*
 * Two stack pointers this close lie on the same stack, as far as closing
 * returned activations goes (a push on an interrupt stack must not close
 * the interrupted thread's activations).  Stacks larger than this only
 * keep returned activations open longer (a miss later, never a wrong
 * match: see above).
 */
#define	KINST_TS_SAME_STACK	(32u * 1024u)

/*
 * Thread context.  Validate su (KINST_E_INVAL) and allocate the table
 * for ncpus CPUs (kinst_os_alloc; KINST_E_NOMEM); su's out fields set.
 */
int	kinst_ts_create(struct kinst_ts_setup *su, uint32_t ncpus,
	    struct kinst_tstate **out);
void	kinst_ts_free(struct kinst_tstate *t);
/* The counters of all CPUs summed, and the slots owned now. */
void	kinst_ts_read_stats(const struct kinst_tstate *t,
	    struct kinst_ts_stats *out);
/* A probe whose program pushes was disarmed (see epoch). */
void	kinst_ts_new_epoch(struct kinst_tstate *t);

/*
 * Trap context (cpu < ncpus, the current CPU).  key: the thread; now:
 * the clock.  Push opens an
 * activation with n (<= KINST_TS_VALS) saved words; 0, or -1 when it
 * could not (no slot, busy: counted).  Get finds (tag, frame): with
 * item KINST_TS_ELAPSED the time since its push, KINST_TS_START the push's
 * time, else saved word item; close (KINST_TSF_CLOSE) removes it and every
 * newer activation.  0 and *v, or -1 (a miss, counted).
 */
int	kinst_ts_push(struct kinst_tstate *t, uint32_t cpu,
	    const uint64_t key[2], uint64_t now, uint64_t tag, uint64_t frame,
	    const uint64_t *vals, uint32_t n);
int	kinst_ts_get(struct kinst_tstate *t, uint32_t cpu,
	    const uint64_t key[2], uint64_t now, uint64_t tag, uint64_t frame,
	    uint32_t item, bool close, uint64_t *v);

#endif /* !KINST_TSTATE_H */
