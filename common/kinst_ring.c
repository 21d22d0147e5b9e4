/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-CPU single-producer / single-consumer ring of variable-size records.
 *
 * Layout.  head and tail are free-running 64-bit byte positions; the byte
 * at position x lives at buf[x & mask].  head - tail bytes are in use and
 * head - tail <= size always holds.  Every position the ring ever uses is a
 * multiple of 8, so every record starts 8-byte aligned in buf and the space
 * left before the end of buf is a multiple of 8 too.  A record never wraps:
 * if it does not fit between head and the end of buf, the producer first
 * writes a KINST_REC_PAD header whose size covers exactly the bytes up to
 * the end, and the record starts at offset 0.  The pad and the record are
 * published together, so a pad is never the only thing in the ring.
 *
 * Memory ordering.  There are two publication edges, one per direction:
 *
 *  - Producer -> consumer: the producer writes the record bytes with plain
 *    stores, then stores the new head with release semantics.  The consumer
 *    loads head with acquire semantics before it reads any record byte.  The
 *    release/acquire pair makes every byte written before the head store
 *    visible to the consumer once it has seen that head (and no byte beyond
 *    head is ever read).
 *
 *  - Consumer -> producer: the consumer reads (copies out) the record bytes,
 *    then stores the new tail with release semantics.  The producer loads
 *    tail with acquire semantics before it writes into the space that tail
 *    freed.  So the consumer's reads of a record happen before the
 *    producer's overwrite of the same bytes: no torn read.
 *
 * Each position has exactly one writer (head: producer, tail: consumer), so
 * each side may read its own position relaxed and needs no read-modify-write.
 * The counters: written has one writer (the producer at depth 0); dropped is
 * also bumped by kinst_ring_count_drop() from a nested hit that may interrupt
 * the producer between the load and the store of a plain increment on the
 * same CPU, so it uses an atomic add (relaxed: it orders nothing).  Readers
 * of both counters load them relaxed.
 *
 * Mapped rings.  The consumer's tail, and a copy of head for it, live in
 * r->ctl, a page a reader may map read-write (kinst_abi.h): the consumer
 * is then user space, through kinst_ring_map_get().  The producer keeps
 * the head it trusts in r itself, publishes both with release stores, and
 * treats a tail that is not within size bytes behind head as a full ring
 * (it drops; it never writes outside buf whatever tail says).  The
 * kernel's own consumer, read(2), resynchronizes to head past such a tail.
 *
 * The producer never loops on shared state: one acquire load of tail, a
 * bounded copy, one release store of head.  It takes no lock, calls nothing
 * outside this file and allocates nothing, so it is safe in trap and NMI
 * context.  The engine's per-CPU depth guard ensures only one producer runs
 * per ring at a time.
 */
#include "kinst_ring.h"

#define	KINST_REC_ALIGN	8u

/*
 * Copy n bytes.  Word copy when both pointers and n are 8-byte aligned
 * (always true on the producer's ring side), bytes otherwise.  A compiler
 * may turn these loops into a call to memcpy; every kernel and libc
 * provides one, and we include no header for it.  Always inlined, so that
 * the trap path has no extra function a kernel tracer could probe (the
 * shims mark the exported entry points NOKPROBE and the like).
 */
static inline __attribute__((__always_inline__)) void
kinst_ring_copy(void *dst, const void *src, size_t n)
{
	size_t i;

	if ((((uintptr_t)dst | (uintptr_t)src | n) & (KINST_REC_ALIGN - 1)) ==
	    0) {
		uint64_t *d = dst;
		const uint64_t *s = src;

		for (i = 0; i < n / 8; i++)
			d[i] = s[i];
	} else {
		uint8_t *d = dst;
		const uint8_t *s = src;

		for (i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/* Read a record header from possibly unaligned memory. */
static inline __attribute__((__always_inline__)) void
kinst_ring_read_hdr(struct kinst_rec_hdr *h, const void *p)
{

	kinst_ring_copy(h, p, sizeof(*h));
}

int
kinst_ring_init_ctl(struct kinst_ring *r, struct kinst_ring_ctl *ctl,
    void *buf, uint32_t size)
{
	uint8_t *p;
	size_t i;

	if (r == NULL || buf == NULL || ctl == NULL)
		return (-1);
	if (size < 64 || (size & (size - 1)) != 0)
		return (-1);
	if (((uintptr_t)buf & (KINST_REC_ALIGN - 1)) != 0)
		return (-1);
	r->buf = buf;
	r->size = size;
	r->mask = size - 1;
	r->head = 0;
	r->written = 0;
	r->dropped = 0;
	p = (uint8_t *)ctl;
	for (i = 0; i < sizeof(*ctl); i++)
		p[i] = 0;
	ctl->size = size;
	r->ctl = ctl;
	return (0);
}

int
kinst_ring_init(struct kinst_ring *r, void *buf, uint32_t size)
{

	if (r == NULL)
		return (-1);
	return (kinst_ring_init_ctl(r, &r->own, buf, size));
}

/*
 * The consumer's position as the producer may use it: bytes in use, or
 * size + 1 when tail is not within the ring (a reader wrote garbage into
 * its mapped page): every record is then dropped until it is repaired.
 */
static inline __attribute__((__always_inline__)) uint64_t
kinst_ring_inuse(const struct kinst_ring *r, uint64_t head)
{
	uint64_t used;

	/* Pairs with the consumer's release store of tail. */
	used = head - KINST_LOAD_ACQUIRE(&r->ctl->tail);
	return (used <= r->size ? used : (uint64_t)r->size + 1);
}

/* Publish head: to the kernel's consumer and to a mapped one. */
static inline __attribute__((__always_inline__)) void
kinst_ring_publish(struct kinst_ring *r, uint64_t head)
{

	KINST_STORE_RELEASE(&r->head, head);
	KINST_STORE_RELEASE(&r->ctl->head, head);
}

static inline __attribute__((__always_inline__)) void
kinst_ring_drop(struct kinst_ring *r)
{

	(void)__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
}

void
kinst_ring_count_drop(struct kinst_ring *r)
{

	kinst_ring_drop(r);
}

int
kinst_ring_put(struct kinst_ring *r, const void *rec, uint32_t len)
{
	struct kinst_rec_hdr h;
	uint64_t head, used, off, room, need;

	/*
	 * Validate the record: whole header, 8-byte multiple, header size
	 * equal to len, not a filler (a filler would be skipped by the
	 * consumer and break hits == delivered + dropped).  A bad record is
	 * a drop, so the caller's accounting stays exact.
	 */
	if (rec == NULL || len < sizeof(struct kinst_rec_hdr) ||
	    (len & (KINST_REC_ALIGN - 1)) != 0 || len > r->size)
		goto drop;
	kinst_ring_read_hdr(&h, rec);
	if (h.size != len || h.type == KINST_REC_PAD)
		goto drop;

	head = KINST_LOAD_RELAXED(&r->head);	/* ours */
	used = kinst_ring_inuse(r, head);
	off = head & r->mask;
	room = r->size - off;			/* bytes up to the end of buf */
	need = len <= room ? len : room + len;	/* filler + record */
	if (used + need > r->size)
		goto drop;
	if (len > room) {
		struct kinst_rec_hdr pad;

		/* room >= 8: off and size are multiples of 8. */
		pad.size = (uint32_t)room;
		pad.type = KINST_REC_PAD;
		pad.flags = 0;
		kinst_ring_copy(r->buf + off, &pad, sizeof(pad));
		off = 0;
	}
	kinst_ring_copy(r->buf + off, rec, len);
	/* Publish the bytes above: pairs with the consumer's acquire. */
	kinst_ring_publish(r, head + need);
	KINST_STORE_RELAXED(&r->written, KINST_LOAD_RELAXED(&r->written) + 1);
	return (0);
drop:
	kinst_ring_drop(r);
	return (-1);
}

bool
kinst_ring_room(const struct kinst_ring *r, uint32_t len)
{
	uint64_t head, room, need;

	if (len > r->size)
		return (false);
	head = KINST_LOAD_RELAXED(&r->head);
	room = r->size - (head & r->mask);
	need = len <= room ? len : room + len;
	return (kinst_ring_inuse(r, head) + need <= r->size);
}

bool
kinst_ring_reached(const struct kinst_ring *r, uint32_t mark)
{

	if (mark > r->size / 2)
		mark = r->size / 2;
	return (kinst_ring_inuse(r, KINST_LOAD_RELAXED(&r->head)) >= mark);
}

/*
 * The consumer, for both kinds of reader: whole records between *tailp and
 * head (an acquired position) into dst, then the new tail stored with
 * release semantics.  head comes from the producer (read(2)) or from the
 * mapped page (a mapped reader, which may have written it itself): neither
 * it nor the tail is trusted beyond the bounds of buf.
 */
static size_t
kinst_ring_take(uint64_t head, uint64_t *tailp, const uint8_t *buf,
    uint32_t size, void *dst, size_t cap, bool *bad)
{
	struct kinst_rec_hdr h;
	uint64_t tail, tail0, off;
	size_t copied;

	copied = 0;
	tail = tail0 = KINST_LOAD_RELAXED(tailp);	/* ours */
	if (head - tail > size || (tail & (KINST_REC_ALIGN - 1)) != 0) {
		/* Positions out of the ring: resynchronize, skip all. */
		*bad = true;
		tail = head & ~(uint64_t)(KINST_REC_ALIGN - 1);
		goto out;
	}
	while (tail != head) {
		off = tail & (size - 1);
		kinst_ring_read_hdr(&h, buf + off);
		/*
		 * The producer only publishes valid headers; anything else
		 * means the buffer was overwritten behind our back.  Never
		 * trust it: discard everything published and stop rather
		 * than copy garbage or loop.
		 */
		if (h.size < sizeof(h) ||
		    (h.size & (KINST_REC_ALIGN - 1)) != 0 ||
		    h.size > size - off || h.size > head - tail) {
			*bad = true;
			tail = head;
			break;
		}
		if (h.type == KINST_REC_PAD) {
			tail += h.size;
			continue;
		}
		if (h.size > cap - copied)
			break;
		kinst_ring_copy((uint8_t *)dst + copied, buf + off, h.size);
		copied += h.size;
		tail += h.size;
	}
out:
	/*
	 * Free the space: our reads above happen before the producer's
	 * acquire load of tail lets it overwrite them.
	 */
	if (tail != tail0)
		KINST_STORE_RELEASE(tailp, tail);
	return (copied);
}

size_t
kinst_ring_get(struct kinst_ring *r, void *dst, size_t cap)
{
	bool bad;

	if (r->ctl == NULL)		/* no buffer yet (kinst_dev.c) */
		return (0);
	bad = false;
	/* Pairs with the producer's release store of head. */
	return (kinst_ring_take(KINST_LOAD_ACQUIRE(&r->head), &r->ctl->tail,
	    r->buf, r->size, dst, cap, &bad));
}

size_t
kinst_ring_map_get(struct kinst_ring_ctl *ctl, const void *data,
    uint32_t size, void *dst, size_t cap, bool *bad)
{

	*bad = false;
	if (size < 64 || (size & (size - 1)) != 0) {
		*bad = true;
		return (0);
	}
	return (kinst_ring_take(KINST_LOAD_ACQUIRE(&ctl->head), &ctl->tail,
	    data, size, dst, cap, bad));
}

bool
kinst_ring_empty(const struct kinst_ring *r)
{

	if (r->ctl == NULL)		/* no buffer yet (kinst_dev.c) */
		return (true);
	return (KINST_LOAD_ACQUIRE(&r->head) ==
	    KINST_LOAD_RELAXED(&r->ctl->tail));
}

uint64_t
kinst_ring_written(const struct kinst_ring *r)
{

	return (KINST_LOAD_RELAXED(&r->written));
}

uint64_t
kinst_ring_dropped(const struct kinst_ring *r)
{

	return (KINST_LOAD_RELAXED(&r->dropped));
}

size_t
kinst_rings_drain(struct kinst_ring *rings, uint32_t n, uint32_t *next,
    void *dst, size_t cap, size_t min_room)
{
	size_t done, got;
	uint32_t i, cpu;
	bool progress;

	if (n == 0)
		return (0);
	done = 0;
	do {
		progress = false;
		for (i = 0; i < n; i++) {
			cpu = (*next + i) % n;
			got = kinst_ring_get(&rings[cpu], (uint8_t *)dst + done,
			    cap - done);
			if (got != 0) {
				done += got;
				progress = true;
			}
		}
		*next = (*next + 1) % n;
	} while (progress && cap - done >= min_room);
	return (done);
}

bool
kinst_rings_above(const struct kinst_ring *rings, uint32_t n, uint32_t min)
{
	uint32_t i;

	if (min == 0)
		return (kinst_rings_have_data(rings, n));
	for (i = 0; i < n; i++)
		if (rings[i].ctl != NULL && kinst_ring_reached(&rings[i], min))
			return (true);
	return (false);
}

bool
kinst_rings_have_data(const struct kinst_ring *rings, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!kinst_ring_empty(&rings[i]))
			return (true);
	return (false);
}
