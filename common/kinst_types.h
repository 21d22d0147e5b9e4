/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fixed-width types for the portable engine.
 *
 * common/ is freestanding C11: it includes no libc and no OS header of its
 * own.  In user space and in any hosted build the compiler's freestanding
 * headers give us the types.  A kernel build defines KINST_KERNEL_TYPES and
 * puts a "kinst_platform_types.h" of its own (kmod/<os>/) on the include path
 * that provides uint8_t ... uint64_t, int32_t, int64_t, size_t, uintptr_t and
 * bool the way that kernel spells them.
 */
#ifndef KINST_TYPES_H
#define KINST_TYPES_H

#ifdef KINST_KERNEL_TYPES
#include "kinst_platform_types.h"
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#define	KINST_NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Per-CPU data that its CPU writes at every hit lies alone on its cache
 * line: in a plain array indexed by CPU, neighbours share a line and every
 * hit on one CPU takes it from the others (false sharing).
 */
#define	KINST_CACHE_LINE	64
#define	KINST_CACHE_ALIGNED	__attribute__((__aligned__(KINST_CACHE_LINE)))

/* A counter one CPU writes, in an array indexed by CPU. */
struct kinst_pcpu_count {
	uint64_t	n;
} KINST_CACHE_ALIGNED;

/* Relaxed/acquire/release helpers over the GCC/Clang __atomic builtins. */
#define	KINST_LOAD_RELAXED(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define	KINST_LOAD_ACQUIRE(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define	KINST_STORE_RELAXED(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define	KINST_STORE_RELEASE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

/*
 * A local of the probe path that the code writes before every read, kept
 * out of the compiler's zeroing of locals (-ftrivial-auto-var-init=zero:
 * Linux's INIT_STACK_ALL_ZERO, which Debian's kernels have, and FreeBSD's
 * INIT_ALL_ZERO).  That zeroing is a rep stos per local per hit; under
 * QEMU's TCG each of its iterations is a translated block of its own
 * (docs/engine.md, "Cost of a hit").  Only for locals that never reach
 * user space unwritten.
 */
#if defined(__has_attribute)
#if __has_attribute(__uninitialized__)
#define	KINST_NOINIT	__attribute__((__uninitialized__))
#endif
#endif
#ifndef KINST_NOINIT
#define	KINST_NOINIT
#endif

#endif /* !KINST_TYPES_H */
