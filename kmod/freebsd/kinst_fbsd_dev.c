/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for FreeBSD/amd64: module load/unload and the /dev/kinst device.
 *
 * Each open file is a session (devfs cdevpriv): per-CPU rings for every
 * CPU (CPU_FOREACH), per-CPU hit counters, and the probes it armed.  The
 * cdevpriv destructor runs when the last reference to the file goes away
 * (close, exit of a killed process) and when the device is destroyed at
 * unload: it disarms and frees everything the file armed.
 *
 * The sessions, read(2), poll(2) and every ioctl are common/kinst_dev.c's,
 * as on Linux; this file registers the device, serializes readers, makes
 * read(2) and poll(2) wait (no wakeup ever comes from probe context: a
 * short sleep, and a callout for poll), passes ioctls through
 * FreeBSD's convention (the argument structure copied in before and out
 * after, on success only), and hands mmap(2) the VM object of a ring
 * (d_mmap_single).
 */

#include <sys/param.h>
#include <sys/systm.h>
#include <sys/conf.h>
#include <sys/eventhandler.h>
#include <sys/fcntl.h>
#include <sys/ioccom.h>
#include <sys/kernel.h>
#include <sys/linker.h>
#include <sys/lock.h>
#include <sys/malloc.h>
#include <sys/module.h>
#include <sys/mutex.h>
#include <sys/poll.h>
#include <sys/priv.h>
#include <sys/proc.h>
#include <sys/selinfo.h>
#include <sys/smp.h>
#include <sys/sx.h>
#include <sys/uio.h>
#include <sys/callout.h>

#include <vm/vm.h>

#include <machine/md_var.h>	/* cpu_stdext_feature (x86/x86_var.h) */
#include <machine/specialreg.h>	/* CPUID_STDEXT_SMAP */

#include "kinst_fbsd.h"

MALLOC_DEFINE(M_KINST, "kinst", "kinst instruction tracer");

#define	KINST_RING_SIZE		(512 * 1024)	/* bytes per CPU per open file */
#define	KINST_POLL_TICKS	(hz / 100 > 0 ? hz / 100 : 1)	/* ~10 ms */

struct kinst_engine *kinst_engine;

/*
 * Jump-optimized probes (issue 13; docs/freebsd.md section 4): only
 * windows of one instruction (5 bytes or more), optimized at the end of
 * the ARM ioctl.  Set once a jump has been installed: from then on the
 * module stays loaded (kinst_busy), since a thread preempted inside a
 * detour -- retired, never unmapped, like the trampolines -- before its
 * call to kinst_fbsd_jhandler could resume after an unload, and FreeBSD
 * has nothing like Linux's synchronize_rcu_tasks() to wait for it.
 */
static bool kinst_jumps_used;

/*
 * A jump probe's detour calls this (common/x86/kinst_detour.h) with the
 * register file as it was at the probed instruction, in the probed code's
 * own context: interrupts off around the engine (no preemption, no
 * migration), as on the #BP path.  The stack walk of kinst_os_stack() needs
 * only the registers.
 */
static void
kinst_fbsd_jhandler(void *arg, struct kinst_regs *regs)
{
	struct kinst_engine *e;
	register_t s;

	(void)arg;
	s = intr_disable();
	e = __atomic_load_n(&kinst_engine, __ATOMIC_ACQUIRE);
	if (e != NULL)
		(void)kinst_engine_jhit(e, regs, NULL);
	intr_restore(s);
}
struct kinst_ctl kinst_ctl;
static struct kinst_dev kinst_dev;

/*
 * common/kinst_dev.h's errno values are FreeBSD's (ENODEV, 19, is not in
 * the compile check's declaration headers), and a mapped ring's page is
 * the kernel's.
 */
_Static_assert(KINST_ENOENT == ENOENT && KINST_EIO == EIO &&
    KINST_ENXIO == ENXIO && KINST_ENOMEM == ENOMEM && KINST_EFAULT == EFAULT &&
    KINST_EBUSY == EBUSY && KINST_EEXIST == EEXIST &&
    KINST_EINVAL == EINVAL && KINST_ENOTTY == ENOTTY && KINST_EFBIG == EFBIG &&
    KINST_ENOSPC == ENOSPC && KINST_EAGAIN == EAGAIN &&
    KINST_EOPNOTSUPP == EOPNOTSUPP, "kinst_dev.h errno values");

static struct cdev *kinst_cdev;
static eventhandler_tag kinst_kld_load_tag;
/* Open files against MOD_UNLOAD (kmod/freebsd/kinst_freebsd.h). */
static struct kinst_fbsd_gate kinst_gate;

/* An open file: the portable session and this kernel's wait/wake. */
struct kinst_file {
	struct kinst_dev_file df;
	struct sx	read_sx;	/* one consumer at a time */
	struct mtx	poll_mtx;	/* the callout and last_poll */
	struct callout	poll_co;
	struct selinfo	sel;
	int		last_poll;	/* ticks of the last poll(2) without data */
};

/*
 * The poll(2) completion: runs every KINST_POLL_TICKS while a poller
 * found no data in the last second, with poll_mtx held.  Thread context
 * of the callout subsystem, never probe context.
 */
static void
kinst_poll_tick(void *arg)
{
	struct kinst_file *kf;

	kf = arg;
	mtx_assert(&kf->poll_mtx, MA_OWNED);
	if (kinst_dev_poll(&kinst_dev, &kf->df) != 0) {
		selwakeup(&kf->sel);
		return;
	}
	if (ticks - kf->last_poll < hz)
		callout_schedule(&kf->poll_co, KINST_POLL_TICKS);
}

/* cdevpriv destructor: the file's last close, or destroy_dev() at unload. */
static void
kinst_dtor(void *arg)
{
	struct kinst_file *kf;

	kf = arg;
	kinst_dev_close(&kinst_dev, &kf->df);	/* no producer is left */
	callout_drain(&kf->poll_co);
	seldrain(&kf->sel);
	mtx_destroy(&kf->poll_mtx);
	sx_destroy(&kf->read_sx);
	kinst_dev_free(&kf->df);
	free(kf, M_KINST);
	kinst_fbsd_gate_leave(&kinst_gate);
}

/*
 * Who may open /dev/kinst: the node's mode (0600, root) decides who reaches
 * this open; the opener must also hold PRIV_DTRACE_KERNEL ("Allow use of
 * DTrace on the kernel", sys/sys/priv.h), else EPERM: the privilege named
 * for what kinst does.  priv_check_cred() (kern/kern_priv.c) grants it to
 * uid 0 unless a MAC policy objects, and prison_priv_check()
 * (kern/kern_jail.c) does not list it, so a jailed root is refused (hwpmc
 * refuses a jail a system-wide PMC too).  Not PRIV_KMEM_READ, which
 * priv_check_cred() grants to every user (/dev/mem's mode is its read gate),
 * nor PRIV_KMEM_WRITE: kinst writes nothing a user chose.  dtrace_open()
 * checks no privilege on FreeBSD (dtrace_cred2priv() gives every credential
 * DTRACE_PRIV_ALL; the node's mode decides).
 *
 * The check is made here only: the file is the capability (as memopen()
 * checks /dev/mem at open), so an opener that then drops its privileges
 * keeps a working file.  Closing it disarms everything.
 */
static int
kinst_open(struct cdev *dev, int oflags, int devtype, struct thread *td)
{
	struct kinst_file *kf;
	int error;

	(void)dev;
	(void)oflags;
	(void)devtype;
	error = priv_check(td, PRIV_DTRACE_KERNEL);
	if (error != 0)
		return (error);
	/* Not once MOD_UNLOAD has begun (kinst_busy). */
	if (!kinst_fbsd_gate_enter(&kinst_gate))
		return (ENXIO);
	kf = malloc(sizeof(*kf), M_KINST, M_WAITOK | M_ZERO);
	error = kinst_dev_open(&kinst_dev, &kf->df, td->td_proc->p_pid, kf);
	if (error != 0) {
		free(kf, M_KINST);
		kinst_fbsd_gate_leave(&kinst_gate);
		return (error);
	}
	sx_init(&kf->read_sx, "kinst read");
	mtx_init(&kf->poll_mtx, "kinst poll", NULL, MTX_DEF);
	callout_init_mtx(&kf->poll_co, &kf->poll_mtx, 0);
	error = devfs_set_cdevpriv(kf, kinst_dtor);
	if (error != 0)
		kinst_dtor(kf);
	return (error);
}

/* kinst_dev_read()'s wait: nothing wakes us; look again soon. */
int
kinst_os_dev_wait(struct kinst_dev_file *f)
{
	int error;

	error = tsleep(f, PCATCH, "kinstrd", KINST_POLL_TICKS);
	return (error == EWOULDBLOCK ? 0 : error);
}

static int
kinst_read(struct cdev *dev, struct uio *uio, int ioflag)
{
	struct kinst_file *kf;
	size_t n;
	int error;

	(void)dev;
	error = devfs_get_cdevpriv((void **)&kf);
	if (error != 0)
		return (error);
	if (uio->uio_resid < 0)
		return (EINVAL);
	error = sx_xlock_sig(&kf->read_sx);
	if (error != 0)
		return (error);
	/* devfs passes the file's O_NONBLOCK in ioflag (IO_NDELAY). */
	error = kinst_dev_read(&kinst_dev, &kf->df, (size_t)uio->uio_resid,
	    (ioflag & O_NONBLOCK) != 0, &n);
	if (error == 0)
		error = uiomove(kf->df.bounce, (int)n, uio);
	sx_xunlock(&kf->read_sx);
	return (error);
}

static int
kinst_poll(struct cdev *dev, int events, struct thread *td)
{
	struct kinst_file *kf;

	(void)dev;
	if (devfs_get_cdevpriv((void **)&kf) != 0)
		return (events & (POLLIN | POLLRDNORM | POLLHUP));
	if ((events & (POLLIN | POLLRDNORM)) == 0)
		return (0);
	if (kinst_dev_poll(&kinst_dev, &kf->df) != 0)
		return (events & (POLLIN | POLLRDNORM));
	selrecord(td, &kf->sel);
	mtx_lock(&kf->poll_mtx);
	kf->last_poll = ticks;
	if (!callout_pending(&kf->poll_co))
		callout_reset(&kf->poll_co, KINST_POLL_TICKS, kinst_poll_tick,
		    kf);
	mtx_unlock(&kf->poll_mtx);
	return (0);
}

/* ---- common/kinst_dev.h's hooks ---- */

int
kinst_os_copyin(uint64_t uaddr, void *kbuf, size_t len)
{
	return (copyin((const void *)(uintptr_t)uaddr, kbuf, len) != 0);
}

int
kinst_os_copyout(const void *kbuf, uint64_t uaddr, size_t len)
{
	return (copyout(kbuf, (void *)(uintptr_t)uaddr, len) != 0);
}

/*
 * Both hooks kinst runs on are still its own: the #BP hook
 * (dtrace_invop_jump_addr; else every new breakpoint would reach DTrace)
 * and dtrace_trap_func (else no fault of a no-fault read is absorbed).
 * dtrace.ko's load stores both without looking.
 */
bool
kinst_fbsd_hooks_ours(void)
{
	return (kinst_hook_owner() == (void *)kinst_hook &&
	    kinst_nofault_ours() != 0);
}

int
kinst_os_arm_gate(void)
{
	if (!kinst_fbsd_hooks_ours()) {
		printf("kinst: the #BP hook or dtrace_trap_func was taken over "
		    "(DTrace loaded?): refusing to arm\n");
		return (EBUSY);
	}
	return (0);
}

/* Single-instruction windows need no wait: optimize now. */
void
kinst_os_opt_kick(struct kinst_ctl *c)
{
	if (kinst_ctl_optimize(c) != 0)
		__atomic_store_n(&kinst_jumps_used, true, __ATOMIC_RELAXED);
}

/*
 * The ioctl layer (sys_generic.c) copies the argument structure in before
 * and out after this, the latter only when 0 is returned: a refusal's
 * answers (kinst_dev_ioctl's copy_back) do not reach user space here
 * (docs/freebsd.md, section 4); the errno is the same.  The command is
 * taken apart as sys/ioccom.h encodes it: direction bits IOC_IN/IOC_OUT,
 * the length (IOCPARM_LEN), the group in bits 8-15, the number in 0-7.
 * The file layer's FIONBIO and FIOASYNC are answered first: without them
 * fcntl(F_SETFL, O_NONBLOCK) on /dev/kinst fails with ENOTTY.
 */
static int
kinst_ioctl(struct cdev *dev, u_long cmd, caddr_t data, int fflag,
    struct thread *td)
{
	struct kinst_file *kf;
	struct kinst_dev_cmd dc;
	bool copy_back;
	int error;

	(void)dev;
	(void)fflag;
	(void)td;
	dc.group = (uint32_t)((cmd >> 8) & 0xff);
	dc.nr = (uint32_t)(cmd & 0xff);
	dc.size = (uint32_t)IOCPARM_LEN(cmd);
	dc.dir = ((cmd & IOC_IN) != 0 ? KINST_DEV_IN : 0) |
	    ((cmd & IOC_OUT) != 0 ? KINST_DEV_OUT : 0);
	/* fcntl(F_SETFL): FIONBIO, FIOASYNC (kinst_freebsd.h). */
	error = kinst_fbsd_file_ioctl(dc.group, dc.nr, dc.size, dc.dir, data);
	if (error >= 0)
		return (error);
	error = devfs_get_cdevpriv((void **)&kf);
	if (error != 0)
		return (error);
	return (kinst_dev_ioctl(&kinst_dev, &kf->df, &dc, data, &copy_back));
}

/*
 * mmap(2) of one CPU's ctl page or records (common/kinst_abi.h, mapped
 * rings): kinst_dev_mmap() checks the offset, the length and the access,
 * and names the ring's VM object (kinst_os_ring_alloc in kinst_fbsd_vm.c),
 * which the mapping then holds a reference to.
 *
 * Lifetime: the mapping holds the object, not the file.  The file may be
 * closed and its cdevpriv destructor run (kinst_dtor: kinst_dev_close,
 * kinst_dev_free) while a mapping lives; kinst_os_ring_free() then drops
 * the kernel's KVA, wiring and reference, and the pages stay the
 * object's until the last munmap.  That is why the ring memory is a VM
 * object's pages and not malloc(9) memory.  The object's pager is the
 * kernel's phys pager, so a mapping may even outlive the module.
 *
 * nprot is vm_mmap_cdev()'s vm_prot_t (VM_PROT_* == PROT_*).  Execution is
 * refused (EACCES); writing asks kinst_dev_mmap() for write access, which
 * only the ctl page grants.  d_mmap_single is given no mapping flags.
 * vm_mmap_cdev() (15.1) refuses MAP_PRIVATE (MAP_COPY is the same bit,
 * sys/mman.h) before it calls us: EACCES for a writable one, which
 * devfs_mmap_f() gives no write permission (seen live on 15.1), EINVAL
 * otherwise.  Its "flags |= MAP_SHARED" reaches the mapping only on its
 * device-pager path (after ENODEV), so a request with neither flag
 * (kern_mmap() accepts one only from binaries older than
 * P_OSREL_MAP_FSTRICT) arrives here without write permission and is
 * mapped copy-on-write: it can read a ring but never write its tail,
 * which harms no one else.
 *
 * d_mmap_single cannot lower the mapping's maximum protection, which
 * devfs_mmap_f() derives from the file: VM_PROT_EXECUTE always (unless
 * /dev is mounted noexec), VM_PROT_WRITE when it was opened for writing.
 * So a reader that opened /dev/kinst read-write may mprotect() the data
 * writable, or either mapping executable (both seen live on 15.1): it can
 * then only spoil its own records, which the kernel never reads back
 * except through read(2)'s consumer, and that validates every record
 * header (common/kinst_ring.c, kinst_ring_take).
 *
 * ENODEV has a meaning of its own here (vm_mmap_cdev: not implemented,
 * try the device pager), so a dying device answers ENXIO instead.
 */
static int
kinst_mmap_single(struct cdev *dev, vm_ooffset_t *offset, vm_size_t size,
    struct vm_object **object, int nprot)
{
	struct kinst_file *kf;
	struct kinst_dev_map m;
	uint32_t how;
	int error;

	(void)dev;
	error = devfs_get_cdevpriv((void **)&kf);
	if (error != 0)
		return (error);
	if ((nprot & VM_PROT_EXECUTE) != 0)
		return (KINST_EACCES);
	how = KINST_DEV_MAP_SHARED;
	if ((nprot & VM_PROT_WRITE) != 0)
		how |= KINST_DEV_MAP_WRITE;
	error = kinst_dev_mmap(&kinst_dev, &kf->df, (uint64_t)*offset,
	    (uint64_t)size, how, &m);
	if (error == KINST_ENODEV)
		return (ENXIO);
	if (error != 0)
		return (error);
	/* The object, with the mapping's reference (kinst_fbsd_vm.c). */
	kinst_fbsd_map_object(&m, offset, object);
	return (0);
}

static struct cdevsw kinst_cdevsw = {
	.d_version =	D_VERSION,
	.d_name =	"kinst",
	.d_open =	kinst_open,
	.d_read =	kinst_read,
	.d_ioctl =	kinst_ioctl,
	.d_poll =	kinst_poll,
	.d_mmap_single = kinst_mmap_single,
};

/*
 * dtrace.ko's load stores its own handler in dtrace_invop_jump_addr without
 * looking at what is there.  Nothing can stop that from here; say it loudly
 * (every armed kinst breakpoint now reaches DTrace, which does not know it)
 * and refuse new probes (kinst_ioctl).
 */
static void
kinst_kld_load(void *arg, linker_file_t lf)
{
	(void)arg;
	if (!kinst_fbsd_hooks_ours())
		printf("kinst: WARNING: %s took over the #BP hook or "
		    "dtrace_trap_func; kinst "
		    "probes will panic the kernel: close kinstctl and unload "
		    "%s now\n", lf->filename, lf->filename);
}

/*
 * Load and unload are the steps below, run by kinst_fbsd_mod_load() and
 * undone by kinst_fbsd_mod_unload() (kmod/freebsd/kinst_freebsd.c): a failed load
 * undoes exactly the steps it did, and the MOD_UNLOAD FreeBSD sends after it
 * then finds nothing set up and touches nothing.  docs/freebsd.md, 3.
 */
static int
kinst_step_hook_free(void *ctx)
{
	void *owner;

	(void)ctx;
	owner = kinst_hook_owner();
	if (!kinst_hook_free()) {
		printf("kinst: the #BP hook (dtrace_invop_jump_addr) is owned "
		    "by %p (DTrace or its kinst provider is loaded): "
		    "kldunload dtraceall/dtrace first\n", owner);
		return (EBUSY);
	}
	return (0);
}

static int
kinst_step_os(void *ctx)
{
	(void)ctx;
	return (kinst_fbsd_os_init());
}

static void
kinst_unstep_os(void *ctx)
{
	(void)ctx;
	if (kinst_fbsd_emu_faults() != 0)
		printf("kinst: %lu emulation faults\n", kinst_fbsd_emu_faults());
	kinst_fbsd_os_fini();
}

static int
kinst_step_engine(void *ctx)
{
	struct kinst_engine *e;

	(void)ctx;
	e = malloc(sizeof(*e), M_KINST, M_WAITOK | M_ZERO);
	kinst_engine_init(e, mp_maxid + 1, true);
	kinst_ctl_init(&kinst_ctl, e);
	(void)kinst_dev_init(&kinst_dev, &kinst_ctl, mp_maxid + 1,
	    KINST_RING_SIZE);
	kinst_ctl_jump_enable(&kinst_ctl, (uint64_t)(uintptr_t)kinst_fbsd_jhandler,
	    0, true, (cpu_stdext_feature & CPUID_STDEXT_SMAP) != 0 ?
	    KINST_DETOUR_SMAP : 0);
	__atomic_store_n(&kinst_engine, e, __ATOMIC_RELEASE);
	return (0);
}

static void
kinst_unstep_engine(void *ctx)
{
	struct kinst_engine *e;

	(void)ctx;
	e = kinst_engine;
	__atomic_store_n(&kinst_engine, NULL, __ATOMIC_RELEASE);
	/* No CPU still uses the engine it loaded before the store. */
	kinst_os_quiesce();
	if (e->native_runs != 0)
		printf("kinst: %ju emulated reads failed and ran natively\n",
		    (uintmax_t)e->native_runs);
	free(e, M_KINST);
}

static int
kinst_step_hook(void *ctx)
{
	(void)ctx;
	if (kinst_hook_install() != 0) {
		printf("kinst: the #BP hook was taken while loading\n");
		return (EBUSY);
	}
	return (0);
}

static void
kinst_unstep_hook(void *ctx)
{
	(void)ctx;
	if (kinst_hook_remove() != 0)
		printf("kinst: the #BP hook is not kinst's any more; "
		    "left as it is\n");
	/* No CPU is still between the hook's jump and its return. */
	kinst_os_quiesce();
}

/*
 * dtrace_trap_func is the trap gate (kinst_fbsd_trapgate_build), not the
 * handler: a thread preempted in trap_check() between loading the pointer
 * and calling it may call it after the unload, and the gate, never freed,
 * then answers "not mine" (issue 22, defect 6).  A gate and its word are
 * kept for each load of the module (8 KiB).
 */
static uint64_t *kinst_gate_word;

static int
kinst_step_nofault(void *ctx)
{
	void *gate;

	(void)ctx;
	gate = kinst_fbsd_gate_alloc(&kinst_gate_word);
	if (gate == NULL) {
		printf("kinst: no memory for the trap gate\n");
		return (ENOMEM);
	}
	__atomic_store_n(kinst_gate_word,
	    (uint64_t)(uintptr_t)kinst_fbsd_trap_nofault, __ATOMIC_SEQ_CST);
	if (kinst_nofault_install(gate) != 0) {
		printf("kinst: dtrace_trap_func is taken (DTrace loaded?)\n");
		__atomic_store_n(kinst_gate_word, 0, __ATOMIC_SEQ_CST);
		/* Never installed: retired like kinst_fbsd_gate_alloc's failure. */
		kinst_os_tramp_free(gate, 2 * PAGE_SIZE);
		return (EBUSY);
	}
	__atomic_store_n(&kinst_nofault_gate, gate, __ATOMIC_SEQ_CST);
	return (0);
}

static void
kinst_unstep_nofault(void *ctx)
{
	void *gate;

	(void)ctx;
	gate = kinst_nofault_gate;
	__atomic_store_n(&kinst_nofault_gate, NULL, __ATOMIC_SEQ_CST);
	/* No new call of the handler through the gate, ... */
	__atomic_store_n(kinst_gate_word, 0, __ATOMIC_SEQ_CST);
	/* ... none still in it (interrupts are off from the load to popfq). */
	kinst_os_quiesce();
	if (kinst_nofault_remove(gate) != 0)
		printf("kinst: dtrace_trap_func is not kinst's any more; "
		    "left as it is\n");
	/* The gate and its word stay mapped: a late caller finds 0. */
}

static int
kinst_step_dev(void *ctx)
{
	struct make_dev_args mda;
	int error;

	(void)ctx;
	make_dev_args_init(&mda);
	mda.mda_flags = MAKEDEV_WAITOK | MAKEDEV_CHECKNAME;
	mda.mda_devsw = &kinst_cdevsw;
	mda.mda_uid = UID_ROOT;
	mda.mda_gid = GID_WHEEL;
	mda.mda_mode = 0600;
	error = make_dev_s(&mda, &kinst_cdev, "kinst");
	if (error != 0) {
		printf("kinst: cannot create /dev/kinst: %d\n", error);
		kinst_cdev = NULL;
	}
	return (error);
}

static void
kinst_unstep_dev(void *ctx)
{
	(void)ctx;
	/*
	 * The gate is shut and no file is open (kinst_busy), so no thread
	 * is in an ioctl or read(2): destroy_dev() waits for at most an
	 * open(2) that the gate is refusing.
	 */
	destroy_dev(kinst_cdev);
	kinst_cdev = NULL;
}

static int
kinst_step_kld_load(void *ctx)
{
	(void)ctx;
	kinst_kld_load_tag = EVENTHANDLER_REGISTER(kld_load, kinst_kld_load,
	    NULL, EVENTHANDLER_PRI_ANY);
	return (kinst_kld_load_tag == NULL ? ENOMEM : 0);
}

static void
kinst_unstep_kld_load(void *ctx)
{
	(void)ctx;
	/* Never with a NULL tag: that would remove every kld_load handler. */
	EVENTHANDLER_DEREGISTER(kld_load, kinst_kld_load_tag);
	kinst_kld_load_tag = NULL;
}

static const struct kinst_fbsd_step kinst_steps[] = {
	{ "hook-free", kinst_step_hook_free, NULL },
	{ "os", kinst_step_os, kinst_unstep_os },
	{ "engine", kinst_step_engine, kinst_unstep_engine },
	{ "nofault", kinst_step_nofault, kinst_unstep_nofault },
	{ "hook", kinst_step_hook, kinst_unstep_hook },
	{ "dev", kinst_step_dev, kinst_unstep_dev },
	{ "kld_load", kinst_step_kld_load, kinst_unstep_kld_load },
};

/*
 * May the module go?  Only with no file open: then no probe is armed
 * (every file's destructor disarms its probes before it leaves the gate)
 * and no ioctl can be waiting for kld_sx, which the unloading thread holds.
 * This takes no kinst lock (no control sx under kld_sx, defect 3), and a
 * refusal leaves the gate as it was.  kldunload -f gets the same answer.
 */
static int
kinst_busy(void *ctx)
{
	(void)ctx;
	switch (kinst_fbsd_unload_check(&kinst_gate, &kinst_ctl.nprobes,
	    &kinst_jumps_used)) {
	case KINST_FBSD_UNLOAD_OK:
		return (0);
	case KINST_FBSD_UNLOAD_JUMPS_USED:
		/* The gate is open again: /dev/kinst stays usable. */
		printf("kinst: jump-optimized probes were used: a thread may "
		    "still be inside a detour; staying loaded\n");
		return (EBUSY);
	case KINST_FBSD_UNLOAD_FILES_OPEN:
		printf("kinst: /dev/kinst is open; close kinstctl first\n");
		return (EBUSY);
	default:
		/* Cannot happen (see above); refuse rather than tear down. */
		printf("kinst: probes left at unload; staying loaded\n");
		return (EBUSY);
	}
}

static struct kinst_fbsd_mod kinst_mod_state = {
	.steps = kinst_steps,
	.nsteps = nitems(kinst_steps),
	.busy = kinst_busy,
};

static int
kinst_load(void)
{
	int error;

	kinst_fbsd_gate_reopen(&kinst_gate);
	error = kinst_fbsd_mod_load(&kinst_mod_state);
	if (error != 0) {
		printf("kinst: load failed at step %s: %d\n",
		    kinst_mod_state.failed, error);
		return (error);
	}
	printf("kinst: ABI %u.%u, %d CPUs, ring %u bytes per CPU\n",
	    KINST_ABI_VERSION_MAJOR, KINST_ABI_VERSION_MINOR, mp_ncpus,
	    KINST_RING_SIZE);
	return (0);
}

static int
kinst_modevent(module_t mod, int type, void *data)
{
	(void)mod;
	(void)data;
	switch (type) {
	case MOD_LOAD:
		return (kinst_load());
	case MOD_QUIESCE:
		/* Plain kldunload: not while a file (and its probes) is open. */
		if (kinst_fbsd_gate_nfiles(&kinst_gate) != 0) {
			printf("kinst: /dev/kinst is open; close kinstctl "
			    "first\n");
			return (EBUSY);
		}
		return (0);
	case MOD_UNLOAD:
		/* Also after a failed MOD_LOAD, and for kldunload -f. */
		return (kinst_fbsd_mod_unload(&kinst_mod_state));
	case MOD_SHUTDOWN:
		return (0);
	default:
		return (EOPNOTSUPP);
	}
}

/*
 * The module is kinsttrace (kinsttrace.ko), not kinst: FreeBSD's DTrace
 * provider is module kinst version 1, and dtraceall.ko has
 * MODULE_DEPEND(dtraceall, kinst, 1, 1, 1) on amd64.  Under that name this
 * module would satisfy the dependency, kldload dtraceall (which dtrace(1)
 * runs) would then load dtrace.ko, and DTrace would take the #BP hook from
 * under armed probes.  No DTrace module depends on kinsttrace.  The device
 * stays /dev/kinst.
 */
static moduledata_t kinst_mod = {
	"kinsttrace",
	kinst_modevent,
	NULL
};

DECLARE_MODULE(kinsttrace, kinst_mod, SI_SUB_DRIVERS, SI_ORDER_MIDDLE);
MODULE_VERSION(kinsttrace, 1);

/*
 * The module name "dtrace", held while kinsttrace.ko is loaded, so that
 * dtrace.ko (and every DTrace provider, and dtrace(1)'s kldload of
 * dtraceall) fails to load with EEXIST instead of taking the #BP hook
 * from under armed probes: kinst_fbsd_guard_event() in kinst_freebsd.c
 * says why each event does what it does.  Its MOD_LOAD runs after
 * kinsttrace's (SI_ORDER_ANY sorts after SI_ORDER_MIDDLE); no
 * MODULE_VERSION, so it never satisfies a MODULE_DEPEND on dtrace.
 */
static int
kinst_guard_modevent(module_t mod, int type, void *data)
{
	enum kinst_fbsd_ev ev;

	(void)mod;
	(void)data;
	switch (type) {
	case MOD_LOAD:
		ev = KINST_FBSD_EV_LOAD;
		break;
	case MOD_QUIESCE:
		ev = KINST_FBSD_EV_QUIESCE;
		break;
	case MOD_UNLOAD:
		ev = KINST_FBSD_EV_UNLOAD;
		break;
	case MOD_SHUTDOWN:
		ev = KINST_FBSD_EV_SHUTDOWN;
		break;
	default:
		ev = KINST_FBSD_EV_OTHER;
		break;
	}
	return (kinst_fbsd_guard_event(&kinst_mod_state, ev));
}

static moduledata_t kinst_guard_mod = {
	"dtrace",
	kinst_guard_modevent,
	NULL
};

DECLARE_MODULE(kinst_dtrace_guard, kinst_guard_mod, SI_SUB_DRIVERS,
    SI_ORDER_ANY);
