/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Producer/consumer stress tests of the per-CPU ring.
 *
 * Every producer thread owns one ring, as the trap handler of one CPU does;
 * one consumer thread drains all rings concurrently with kinst_ring_get(),
 * as read(2) does.  Records have variable sizes and carry the producer id, a
 * sequence number, a payload derived from both and a checksum over it, so
 * the consumer can tell a torn, reordered, duplicated or foreign record.  At
 * the end, for every ring:
 *
 *   produced == consumed + dropped,  written == consumed,
 *   records missing from the sequence (gaps, and the tail) == dropped.
 *
 * The "mapped" tests put each ring in memory shared the way /dev/kinst's
 * mmap(2) shares it (a memfd mapped twice: the producer's view, and the
 * consumer's ctl page read-write plus its records read-only at other
 * addresses), and the consumer reads through kinst_ring_map_get(), as
 * kinstctl does, with the head the producer published in the ctl page.
 *
 * Runs are bounded in time; their figures are printed, never judged.  The
 * same source is built with ThreadSanitizer (ring_mt_tsan_test), which turns
 * a missing acquire/release in the ring into a reported data race.
 */
#include <atf-c.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kinst_ring.h"

#ifdef KINST_TSAN
const char *__tsan_default_options(void);
const char *
__tsan_default_options(void)
{

	return ("halt_on_error=1");
}
#endif

#define	MAXPROD		8
#define	OUTCAP		65536

/* A test record: 32 bytes of header, then nwords payload words. */
struct trec {
	struct kinst_rec_hdr hdr;
	uint32_t	producer;
	uint32_t	nwords;
	uint64_t	seq;
	uint64_t	sum;
	uint64_t	w[];
};

struct prod {
	struct kinst_ring ring;
	uint8_t		*buf;
	uint8_t		*pview;		/* mapped: the producer's view */
	struct kinst_ring_ctl *cctl;	/* mapped: the consumer's views */
	const uint8_t	*cdata;
	pthread_t	thr;
	uint32_t	id;
	uint64_t	produced;	/* written by the producer before done */
	int		done;		/* atomic */
	/* consumer side */
	uint64_t	consumed;
	uint64_t	next;		/* expected next sequence number */
	uint64_t	missing;	/* sequence numbers skipped so far */
	struct test	*t;
};

struct test {
	uint32_t	nprod;
	uint32_t	ringsize;
	uint32_t	maxw;		/* payload words: 0 .. maxw */
	double		min_s, max_s;	/* run time bounds */
	uint64_t	want_drops;	/* coverage wanted per ring before min_s is enough */
	uint64_t	want_wraps;
	int		consumer_pauses;
	int		mapped;
	int		stop;		/* atomic: consumer found an error */
	double		t0;
	char		err[512];	/* first error, consumer only */
	uint64_t	passes, empty_gets, small_cap_gets;
	struct prod	p[MAXPROD];
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec + ts.tv_nsec * 1e-9);
}

static uint64_t
mix(uint64_t x)
{

	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return (x ^ (x >> 31));
}

static uint32_t
nwords_of(const struct test *t, uint32_t id, uint64_t seq)
{

	return ((uint32_t)(mix(seq * 131 + id) % (t->maxw + 1)));
}

static uint64_t
word_of(uint32_t id, uint64_t seq, uint32_t i)
{

	return (mix(((uint64_t)id << 56) ^ (seq << 8) ^ i));
}

static uint64_t
sum_of(const struct trec *r)
{
	uint64_t s;
	uint32_t i;

	s = mix(r->seq ^ ((uint64_t)r->producer << 48) ^ r->hdr.size);
	for (i = 0; i < r->nwords; i++)
		s = mix(s ^ r->w[i]);
	return (s);
}

static void *
producer(void *arg)
{
	struct prod *p = arg;
	struct test *t = p->t;
	uint64_t *rec, seq;
	uint8_t *ubuf;
	struct trec *r;
	uint32_t i, len, dropstreak;
	double el;
	int rc;

	dropstreak = 0;
	rec = aligned_alloc(8, 32 + 8 * (size_t)t->maxw + 64);
	ubuf = malloc(32 + 8 * (size_t)t->maxw + 64);
	r = (struct trec *)rec;
	for (seq = 0;; seq++) {
		if ((seq & 1023) == 0) {
			if (__atomic_load_n(&t->stop, __ATOMIC_RELAXED))
				break;
			el = now() - t->t0;
			if (el >= t->max_s)
				break;
			if (el >= t->min_s &&
			    kinst_ring_dropped(&p->ring) >= t->want_drops &&
			    __atomic_load_n(&p->ring.head, __ATOMIC_RELAXED) /
			    t->ringsize >= t->want_wraps)
				break;
		}
		r->producer = p->id;
		r->nwords = nwords_of(t, p->id, seq);
		r->seq = seq;
		len = 32 + 8 * r->nwords;
		r->hdr.size = len;
		r->hdr.type = KINST_REC_HIT;
		r->hdr.flags = (uint16_t)seq;
		for (i = 0; i < r->nwords; i++)
			r->w[i] = word_of(p->id, seq, i);
		r->sum = sum_of(r);
		if (seq % 5 == 4) {
			/* Now and then from an unaligned buffer. */
			memcpy(ubuf + 3, rec, len);
			rc = kinst_ring_put(&p->ring, ubuf + 3, len);
		} else
			rc = kinst_ring_put(&p->ring, rec, len);
		/*
		 * On a loaded machine the consumer may share our CPU: after
		 * a long run of drops let it in, so records keep flowing.
		 */
		if (rc != 0 && ++dropstreak % 256 == 0)
			sched_yield();
		else if (rc == 0)
			dropstreak = 0;
	}
	p->produced = seq;
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	free(rec);
	free(ubuf);
	return (NULL);
}

static void
fail(struct test *t, const char *fmt, ...)
{
	va_list ap;

	if (t->err[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(t->err, sizeof(t->err), fmt, ap);
		va_end(ap);
	}
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
}

/* Check the records the consumer got from p's ring. */
static void
parse(struct test *t, struct prod *p, const uint8_t *out, size_t n)
{
	static _Alignas(8) uint8_t one[OUTCAP];
	struct kinst_rec_hdr h;
	struct trec *r;
	size_t off;
	uint32_t i;

	for (off = 0; off < n; off += h.size) {
		if (n - off < sizeof(h)) {
			fail(t, "ring %u: %zu stray bytes at the end", p->id,
			    n - off);
			return;
		}
		memcpy(&h, out + off, sizeof(h));
		if (h.type != KINST_REC_HIT || h.size < 32 || h.size % 8 != 0 ||
		    h.size > n - off) {
			fail(t, "ring %u: bad record header at %zu: size %u "
			    "type %u (got %zu bytes)", p->id, off, h.size,
			    h.type, n);
			return;
		}
		memcpy(one, out + off, h.size);
		r = (struct trec *)one;
		if (r->producer != p->id) {
			fail(t, "ring %u: record of producer %u", p->id,
			    r->producer);
			return;
		}
		if (r->seq < p->next) {
			fail(t, "ring %u: seq %ju after %ju: reordered or "
			    "duplicated", p->id, (uintmax_t)r->seq,
			    (uintmax_t)p->next - 1);
			return;
		}
		if (r->nwords != nwords_of(t, p->id, r->seq) ||
		    h.size != 32 + 8 * r->nwords ||
		    r->hdr.flags != (uint16_t)r->seq) {
			fail(t, "ring %u: seq %ju: torn record (size %u)",
			    p->id, (uintmax_t)r->seq, h.size);
			return;
		}
		for (i = 0; i < r->nwords; i++)
			if (r->w[i] != word_of(p->id, r->seq, i)) {
				fail(t, "ring %u: seq %ju: torn payload word %u",
				    p->id, (uintmax_t)r->seq, i);
				return;
			}
		if (r->sum != sum_of(r)) {
			fail(t, "ring %u: seq %ju: bad checksum", p->id,
			    (uintmax_t)r->seq);
			return;
		}
		p->missing += r->seq - p->next;
		p->next = r->seq + 1;
		p->consumed++;
	}
}

static void *
consumer(void *arg)
{
	static const size_t caps[] = { 0, 8, 40, 100, 333, 512, 4096, OUTCAP,
	    OUTCAP - 5 };
	struct test *t = arg;
	uint8_t *out;
	uint32_t k, misalign;
	uint64_t rnd;
	size_t cap, n;
	bool alldone, any;
	volatile uint64_t spin;
	uint32_t idle;

	out = aligned_alloc(8, OUTCAP + 8);
	rnd = 12345;
	idle = 0;
	for (;;) {
		alldone = true;
		for (k = 0; k < t->nprod; k++)
			if (!__atomic_load_n(&t->p[k].done, __ATOMIC_ACQUIRE))
				alldone = false;
		any = false;
		t->passes++;
		for (k = 0; k < t->nprod; k++) {
			rnd = mix(rnd);
			cap = alldone ? OUTCAP : caps[rnd % KINST_NELEM(caps)];
			misalign = (rnd >> 20) % 4 == 0 ? (rnd >> 24) % 8 : 0;
			if (cap + misalign > OUTCAP)
				misalign = 0;
			if (t->mapped) {
				bool bad = false;

				n = kinst_ring_map_get(t->p[k].cctl,
				    t->p[k].cdata, t->ringsize,
				    out + misalign, cap, &bad);
				if (bad) {
					fail(t, "ring %u: mapped consumer "
					    "found a bad record", k);
					break;
				}
			} else
				n = kinst_ring_get(&t->p[k].ring,
				    out + misalign, cap);
			if (n > cap) {
				fail(t, "ring %u: get returned %zu > cap %zu", k,
				    n, cap);
				break;
			}
			if (n == 0) {
				if (kinst_ring_empty(&t->p[k].ring))
					t->empty_gets++;
				else
					t->small_cap_gets++;
				continue;
			}
			any = true;
			parse(t, &t->p[k], out + misalign, n);
		}
		if (__atomic_load_n(&t->stop, __ATOMIC_RELAXED))
			break;
		if (alldone && !any) {
			for (k = 0; k < t->nprod; k++)
				if (!kinst_ring_empty(&t->p[k].ring))
					break;
			if (k == t->nprod)
				break;
		}
		/*
		 * On a loaded machine the producers may share our CPU: after
		 * a run of empty passes let them in (the producer does the
		 * same after a run of drops), or a 256-byte ring wraps only
		 * once per scheduler tick.
		 */
		if (any)
			idle = 0;
		else if (++idle % 64 == 0)
			sched_yield();
		if (t->consumer_pauses && (rnd >> 40) % 64 == 0) {
			/* Fall behind now and then so that the ring fills. */
			for (spin = 0; spin < (rnd >> 46) % 2048; spin++)
				;
		}
	}
	free(out);
	return (NULL);
}

#define	CHK(c, ...) do {						\
	if (!(c)) {							\
		bad++;							\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
	}								\
} while (0)

/*
 * A ring laid out as /dev/kinst maps it: a ctl page, then the records, in
 * a memfd.  The producer writes through one mapping of all of it; the
 * consumer gets the ctl page read-write and the records read-only, each a
 * mapping of its own (a write through cdata would fault).
 */
static void
map_ring(struct prod *p, uint32_t size)
{
	size_t len = KINST_MAP_PAGE + (size_t)size;
	void *v;
	int fd;

	ATF_REQUIRE(size >= KINST_MAP_PAGE);	/* the data is page-aligned */
	fd = memfd_create("kinst-ring", 0);
	ATF_REQUIRE(fd >= 0);
	ATF_REQUIRE_EQ(ftruncate(fd, (off_t)len), 0);
	v = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ATF_REQUIRE(v != MAP_FAILED);
	p->pview = v;
	memset(p->pview + KINST_MAP_PAGE, 0xa5, size);
	ATF_REQUIRE_EQ(kinst_ring_init_ctl(&p->ring,
	    (struct kinst_ring_ctl *)p->pview, p->pview + KINST_MAP_PAGE,
	    size), 0);
	v = mmap(NULL, KINST_MAP_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	    0);
	ATF_REQUIRE(v != MAP_FAILED);
	p->cctl = v;
	v = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, KINST_MAP_PAGE);
	ATF_REQUIRE(v != MAP_FAILED);
	p->cdata = v;
	ATF_REQUIRE(p->cctl->size == size);
	close(fd);
}

static void
unmap_ring(struct prod *p, uint32_t size)
{

	munmap(p->pview, KINST_MAP_PAGE + (size_t)size);
	munmap(p->cctl, KINST_MAP_PAGE);
	munmap((void *)p->cdata, size);
}

static void
run(const struct test *tmpl)
{
	static struct test t;
	pthread_t cthr;
	struct prod *p;
	uint64_t tot_p = 0, tot_c = 0, tot_d = 0, drop, wraps;
	uint32_t k;
	double el;
	bool covered = true;
	int bad = 0;

	memcpy(&t, tmpl, sizeof(t));
	ATF_REQUIRE(t.nprod <= MAXPROD);
	for (k = 0; k < t.nprod; k++) {
		p = &t.p[k];
		p->id = k;
		p->t = &t;
		if (t.mapped) {
			map_ring(p, t.ringsize);
			continue;
		}
		p->buf = aligned_alloc(64, t.ringsize);
		ATF_REQUIRE(p->buf != NULL);
		memset(p->buf, 0xa5, t.ringsize);
		ATF_REQUIRE_EQ(kinst_ring_init(&p->ring, p->buf, t.ringsize), 0);
	}
	t.t0 = now();
	ATF_REQUIRE_EQ(pthread_create(&cthr, NULL, consumer, &t), 0);
	for (k = 0; k < t.nprod; k++)
		ATF_REQUIRE_EQ(pthread_create(&t.p[k].thr, NULL, producer,
		    &t.p[k]), 0);
	for (k = 0; k < t.nprod; k++)
		ATF_REQUIRE_EQ(pthread_join(t.p[k].thr, NULL), 0);
	ATF_REQUIRE_EQ(pthread_join(cthr, NULL), 0);
	el = now() - t.t0;

	if (t.err[0] != '\0')
		atf_tc_fail("%s", t.err);
	printf("%u producer(s), ring %u bytes, records 32..%u bytes, %.2f s\n",
	    t.nprod, t.ringsize, 32 + 8 * t.maxw, el);
	for (k = 0; k < t.nprod; k++) {
		p = &t.p[k];
		drop = kinst_ring_dropped(&p->ring);
		wraps = p->ring.head / t.ringsize;
		printf("ring %u: produced %ju consumed %ju dropped %ju "
		    "(missing %ju) wraps %ju\n", k, (uintmax_t)p->produced,
		    (uintmax_t)p->consumed, (uintmax_t)drop,
		    (uintmax_t)(p->missing + p->produced - p->next),
		    (uintmax_t)wraps);
		CHK(p->produced == p->consumed + drop,
		    "ring %u: produced %ju != consumed %ju + dropped %ju", k,
		    (uintmax_t)p->produced, (uintmax_t)p->consumed,
		    (uintmax_t)drop);
		CHK(kinst_ring_written(&p->ring) == p->consumed,
		    "ring %u: written %ju != consumed %ju", k,
		    (uintmax_t)kinst_ring_written(&p->ring),
		    (uintmax_t)p->consumed);
		CHK(p->next <= p->produced, "ring %u: seq %ju was never produced",
		    k, (uintmax_t)p->next - 1);
		CHK(p->missing + (p->produced - p->next) == drop,
		    "ring %u: %ju sequence numbers missing, %ju drops counted",
		    k, (uintmax_t)(p->missing + p->produced - p->next),
		    (uintmax_t)drop);
		CHK(kinst_ring_empty(&p->ring) && p->ring.head == p->ring.ctl->tail,
		    "ring %u: not empty at the end", k);
		if (drop < t.want_drops || wraps < t.want_wraps)
			covered = false;
		tot_p += p->produced;
		tot_c += p->consumed;
		tot_d += drop;
		if (t.mapped) {
			CHK(p->cctl->head == p->ring.head &&
			    p->cctl->tail == p->ring.head,
			    "ring %u: mapped positions %ju/%ju, head %ju", k,
			    (uintmax_t)p->cctl->head,
			    (uintmax_t)p->cctl->tail,
			    (uintmax_t)p->ring.head);
			unmap_ring(p, t.ringsize);
		} else
			free(p->buf);
	}
	printf("total: produced %ju consumed %ju dropped %ju; consumer passes "
	    "%ju, empty gets %ju, gets refused for a small cap %ju\n",
	    (uintmax_t)tot_p, (uintmax_t)tot_c, (uintmax_t)tot_d,
	    (uintmax_t)t.passes, (uintmax_t)t.empty_gets,
	    (uintmax_t)t.small_cap_gets);
	CHK(tot_c > 0, "nothing consumed");
	/* Fail before any skip: a skip must never hide a failed check. */
	if (bad != 0)
		atf_tc_fail("%d invariant(s) violated; see stderr", bad);
	if (!covered)
		atf_tc_skip("the run was correct but did not reach its coverage "
		    "goal (%ju drops and %ju wrap-arounds per ring) within "
		    "%.0f s: machine too loaded?", (uintmax_t)t.want_drops,
		    (uintmax_t)t.want_wraps, t.max_s);
}

#ifdef KINST_NO_TSAN
#define	NEED_TSAN()	atf_tc_skip("this compiler has no ThreadSanitizer " \
			    "(-fsanitize=thread); ring_mt_test runs the same " \
			    "tests without it")
#else
#define	NEED_TSAN()	do { } while (0)
#endif

ATF_TC(multi_producer);
ATF_TC_HEAD(multi_producer, tc)
{

	atf_tc_set_md_var(tc, "descr", "3 producers, one ring each, one "
	    "consumer draining all: no torn, reordered or lost record");
}
ATF_TC_BODY(multi_producer, tc)
{
	static struct test t;

	NEED_TSAN();
	t.nprod = 3;
	t.ringsize = 8192;
	t.maxw = 40;
	t.min_s = 2;
	t.max_s = 60;
	t.want_drops = 1;
	t.want_wraps = 100;
	run(&t);
}

ATF_TC(contention);
ATF_TC_HEAD(contention, tc)
{

	atf_tc_set_md_var(tc, "descr", "one producer, one consumer, a "
	    "256-byte ring: constant wrap-around and drops");
}
ATF_TC_BODY(contention, tc)
{
	static struct test t;

	NEED_TSAN();
	t.nprod = 1;
	t.ringsize = 256;
	t.maxw = 12;
	t.min_s = 2;
	t.max_s = 60;
	t.want_drops = 1000;
	/*
	 * Records are 32..128 bytes in steps of 8 in a 256-byte ring: a few
	 * hundred wrap-arounds already split every size at every offset.
	 * 2000 is reached in under a second on a quiet machine and within
	 * the time bound with six busy loops on the 2-core CI machine.
	 */
	t.want_wraps = 2000;
	t.consumer_pauses = 1;
	run(&t);
}

ATF_TC(mapped);
ATF_TC_HEAD(mapped, tc)
{

	atf_tc_set_md_var(tc, "descr", "2 producers, one consumer reading "
	    "through mappings of the rings (ctl page and read-only records, "
	    "as mmap(2) of /dev/kinst gives them), a 4 KiB ring that wraps "
	    "and drops");
}
ATF_TC_BODY(mapped, tc)
{
	static struct test t;

	NEED_TSAN();
	t.nprod = 2;
	t.ringsize = 4096;
	t.maxw = 60;
	t.min_s = 2;
	t.max_s = 60;
	t.want_drops = 100;
	t.want_wraps = 500;
	t.consumer_pauses = 1;
	t.mapped = 1;
	run(&t);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, multi_producer);
	ATF_TP_ADD_TC(tp, contention);
	ATF_TP_ADD_TC(tp, mapped);
	return (atf_no_error());
}
