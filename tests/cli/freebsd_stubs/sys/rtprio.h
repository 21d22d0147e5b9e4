/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stand-in for FreeBSD's <sys/rtprio.h>, for compiling cli/device/live_freebsd.cc
 * on another host only (see linker.h here).  The values FreeBSD 15.1 has
 * (sys/sys/rtprio.h, sys/sys/priority.h: RTP_PRIO_NORMAL is PRI_TIMESHARE;
 * rtprio(2)); lwpid_t is FreeBSD's 32-bit thread id.
 */
#ifndef KINST_STUB_SYS_RTPRIO_H
#define KINST_STUB_SYS_RTPRIO_H

#include <sys/types.h>

#include <stdint.h>

typedef int32_t	lwpid_t;

#define	RTP_PRIO_REALTIME	2
#define	RTP_PRIO_NORMAL		3
#define	RTP_PRIO_IDLE		4
#define	RTP_PRIO_MIN		0
#define	RTP_PRIO_MAX		31

#define	RTP_LOOKUP		0
#define	RTP_SET			1

struct rtprio {
	u_short	type;
	u_short	prio;
};

#ifdef __cplusplus
extern "C" {
#endif
int	rtprio(int, pid_t, struct rtprio *);
int	rtprio_thread(int, lwpid_t, struct rtprio *);
#ifdef __cplusplus
}
#endif

#endif
