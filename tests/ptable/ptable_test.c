/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the probe table (common/kinst_probe.c), one thread.
 */
#include <atf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptable_util.h"

static struct kinst_ptable T;
static struct kinst_probe P[KINST_MAX_PROBES + 64];

static struct kinst_probe *
mkprobe(uint32_t i, uint64_t addr)
{

	memset(&P[i], 0, sizeof(P[i]));
	P[i].addr = addr;
	P[i].id = i;
	return (&P[i]);
}

#define	CHECK_TABLE() do {						\
	const char *why_ = pt_check(&T);				\
	ATF_REQUIRE_MSG(why_ == NULL, "%s", why_);			\
} while (0)

static bool
all_empty(void)
{
	uint32_t i;

	for (i = 0; i < KINST_PTABLE_SLOTS; i++)
		if (T.slots[i] != NULL)
			return (false);
	return (T.count == 0 && T.tombstones == 0);
}

ATF_TC_WITHOUT_HEAD(basic);
ATF_TC_BODY(basic, tc)
{
	struct kinst_probe *a, *b, *c;

	kinst_ptable_init(&T);
	ATF_CHECK(all_empty());
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE) == NULL);
	a = mkprobe(0, PT_BASE);
	b = mkprobe(1, PT_BASE + 1);
	c = mkprobe(2, 0x401000);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, a), KINST_PT_OK);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, b), KINST_PT_OK);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, c), KINST_PT_OK);
	ATF_CHECK_EQ(T.count, 3);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE) == a);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE + 1) == b);
	ATF_CHECK(kinst_ptable_lookup(&T, 0x401000) == c);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE + 2) == NULL);
	ATF_CHECK(kinst_ptable_lookup(&T, 0) == NULL);
	CHECK_TABLE();
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, b), KINST_PT_OK);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE + 1) == NULL);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE) == a);
	ATF_CHECK(kinst_ptable_lookup(&T, 0x401000) == c);
	ATF_CHECK_EQ(T.count, 2);
	CHECK_TABLE();
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, a), KINST_PT_OK);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, c), KINST_PT_OK);
	ATF_CHECK(all_empty());
	/* A removed probe can come back. */
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, b), KINST_PT_OK);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE + 1) == b);
}

ATF_TC_WITHOUT_HEAD(duplicates);
ATF_TC_BODY(duplicates, tc)
{
	uint64_t cur = PT_BASE, k[2];
	uint32_t home = 77;
	struct kinst_probe *a, *b;

	kinst_ptable_init(&T);
	a = mkprobe(0, PT_BASE + 0x10);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, a), KINST_PT_OK);
	ATF_CHECK_EQ(kinst_ptable_insert(&T, mkprobe(1, PT_BASE + 0x10)),
	    KINST_PT_EXISTS);
	ATF_CHECK_EQ(kinst_ptable_insert(&T, a), KINST_PT_EXISTS);
	ATF_CHECK_EQ(T.count, 1);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE + 0x10) == a);

	/*
	 * A duplicate hiding behind a tombstone: a and b collide, b sits
	 * after a; remove a; inserting b's address again must still say
	 * EXISTS, not take a's tombstone.
	 */
	kinst_ptable_init(&T);
	pt_colliding(&cur, &home, 1, k, 2);
	a = mkprobe(0, k[0]);
	b = mkprobe(1, k[1]);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, a), KINST_PT_OK);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, b), KINST_PT_OK);
	ATF_CHECK(T.slots[home] == a && T.slots[home + 1] == b);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, a), KINST_PT_OK);
	ATF_CHECK(T.slots[home] == KINST_PTABLE_TOMB);
	ATF_CHECK_EQ(kinst_ptable_insert(&T, mkprobe(2, k[1])),
	    KINST_PT_EXISTS);
	ATF_CHECK(kinst_ptable_lookup(&T, k[1]) == b);
	ATF_CHECK(kinst_ptable_lookup(&T, k[0]) == NULL);
	CHECK_TABLE();
	/* The tombstone is reused by a new address. */
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, mkprobe(3, k[0])), KINST_PT_OK);
	ATF_CHECK(T.slots[home] == &P[3]);
	ATF_CHECK_EQ(T.tombstones, 0);
	CHECK_TABLE();
}

ATF_TC_WITHOUT_HEAD(full);
ATF_TC_BODY(full, tc)
{
	uint32_t i;

	kinst_ptable_init(&T);
	/* A function's worth of consecutive instruction addresses, and more. */
	for (i = 0; i < KINST_MAX_PROBES; i++)
		ATF_REQUIRE_EQ_MSG(kinst_ptable_insert(&T,
		    mkprobe(i, PT_BASE + 3 * i)), KINST_PT_OK, "probe %u", i);
	ATF_CHECK_EQ(T.count, KINST_MAX_PROBES);
	ATF_CHECK_EQ(kinst_ptable_insert(&T, mkprobe(KINST_MAX_PROBES,
	    PT_BASE - 8)), KINST_PT_FULL);
	/* A duplicate is still reported as such. */
	ATF_CHECK_EQ(kinst_ptable_insert(&T, mkprobe(KINST_MAX_PROBES + 1,
	    PT_BASE + 3)), KINST_PT_EXISTS);
	CHECK_TABLE();
	for (i = 0; i < KINST_MAX_PROBES; i++)
		ATF_REQUIRE(kinst_ptable_lookup(&T, PT_BASE + 3 * i) == &P[i]);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, &P[100]), KINST_PT_OK);
	ATF_CHECK_EQ(kinst_ptable_insert(&T, mkprobe(KINST_MAX_PROBES,
	    PT_BASE - 8)), KINST_PT_OK);
	ATF_CHECK_EQ(kinst_ptable_insert(&T, mkprobe(KINST_MAX_PROBES + 2,
	    PT_BASE - 16)), KINST_PT_FULL);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE - 8) == &P[KINST_MAX_PROBES]);
	CHECK_TABLE();
	for (i = 0; i < KINST_MAX_PROBES; i++)
		if (i != 100)
			ATF_REQUIRE_EQ(kinst_ptable_remove(&T, &P[i]),
			    KINST_PT_OK);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, &P[KINST_MAX_PROBES]),
	    KINST_PT_OK);
	ATF_CHECK(all_empty());
}

ATF_TC_WITHOUT_HEAD(noent);
ATF_TC_BODY(noent, tc)
{
	struct kinst_probe *a, *twin;

	kinst_ptable_init(&T);
	a = mkprobe(0, PT_BASE + 0x100);
	ATF_CHECK_EQ(kinst_ptable_remove(&T, a), KINST_PT_NOENT);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, a), KINST_PT_OK);
	/* Same address, different probe: not in the table. */
	twin = mkprobe(1, PT_BASE + 0x100);
	ATF_CHECK_EQ(kinst_ptable_remove(&T, twin), KINST_PT_NOENT);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE + 0x100) == a);
	ATF_CHECK_EQ(kinst_ptable_remove(&T, mkprobe(2, PT_BASE + 0x101)),
	    KINST_PT_NOENT);
	ATF_CHECK_EQ(T.count, 1);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, a), KINST_PT_OK);
	ATF_CHECK_EQ(kinst_ptable_remove(&T, a), KINST_PT_NOENT);
	ATF_CHECK(all_empty());
}

/*
 * Many addresses in the same bucket, placed where the run wraps from the
 * last slot to the first: every one findable after every step, removals
 * leave tombstones that inserts reuse, and removing all empties the table.
 */
ATF_TC_WITHOUT_HEAD(collisions);
ATF_TC_BODY(collisions, tc)
{
	enum { N = 400, M = 200 };
	static uint64_t k[N + M];
	uint32_t home = KINST_PTABLE_SLOTS - 10, i, nonnull, nonnull2;
	uint64_t cur = PT_BASE;

	pt_colliding(&cur, &home, 1, k, N + M);
	kinst_ptable_init(&T);
	for (i = 0; i < N; i++) {
		ATF_REQUIRE_EQ(kinst_ptable_insert(&T, mkprobe(i, k[i])),
		    KINST_PT_OK);
		ATF_REQUIRE(kinst_ptable_lookup(&T, k[i]) == &P[i]);
	}
	/* They sit in one run that wraps around the end. */
	ATF_CHECK(T.slots[home] == &P[0]);
	ATF_CHECK(T.slots[(home + N - 1) & PT_MASK] == &P[N - 1]);
	ATF_CHECK(T.slots[0] != NULL);
	CHECK_TABLE();
	/* Remove every other one, first half backwards. */
	for (i = 0; i < N; i += 2) {
		uint32_t j = i < N / 2 ? N / 2 - 2 - i : i;

		ATF_REQUIRE_EQ(kinst_ptable_remove(&T, &P[j]), KINST_PT_OK);
		CHECK_TABLE();
	}
	for (i = 0; i < N; i++)
		ATF_REQUIRE(kinst_ptable_lookup(&T, k[i]) ==
		    (i % 2 ? &P[i] : NULL));
	ATF_CHECK_EQ(T.count, N / 2);
	ATF_CHECK(T.tombstones > 0);
	printf("after removing %u of %u colliding probes: %u tombstones\n",
	    N / 2, N, T.tombstones);
	nonnull = T.count + T.tombstones;
	/* New colliding probes reuse the tombstones: the run does not grow. */
	for (i = 0; i < M; i++) {
		ATF_REQUIRE_EQ(kinst_ptable_insert(&T, mkprobe(N + i, k[N + i])),
		    KINST_PT_OK);
		CHECK_TABLE();
	}
	nonnull2 = T.count + T.tombstones;
	ATF_CHECK_MSG(nonnull2 <= nonnull, "run grew from %u to %u slots",
	    nonnull, nonnull2);
	for (i = 0; i < N + M; i++)
		ATF_REQUIRE(kinst_ptable_lookup(&T, k[i]) ==
		    (i < N && i % 2 == 0 ? NULL : &P[i]));
	/* Remove all, in a scrambled order. */
	for (i = 0; i < N + M; i++) {
		uint32_t j = (i * 7919) % (N + M);

		if (j < N && j % 2 == 0)
			continue;
		ATF_REQUIRE_EQ(kinst_ptable_remove(&T, &P[j]), KINST_PT_OK);
		CHECK_TABLE();
	}
	ATF_CHECK(all_empty());
}

static int
cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* Random inserts and removals against a model, colliding and spread keys. */
ATF_TC_WITHOUT_HEAD(random_model);
ATF_TC_BODY(random_model, tc)
{
	enum { NK = 6000, OPS = 300000 };
	static uint64_t keys[NK];
	static struct kinst_probe *live[NK];
	static const uint32_t homes[] = { 5, 6, 7, 9, 12, 16380, 16383, 0 };
	uint64_t cur = PT_BASE + 0x100000, r = 1, ninsert = 0, nremove = 0;
	uint32_t i, op, nlive = 0, maxtomb = 0;
	struct kinst_probe *p;
	int rc;

	/* A third collide in a few buckets (some wrap), the rest spread. */
	pt_colliding(&cur, homes, KINST_NELEM(homes), keys, NK / 3);
	for (i = NK / 3; i < NK; i++)
		keys[i] = PT_BASE + 0x40000000 + (pt_mix(i) & 0x3ffffff0) +
		    i % 16;
	for (i = 0; i < NK; i++)
		ATF_REQUIRE(kinst_ptable_home(keys[i]) < KINST_PTABLE_SLOTS);
	{
		static uint64_t sorted[NK];

		memcpy(sorted, keys, sizeof(sorted));
		qsort(sorted, NK, sizeof(sorted[0]), cmp64);
		for (i = 1; i < NK; i++)
			ATF_REQUIRE(sorted[i] != sorted[i - 1]);
	}
	kinst_ptable_init(&T);
	memset(live, 0, sizeof(live));
	for (op = 0; op < OPS; op++) {
		r = pt_mix(r);
		i = (uint32_t)(r % NK);
		if (live[i] != NULL) {
			if ((r >> 32) % 16 == 0) {
				/* Not the probe in the table: NOENT. */
				ATF_REQUIRE_EQ(kinst_ptable_remove(&T,
				    mkprobe(NK + 1, keys[i])), KINST_PT_NOENT);
				ATF_REQUIRE_EQ(kinst_ptable_insert(&T,
				    mkprobe(NK + 1, keys[i])), KINST_PT_EXISTS);
			}
			ATF_REQUIRE_EQ(kinst_ptable_remove(&T, live[i]),
			    KINST_PT_OK);
			live[i] = NULL;
			nlive--;
			nremove++;
		} else {
			p = mkprobe(i, keys[i]);
			rc = kinst_ptable_insert(&T, p);
			if (nlive >= KINST_MAX_PROBES) {
				ATF_REQUIRE_EQ(rc, KINST_PT_FULL);
			} else {
				ATF_REQUIRE_EQ(rc, KINST_PT_OK);
				live[i] = p;
				nlive++;
				ninsert++;
			}
		}
		/* A few lookups, present and absent. */
		r = pt_mix(r);
		i = (uint32_t)(r % NK);
		ATF_REQUIRE(kinst_ptable_lookup(&T, keys[i]) == live[i]);
		ATF_REQUIRE(kinst_ptable_lookup(&T, keys[i] ^ (1ull << 62)) ==
		    NULL);
		if (T.tombstones > maxtomb)
			maxtomb = T.tombstones;
		if (op % 10000 == 0) {
			CHECK_TABLE();
			for (i = 0; i < NK; i++)
				ATF_REQUIRE(kinst_ptable_lookup(&T, keys[i]) ==
				    live[i]);
		}
	}
	CHECK_TABLE();
	ATF_CHECK_EQ(T.count, nlive);
	printf("%ju inserts, %ju removes, %u live at the end, at most %u "
	    "tombstones\n", (uintmax_t)ninsert, (uintmax_t)nremove, nlive,
	    maxtomb);
	for (i = 0; i < NK; i++)
		if (live[i] != NULL)
			ATF_REQUIRE_EQ(kinst_ptable_remove(&T, live[i]),
			    KINST_PT_OK);
	ATF_CHECK(all_empty());
}

/*
 * No empty slot at all (only reachable by corrupting the table, but a
 * lookup must still terminate): every scan is bounded.
 */
ATF_TC(no_empty_slot);
ATF_TC_HEAD(no_empty_slot, tc)
{

	atf_tc_set_md_var(tc, "timeout", "30");
}
ATF_TC_BODY(no_empty_slot, tc)
{
	struct kinst_probe *a;
	uint32_t i, h;

	kinst_ptable_init(&T);
	for (i = 0; i < KINST_PTABLE_SLOTS; i++)
		T.slots[i] = KINST_PTABLE_TOMB;
	T.tombstones = KINST_PTABLE_SLOTS;
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE) == NULL);
	a = mkprobe(0, PT_BASE);
	ATF_REQUIRE_EQ(kinst_ptable_insert(&T, a), KINST_PT_OK);
	h = kinst_ptable_home(PT_BASE);
	ATF_CHECK(T.slots[h] == a);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE) == a);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE + 1) == NULL);
	ATF_CHECK_EQ(kinst_ptable_insert(&T, mkprobe(1, PT_BASE)),
	    KINST_PT_EXISTS);
	ATF_CHECK_EQ(kinst_ptable_remove(&T, mkprobe(2, PT_BASE + 1)),
	    KINST_PT_NOENT);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&T, a), KINST_PT_OK);
	ATF_CHECK(kinst_ptable_lookup(&T, PT_BASE) == NULL);
	ATF_CHECK_EQ(T.count, 0);
}

/*
 * The hash spreads what the kernel asks for: consecutive instruction
 * addresses of big functions.  The hash is fixed, so these figures are
 * deterministic; the bound is generous (a bad hash gives hundreds).
 */
ATF_TC_WITHOUT_HEAD(hash_spread);
ATF_TC_BODY(hash_spread, tc)
{
	static const uint64_t bases[] = { PT_BASE, 0xffffffffc0a13000ull,
	    0x555555554000ull };
	static const uint32_t strides[] = { 1, 3, 4 };
	uint32_t b, s, i, maxd, d;
	uint64_t sumd;

	for (b = 0; b < KINST_NELEM(bases); b++)
		for (s = 0; s < KINST_NELEM(strides); s++) {
			kinst_ptable_init(&T);
			for (i = 0; i < KINST_MAX_PROBES; i++)
				ATF_REQUIRE_EQ(kinst_ptable_insert(&T,
				    mkprobe(i, bases[b] + strides[s] * i)),
				    KINST_PT_OK);
			maxd = 0;
			sumd = 0;
			for (i = 0; i < KINST_PTABLE_SLOTS; i++) {
				struct kinst_probe *p = T.slots[i];

				if (p == NULL)
					continue;
				d = (i - kinst_ptable_home(p->addr)) & PT_MASK;
				sumd += d;
				if (d > maxd)
					maxd = d;
			}
			printf("%u probes at %#jx + %u*i: mean displacement "
			    "%.2f, max %u\n", KINST_MAX_PROBES,
			    (uintmax_t)bases[b], strides[s],
			    (double)sumd / KINST_MAX_PROBES, maxd);
			ATF_CHECK_MSG(maxd < 64, "max displacement %u", maxd);
			ATF_CHECK((double)sumd / KINST_MAX_PROBES < 2.0);
		}
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, basic);
	ATF_TP_ADD_TC(tp, duplicates);
	ATF_TP_ADD_TC(tp, full);
	ATF_TP_ADD_TC(tp, noent);
	ATF_TP_ADD_TC(tp, collisions);
	ATF_TP_ADD_TC(tp, random_model);
	ATF_TP_ADD_TC(tp, no_empty_slot);
	ATF_TP_ADD_TC(tp, hash_spread);
	return (atf_no_error());
}
