/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the per-CPU record ring (common/kinst_ring.c), one thread.
 */
#include <atf-c.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kinst_ring.h"

#define	RSIZE	256

static _Alignas(8) uint8_t ringbuf[RSIZE];

/* Build a record of len bytes (len >= 8) in buf, its body filled from seed. */
static void
mkrec(void *buf, uint32_t len, uint16_t type, uint8_t seed)
{
	struct kinst_rec_hdr h;
	uint8_t *b = buf;
	uint32_t i;

	h.size = len;
	h.type = type;
	h.flags = 0x5a5a;
	memcpy(b, &h, sizeof(h));
	for (i = sizeof(h); i < len; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

static void
init_ring(struct kinst_ring *r)
{

	memset(ringbuf, 0xee, sizeof(ringbuf));
	ATF_REQUIRE_EQ(kinst_ring_init(r, ringbuf, RSIZE), 0);
}

static uint64_t rec64[64];

static int
put(struct kinst_ring *r, uint32_t len, uint8_t seed)
{

	mkrec(rec64, len, KINST_REC_HIT, seed);
	return (kinst_ring_put(r, rec64, len));
}

/* Expect the next records from the ring to be exactly these (len, seed). */
static void
expect(struct kinst_ring *r, const uint32_t *lens, const uint8_t *seeds,
    size_t n)
{
	_Alignas(8) uint8_t out[1024], want[512];
	size_t got, total, i, off;

	total = 0;
	for (i = 0; i < n; i++)
		total += lens[i];
	memset(out, 0, sizeof(out));
	got = kinst_ring_get(r, out, sizeof(out));
	ATF_REQUIRE_EQ_MSG(got, total, "got %zu bytes, want %zu", got, total);
	off = 0;
	for (i = 0; i < n; i++) {
		mkrec(want, lens[i], KINST_REC_HIT, seeds[i]);
		ATF_REQUIRE_MSG(memcmp(out + off, want, lens[i]) == 0,
		    "record %zu differs", i);
		off += lens[i];
	}
}

ATF_TC_WITHOUT_HEAD(init_rejects);
ATF_TC_BODY(init_rejects, tc)
{
	struct kinst_ring r;

	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf, 0), -1);
	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf, 32), -1);
	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf, 63), -1);
	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf, 96), -1);
	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf, 255), -1);
	ATF_CHECK_EQ(kinst_ring_init(&r, NULL, 256), -1);
	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf + 4, 128), -1);
	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf, 64), 0);
	ATF_CHECK_EQ(kinst_ring_init(&r, ringbuf, 256), 0);
	ATF_CHECK_EQ(r.mask, 255u);
}

ATF_TC_WITHOUT_HEAD(empty);
ATF_TC_BODY(empty, tc)
{
	struct kinst_ring r;
	uint8_t out[64];

	init_ring(&r);
	ATF_CHECK(kinst_ring_empty(&r));
	ATF_CHECK_EQ(kinst_ring_get(&r, out, sizeof(out)), 0);
	ATF_CHECK_EQ(kinst_ring_get(&r, out, 0), 0);
	ATF_CHECK_EQ(kinst_ring_written(&r), 0);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 0);
	ATF_CHECK_EQ(r.head, 0);
	ATF_CHECK_EQ(r.ctl->tail, 0);
}

ATF_TC_WITHOUT_HEAD(exact_fit);
ATF_TC_BODY(exact_fit, tc)
{
	struct kinst_ring r;
	uint32_t len = RSIZE;
	uint8_t seed = 3;

	init_ring(&r);
	/* A record as large as the ring fits an empty ring. */
	ATF_REQUIRE_EQ(put(&r, RSIZE, 3), 0);
	ATF_CHECK(!kinst_ring_empty(&r));
	/* Nothing else does, not even a bare header. */
	ATF_CHECK_EQ(put(&r, 8, 4), -1);
	ATF_CHECK_EQ(kinst_ring_written(&r), 1);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 1);
	expect(&r, &len, &seed, 1);
	ATF_CHECK(kinst_ring_empty(&r));

	/* Fill with smaller records to exactly the size, then full. */
	ATF_REQUIRE_EQ(put(&r, 128, 5), 0);
	ATF_REQUIRE_EQ(put(&r, 64, 6), 0);
	ATF_REQUIRE_EQ(put(&r, 64, 7), 0);
	ATF_CHECK_EQ(r.head - r.ctl->tail, RSIZE);
	ATF_CHECK_EQ(put(&r, 8, 8), -1);
	{
		uint32_t lens[] = { 128, 64, 64 };
		uint8_t seeds[] = { 5, 6, 7 };

		expect(&r, lens, seeds, 3);
	}
	ATF_CHECK_EQ(kinst_ring_written(&r), 4);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 2);
}

ATF_TC_WITHOUT_HEAD(wrap_with_pad);
ATF_TC_BODY(wrap_with_pad, tc)
{
	struct kinst_ring r;
	_Alignas(8) uint8_t out[512];
	struct kinst_rec_hdr pad;

	init_ring(&r);
	/* 3 x 80 = 240: 16 bytes left before the end. */
	ATF_REQUIRE_EQ(put(&r, 80, 1), 0);
	ATF_REQUIRE_EQ(put(&r, 80, 2), 0);
	ATF_REQUIRE_EQ(put(&r, 80, 3), 0);
	/* Read one record only: cap holds 80 + 79. */
	ATF_REQUIRE_EQ(kinst_ring_get(&r, out, 159), 80);
	ATF_CHECK_EQ(r.ctl->tail, 80);
	/* 48 bytes do not fit in the last 16: pad 16, record at offset 0. */
	ATF_REQUIRE_EQ(put(&r, 48, 4), 0);
	ATF_CHECK_EQ(r.head, 240 + 16 + 48);
	memcpy(&pad, ringbuf + 240, sizeof(pad));
	ATF_CHECK_EQ(pad.type, KINST_REC_PAD);
	ATF_CHECK_EQ(pad.size, 16);
	/* The consumer never sees the filler. */
	{
		uint32_t lens[] = { 80, 80, 48 };
		uint8_t seeds[] = { 2, 3, 4 };

		expect(&r, lens, seeds, 3);
	}
	ATF_CHECK(kinst_ring_empty(&r));
	ATF_CHECK_EQ(r.ctl->tail, r.head);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 0);
	ATF_CHECK_EQ(kinst_ring_written(&r), 4);
}

ATF_TC_WITHOUT_HEAD(pad_of_one_header);
ATF_TC_BODY(pad_of_one_header, tc)
{
	struct kinst_ring r;
	struct kinst_rec_hdr pad;
	uint32_t len = 16;
	uint8_t seed = 9;

	init_ring(&r);
	/* Leave exactly 8 bytes before the end: the filler is a bare header. */
	ATF_REQUIRE_EQ(put(&r, 248, 1), 0);
	{
		uint32_t l = 248;
		uint8_t s = 1;

		expect(&r, &l, &s, 1);
	}
	ATF_REQUIRE_EQ(put(&r, 16, 9), 0);
	memcpy(&pad, ringbuf + 248, sizeof(pad));
	ATF_CHECK_EQ(pad.type, KINST_REC_PAD);
	ATF_CHECK_EQ(pad.size, 8);
	expect(&r, &len, &seed, 1);
	ATF_CHECK(kinst_ring_empty(&r));
}

ATF_TC_WITHOUT_HEAD(full_drops);
ATF_TC_BODY(full_drops, tc)
{
	struct kinst_ring r;
	uint8_t before[RSIZE];
	uint64_t head;
	int i;

	init_ring(&r);
	ATF_REQUIRE_EQ(put(&r, 200, 1), 0);
	head = r.head;
	memcpy(before, ringbuf, RSIZE);
	/* 56 bytes free: 64 does not fit; nothing is written, all counted. */
	for (i = 0; i < 10; i++)
		ATF_CHECK_EQ(put(&r, 64, 2), -1);
	ATF_CHECK_EQ(r.head, head);
	ATF_CHECK(memcmp(before, ringbuf, RSIZE) == 0);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 10);
	ATF_CHECK_EQ(put(&r, 56, 3), 0);
	ATF_CHECK_EQ(kinst_ring_written(&r), 2);
	{
		uint32_t lens[] = { 200, 56 };
		uint8_t seeds[] = { 1, 3 };

		expect(&r, lens, seeds, 2);
	}
}

/* The filler would fit but the record after it would not: drop, write nothing. */
ATF_TC_WITHOUT_HEAD(full_at_wrap);
ATF_TC_BODY(full_at_wrap, tc)
{
	struct kinst_ring r;
	_Alignas(8) uint8_t out[256];
	uint8_t before[RSIZE];
	uint64_t head;

	init_ring(&r);
	ATF_REQUIRE_EQ(put(&r, 96, 1), 0);
	ATF_REQUIRE_EQ(put(&r, 128, 2), 0);	/* head 224: 32 to the end */
	ATF_REQUIRE_EQ(kinst_ring_get(&r, out, 96), 96);	/* 128 used */
	head = r.head;
	memcpy(before, ringbuf, RSIZE);
	/* 128 free, 32 of them before the end: a filler plus 104 is 136. */
	ATF_REQUIRE_EQ(put(&r, 104, 3), -1);	/* 32 + 104 = 136 > 128 */
	ATF_CHECK_EQ(r.head, head);
	ATF_CHECK(memcmp(before, ringbuf, RSIZE) == 0);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 1);
	ATF_REQUIRE_EQ(put(&r, 96, 4), 0);	/* 32 + 96 = 128: exactly */
	ATF_CHECK_EQ(r.head - r.ctl->tail, RSIZE);
	{
		uint32_t lens[] = { 128, 96 };
		uint8_t seeds[] = { 2, 4 };

		expect(&r, lens, seeds, 2);
	}
	ATF_CHECK(kinst_ring_empty(&r));
}

ATF_TC_WITHOUT_HEAD(small_cap);
ATF_TC_BODY(small_cap, tc)
{
	struct kinst_ring r;
	_Alignas(8) uint8_t out[256];
	uint64_t tail;

	init_ring(&r);
	ATF_REQUIRE_EQ(put(&r, 64, 1), 0);
	ATF_REQUIRE_EQ(put(&r, 32, 2), 0);
	tail = r.ctl->tail;
	/* The oldest record does not fit: 0, and nothing is consumed. */
	ATF_CHECK_EQ(kinst_ring_get(&r, out, 0), 0);
	ATF_CHECK_EQ(kinst_ring_get(&r, out, 8), 0);
	ATF_CHECK_EQ(kinst_ring_get(&r, out, 63), 0);
	ATF_CHECK_EQ(r.ctl->tail, tail);
	ATF_CHECK(!kinst_ring_empty(&r));
	/* Whole records only: 64 + 31 returns the first one. */
	ATF_CHECK_EQ(kinst_ring_get(&r, out, 95), 64);
	{
		uint32_t len = 32;
		uint8_t seed = 2;

		expect(&r, &len, &seed, 1);
	}
	ATF_CHECK_EQ(kinst_ring_written(&r), 2);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 0);
}

ATF_TC_WITHOUT_HEAD(bad_headers);
ATF_TC_BODY(bad_headers, tc)
{
	struct kinst_ring r;
	struct kinst_rec_hdr h;
	uint64_t head;

	init_ring(&r);
	head = r.head;
	mkrec(rec64, 24, KINST_REC_HIT, 0);
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 16), -1);	/* size != len */
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 32), -1);
	mkrec(rec64, 20, KINST_REC_HIT, 0);
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 20), -1);	/* not 8-aligned */
	mkrec(rec64, 4, KINST_REC_HIT, 0);
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 4), -1);	/* shorter than a header */
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 0), -1);
	h.size = 0; h.type = KINST_REC_HIT; h.flags = 0;
	memcpy(rec64, &h, sizeof(h));
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 8), -1);	/* size 0 */
	mkrec(rec64, 24, KINST_REC_PAD, 0);
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 24), -1);	/* a filler */
	mkrec(rec64, 264, KINST_REC_HIT, 0);
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 264), -1);	/* larger than the ring */
	ATF_CHECK_EQ(kinst_ring_put(&r, NULL, 24), -1);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 9);
	ATF_CHECK_EQ(kinst_ring_written(&r), 0);
	ATF_CHECK_EQ(r.head, head);
	ATF_CHECK(kinst_ring_empty(&r));
	/* A bare header is a valid record. */
	mkrec(rec64, 8, KINST_REC_HIT, 0);
	ATF_CHECK_EQ(kinst_ring_put(&r, rec64, 8), 0);
	ATF_REQUIRE_EQ(put(&r, 24, 7), 0);
	{
		uint32_t lens[] = { 8, 24 };
		uint8_t seeds[] = { 0, 7 };

		expect(&r, lens, seeds, 2);
	}
}

ATF_TC_WITHOUT_HEAD(counters);
ATF_TC_BODY(counters, tc)
{
	struct kinst_ring r;
	_Alignas(8) uint8_t out[256];
	uint64_t w, d, got;
	int i;

	init_ring(&r);
	w = d = got = 0;
	for (i = 0; i < 1000; i++) {
		uint32_t len = 8 * (1 + (uint32_t)(i * 37 % 20));

		if (put(&r, len, (uint8_t)i) == 0)
			w++;
		else
			d++;
		if (i % 7 == 0) {
			kinst_ring_count_drop(&r);
			d++;
		}
		if (i % 3 == 0) {
			size_t n = kinst_ring_get(&r, out, sizeof(out));
			size_t off = 0;

			while (off < n) {
				struct kinst_rec_hdr h;

				memcpy(&h, out + off, sizeof(h));
				ATF_REQUIRE(h.type == KINST_REC_HIT);
				ATF_REQUIRE(h.size >= 8 && off + h.size <= n);
				off += h.size;
				got++;
			}
		}
	}
	while (!kinst_ring_empty(&r)) {
		size_t n = kinst_ring_get(&r, out, sizeof(out)), off = 0;

		ATF_REQUIRE(n > 0);
		while (off < n) {
			struct kinst_rec_hdr h;

			memcpy(&h, out + off, sizeof(h));
			off += h.size;
			got++;
		}
	}
	ATF_CHECK(w > 0 && d > 0);
	ATF_CHECK_EQ(kinst_ring_written(&r), w);
	ATF_CHECK_EQ(kinst_ring_dropped(&r), d);
	ATF_CHECK_EQ(got, w);
	printf("written %ju dropped %ju wraps %ju\n", (uintmax_t)w,
	    (uintmax_t)d, (uintmax_t)(r.head / RSIZE));
}

/* Positions are free-running: crossing 2^64 changes nothing. */
ATF_TC_WITHOUT_HEAD(position_overflow);
ATF_TC_BODY(position_overflow, tc)
{
	struct kinst_ring r;
	int i;

	init_ring(&r);
	r.head = r.ctl->tail = (uint64_t)0 - 2 * RSIZE - 24;	/* 8-aligned, offset 232 */
	ATF_REQUIRE_EQ(r.head % 8, 0);
	for (i = 0; i < 40; i++) {
		uint32_t len = 8 * (1 + (uint32_t)(i % 9));
		uint8_t seed = (uint8_t)i;

		ATF_REQUIRE_EQ(put(&r, len, seed), 0);
		expect(&r, &len, &seed, 1);
	}
	ATF_CHECK(r.head < 64 * RSIZE);	/* it did cross 2^64 */
	ATF_CHECK(kinst_ring_empty(&r));
	ATF_CHECK_EQ(kinst_ring_dropped(&r), 0);
}

/* Unaligned source and destination buffers. */
ATF_TC_WITHOUT_HEAD(unaligned_buffers);
ATF_TC_BODY(unaligned_buffers, tc)
{
	struct kinst_ring r;
	_Alignas(8) uint8_t src[128], out[256], want[64];
	int a;

	init_ring(&r);
	for (a = 1; a < 8; a++) {
		mkrec(src + a, 64, KINST_REC_HIT, (uint8_t)a);
		ATF_REQUIRE_EQ(kinst_ring_put(&r, src + a, 64), 0);
		memset(out, 0, sizeof(out));
		ATF_REQUIRE_EQ(kinst_ring_get(&r, out + a, 100), 64);
		mkrec(want, 64, KINST_REC_HIT, (uint8_t)a);
		ATF_CHECK(memcmp(out + a, want, 64) == 0);
	}
}

/*
 * The read(2) side over per-CPU rings: whole records, round robin from
 * *next, stopping when fewer than min_room bytes are left.
 */
ATF_TC_WITHOUT_HEAD(rings_drain);
ATF_TC_BODY(rings_drain, tc)
{
	static _Alignas(8) uint8_t bufs[3][RSIZE];
	_Alignas(8) uint8_t out[1024];
	struct kinst_ring rings[3];
	struct kinst_rec_hdr h;
	uint32_t next, c;
	size_t n, off;
	uint8_t order[16];
	int k;

	for (c = 0; c < 3; c++)
		ATF_REQUIRE_EQ(kinst_ring_init(&rings[c], bufs[c], RSIZE), 0);
	ATF_CHECK(!kinst_rings_have_data(rings, 3));
	next = 0;
	ATF_CHECK_EQ(kinst_rings_drain(rings, 3, &next, out, sizeof(out), 32), 0);
	/* Ring c holds records tagged with seed 10*c + i. */
	for (c = 0; c < 3; c++)
		for (k = 0; k < 2; k++) {
			mkrec(rec64, 32, KINST_REC_HIT, (uint8_t)(10 * c + k));
			ATF_REQUIRE_EQ(kinst_ring_put(&rings[c], rec64, 32), 0);
		}
	ATF_CHECK(kinst_rings_have_data(rings, 3));
	/* Room for 3 records, min_room 32: one pass takes one ring whole. */
	next = 1;
	n = kinst_rings_drain(rings, 3, &next, out, 96, 32);
	ATF_CHECK_EQ(n, 96);
	for (off = 0, k = 0; off < n; off += h.size, k++) {
		memcpy(&h, out + off, sizeof(h));
		ATF_REQUIRE_EQ(h.size, 32);
		order[k] = out[off + sizeof(h)] - (uint8_t)(8 * 7);
	}
	/* Ring 1 first (both its records), then ring 2's first. */
	ATF_CHECK_EQ(order[0], 10);
	ATF_CHECK_EQ(order[1], 11);
	ATF_CHECK_EQ(order[2], 20);
	ATF_CHECK_EQ(next, 2);
	/* The rest: everything left, nothing lost or repeated. */
	n = kinst_rings_drain(rings, 3, &next, out, sizeof(out), 32);
	ATF_CHECK_EQ(n, 3 * 32);
	ATF_CHECK(!kinst_rings_have_data(rings, 3));
	ATF_CHECK_EQ(kinst_rings_drain(rings, 0, &next, out, sizeof(out), 32), 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, rings_drain);
	ATF_TP_ADD_TC(tp, init_rejects);
	ATF_TP_ADD_TC(tp, empty);
	ATF_TP_ADD_TC(tp, exact_fit);
	ATF_TP_ADD_TC(tp, wrap_with_pad);
	ATF_TP_ADD_TC(tp, pad_of_one_header);
	ATF_TP_ADD_TC(tp, full_drops);
	ATF_TP_ADD_TC(tp, full_at_wrap);
	ATF_TP_ADD_TC(tp, small_cap);
	ATF_TP_ADD_TC(tp, bad_headers);
	ATF_TP_ADD_TC(tp, counters);
	ATF_TP_ADD_TC(tp, position_overflow);
	ATF_TP_ADD_TC(tp, unaligned_buffers);
	return (atf_no_error());
}
