/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stand-in for FreeBSD's <sys/sysctl.h>, for compiling cli/device/live_freebsd.cc
 * on another host only (see linker.h here): sysctlbyname(3) as FreeBSD
 * 15.1 declares it (sys/sys/sysctl.h).
 */
#ifndef KINST_STUB_SYS_SYSCTL_H
#define KINST_STUB_SYS_SYSCTL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
int	sysctlbyname(const char *, void *, size_t *, const void *, size_t);
#ifdef __cplusplus
}
#endif

#endif
