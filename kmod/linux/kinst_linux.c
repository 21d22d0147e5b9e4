/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: module load/unload and the /dev/kinst device.
 *
 * Each open file is a session: per-CPU rings (one for every possible CPU
 * index below nr_cpu_ids), per-CPU hit counters, and the probes it armed.
 * Closing the file (including the exit of a killed process) disarms and
 * frees everything it armed.  The misc device's fops hold a reference on
 * this module for as long as a file is open, so the module cannot be
 * unloaded while any probe exists: rmmod then fails (delete_module(2):
 * EWOULDBLOCK with O_NONBLOCK, as rmmod calls it), and succeeds once the
 * files are closed, by which time every original byte
 * has been restored and every trampoline freed after quiescence.  A forced
 * unload (rmmod -f) tells the readers to go away and waits until every
 * file is closed (kinst_exit).
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/wait.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/log2.h>
#include <linux/ioctl.h>
#include <linux/list.h>
#include <linux/kprobes.h>
#include <linux/cpuhotplug.h>
#include <linux/rwsem.h>
#include <linux/sched.h>
#include <linux/rcupdate.h>

#include "kinst_linux.h"

static unsigned int ring_size = 512 * 1024;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size,
    "bytes of ring per CPU per open file (power of two, 4 KiB .. 64 MiB)");

#define	KINST_READ_MAX	(256 * 1024)	/* bytes one read(2) returns at most */
/* A blocked read(2) looks at the rings at least this often (see below). */
#define	KINST_READ_RECHECK	(HZ / 10)

struct kinst_engine *kinst_engine;
static struct kinst_ctl kinst_ctl;

/* The jump optimizer (common/kinst_control.c: kinst_ctl_optimize). */
#define	KINST_OPT_DELAY	(HZ / 20)
static bool kinst_opt_running;	/* for debugfs kinst/jump */

static void
kinst_opt_fn(struct work_struct *w)
{
	(void)w;
	WRITE_ONCE(kinst_opt_running, true);
	(void)kinst_ctl_optimize(&kinst_ctl);
	WRITE_ONCE(kinst_opt_running, false);
}
static DECLARE_DELAYED_WORK(kinst_opt_work, kinst_opt_fn);

uint32_t
kinst_linux_njump(bool *optimizing)
{
	*optimizing = READ_ONCE(kinst_opt_running);
	return (READ_ONCE(kinst_ctl.njump));
}

/* Open files, for the unload path's sweep (see kinst_exit). */
static LIST_HEAD(kinst_files);
static DEFINE_MUTEX(kinst_files_lock);

/*
 * Set once by kinst_exit: the module is going (a forced unload may find
 * files open).  Readers then get ENODEV, poll() EPOLLERR | EPOLLHUP.  The
 * ioctls run under kinst_gate (read) and kinst_exit sets the flag under it
 * (write), so that no ioctl is in progress, or can start, once it is set.
 */
static bool kinst_dying;
static DECLARE_RWSEM(kinst_gate);
static int kinst_cpuhp_state = -1;
/* Woken by kinst_cpu_dead(); every poll() waits on it too. */
static DECLARE_WAIT_QUEUE_HEAD(kinst_cpu_dead_wq);

struct kinst_file {
	struct kinst_csession cs;
	struct list_head link;		/* kinst_files */
	struct kinst_ring *rings;
	uint64_t	*hits;
	void		**bufs;		/* ring memory, per CPU */
	uint32_t	ncpus;
	uint32_t	next_cpu;	/* read(2) round robin */
	struct mutex	read_lock;
	wait_queue_head_t wq;
	struct irq_work	work;
	atomic_t	waiting;	/* a reader wants a wakeup */
	uint8_t		*bounce;
};

static int
kinst_errno(int err)
{
	switch (err) {
	case KINST_E_OK:	return (0);
	case KINST_E_INVAL:	return (-EINVAL);
	case KINST_E_NOENT:	return (-ENOENT);
	case KINST_E_REFUSED:	return (-EOPNOTSUPP);
	case KINST_E_EXIST:	return (-EEXIST);
	case KINST_E_NOSPC:	return (-ENOSPC);
	case KINST_E_NOMEM:	return (-ENOMEM);
	case KINST_E_FAULT:	return (-EFAULT);
	case KINST_E_TOOBIG:	return (-EFBIG);
	default:		return (-EIO);
	}
}

/*
 * Trap context: a record was written; wake readers later, never here.
 *
 * Only a CPU that is online queues the irq_work.  A CPU going offline
 * (Linux 6.1, x86) runs, in this order and all on itself:
 *
 *   take_cpu_down() (stop_machine, interrupts off, every other online CPU
 *   spinning in the stopper) -> __cpu_disable() = native_cpu_disable() ->
 *   cpu_disable_common() -> remove_cpu_from_maps() -> set_cpu_online(cpu,
 *   false), then apic_soft_disable(); -> the CPUHP "dying" callbacks, among
 *   them smpcfd_dying_cpu(), whose irq_work_run() runs this CPU's irq_work
 *   lists a last time -> the idle loop: cpuhp_report_idle_dead(),
 *   arch_cpu_idle_dead() -> native_play_dead() -> play_dead_common() ->
 *   mwait/hlt_play_dead(), never to return.
 *
 * (Checked on Debian's 6.1.0-57 live text: take_cpu_down calls
 * smp_ops.cpu_disable, then __cpuhp_invoke_callback_range; native_cpu_disable
 * calls cpu_disable_common, which calls set_cpu_online, then
 * apic_soft_disable; smpcfd_dying_cpu calls irq_work_run.)  cpu_online() of
 * the current CPU compiles to one bt on __cpu_online_mask: no call.
 *
 * So a hit after that last flush (cpuhp_report_idle_dead, play_dead_common
 * and everything else the dying CPU runs from there on) happens with the
 * CPU's online bit already clear: an irq_work it queued would sit on a
 * list nobody runs, with IRQ_WORK_BUSY set, and irq_work_sync() in
 * kinst_release() would spin forever (and irq_work_queue() from any other
 * CPU would fail to claim it: no reader would be woken again).  The bit is
 * written only by the CPU itself (cleared above, set again in
 * start_secondary() before interrupts are enabled), so reading our own bit
 * here, in trap context, is exact: no other CPU can change it under us.
 * If it is set, the work we queue goes on the list of a CPU that either
 * stays online (the self-IPI runs it) or goes down later, and then the
 * dying flush above runs it before the bit can be cleared.  If it is
 * clear, we queue nothing: the record stays in the ring, where a blocked
 * read(2) finds it within KINST_READ_RECHECK, poll() at the next wake-up
 * (the next hit on an online CPU, or kinst_cpu_dead() below once the CPU
 * is dead).  A disarm never overlaps that window: the control lock holds
 * off CPU hotplug (kinst_os_ctl_lock in kinst_linux_os.c).  Hence no kinst irq_work is ever left on the list of a CPU
 * that is not online, nothing of ours runs when a CPU comes back (no stale
 * work pointing at a freed file), and irq_work_sync() waits only for work
 * that an online CPU will run.
 */
void
kinst_os_wake_deferred(struct kinst_session *s)
{
	struct kinst_file *kf = container_of(s, struct kinst_file, cs.s);

	if (!cpu_online(raw_smp_processor_id()))
		return;
	/* Order the ring's head store before the load of "waiting". */
	smp_mb();
	if (atomic_read(&kf->waiting) != 0)
		irq_work_queue(&kf->work);
}
NOKPROBE_SYMBOL(kinst_os_wake_deferred);

static void
kinst_irq_work(struct irq_work *w)
{
	struct kinst_file *kf = container_of(w, struct kinst_file, work);

	atomic_set(&kf->waiting, 0);
	wake_up_interruptible(&kf->wq);
}

static void
kinst_file_free(struct kinst_file *kf)
{
	uint32_t i;

	if (kf->bufs != NULL)
		for (i = 0; i < kf->ncpus; i++)
			vfree(kf->bufs[i]);
	kvfree(kf->bufs);
	kvfree(kf->rings);
	kvfree(kf->hits);
	kvfree(kf->bounce);
	kfree(kf);
}

static int
kinst_open(struct inode *ip, struct file *fp)
{
	struct kinst_file *kf;
	uint32_t i, n;

	n = nr_cpu_ids;
	kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	if (kf == NULL)
		return (-ENOMEM);
	kf->ncpus = n;
	kf->rings = kvcalloc(n, sizeof(*kf->rings), GFP_KERNEL);
	kf->hits = kvcalloc(n, sizeof(*kf->hits), GFP_KERNEL);
	kf->bufs = kvcalloc(n, sizeof(*kf->bufs), GFP_KERNEL);
	kf->bounce = kvmalloc(KINST_READ_MAX, GFP_KERNEL);
	if (kf->rings == NULL || kf->hits == NULL || kf->bufs == NULL ||
	    kf->bounce == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		kf->bufs[i] = vzalloc(ring_size);
		if (kf->bufs[i] == NULL)
			goto nomem;
		if (kinst_ring_init(&kf->rings[i], kf->bufs[i], ring_size) != 0)
			goto nomem;
	}
	mutex_init(&kf->read_lock);
	init_waitqueue_head(&kf->wq);
	init_irq_work(&kf->work, kinst_irq_work);
	atomic_set(&kf->waiting, 0);
	kinst_session_init(&kf->cs.s, kf->rings, kf->hits, n);
	kf->cs.s.os_priv = kf;
	/* The opener never traces itself (its reads would feed back). */
	kf->cs.s.exclude_pid = current->tgid;
	kinst_ctl_session_init(&kinst_ctl, &kf->cs);
	/* An open that raced with misc_deregister() in kinst_exit. */
	mutex_lock(&kinst_files_lock);
	if (kinst_dying) {
		mutex_unlock(&kinst_files_lock);
		kinst_file_free(kf);
		return (-ENODEV);
	}
	list_add(&kf->link, &kinst_files);
	mutex_unlock(&kinst_files_lock);
	fp->private_data = kf;
	return (nonseekable_open(ip, fp));
nomem:
	kinst_file_free(kf);
	return (-ENOMEM);
}

static int
kinst_release(struct inode *ip, struct file *fp)
{
	struct kinst_file *kf = fp->private_data;

	/* Disarm, restore, quiesce, free trampolines: no producer is left. */
	kinst_ctl_session_fini(&kinst_ctl, &kf->cs);
	/*
	 * The work is pending, if at all, on an online CPU, which runs it
	 * (kinst_os_wake_deferred): this wait ends.
	 */
	irq_work_sync(&kf->work);
	mutex_lock(&kinst_files_lock);
	list_del(&kf->link);
	mutex_unlock(&kinst_files_lock);
	kinst_file_free(kf);
	return (0);
}

/* Wait until the rings have data, the module is going, or a signal. */
static int
kinst_read_wait(struct kinst_file *kf)
{
	long t;

	atomic_set(&kf->waiting, 1);
	smp_mb__after_atomic();
	/*
	 * With a timeout: a record written by a CPU going offline wakes
	 * nobody (kinst_os_wake_deferred), so look again now and then.
	 */
	t = wait_event_interruptible_timeout(kf->wq,
	    kinst_rings_have_data(kf->rings, kf->ncpus) ||
	    READ_ONCE(kinst_dying), KINST_READ_RECHECK);
	return (t < 0 ? (int)t : 0);
}

static ssize_t
kinst_read(struct file *fp, char __user *ubuf, size_t count, loff_t *pos)
{
	struct kinst_file *kf = fp->private_data;
	size_t n;
	int error;

	if (count < sizeof(struct kinst_hit_record))
		return (-EINVAL);
	if (count > KINST_READ_MAX)
		count = KINST_READ_MAX;
	if (mutex_lock_interruptible(&kf->read_lock) != 0)
		return (-ERESTARTSYS);
	for (;;) {
		if (READ_ONCE(kinst_dying)) {
			mutex_unlock(&kf->read_lock);
			return (-ENODEV);
		}
		n = kinst_rings_drain(kf->rings, kf->ncpus, &kf->next_cpu,
		    kf->bounce, count, sizeof(struct kinst_hit_record));
		if (n != 0)
			break;
		if ((fp->f_flags & O_NONBLOCK) != 0) {
			mutex_unlock(&kf->read_lock);
			return (-EAGAIN);
		}
		error = kinst_read_wait(kf);
		if (error != 0) {
			mutex_unlock(&kf->read_lock);
			return (error);
		}
	}
	if (copy_to_user(ubuf, kf->bounce, n) != 0)
		n = 0;
	mutex_unlock(&kf->read_lock);
	return (n != 0 ? (ssize_t)n : -EFAULT);
}

static __poll_t
kinst_poll(struct file *fp, poll_table *pt)
{
	struct kinst_file *kf = fp->private_data;

	poll_wait(fp, &kf->wq, pt);
	poll_wait(fp, &kinst_cpu_dead_wq, pt);
	atomic_set(&kf->waiting, 1);
	smp_mb__after_atomic();
	if (READ_ONCE(kinst_dying))
		return (EPOLLERR | EPOLLHUP);
	if (kinst_rings_have_data(kf->rings, kf->ncpus))
		return (EPOLLIN | EPOLLRDNORM);
	return (0);
}

static long
kinst_ioc_arm(struct kinst_file *kf, void __user *up)
{
	struct kinst_arm a;
	int err;

	if (copy_from_user(&a, up, sizeof(a)) != 0)
		return (-EFAULT);
	err = kinst_ctl_arm(&kinst_ctl, &kf->cs, &a);
	/*
	 * Jump optimization in the background (kinst_opt_fn), a little after
	 * the last of a burst of arm requests: one wait for tasks for all.
	 */
	if (err == KINST_E_OK && kinst_ctl_opt_pending(&kinst_ctl))
		mod_delayed_work(system_wq, &kinst_opt_work, KINST_OPT_DELAY);
	/* Out fields (refuse_reason, nrefused) also on failure. */
	if (copy_to_user(up, &a, sizeof(a)) != 0) {
		if (err == KINST_E_OK) {
			/* Armed, but the caller cannot learn the ids. */
			struct kinst_disarm d = { .probe_id = a.probe_id };
			uint32_t i;

			for (i = 0; i < a.narmed; i++, d.probe_id++)
				(void)kinst_ctl_disarm(&kinst_ctl, &kf->cs,
				    &d);
		}
		return (-EFAULT);
	}
	return (kinst_errno(err));
}

static long
kinst_ioc_disarm(struct kinst_file *kf, void __user *up)
{
	struct kinst_disarm d;
	int err;

	if (copy_from_user(&d, up, sizeof(d)) != 0)
		return (-EFAULT);
	err = kinst_ctl_disarm(&kinst_ctl, &kf->cs, &d);
	if (copy_to_user(up, &d, sizeof(d)) != 0)
		return (-EFAULT);
	return (kinst_errno(err));
}

static long
kinst_ioc_list(struct kinst_file *kf, void __user *up)
{
	struct kinst_list l;
	struct kinst_probe_info *pi;
	uint32_t cap, n;
	long error;

	if (copy_from_user(&l, up, sizeof(l)) != 0)
		return (-EFAULT);
	cap = min_t(uint32_t, l.cap, KINST_MAX_PROBES);
	pi = NULL;
	if (cap != 0) {
		pi = kvcalloc(cap, sizeof(*pi), GFP_KERNEL);
		if (pi == NULL)
			return (-ENOMEM);
	}
	n = kinst_ctl_list(&kinst_ctl, &kf->cs, pi, cap);
	error = 0;
	if (cap != 0 && copy_to_user(u64_to_user_ptr(l.buf), pi,
	    (size_t)min(n, cap) * sizeof(*pi)) != 0)
		error = -EFAULT;
	kvfree(pi);
	if (error != 0)
		return (error);
	l.count = n;
	if (copy_to_user(up, &l, sizeof(l)) != 0)
		return (-EFAULT);
	return (0);
}

static long
kinst_ioc_stats(struct kinst_file *kf, void __user *up)
{
	struct kinst_stats st;
	struct kinst_cpu_stats *cs;
	uint32_t cap;
	long error;

	if (copy_from_user(&st, up, sizeof(st)) != 0)
		return (-EFAULT);
	cap = min_t(uint32_t, st.cap, kf->ncpus);
	cs = NULL;
	if (cap != 0) {
		cs = kvcalloc(cap, sizeof(*cs), GFP_KERNEL);
		if (cs == NULL)
			return (-ENOMEM);
	}
	kinst_ctl_stats(&kinst_ctl, &kf->cs, cs, cap, &st);
	error = 0;
	if (cap != 0 && copy_to_user(u64_to_user_ptr(st.buf), cs,
	    (size_t)cap * sizeof(*cs)) != 0)
		error = -EFAULT;
	kvfree(cs);
	if (error != 0)
		return (error);
	if (copy_to_user(up, &st, sizeof(st)) != 0)
		return (-EFAULT);
	return (0);
}

static long
kinst_ioc_text(struct kinst_file *kf, void __user *up)
{
	struct kinst_text t;
	uint8_t *buf;
	uint32_t cap, n;
	int err;

	(void)kf;
	if (copy_from_user(&t, up, sizeof(t)) != 0)
		return (-EFAULT);
	cap = min_t(uint32_t, t.cap, KINST_FUNC_MAX);
	buf = kvmalloc(cap == 0 ? 1 : cap, GFP_KERNEL);
	if (buf == NULL)
		return (-ENOMEM);
	err = kinst_ctl_text(&kinst_ctl, &t, buf, cap);
	if (err == KINST_E_OK) {
		n = min(cap, t.size);
		if (n != 0 && copy_to_user(u64_to_user_ptr(t.buf), buf, n) != 0)
			err = KINST_E_FAULT;
	}
	kvfree(buf);
	if (copy_to_user(up, &t, sizeof(t)) != 0)
		return (-EFAULT);
	return (kinst_errno(err));
}

static long
kinst_ioctl_gated(struct file *fp, unsigned int cmd, unsigned long arg)
{
	struct kinst_file *kf = fp->private_data;
	void __user *up = (void __user *)arg;
	struct kinst_version v;

	switch (cmd) {
	case KINST_IOC_VERSION:
		memset(&v, 0, sizeof(v));
		v.abi_version = KINST_ABI_VERSION;
		v.max_probes = KINST_MAX_PROBES;
		v.ncpus = kf->ncpus;
		v.record_size = sizeof(struct kinst_hit_record);
		return (copy_to_user(up, &v, sizeof(v)) != 0 ? -EFAULT : 0);
	case KINST_IOC_ARM:
		return (kinst_ioc_arm(kf, up));
	case KINST_IOC_DISARM:
		return (kinst_ioc_disarm(kf, up));
	case KINST_IOC_LIST:
		return (kinst_ioc_list(kf, up));
	case KINST_IOC_STATS:
		return (kinst_ioc_stats(kf, up));
	case KINST_IOC_TEXT:
		return (kinst_ioc_text(kf, up));
	case KINST_IOC_FILTER: {
		struct kinst_filter f;

		if (copy_from_user(&f, up, sizeof(f)) != 0)
			return (-EFAULT);
		return (kinst_errno(kinst_ctl_filter(&kinst_ctl, &kf->cs, &f)));
	}
	case KINST_IOC_PROG_LOAD:
		return (kinst_errno(kinst_linux_prog_load(&kinst_ctl, &kf->cs,
		    up)));
	case KINST_IOC_PROG_STATS:
		return (kinst_errno(kinst_linux_prog_stats(&kinst_ctl, &kf->cs,
		    up)));
	case KINST_IOC_AGG_SETUP:
	case KINST_IOC_AGG_READ:
	case KINST_IOC_AGG_CLEAR:
	case KINST_IOC_AGG_STATS:
	case KINST_IOC_AGG_STACKS:
		return (kinst_errno(kinst_linux_agg_ioctl(&kinst_ctl, &kf->cs,
		    cmd, up)));
	default:
		return (-ENOTTY);
	}
}

static long
kinst_ioctl(struct file *fp, unsigned int cmd, unsigned long arg)
{
	long error;

	down_read(&kinst_gate);
	if (kinst_dying)
		error = -ENODEV;
	else
		error = kinst_ioctl_gated(fp, cmd, arg);
	up_read(&kinst_gate);
	return (error);
}

static const struct file_operations kinst_fops = {
	.owner = THIS_MODULE,
	.open = kinst_open,
	.release = kinst_release,
	.read = kinst_read,
	.poll = kinst_poll,
	.unlocked_ioctl = kinst_ioctl,
	.compat_ioctl = kinst_ioctl,	/* all pointers are u64: same layout */
	.llseek = no_llseek,
};

static struct miscdevice kinst_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kinst",
	.fops = &kinst_fops,
	.mode = 0600,
};

/*
 * A CPU is dead (CPUHP_BP_PREPARE_DYN teardown: runs on a control CPU after
 * the dying CPU reported its death).  Its last records woke nobody
 * (kinst_os_wake_deferred): wake every poll()er so that it sees them
 * (a blocked read(2) looks again within KINST_READ_RECHECK anyway).
 *
 * It runs with cpu_hotplug_lock held for writing, and the control path
 * holds it for reading under kinst_files_lock (kinst_stop_files): so it
 * takes no lock of ours (one wait queue that every poll() waits on too),
 * and the lock order of kinst_os_ctl_lock() holds.
 */
static int
kinst_cpu_dead(unsigned int cpu)
{
	(void)cpu;
	wake_up_interruptible_all(&kinst_cpu_dead_wq);
	return (0);
}

static int __init
kinst_init(void)
{
	int error;

	if (ring_size < 4096 || ring_size > (64u << 20) ||
	    !is_power_of_2(ring_size)) {
		pr_err("kinst: ring_size must be a power of two in [4096, 64M]\n");
		return (-EINVAL);
	}
	error = kinst_linux_syms_init();
	if (error != 0)
		return (error);
	kinst_engine = vzalloc(sizeof(*kinst_engine));
	if (kinst_engine == NULL)
		return (-ENOMEM);
	kinst_engine_init(kinst_engine, nr_cpu_ids, true);
	kinst_ctl_init(&kinst_ctl, kinst_engine);
	kinst_linux_jump_init(&kinst_ctl);
	error = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "kinst:dead",
	    NULL, kinst_cpu_dead);
	if (error < 0)
		goto fail;
	kinst_cpuhp_state = error;
	error = kinst_linux_hook_init();
	if (error != 0)
		goto fail;
	error = misc_register(&kinst_misc);
	if (error != 0) {
		kinst_linux_hook_fini();
		goto fail;
	}
	pr_info("kinst: ABI %u.%u, %u CPUs, ring %u bytes per CPU\n",
	    KINST_ABI_VERSION_MAJOR, KINST_ABI_VERSION_MINOR, nr_cpu_ids,
	    ring_size);
	return (0);
fail:
	if (kinst_cpuhp_state >= 0)
		cpuhp_remove_state_nocalls(kinst_cpuhp_state);
	vfree(kinst_engine);
	kinst_engine = NULL;
	return (error);
}

/*
 * Unload, step 1: no ioctl runs or starts any more, every reader is told
 * to go away (read(2) and ioctls fail with ENODEV, poll() reports
 * EPOLLERR | EPOLLHUP), and every open file's probes are disarmed (text
 * restored, trampolines freed after quiescence).  Normally no file is open
 * here (each holds a module reference); only a forced unload (rmmod -f,
 * CONFIG_MODULE_FORCE_UNLOAD) finds some.
 */
static void
kinst_stop_files(void)
{
	struct kinst_file *kf;
	unsigned int n;

	down_write(&kinst_gate);
	WRITE_ONCE(kinst_dying, true);
	up_write(&kinst_gate);
	n = 0;
	mutex_lock(&kinst_files_lock);
	list_for_each_entry(kf, &kinst_files, link) {
		wake_up_interruptible_all(&kf->wq);
		kinst_ctl_session_fini(&kinst_ctl, &kf->cs);
		n++;
	}
	mutex_unlock(&kinst_files_lock);
	if (n != 0)
		pr_warn("kinst: forced unload with %u file(s) open: probes "
		    "disarmed, readers told to go away; waiting for the files "
		    "to be closed\n", n);
}

/*
 * Unload, step 2: return only when no CPU can run this module's code for an
 * open file any more.  delete_module(2) with O_TRUNC (try_stop_module())
 * leaves the module's reference count at MODULE_REF_BASE + the number of
 * users and calls us; every open file holds one of them (misc_open's
 * fops_get), dropped by __fput() (fops_put) after our release() has
 * returned, and any thread inside one of our file operations holds the
 * file.  module_put() decrements the count with preemption disabled and
 * afterwards touches only kernel text and the struct module (its
 * tracepoint), which lives in module memory.  So: wait until
 * module_refcount() (the count minus MODULE_REF_BASE; -1 after a normal,
 * unforced stop) is no longer positive, then synchronize_rcu() waits out
 * the preemption-disabled tail of the last module_put().  (A reference
 * held by anything else keeps us waiting too: better than freeing code in
 * use.)  The wait is TASK_IDLE: a holder that never closes keeps rmmod
 * waiting without a hung-task report.
 */
static void
kinst_wait_files(void)
{
	while (module_refcount(THIS_MODULE) > 0)
		schedule_timeout_idle(KINST_READ_RECHECK);
	synchronize_rcu();
}

static void __exit
kinst_exit(void)
{
	misc_deregister(&kinst_misc);
	if (kinst_cpuhp_state >= 0)
		cpuhp_remove_state_nocalls(kinst_cpuhp_state);
	kinst_stop_files();
	kinst_wait_files();
	/* No arm request is left to queue the optimizer again. */
	cancel_delayed_work_sync(&kinst_opt_work);
	/* Every release() ran: nothing is armed, no file is left. */
	kinst_linux_hook_fini();
	if (WARN_ON(kinst_ctl.nprobes != 0 || !list_empty(&kinst_files)))
		return;		/* leak rather than free what a CPU may read */
	kinst_os_quiesce();
	vfree(kinst_engine);
	if (kinst_linux_emu_faults() != 0)
		pr_warn("kinst: %lu emulation faults\n",
		    kinst_linux_emu_faults());
}

module_init(kinst_init);
module_exit(kinst_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("kinst: trace any instruction of the kernel");
MODULE_AUTHOR("kinst");
MODULE_VERSION(KINST_VERSION);
