/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-thread state (common/kinst_tstate.c, kinst_tstatectl.c) in user
 * space: matching by thread, tag and exact frame; recursion; what a push
 * closes (same stack only); unframed starts; the depth limit; epochs;
 * slots claimed, refused and reclaimed; the flush after a foreign lock;
 * then threads racing for a table too small for them, each checking every
 * value it reads against its own model: a miss is allowed, a wrong value
 * never.
 */

#include <atf-c.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kinst_control.h"
#include "kinst_tstate.h"

/* ---- the OS functions the table uses ---- */
static __thread uint64_t my_key[2] = { 1, 1 };
void *kinst_os_alloc(size_t size) { return (calloc(1, size ? size : 1)); }
void kinst_os_free(void *p, size_t size) { (void)size; free(p); }
void kinst_os_ctl_lock(void) { }
void kinst_os_ctl_unlock(void) { }
void kinst_os_thread_key(uint64_t k[2]) { k[0] = my_key[0]; k[1] = my_key[1]; }

static struct kinst_tstate *
mk(uint32_t nthreads, uint64_t idle)
{
	struct kinst_ts_setup su = { nthreads, 0, idle };
	struct kinst_tstate *t;

	ATF_REQUIRE_EQ(kinst_ts_create(&su, 2, &t), KINST_E_OK);
	return (t);
}

static const uint64_t A[2] = { 0x1000, 5 }, B[2] = { 0x2000, 6 };

static int
get(struct kinst_tstate *t, const uint64_t *k, uint64_t now, uint64_t tag,
    uint64_t frame, uint32_t item, bool close, uint64_t *v)
{
	return (kinst_ts_get(t, 0, k, now, tag, frame, item, close, v));
}

static struct kinst_ts_stats
stats(struct kinst_tstate *t)
{
	struct kinst_ts_stats s;

	kinst_ts_read_stats(t, &s);
	return (s);
}

ATF_TC_WITHOUT_HEAD(setup_limits);
ATF_TC_BODY(setup_limits, tc)
{
	struct kinst_ts_setup su;
	struct kinst_tstate *t;

	memset(&su, 0, sizeof(su));
	ATF_CHECK_EQ(kinst_ts_create(&su, 2, &t), KINST_E_INVAL);
	su.nthreads = KINST_TS_MAX_THREADS + 1;
	ATF_CHECK_EQ(kinst_ts_create(&su, 2, &t), KINST_E_INVAL);
	su.nthreads = 5;
	su.flags = KINST_TS_FLAGS + 1;		/* a flag no ABI defines */
	ATF_CHECK_EQ(kinst_ts_create(&su, 2, &t), KINST_E_INVAL);
	su.flags = 0x80000000u;
	ATF_CHECK_EQ(kinst_ts_create(&su, 2, &t), KINST_E_INVAL);
	/* The per-CPU clock: kept in the table, and said back. */
	su.flags = KINST_TS_LOCAL_CLOCK;
	ATF_REQUIRE_EQ(kinst_ts_create(&su, 2, &t), KINST_E_OK);
	ATF_CHECK_EQ(t->flags, KINST_TS_LOCAL_CLOCK);
	ATF_CHECK_EQ(su.flags, KINST_TS_LOCAL_CLOCK);
	kinst_ts_free(t);
	su.nthreads = 5;
	su.flags = 0;
	ATF_CHECK_EQ(kinst_ts_create(&su, 0, &t), KINST_E_INVAL);
	ATF_REQUIRE_EQ(kinst_ts_create(&su, 2, &t), KINST_E_OK);
	ATF_CHECK_EQ(su.nthreads, 8);
	ATF_CHECK_EQ(su.idle_ns, KINST_TS_IDLE_NS);
	ATF_CHECK_EQ(stats(t).nslots, 8);
	kinst_ts_free(t);
}

/* Thread, tag and frame must all match; the words and the clock come back. */
ATF_TC_WITHOUT_HEAD(match_exact);
ATF_TC_BODY(match_exact, tc)
{
	struct kinst_tstate *t = mk(16, 0);
	uint64_t vals[3] = { 11, 22, 33 }, v;

	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 1000, 7, 0x8000, vals, 3), 0);
	ATF_CHECK_EQ(get(t, A, 1500, 7, 0x8000, 1, false, &v), 0);
	ATF_CHECK_EQ(v, 22);
	ATF_CHECK_EQ(get(t, A, 1500, 7, 0x8000, 3, false, &v), 0);
	ATF_CHECK_EQ(v, 0);		/* not saved: zero */
	ATF_CHECK_EQ(get(t, A, 1750, 7, 0x8000, KINST_TS_ELAPSED, false, &v), 0);
	ATF_CHECK_EQ(v, 750);
	ATF_CHECK_EQ(get(t, A, 1750, 7, 0x8000, KINST_TS_START, false, &v), 0);
	ATF_CHECK_EQ(v, 1000);
	ATF_CHECK_EQ(get(t, A, 1500, 7, 0x8008, 0, false, &v), -1);
	ATF_CHECK_EQ(get(t, A, 1500, 8, 0x8000, 0, false, &v), -1);
	ATF_CHECK_EQ(get(t, B, 1500, 7, 0x8000, 0, false, &v), -1);
	ATF_CHECK_EQ(stats(t).matched, 4);
	ATF_CHECK_EQ(stats(t).missed, 3);
	ATF_CHECK_EQ(stats(t).used, 1);
	/* Closed: gone. */
	ATF_CHECK_EQ(get(t, A, 1800, 7, 0x8000, 0, true, &v), 0);
	ATF_CHECK_EQ(v, 11);
	ATF_CHECK_EQ(get(t, A, 1800, 7, 0x8000, 0, false, &v), -1);
	ATF_CHECK_EQ(stats(t).closed, 1);
	kinst_ts_free(t);
}

/*
 * Recursion: each activation by its own frame; closing the outer one
 * closes the inner ones below it on its stack; a new entry at or above a
 * frame closes what was there (it returned unseen).
 */
ATF_TC_WITHOUT_HEAD(recursion_and_supersede);
ATF_TC_BODY(recursion_and_supersede, tc)
{
	struct kinst_tstate *t = mk(16, 0);
	uint64_t v, w;

	w = 1;
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 10, 7, 0x9000, &w, 1), 0);
	w = 2;
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 20, 7, 0x8f00, &w, 1), 0);
	w = 3;
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 30, 9, 0x8e00, &w, 1), 0);
	ATF_CHECK_EQ(get(t, A, 40, 7, 0x9000, 0, false, &v), 0);
	ATF_CHECK_EQ(v, 1);
	ATF_CHECK_EQ(get(t, A, 40, 7, 0x8f00, 0, false, &v), 0);
	ATF_CHECK_EQ(v, 2);
	ATF_CHECK_EQ(get(t, A, 40, 7, 0x8f00, KINST_TS_ELAPSED, false, &v), 0);
	ATF_CHECK_EQ(v, 20);
	/* A new call at 0x8f00 (the inner one returned): it replaces it and
	   closes the tag-9 activation below. */
	w = 4;
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 50, 7, 0x8f00, &w, 1), 0);
	ATF_CHECK_EQ(stats(t).superseded, 2);
	ATF_CHECK_EQ(get(t, A, 60, 7, 0x8f00, 0, false, &v), 0);
	ATF_CHECK_EQ(v, 4);
	ATF_CHECK_EQ(get(t, A, 60, 9, 0x8e00, 0, false, &v), -1);
	/* The outer returns: the inner closes with it. */
	ATF_CHECK_EQ(get(t, A, 70, 7, 0x9000, KINST_TS_ELAPSED, true, &v), 0);
	ATF_CHECK_EQ(v, 60);
	ATF_CHECK_EQ(get(t, A, 70, 7, 0x8f00, 0, false, &v), -1);
	ATF_CHECK_EQ(stats(t).superseded, 3);
	kinst_ts_free(t);
}

/* An entry on another stack (an interrupt's) closes nothing of this one. */
ATF_TC_WITHOUT_HEAD(other_stack);
ATF_TC_BODY(other_stack, tc)
{
	struct kinst_tstate *t = mk(16, 0);
	uint64_t v, w = 5;

	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 10, 7, 0xffffc90000008000ull,
	    &w, 1), 0);
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 20, 7, 0xfffffe0000010000ull,
	    &w, 1), 0);
	ATF_CHECK_EQ(stats(t).superseded, 0);
	ATF_CHECK_EQ(get(t, A, 30, 7, 0xffffc90000008000ull, 0, false, &v), 0);
	ATF_CHECK_EQ(v, 5);
	/* Closing the interrupt's leaves the thread's. */
	ATF_CHECK_EQ(get(t, A, 30, 7, 0xfffffe0000010000ull, 0, true, &v), 0);
	ATF_CHECK_EQ(get(t, A, 30, 7, 0xffffc90000008000ull, 0, false, &v), 0);
	kinst_ts_free(t);
}

/* Unframed starts: the next start of a tag replaces the open one. */
ATF_TC_WITHOUT_HEAD(unframed);
ATF_TC_BODY(unframed, tc)
{
	struct kinst_tstate *t = mk(16, 0);
	uint64_t v;

	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 100, 3, 0, NULL, 0), 0);
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 150, 4, 0, NULL, 0), 0);
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 200, 3, 0, NULL, 0), 0);
	ATF_CHECK_EQ(stats(t).superseded, 1);
	/* A framed entry closes no unframed start. */
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 210, 3, 0x7000, NULL, 0), 0);
	ATF_CHECK_EQ(get(t, A, 260, 3, 0, KINST_TS_ELAPSED, true, &v), 0);
	ATF_CHECK_EQ(v, 60);
	ATF_CHECK_EQ(get(t, A, 260, 3, 0, KINST_TS_ELAPSED, true, &v), -1);
	/* Closing an unframed start leaves every other activation. */
	ATF_CHECK_EQ(get(t, A, 300, 4, 0, KINST_TS_ELAPSED, false, &v), 0);
	ATF_CHECK_EQ(v, 150);
	ATF_CHECK_EQ(get(t, A, 300, 3, 0x7000, KINST_TS_START, false, &v), 0);
	ATF_CHECK_EQ(v, 210);
	kinst_ts_free(t);
}

/* KINST_TS_DEPTH open: the oldest goes, the others stay exact. */
ATF_TC_WITHOUT_HEAD(depth_limit);
ATF_TC_BODY(depth_limit, tc)
{
	struct kinst_tstate *t = mk(16, 0);
	uint64_t v, w;
	uint32_t i;

	for (i = 0; i < KINST_TS_DEPTH + 2; i++) {
		w = 100 + i;
		ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, i, 7, 0x9000 - 0x100 * i,
		    &w, 1), 0);
	}
	ATF_CHECK_EQ(stats(t).evicted, 2);
	for (i = 0; i < KINST_TS_DEPTH + 2; i++) {
		if (i < 2)
			ATF_CHECK_EQ(get(t, A, 99, 7, 0x9000 - 0x100 * i, 0,
			    false, &v), -1);
		else {
			ATF_CHECK_EQ(get(t, A, 99, 7, 0x9000 - 0x100 * i, 0,
			    false, &v), 0);
			ATF_CHECK_EQ(v, 100 + i);
		}
	}
	kinst_ts_free(t);
}

/* A pusher disarmed: nothing it left matches, new pushes do. */
ATF_TC_WITHOUT_HEAD(epoch);
ATF_TC_BODY(epoch, tc)
{
	struct kinst_tstate *t = mk(16, 0);
	uint64_t v, w = 1;

	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 10, 7, 0x9000, &w, 1), 0);
	kinst_ts_new_epoch(t);
	ATF_CHECK_EQ(get(t, A, 20, 7, 0x9000, 0, false, &v), -1);
	w = 2;
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 30, 7, 0x9400, &w, 1), 0);
	ATF_CHECK_EQ(stats(t).superseded, 1);	/* the old epoch's */
	ATF_CHECK_EQ(get(t, A, 40, 7, 0x9400, 0, false, &v), 0);
	ATF_CHECK_EQ(v, 2);
	kinst_ts_free(t);
}

/*
 * One slot: a second thread finds none until the first has been idle
 * idle_ns, then takes it over; the first then misses, never sees the
 * second's activations.
 */
ATF_TC_WITHOUT_HEAD(reclaim);
ATF_TC_BODY(reclaim, tc)
{
	struct kinst_tstate *t = mk(1, 1000);
	uint64_t v, w = 1;

	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 5000, 7, 0x9000, &w, 1), 0);
	ATF_CHECK_EQ(kinst_ts_push(t, 0, B, 5500, 7, 0x9000, &w, 1), -1);
	ATF_CHECK_EQ(stats(t).nothread, 1);
	/* A lookup by A keeps the slot busy-looking (last use 5800). */
	ATF_CHECK_EQ(get(t, A, 5800, 7, 0x9000, 0, false, &v), 0);
	ATF_CHECK_EQ(kinst_ts_push(t, 0, B, 6500, 7, 0x9000, &w, 1), -1);
	w = 2;
	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, B, 6800, 7, 0x9000, &w, 1), 0);
	ATF_CHECK_EQ(stats(t).reclaimed, 1);
	ATF_CHECK_EQ(get(t, A, 6900, 7, 0x9000, 0, false, &v), -1);
	ATF_CHECK_EQ(get(t, B, 6900, 7, 0x9000, 0, false, &v), 0);
	ATF_CHECK_EQ(v, 2);
	kinst_ts_free(t);
}

/*
 * Another thread held the slot (a reclaim that found it not idle after
 * all): the owner's push meanwhile was skipped, so its next operation
 * drops everything instead of letting the older activation at that frame
 * match.
 */
ATF_TC_WITHOUT_HEAD(flush_after_foreign_lock);
ATF_TC_BODY(flush_after_foreign_lock, tc)
{
	struct kinst_tstate *t = mk(1, 1000);
	struct kinst_ts_slot *s = &t->slots[0];
	uint64_t v, w = 1;

	ATF_REQUIRE_EQ(kinst_ts_push(t, 0, A, 10, 7, 0x9000, &w, 1), 0);
	/* The function returned unseen; a new call at the same frame... */
	s->lock = 1;		/* ...while another thread holds the slot */
	w = 2;
	ATF_CHECK_EQ(kinst_ts_push(t, 0, A, 20, 7, 0x9000, &w, 1), -1);
	ATF_CHECK_EQ(stats(t).busy, 1);
	s->flush = 1;		/* what that thread leaves behind */
	s->lock = 0;
	ATF_CHECK_EQ(get(t, A, 30, 7, 0x9000, 0, false, &v), -1);
	ATF_CHECK_EQ(stats(t).flushed, 1);
	kinst_ts_free(t);
}

/*
 * Threads with keys of their own race over a table of 2 slots with a
 * short idle time: claims, reclaims and flushes happen all the time.
 * Each thread pushes and looks up nested activations whose words encode
 * (thread, frame, sequence); every value read must be the one its own
 * model holds for that frame.
 */
#define	RACE_THREADS	4
#define	RACE_ITERS	200000

static struct kinst_tstate *race_t;
static uint64_t race_clock;
static uint64_t race_wrong, race_hits;

static void *
race(void *arg)
{
	uint64_t id = (uint64_t)(uintptr_t)arg, seq[KINST_TS_DEPTH], v, w;
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (id + 1), now;
	uint32_t depth, i, d;

	my_key[0] = 0x100 * (id + 1);
	my_key[1] = id;
	depth = 0;
	for (i = 0; i < RACE_ITERS; i++) {
		if (i % 512 == 0)
			usleep(20);	/* idle now and then: reclaimable */
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		now = __atomic_add_fetch(&race_clock, 1, __ATOMIC_RELAXED);
		if (depth < KINST_TS_DEPTH && (depth == 0 || rnd % 3 == 0)) {
			w = (id << 48) | ((uint64_t)depth << 40) | i;
			if (kinst_ts_push(race_t, id & 1, my_key, now, 7,
			    0x100000 - 0x100 * depth, &w, 1) == 0)
				seq[depth] = w;
			else
				seq[depth] = 0;	/* pushed nothing */
			depth++;
		} else if (rnd % 3 == 1 && depth > 0) {
			depth--;	/* returns, closing */
			if (kinst_ts_get(race_t, id & 1, my_key, now, 7,
			    0x100000 - 0x100 * depth, 0, true, &v) == 0 &&
			    v != seq[depth])
				__atomic_add_fetch(&race_wrong, 1,
				    __ATOMIC_RELAXED);
		} else if (depth > 0) {
			d = (uint32_t)(rnd >> 32) % depth;
			if (kinst_ts_get(race_t, id & 1, my_key, now, 7,
			    0x100000 - 0x100 * d, 0, false, &v) == 0) {
				__atomic_add_fetch(&race_hits, 1,
				    __ATOMIC_RELAXED);
				if (v != seq[d])
					__atomic_add_fetch(&race_wrong, 1,
					    __ATOMIC_RELAXED);
			}
		}
	}
	return (NULL);
}

ATF_TC_WITHOUT_HEAD(race_never_wrong);
ATF_TC_BODY(race_never_wrong, tc)
{
	pthread_t th[RACE_THREADS];
	struct kinst_ts_stats s;
	uint64_t i;

	race_t = mk(2, 50);
	for (i = 0; i < RACE_THREADS; i++)
		ATF_REQUIRE_EQ(pthread_create(&th[i], NULL, race,
		    (void *)(uintptr_t)i), 0);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	s = stats(race_t);
	printf("race (informational): %llu hits, pushed %llu superseded %llu "
	    "flushed %llu matched %llu missed %llu nothread %llu reclaimed "
	    "%llu busy %llu\n", (unsigned long long)race_hits,
	    (unsigned long long)s.pushed, (unsigned long long)s.superseded,
	    (unsigned long long)s.flushed, (unsigned long long)s.matched,
	    (unsigned long long)s.missed, (unsigned long long)s.nothread,
	    (unsigned long long)s.reclaimed, (unsigned long long)s.busy);
	ATF_CHECK_EQ(race_wrong, 0);
	/*
	 * It must have churned, or this proves nothing: 4 threads over 2
	 * slots reclaim at least twice even run one after another (how
	 * often, and whether any finds no slot at all, is the scheduler's:
	 * the reclaim case checks that path on its own).
	 */
	ATF_CHECK(race_hits > 1000);
	ATF_CHECK(s.reclaimed >= 2);
	kinst_ts_free(race_t);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, setup_limits);
	ATF_TP_ADD_TC(tp, match_exact);
	ATF_TP_ADD_TC(tp, recursion_and_supersede);
	ATF_TP_ADD_TC(tp, other_stack);
	ATF_TP_ADD_TC(tp, unframed);
	ATF_TP_ADD_TC(tp, depth_limit);
	ATF_TP_ADD_TC(tp, epoch);
	ATF_TP_ADD_TC(tp, reclaim);
	ATF_TP_ADD_TC(tp, flush_after_foreign_lock);
	ATF_TP_ADD_TC(tp, race_never_wrong);
	return (atf_no_error());
}
