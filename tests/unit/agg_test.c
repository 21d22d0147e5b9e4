/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-kernel aggregation (common/kinst_agg.c, kinst_agghit.c, kinst_aggctl.c) in user
 * space: counts per key and per probe, histogram bucket edges (log2 and
 * linear), sum/min/max, overflow of a full table, clear, per-CPU tables
 * read one CPU at a time, setup validation, and the engine path (a hit of
 * an aggregating probe makes no record; hits add up).  Stacks as keys
 * (KINST_AGGF_STACK): kinst_os_stack() is stubbed to return the test's
 * stacks, and the stack hash can be forced (KINST_AGG_TEST_HASH) to make
 * two different stacks collide.
 */
#include <atf-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kinst_control.h"
#include "kinst_engine.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_ring.h"
#include "kinst_tstate.h"

/* ---- the control-path OS functions kinst_aggctl.c uses ---- */
static int quiesces;
void *kinst_os_alloc(size_t size) { return (calloc(1, size ? size : 1)); }
void kinst_os_free(void *p, size_t size) { (void)size; free(p); }
void kinst_os_ctl_lock(void) { }
void kinst_os_ctl_unlock(void) { }
void kinst_os_quiesce(void) { quiesces++; }
int kinst_os_read(uint64_t a, void *b, size_t n) { (void)a; (void)b; (void)n; return (-1); }
int kinst_os_read_user(uint64_t a, void *b, size_t n) { (void)a; (void)b; (void)n; return (-1); }
void kinst_os_thread_key(uint64_t k[2]) { k[0] = k[1] = 1; }
/* A clock that moves 1000 ns a reading; the readings are kept. */
static uint64_t clock_reads[16];
static uint32_t nclock_reads;
uint64_t
kinst_os_now_ns(void)
{
	uint64_t t = 1000 * (uint64_t)(nclock_reads + 1);

	if (nclock_reads < 16)
		clock_reads[nclock_reads] = t;
	nclock_reads++;
	return (t);
}
/* The per-CPU clock (KINST_TS_LOCAL_CLOCK): another domain, kept apart. */
static uint64_t local_reads[16];
static uint32_t nlocal_reads;
uint64_t
kinst_os_local_ns(void)
{
	uint64_t t = 7000000 + 3000 * (uint64_t)(nlocal_reads + 1);

	if (nlocal_reads < 16)
		local_reads[nlocal_reads] = t;
	nlocal_reads++;
	return (t);
}
void kinst_os_wake_deferred(struct kinst_session *s) { (void)s; }

static struct kinst_csession cs;

/* ---- kinst_os_stack(): the callers the test chose ---- */
static uint64_t stub_callers[80];
static uint32_t stub_ncallers;
static void *stub_osctx;
static uint32_t stub_offset;

uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	uint32_t i, n;

	(void)regs;
	stub_osctx = osctx;
	stub_offset = offset;
	n = stub_ncallers < max ? stub_ncallers : max;
	for (i = 0; i < n; i++)
		pcs[i] = stub_callers[i];
	*truncated = stub_ncallers > max;
	return (n);
}

/* The stack hash (KINST_AGG_TEST_HASH), forced when force_hash is set. */
static bool force_hash;
uint64_t test_stack_hash(const uint64_t *frames, uint32_t nframes);
uint64_t
test_stack_hash(const uint64_t *frames, uint32_t nframes)
{
	if (force_hash)
		return (0x4242);
	return (kinst_agg_stack_hash(frames, nframes));
}

/* Set an aggregation up on a session of ncpus CPUs; the KINST_E_* result. */
static int
setup(uint32_t ncpus, uint32_t kind, uint32_t flags, uint32_t nslots,
    int64_t lmin, int64_t lmax, int64_t lstep, struct kinst_agg_setup *su)
{
	if (cs.s.agg != NULL)
		kinst_ctl_agg_fini(&cs);
	memset(&cs, 0, sizeof(cs));
	cs.s.ncpus = ncpus;
	memset(su, 0, sizeof(*su));
	su->kind = kind;
	su->flags = flags;
	su->nslots = nslots;
	su->lin_min = lmin;
	su->lin_max = lmax;
	su->lin_step = lstep;
	return (kinst_ctl_agg_setup(NULL, &cs, su));
}

static void
add(uint32_t cpu, uint32_t probe, uint64_t k0, uint64_t k1, uint64_t value)
{
	struct kinst_agg_val v = { { k0, k1 }, value, 0 };
	struct kinst_agg *a = cs.s.agg;

	kinst_agg_add(a, a->active, cpu, probe, &v);
}

/* Read cpu's entries through the ioctl's common code into buf. */
static uint32_t
readcpu(uint32_t cpu, uint8_t *buf, uint32_t cap)
{
	struct kinst_agg_read rd;

	memset(&rd, 0, sizeof(rd));
	rd.cpu = cpu;
	rd.cap = cap;
	ATF_REQUIRE_EQ(kinst_ctl_agg_read(NULL, &cs, &rd, buf, cap),
	    KINST_E_OK);
	return (rd.count);
}

/* The entry of (probe, k0, k1) among n entries of esize bytes, or NULL. */
static const struct kinst_agg_entry *
find(const uint8_t *buf, uint32_t n, size_t esize, uint32_t probe,
    uint64_t k0, uint64_t k1)
{
	const struct kinst_agg_entry *e;
	uint32_t i;

	for (i = 0; i < n; i++) {
		e = (const struct kinst_agg_entry *)(buf + i * esize);
		if (e->probe_id == probe && e->key[0] == k0 && e->key[1] == k1)
			return (e);
	}
	return (NULL);
}

ATF_TC_WITHOUT_HEAD(counts_and_keys);
ATF_TC_BODY(counts_and_keys, tc)
{
	static uint8_t buf[64 * 1024];
	const struct kinst_agg_entry *e;
	struct kinst_agg_setup su;
	uint32_t i, n;

	ATF_REQUIRE_EQ(setup(2, KINST_AGG_COUNT, KINST_AGGF_PROBE, 100, 0, 0,
	    0, &su), KINST_E_OK);
	ATF_CHECK_EQ(su.nslots, 128);	/* a power of two */
	ATF_CHECK_EQ(su.nbuckets, 0);
	ATF_CHECK_EQ(su.entry_size, sizeof(struct kinst_agg_entry));
	/* Probe 1 key 5: 10 hits; probe 2 key 5: 3 hits; probe 1 key (5, 1): 4. */
	for (i = 0; i < 10; i++)
		add(0, 1, 5, 0, i);
	for (i = 0; i < 3; i++)
		add(0, 2, 5, 0, (uint64_t)-7);
	for (i = 0; i < 4; i++)
		add(0, 1, 5, 1, 100);
	n = readcpu(0, buf, 128);
	ATF_REQUIRE_EQ(n, 3);
	ATF_REQUIRE((e = find(buf, n, su.entry_size, 1, 5, 0)) != NULL);
	ATF_CHECK_EQ(e->count, 10);
	ATF_CHECK_EQ(e->sum, 45);
	ATF_CHECK_EQ(e->min, 0);
	ATF_CHECK_EQ(e->max, 9);
	ATF_REQUIRE((e = find(buf, n, su.entry_size, 2, 5, 0)) != NULL);
	ATF_CHECK_EQ(e->count, 3);
	ATF_CHECK_EQ(e->min, -7);	/* signed */
	ATF_CHECK_EQ(e->max, -7);
	ATF_CHECK_EQ(e->sum, (uint64_t)-21);
	ATF_REQUIRE((e = find(buf, n, su.entry_size, 1, 5, 1)) != NULL);
	ATF_CHECK_EQ(e->count, 4);
	/* CPU 1's table is its own. */
	ATF_CHECK_EQ(readcpu(1, buf, 128), 0);
	add(1, 1, 5, 0, 1);
	n = readcpu(1, buf, 128);
	ATF_REQUIRE_EQ(n, 1);
	ATF_CHECK_EQ(((struct kinst_agg_entry *)buf)->count, 1);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.aggregated, 17);
	ATF_CHECK_EQ(cs.s.agg->stats[1].st.aggregated, 1);
	/* A read capped below the entries in use copies only cap. */
	ATF_CHECK_EQ(readcpu(0, buf, 2), 2);
	kinst_ctl_agg_fini(&cs);
}

/* Bucket of v, through kinst_agg_add and a read (the whole path). */
static uint32_t
bucket_of(int64_t v)
{
	static uint8_t buf[64 * 1024];
	const struct kinst_agg_entry *e;
	const uint64_t *b;
	struct kinst_agg_clear cl = { 0, 0 };
	uint32_t i, found, nb = cs.s.agg->nbuckets;

	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	add(0, 0, 0, 0, (uint64_t)v);
	ATF_REQUIRE_EQ(readcpu(0, buf, 4), 1);
	e = (const struct kinst_agg_entry *)buf;
	b = (const uint64_t *)(e + 1);
	found = nb;
	for (i = 0; i < nb; i++) {
		if (b[i] == 0)
			continue;
		ATF_CHECK_EQ_MSG(b[i], 1, "bucket %u of %lld", i, (long long)v);
		ATF_CHECK_EQ_MSG(found, nb, "two buckets for %lld",
		    (long long)v);
		found = i;
	}
	ATF_CHECK_EQ(kinst_agg_bucket(cs.s.agg, v), found);
	return (found);
}

ATF_TC_WITHOUT_HEAD(log2_edges);
ATF_TC_BODY(log2_edges, tc)
{
	struct kinst_agg_setup su;
	int k;

	ATF_REQUIRE_EQ(setup(1, KINST_AGG_LOG2, 0, 4, 0, 0, 0, &su),
	    KINST_E_OK);
	ATF_CHECK_EQ(su.nbuckets, KINST_AGG_LOG2_BUCKETS);
	ATF_CHECK_EQ(su.entry_size,
	    sizeof(struct kinst_agg_entry) + 8 * KINST_AGG_LOG2_BUCKETS);
	ATF_CHECK_EQ(bucket_of(-1), 0);
	ATF_CHECK_EQ(bucket_of(INT64_MIN), 0);
	ATF_CHECK_EQ(bucket_of(0), 1);
	ATF_CHECK_EQ(bucket_of(1), 2);
	/* [2^k, 2^(k+1)) -> 2 + k: both edges of every bucket. */
	for (k = 1; k < 63; k++) {
		ATF_CHECK_EQ(bucket_of((int64_t)1 << k), 2 + k);
		ATF_CHECK_EQ(bucket_of(((int64_t)1 << k) - 1), 1 + k);
	}
	ATF_CHECK_EQ(bucket_of(INT64_MAX), 64);
	kinst_ctl_agg_fini(&cs);
}

ATF_TC_WITHOUT_HEAD(linear_edges);
ATF_TC_BODY(linear_edges, tc)
{
	struct kinst_agg_setup su;

	/* [0, 100) step 10: below, 10 buckets, at or above. */
	ATF_REQUIRE_EQ(setup(1, KINST_AGG_LINEAR, 0, 4, 0, 100, 10, &su),
	    KINST_E_OK);
	ATF_CHECK_EQ(su.nbuckets, 12);
	ATF_CHECK_EQ(bucket_of(-1), 0);
	ATF_CHECK_EQ(bucket_of(0), 1);
	ATF_CHECK_EQ(bucket_of(9), 1);
	ATF_CHECK_EQ(bucket_of(10), 2);
	ATF_CHECK_EQ(bucket_of(99), 10);
	ATF_CHECK_EQ(bucket_of(100), 11);
	ATF_CHECK_EQ(bucket_of(INT64_MAX), 11);
	/* A range that is not a multiple of the step: the last is short. */
	ATF_REQUIRE_EQ(setup(1, KINST_AGG_LINEAR, 0, 4, -5, 6, 5, &su),
	    KINST_E_OK);
	ATF_CHECK_EQ(su.nbuckets, 5);
	ATF_CHECK_EQ(bucket_of(-6), 0);
	ATF_CHECK_EQ(bucket_of(-5), 1);
	ATF_CHECK_EQ(bucket_of(0), 2);
	ATF_CHECK_EQ(bucket_of(5), 3);
	ATF_CHECK_EQ(bucket_of(6), 4);
	/* The whole int64 range: no overflow in the arithmetic. */
	ATF_REQUIRE_EQ(setup(1, KINST_AGG_LINEAR, 0, 4, INT64_MIN, INT64_MAX,
	    INT64_MAX / 4 + 1, &su), KINST_E_OK);
	ATF_CHECK_EQ(bucket_of(INT64_MIN), 1);
	ATF_CHECK_EQ(bucket_of(INT64_MAX), su.nbuckets - 1);
	ATF_CHECK_EQ(bucket_of(-1), 4);
	ATF_CHECK_EQ(bucket_of(0), 5);
	kinst_ctl_agg_fini(&cs);
}

ATF_TC_WITHOUT_HEAD(overflow);
ATF_TC_BODY(overflow, tc)
{
	static uint8_t buf[64 * 1024];
	struct kinst_agg_cpu_stats out[2];
	struct kinst_agg_stats st;
	struct kinst_agg_setup su;
	uint32_t i, n;
	uint64_t sum;

	/* 8 slots, 20 keys: 8 kept, every hit of the other 12 counted. */
	ATF_REQUIRE_EQ(setup(2, KINST_AGG_COUNT, 0, 8, 0, 0, 0, &su),
	    KINST_E_OK);
	for (i = 0; i < 20; i++) {
		add(0, 0, 1000 + i, 0, 0);
		add(0, 0, 1000 + i, 0, 0);
	}
	n = readcpu(0, buf, 8);
	ATF_CHECK_EQ(n, 8);
	sum = 0;
	for (i = 0; i < n; i++)
		sum += ((struct kinst_agg_entry *)(buf + i * su.entry_size))->count;
	ATF_CHECK_EQ(sum, 16);
	memset(&st, 0, sizeof(st));
	st.cap = 2;
	ATF_REQUIRE_EQ(kinst_ctl_agg_stats(NULL, &cs, out, 2, &st), KINST_E_OK);
	ATF_CHECK_EQ(st.ncpus, 2);
	ATF_CHECK_EQ(st.nslots, 8);
	ATF_CHECK_EQ(out[0].aggregated, 16);
	ATF_CHECK_EQ(out[0].overflow, 24);
	ATF_CHECK_EQ(out[0].used, 8);
	ATF_CHECK_EQ(out[1].used, 0);
	ATF_CHECK_EQ(out[0].aggregated + out[0].overflow, 40);
	/* One slot: only its own key matches it, every word of the key and
	   the probe id compared. */
	ATF_REQUIRE_EQ(setup(1, KINST_AGG_COUNT, KINST_AGGF_PROBE, 1, 0, 0, 0,
	    &su), KINST_E_OK);
	ATF_CHECK_EQ(su.nslots, 1);
	add(0, 3, 1, 0, 0);
	add(0, 3, 1, 1, 0);
	add(0, 3, 2, 0, 0);
	add(0, 4, 1, 0, 0);
	add(0, 3, 1, 0, 0);
	ATF_REQUIRE_EQ(readcpu(0, buf, 8), 1);
	ATF_CHECK_EQ(((struct kinst_agg_entry *)buf)->count, 2);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.overflow, 3);
	kinst_ctl_agg_fini(&cs);
}

ATF_TC_WITHOUT_HEAD(clear);
ATF_TC_BODY(clear, tc)
{
	static uint8_t buf[64 * 1024];
	struct kinst_agg_clear cl = { 0, 0 };
	struct kinst_agg_setup su;
	int q;

	ATF_REQUIRE_EQ(setup(2, KINST_AGG_LOG2, KINST_AGGF_PROBE, 16, 0, 0, 0,
	    &su), KINST_E_OK);
	add(0, 3, 1, 2, 4);
	add(1, 3, 1, 2, 4);
	ATF_CHECK_EQ(readcpu(0, buf, 16), 1);
	q = quiesces;
	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	ATF_CHECK_EQ(quiesces, q + 1);	/* waited for hits in flight */
	ATF_CHECK_EQ(readcpu(0, buf, 16), 0);
	ATF_CHECK_EQ(readcpu(1, buf, 16), 0);
	/* The same key again starts from zero, buckets too. */
	add(0, 3, 1, 2, 4);
	ATF_REQUIRE_EQ(readcpu(0, buf, 16), 1);
	ATF_CHECK_EQ(((struct kinst_agg_entry *)buf)->count, 1);
	ATF_CHECK_EQ(((uint64_t *)((struct kinst_agg_entry *)buf + 1))[4], 1);
	/* Twice more: back on the first set, which was zeroed. */
	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	ATF_CHECK_EQ(readcpu(0, buf, 16), 0);
	add(0, 3, 1, 2, 4);
	ATF_REQUIRE_EQ(readcpu(0, buf, 16), 1);
	ATF_CHECK_EQ(((struct kinst_agg_entry *)buf)->count, 1);
	cl.flags = 1;
	ATF_CHECK_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_INVAL);
	kinst_ctl_agg_fini(&cs);
}

ATF_TC_WITHOUT_HEAD(setup_validation);
ATF_TC_BODY(setup_validation, tc)
{
	struct kinst_agg_setup su;
	struct kinst_agg_read rd;
	struct kinst_agg_stats st;
	struct kinst_agg_clear cl = { 0, 0 };

	memset(&cs, 0, sizeof(cs));
	cs.s.ncpus = 2;
	/* Nothing set up: every other ioctl refuses. */
	memset(&rd, 0, sizeof(rd));
	ATF_CHECK_EQ(kinst_ctl_agg_read(NULL, &cs, &rd, NULL, 0), KINST_E_INVAL);
	ATF_CHECK_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_INVAL);
	memset(&st, 0, sizeof(st));
	ATF_CHECK_EQ(kinst_ctl_agg_stats(NULL, &cs, NULL, 0, &st), KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, 0, 0, 8, 0, 0, 0, &su), KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_KIND_COUNT_, 0, 8, 0, 0, 0, &su),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_COUNT, 2, 8, 0, 0, 0, &su),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_COUNT, KINST_AGGF_RECORD << 1, 8, 0, 0,
	    0, &su), KINST_E_INVAL);	/* an unknown flag */
	ATF_CHECK_EQ(setup(2, KINST_AGG_COUNT, KINST_AGGF_RECORD, 8, 0, 0, 0,
	    &su), KINST_E_OK);
	ATF_CHECK_EQ(setup(2, KINST_AGG_COUNT, 0, 0, 0, 0, 0, &su),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_COUNT, 0, KINST_AGG_MAX_SLOTS + 1, 0,
	    0, 0, &su), KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_COUNT, 0, 8, 0, 10, 1, &su),
	    KINST_E_INVAL);	/* linear fields without LINEAR */
	ATF_CHECK_EQ(setup(2, KINST_AGG_LINEAR, 0, 8, 0, 10, 0, &su),
	    KINST_E_INVAL);	/* step 0 */
	ATF_CHECK_EQ(setup(2, KINST_AGG_LINEAR, 0, 8, 0, 10, -1, &su),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_LINEAR, 0, 8, 10, 10, 1, &su),
	    KINST_E_INVAL);	/* empty range */
	ATF_CHECK_EQ(setup(2, KINST_AGG_LINEAR, 0, 8, 0,
	    KINST_AGG_MAX_LINEAR + 1, 1, &su), KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_LINEAR, 0, 8, 0,
	    KINST_AGG_MAX_LINEAR, 1, &su), KINST_E_OK);
	/* Over the memory budget: 2 sets x 1024 CPUs x 65536 slots. */
	ATF_CHECK_EQ(setup(1024, KINST_AGG_LOG2, 0, KINST_AGG_MAX_SLOTS, 0, 0,
	    0, &su), KINST_E_TOOBIG);
	su.nstacks = 1;	/* without KINST_AGGF_STACK */
	ATF_CHECK_EQ(kinst_ctl_agg_setup(NULL, &cs, &su), KINST_E_INVAL);
	/* Once per session. */
	ATF_REQUIRE_EQ(setup(2, KINST_AGG_COUNT, 0, 8, 0, 0, 0, &su), KINST_E_OK);
	ATF_CHECK_EQ(kinst_ctl_agg_setup(NULL, &cs, &su), KINST_E_EXIST);
	rd.cpu = 2;	/* no such CPU */
	ATF_CHECK_EQ(kinst_ctl_agg_read(NULL, &cs, &rd, NULL, 0), KINST_E_INVAL);
	rd.cpu = 0;
	rd.flags = 1;
	ATF_CHECK_EQ(kinst_ctl_agg_read(NULL, &cs, &rd, NULL, 0), KINST_E_INVAL);
	st.flags = 1;
	ATF_CHECK_EQ(kinst_ctl_agg_stats(NULL, &cs, NULL, 0, &st), KINST_E_INVAL);
	kinst_ctl_agg_fini(&cs);
}

/*
 * kinst_agg_hit, the engine's step: the program's KEY and VALUE make the
 * key and the value, its false result or a fault filters the hit, a nested
 * hit is counted apart; per CPU filtered + aggregated + nested == hits.
 */
ATF_TC_WITHOUT_HEAD(engine_step);
ATF_TC_BODY(engine_step, tc)
{
	/* key rdi & 0xff, key2 comm bytes 0-7, value rdx; if rdx != 3 */
	static const struct kinst_pinsn code[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_IMM, .imm = 0xff },
		{ .op = KINST_OP_AND },
		{ .op = KINST_OP_KEY, .arg = 0 },
		{ .op = KINST_OP_CTX, .arg = KINST_PCTX_COMM0 },
		{ .op = KINST_OP_KEY, .arg = 1 },
		{ .op = KINST_OP_REG, .arg = KINST_RDX },
		{ .op = KINST_OP_VALUE },
		{ .op = KINST_OP_REG, .arg = KINST_RDX },
		{ .op = KINST_OP_IMM, .imm = 3 },
		{ .op = KINST_OP_NE },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_engine eng;
	static struct kinst_prog prog;
	static uint8_t buf[64 * 1024];
	struct kinst_prog_cpu ps[2];
	const struct kinst_agg_entry *e;
	struct kinst_agg_setup su;
	struct kinst_probe p;
	struct kinst_regs r;
	uint32_t bad, i, n, hits;
	uint64_t dd;

	ATF_REQUIRE_EQ(kinst_prog_verify(code, 12, &prog, &bad), KINST_PV_OK);
	ATF_REQUIRE_EQ(setup(2, KINST_AGG_LINEAR, KINST_AGGF_PROBE, 64, 0, 10,
	    1, &su), KINST_E_OK);
	memset(ps, 0, sizeof(ps));
	cs.s.pstats = ps;
	memset(&p, 0, sizeof(p));
	p.id = 9;
	p.prog = &prog;
	p.flags = KINST_PF_AGG;
	memset(&r, 0, sizeof(r));
	hits = 0;
	for (i = 0; i < 30; i++) {
		r.gpr[KINST_RDI] = 0x1100 + i % 3;	/* keys 0, 1, 2 */
		r.gpr[KINST_RDX] = i % 5;		/* 3 is filtered */
		kinst_agg_hit(&eng, &p, &cs.s, 1, 10, 11, "dd\0\0\0\0\0\0x", &r,
		    NULL, NULL);
		hits++;
	}
	/* A nested hit: the CPU is already inside one. */
	eng.cpu[1].depth = 1;
	kinst_agg_hit(&eng, &p, &cs.s, 1, 10, 11, "dd\0\0\0\0\0\0x", &r,
	    NULL, NULL);
	hits++;
	eng.cpu[1].depth = 0;
	ATF_CHECK_EQ(ps[1].st.filtered, 6);
	ATF_CHECK_EQ(cs.s.agg->stats[1].st.nested, 1);
	ATF_CHECK_EQ(cs.s.agg->stats[1].st.aggregated, 24);
	ATF_CHECK_EQ(ps[1].st.filtered + cs.s.agg->stats[1].st.aggregated +
	    cs.s.agg->stats[1].st.nested + cs.s.agg->stats[1].st.overflow, hits);
	n = readcpu(1, buf, 64);
	ATF_REQUIRE_EQ(n, 3);
	dd = 'd' | ('d' << 8);
	for (i = 0; i < 3; i++) {
		ATF_REQUIRE((e = find(buf, n, su.entry_size, 9, i, dd)) != NULL);
		/* key i: i, i+3, ..., values (i + 3j) % 5, 3 left out */
		ATF_CHECK_EQ(e->count, 8);
		ATF_CHECK_EQ(((const uint64_t *)(e + 1))[1 + 3], 0);
		ATF_CHECK_EQ(e->min, 0);
		ATF_CHECK_EQ(e->max, 4);
	}
	/* Nothing on CPU 0. */
	ATF_CHECK_EQ(readcpu(0, buf, 64), 0);
	cs.s.pstats = NULL;
	kinst_ctl_agg_fini(&cs);
}

/* ---- KINST_AGGF_RECORD ---- */

/* A sample record: the fixed hit record and its AGG section. */
struct sample {
	struct kinst_hit_record h;
	struct kinst_rec_sec sec;
	struct kinst_rec_agg agg;
};

/* The session's two rings, 1 KiB each: four samples fit in one. */
static struct kinst_ring rings[2];
static uint8_t rb[2][1024];

/* Empty rings for cs's session (set up by setup() before). */
static void
record_rings(void)
{
	uint32_t i;

	for (i = 0; i < 2; i++)
		ATF_REQUIRE_EQ(kinst_ring_init(&rings[i], rb[i], sizeof(rb[i])), 0);
	cs.s.rings = rings;
}

/*
 * KINST_AGGF_RECORD: every hit the tables take, or count as overflow, also
 * makes a hit record in its CPU's ring with an AGG section (its key, its
 * value, KINST_SECF_OVERFLOW when the tables had no slot); a filtered or a
 * nested hit makes none; a full ring drops the record and counts it, the
 * tables having the hit all the same: delivered + dropped == aggregated +
 * overflow.
 */
ATF_TC_WITHOUT_HEAD(record_samples);
ATF_TC_BODY(record_samples, tc)
{
	/* key rdi, value rdx; if rdx != 7 */
	static const struct kinst_pinsn code[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_KEY, .arg = 0 },
		{ .op = KINST_OP_REG, .arg = KINST_RDX },
		{ .op = KINST_OP_VALUE },
		{ .op = KINST_OP_REG, .arg = KINST_RDX },
		{ .op = KINST_OP_IMM, .imm = 7 },
		{ .op = KINST_OP_NE },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_engine eng;
	static struct kinst_prog prog;
	static uint8_t out[8192];
	static const char comm[KINST_COMM_LEN] = "dd";
	struct kinst_prog_cpu ps[2];
	struct kinst_agg_cpu_stats *st;
	struct kinst_agg_setup su;
	struct kinst_probe p;
	struct kinst_regs r;
	static const uint32_t seq[] = { 0, 1, 2, 3, 5, 6, 7, 8, 9 };
	const struct sample *sm;
	uint32_t bad, i, hits, got, ovf, pos;
	size_t n;

	ATF_REQUIRE_EQ(kinst_prog_verify(code, 8, &prog, &bad), KINST_PV_OK);
	/* Two slots: the third key overflows. */
	ATF_REQUIRE_EQ(setup(2, KINST_AGG_COUNT, KINST_AGGF_PROBE |
	    KINST_AGGF_RECORD, 2, 0, 0, 0, &su), KINST_E_OK);
	record_rings();
	memset(ps, 0, sizeof(ps));
	cs.s.pstats = ps;
	memset(&p, 0, sizeof(p));
	p.id = 5;
	p.addr = 0xffffffff81000010ull;
	p.prog = &prog;
	p.flags = KINST_PF_AGG;
	memset(&r, 0, sizeof(r));
	r.rip = p.addr;
	hits = 0;
	/* Ten hits: keys 0, 1, 2 (2 overflows), value 100 + i, 7 filtered. */
	for (i = 0; i < 10; i++) {
		r.gpr[KINST_RDI] = i % 3;
		r.gpr[KINST_RDX] = i == 4 ? 7 : 100 + i;
		kinst_agg_hit(&eng, &p, &cs.s, 1, 10, 11 + i, comm, &r, NULL,
		    NULL);
		hits++;
	}
	/* A nested hit: counted, not recorded. */
	eng.cpu[1].depth = 1;
	kinst_agg_hit(&eng, &p, &cs.s, 1, 10, 11, comm, &r, NULL, NULL);
	hits++;
	eng.cpu[1].depth = 0;
	st = &cs.s.agg->stats[1].st;
	ATF_CHECK_EQ(ps[1].st.filtered, 1);
	ATF_CHECK_EQ(st->nested, 1);
	ATF_CHECK_EQ(st->aggregated, 6);	/* i = 0 1 3 6 7 9 */
	ATF_CHECK_EQ(st->overflow, 3);		/* i = 2 5 8 */
	ATF_CHECK_EQ(ps[1].st.filtered + st->aggregated + st->overflow +
	    st->nested, hits);
	/* CPU 0's ring has nothing; CPU 1's one record per sample. */
	ATF_CHECK_EQ(kinst_ring_get(&rings[0], out, sizeof(out)), 0);
	n = kinst_ring_get(&rings[1], out, sizeof(out));
	got = ovf = 0;
	for (pos = 0; pos + sizeof(*sm) <= n; pos += sm->h.hdr.size) {
		sm = (const struct sample *)(out + pos);
		ATF_REQUIRE_EQ(sm->h.hdr.size, sizeof(*sm));
		ATF_CHECK_EQ(sm->h.hdr.type, KINST_REC_HIT);
		ATF_CHECK_EQ(sm->h.cpu, 1);
		ATF_CHECK_EQ(sm->h.probe_id, 5);
		ATF_CHECK_EQ(sm->h.addr, p.addr);
		ATF_CHECK_EQ(sm->h.pid, 10);
		ATF_CHECK_STREQ(sm->h.comm, "dd");
		ATF_CHECK_EQ(sm->sec.type, KINST_SEC_AGG);
		ATF_CHECK_EQ(sm->sec.len, sizeof(sm->agg));
		/* The hit's own key and value (tid 11 + i says which i). */
		i = (uint32_t)(sm->h.tid - 11);
		ATF_CHECK(i < 10 && i != 4);
		ATF_CHECK_EQ(sm->agg.key[0], i % 3);
		ATF_CHECK_EQ(sm->agg.key[1], 0);
		ATF_CHECK_EQ(sm->agg.value, 100 + i);
		ATF_CHECK_EQ(sm->h.regs.gpr[KINST_RDX], 100 + i);
		ATF_CHECK_EQ(sm->sec.flags, i % 3 == 2 ? KINST_SECF_OVERFLOW : 0);
		ovf += (sm->sec.flags & KINST_SECF_OVERFLOW) != 0;
		/* In the order of the hits: the first ones fit. */
		ATF_REQUIRE(got < 9);
		ATF_CHECK_EQ(i, seq[got]);
		got++;
	}
	ATF_CHECK_EQ(pos, n);
	ATF_CHECK_EQ(ovf, got > 2 ? 1 : 0);	/* i = 2 */
	ATF_CHECK_EQ(got + kinst_ring_dropped(&rings[1]),
	    st->aggregated + st->overflow);
	/* The ring holds as many as fit (fewer than 9), drops the rest. */
	ATF_CHECK_EQ(got, sizeof(rb[1]) / sizeof(*sm));
	ATF_CHECK(got < 9);
	/* Without the flag: no record. */
	ATF_REQUIRE_EQ(setup(2, KINST_AGG_COUNT, KINST_AGGF_PROBE, 2, 0, 0, 0,
	    &su), KINST_E_OK);
	cs.s.rings = rings;
	cs.s.pstats = ps;
	kinst_agg_hit(&eng, &p, &cs.s, 1, 10, 11, comm, &r, NULL, NULL);
	ATF_CHECK_EQ(cs.s.agg->stats[1].st.aggregated, 1);
	ATF_CHECK_EQ(kinst_ring_get(&rings[1], out, sizeof(out)), 0);
	cs.s.pstats = NULL;
	cs.s.rings = NULL;
	kinst_ctl_agg_fini(&cs);
}

/*
 * A sample record's timestamp: the clock reading its program's per-thread
 * state op used (a latency ends where it was measured, and starts at its
 * timestamp minus its value: the start's own reading), else one taken
 * after the program.
 */
ATF_TC_WITHOUT_HEAD(record_clock);
ATF_TC_BODY(record_clock, tc)
{
	/* The start: open activation 5 at frame rsp; filtered (no sample). */
	static const struct kinst_pinsn start[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_TS_PUSH, .arg = 0, .imm = 5 },
		{ .op = KINST_OP_IMM, .imm = 0 },
		{ .op = KINST_OP_RET },
	};
	/* The end: the time since, closing it. */
	static const struct kinst_pinsn end[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSP },
		{ .op = KINST_OP_TS_GET, .arg = KINST_TS_ELAPSED | KINST_TSF_CLOSE,
		  .imm = 5 },
		{ .op = KINST_OP_VALUE },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_ts_slot slots[4];
	static struct kinst_ts_cpu tst[2];
	static struct kinst_tstate ts = {
		.nslots = 4, .ncpus = 2, .idle_ns = 1000000000, .epoch = 1,
		.slots = slots, .stats = tst,
	};
	static struct kinst_engine eng;
	static struct kinst_prog ps_, pe;
	static const char comm[KINST_COMM_LEN] = "lat";
	struct sample out[2];
	struct kinst_prog_cpu pst[2];
	struct kinst_agg_setup su;
	struct kinst_probe p, q;
	struct kinst_regs r;
	uint32_t bad;

	ATF_REQUIRE_EQ(kinst_prog_verify(start, 4, &ps_, &bad), KINST_PV_OK);
	ATF_REQUIRE_EQ(kinst_prog_verify(end, 5, &pe, &bad), KINST_PV_OK);
	ATF_REQUIRE_EQ(setup(2, KINST_AGG_LOG2, KINST_AGGF_RECORD, 8, 0, 0, 0,
	    &su), KINST_E_OK);
	record_rings();
	memset(pst, 0, sizeof(pst));
	cs.s.pstats = pst;
	memset(&p, 0, sizeof(p));
	p.id = 1;
	p.prog = &ps_;
	p.flags = KINST_PF_AGG;
	q = p;
	q.id = 2;
	q.prog = &pe;
	memset(&r, 0, sizeof(r));
	r.gpr[KINST_RSP] = 0xffffc90000123f00ull;
	nclock_reads = 0;
	kinst_agg_hit(&eng, &p, &cs.s, 0, 10, 11, comm, &r, NULL, &ts);
	kinst_agg_hit(&eng, &q, &cs.s, 0, 10, 11, comm, &r, NULL, &ts);
	ATF_CHECK_EQ(pst[0].st.filtered, 1);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.aggregated, 1);
	ATF_REQUIRE_EQ(kinst_ring_get(&rings[0], out, sizeof(out)),
	    sizeof(out[0]));
	ATF_CHECK_EQ(out[0].h.probe_id, 2);
	ATF_REQUIRE(nclock_reads >= 2);
	/* The end's reading; minus the value, the start's. */
	ATF_CHECK_EQ(out[0].h.timestamp_ns, clock_reads[1]);
	ATF_CHECK_EQ(out[0].h.timestamp_ns - out[0].agg.value, clock_reads[0]);
	ATF_CHECK(out[0].agg.value > 0);
	/* A program that reads no clock: a reading taken after it. */
	q.prog = NULL;
	nclock_reads = 0;
	kinst_agg_hit(&eng, &q, &cs.s, 0, 10, 11, comm, &r, NULL, &ts);
	ATF_REQUIRE_EQ(kinst_ring_get(&rings[0], out, sizeof(out)),
	    sizeof(out[0]));
	ATF_CHECK_EQ(nclock_reads, 1);
	ATF_CHECK_EQ(out[0].h.timestamp_ns, clock_reads[0]);
	ATF_CHECK_EQ(nlocal_reads, 0);
	/*
	 * A table with KINST_TS_LOCAL_CLOCK: both programs read the per-CPU
	 * clock, never the global one, and the sample's time and value are
	 * of that clock.
	 */
	ts.flags = KINST_TS_LOCAL_CLOCK;
	q.prog = &pe;
	nclock_reads = nlocal_reads = 0;
	kinst_agg_hit(&eng, &p, &cs.s, 0, 10, 11, comm, &r, NULL, &ts);
	kinst_agg_hit(&eng, &q, &cs.s, 0, 10, 11, comm, &r, NULL, &ts);
	ATF_REQUIRE_EQ(kinst_ring_get(&rings[0], out, sizeof(out)),
	    sizeof(out[0]));
	ATF_CHECK_EQ(nclock_reads, 0);
	ATF_REQUIRE_EQ(nlocal_reads, 2);
	ATF_CHECK_EQ(out[0].h.timestamp_ns, local_reads[1]);
	ATF_CHECK_EQ(out[0].agg.value, 3000);
	ts.flags = 0;
	cs.s.pstats = NULL;
	cs.s.rings = NULL;
	kinst_ctl_agg_fini(&cs);
}

/* ---- KINST_AGGF_STACK ---- */

static int
setup_stacks(uint32_t ncpus, uint32_t nslots, uint32_t nstacks,
    struct kinst_agg_setup *su)
{
	if (cs.s.agg != NULL)
		kinst_ctl_agg_fini(&cs);
	memset(&cs, 0, sizeof(cs));
	cs.s.ncpus = ncpus;
	memset(su, 0, sizeof(*su));
	su->kind = KINST_AGG_COUNT;
	su->flags = KINST_AGGF_STACK;
	su->nslots = nslots;
	su->nstacks = nstacks;
	return (kinst_ctl_agg_setup(NULL, &cs, su));
}

/* One hit of probe p (at rip) on cpu whose callers are c[0 .. n-1]. */
static void
stack_hit(struct kinst_engine *eng, struct kinst_probe *p, uint32_t cpu,
    const uint64_t *c, uint32_t n)
{
	struct kinst_regs r;

	memset(&r, 0, sizeof(r));
	r.rip = p->addr;
	memcpy(stub_callers, c, n * sizeof(c[0]));
	stub_ncallers = n;
	kinst_agg_hit(eng, p, &cs.s, cpu, 10, 11, "dd", &r, (void *)0x5a5a,
	    NULL);
}

static struct kinst_agg_stack stk[64];

/* Read cpu's stacks through the ioctl's common code into stk. */
static uint32_t
readstacks(uint32_t cpu)
{
	struct kinst_agg_read rd;

	memset(&rd, 0, sizeof(rd));
	rd.cpu = cpu;
	rd.cap = 64;
	ATF_REQUIRE_EQ(kinst_ctl_agg_stacks(NULL, &cs, &rd, stk, 64),
	    KINST_E_OK);
	return (rd.count);
}

/*
 * The count of the stack rip, c[0 .. n-1] on cpu: entries and stacks read
 * as kinstctl does (entries first), joined by the hash; every entry's
 * hash must name exactly one stack.
 */
static uint64_t
stack_count(uint32_t cpu, uint64_t rip, const uint64_t *c, uint32_t n)
{
	static uint8_t buf[64 * 1024];
	const struct kinst_agg_entry *e;
	uint32_t i, j, k, ne, ns, found;
	uint64_t total;

	ne = readcpu(cpu, buf, 64);
	ns = readstacks(cpu);
	total = 0;
	for (i = 0; i < ne; i++) {
		e = (const struct kinst_agg_entry *)(buf +
		    i * sizeof(struct kinst_agg_entry));
		found = 0;
		for (j = 0; j < ns; j++) {
			if (stk[j].hash != e->key[1])
				continue;
			found++;
			if (stk[j].nframes != n + 1 || stk[j].frames[0] != rip)
				continue;
			for (k = 0; k < n; k++)
				if (stk[j].frames[k + 1] != c[k])
					break;
			if (k == n)
				total += e->count;
		}
		ATF_CHECK_EQ_MSG(found, 1, "entry %u names %u stacks", i, found);
	}
	return (total);
}

ATF_TC_WITHOUT_HEAD(stack_counts);
ATF_TC_BODY(stack_counts, tc)
{
	static struct kinst_engine eng;
	/* Differing only in the last frame, and a prefix of both. */
	static const uint64_t s1[] = { 0xa1, 0xa2, 0xa3, 0xa4 };
	static const uint64_t s2[] = { 0xa1, 0xa2, 0xa3, 0xa5 };
	static const uint64_t s3[] = { 0xa1, 0xa2, 0xa3 };
	struct kinst_agg_setup su;
	struct kinst_probe p;
	uint32_t i, k;

	force_hash = false;
	ATF_REQUIRE_EQ(setup_stacks(2, 64, 10, &su), KINST_E_OK);
	ATF_CHECK_EQ(su.nstacks, 16);	/* a power of two */
	ATF_CHECK(kinst_agg_stack_hash(s1, 4) != kinst_agg_stack_hash(s2, 4));
	ATF_CHECK(kinst_agg_stack_hash(s1, 4) != kinst_agg_stack_hash(s1, 3));
	memset(&p, 0, sizeof(p));
	p.id = 3;
	p.addr = 0xffffffff81000010ull;
	p.offset = 0x10;
	p.flags = KINST_PF_AGG;
	for (i = 0; i < 5; i++)
		stack_hit(&eng, &p, 1, s1, 4);
	for (i = 0; i < 3; i++)
		stack_hit(&eng, &p, 1, s2, 4);
	for (i = 0; i < 2; i++)
		stack_hit(&eng, &p, 1, s3, 3);
	for (i = 0; i < 4; i++)
		stack_hit(&eng, &p, 0, s1, 4);
	/* The engine passed the trap context and the probe's offset on. */
	ATF_CHECK_EQ(stub_osctx, (void *)0x5a5a);
	ATF_CHECK_EQ(stub_offset, 0x10);
	ATF_CHECK_EQ(stack_count(1, p.addr, s1, 4), 5);
	ATF_CHECK_EQ(stack_count(1, p.addr, s2, 4), 3);
	ATF_CHECK_EQ(stack_count(1, p.addr, s3, 3), 2);
	ATF_CHECK_EQ(stack_count(0, p.addr, s1, 4), 4);
	ATF_CHECK_EQ(stack_count(0, p.addr, s2, 4), 0);
	ATF_CHECK_EQ(readstacks(1), 3);
	ATF_CHECK_EQ(readstacks(0), 1);
	/* Frames past nframes are zero in the copy (no stale memory). */
	ATF_CHECK_EQ(stk[0].nframes, 5);
	ATF_CHECK_EQ(stk[0].flags, 0);
	for (k = 5; k < KINST_STACK_MAX; k++)
		ATF_CHECK_EQ(stk[0].frames[k], 0);
	ATF_CHECK_EQ(cs.s.agg->stats[1].st.aggregated, 10);
	ATF_CHECK_EQ(cs.s.agg->stats[1].st.overflow, 0);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.aggregated, 4);
	/* A stack deeper than KINST_STACK_MAX: clipped, marked truncated. */
	for (i = 0; i < 80; i++)
		stub_callers[i] = 0xb000 + i;
	ATF_REQUIRE_EQ(setup_stacks(1, 8, 4, &su), KINST_E_OK);
	stack_hit(&eng, &p, 0, stub_callers, 80);
	ATF_REQUIRE_EQ(readstacks(0), 1);
	ATF_CHECK_EQ(stk[0].nframes, KINST_STACK_MAX);
	ATF_CHECK_EQ(stk[0].flags, KINST_SECF_TRUNCATED);
	ATF_CHECK_EQ(stk[0].frames[KINST_STACK_MAX - 1],
	    0xb000 + KINST_STACK_MAX - 2);
	kinst_ctl_agg_fini(&cs);
}

ATF_TC_WITHOUT_HEAD(stack_collision_and_full);
ATF_TC_BODY(stack_collision_and_full, tc)
{
	static struct kinst_engine eng;
	static const uint64_t s1[] = { 0xa1, 0xa2, 0xa3, 0xa4 };
	static const uint64_t s2[] = { 0xa1, 0xa2, 0xa3, 0xa5 };
	struct kinst_agg_setup su;
	struct kinst_probe p;
	uint64_t c;
	uint32_t i;

	memset(&p, 0, sizeof(p));
	p.addr = 0xffffffff81000020ull;
	p.flags = KINST_PF_AGG;
	/* Every stack hashes alike: the first one counts, the other is
	   overflow, never merged into it. */
	force_hash = true;
	ATF_REQUIRE_EQ(setup_stacks(2, 64, 16, &su), KINST_E_OK);
	for (i = 0; i < 3; i++)
		stack_hit(&eng, &p, 0, s1, 4);
	for (i = 0; i < 2; i++)
		stack_hit(&eng, &p, 0, s2, 4);
	stack_hit(&eng, &p, 0, s1, 4);
	force_hash = false;
	ATF_CHECK_EQ(stack_count(0, p.addr, s1, 4), 4);
	ATF_CHECK_EQ(stack_count(0, p.addr, s2, 4), 0);
	ATF_CHECK_EQ(readstacks(0), 1);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.aggregated, 4);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.overflow, 2);
	/* 4 stack slots, 6 stacks: 4 kept, the other two overflow; hits ==
	   aggregated + overflow. */
	ATF_REQUIRE_EQ(setup_stacks(1, 64, 4, &su), KINST_E_OK);
	ATF_CHECK_EQ(su.nstacks, 4);
	for (i = 0; i < 6; i++) {
		c = 0xc000 + i;
		stack_hit(&eng, &p, 0, &c, 1);
		stack_hit(&eng, &p, 0, &c, 1);
	}
	ATF_CHECK_EQ(readstacks(0), 4);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.aggregated, 8);
	ATF_CHECK_EQ(cs.s.agg->stats[0].st.overflow, 4);
	/* A full stack table and a free entry table: a known stack still
	   counts. */
	c = 0xc000;
	stack_hit(&eng, &p, 0, &c, 1);
	ATF_CHECK_EQ(stack_count(0, p.addr, &c, 1), 3);
	kinst_ctl_agg_fini(&cs);
}

ATF_TC_WITHOUT_HEAD(stack_clear);
ATF_TC_BODY(stack_clear, tc)
{
	static struct kinst_engine eng;
	static const uint64_t s1[] = { 0xa1, 0xa2 };
	static const uint64_t s2[] = { 0xa1, 0xa3 };
	struct kinst_agg_clear cl = { 0, 0 };
	struct kinst_agg_setup su;
	struct kinst_probe p;

	force_hash = false;
	memset(&p, 0, sizeof(p));
	p.addr = 0xffffffff81000030ull;
	p.flags = KINST_PF_AGG;
	ATF_REQUIRE_EQ(setup_stacks(2, 64, 4, &su), KINST_E_OK);
	stack_hit(&eng, &p, 0, s1, 2);
	stack_hit(&eng, &p, 1, s2, 2);
	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	ATF_CHECK_EQ(readstacks(0), 0);
	ATF_CHECK_EQ(readstacks(1), 0);
	stack_hit(&eng, &p, 0, s2, 2);
	ATF_CHECK_EQ(stack_count(0, p.addr, s2, 2), 1);
	ATF_CHECK_EQ(stack_count(0, p.addr, s1, 2), 0);
	/* Back on the first set: its stacks went with its counts. */
	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	ATF_CHECK_EQ(readstacks(0), 0);
	ATF_CHECK_EQ(readstacks(1), 0);
	stack_hit(&eng, &p, 0, s1, 2);
	ATF_CHECK_EQ(readstacks(0), 1);
	ATF_CHECK_EQ(stack_count(0, p.addr, s1, 2), 1);
	/* Twice more: the set with s2 is empty again. */
	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	ATF_REQUIRE_EQ(kinst_ctl_agg_clear(NULL, &cs, &cl), KINST_E_OK);
	ATF_CHECK_EQ(readstacks(0), 0);
	kinst_ctl_agg_fini(&cs);
}

ATF_TC_WITHOUT_HEAD(stack_validation);
ATF_TC_BODY(stack_validation, tc)
{
	struct kinst_agg_setup su;
	struct kinst_agg_read rd;
	uint32_t n;

	/* Setup: nstacks with the flag only, and within bounds. */
	ATF_CHECK_EQ(setup_stacks(2, 8, 0, &su), KINST_E_INVAL);
	ATF_CHECK_EQ(setup_stacks(2, 8, KINST_AGG_MAX_STACKS + 1, &su),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(setup_stacks(2, 8, 0xffffffffu, &su), KINST_E_INVAL);
	ATF_CHECK_EQ(setup(2, KINST_AGG_COUNT, 8, 8, 0, 0, 0, &su),
	    KINST_E_INVAL);	/* unknown flag */
	/* Over the memory budget through the stacks alone. */
	ATF_CHECK_EQ(setup_stacks(64, 1, KINST_AGG_MAX_STACKS, &su),
	    KINST_E_TOOBIG);
	ATF_CHECK_EQ(setup_stacks(1, 1, KINST_AGG_MAX_STACKS, &su),
	    KINST_E_OK);
	/* The stacks ioctl: nothing set up, no stacks, bad cpu, flags. */
	memset(&cs, 0, sizeof(cs));
	cs.s.ncpus = 2;
	memset(&rd, 0, sizeof(rd));
	ATF_CHECK_EQ(kinst_ctl_agg_stacks(NULL, &cs, &rd, stk, 64),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(kinst_ctl_agg_stack_geom(&cs, &n), KINST_E_INVAL);
	ATF_REQUIRE_EQ(setup(2, KINST_AGG_COUNT, 0, 8, 0, 0, 0, &su),
	    KINST_E_OK);
	ATF_CHECK_EQ(su.nstacks, 0);
	ATF_CHECK_EQ(kinst_ctl_agg_stacks(NULL, &cs, &rd, stk, 64),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(kinst_ctl_agg_stack_geom(&cs, &n), KINST_E_INVAL);
	ATF_REQUIRE_EQ(setup_stacks(2, 8, 8, &su), KINST_E_OK);
	ATF_CHECK_EQ(kinst_ctl_agg_stack_geom(&cs, &n), KINST_E_OK);
	ATF_CHECK_EQ(n, 8);
	rd.cpu = 2;
	ATF_CHECK_EQ(kinst_ctl_agg_stacks(NULL, &cs, &rd, stk, 64),
	    KINST_E_INVAL);
	rd.cpu = 1;
	rd.flags = 1;
	ATF_CHECK_EQ(kinst_ctl_agg_stacks(NULL, &cs, &rd, stk, 64),
	    KINST_E_INVAL);
	rd.flags = 0;
	ATF_CHECK_EQ(kinst_ctl_agg_stacks(NULL, &cs, &rd, stk, 64),
	    KINST_E_OK);
	ATF_CHECK_EQ(rd.count, 0);
	kinst_ctl_agg_fini(&cs);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, stack_counts);
	ATF_TP_ADD_TC(tp, stack_collision_and_full);
	ATF_TP_ADD_TC(tp, stack_clear);
	ATF_TP_ADD_TC(tp, stack_validation);
	ATF_TP_ADD_TC(tp, engine_step);
	ATF_TP_ADD_TC(tp, record_samples);
	ATF_TP_ADD_TC(tp, record_clock);
	ATF_TP_ADD_TC(tp, counts_and_keys);
	ATF_TP_ADD_TC(tp, log2_edges);
	ATF_TP_ADD_TC(tp, linear_edges);
	ATF_TP_ADD_TC(tp, overflow);
	ATF_TP_ADD_TC(tp, clear);
	ATF_TP_ADD_TC(tp, setup_validation);
	return (atf_no_error());
}
