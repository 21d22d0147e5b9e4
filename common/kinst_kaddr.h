/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which addresses a no-fault load in trap context may touch (amd64).
 *
 * The load itself is the shim's (on Linux an exception-table entry in the
 * module's own asm, kinst_os_read()): a fault on a kernel address then
 * ends in the kernel's fixup and the read fails.  A fault anywhere else
 * would not: a non-canonical address raises #GP, not #PF, and a user
 * address, or the vsyscall page that Linux's fault handler treats as one,
 * takes the user-fault path (locks, signals) that the trap path must never
 * run.  So an address range is accepted only if it lies wholly in the
 * canonical upper half, at or above lo (Linux: TASK_SIZE_MAX + PAGE_SIZE),
 * does not wrap, and does not meet [nogo, nogo + nogo_len) (Linux: the
 * vsyscall page).  virt_bits is the CPU's virtual address width (48, 57).
 * Freestanding and lock-free: callable from trap context.
 */
#ifndef KINST_KADDR_H
#define KINST_KADDR_H

#include "kinst_types.h"

static inline int
kinst_kaddr_ok(uint64_t addr, uint64_t len, uint64_t lo, unsigned int virt_bits,
    uint64_t nogo, uint64_t nogo_len)
{
	uint64_t last, canon;

	if (virt_bits < 32 || virt_bits > 63)
		return (0);
	if (len == 0)
		return (1);			/* touches nothing */
	last = addr + (len - 1);
	if (last < addr)
		return (0);			/* wraps */
	canon = ~(uint64_t)0 << (virt_bits - 1);	/* lowest upper-half address */
	if (addr < canon || addr < lo)
		return (0);
	if (nogo_len != 0 && addr < nogo + nogo_len && last >= nogo)
		return (0);
	return (1);
}

#endif /* !KINST_KADDR_H */
