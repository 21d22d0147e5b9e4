// SPDX-License-Identifier: BSD-2-Clause
/*
 * kinst_irqtest.ko: a test module for kinst's text synchronization
 * (tests/vm/testmod), never part of kinst.
 *
 * Writing MS to /sys/module/kinst_irqtest/parameters/spin starts a kernel
 * thread bound to CPU `cpu` (a parameter, default 1) that disables
 * interrupts and busy-waits MS milliseconds (1..2000) before enabling them
 * again: for that long the CPU takes no IPI, as a CPU does that loops on a
 * stale translation of an int3 with interrupts off (kinst_linux_os.c,
 * "Text writes").  The write returns at once; reading `state` gives
 * "idle", "starting" (the thread exists), "spinning" (interrupts are off
 * now) or "done", and `spins` how many spins have ended.
 */
#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/errno.h>
#include <linux/irqflags.h>
#include <linux/kthread.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/cpumask.h>

static int cpu = 1;
module_param(cpu, int, 0600);
MODULE_PARM_DESC(cpu, "the CPU that spins with interrupts off");

enum { KT_IDLE, KT_STARTING, KT_SPINNING, KT_DONE };
static atomic_t kinst_irqtest_state = ATOMIC_INIT(KT_IDLE);
static atomic_t kinst_irqtest_spins = ATOMIC_INIT(0);

static int
kinst_irqtest_thread(void *arg)
{
	unsigned long flags;
	u64 end;

	/*
	 * Timed on ktime_get_ns(), not mdelay(): under TCG the second CPU's
	 * delay loop is calibrated against irregular ticks and has waited a
	 * hundredth of its time (kinst_lattest.c), which made the spin end
	 * before the disarm it is there to hold up.
	 */
	local_irq_save(flags);
	atomic_set(&kinst_irqtest_state, KT_SPINNING);
	end = ktime_get_ns() + (u64)(unsigned long)arg * NSEC_PER_MSEC;
	while (ktime_get_ns() < end)
		cpu_relax();
	local_irq_restore(flags);
	atomic_inc(&kinst_irqtest_spins);
	atomic_set(&kinst_irqtest_state, KT_DONE);
	module_put_and_kthread_exit(0);
	return (0);
}

static int
kinst_irqtest_spin_set(const char *val, const struct kernel_param *kp)
{
	struct task_struct *t;
	unsigned long ms;
	int error;

	(void)kp;
	error = kstrtoul(val, 0, &ms);
	if (error != 0)
		return (error);
	if (ms < 1 || ms > 2000 || cpu < 0 || cpu >= nr_cpu_ids ||
	    !cpu_online(cpu))
		return (-EINVAL);
	if (atomic_cmpxchg(&kinst_irqtest_state, KT_IDLE, KT_STARTING) !=
	    KT_IDLE && atomic_cmpxchg(&kinst_irqtest_state, KT_DONE,
	    KT_STARTING) != KT_DONE)
		return (-EBUSY);
	if (!try_module_get(THIS_MODULE)) {
		atomic_set(&kinst_irqtest_state, KT_IDLE);
		return (-ENODEV);
	}
	t = kthread_create(kinst_irqtest_thread, (void *)ms,
	    "kinst_irqtest/%d", cpu);
	if (IS_ERR(t)) {
		module_put(THIS_MODULE);
		atomic_set(&kinst_irqtest_state, KT_IDLE);
		return (PTR_ERR(t));
	}
	kthread_bind(t, cpu);
	wake_up_process(t);
	return (0);
}

static int
kinst_irqtest_spins_get(char *buf, const struct kernel_param *kp)
{
	(void)kp;
	return (sprintf(buf, "%d\n", atomic_read(&kinst_irqtest_spins)));
}

static const struct kernel_param_ops kinst_irqtest_spins_ops = {
	.get = kinst_irqtest_spins_get,
};
module_param_cb(spins, &kinst_irqtest_spins_ops, NULL, 0400);

static const struct kernel_param_ops kinst_irqtest_spin_ops = {
	.set = kinst_irqtest_spin_set,
	.get = kinst_irqtest_spins_get,
};
module_param_cb(spin, &kinst_irqtest_spin_ops, NULL, 0600);

static int
kinst_irqtest_state_get(char *buf, const struct kernel_param *kp)
{
	static const char *const names[] = {
		"idle", "starting", "spinning", "done"
	};

	(void)kp;
	return (sprintf(buf, "%s\n", names[atomic_read(&kinst_irqtest_state)]));
}

static const struct kernel_param_ops kinst_irqtest_state_ops = {
	.get = kinst_irqtest_state_get,
};
module_param_cb(state, &kinst_irqtest_state_ops, NULL, 0400);

MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("kinst test module: a CPU with interrupts off for a while");
