/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The probe table: open addressing with linear probing over
 * KINST_PTABLE_SLOTS probe pointers, keyed by probe address.
 *
 * A slot holds NULL (empty), KINST_PTABLE_TOMB (a removed probe) or a live
 * probe.  Lookups run in trap context on any CPU, possibly nested, and take
 * no lock; inserts and removals are serialized by the caller.  Probes never
 * move once inserted.
 *
 * Publication.  An insert fills in the probe completely, then stores its
 * pointer into the slot with release semantics; a lookup loads slots with
 * acquire semantics, so everything written to the probe before the insert
 * (addr, trampoline, classification, ...) is visible to a lookup that sees
 * the pointer.  The shim inserts a probe before it writes the int3, and the
 * text patching serializes every CPU, so any CPU that traps on the address
 * does so after the insert.
 *
 * Correctness of a concurrent lookup.  Let a live probe P sit in slot k and
 * hash to home slot h.  The table keeps this invariant after every single
 * slot store (not merely after every operation):
 *
 *   (I) every slot in the cyclic range [h, k) is non-NULL.
 *
 * It holds when P is inserted: the insert scans from h and takes the first
 * tombstone or empty slot, so every slot it passed held a live probe.  The
 * stores that follow keep it:
 *  - an insert turns NULL or a tombstone into a probe: no new NULL;
 *  - a removal turns a probe into a tombstone: no new NULL;
 *  - a tombstone at slot j becomes NULL only if no live probe's range [h, k)
 *    contains j (kinst_ptable_sweep() below), so (I) holds for every probe.
 * A lookup for P's address started after P's insert visits h, h+1, ... in
 * order.  By (I), every value any of those slots holds while P is live is
 * non-NULL (and, by coherence, the lookup cannot see a NULL older than the
 * values present at P's insert, which happen before the lookup).  A
 * tombstone or another probe makes it move on; so it reaches slot k, where P
 * has been since before it started, and returns P: an armed probe is never
 * missed, whatever inserts and removals run at the same time.
 *
 * A lookup returns a probe only after comparing its addr with the key, so it
 * never returns a probe for another address.  A lookup for an address that is
 * being inserted or removed concurrently returns that probe or NULL, both
 * correct.  The removed probe itself stays readable until the shim's
 * quiescence (see kinst_probe.h).  Every scan is bounded by the table size,
 * so a lookup terminates even if no slot is empty.
 *
 * Capacity: at most KINST_MAX_PROBES (half the slots) are live, so the load
 * factor of live probes stays <= 1/2.  Tombstones are reused by inserts (the
 * first one on the insert's path) and swept back to NULL on every removal
 * wherever (I) allows, so they cannot accumulate beyond slots that lie on
 * some live probe's path.
 */
#include "kinst_abi.h"
#include "kinst_probe.h"

#define	KINST_PT_BITS	14
#define	KINST_PT_MASK	(KINST_PTABLE_SLOTS - 1u)

_Static_assert((1u << KINST_PT_BITS) == KINST_PTABLE_SLOTS,
    "KINST_PT_BITS must match KINST_PTABLE_SLOTS");
_Static_assert(KINST_MAX_PROBES <= KINST_PTABLE_SLOTS / 2,
    "the table needs free slots to keep probe sequences short");

/*
 * Fold the high half in (kernel addresses share it, module and user-space
 * test addresses may not), then Fibonacci hashing: multiply by 2^64/phi and
 * take the top bits.  Consecutive instruction addresses of one function,
 * the common case, land far apart.
 */
static inline __attribute__((__always_inline__)) uint32_t
kinst_ptable_hash(uint64_t addr)
{
	uint64_t x;

	x = addr ^ (addr >> 32);
	x *= 0x9e3779b97f4a7c15ull;
	return ((uint32_t)(x >> (64 - KINST_PT_BITS)));
}

uint32_t
kinst_ptable_home(uint64_t addr)
{

	return (kinst_ptable_hash(addr));
}

uint64_t
kinst_probe_hits(const struct kinst_probe *p, uint32_t ncpus)
{
	uint64_t n;
	uint32_t i;

	n = KINST_LOAD_RELAXED(&p->hits);
	if (p->hitc != NULL)
		for (i = 0; i < ncpus; i++)
			n += KINST_LOAD_RELAXED(
			    &p->hitc[(size_t)i * KINST_HITC_PER]);
	return (n);
}

void
kinst_ptable_init(struct kinst_ptable *t)
{
	uint32_t i;

	for (i = 0; i < KINST_PTABLE_SLOTS; i++)
		KINST_STORE_RELAXED(&t->slots[i], NULL);
	t->count = 0;
	t->tombstones = 0;
}

struct kinst_probe *
kinst_ptable_lookup(const struct kinst_ptable *t, uint64_t addr)
{
	struct kinst_probe *p;
	uint32_t i, n;

	i = kinst_ptable_hash(addr);	/* inlined: no call on the trap path */
	for (n = 0; n < KINST_PTABLE_SLOTS; n++) {
		/* Pairs with the release store that published the probe. */
		p = KINST_LOAD_ACQUIRE(&t->slots[i]);
		if (p == NULL)
			return (NULL);
		if (p != KINST_PTABLE_TOMB && p->addr == addr)
			return (p);
		i = (i + 1) & KINST_PT_MASK;
	}
	return (NULL);
}

int
kinst_ptable_insert(struct kinst_ptable *t, struct kinst_probe *p)
{
	struct kinst_probe *q;
	uint32_t i, n, dest;
	bool have_dest;

	/*
	 * Walk the whole probe sequence up to the first empty slot: a
	 * duplicate may sit beyond tombstones.  Remember the first free
	 * (tombstone or empty) slot on the way.
	 */
	have_dest = false;
	dest = 0;
	i = kinst_ptable_hash(p->addr);
	for (n = 0; n < KINST_PTABLE_SLOTS; n++) {
		q = t->slots[i];		/* only we write slots */
		if (q == NULL) {
			if (!have_dest) {
				have_dest = true;
				dest = i;
			}
			break;
		}
		if (q == KINST_PTABLE_TOMB) {
			if (!have_dest) {
				have_dest = true;
				dest = i;
			}
		} else if (q->addr == p->addr)
			return (KINST_PT_EXISTS);
		i = (i + 1) & KINST_PT_MASK;
	}
	if (t->count >= KINST_MAX_PROBES || !have_dest)
		return (KINST_PT_FULL);
	if (t->slots[dest] == KINST_PTABLE_TOMB)
		t->tombstones--;
	t->count++;
	/* Publish the fully built probe: pairs with the lookup's acquire. */
	KINST_STORE_RELEASE(&t->slots[dest], p);
	return (KINST_PT_OK);
}

/*
 * Turn back into NULL every tombstone of the cluster (maximal run of
 * non-NULL slots) around slot j that no live probe's range [home, slot)
 * covers; see (I) above.  Index the cluster from its first slot s: a live
 * probe at index dk with home at index dh covers the indices dh .. dk-1 (its
 * home is inside the cluster, by (I) and because slot s-1 is NULL).  Going
 * backwards, a tombstone at index d is covered iff some live probe at an
 * index > d has its home at an index <= d: keep the smallest such home.
 * Each store keeps (I), so lookups running meanwhile stay correct.
 */
static void
kinst_ptable_sweep(struct kinst_ptable *t, uint32_t j)
{
	struct kinst_probe *q;
	uint32_t s, e, n, len, d, dh, minhome, i;

	/* Find the cluster's first slot; give up if there is no NULL at all. */
	s = j;
	for (n = 0; n < KINST_PTABLE_SLOTS; n++) {
		if (t->slots[(s - 1) & KINST_PT_MASK] == NULL)
			break;
		s = (s - 1) & KINST_PT_MASK;
	}
	if (n == KINST_PTABLE_SLOTS)
		return;
	/* Its last slot: there is a NULL before s, so this ends. */
	e = j;
	while (t->slots[(e + 1) & KINST_PT_MASK] != NULL)
		e = (e + 1) & KINST_PT_MASK;
	len = ((e - s) & KINST_PT_MASK) + 1;

	minhome = len;
	for (d = len; d-- > 0;) {
		i = (s + d) & KINST_PT_MASK;
		q = t->slots[i];
		if (q == KINST_PTABLE_TOMB) {
			if (minhome > d) {
				KINST_STORE_RELEASE(&t->slots[i], NULL);
				t->tombstones--;
			}
		} else {
			dh = (kinst_ptable_hash(q->addr) - s) & KINST_PT_MASK;
			if (dh < minhome)
				minhome = dh;
		}
	}
}

int
kinst_ptable_remove(struct kinst_ptable *t, struct kinst_probe *p)
{
	struct kinst_probe *q;
	uint32_t i, n;

	i = kinst_ptable_hash(p->addr);
	for (n = 0; n < KINST_PTABLE_SLOTS; n++) {
		q = t->slots[i];
		if (q == NULL)
			break;
		if (q == p) {
			/*
			 * A tombstone, not NULL: lookups for probes further
			 * along this sequence must keep going.
			 */
			KINST_STORE_RELEASE(&t->slots[i], KINST_PTABLE_TOMB);
			t->count--;
			t->tombstones++;
			kinst_ptable_sweep(t, i);
			return (KINST_PT_OK);
		}
		i = (i + 1) & KINST_PT_MASK;
	}
	return (KINST_PT_NOENT);
}
