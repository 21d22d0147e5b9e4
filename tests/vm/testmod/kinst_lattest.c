// SPDX-License-Identifier: BSD-2-Clause
/*
 * kinst_lattest.ko: a test module for kinstctl latency and FUNC:return
 * (tests/vm/testmod), never part of kinst.
 *
 * Writing N to /sys/module/kinst_lattest/parameters/run runs N rounds;
 * each round calls, in this order:
 *
 *	kinst_lattest_wait(wait_us)	busy-waits wait_us microseconds
 *					(kinst_lattest_timed_spin) and
 *					returns wait_us
 *	kinst_lattest_wait(0)		the early path: returns -EINVAL at once
 *	kinst_lattest_rec(3)		recursion: four activations, each
 *					busy-waiting rec_us before and after
 *					its inner call (the innermost once)
 *	kinst_lattest_err(i)		i = the round's number from 0: returns
 *					-ENOENT, -EAGAIN, -EINTR or 7 for
 *					i % 4 = 0, 1, 2, 3
 *
 * Reading `run` gives "rounds=N".
 *
 * kinst_lattest_wait(wait_us) times its own busy wait with local_clock(),
 * preemption off (kinst_lattest_timed_spin), and `wait_local` reads
 * "n=N min=NS sum=NS" over the busy waits since `run` was last written:
 * the per-CPU clock's own figures for the calls that kinstctl latency
 * --clock local times from outside (on one CPU that clock never goes back,
 * so each of kinst's samples is at least the call's own figure).
 *
 * Writing N to `spawn` starts N kernel threads (N <= 64) that run at once;
 * thread i calls kinst_lattest_wait(wait_us), then kinst_lattest_open(i),
 * and, when i is even, busy-waits 100 us and calls kinst_lattest_close(i);
 * an odd one exits without it.  Writing MS to `sleep` starts a thread
 * that sleeps MS milliseconds inside kinst_lattest_sleep(MS).  `threads`
 * reads how many of these threads have not exited yet.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/errno.h>
#include <linux/kthread.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/sched/clock.h>
#include <linux/spinlock.h>

static int wait_us = 2000;
module_param(wait_us, int, 0600);
MODULE_PARM_DESC(wait_us, "microseconds kinst_lattest_wait busy-waits (1..100000)");
static int rec_us = 500;
module_param(rec_us, int, 0600);
MODULE_PARM_DESC(rec_us, "microseconds each kinst_lattest_rec activation busy-waits per side");

static volatile long kinst_lattest_sink;
static unsigned long kinst_lattest_rounds;

/*
 * A busy wait timed by the clock, not udelay()'s calibrated loop: in a QEMU
 * TCG guest the second CPU calibrates its loops_per_jiffy at boot against
 * timer ticks that a loaded host delivers irregularly ("calibrate_delay_
 * direct() failed to get a good estimate"), and udelay() there has waited
 * from a hundredth to 1.5 times its time, which made the latency scenario's
 * comparisons fail.  ktime_get_ns() is one clock for every CPU.
 */
noinline void
kinst_lattest_spin(unsigned int us)
{
	u64 end = ktime_get_ns() + (u64)us * NSEC_PER_USEC;

	while (ktime_get_ns() < end)
		cpu_relax();
}

static DEFINE_SPINLOCK(kinst_lattest_lock);
static u64 kinst_lattest_wl_n, kinst_lattest_wl_min, kinst_lattest_wl_sum;

static void
kinst_lattest_wl_add(u64 ns)
{
	unsigned long flags;

	spin_lock_irqsave(&kinst_lattest_lock, flags);
	if (kinst_lattest_wl_n == 0 || ns < kinst_lattest_wl_min)
		kinst_lattest_wl_min = ns;
	kinst_lattest_wl_sum += ns;
	kinst_lattest_wl_n++;
	spin_unlock_irqrestore(&kinst_lattest_lock, flags);
}

/*
 * The busy wait of kinst_lattest_wait(), timed here with local_clock().
 * The two readings and kinst's at kinst_lattest_wait()'s entry and return
 * around them must be on one CPU: preemption is off between the two, and
 * between kinst's and them there is no preemption point under this
 * kernel's voluntary preemption (Debian's default; with preempt=full an
 * interrupt's return could move the thread there).  Its own function, so
 * that kinst_lattest_wait() has one call (the guest scripts' latency FROM
 * TO times it).
 */
noinline void
kinst_lattest_timed_spin(unsigned int us)
{
	u64 t0, t1;

	preempt_disable();
	t0 = local_clock();
	kinst_lattest_spin(us);
	t1 = local_clock();
	preempt_enable();
	kinst_lattest_wl_add(t1 - t0);
}

noinline int
kinst_lattest_wait(int us)
{
	if (us <= 0)
		return (-EINVAL);
	kinst_lattest_timed_spin(us);
	kinst_lattest_sink = us;
	return (us);
}

noinline long
kinst_lattest_rec(int depth)
{
	long r;

	kinst_lattest_spin(READ_ONCE(rec_us));
	if (depth <= 0)
		return (0);
	r = kinst_lattest_rec(depth - 1);
	kinst_lattest_sink = r;		/* no tail call, no loop */
	kinst_lattest_spin(READ_ONCE(rec_us));
	return (r + depth);
}

noinline int
kinst_lattest_err(unsigned long i)
{
	kinst_lattest_sink = (long)i;
	switch (i % 4) {
	case 0:
		return (-ENOENT);
	case 1:
		return (-EAGAIN);
	case 2:
		return (-EINTR);
	}
	return (7);
}

noinline void
kinst_lattest_open(long i)
{
	kinst_lattest_sink = i;
}

noinline void
kinst_lattest_close(long i)
{
	kinst_lattest_sink = -i;
}

noinline long
kinst_lattest_sleep(int ms)
{
	msleep(ms);
	kinst_lattest_sink = ms;
	return (ms);
}

static atomic_t kinst_lattest_live = ATOMIC_INIT(0);

static int
kinst_lattest_thread(void *arg)
{
	long i = (long)arg;

	kinst_lattest_sink += kinst_lattest_wait(READ_ONCE(wait_us));
	kinst_lattest_open(i);
	if ((i & 1) == 0) {
		kinst_lattest_spin(100);
		kinst_lattest_close(i);
	}
	atomic_dec(&kinst_lattest_live);
	module_put_and_kthread_exit(0);
}

static int
kinst_lattest_sleeper(void *arg)
{
	kinst_lattest_sleep((int)(long)arg);
	atomic_dec(&kinst_lattest_live);
	module_put_and_kthread_exit(0);
}

/* Start fn(arg) in a thread that holds a reference to this module. */
static int
kinst_lattest_start(int (*fn)(void *), long arg)
{
	struct task_struct *t;

	if (!try_module_get(THIS_MODULE))
		return (-ENODEV);
	atomic_inc(&kinst_lattest_live);
	t = kthread_run(fn, (void *)arg, "kinst_lattest/%ld", arg);
	if (IS_ERR(t)) {
		atomic_dec(&kinst_lattest_live);
		module_put(THIS_MODULE);
		return (PTR_ERR(t));
	}
	return (0);
}

static int
kinst_lattest_spawn(const char *val, const struct kernel_param *kp)
{
	int n, i, error;

	if (kstrtoint(val, 0, &n) != 0 || n < 1 || n > 64)
		return (-EINVAL);
	for (i = 0; i < n; i++)
		if ((error = kinst_lattest_start(kinst_lattest_thread, i)) != 0)
			return (error);
	return (0);
}

static int
kinst_lattest_sleep_set(const char *val, const struct kernel_param *kp)
{
	int ms;

	if (kstrtoint(val, 0, &ms) != 0 || ms < 1 || ms > 60000)
		return (-EINVAL);
	return (kinst_lattest_start(kinst_lattest_sleeper, ms));
}

static int
kinst_lattest_threads_get(char *buf, const struct kernel_param *kp)
{
	return (scnprintf(buf, PAGE_SIZE, "%d\n", atomic_read(&kinst_lattest_live)));
}

static const struct kernel_param_ops kinst_lattest_spawn_ops = {
	.set = kinst_lattest_spawn,
	.get = kinst_lattest_threads_get,
};
module_param_cb(spawn, &kinst_lattest_spawn_ops, NULL, 0600);
MODULE_PARM_DESC(spawn, "write N: start N threads at once (see the source)");
static const struct kernel_param_ops kinst_lattest_sleep_ops = {
	.set = kinst_lattest_sleep_set,
	.get = kinst_lattest_threads_get,
};
module_param_cb(sleep, &kinst_lattest_sleep_ops, NULL, 0600);
MODULE_PARM_DESC(sleep, "write MS: a thread sleeps MS ms in kinst_lattest_sleep");
static const struct kernel_param_ops kinst_lattest_threads_ops = {
	.get = kinst_lattest_threads_get,
};
module_param_cb(threads, &kinst_lattest_threads_ops, NULL, 0400);
MODULE_PARM_DESC(threads, "threads started here that have not exited");

static int
kinst_lattest_set(const char *val, const struct kernel_param *kp)
{
	int n, i, us = READ_ONCE(wait_us);
	unsigned long flags;

	if (kstrtoint(val, 0, &n) != 0 || n < 0 || n > 10000 || us < 1 || us > 100000)
		return (-EINVAL);
	spin_lock_irqsave(&kinst_lattest_lock, flags);
	kinst_lattest_wl_n = kinst_lattest_wl_min = kinst_lattest_wl_sum = 0;
	spin_unlock_irqrestore(&kinst_lattest_lock, flags);
	for (i = 0; i < n; i++) {
		kinst_lattest_sink += kinst_lattest_wait(us);
		kinst_lattest_sink += kinst_lattest_wait(0);
		kinst_lattest_sink += kinst_lattest_rec(3);
		kinst_lattest_sink += kinst_lattest_err(kinst_lattest_rounds);
		kinst_lattest_rounds++;
	}
	return (0);
}

static int
kinst_lattest_wl_get(char *buf, const struct kernel_param *kp)
{
	unsigned long flags;
	u64 n, min, sum;

	spin_lock_irqsave(&kinst_lattest_lock, flags);
	n = kinst_lattest_wl_n;
	min = kinst_lattest_wl_min;
	sum = kinst_lattest_wl_sum;
	spin_unlock_irqrestore(&kinst_lattest_lock, flags);
	return (scnprintf(buf, PAGE_SIZE, "n=%llu min=%llu sum=%llu\n", n, min, sum));
}

static const struct kernel_param_ops kinst_lattest_wl_ops = {
	.get = kinst_lattest_wl_get,
};
module_param_cb(wait_local, &kinst_lattest_wl_ops, NULL, 0400);
MODULE_PARM_DESC(wait_local, "the busy waits since run was written, by local_clock(): n=N min=NS sum=NS");

static int
kinst_lattest_get(char *buf, const struct kernel_param *kp)
{
	return (scnprintf(buf, PAGE_SIZE, "rounds=%lu\n", kinst_lattest_rounds));
}

static const struct kernel_param_ops kinst_lattest_ops = {
	.set = kinst_lattest_set,
	.get = kinst_lattest_get,
};
module_param_cb(run, &kinst_lattest_ops, NULL, 0600);
MODULE_PARM_DESC(run, "write N: run N rounds; read: rounds so far");

MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("kinst tests: latency and return probes");
