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
 * The ioctls, records and read/poll semantics are those of the Linux
 * module (kmod/linux/kinst_linux.c); only the kernel interfaces differ.
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
#include <sys/proc.h>
#include <sys/selinfo.h>
#include <sys/smp.h>
#include <sys/sx.h>
#include <sys/uio.h>
#include <sys/callout.h>

#include "kinst_fbsd.h"

MALLOC_DEFINE(M_KINST, "kinst", "kinst instruction tracer");

#define	KINST_RING_SIZE		(512 * 1024)	/* bytes per CPU per open file */
#define	KINST_READ_MAX		(64 * 1024)	/* bytes one read(2) returns at most */
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
 * A jump probe's detour calls this (common/kinst_detour.h) with the
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

static struct cdev *kinst_cdev;
static eventhandler_tag kinst_kld_load_tag;
/* Open files against MOD_UNLOAD (common/kinst_freebsd.h). */
static struct kinst_fbsd_gate kinst_gate;
static bool kinst_is_dying(void);

struct kinst_file {
	struct kinst_csession cs;
	struct kinst_ring *rings;
	uint64_t	*hits;
	void		**bufs;		/* ring memory, per CPU (NULL if absent) */
	uint32_t	ncpus;		/* mp_maxid + 1 */
	uint32_t	next_cpu;	/* read(2) round robin */
	struct sx	read_sx;	/* one consumer at a time */
	struct mtx	poll_mtx;	/* the callout and last_poll */
	struct callout	poll_co;
	struct selinfo	sel;
	int		last_poll;	/* ticks of the last poll(2) without data */
	uint8_t		*bounce;
};

static int
kinst_errno(int err)
{
	switch (err) {
	case KINST_E_OK:	return (0);
	case KINST_E_INVAL:	return (EINVAL);
	case KINST_E_NOENT:	return (ENOENT);
	case KINST_E_REFUSED:	return (EOPNOTSUPP);
	case KINST_E_EXIST:	return (EEXIST);
	case KINST_E_NOSPC:	return (ENOSPC);
	case KINST_E_NOMEM:	return (ENOMEM);
	case KINST_E_FAULT:	return (EFAULT);
	case KINST_E_TOOBIG:	return (EFBIG);
	default:		return (EIO);
	}
}

static void
kinst_file_free(struct kinst_file *kf)
{
	uint32_t i;

	if (kf->bufs != NULL)
		for (i = 0; i < kf->ncpus; i++)
			free(kf->bufs[i], M_KINST);
	free(kf->bufs, M_KINST);
	free(kf->rings, M_KINST);
	free(kf->hits, M_KINST);
	free(kf->bounce, M_KINST);
	free(kf, M_KINST);
}

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
	if (kinst_rings_have_data(kf->rings, kf->ncpus) || kinst_is_dying()) {
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
	/* Disarm, restore, quiesce, free trampolines: no producer is left. */
	kinst_ctl_session_fini(&kinst_ctl, &kf->cs);
	callout_drain(&kf->poll_co);
	seldrain(&kf->sel);
	mtx_destroy(&kf->poll_mtx);
	sx_destroy(&kf->read_sx);
	kinst_file_free(kf);
	kinst_fbsd_gate_leave(&kinst_gate);
}

static int
kinst_open(struct cdev *dev, int oflags, int devtype, struct thread *td)
{
	struct kinst_file *kf;
	uint32_t n;
	u_int i;
	int error;

	(void)dev;
	(void)oflags;
	(void)devtype;
	/* Not once MOD_UNLOAD has begun (kinst_busy). */
	if (!kinst_fbsd_gate_enter(&kinst_gate))
		return (ENXIO);
	n = mp_maxid + 1;
	kf = malloc(sizeof(*kf), M_KINST, M_WAITOK | M_ZERO);
	kf->ncpus = n;
	kf->rings = mallocarray(n, sizeof(*kf->rings), M_KINST,
	    M_WAITOK | M_ZERO);
	kf->hits = mallocarray(n, sizeof(*kf->hits), M_KINST,
	    M_WAITOK | M_ZERO);
	kf->bufs = mallocarray(n, sizeof(*kf->bufs), M_KINST,
	    M_WAITOK | M_ZERO);
	kf->bounce = malloc(KINST_READ_MAX, M_KINST, M_WAITOK);
	/* Absent CPU ids never run, so their ring stays empty (zeroed). */
	CPU_FOREACH(i) {
		kf->bufs[i] = malloc(KINST_RING_SIZE, M_KINST,
		    M_WAITOK | M_ZERO);
		if (kinst_ring_init(&kf->rings[i], kf->bufs[i],
		    KINST_RING_SIZE) != 0) {
			kinst_file_free(kf);
			kinst_fbsd_gate_leave(&kinst_gate);
			return (ENOMEM);
		}
	}
	sx_init(&kf->read_sx, "kinst read");
	mtx_init(&kf->poll_mtx, "kinst poll", NULL, MTX_DEF);
	callout_init_mtx(&kf->poll_co, &kf->poll_mtx, 0);
	kinst_session_init(&kf->cs.s, kf->rings, kf->hits, n);
	kf->cs.s.os_priv = kf;
	/* The opener never traces itself (its reads would feed back). */
	kf->cs.s.exclude_pid = td->td_proc->p_pid;
	kinst_ctl_session_init(&kinst_ctl, &kf->cs);
	error = devfs_set_cdevpriv(kf, kinst_dtor);
	if (error != 0)
		kinst_dtor(kf);
	return (error);
}

static int
kinst_read(struct cdev *dev, struct uio *uio, int ioflag)
{
	struct kinst_file *kf;
	size_t cap, n;
	int error;

	(void)dev;
	error = devfs_get_cdevpriv((void **)&kf);
	if (error != 0)
		return (error);
	if (uio->uio_resid < (ssize_t)sizeof(struct kinst_hit_record))
		return (EINVAL);
	cap = MIN((size_t)uio->uio_resid, KINST_READ_MAX);
	error = sx_xlock_sig(&kf->read_sx);
	if (error != 0)
		return (error);
	for (;;) {
		n = kinst_rings_drain(kf->rings, kf->ncpus, &kf->next_cpu,
		    kf->bounce, cap, sizeof(struct kinst_hit_record));
		if (n != 0)
			break;
		if (kinst_is_dying()) {
			error = ENXIO;
			goto out;
		}
		/* devfs passes the file's O_NONBLOCK in ioflag (IO_NDELAY). */
		if ((ioflag & O_NONBLOCK) != 0) {
			error = EWOULDBLOCK;
			goto out;
		}
		/* No wakeup comes from probe context: look again soon. */
		error = tsleep(kf, PCATCH, "kinstrd", KINST_POLL_TICKS);
		if (error != 0 && error != EWOULDBLOCK)
			goto out;
	}
	error = uiomove(kf->bounce, n, uio);
out:
	sx_xunlock(&kf->read_sx);
	return (error);
}

static int
kinst_poll(struct cdev *dev, int events, struct thread *td)
{
	struct kinst_file *kf;
	int revents;

	(void)dev;
	if (devfs_get_cdevpriv((void **)&kf) != 0)
		return (events & (POLLIN | POLLRDNORM | POLLHUP));
	revents = 0;
	if ((events & (POLLIN | POLLRDNORM)) == 0)
		return (0);
	if (kinst_rings_have_data(kf->rings, kf->ncpus) || kinst_is_dying())
		return (events & (POLLIN | POLLRDNORM));
	selrecord(td, &kf->sel);
	mtx_lock(&kf->poll_mtx);
	kf->last_poll = ticks;
	if (!callout_pending(&kf->poll_co))
		callout_reset(&kf->poll_co, KINST_POLL_TICKS, kinst_poll_tick,
		    kf);
	mtx_unlock(&kf->poll_mtx);
	return (revents);
}

static int
kinst_ioc_list(struct kinst_file *kf, struct kinst_list *l)
{
	struct kinst_probe_info *pi;
	uint32_t cap, n;
	int error;

	cap = MIN(l->cap, KINST_MAX_PROBES);
	pi = NULL;
	if (cap != 0)
		pi = mallocarray(cap, sizeof(*pi), M_KINST, M_WAITOK | M_ZERO);
	n = kinst_ctl_list(&kinst_ctl, &kf->cs, pi, cap);
	error = 0;
	if (cap != 0)
		error = copyout(pi, (void *)(uintptr_t)l->buf,
		    (size_t)MIN(n, cap) * sizeof(*pi));
	free(pi, M_KINST);
	if (error == 0)
		l->count = n;
	return (error);
}

static int
kinst_ioc_stats(struct kinst_file *kf, struct kinst_stats *st)
{
	struct kinst_cpu_stats *cs;
	uint32_t cap;
	int error;

	cap = MIN(st->cap, kf->ncpus);
	cs = NULL;
	if (cap != 0)
		cs = mallocarray(cap, sizeof(*cs), M_KINST, M_WAITOK | M_ZERO);
	kinst_ctl_stats(&kinst_ctl, &kf->cs, cs, cap, st);
	error = 0;
	if (cap != 0)
		error = copyout(cs, (void *)(uintptr_t)st->buf,
		    (size_t)cap * sizeof(*cs));
	free(cs, M_KINST);
	return (error);
}

static int
kinst_ioc_text(struct kinst_text *t)
{
	uint8_t *buf;
	uint32_t cap, n;
	int err, error;

	cap = MIN(t->cap, KINST_FUNC_MAX);
	buf = malloc(cap == 0 ? 1 : cap, M_KINST, M_WAITOK);
	err = kinst_ctl_text(&kinst_ctl, t, buf, cap);
	error = kinst_errno(err);
	if (err == KINST_E_OK) {
		n = MIN(cap, t->size);
		if (n != 0)
			error = copyout(buf, (void *)(uintptr_t)t->buf, n);
	}
	free(buf, M_KINST);
	return (error);
}

/*
 * Probe programs (ABI 1.5): the instructions are copied in here, verified
 * in common/kinst_progctl.c.  A refusal's verdict reaches user space only
 * on Linux (the structure is copied out on success only, section 4 of
 * docs/freebsd.md); the errno is the same.
 */
static int
kinst_ioc_prog_load(struct kinst_file *kf, struct kinst_prog_load *pl)
{
	struct kinst_pinsn *code;
	int error;

	code = NULL;
	if (pl->ninsns != 0 && pl->ninsns <= KINST_PROG_MAX_INSNS) {
		code = mallocarray(pl->ninsns, sizeof(*code), M_KINST,
		    M_WAITOK);
		error = copyin((void *)(uintptr_t)pl->insns, code,
		    (size_t)pl->ninsns * sizeof(*code));
		if (error != 0) {
			free(code, M_KINST);
			return (error);
		}
	}
	error = kinst_errno(kinst_ctl_prog_load(&kinst_ctl, &kf->cs, pl,
	    code));
	free(code, M_KINST);
	return (error);
}

static int
kinst_ioc_prog_stats(struct kinst_file *kf, struct kinst_prog_stats *ps)
{
	struct kinst_prog_cpu_stats *out;
	uint32_t cap;
	int error;

	cap = MIN(ps->cap, kf->ncpus);
	out = NULL;
	if (cap != 0)
		out = mallocarray(cap, sizeof(*out), M_KINST,
		    M_WAITOK | M_ZERO);
	kinst_ctl_prog_stats(&kinst_ctl, &kf->cs, out, cap, ps);
	error = 0;
	if (cap != 0)
		error = copyout(out, (void *)(uintptr_t)ps->buf,
		    (size_t)cap * sizeof(*out));
	free(out, M_KINST);
	return (error);
}

/*
 * Aggregation (ABI 1.6): common/kinst_aggctl.c validates every field; only
 * the entries and per-CPU counters are copied here.
 */
static int
kinst_ioc_agg_read(struct kinst_file *kf, struct kinst_agg_read *rd)
{
	uint32_t nslots, esize, cap;
	uint8_t *out;
	int error;

	error = kinst_errno(kinst_ctl_agg_geom(&kf->cs, &nslots, &esize));
	if (error != 0)
		return (error);
	cap = MIN(rd->cap, nslots);
	out = NULL;
	if (cap != 0)
		out = mallocarray(cap, esize, M_KINST, M_WAITOK);
	error = kinst_errno(kinst_ctl_agg_read(&kinst_ctl, &kf->cs, rd, out,
	    cap));
	if (error == 0 && rd->count != 0)
		error = copyout(out, (void *)(uintptr_t)rd->buf,
		    (size_t)rd->count * esize);
	free(out, M_KINST);
	return (error);
}

/* KINST_IOC_AGG_STACKS (ABI 1.8): one CPU's stacks. */
static int
kinst_ioc_agg_stacks(struct kinst_file *kf, struct kinst_agg_read *rd)
{
	struct kinst_agg_stack *out;
	uint32_t nstacks, cap;
	int error;

	error = kinst_errno(kinst_ctl_agg_stack_geom(&kf->cs, &nstacks));
	if (error != 0)
		return (error);
	cap = MIN(rd->cap, nstacks);
	out = NULL;
	if (cap != 0)
		out = mallocarray(cap, sizeof(*out), M_KINST, M_WAITOK);
	error = kinst_errno(kinst_ctl_agg_stacks(&kinst_ctl, &kf->cs, rd, out,
	    cap));
	if (error == 0 && rd->count != 0)
		error = copyout(out, (void *)(uintptr_t)rd->buf,
		    (size_t)rd->count * sizeof(*out));
	free(out, M_KINST);
	return (error);
}

static int
kinst_ioc_agg_stats(struct kinst_file *kf, struct kinst_agg_stats *st)
{
	struct kinst_agg_cpu_stats *out;
	uint32_t cap;
	int error;

	cap = MIN(st->cap, kf->ncpus);
	out = NULL;
	if (cap != 0)
		out = mallocarray(cap, sizeof(*out), M_KINST,
		    M_WAITOK | M_ZERO);
	error = kinst_errno(kinst_ctl_agg_stats(&kinst_ctl, &kf->cs, out, cap,
	    st));
	if (error == 0 && cap != 0)
		error = copyout(out, (void *)(uintptr_t)st->buf,
		    (size_t)cap * sizeof(*out));
	free(out, M_KINST);
	return (error);
}

/*
 * The ioctl layer (sys_generic.c) copies the argument structure in before
 * and out after this, the latter only when 0 is returned.
 */
static int
kinst_ioctl(struct cdev *dev, u_long cmd, caddr_t data, int fflag,
    struct thread *td)
{
	struct kinst_file *kf;
	struct kinst_version *v;
	int error;

	(void)dev;
	(void)fflag;
	(void)td;
	error = devfs_get_cdevpriv((void **)&kf);
	if (error != 0)
		return (error);
	switch (cmd) {
	case KINST_IOC_VERSION:
		v = (struct kinst_version *)data;
		memset(v, 0, sizeof(*v));
		v->abi_version = KINST_ABI_VERSION;
		v->max_probes = KINST_MAX_PROBES;
		v->ncpus = kf->ncpus;
		v->record_size = sizeof(struct kinst_hit_record);
		return (0);
	case KINST_IOC_ARM:
		if (kinst_hook_owner() != (void *)kinst_hook) {
			printf("kinst: the #BP hook was taken over "
			    "(DTrace loaded?): refusing to arm\n");
			return (EBUSY);
		}
		error = kinst_errno(kinst_ctl_arm(&kinst_ctl, &kf->cs,
		    (struct kinst_arm *)data));
		/* Single-instruction windows need no wait: optimize now. */
		if (error == 0 && kinst_ctl_opt_pending(&kinst_ctl) &&
		    kinst_ctl_optimize(&kinst_ctl) != 0)
			__atomic_store_n(&kinst_jumps_used, true,
			    __ATOMIC_RELAXED);
		return (error);
	case KINST_IOC_DISARM:
		return (kinst_errno(kinst_ctl_disarm(&kinst_ctl, &kf->cs,
		    (struct kinst_disarm *)data)));
	case KINST_IOC_LIST:
		return (kinst_ioc_list(kf, (struct kinst_list *)data));
	case KINST_IOC_STATS:
		return (kinst_ioc_stats(kf, (struct kinst_stats *)data));
	case KINST_IOC_TEXT:
		return (kinst_ioc_text((struct kinst_text *)data));
	case KINST_IOC_FILTER:
		return (kinst_errno(kinst_ctl_filter(&kinst_ctl, &kf->cs,
		    (struct kinst_filter *)data)));
	case KINST_IOC_PROG_LOAD:
		return (kinst_ioc_prog_load(kf, (struct kinst_prog_load *)data));
	case KINST_IOC_PROG_STATS:
		return (kinst_ioc_prog_stats(kf, (struct kinst_prog_stats *)data));
	case KINST_IOC_AGG_SETUP:
		return (kinst_errno(kinst_ctl_agg_setup(&kinst_ctl, &kf->cs,
		    (struct kinst_agg_setup *)data)));
	case KINST_IOC_AGG_READ:
		return (kinst_ioc_agg_read(kf, (struct kinst_agg_read *)data));
	case KINST_IOC_AGG_CLEAR:
		return (kinst_errno(kinst_ctl_agg_clear(&kinst_ctl, &kf->cs,
		    (struct kinst_agg_clear *)data)));
	case KINST_IOC_AGG_STATS:
		return (kinst_ioc_agg_stats(kf, (struct kinst_agg_stats *)data));
	case KINST_IOC_AGG_STACKS:
		return (kinst_ioc_agg_stacks(kf, (struct kinst_agg_read *)data));
	default:
		return (ENOTTY);
	}
}

static struct cdevsw kinst_cdevsw = {
	.d_version =	D_VERSION,
	.d_name =	"kinst",
	.d_open =	kinst_open,
	.d_read =	kinst_read,
	.d_ioctl =	kinst_ioctl,
	.d_poll =	kinst_poll,
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
	if (kinst_hook_owner() != (void *)kinst_hook)
		printf("kinst: WARNING: %s took over the #BP hook; kinst "
		    "probes will panic the kernel: close kinstctl and unload "
		    "%s now\n", lf->filename, lf->filename);
}

/*
 * Load and unload are the steps below, run by kinst_fbsd_mod_load() and
 * undone by kinst_fbsd_mod_unload() (common/kinst_freebsd.c): a failed load
 * undoes exactly the steps it did, and the MOD_UNLOAD FreeBSD sends after it
 * then finds nothing set up and touches nothing.  docs/freebsd.md, 3.
 */
static bool
kinst_is_dying(void)
{
	return (__atomic_load_n(&kinst_gate.shut, __ATOMIC_SEQ_CST) != 0);
}

static int
kinst_step_hook_free(void *ctx)
{
	void *owner;

	(void)ctx;
	owner = kinst_hook_owner();
	if (owner != NULL) {
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
	kinst_ctl_jump_enable(&kinst_ctl, (uint64_t)(uintptr_t)kinst_fbsd_jhandler,
	    0, true);
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

static int
kinst_step_nofault(void *ctx)
{
	(void)ctx;
	if (kinst_nofault_install() != 0) {
		printf("kinst: dtrace_trap_func is taken (DTrace loaded?)\n");
		return (EBUSY);
	}
	return (0);
}

static void
kinst_unstep_nofault(void *ctx)
{
	(void)ctx;
	if (kinst_nofault_remove() != 0)
		printf("kinst: dtrace_trap_func is not kinst's any more; "
		    "left as it is\n");
	/* No CPU is still in kinst_fbsd_trap_nofault(). */
	kinst_os_quiesce();
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
	switch (kinst_fbsd_unload_check(&kinst_gate, &kinst_ctl.nprobes)) {
	case KINST_FBSD_UNLOAD_OK:
		if (__atomic_load_n(&kinst_jumps_used, __ATOMIC_RELAXED)) {
			printf("kinst: jump-optimized probes were used: a "
			    "thread may still be inside a detour; staying "
			    "loaded\n");
			return (EBUSY);
		}
		return (0);
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

DECLARE_MODULE(kinsttrace, kinst_mod, SI_SUB_DRIVERS, SI_ORDER_ANY);
MODULE_VERSION(kinsttrace, 1);
