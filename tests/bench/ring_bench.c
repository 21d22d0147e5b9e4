/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Trap-path costs of the ring and the probe table, one thread:
 *  - ns per kinst_ring_put() of a hit record (written, and dropped when full),
 *  - ns per record of kinst_ring_get(),
 *  - ns per kinst_ptable_lookup() hit and miss with KINST_MAX_PROBES probes
 *    (consecutive instruction addresses, and spread addresses).
 * Prints figures; never fails on timing.
 * Usage: ring_bench [iterations (default 2000000)]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kinst_probe.h"
#include "kinst_ring.h"

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec * 1e9 + ts.tv_nsec);
}

static uint64_t
mix(uint64_t x)
{

	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return (x ^ (x >> 31));
}

static struct kinst_ptable T;
static struct kinst_probe P[KINST_MAX_PROBES];
static volatile uintptr_t sink;

static void
bench_lookup(const char *what, const uint64_t *keys, uint32_t nkeys, long iters)
{
	static uint64_t hit[1 << 16], miss[1 << 16];
	uint32_t i, mask = (1 << 16) - 1;
	uintptr_t acc;
	double t0, th, tm;
	long n;

	kinst_ptable_init(&T);
	for (i = 0; i < nkeys; i++) {
		memset(&P[i], 0, sizeof(P[i]));
		P[i].addr = keys[i];
		if (kinst_ptable_insert(&T, &P[i]) != KINST_PT_OK) {
			fprintf(stderr, "ring_bench: insert failed\n");
			exit(1);
		}
	}
	/* Random probe order: a trap hits any probe. */
	for (i = 0; i <= mask; i++) {
		hit[i] = keys[mix(i) % nkeys];
		miss[i] = keys[mix(i + 7) % nkeys] ^ (1ull << 62);
	}
	acc = 0;
	t0 = now_ns();
	for (n = 0; n < iters; n++)
		acc += (uintptr_t)kinst_ptable_lookup(&T, hit[n & mask]);
	th = now_ns() - t0;
	t0 = now_ns();
	for (n = 0; n < iters; n++)
		acc += (uintptr_t)kinst_ptable_lookup(&T, miss[n & mask]);
	tm = now_ns() - t0;
	sink = acc;
	printf("ptable lookup, %u probes (%s): hit %.1f ns, miss %.1f ns\n",
	    nkeys, what, th / iters, tm / iters);
}

int
main(int argc, char **argv)
{
	static _Alignas(64) uint8_t buf[1 << 16];
	static _Alignas(64) uint8_t out[1 << 16];
	static uint64_t keys[KINST_MAX_PROBES];
	struct kinst_hit_record rec;
	struct kinst_ring r;
	long iters, n, batch, written, got;
	double t0, tput, tdrop, tget;
	uint32_t i;
	size_t k;

	iters = argc > 1 ? atol(argv[1]) : 2000000;
	if (iters <= 0) {
		fprintf(stderr, "ring_bench: bad iteration count: %s\n",
		    argv[1]);
		return (2);
	}
	memset(&rec, 0, sizeof(rec));
	rec.hdr.size = sizeof(rec);
	rec.hdr.type = KINST_REC_HIT;
	if (kinst_ring_init(&r, buf, sizeof(buf)) != 0)
		return (1);

	/* Puts into a ring with room, drained between batches (not timed). */
	batch = sizeof(buf) / sizeof(rec);
	tput = tget = 0;
	written = got = 0;
	for (n = 0; n < iters; n += batch) {
		t0 = now_ns();
		for (i = 0; i < batch; i++) {
			rec.timestamp_ns = (uint64_t)(n + i);
			written += kinst_ring_put(&r, &rec, sizeof(rec)) == 0;
		}
		tput += now_ns() - t0;
		t0 = now_ns();
		while ((k = kinst_ring_get(&r, out, sizeof(out))) != 0)
			got += k / sizeof(rec);
		tget += now_ns() - t0;
	}
	/* Puts into a full ring: the drop path. */
	while (kinst_ring_put(&r, &rec, sizeof(rec)) == 0)
		;
	t0 = now_ns();
	for (n = 0; n < iters; n++)
		(void)kinst_ring_put(&r, &rec, sizeof(rec));
	tdrop = now_ns() - t0;
	printf("ring: %zu-byte hit record, %zu-byte ring: put %.1f ns, put "
	    "when full (drop) %.1f ns, get %.1f ns per record (%ld records "
	    "moved)\n", sizeof(rec), sizeof(buf), tput / written,
	    tdrop / iters, tget / got, got);

	for (i = 0; i < KINST_MAX_PROBES; i++)
		keys[i] = 0xffffffff81000000ull + 4 * i;
	bench_lookup("consecutive addresses", keys, KINST_MAX_PROBES, iters);
	for (i = 0; i < KINST_MAX_PROBES; i++)
		keys[i] = 0xffffffff81000000ull + ((mix(i) & 0x3fffe000) | i);
	bench_lookup("spread addresses", keys, KINST_MAX_PROBES, iters);
	return (0);
}
