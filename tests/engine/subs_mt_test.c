/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Subscribers added and removed on busy sites (issue 25, proof 1): the
 * engine's trap path (kinst_engine_hit) runs on NHIT threads, each one
 * "CPU", against NSITES sites that stay in the table, while a control
 * thread links and unlinks subscribers of NSESS sessions at random -- as
 * kinst_control.c does, with release stores, one session at most once per
 * site -- and a drain thread empties every session's rings.
 *
 * A removed subscriber is freed only after every hitter has passed a
 * quiescent state (between two hits, holding no pointer) after the
 * removal, as the shims wait in kinst_os_quiesce(); before it is freed it
 * is poisoned: pointed at a poison session and its id changed, so a hitter
 * that still walked it would be seen.  Session 1's subscribers carry a
 * predicate (rdi even), the others none.  At the end, for every session:
 *   - each record it received names one of its own subscribers, at that
 *     subscriber's site, and passes its own predicate (session 1);
 *   - its hits == records received + dropped + not matching (hits ==
 *     delivered + dropped + filtered, per session);
 *   - the hits its subscribers counted (q->hits, including freed ones) ==
 *     its hits;
 * and the poison session never saw a hit, every hit of a site was
 * redirected, and the site's count equals the hits of the runs.
 */
#include <atf-c.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kinst_abi.h"
#include "kinst_engine.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_ring.h"

#define	NHIT		3
#define	NSITES		8
#define	NSESS		4
#define	POISON_SESS	NSESS
#define	RING_SIZE	(64u * 1024)
#define	SITE_BASE	0x7f0000100000ull
#define	ID(sess, serial, site)	((uint32_t)(((sess) + 1) * 1000000u + \
				    (serial) * NSITES + (site)))

/* ---- the OS the engine sees: one "CPU" per hitter thread ---- */

static __thread uint32_t my_cpu;

uint32_t
kinst_os_cpu(void)
{
	return (my_cpu);
}

uint64_t
kinst_os_now_ns(void)
{
	return (1);
}

uint64_t
kinst_os_local_ns(void)
{
	return (1);
}

void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	*pid = 7;
	*tid = 7 + (int32_t)my_cpu;
	strcpy(comm, "subs");
}

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = 7;
	key[1] = my_cpu;
}

void
kinst_os_wake_deferred(struct kinst_session *s)
{
	(void)s;
}

int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	(void)addr; (void)buf; (void)len;
	return (-1);
}

int
kinst_os_read_user(uint64_t addr, void *buf, size_t len)
{
	(void)addr; (void)buf; (void)len;
	return (-1);
}

int
kinst_os_write_stack(uint64_t addr, const void *buf, size_t len)
{
	(void)addr; (void)buf; (void)len;
	return (-1);
}

uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	(void)regs; (void)osctx; (void)offset; (void)pcs; (void)max;
	*truncated = false;
	return (0);
}

/* ---- the test ---- */

struct tsess {
	struct kinst_session s;
	struct kinst_ring rings[NHIT];
	struct kinst_pcpu_count hits[NHIT];
	uint8_t		*buf[NHIT];
	struct kinst_prog_cpu pst[NHIT];
	uint64_t	received;	/* records the drain thread took */
	uint64_t	bad;		/* records that broke a rule */
	uint64_t	freed_hits;	/* q->hits of its freed subscribers */
};

struct sub {
	struct kinst_probe p;		/* first */
	uint32_t	sess, site;
};

static struct kinst_engine eng;
static struct kinst_probe sites[NSITES];
static struct tsess ts[NSESS + 1];
static struct sub *live[NSITES][NSESS];	/* control thread's view */
static struct kinst_prog even_rdi;
static uint64_t qs[NHIT];		/* atomic: hitters' quiescent states */
static uint64_t calls[NHIT], misses[NHIT];
static int stop_hit, stop_ctl, stop_drain;
static uint64_t links, unlinks, frees;

static void *
hitter(void *arg)
{
	struct kinst_regs r;
	uint64_t x;
	int res;

	my_cpu = (uint32_t)(uintptr_t)arg;
	x = 0x9e3779b97f4a7c15ull * (my_cpu + 1);
	while (!__atomic_load_n(&stop_hit, __ATOMIC_ACQUIRE)) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		memset(&r, 0, sizeof(r));
		r.rip = SITE_BASE + 16 * (x % NSITES);
		r.gpr[KINST_RDI] = x >> 20;
		r.gpr[KINST_RSP] = 0x1000;
		res = kinst_engine_hit(&eng, &r);
		calls[my_cpu]++;
		if (res != KINST_HIT_REDIRECT)
			misses[my_cpu]++;
		/* A quiescent state: no pointer into the table is held. */
		__atomic_fetch_add(&qs[my_cpu], 1, __ATOMIC_RELEASE);
	}
	return (NULL);
}

/* Wait until every hitter has passed a quiescent state after now. */
static void
quiesce(void)
{
	uint64_t snap[NHIT];
	uint32_t i;

	for (i = 0; i < NHIT; i++)
		snap[i] = __atomic_load_n(&qs[i], __ATOMIC_ACQUIRE);
	for (i = 0; i < NHIT; i++)
		while (__atomic_load_n(&qs[i], __ATOMIC_ACQUIRE) == snap[i] &&
		    !__atomic_load_n(&stop_hit, __ATOMIC_ACQUIRE))
			sched_yield();
}

static void
sub_link(uint32_t site, uint32_t sess, uint32_t serial)
{
	struct sub *u;

	u = calloc(1, sizeof(*u));
	ATF_REQUIRE(u != NULL);
	u->p.addr = sites[site].addr;
	u->p.offset = 0;
	u->p.session = &ts[sess].s;
	u->p.id = ID(sess, serial, site);
	u->p.prog = sess == 1 ? &even_rdi : NULL;
	u->sess = sess;
	u->site = site;
	/* At the head or after the first subscriber, as they come. */
	if ((serial & 1) != 0 && sites[site].next != NULL) {
		u->p.next = sites[site].next->next;
		__atomic_store_n(&sites[site].next->next, &u->p,
		    __ATOMIC_RELEASE);
	} else {
		u->p.next = sites[site].next;
		__atomic_store_n(&sites[site].next, &u->p, __ATOMIC_RELEASE);
	}
	live[site][sess] = u;
	__atomic_fetch_add(&links, 1, __ATOMIC_RELAXED);	/* read by the main thread */
}

/* Unlink (release); the caller quiesces, then sub_free()s. */
static void
sub_unlink(struct sub *u)
{
	struct kinst_probe *q;

	for (q = &sites[u->site]; q->next != NULL; q = q->next)
		if (q->next == &u->p) {
			__atomic_store_n(&q->next, u->p.next,
			    __ATOMIC_RELEASE);
			break;
		}
	live[u->site][u->sess] = NULL;
	unlinks++;
}

static void
sub_free(struct sub *u)
{
	ts[u->sess].freed_hits += __atomic_load_n(&u->p.hits,
	    __ATOMIC_RELAXED);
	/* Poisoned: a hitter still on it would record for the poison session. */
	u->p.session = &ts[POISON_SESS].s;
	u->p.id = 0xdeadu;
	u->p.prog = NULL;
	u->p.next = NULL;
	free(u);
	__atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);	/* read by the main thread */
}

static void *
control(void *arg)
{
	struct sub *gone[NSITES * NSESS];
	uint32_t serial, site, sess, n, i;
	uint64_t x;

	(void)arg;
	x = 0x2545f4914f6cdd1dull;
	serial = 1;
	while (!__atomic_load_n(&stop_ctl, __ATOMIC_ACQUIRE)) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		n = 0;
		if (x % 16 == 0) {
			/* A session closes: all its subscribers go at once. */
			sess = (uint32_t)(x >> 8) % NSESS;
			for (site = 0; site < NSITES; site++)
				if (live[site][sess] != NULL) {
					gone[n++] = live[site][sess];
					sub_unlink(live[site][sess]);
				}
		} else {
			site = (uint32_t)(x >> 8) % NSITES;
			sess = (uint32_t)(x >> 16) % NSESS;
			if (live[site][sess] != NULL) {
				gone[n++] = live[site][sess];
				sub_unlink(live[site][sess]);
			} else
				sub_link(site, sess, serial++);
		}
		if (n != 0) {
			quiesce();
			for (i = 0; i < n; i++)
				sub_free(gone[i]);
		}
	}
	return (NULL);
}

/* Take every record of every ring of every session; check each one. */
static void
drain_once(uint8_t *buf)
{
	const struct kinst_hit_record *r;
	uint32_t j, c, site, sess;
	size_t n, off;

	for (j = 0; j <= NSESS; j++)
		for (c = 0; c < NHIT; c++)
			while ((n = kinst_ring_get(&ts[j].rings[c], buf,
			    RING_SIZE)) > 0)
				for (off = 0; off + sizeof(*r) <= n;
				    off += sizeof(*r)) {
					r = (const void *)(buf + off);
					ts[j].received++;
					sess = r->probe_id / 1000000u - 1;
					site = r->probe_id % NSITES;
					if (j == POISON_SESS || sess != j ||
					    r->hdr.size != sizeof(*r) ||
					    r->addr != sites[site].addr ||
					    r->regs.rip != r->addr ||
					    r->cpu != c ||
					    (j == 1 && (r->regs.gpr[KINST_RDI] &
					    1) != 0))
						ts[j].bad++;
				}
}

static void *
drainer(void *arg)
{
	uint8_t *buf;

	(void)arg;
	buf = malloc(RING_SIZE);
	ATF_REQUIRE(buf != NULL);
	while (!__atomic_load_n(&stop_drain, __ATOMIC_ACQUIRE)) {
		drain_once(buf);
		usleep(200);
	}
	drain_once(buf);
	free(buf);
	return (NULL);
}

ATF_TC(subscribers_churn);
ATF_TC_HEAD(subscribers_churn, tc)
{
	atf_tc_set_md_var(tc, "descr", "3 threads hit 8 sites while a "
	    "control thread subscribes and unsubscribes 4 sessions at random "
	    "(one with a predicate), quiescing before it frees: every record "
	    "is its own session's, from its own site, past its own "
	    "predicate; per session hits == delivered + dropped + not "
	    "matching == the hits its subscribers counted");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(subscribers_churn, tc)
{
	static const struct kinst_pinsn even[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_AND },
		{ .op = KINST_OP_IMM, .imm = 0 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_RET },
	};
	static const uint8_t push_rbp[16] = { 0x55, 0x90, 0x90, 0x90 };
	pthread_t ht[NHIT], ct, dt;
	uint8_t img[KINST_TRAMP_SIZE];
	uint64_t total_calls, total_misses, site_hits, live_hits, filtered;
	uint64_t dropped, sess_hits;
	uint32_t i, j, c, bad_pc;
	struct timespec t0, t1;
	long ms;

	kinst_engine_init(&eng, NHIT, false);
	ATF_REQUIRE_EQ(kinst_prog_verify(even, 6, &even_rdi, &bad_pc),
	    KINST_PV_OK);
	for (j = 0; j <= NSESS; j++) {
		for (c = 0; c < NHIT; c++) {
			ts[j].buf[c] = aligned_alloc(4096, RING_SIZE);
			ATF_REQUIRE(ts[j].buf[c] != NULL);
			ATF_REQUIRE_EQ(kinst_ring_init(&ts[j].rings[c],
			    ts[j].buf[c], RING_SIZE), 0);
		}
		kinst_session_init(&ts[j].s, ts[j].rings, ts[j].hits, NHIT);
		ts[j].s.pstats = ts[j].pst;
	}
	for (i = 0; i < NSITES; i++) {
		ATF_REQUIRE_EQ(kinst_probe_prepare(&sites[i], push_rbp,
		    sizeof(push_rbp), SITE_BASE + 16 * i, SITE_BASE + 0x10000 + 64 * i, img),
		    KINST_R_NONE);
		sites[i].session = NULL;	/* a site: subscribers only */
		ATF_REQUIRE_EQ(kinst_ptable_insert(&eng.table, &sites[i]),
		    KINST_PT_OK);
	}
	for (i = 0; i < NHIT; i++)
		ATF_REQUIRE_EQ(pthread_create(&ht[i], NULL, hitter,
		    (void *)(uintptr_t)i), 0);
	ATF_REQUIRE_EQ(pthread_create(&dt, NULL, drainer, NULL), 0);
	ATF_REQUIRE_EQ(pthread_create(&ct, NULL, control, NULL), 0);
	/*
	 * At least 3 s, and until the control thread has linked and freed
	 * more than 100 subscribers each (on a loaded host it gets little
	 * CPU: a count reached in 3 s on an idle one can take much longer),
	 * at most 90 s: how much churn happened is asserted below, not how
	 * fast.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		usleep(100000);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000;
	} while (ms < 3000 || ((__atomic_load_n(&links, __ATOMIC_RELAXED) <= 100 ||
	    __atomic_load_n(&frees, __ATOMIC_RELAXED) <= 100) && ms < 90000));
	__atomic_store_n(&stop_ctl, 1, __ATOMIC_RELEASE);
	pthread_join(ct, NULL);
	__atomic_store_n(&stop_hit, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NHIT; i++)
		pthread_join(ht[i], NULL);
	__atomic_store_n(&stop_drain, 1, __ATOMIC_RELEASE);
	pthread_join(dt, NULL);

	total_calls = total_misses = site_hits = 0;
	for (i = 0; i < NHIT; i++) {
		total_calls += calls[i];
		total_misses += misses[i];
	}
	for (i = 0; i < NSITES; i++)
		site_hits += sites[i].hits;
	printf("%ju hits on %u sites from %u threads; %ju links, %ju "
	    "unlinks, %ju subscribers freed after quiescence\n",
	    (uintmax_t)total_calls, NSITES, NHIT, (uintmax_t)links,
	    (uintmax_t)unlinks, (uintmax_t)frees);
	ATF_CHECK_EQ(total_misses, 0);
	ATF_CHECK_EQ(site_hits, total_calls);
	ATF_CHECK(links > 100);
	ATF_CHECK(frees > 100);
	for (j = 0; j <= NSESS; j++) {
		sess_hits = dropped = filtered = 0;
		for (c = 0; c < NHIT; c++) {
			sess_hits += ts[j].hits[c].n;
			dropped += kinst_ring_dropped(&ts[j].rings[c]);
			filtered += ts[j].pst[c].st.filtered;
		}
		live_hits = 0;
		for (i = 0; i < NSITES; i++)
			if (j < NSESS && live[i][j] != NULL)
				live_hits += live[i][j]->p.hits;
		printf("session %u: %ju hits, %ju received, %ju dropped, %ju "
		    "not matching, %ju bad; subscribers counted %ju\n", j,
		    (uintmax_t)sess_hits, (uintmax_t)ts[j].received,
		    (uintmax_t)dropped, (uintmax_t)filtered,
		    (uintmax_t)ts[j].bad,
		    (uintmax_t)(ts[j].freed_hits + live_hits));
		ATF_CHECK_EQ(ts[j].bad, 0);
		ATF_CHECK_EQ(sess_hits, ts[j].received + dropped + filtered);
		ATF_CHECK_EQ(sess_hits, ts[j].freed_hits + live_hits);
		if (j == POISON_SESS)
			ATF_CHECK_EQ(sess_hits, 0);
		else
			ATF_CHECK(ts[j].received > 0);
		if (j == 1)
			ATF_CHECK(filtered > 0);
		else
			ATF_CHECK_EQ(filtered, 0);
	}
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, subscribers_churn);
	return (atf_no_error());
}
