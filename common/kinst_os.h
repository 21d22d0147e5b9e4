/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the portable engine needs from the OS, implemented once by each shim
 * (kmod/linux, kmod/freebsd) and by the user-space test harness
 * (tests/harness).  These are plain functions resolved at link time: no
 * indirect calls in trap context.
 *
 * Trap context (called from kinst_engine_hit(), any CPU, interrupts off,
 * possibly nested in an NMI): none of these may take a lock, sleep,
 * allocate, wake a thread directly, or call a traceable function.
 */
#ifndef KINST_OS_H
#define KINST_OS_H

#include "kinst_abi.h"

struct kinst_session;

/* Index of the current CPU, 0 <= cpu < the engine's ncpus. */
uint32_t kinst_os_cpu(void);

/* Monotonic clock in nanoseconds. */
uint64_t kinst_os_now_ns(void);

/* Current thread: process id, thread id, command name (NUL-terminated). */
void	kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN]);

/*
 * A record was written to s's ring on this CPU: arrange for readers to be
 * woken later (Linux irq_work; FreeBSD readers poll with a short timeout).
 * Must not wake anything directly.
 */
void	kinst_os_wake_deferred(struct kinst_session *s);

/*
 * Read len bytes of memory at addr without faulting (an emulated indirect
 * call/jmp through memory, ret's return address).  0 or non-zero on failure.
 */
int	kinst_os_read(uint64_t addr, void *buf, size_t len);

/*
 * Write len bytes of stack at addr, which lies below the interrupted stack
 * pointer (an emulated call or pushf); the shim guarantees that this room
 * does not overlap its trap frame.  0 or non-zero on failure.
 */
int	kinst_os_write_stack(uint64_t addr, const void *buf, size_t len);

#endif /* !KINST_OS_H */
