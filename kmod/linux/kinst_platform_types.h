/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fixed-width types for common/ when it is compiled into the Linux module
 * (KINST_KERNEL_TYPES): the kernel's own definitions.
 */
#ifndef KINST_PLATFORM_TYPES_H
#define KINST_PLATFORM_TYPES_H

#include <linux/types.h>
#include <linux/stddef.h>

#endif /* !KINST_PLATFORM_TYPES_H */
