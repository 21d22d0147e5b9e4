/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Concurrent lookups in the probe table while one writer inserts and
 * removes probes, as trap handlers on every CPU do while kinstctl arms and
 * disarms.
 *
 * Keys come in three sets, many of them colliding in a few adjacent buckets
 * so that probe sequences are long and cross tombstones:
 *   stable  inserted before the readers start, never removed: a lookup must
 *           return exactly that probe (no missed armed probe);
 *   absent  never inserted: a lookup must return NULL (no false hit);
 *   churn   inserted and removed at random by the writer: a lookup returns
 *           NULL or a probe for exactly that key.
 *
 * A removed probe is not reused until every reader has passed a quiescent
 * state (between two batches of lookups, holding no probe pointer) after
 * the removal, as the kernel shims wait before freeing a probe, so a
 * reader never sees a probe struct being rewritten: the test itself is
 * sound (ThreadSanitizer agrees: ptable_mt_tsan_test).
 */
#include <atf-c.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptable_util.h"

#ifdef KINST_TSAN
const char *__tsan_default_options(void);
const char *
__tsan_default_options(void)
{

	return ("halt_on_error=1");
}
#endif

#define	NREADERS	3
#define	BATCH		64
#define	MAGIC		0x6b696e7374ull
#define	POISON		0xdeadbeefdeadbeefull

struct cfg {
	uint32_t	ns, na, nc;	/* stable, absent, churn keys */
	uint32_t	nhot;		/* adjacent hot buckets */
	uint32_t	hot_pct;	/* % of each set in them */
	double		seconds;
	bool		interleave;	/* stable and churn inserted alternately */
};

struct limbo {
	struct kinst_probe *p;
	uint64_t	qs[NREADERS];
};

static struct kinst_ptable T;
static struct cfg C;
static uint64_t *skeys, *akeys, *ckeys;
static struct kinst_probe *sprobes;	/* [ns] */
static struct kinst_probe *pool;	/* churn probes */
static uint32_t npool;
static int stop;			/* atomic */
static uint64_t qs[NREADERS];		/* atomic: reader quiescent states */
static char err[512];			/* first error */
static int nerr;			/* atomic */

struct rstats {
	uint64_t	stable, absent, churn_hit, churn_null;
};
static struct rstats rst[NREADERS];

struct wstats {
	uint64_t	inserts, removes, reclaims, exists, noent, waits;
	uint32_t	maxlive, maxtomb;
};
static struct wstats wst;

static void
report(const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&nerr, 1, __ATOMIC_ACQ_REL) == 0) {
		va_start(ap, fmt);
		vsnprintf(err, sizeof(err), fmt, ap);
		va_end(ap);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
}

static void *
reader(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg, i, n, b;
	struct rstats *st = &rst[id];
	struct kinst_probe *p;
	uint64_t r, k;

	r = pt_mix(id + 1000);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		for (b = 0; b < BATCH; b++) {
			r = pt_mix(r);
			n = (uint32_t)(r >> 32);
			switch (r % 3) {
			case 0:
				i = n % C.ns;
				p = kinst_ptable_lookup(&T, skeys[i]);
				if (p != &sprobes[i]) {
					report("reader %u: stable key %#jx: "
					    "got %p, want %p (missed armed "
					    "probe)", id, (uintmax_t)skeys[i],
					    (void *)p, (void *)&sprobes[i]);
					return (NULL);
				}
				st->stable++;
				break;
			case 1:
				i = n % C.na;
				p = kinst_ptable_lookup(&T, akeys[i]);
				if (p != NULL) {
					report("reader %u: absent key %#jx: "
					    "false hit on %#jx", id,
					    (uintmax_t)akeys[i],
					    (uintmax_t)p->addr);
					return (NULL);
				}
				st->absent++;
				break;
			default:
				i = n % C.nc;
				k = ckeys[i];
				p = kinst_ptable_lookup(&T, k);
				if (p == NULL) {
					st->churn_null++;
					break;
				}
				if (p->addr != k || p->id != i ||
				    p->tramp != (k ^ MAGIC)) {
					report("reader %u: churn key %#jx: got "
					    "probe addr %#jx id %u", id,
					    (uintmax_t)k, (uintmax_t)p->addr,
					    p->id);
					return (NULL);
				}
				st->churn_hit++;
				break;
			}
		}
		/*
		 * Quiescent: no probe pointer held.  Release orders our
		 * reads of probes before the writer's reuse of them; the
		 * fence keeps the next batch's slot loads after this store
		 * (store-buffer pattern with the writer's fence).
		 */
		__atomic_store_n(&qs[id], __atomic_load_n(&qs[id],
		    __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	}
	return (NULL);
}

static bool
reclaimable(const struct limbo *l)
{
	uint32_t r;

	for (r = 0; r < NREADERS; r++)
		if (__atomic_load_n(&qs[r], __ATOMIC_ACQUIRE) == l->qs[r])
			return (false);
	return (true);
}

static void *
writer(void *arg)
{
	struct kinst_probe **live, **freel, *p;
	struct limbo *limbo;
	uint32_t nfree, lhead, ltail, i, r, nlive;
	uint64_t rnd;
	int rc;

	(void)arg;
	live = calloc(C.nc, sizeof(*live));
	freel = calloc(npool, sizeof(*freel));
	limbo = calloc(npool, sizeof(*limbo));	/* ring of npool entries */
	nfree = 0;
	for (i = 0; i < npool; i++)
		freel[nfree++] = &pool[i];
	lhead = ltail = 0;
	nlive = 0;
	rnd = 99;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		rnd = pt_mix(rnd);
		i = (uint32_t)(rnd % C.nc);
		/* Move reclaimable probes from limbo to the free list. */
		while (lhead != ltail && reclaimable(&limbo[lhead % npool])) {
			p = limbo[lhead % npool].p;
			p->addr = POISON;
			p->id = UINT32_MAX;
			p->tramp = POISON;
			freel[nfree++] = p;
			lhead++;
			wst.reclaims++;
		}
		if (live[i] != NULL) {
			p = live[i];
			if ((rnd >> 40) % 32 == 0) {
				/* Same address, another probe: both refused. */
				if (nfree > 0) {
					struct kinst_probe *q = freel[nfree - 1];

					q->addr = p->addr;
					if (kinst_ptable_remove(&T, q) !=
					    KINST_PT_NOENT) {
						report("writer: remove of a twin "
						    "not NOENT");
						break;
					}
					q->id = i;
					q->tramp = p->addr ^ MAGIC;
					if (kinst_ptable_insert(&T, q) !=
					    KINST_PT_EXISTS) {
						report("writer: duplicate insert "
						    "not EXISTS");
						break;
					}
					wst.noent++;
					wst.exists++;
				}
			}
			rc = kinst_ptable_remove(&T, p);
			if (rc != KINST_PT_OK) {
				report("writer: remove %#jx: %d",
				    (uintmax_t)p->addr, rc);
				break;
			}
			live[i] = NULL;
			nlive--;
			wst.removes++;
			/* Grace period starts now: snapshot reader states. */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			limbo[ltail % npool].p = p;
			for (r = 0; r < NREADERS; r++)
				limbo[ltail % npool].qs[r] =
				    __atomic_load_n(&qs[r], __ATOMIC_ACQUIRE);
			ltail++;
		} else {
			if (nfree == 0) {
				/* Everything is in limbo: let readers run. */
				wst.waits++;
				sched_yield();
				continue;
			}
			p = freel[--nfree];
			p->addr = ckeys[i];
			p->id = i;
			p->tramp = ckeys[i] ^ MAGIC;
			rc = kinst_ptable_insert(&T, p);
			if (rc != KINST_PT_OK) {
				report("writer: insert %#jx: %d",
				    (uintmax_t)ckeys[i], rc);
				break;
			}
			live[i] = p;
			nlive++;
			wst.inserts++;
			if (nlive > wst.maxlive)
				wst.maxlive = nlive;
		}
		if (T.tombstones > wst.maxtomb)
			wst.maxtomb = T.tombstones;
	}
	free(live);
	free(freel);
	free(limbo);
	return (NULL);
}

static void
pick_keys(uint64_t *out, uint32_t n, uint64_t *cursor, const uint32_t *hot,
    uint64_t salt)
{
	uint32_t nhot = n * C.hot_pct / 100, i;

	if (nhot > 0)
		pt_colliding(cursor, hot, C.nhot, out, nhot);
	/* The rest spread over 1 GiB above the colliding ones. */
	for (i = nhot; i < n; i++)
		out[i] = PT_BASE + 0x40000000 + ((pt_mix(i ^ salt) & 0x3fffffc0) |
		    (salt << 4)) + i % 16;
}

static int
cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

static void
run(const struct cfg *cfg)
{
	static uint32_t hot[64];
	pthread_t rt[NREADERS], wt;
	uint64_t cursor = PT_BASE, *all, total_lookups;
	uint32_t i, n, nall;
	const char *why;
	struct timespec ts;

	C = *cfg;
	ATF_REQUIRE(C.nhot <= 64);
	for (i = 0; i < C.nhot; i++)
		hot[i] = (KINST_PTABLE_SLOTS - C.nhot / 2 + i) & PT_MASK;
	skeys = calloc(C.ns, sizeof(*skeys));
	akeys = calloc(C.na, sizeof(*akeys));
	ckeys = calloc(C.nc, sizeof(*ckeys));
	sprobes = calloc(C.ns, sizeof(*sprobes));
	npool = C.nc + 256;
	pool = calloc(npool, sizeof(*pool));
	pick_keys(skeys, C.ns, &cursor, hot, 1);
	pick_keys(akeys, C.na, &cursor, hot, 2);
	pick_keys(ckeys, C.nc, &cursor, hot, 3);
	/* All keys distinct. */
	nall = C.ns + C.na + C.nc;
	all = calloc(nall, sizeof(*all));
	memcpy(all, skeys, C.ns * sizeof(*all));
	memcpy(all + C.ns, akeys, C.na * sizeof(*all));
	memcpy(all + C.ns + C.na, ckeys, C.nc * sizeof(*all));
	qsort(all, nall, sizeof(*all), cmp64);
	for (i = 1; i < nall; i++)
		ATF_REQUIRE_MSG(all[i] != all[i - 1], "duplicate key %#jx",
		    (uintmax_t)all[i]);
	free(all);

	kinst_ptable_init(&T);
	for (i = 0; i < C.ns; i++) {
		sprobes[i].addr = skeys[i];
		sprobes[i].id = i;
		sprobes[i].tramp = skeys[i] ^ MAGIC;
	}
	if (C.interleave) {
		/*
		 * Stable and churn probes alternate in the hot run, then the
		 * churn ones go: stable probes sit behind tombstones.
		 */
		n = C.ns > C.nc ? C.ns : C.nc;
		for (i = 0; i < n; i++) {
			if (i < C.nc) {
				pool[i].addr = ckeys[i];
				ATF_REQUIRE_EQ(kinst_ptable_insert(&T, &pool[i]),
				    KINST_PT_OK);
			}
			if (i < C.ns)
				ATF_REQUIRE_EQ(kinst_ptable_insert(&T,
				    &sprobes[i]), KINST_PT_OK);
		}
		for (i = 0; i < C.nc; i++)
			ATF_REQUIRE_EQ(kinst_ptable_remove(&T, &pool[i]),
			    KINST_PT_OK);
		printf("interleaved start: %u stable probes, %u tombstones\n",
		    T.count, T.tombstones);
	} else
		for (i = 0; i < C.ns; i++)
			ATF_REQUIRE_EQ(kinst_ptable_insert(&T, &sprobes[i]),
			    KINST_PT_OK);
	why = pt_check(&T);
	ATF_REQUIRE_MSG(why == NULL, "%s", why);

	stop = 0;
	nerr = 0;
	err[0] = '\0';
	memset(qs, 0, sizeof(qs));
	memset(rst, 0, sizeof(rst));
	memset(&wst, 0, sizeof(wst));
	for (i = 0; i < NREADERS; i++)
		ATF_REQUIRE_EQ(pthread_create(&rt[i], NULL, reader,
		    (void *)(uintptr_t)i), 0);
	ATF_REQUIRE_EQ(pthread_create(&wt, NULL, writer, NULL), 0);
	ts.tv_sec = (time_t)C.seconds;
	ts.tv_nsec = (long)((C.seconds - ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0)
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NREADERS; i++)
		ATF_REQUIRE_EQ(pthread_join(rt[i], NULL), 0);
	ATF_REQUIRE_EQ(pthread_join(wt, NULL), 0);

	if (nerr != 0)
		atf_tc_fail("%s (%d error(s))", err, nerr);
	total_lookups = 0;
	for (i = 0; i < NREADERS; i++) {
		printf("reader %u: stable %ju, absent %ju, churn %ju hit + "
		    "%ju NULL lookups\n", i, (uintmax_t)rst[i].stable,
		    (uintmax_t)rst[i].absent, (uintmax_t)rst[i].churn_hit,
		    (uintmax_t)rst[i].churn_null);
		total_lookups += rst[i].stable + rst[i].absent +
		    rst[i].churn_hit + rst[i].churn_null;
	}
	printf("writer: %ju inserts, %ju removes, %ju reclaimed after a "
	    "grace period, %ju EXISTS + %ju NOENT checks, %ju waits for "
	    "readers; at most %u churn probes live, %u tombstones\n",
	    (uintmax_t)wst.inserts, (uintmax_t)wst.removes,
	    (uintmax_t)wst.reclaims, (uintmax_t)wst.exists,
	    (uintmax_t)wst.noent, (uintmax_t)wst.waits, wst.maxlive,
	    wst.maxtomb);
	printf("%ju lookups in %.1f s; table at the end: %u live, %u "
	    "tombstones\n", (uintmax_t)total_lookups, C.seconds, T.count,
	    T.tombstones);
	why = pt_check(&T);
	ATF_REQUIRE_MSG(why == NULL, "%s", why);
	for (i = 0; i < C.ns; i++)
		ATF_REQUIRE(kinst_ptable_lookup(&T, skeys[i]) == &sprobes[i]);
	for (i = 0; i < C.na; i++)
		ATF_REQUIRE(kinst_ptable_lookup(&T, akeys[i]) == NULL);
	free(skeys);
	free(akeys);
	free(ckeys);
	free(sprobes);
	free(pool);
	if (wst.removes < 500 || wst.reclaims == 0)
		atf_tc_skip("correct, but the writer only removed %ju probes "
		    "and reused %ju in %.0f s: machine too loaded to say much",
		    (uintmax_t)wst.removes, (uintmax_t)wst.reclaims,
		    C.seconds);
	for (i = 0; i < NREADERS; i++)
		if (rst[i].stable < 1000 || rst[i].absent < 1000 ||
		    rst[i].churn_hit == 0 || rst[i].churn_null == 0)
			atf_tc_skip("correct, but reader %u did too few "
			    "lookups of some kind: machine too loaded", i);
}

#ifdef KINST_NO_TSAN
#define	NEED_TSAN()	atf_tc_skip("this compiler has no ThreadSanitizer " \
			    "(-fsanitize=thread); ptable_mt_test runs the same " \
			    "tests without it")
#else
#define	NEED_TSAN()	do { } while (0)
#endif

ATF_TC(mixed);
ATF_TC_HEAD(mixed, tc)
{

	atf_tc_set_md_var(tc, "descr", "2000 stable, 2000 absent, 2000 "
	    "churned keys, 30%% of them in 16 adjacent buckets, stable probes "
	    "behind churned slots");
}
ATF_TC_BODY(mixed, tc)
{
	static const struct cfg cfg = {
		.ns = 2000, .na = 2000, .nc = 2000, .nhot = 16, .hot_pct = 30,
		.seconds = 3, .interleave = true,
	};

	NEED_TSAN();
	run(&cfg);
}

ATF_TC(hot_cluster);
ATF_TC_HEAD(hot_cluster, tc)
{

	atf_tc_set_md_var(tc, "descr", "every key in 4 adjacent buckets at "
	    "the end of the table, stable probes behind churned slots");
}
ATF_TC_BODY(hot_cluster, tc)
{
	static const struct cfg cfg = {
		.ns = 150, .na = 100, .nc = 150, .nhot = 4, .hot_pct = 100,
		.seconds = 3, .interleave = true,
	};

	NEED_TSAN();
	run(&cfg);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, mixed);
	ATF_TP_ADD_TC(tp, hot_cluster);
	return (atf_no_error());
}
