/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fixed-width types for common/ when it is compiled into the FreeBSD module
 * (KINST_KERNEL_TYPES): the kernel's own definitions.  <sys/types.h> gives
 * the intN_t/uintN_t types, size_t, uintptr_t and, in the kernel, bool;
 * <sys/param.h> gives NULL.
 */
#ifndef KINST_PLATFORM_TYPES_H
#define KINST_PLATFORM_TYPES_H

#include <sys/param.h>
#include <sys/types.h>

#endif /* !KINST_PLATFORM_TYPES_H */
