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
#include <linux/mm.h>
#include <linux/version.h>
#include <linux/capability.h>
#include <linux/kdebug.h>
#include <linux/notifier.h>

#include "kinst_linux.h"
#include "kinst_linux_arch.h"

static unsigned int ring_size = 512 * 1024;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size,
    "bytes of ring per CPU per open file (power of two, 4 KiB .. 64 MiB)");

/* A blocked read(2) looks at the rings at least this often (see below). */
#define	KINST_READ_RECHECK	(HZ / 10)

struct kinst_engine *kinst_engine;
static struct kinst_ctl kinst_ctl;
static struct kinst_dev kinst_dev;

/* common/kinst_dev.h's errno values are Linux's. */
static_assert(KINST_ENOENT == ENOENT && KINST_EIO == EIO &&
    KINST_ENXIO == ENXIO && KINST_ENOMEM == ENOMEM && KINST_EFAULT == EFAULT &&
    KINST_EBUSY == EBUSY && KINST_EEXIST == EEXIST && KINST_ENODEV == ENODEV &&
    KINST_EINVAL == EINVAL && KINST_ENOTTY == ENOTTY && KINST_EFBIG == EFBIG &&
    KINST_ENOSPC == ENOSPC && KINST_EAGAIN == EAGAIN &&
    KINST_EOPNOTSUPP == EOPNOTSUPP && KINST_EACCES == EACCES,
    "kinst_dev.h errno values");
static_assert(KINST_MAP_PAGE == PAGE_SIZE, "mapped rings are in pages");

/* The jump optimizer (common/kinst_control.c: kinst_ctl_optimize). */
#define	KINST_OPT_DELAY	(HZ / 20)
static bool kinst_opt_running;	/* for debugfs kinst/jump (kinst_linux_debugfs.c) */

static void
kinst_opt_fn(struct work_struct *w)
{
	(void)w;
	WRITE_ONCE(kinst_opt_running, true);
	(void)kinst_ctl_optimize(&kinst_ctl);
	WRITE_ONCE(kinst_opt_running, false);
}
static DECLARE_DELAYED_WORK(kinst_opt_work, kinst_opt_fn);

/* Open files, for the unload path's sweep (see kinst_exit). */
static LIST_HEAD(kinst_files);
static DEFINE_MUTEX(kinst_files_lock);

/*
 * kinst_dev.dying is set once by kinst_exit: the module is going (a forced
 * unload may find files open).  Readers then get ENODEV, poll() EPOLLERR |
 * EPOLLHUP.  The ioctls run under kinst_gate (read) and kinst_exit sets the
 * flag under it (write), so that no ioctl is in progress, or can start,
 * once it is set.
 */
static DECLARE_RWSEM(kinst_gate);
static int kinst_cpuhp_state = -1;
/* Woken by kinst_cpu_dead(); every poll() waits on it too. */
static DECLARE_WAIT_QUEUE_HEAD(kinst_cpu_dead_wq);

static void
kinst_irq_work(struct irq_work *w)
{
	struct kinst_file *kf = container_of(w, struct kinst_file, work);

	atomic_set(&kf->waiting, 0);
	wake_up_interruptible(&kf->wq);
}

/*
 * Who may open /dev/kinst: the node's mode (0600, root) decides who reaches
 * this open; the opener must also be perfmon_capable() (CAP_PERFMON or
 * CAP_SYS_ADMIN, in the initial user namespace), else EPERM.  That is what
 * the kernel asks for the same powers through its own interfaces: the perf
 * kprobe PMU (perf_kprobe_event_init(), kernel/events/core.c) plants a
 * kprobe at any function + offset for a perfmon_capable() caller, and
 * bpf_prog_load() (kernel/bpf/syscall.c) loads kprobe programs, which read
 * any kernel memory, for one with CAP_BPF and perfmon_capable().  kinst
 * plants a breakpoint, reads registers and kernel memory, and writes
 * nothing a user chose: it does not need CAP_SYS_RAWIO, /dev/mem's
 * (open_port(), drivers/char/mem.c), which grants raw physical memory.
 * Before CAP_PERFMON (5.8) perf asked for CAP_SYS_ADMIN, and so do we.
 *
 * The check is made here only: the file is the capability (as /dev/mem,
 * perf events and raw sockets check at open), so an opener that then drops
 * its privileges (setuid(2), capset(2)) keeps a working file, and whoever
 * it hands the file to may use it.  Closing it disarms everything.
 */
static bool
kinst_open_allowed(void)
{
#ifdef CAP_PERFMON
	return (perfmon_capable());
#else
	return (capable(CAP_SYS_ADMIN));
#endif
}

static int
kinst_open(struct inode *ip, struct file *fp)
{
	struct kinst_file *kf;
	int error;

	if (!kinst_open_allowed())
		return (-EPERM);
	kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	if (kf == NULL)
		return (-ENOMEM);
	mutex_init(&kf->read_lock);
	init_waitqueue_head(&kf->wq);
	init_irq_work(&kf->work, kinst_irq_work);
	atomic_set(&kf->waiting, 0);
	error = kinst_dev_open(&kinst_dev, &kf->df, current->tgid, kf);
	if (error != 0) {
		kfree(kf);
		return (-error);
	}
	/* An open that raced with misc_deregister() in kinst_exit. */
	mutex_lock(&kinst_files_lock);
	if (kinst_dev_is_dying(&kinst_dev)) {
		mutex_unlock(&kinst_files_lock);
		kinst_dev_close(&kinst_dev, &kf->df);
		kinst_dev_free(&kf->df);
		kfree(kf);
		return (-ENODEV);
	}
	list_add(&kf->link, &kinst_files);
	mutex_unlock(&kinst_files_lock);
	fp->private_data = kf;
	return (nonseekable_open(ip, fp));
}

static int
kinst_release(struct inode *ip, struct file *fp)
{
	struct kinst_file *kf = fp->private_data;

	(void)ip;
	kinst_dev_close(&kinst_dev, &kf->df);
	/*
	 * No producer is left.  The work is pending, if at all, on an online
	 * CPU, which runs it (kinst_os_wake_deferred): this wait ends.
	 */
	irq_work_sync(&kf->work);
	mutex_lock(&kinst_files_lock);
	list_del(&kf->link);
	mutex_unlock(&kinst_files_lock);
	kinst_dev_free(&kf->df);
	kfree(kf);
	return (0);
}

/*
 * kinst_dev_read()'s wait: until the rings have data, the module is going,
 * or a signal.  With a timeout: a record written by a CPU going offline
 * wakes nobody (kinst_os_wake_deferred), so look again now and then.
 */
int
kinst_os_dev_wait(struct kinst_dev_file *f)
{
	struct kinst_file *kf = container_of(f, struct kinst_file, df);
	long t;

	atomic_set(&kf->waiting, 1);
	smp_mb__after_atomic();
	t = wait_event_interruptible_timeout(kf->wq,
	    kinst_dev_readable(f) || kinst_dev_is_dying(&kinst_dev),
	    KINST_READ_RECHECK);
	return (t < 0 ? (int)-t : 0);
}

static ssize_t
kinst_read(struct file *fp, char __user *ubuf, size_t count, loff_t *pos)
{
	struct kinst_file *kf = fp->private_data;
	size_t n;
	int error;

	(void)pos;
	if (mutex_lock_interruptible(&kf->read_lock) != 0)
		return (-ERESTARTSYS);
	error = kinst_dev_read(&kinst_dev, &kf->df, count,
	    (fp->f_flags & O_NONBLOCK) != 0, &n);
	if (error == 0 && copy_to_user(ubuf, kf->df.bounce, n) != 0)
		error = EFAULT;
	mutex_unlock(&kf->read_lock);
	return (error != 0 ? -error : (ssize_t)n);
}

static __poll_t
kinst_poll(struct file *fp, poll_table *pt)
{
	struct kinst_file *kf = fp->private_data;
	int r;

	poll_wait(fp, &kf->wq, pt);
	poll_wait(fp, &kinst_cpu_dead_wq, pt);
	atomic_set(&kf->waiting, 1);
	smp_mb__after_atomic();
	r = kinst_dev_poll(&kinst_dev, &kf->df);
	if ((r & KINST_DEV_POLL_GONE) != 0)
		return (EPOLLERR | EPOLLHUP);
	return ((r & KINST_DEV_POLL_IN) != 0 ? EPOLLIN | EPOLLRDNORM : 0);
}

/* ---- kinst_dev.h's hooks ---- */

int
kinst_os_copyin(uint64_t uaddr, void *kbuf, size_t len)
{
	return (copy_from_user(kbuf, u64_to_user_ptr(uaddr), len) != 0);
}

int
kinst_os_copyout(const void *kbuf, uint64_t uaddr, size_t len)
{
	return (copy_to_user(u64_to_user_ptr(uaddr), kbuf, len) != 0);
}

int
kinst_os_arm_gate(void)
{
	return (0);	/* kinst coexists with kprobes and ftrace */
}

/*
 * Jump optimization in the background (kinst_opt_fn), a little after the
 * last of a burst of arm requests: one wait for tasks for all.
 */
void
kinst_os_opt_kick(struct kinst_ctl *c)
{
	(void)c;
	mod_delayed_work(system_wq, &kinst_opt_work, KINST_OPT_DELAY);
}

static long
kinst_ioctl(struct file *fp, unsigned int cmd, unsigned long arg)
{
	struct kinst_file *kf = fp->private_data;
	struct kinst_dev_cmd dc = {
		.group = _IOC_TYPE(cmd),
		.nr = _IOC_NR(cmd),
		.size = _IOC_SIZE(cmd),
		.dir = ((_IOC_DIR(cmd) & _IOC_WRITE) != 0 ? KINST_DEV_IN : 0) |
		    ((_IOC_DIR(cmd) & _IOC_READ) != 0 ? KINST_DEV_OUT : 0),
	};
	long error;

	down_read(&kinst_gate);
	error = -kinst_dev_ioctl_user(&kinst_dev, &kf->df, &dc, (uint64_t)arg);
	up_read(&kinst_gate);
	return (error);
}

/*
 * mmap(2): one CPU's ctl page (read-write) or records (read-only, and
 * never made writable: VM_MAYWRITE cleared), MAP_SHARED, never
 * executable; which memory is kinst_dev_mmap()'s choice, from this file's
 * own rings only.  The ring memory is vmalloc_user()'s
 * (kinst_os_ring_alloc), whose pages remap_vmalloc_range() inserts; the
 * mapping holds the file, so kinst_release() and the vfree() of the
 * memory come after the last munmap.  No lock of ours: mmap_lock is held.
 */
static int
kinst_mmap(struct file *fp, struct vm_area_struct *vma)
{
	struct kinst_file *kf = fp->private_data;
	struct kinst_dev_map m;
	uint32_t how;
	int error;

	if ((vma->vm_flags & VM_EXEC) != 0)
		return (-EACCES);
	if (vma->vm_pgoff > (ULONG_MAX >> PAGE_SHIFT))
		return (-EINVAL);
	how = 0;
	if ((vma->vm_flags & VM_SHARED) != 0)
		how |= KINST_DEV_MAP_SHARED;
	if ((vma->vm_flags & VM_WRITE) != 0)
		how |= KINST_DEV_MAP_WRITE;
	error = kinst_dev_mmap(&kinst_dev, &kf->df,
	    (uint64_t)vma->vm_pgoff << PAGE_SHIFT,
	    (uint64_t)(vma->vm_end - vma->vm_start), how, &m);
	if (error != 0)
		return (-error);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, VM_MAYEXEC | (m.data != 0 ? VM_MAYWRITE : 0));
#else
	vma->vm_flags &= ~(VM_MAYEXEC | (m.data != 0 ? VM_MAYWRITE : 0));
#endif
	return (remap_vmalloc_range(vma, m.base, m.off >> PAGE_SHIFT));
}

static const struct file_operations kinst_fops = {
	.owner = THIS_MODULE,
	.open = kinst_open,
	.release = kinst_release,
	.read = kinst_read,
	.poll = kinst_poll,
	.mmap = kinst_mmap,
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

/*
 * The breakpoint hook (the architecture's: kinst_linux_arch.h), then the
 * exclusion sets derived from the live text (kinst_linux_trappath.c), which
 * start from it.
 */
static int
kinst_hook_init(void)
{
	int error;

	error = kinst_linux_hook_register();
	if (error != 0)
		return (error);
	/* After registering: the walk looks for the notifiers before ours. */
	error = kinst_linux_derive();
	if (error != 0)
		kinst_linux_hook_unregister();
	return (error);
}

static void
kinst_hook_fini(void)
{
	kinst_linux_hook_unregister();
	kinst_linux_derive_fini();
	if (kinst_engine != NULL && kinst_engine->tripped != 0)
		pr_warn("kinst: %llu hits nested beyond depth %d ran without a record (nesting guard)\n",
		    (unsigned long long)kinst_engine->tripped, KINST_NEST_MAX);
	if (kinst_engine != NULL && kinst_engine->native_runs != 0)
		pr_info("kinst: %llu emulated reads failed and ran natively\n",
		    (unsigned long long)kinst_engine->native_runs);
}

static int __init
kinst_init(void)
{
	int error;

	if (kinst_dev_init(&kinst_dev, &kinst_ctl, nr_cpu_ids, ring_size) !=
	    0) {
		pr_err("kinst: ring_size must be a power of two in [4096, 64M]\n");
		return (-EINVAL);
	}
	error = kinst_linux_syms_init();
	if (error != 0)
		return (error);
	kinst_linux_os_init();
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
	error = kinst_hook_init();
	if (error != 0)
		goto fail;
	kinst_linux_debugfs_init(&kinst_ctl, &kinst_opt_running);
	error = misc_register(&kinst_misc);
	if (error != 0) {
		kinst_linux_debugfs_fini();
		kinst_hook_fini();
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
	kinst_dev_set_dying(&kinst_dev);
	up_write(&kinst_gate);
	n = 0;
	mutex_lock(&kinst_files_lock);
	list_for_each_entry(kf, &kinst_files, link) {
		wake_up_interruptible_all(&kf->wq);
		kinst_dev_close(&kinst_dev, &kf->df);
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
	kinst_linux_debugfs_fini();
	kinst_hook_fini();
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
