/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FreeBSD: the VM glue of mapped rings (common/kinst_abi.h, kinst(4)
 * MMAP): the ring memory (kinst_os_ring_alloc/free of common/kinst_dev.h)
 * and the object a mapping of it gets (kinst_fbsd_map_object, for
 * kinst_fbsd_dev.c's d_mmap_single).  A file of its own: the VM
 * interfaces it uses (vm_page.h, vm_pager.h, rwlock.h) came late to the
 * project's compile-check declarations, which now have them, transcribed
 * from 15.1 (tests/freebsd/compile_test.sh, vm_glue_compiles).
 * Run live on FreeBSD 15.1 (issue 24's note).
 */

#include <sys/param.h>
#include <sys/systm.h>
#include <sys/errno.h>
#include <sys/lock.h>
#include <sys/rwlock.h>		/* VM_OBJECT_WLOCK */

#include <vm/vm.h>
#include <vm/vm_param.h>
#include <vm/vm_extern.h>
#include <vm/pmap.h>
#include <vm/vm_object.h>
#include <vm/vm_page.h>
#include <vm/vm_pager.h>

#include "kinst_fbsd.h"

_Static_assert(KINST_EACCES == EACCES, "kinst_dev.h errno values");
_Static_assert(KINST_MAP_PAGE == PAGE_SIZE, "KINST_MAP_PAGE");

/*
 * Ring memory a reader may map (common/kinst_dev.h): the pages of an
 * anonymous OBJT_PHYS VM object, as sys/kern/kern_kcov.c keeps its buffer.
 * The kernel reaches them through a KVA range of its own (pmap_qenter); a
 * mapping (kinst_fbsd_dev.c, kinst_mmap_single) holds a reference to the
 * object, so the pages outlive kinst_os_ring_free() until its munmap.
 * The object's own pager is the kernel's phys pager: nothing of this
 * module is called for it once the module is gone.
 *
 * Each page is grabbed zeroed (vm_page_grab zeroes one that is not
 * PG_ZERO), wired for as long as the kernel writes it, valid (a fault of
 * the reader maps it as it is; the phys pager zeroes a page that is not
 * valid, which would wipe records already written) and unbusied.  A PHYS
 * object's pages are unmanaged: on no page queue, never paged out, so a
 * mapping needs no wiring of its own once ours is dropped.
 *
 * VM_ALLOC_WAITFAIL: in a shortage vm_page_grab() waits once for free
 * pages (dropping the object lock) and returns NULL, which becomes ENOMEM
 * for the ARM.  Without it, it would retry until memory comes, with the
 * control lock held, which the closes of other files (whose rings would
 * free memory) need.  kern_kcov.c waits.
 */
static void
kinst_ring_unback(vm_object_t obj, vm_offset_t kva, size_t size,
    vm_pindex_t npages)
{
	vm_pindex_t i;

	if (npages != 0)
		pmap_qremove(kva, (int)npages);
	kva_free(kva, size);
	/*
	 * Unwire before the deallocation: the termination of an object only
	 * detaches a page that is still wired, never frees it.
	 */
	VM_OBJECT_WLOCK(obj);
	for (i = 0; i < npages; i++)
		(void)vm_page_unwire_noq(vm_page_lookup(obj, i));
	VM_OBJECT_WUNLOCK(obj);
	/* The pages go with the last reference: ours or a mapping's. */
	vm_object_deallocate(obj);
}

void *
kinst_os_ring_alloc(size_t size, void **handle)
{
	vm_object_t obj;
	vm_offset_t kva;
	vm_page_t m;
	vm_pindex_t i, npages;

	*handle = NULL;
	npages = size / PAGE_SIZE;
	if (npages == 0 || size % PAGE_SIZE != 0)
		return (NULL);
	kva = kva_alloc(size);
	if (kva == 0)
		return (NULL);
	/* The default phys pager takes no charge: no credential. */
	obj = vm_pager_allocate(OBJT_PHYS, NULL, size, VM_PROT_RW, 0, NULL);
	if (obj == NULL) {
		kva_free(kva, size);
		return (NULL);
	}
	VM_OBJECT_WLOCK(obj);
	for (i = 0; i < npages; i++) {
		m = vm_page_grab(obj, i,
		    VM_ALLOC_NORMAL | VM_ALLOC_ZERO | VM_ALLOC_WIRED |
		    VM_ALLOC_WAITFAIL);
		if (m == NULL)
			break;
		vm_page_valid(m);
		vm_page_xunbusy(m);
		pmap_qenter(kva + (vm_offset_t)i * PAGE_SIZE, &m, 1);
	}
	VM_OBJECT_WUNLOCK(obj);
	if (i < npages) {
		kinst_ring_unback(obj, kva, size, i);
		return (NULL);
	}
	*handle = obj;
	return ((void *)kva);
}

void
kinst_os_ring_free(void *p, size_t size, void *handle)
{
	if (p == NULL)
		return;
	kinst_ring_unback(handle, (vm_offset_t)p, size, size / PAGE_SIZE);
}

void
kinst_fbsd_map_object(const struct kinst_dev_map *m, vm_ooffset_t *offset,
    struct vm_object **object)
{
	/* The mapping's reference; devfs_mmap_f drops it if mapping fails. */
	vm_object_reference(m->handle);
	*offset = (vm_ooffset_t)m->off;
	*object = m->handle;
}
