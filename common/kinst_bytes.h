/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Byte loops for the engine and control path, which may call no library
 * (kernel or user harness alike): the compiler must not turn them into
 * memset/memcpy calls, which the FreeBSD module excludes from tracing but
 * a kernel may not export under that name.  The zeroing store is volatile
 * for that reason.
 */
#ifndef KINST_BYTES_H
#define KINST_BYTES_H

#include "kinst_types.h"

static inline void
kinst_bzero(void *p, size_t n)
{
	volatile uint8_t *d = p;

	while (n-- > 0)
		*d++ = 0;
}

static inline void
kinst_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	while (n-- > 0)
		*d++ = *s++;
}

#endif /* !KINST_BYTES_H */
