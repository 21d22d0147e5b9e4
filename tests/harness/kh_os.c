/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/kinst_os.h for user space: the harness and the engine benchmark.
 * A "CPU" is a thread (kh_os_cpu_index, 0 unless a test sets it), the
 * monotonic clock, and plain memory copies for the emulator's stack and
 * memory accesses (the emulated code is our own, so its addresses are
 * valid; a wrong address crashes the test, which is a failure too).
 */
#include <sys/uio.h>

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kinst_isa.h"
#include "kinst_os.h"
#include "kinst_stack.h"
#include "kh.h"

__thread uint32_t kh_os_cpu_index;
static __thread int32_t kh_os_tid;
static int32_t	kh_pid;
static char	kh_comm[KINST_COMM_LEN];
static int	kh_os_ready;

void
kh_os_init(void)
{
	kh_pid = (int32_t)getpid();
	memset(kh_comm, 0, sizeof(kh_comm));
	strncpy(kh_comm, program_invocation_short_name, sizeof(kh_comm) - 1);
	kh_os_ready = 1;
}

uint32_t
kinst_os_cpu(void)
{
	return (kh_os_cpu_index);
}

int kh_fake_clock;
uint64_t kh_fake_now;

uint64_t
kinst_os_now_ns(void)
{
	struct timespec ts;

	if (kh_fake_clock)
		return (kh_fake_now);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/* One clock here: the harness's CPUs are this machine's. */
uint64_t
kinst_os_local_ns(void)
{
	return (kinst_os_now_ns());
}

void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	if (!kh_os_ready)
		kh_os_init();
	*pid = kh_pid;
	if (kh_os_tid == 0)
		kh_os_tid = (int32_t)gettid();	/* async-signal-safe */
	*tid = kh_os_tid;
	memcpy(comm, kh_comm, KINST_COMM_LEN);
}

/* The harness is one thread per process; tests may set the key. */
uint64_t kh_thread_key[2] = { 1, 1 };

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = kh_thread_key[0];
	key[1] = kh_thread_key[1];
}

void
kinst_os_wake_deferred(struct kinst_session *s)
{
	(void)s;
}

/*
 * When kh_read_hi != 0, refuse every read outside [kh_read_lo, kh_read_hi)
 * (equivalence_test:native_fallback sets it to the corpus's fixed stack):
 * a no-fault read stricter than the hardware, as a kernel's may be, so
 * that emulated indirect calls and jumps through memory must run their
 * native images (kinst_native_build).
 */
uint64_t kh_read_lo, kh_read_hi;

int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	if (addr == 0)
		return (EFAULT);
	if (kh_read_hi != 0 && (addr < kh_read_lo || addr + len > kh_read_hi))
		return (EFAULT);
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return (0);
}

/*
 * A probe program's user load: the whole harness is user memory.  Read it
 * through process_vm_readv() on ourselves, which fails (EFAULT) on an
 * unmapped page instead of faulting, as the kernels' no-fault reads do.
 */
int
kinst_os_read_user(uint64_t addr, void *buf, size_t len)
{
	struct iovec local, remote;

	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = (void *)(uintptr_t)addr;
	remote.iov_len = len;
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) !=
	    (ssize_t)len)
		return (EFAULT);
	return (0);
}

int
kinst_os_write_stack(uint64_t addr, const void *buf, size_t len)
{
	if (addr == 0)
		return (EFAULT);
	memcpy((void *)(uintptr_t)addr, buf, len);
	return (0);
}

/*
 * Stacks: the harness's code keeps frame pointers (tests/harness builds
 * the stack test with -fno-omit-frame-pointer), so the portable
 * frame-pointer walk FreeBSD uses works here too, bounded by the stack
 * range a test sets (kh_stack_lo/hi; 0: no callers reported).  Reads are
 * plain copies: the range is the test's own live stack.
 */
uint64_t kh_stack_lo, kh_stack_hi;

static int
kh_stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < kh_stack_lo || addr + len > kh_stack_hi)
		return (EFAULT);
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return (0);
}

uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	static const struct kinst_mem_ops ops = { kh_stack_read, NULL, NULL };
	struct kinst_fpwalk w;

	(void)osctx;
	*truncated = false;
	if (kh_stack_hi == 0)
		return (0);
	w.fp = regs->gpr[KINST_RBP];
	w.sp = regs->gpr[KINST_RSP];
	w.lo = kh_stack_lo;
	w.hi = kh_stack_hi;
	w.pc_min = 4096;
	w.at_entry = offset == 0;
	return (kinst_fpwalk(&w, &ops, pcs, max, truncated));
}
