/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Single-producer / single-consumer ring of variable-size records.
 *
 * One ring per CPU (per open file): the producer is the trap handler on that
 * CPU (nested hits never reach the producer: the engine's per-CPU depth guard
 * turns them into drops), the consumer is read(2), serialized by the shim.
 * Records are 8-byte aligned, start with struct kinst_rec_hdr, and never wrap:
 * a record that would cross the end is preceded by a KINST_REC_PAD filler up
 * to the end.  A full ring drops the record and counts it; the producer never
 * blocks or spins.  Positions are free-running 64-bit byte counters, the
 * consumer's in a page the reader may map (kinst_abi.h: mapped rings).
 */
#ifndef KINST_RING_H
#define KINST_RING_H

#include "kinst_abi.h"

struct kinst_ring {
	uint8_t		*buf;
	uint32_t	size;		/* power of two, >= 64 */
	uint32_t	mask;
	uint64_t	head;		/* producer position (written by producer
					   only; the one the kernel trusts) */
	uint64_t	written;	/* records written (producer only) */
	uint64_t	dropped;	/* records dropped (producer only) */
	/*
	 * The positions the consumer sees: ctl->head, a copy of head the
	 * producer publishes, and ctl->tail, the consumer's position.  ctl
	 * is own, or a page a reader maps (kinst_ring_init_ctl): then a
	 * hostile reader may write anything there, and nothing in this file
	 * trusts ctl->head or ctl->tail beyond the bounds of buf.
	 */
	struct kinst_ring_ctl *ctl;
	struct kinst_ring_ctl own;
} KINST_CACHE_ALIGNED;	/* a session's rings[cpu]: each its CPU's own line(s) */

/* size must be a power of two >= 64; returns 0 or -1. */
int	kinst_ring_init(struct kinst_ring *r, void *buf, uint32_t size);

/* The same with the positions in ctl (zeroed here; a mappable page). */
int	kinst_ring_init_ctl(struct kinst_ring *r, struct kinst_ring_ctl *ctl,
	    void *buf, uint32_t size);

/*
 * Producer: append one record (len bytes, len a multiple of 8, starting with
 * a kinst_rec_hdr whose size field equals len).  Returns 0 if written, -1 if
 * dropped (counted).
 */
int	kinst_ring_put(struct kinst_ring *r, const void *rec, uint32_t len);

/*
 * Producer: would a record of len bytes fit now?  Lets the producer skip
 * building a record that kinst_ring_put() would drop (it still must call
 * kinst_ring_count_drop() to account for it).
 */
bool	kinst_ring_room(const struct kinst_ring *r, uint32_t len);

/* Producer: count a record dropped for another reason (nested hit). */
void	kinst_ring_count_drop(struct kinst_ring *r);

/*
 * Consumer: copy whole records into dst (capacity cap bytes), oldest first,
 * skipping fillers, and free their space.  Returns the number of bytes
 * copied (0 if the ring is empty or the oldest record does not fit in cap).
 */
size_t	kinst_ring_get(struct kinst_ring *r, void *dst, size_t cap);

/* Consumer: are there records to read? */
bool	kinst_ring_empty(const struct kinst_ring *r);

/*
 * A wake-up decision (producer side, or poll): does the ring hold at least
 * mark bytes, a mark above half the ring counting as half (a ring of large
 * records might never hold more)?  Bytes in use are the producer's head
 * less the consumer's tail; a tail outside the ring counts as full.
 */
bool	kinst_ring_reached(const struct kinst_ring *r, uint32_t mark);

/*
 * The consumer of a mapped ring (user space: the ctl page and the size
 * bytes of data the reader mapped): like kinst_ring_get(), with the
 * published head.  Returns the bytes copied; *bad is set when the ring's
 * contents were not valid (everything published was then skipped).
 */
size_t	kinst_ring_map_get(struct kinst_ring_ctl *ctl, const void *data,
	    uint32_t size, void *dst, size_t cap, bool *bad);

/*
 * Consumer side of a set of per-CPU rings (read(2)): copy whole records
 * from rings[0..n) into dst, round robin starting at *next (advanced for
 * the next call), until the rings are empty or fewer than min_room bytes
 * of dst are left.  Returns the bytes copied.
 */
size_t	kinst_rings_drain(struct kinst_ring *rings, uint32_t n, uint32_t *next,
	    void *dst, size_t cap, size_t min_room);

/*
 * Is any of rings[0..n) non-empty?  Has any reached min bytes
 * (kinst_ring_reached; min 0: non-empty)?
 */
bool	kinst_rings_have_data(const struct kinst_ring *rings, uint32_t n);
bool	kinst_rings_above(const struct kinst_ring *rings, uint32_t n,
	    uint32_t min);

/* Counters, readable from any context (relaxed). */
uint64_t kinst_ring_written(const struct kinst_ring *r);
uint64_t kinst_ring_dropped(const struct kinst_ring *r);

#endif /* !KINST_RING_H */
