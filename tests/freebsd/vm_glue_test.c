/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kmod/freebsd/kinst_fbsd_vm.c (mapped rings' VM glue) run on the build
 * host: the file is compiled by clang exactly as the FreeBSD compile check
 * compiles it (../shared/freebsd-decls, FreeBSD's kernel flags, without the
 * kernel code model), and linked with this file, which implements the
 * FreeBSD VM calls it makes as a recording fake: pages are host memory,
 * a KVA range is a table of which page each slot maps, an object counts
 * its references and frees its pages with the last one.  What is checked
 * is what the compile check cannot see:
 *  - the ring: every page grabbed into the object at its index, zeroed,
 *    wired, valid, unbusied, entered at kva + i * PAGE_SIZE, under the
 *    object's lock; what the kernel writes through the KVA is what a
 *    mapping of the object at that offset reads;
 *  - the mapping: the object with a reference of its own, and the offset
 *    kinst_dev_mmap() computed (not 0, not the ring's KVA);
 *  - the free: the KVA range removed and freed, every page unwired, our
 *    reference dropped, the pages living on while a mapping holds its own;
 *  - a page that cannot be had (VM_ALLOC_WAITFAIL) at any index: NULL, and
 *    everything taken so far given back; KVA or object refused likewise.
 * The fakes' prototypes are the ABI of the declarations the glue is
 * compiled against (vm_offset_t, vm_size_t, vm_pindex_t and vm_ooffset_t
 * are 64-bit, vm_prot_t and objtype_t a byte).
 */
#include <atf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kinst_dev.h"

struct vm_object;
/* kmod/freebsd/kinst_fbsd.h's, with the declarations' 64-bit vm_ooffset_t. */
void	kinst_fbsd_map_object(const struct kinst_dev_map *m, uint64_t *offset,
	    struct vm_object **object);

#ifdef KINST_VM_GLUE_SKIP
ATF_TC_WITHOUT_HEAD(vm_glue);
ATF_TC_BODY(vm_glue, tc)
{
	atf_tc_skip("SKIPPED: clang or ../shared/freebsd-decls/vm is absent at "
	    "configure time: kmod/freebsd/kinst_fbsd_vm.c was NOT run");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, vm_glue);
	return (atf_no_error());
}
#else
#define	PG		4096
#define	MAXPAGES	16
#define	OBJT_PHYS_V	4		/* enum obj_type's OBJT_PHYS */
#define	ALLOC_WANT	(0x0010 | 0x0020 | 0x0040)	/* WAITFAIL WIRED ZERO */
#define	XBUSY		0x02u		/* VPB_SINGLE_EXCLUSIVE */
#define	UNBUSIED	0x01u		/* VPB_UNBUSIED */

/* Our pages: busy_lock first, as the declarations' struct vm_page. */
struct fpage {
	unsigned int	busy_lock;
	int		wired, valid, freed;
	uint8_t		*mem;
};

/*
 * The lock first, as the declarations' struct vm_object: a struct rwlock,
 * whose struct lock_object (a name, two ints, a witness pointer: 24 bytes)
 * precedes the word rw_wlock() is given.
 */
struct fobj {
	void		*lo_name;
	unsigned	lo_flags, lo_data;
	void		*lo_witness;
	uintptr_t	rw_lock;
	int		locked;
	int		refs;
	int		dead;
	unsigned	npages;
	struct fpage	*pages[MAXPAGES];
};

/* One KVA range at a time. */
static struct {
	uint64_t	base;
	uint64_t	size;
	int		allocated;
	struct fpage	*slot[MAXPAGES];
	int		removed;	/* slots pmap_qremove'd */
} kva;

static struct fobj *lastobj;
static int grab_fail_at = -1;	/* index whose vm_page_grab returns NULL */
static int kva_fail, pager_fail;
static int grab_flags_bad, unlocked_calls, xunbusy_hard;

uintptr_t __stack_chk_guard = 0x5a5a5a5a5a5a5a5aull;

/* ---- the fakes (names and ABI: ../shared/freebsd-decls) ---- */

void _rw_wlock_cookie(volatile uintptr_t *c, const char *f, int l);
void _rw_wunlock_cookie(volatile uintptr_t *c, const char *f, int l);
uint64_t kva_alloc(uint64_t size);
void kva_free(uint64_t addr, uint64_t size);
void *vm_pager_allocate(unsigned char type, void *handle, uint64_t size,
    unsigned char prot, uint64_t off, void *cred);
struct fpage *vm_page_grab(struct fobj *o, uint64_t idx, int flags);
struct fpage *vm_page_lookup(struct fobj *o, uint64_t idx);
bool vm_page_unwire_noq(struct fpage *m);
void vm_page_valid(struct fpage *m);
void vm_page_xunbusy_hard(struct fpage *m);
void pmap_qenter(uint64_t va, struct fpage **m, int count);
void pmap_qremove(uint64_t va, int count);
void vm_object_reference(struct fobj *o);
void vm_object_deallocate(struct fobj *o);

static struct fobj *
obj_of(volatile uintptr_t *c)
{
	return ((struct fobj *)(void *)((uintptr_t)c -
	    offsetof(struct fobj, rw_lock)));
}

void
_rw_wlock_cookie(volatile uintptr_t *c, const char *f, int l)
{
	(void)f; (void)l;
	ATF_REQUIRE(!obj_of(c)->locked);
	obj_of(c)->locked = 1;
}

void
_rw_wunlock_cookie(volatile uintptr_t *c, const char *f, int l)
{
	(void)f; (void)l;
	ATF_REQUIRE(obj_of(c)->locked);
	obj_of(c)->locked = 0;
}

uint64_t
kva_alloc(uint64_t size)
{
	ATF_REQUIRE(!kva.allocated);
	if (kva_fail)
		return (0);
	memset(&kva, 0, sizeof(kva));
	kva.base = 0xfffffe0012340000ull;
	kva.size = size;
	kva.allocated = 1;
	return (kva.base);
}

void
kva_free(uint64_t addr, uint64_t size)
{
	ATF_REQUIRE(kva.allocated);
	ATF_REQUIRE_EQ(addr, kva.base);
	ATF_REQUIRE_EQ(size, kva.size);
	kva.allocated = 0;
}

void *
vm_pager_allocate(unsigned char type, void *handle, uint64_t size,
    unsigned char prot, uint64_t off, void *cred)
{
	struct fobj *o;

	ATF_REQUIRE_EQ(type, OBJT_PHYS_V);
	ATF_REQUIRE(handle == NULL && cred == NULL && off == 0);
	ATF_REQUIRE_EQ(prot, 3);	/* VM_PROT_RW */
	ATF_REQUIRE(size % PG == 0 && size / PG <= MAXPAGES);
	if (pager_fail)
		return (NULL);
	o = calloc(1, sizeof(*o));
	ATF_REQUIRE(o != NULL);
	o->refs = 1;
	o->npages = (unsigned)(size / PG);
	lastobj = o;
	return (o);
}

struct fpage *
vm_page_grab(struct fobj *o, uint64_t idx, int flags)
{
	struct fpage *m;

	if (!o->locked)
		unlocked_calls++;
	if (flags != ALLOC_WANT)
		grab_flags_bad++;
	ATF_REQUIRE(idx < o->npages && o->pages[idx] == NULL);
	if ((int)idx == grab_fail_at)
		return (NULL);
	m = calloc(1, sizeof(*m));
	ATF_REQUIRE(m != NULL);
	m->mem = malloc(PG);
	ATF_REQUIRE(m->mem != NULL);
	memset(m->mem, 0xa5, PG);	/* garbage unless VM_ALLOC_ZERO */
	if (flags & 0x0040)
		memset(m->mem, 0, PG);
	m->wired = (flags & 0x0020) != 0;
	m->busy_lock = XBUSY;
	o->pages[idx] = m;
	return (m);
}

struct fpage *
vm_page_lookup(struct fobj *o, uint64_t idx)
{
	if (!o->locked)
		unlocked_calls++;
	ATF_REQUIRE(idx < o->npages);
	return (o->pages[idx]);
}

bool
vm_page_unwire_noq(struct fpage *m)
{
	ATF_REQUIRE(m != NULL && m->wired > 0);
	m->wired--;
	return (m->wired == 0);
}

void
vm_page_valid(struct fpage *m)
{
	m->valid = 1;
}

void
vm_page_xunbusy_hard(struct fpage *m)
{
	(void)m;
	xunbusy_hard++;		/* the inline cmpset failed: not xbusied */
}

void
pmap_qenter(uint64_t va, struct fpage **m, int count)
{
	int i;
	uint64_t s;

	ATF_REQUIRE(kva.allocated);
	ATF_REQUIRE(va >= kva.base && (va - kva.base) % PG == 0);
	s = (va - kva.base) / PG;
	ATF_REQUIRE(count > 0 && s + (uint64_t)count <= kva.size / PG);
	for (i = 0; i < count; i++) {
		ATF_REQUIRE(kva.slot[s + i] == NULL);
		kva.slot[s + i] = m[i];
	}
}

void
pmap_qremove(uint64_t va, int count)
{
	int i;

	ATF_REQUIRE_EQ(va, kva.base);
	ATF_REQUIRE(count > 0 && (uint64_t)count <= kva.size / PG);
	for (i = 0; i < count; i++) {
		ATF_REQUIRE(kva.slot[i] != NULL);
		kva.slot[i] = NULL;
	}
	kva.removed += count;
}

void
vm_object_reference(struct fobj *o)
{
	ATF_REQUIRE(!o->dead && o->refs > 0);
	o->refs++;
}

void
vm_object_deallocate(struct fobj *o)
{
	unsigned i;

	ATF_REQUIRE(!o->dead && o->refs > 0);
	if (--o->refs > 0)
		return;
	/* Termination: a page still wired is detached, never freed. */
	for (i = 0; i < o->npages; i++)
		if (o->pages[i] != NULL) {
			ATF_CHECK_EQ_MSG(o->pages[i]->wired, 0,
			    "page %u still wired at the object's end", i);
			o->pages[i]->freed = 1;
		}
	o->dead = 1;
}

/* ---- helpers ---- */

/* A byte the kernel writes through the ring's KVA, as its page holds it. */
static uint8_t *
kva_byte(void *ring, uint64_t off)
{
	uint64_t va = (uint64_t)(uintptr_t)ring + off;
	struct fpage *m;

	ATF_REQUIRE(va >= kva.base && va < kva.base + kva.size);
	m = kva.slot[(va - kva.base) / PG];
	ATF_REQUIRE(m != NULL);
	return (&m->mem[(va - kva.base) % PG]);
}

static void
reset(void)
{
	memset(&kva, 0, sizeof(kva));
	lastobj = NULL;
	grab_fail_at = -1;
	kva_fail = pager_fail = 0;
	grab_flags_bad = unlocked_calls = xunbusy_hard = 0;
}

static void
free_obj(struct fobj *o)
{
	unsigned i;

	for (i = 0; i < o->npages; i++)
		if (o->pages[i] != NULL) {
			free(o->pages[i]->mem);
			free(o->pages[i]);
		}
	free(o);
}

/* ---- tests ---- */

ATF_TC_WITHOUT_HEAD(ring_pages);
ATF_TC_BODY(ring_pages, tc)
{
	struct fobj *o;
	void *handle, *ring;
	unsigned i;

	reset();
	ring = kinst_os_ring_alloc(4 * PG, &handle);
	ATF_REQUIRE(ring != NULL);
	o = lastobj;
	ATF_REQUIRE(handle == (void *)o);
	ATF_CHECK_EQ((uint64_t)(uintptr_t)ring, kva.base);
	ATF_CHECK_EQ(kva.size, 4 * PG);
	ATF_CHECK_EQ(grab_flags_bad, 0);
	ATF_CHECK_EQ(unlocked_calls, 0);
	ATF_CHECK_EQ(xunbusy_hard, 0);
	ATF_CHECK(!o->locked);
	for (i = 0; i < 4; i++) {
		ATF_REQUIRE(o->pages[i] != NULL);
		ATF_CHECK_EQ_MSG(kva.slot[i], o->pages[i],
		    "KVA page %u does not map the object's page %u", i, i);
		ATF_CHECK(o->pages[i]->wired == 1 && o->pages[i]->valid);
		ATF_CHECK_EQ(o->pages[i]->busy_lock, UNBUSIED);
		ATF_CHECK(o->pages[i]->mem[0] == 0 && o->pages[i]->mem[PG - 1] == 0);
	}
	/* What the kernel writes at ring + off is the object's byte at off. */
	*kva_byte(ring, 2 * PG + 17) = 0x42;
	ATF_CHECK_EQ(o->pages[2]->mem[17], 0x42);
	kinst_os_ring_free(ring, 4 * PG, handle);
	ATF_CHECK(!kva.allocated);
	ATF_CHECK_EQ(kva.removed, 4);
	ATF_CHECK(o->dead);
	for (i = 0; i < 4; i++)
		ATF_CHECK(o->pages[i]->freed);
	free_obj(o);
}

ATF_TC_WITHOUT_HEAD(mapping_offset_and_reference);
ATF_TC_BODY(mapping_offset_and_reference, tc)
{
	struct kinst_dev_map m;
	struct vm_object *obj;
	struct fobj *o;
	uint64_t off;
	void *handle, *ring;

	reset();
	ring = kinst_os_ring_alloc(8 * PG, &handle);
	ATF_REQUIRE(ring != NULL);
	o = lastobj;
	/* The data pages of a ring whose first page is its ctl page. */
	memset(&m, 0, sizeof(m));
	m.base = ring;
	m.handle = handle;
	m.off = 3 * PG;
	m.len = 5 * PG;
	m.data = 1;
	off = 0xdeadbeef;
	obj = NULL;
	kinst_fbsd_map_object(&m, &off, &obj);
	ATF_CHECK_EQ_MSG(off, 3 * PG, "the mapping's offset is %#jx, "
	    "kinst_dev_mmap said %#jx", (uintmax_t)off, (uintmax_t)(3 * PG));
	ATF_CHECK(obj == (struct vm_object *)(void *)o);
	ATF_CHECK_EQ(o->refs, 2);
	/* A record written now is read through the mapping at its offset. */
	*kva_byte(ring, 3 * PG + 5) = 0x77;
	ATF_CHECK_EQ(o->pages[(off + 5) / PG]->mem[(off + 5) % PG], 0x77);
	/* The ring is freed (the file closed) while the mapping lives. */
	kinst_os_ring_free(ring, 8 * PG, handle);
	ATF_CHECK(!kva.allocated);
	ATF_CHECK(!o->dead);
	ATF_CHECK_EQ(o->refs, 1);
	ATF_CHECK_EQ(o->pages[3]->mem[5], 0x77);
	/* munmap: the mapping's reference goes, and the pages with it. */
	vm_object_deallocate(o);
	ATF_CHECK(o->dead);
	ATF_CHECK(o->pages[3]->freed);
	free_obj(o);
}

ATF_TC_WITHOUT_HEAD(page_shortage_unwinds);
ATF_TC_BODY(page_shortage_unwinds, tc)
{
	struct fobj *o;
	void *handle, *ring;
	int at;
	unsigned i;

	for (at = 0; at < 5; at++) {
		reset();
		grab_fail_at = at;
		handle = (void *)1;
		ring = kinst_os_ring_alloc(5 * PG, &handle);
		ATF_CHECK_MSG(ring == NULL, "a shortage at page %d gave a ring", at);
		ATF_CHECK(handle == NULL);
		o = lastobj;
		ATF_REQUIRE(o != NULL);
		ATF_CHECK_MSG(!kva.allocated, "shortage at %d: KVA kept", at);
		ATF_CHECK_EQ_MSG(kva.removed, at, "shortage at %d: %d pages "
		    "removed from the KVA", at, kva.removed);
		ATF_CHECK_MSG(o->dead, "shortage at %d: the object kept", at);
		ATF_CHECK(!o->locked);
		for (i = 0; i < (unsigned)at; i++)
			ATF_CHECK_MSG(o->pages[i]->wired == 0 &&
			    o->pages[i]->freed, "shortage at %d: page %u "
			    "still wired or kept", at, i);
		free_obj(o);
	}
}

ATF_TC_WITHOUT_HEAD(refusals);
ATF_TC_BODY(refusals, tc)
{
	void *handle;

	reset();
	handle = (void *)1;
	ATF_CHECK(kinst_os_ring_alloc(0, &handle) == NULL && handle == NULL);
	ATF_CHECK(kinst_os_ring_alloc(PG + 1, &handle) == NULL);
	ATF_CHECK(!kva.allocated && lastobj == NULL);
	kva_fail = 1;
	ATF_CHECK(kinst_os_ring_alloc(PG, &handle) == NULL);
	ATF_CHECK(lastobj == NULL);
	reset();
	pager_fail = 1;
	ATF_CHECK(kinst_os_ring_alloc(PG, &handle) == NULL);
	ATF_CHECK_MSG(!kva.allocated, "the KVA was kept when the object was refused");
	/* Freeing nothing does nothing. */
	kinst_os_ring_free(NULL, PG, NULL);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, ring_pages);
	ATF_TP_ADD_TC(tp, mapping_offset_and_reference);
	ATF_TP_ADD_TC(tp, page_shortage_unwinds);
	ATF_TP_ADD_TC(tp, refusals);
	return (atf_no_error());
}
#endif /* KINST_VM_GLUE_SKIP */
