/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The /dev/kinst protocol (kinst_dev.h): sessions, read(2), poll(2) and
 * every ioctl, for both kernels.  Thread context only.
 */

#include "kinst_bytes.h"
#include "kinst_dev.h"
#include "kinst_os.h"

static uint32_t
dev_min(uint32_t a, uint32_t b)
{
	return (a < b ? a : b);
}

int
kinst_dev_errno(int err)
{
	switch (err) {
	case KINST_E_OK:	return (0);
	case KINST_E_INVAL:	return (KINST_EINVAL);
	case KINST_E_NOENT:	return (KINST_ENOENT);
	case KINST_E_REFUSED:	return (KINST_EOPNOTSUPP);
	case KINST_E_EXIST:	return (KINST_EEXIST);
	case KINST_E_NOSPC:	return (KINST_ENOSPC);
	case KINST_E_NOMEM:	return (KINST_ENOMEM);
	case KINST_E_FAULT:	return (KINST_EFAULT);
	case KINST_E_TOOBIG:	return (KINST_EFBIG);
	default:		return (KINST_EIO);
	}
}

int
kinst_dev_init(struct kinst_dev *d, struct kinst_ctl *ctl, uint32_t ncpus,
    uint32_t ring_size)
{
	kinst_bzero(d, sizeof(*d));
	if (ncpus == 0 ||
	    ring_size < KINST_DEV_RING_MIN || ring_size > KINST_DEV_RING_MAX ||
	    (ring_size & (ring_size - 1)) != 0)
		return (KINST_EINVAL);
	d->ctl = ctl;
	d->ncpus = ncpus;
	d->ring_size = ring_size;
	return (0);
}

bool
kinst_dev_is_dying(const struct kinst_dev *d)
{
	return (__atomic_load_n(&d->dying, __ATOMIC_ACQUIRE) != 0);
}

void
kinst_dev_set_dying(struct kinst_dev *d)
{
	__atomic_store_n(&d->dying, 1, __ATOMIC_RELEASE);
}

/* ---- Open files ---- */

/* One CPU's ring memory: the ctl page, then the records. */
static size_t
dev_ring_bytes(const struct kinst_dev_file *f)
{
	return ((size_t)KINST_MAP_PAGE + f->ring_size);
}

void
kinst_dev_free(struct kinst_dev_file *f)
{
	uint32_t i;

	if (f->bufs != NULL && f->handles != NULL) {
		for (i = 0; i < f->ncpus; i++)
			if (f->bufs[i] != NULL)
				kinst_os_ring_free(f->bufs[i],
				    dev_ring_bytes(f), f->handles[i]);
	}
	if (f->bufs != NULL)
		kinst_os_free(f->bufs, (size_t)f->ncpus * sizeof(*f->bufs));
	if (f->handles != NULL)
		kinst_os_free(f->handles,
		    (size_t)f->ncpus * sizeof(*f->handles));
	if (f->rings != NULL)
		kinst_os_free(f->rings, (size_t)f->ncpus * sizeof(*f->rings));
	if (f->hits != NULL)
		kinst_os_free(f->hits, (size_t)f->ncpus * sizeof(*f->hits));
	if (f->bounce != NULL)
		kinst_os_free(f->bounce, KINST_DEV_READ_MAX);
	f->bufs = NULL;
	f->handles = NULL;
	f->rings = NULL;
	f->hits = NULL;
	f->bounce = NULL;
}

int
kinst_dev_open(struct kinst_dev *d, struct kinst_dev_file *f,
    int32_t opener_pid, void *os_priv)
{
	int32_t pid, tid;
	uint32_t i, n;

	n = d->ncpus;
	f->ncpus = n;
	f->ring_size = d->ring_size;
	f->next_cpu = 0;
	f->rings = kinst_os_alloc((size_t)n * sizeof(*f->rings));
	f->hits = kinst_os_alloc((size_t)n * sizeof(*f->hits));
	f->bufs = kinst_os_alloc((size_t)n * sizeof(*f->bufs));
	f->handles = kinst_os_alloc((size_t)n * sizeof(*f->handles));
	f->bounce = kinst_os_alloc(KINST_DEV_READ_MAX);
	if (f->rings == NULL || f->hits == NULL || f->bufs == NULL ||
	    f->handles == NULL || f->bounce == NULL)
		goto nomem;
	/* Empty rings without buffers (rings_ready). */
	kinst_bzero(f->rings, (size_t)n * sizeof(*f->rings));
	for (i = 0; i < n; i++) {
		f->bufs[i] = NULL;
		f->handles[i] = NULL;
	}
	f->rings_ready = 0;
	kinst_session_init(&f->cs.s, f->rings, f->hits, n);
	f->cs.s.os_priv = os_priv;
	f->cs.s.exclude_pid = opener_pid;
	kinst_ctl_session_init(d->ctl, &f->cs);
	/* Who holds what, for the kernel log and the holders list. */
	kinst_os_thread(&pid, &tid, f->cs.comm);
	f->cs.pid = opener_pid;
	return (0);
nomem:
	kinst_dev_free(f);
	return (KINST_ENOMEM);
}

void
kinst_dev_close(struct kinst_dev *d, struct kinst_dev_file *f)
{
	/* Disarm, restore, quiesce, free trampolines: no producer is left. */
	kinst_ctl_session_fini(d->ctl, &f->cs);
}

/* ---- read(2), poll(2) ---- */

bool
kinst_dev_readable(const struct kinst_dev_file *f)
{
	return (kinst_rings_have_data(f->rings, f->ncpus));
}

int
kinst_dev_read(struct kinst_dev *d, struct kinst_dev_file *f, size_t count,
    bool nonblock, size_t *n)
{
	int error;

	*n = 0;
	if (count < sizeof(struct kinst_hit_record))
		return (KINST_EINVAL);
	if (count > KINST_DEV_READ_MAX)
		count = KINST_DEV_READ_MAX;
	for (;;) {
		if (kinst_dev_is_dying(d))
			return (KINST_ENODEV);
		*n = kinst_rings_drain(f->rings, f->ncpus, &f->next_cpu,
		    f->bounce, count, sizeof(struct kinst_hit_record));
		if (*n != 0)
			return (0);
		if (nonblock)
			return (KINST_EAGAIN);
		/*
		 * Woken at the watermark (KINST_IOC_WAKE) or by the
		 * shim's recheck: either way, what is there is returned.
		 */
		error = kinst_os_dev_wait(f);
		if (error != 0)
			return (error);
	}
}

int
kinst_dev_poll(struct kinst_dev *d, struct kinst_dev_file *f)
{
	if (kinst_dev_is_dying(d))
		return (KINST_DEV_POLL_GONE);
	return (kinst_rings_above(f->rings, f->ncpus,
	    KINST_LOAD_RELAXED(&f->cs.s.wake_bytes)) ? KINST_DEV_POLL_IN : 0);
}

int
kinst_dev_mmap(struct kinst_dev *d, struct kinst_dev_file *f, uint64_t off,
    uint64_t len, uint32_t how, struct kinst_dev_map *m)
{
	uint64_t rel;
	uint32_t cpu;

	kinst_bzero(m, sizeof(*m));
	if (kinst_dev_is_dying(d))
		return (KINST_ENODEV);
	if ((how & KINST_DEV_MAP_SHARED) == 0)
		return (KINST_EINVAL);
	/* Pairs with kinst_dev_rings_alloc(): bufs and ring_size are set. */
	if (__atomic_load_n(&f->rings_ready, __ATOMIC_ACQUIRE) == 0)
		return (KINST_ENXIO);
	cpu = (uint32_t)(off / KINST_MAP_STRIDE);
	rel = off % KINST_MAP_STRIDE;
	if (off / KINST_MAP_STRIDE >= f->ncpus)
		return (KINST_EINVAL);
	if (rel == 0 && len == KINST_MAP_PAGE) {
		m->data = 0;
	} else if (rel == KINST_MAP_PAGE && len == f->ring_size) {
		if ((how & KINST_DEV_MAP_WRITE) != 0)
			return (KINST_EACCES);
		m->data = 1;
	} else
		return (KINST_EINVAL);
	m->base = f->bufs[cpu];
	m->handle = f->handles[cpu];
	m->off = rel;
	m->len = len;
	m->cpu = cpu;
	return (0);
}

/* ---- ioctls ---- */

/*
 * Copy cnt elements of esize bytes out of kernel memory k to the caller's
 * uaddr.  Nothing to copy is no fault (a NULL buffer with nothing for it).
 */
static int
dev_copyout_array(const void *k, uint64_t uaddr, uint32_t cnt, size_t esize)
{
	if (cnt == 0)
		return (0);
	return (kinst_os_copyout(k, uaddr, (size_t)cnt * esize) != 0 ?
	    KINST_EFAULT : 0);
}

/* Zeroed kernel memory for cap elements (NULL for none, or ENOMEM). */
static int
dev_alloc_array(uint32_t cap, size_t esize, void **p)
{
	*p = NULL;
	if (cap == 0)
		return (0);
	*p = kinst_os_alloc((size_t)cap * esize);
	return (*p == NULL ? KINST_ENOMEM : 0);
}

static void
dev_free_array(void *p, uint32_t cap, size_t esize)
{
	if (p != NULL)
		kinst_os_free(p, (size_t)cap * esize);
}

static int
ioc_version(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_version *v = arg;

	(void)d;
	kinst_bzero(v, sizeof(*v));
	v->abi_version = KINST_ABI_VERSION;
	v->max_probes = KINST_MAX_PROBES;
	v->ncpus = f->ncpus;
	v->record_size = sizeof(struct kinst_hit_record);
	return (0);
}

/*
 * The file's ring buffers, before its first probe is armed (kinst_dev.h).
 * Under the control lock: KINST_IOC_RING takes it too.
 */
int
kinst_dev_rings_alloc(struct kinst_dev_file *f)
{
	uint32_t i;
	int error;

	error = 0;
	kinst_os_ctl_lock();
	if (f->rings_ready != 0)
		goto out;
	for (i = 0; i < f->ncpus; i++) {
		f->bufs[i] = kinst_os_ring_alloc(dev_ring_bytes(f),
		    &f->handles[i]);
		if (f->bufs[i] == NULL) {
			while (i-- > 0) {
				kinst_os_ring_free(f->bufs[i],
				    dev_ring_bytes(f), f->handles[i]);
				f->bufs[i] = NULL;
				f->handles[i] = NULL;
			}
			error = KINST_ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < f->ncpus; i++) {
		struct kinst_ring_ctl *ctl = f->bufs[i];

		(void)kinst_ring_init_ctl(&f->rings[i], ctl,
		    (uint8_t *)f->bufs[i] + KINST_MAP_PAGE, f->ring_size);
		ctl->cpu = i;
	}
	/* kinst_dev_mmap() reads it without the lock. */
	__atomic_store_n(&f->rings_ready, 1, __ATOMIC_RELEASE);
out:
	kinst_os_ctl_unlock();
	return (error);
}

static int
ioc_ring(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_ring_size *rs = arg;
	uint32_t size;
	int error;

	(void)d;
	size = rs->size;
	if (rs->flags != 0)
		return (KINST_EINVAL);
	if (size != 0 && (size < KINST_DEV_RING_MIN ||
	    size > KINST_DEV_RING_MAX || (size & (size - 1)) != 0))
		return (KINST_EINVAL);
	error = 0;
	kinst_os_ctl_lock();
	if (size != 0 && size != f->ring_size) {
		if (f->rings_ready != 0)
			error = KINST_EBUSY;
		else
			f->ring_size = size;
	}
	rs->size = f->ring_size;
	rs->allocated = f->rings_ready;
	kinst_os_ctl_unlock();
	rs->min = KINST_DEV_RING_MIN;
	rs->max = KINST_DEV_RING_MAX;
	rs->ncpus = f->ncpus;
	return (error);
}

/* The wake-up watermark; the engine caps it at half of a ring. */
static int
ioc_wake(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_wake *w = arg;

	(void)d;
	if (w->flags != 0 || w->bytes > KINST_DEV_RING_MAX / 2)
		return (KINST_EINVAL);
	KINST_STORE_RELAXED(&f->cs.s.wake_bytes, w->bytes);
	return (0);
}

static int
ioc_arm(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	int error;

	error = kinst_os_arm_gate();
	if (error != 0)
		return (error);
	/* A real ARM (not a check) needs the rings. */
	if ((((struct kinst_arm *)arg)->flags & KINST_ARM_CHECK) == 0 &&
	    (error = kinst_dev_rings_alloc(f)) != 0)
		return (error);
	error = kinst_dev_errno(kinst_ctl_arm(d->ctl, &f->cs, arg));
	/* Jump optimization, now or a little later (the shim's choice). */
	if (error == 0 && kinst_ctl_opt_pending(d->ctl))
		kinst_os_opt_kick(d->ctl);
	return (error);
}

/* An ARM whose ids the caller cannot learn: take it back. */
static void
arm_undo(struct kinst_dev *d, struct kinst_dev_file *f,
    const struct kinst_arm *a)
{
	struct kinst_disarm dis;
	uint32_t i;

	dis.probe_id = a->probe_id;
	for (i = 0; i < a->narmed; i++, dis.probe_id++)
		(void)kinst_ctl_disarm(d->ctl, &f->cs, &dis);
}

static int
ioc_disarm(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	int error;

	error = kinst_dev_errno(kinst_ctl_disarm(d->ctl, &f->cs, arg));
	/* A shared site its last KINST_ARM_NOOPT subscriber left. */
	if (error == 0 && kinst_ctl_opt_pending(d->ctl))
		kinst_os_opt_kick(d->ctl);
	return (error);
}

static int
ioc_list(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_list *l = arg;
	struct kinst_probe_info *pi;
	uint32_t cap, n;
	int error;

	cap = dev_min(l->cap, KINST_MAX_PROBES);
	if ((error = dev_alloc_array(cap, sizeof(*pi), (void **)&pi)) != 0)
		return (error);
	n = kinst_ctl_list(d->ctl, &f->cs, pi, cap);
	error = dev_copyout_array(pi, l->buf, dev_min(n, cap), sizeof(*pi));
	dev_free_array(pi, cap, sizeof(*pi));
	if (error == 0)
		l->count = n;
	return (error);
}

static int
ioc_stats(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_stats *st = arg;
	struct kinst_cpu_stats *cs;
	uint32_t cap;
	int error;

	cap = dev_min(st->cap, f->ncpus);
	if ((error = dev_alloc_array(cap, sizeof(*cs), (void **)&cs)) != 0)
		return (error);
	kinst_ctl_stats(d->ctl, &f->cs, cs, cap, st);
	error = dev_copyout_array(cs, st->buf, cap, sizeof(*cs));
	dev_free_array(cs, cap, sizeof(*cs));
	return (error);
}

static int
ioc_text(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_text *t = arg;
	uint8_t *buf;
	uint32_t cap;
	int error;

	(void)f;
	cap = dev_min(t->cap, KINST_FUNC_MAX);
	buf = kinst_os_alloc(cap == 0 ? 1 : cap);
	if (buf == NULL)
		return (KINST_ENOMEM);
	error = kinst_dev_errno(kinst_ctl_text(d->ctl, t, buf, cap));
	if (error == 0)
		error = dev_copyout_array(buf, t->buf, dev_min(cap, t->size), 1);
	kinst_os_free(buf, cap == 0 ? 1 : cap);
	return (error);
}

static int
ioc_filter(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	return (kinst_dev_errno(kinst_ctl_filter(d->ctl, &f->cs, arg)));
}

/* The instructions are copied in only when their count is valid. */
static int
ioc_prog_load(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_prog_load *pl = arg;
	struct kinst_pinsn *code;
	uint32_t n;
	int error;

	code = NULL;
	n = 0;
	if (pl->ninsns != 0 && pl->ninsns <= KINST_PROG_MAX_INSNS) {
		n = pl->ninsns;
		if ((error = dev_alloc_array(n, sizeof(*code),
		    (void **)&code)) != 0)
			return (error);
		if (kinst_os_copyin(pl->insns, code,
		    (size_t)n * sizeof(*code)) != 0) {
			dev_free_array(code, n, sizeof(*code));
			return (KINST_EFAULT);
		}
	}
	error = kinst_dev_errno(kinst_ctl_prog_load(d->ctl, &f->cs, pl, code));
	dev_free_array(code, n, sizeof(*code));
	return (error);
}

static int
ioc_prog_stats(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_prog_stats *ps = arg;
	struct kinst_prog_cpu_stats *out;
	uint32_t cap;
	int error;

	cap = dev_min(ps->cap, f->ncpus);
	if ((error = dev_alloc_array(cap, sizeof(*out), (void **)&out)) != 0)
		return (error);
	kinst_ctl_prog_stats(d->ctl, &f->cs, out, cap, ps);
	error = dev_copyout_array(out, ps->buf, cap, sizeof(*out));
	dev_free_array(out, cap, sizeof(*out));
	return (error);
}

static int
ioc_agg_setup(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	return (kinst_dev_errno(kinst_ctl_agg_setup(d->ctl, &f->cs, arg)));
}

static int
ioc_agg_read(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_agg_read *rd = arg;
	uint32_t nslots, esize, cap;
	uint8_t *out;
	int error;

	error = kinst_dev_errno(kinst_ctl_agg_geom(&f->cs, &nslots, &esize));
	if (error != 0)
		return (error);
	cap = dev_min(rd->cap, nslots);
	if ((error = dev_alloc_array(cap, esize, (void **)&out)) != 0)
		return (error);
	error = kinst_dev_errno(kinst_ctl_agg_read(d->ctl, &f->cs, rd, out,
	    cap));
	if (error == 0)
		error = dev_copyout_array(out, rd->buf, rd->count, esize);
	dev_free_array(out, cap, esize);
	return (error);
}

static int
ioc_agg_clear(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	return (kinst_dev_errno(kinst_ctl_agg_clear(d->ctl, &f->cs, arg)));
}

static int
ioc_agg_stats(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_agg_stats *st = arg;
	struct kinst_agg_cpu_stats *out;
	uint32_t cap;
	int error;

	cap = dev_min(st->cap, f->ncpus);
	if ((error = dev_alloc_array(cap, sizeof(*out), (void **)&out)) != 0)
		return (error);
	error = kinst_dev_errno(kinst_ctl_agg_stats(d->ctl, &f->cs, out, cap,
	    st));
	if (error == 0)
		error = dev_copyout_array(out, st->buf, cap, sizeof(*out));
	dev_free_array(out, cap, sizeof(*out));
	return (error);
}

static int
ioc_agg_stacks(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	struct kinst_agg_read *rd = arg;
	struct kinst_agg_stack *out;
	uint32_t nstacks, cap;
	int error;

	error = kinst_dev_errno(kinst_ctl_agg_stack_geom(&f->cs, &nstacks));
	if (error != 0)
		return (error);
	cap = dev_min(rd->cap, nstacks);
	if ((error = dev_alloc_array(cap, sizeof(*out), (void **)&out)) != 0)
		return (error);
	error = kinst_dev_errno(kinst_ctl_agg_stacks(d->ctl, &f->cs, rd, out,
	    cap));
	if (error == 0)
		error = dev_copyout_array(out, rd->buf, rd->count,
		    sizeof(*out));
	dev_free_array(out, cap, sizeof(*out));
	return (error);
}

static int
ioc_ts_setup(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	return (kinst_dev_errno(kinst_ctl_ts_setup(d->ctl, &f->cs, arg)));
}

static int
ioc_ts_stats(struct kinst_dev *d, struct kinst_dev_file *f, void *arg)
{
	return (kinst_dev_errno(kinst_ctl_ts_stats(d->ctl, &f->cs, arg)));
}

/*
 * The commands: number, argument size and direction (KINST_IOC_* in
 * kinst_abi.h, which each OS encodes its own way), and whether the
 * structure goes back with an error too.
 */
struct dev_ioc {
	uint32_t	nr;
	uint32_t	size;
	uint32_t	dir;
	bool		answers_on_error;
	int		(*fn)(struct kinst_dev *, struct kinst_dev_file *, void *);
};

#define	IOC_INOUT	(KINST_DEV_IN | KINST_DEV_OUT)

static const struct dev_ioc dev_iocs[] = {
	{ 1, sizeof(struct kinst_version), KINST_DEV_OUT, false, ioc_version },
	{ 2, sizeof(struct kinst_arm), IOC_INOUT, true, ioc_arm },
	{ 3, sizeof(struct kinst_disarm), IOC_INOUT, true, ioc_disarm },
	{ 4, sizeof(struct kinst_list), IOC_INOUT, false, ioc_list },
	{ 5, sizeof(struct kinst_stats), IOC_INOUT, false, ioc_stats },
	{ 6, sizeof(struct kinst_text), IOC_INOUT, true, ioc_text },
	{ 7, sizeof(struct kinst_filter), KINST_DEV_IN, false, ioc_filter },
	{ 16, sizeof(struct kinst_prog_load), IOC_INOUT, true, ioc_prog_load },
	{ 17, sizeof(struct kinst_prog_stats), IOC_INOUT, false,
	    ioc_prog_stats },
	{ 18, sizeof(struct kinst_agg_setup), IOC_INOUT, false, ioc_agg_setup },
	{ 19, sizeof(struct kinst_agg_read), IOC_INOUT, false, ioc_agg_read },
	{ 20, sizeof(struct kinst_agg_clear), IOC_INOUT, false, ioc_agg_clear },
	{ 21, sizeof(struct kinst_agg_stats), IOC_INOUT, false, ioc_agg_stats },
	{ 22, sizeof(struct kinst_agg_read), IOC_INOUT, false, ioc_agg_stacks },
	{ 23, sizeof(struct kinst_ts_setup), IOC_INOUT, false, ioc_ts_setup },
	{ 24, sizeof(struct kinst_ts_stats), KINST_DEV_OUT, false,
	    ioc_ts_stats },
	{ 25, sizeof(struct kinst_ring_size), IOC_INOUT, true, ioc_ring },
	{ 26, sizeof(struct kinst_wake), IOC_INOUT, false, ioc_wake },
};

KINST_ABI_ASSERT(sizeof(struct kinst_arm) <= KINST_DEV_ARG_MAX, "arg max");
KINST_ABI_ASSERT(sizeof(struct kinst_text) <= KINST_DEV_ARG_MAX, "arg max");

static const struct dev_ioc *
dev_ioc_find(const struct kinst_dev_cmd *cmd)
{
	size_t i;

	if (cmd->group != 'K')
		return (NULL);
	for (i = 0; i < KINST_NELEM(dev_iocs); i++)
		if (dev_iocs[i].nr == cmd->nr)
			return (dev_iocs[i].size == cmd->size &&
			    dev_iocs[i].dir == cmd->dir ? &dev_iocs[i] : NULL);
	return (NULL);
}

int
kinst_dev_ioctl(struct kinst_dev *d, struct kinst_dev_file *f,
    const struct kinst_dev_cmd *cmd, void *arg, bool *copy_back)
{
	const struct dev_ioc *ioc;

	*copy_back = false;
	if ((ioc = dev_ioc_find(cmd)) == NULL)
		return (KINST_ENOTTY);
	if (kinst_dev_is_dying(d))
		return (KINST_ENODEV);
	*copy_back = ioc->answers_on_error;
	return (ioc->fn(d, f, arg));
}

int
kinst_dev_ioctl_user(struct kinst_dev *d, struct kinst_dev_file *f,
    const struct kinst_dev_cmd *cmd, uint64_t uarg)
{
	uint64_t arg[KINST_DEV_ARG_MAX / sizeof(uint64_t)];
	const struct dev_ioc *ioc;
	bool copy_back;
	int error;

	if ((ioc = dev_ioc_find(cmd)) == NULL)
		return (KINST_ENOTTY);
	kinst_bzero(arg, sizeof(arg));
	if ((ioc->dir & KINST_DEV_IN) != 0 &&
	    kinst_os_copyin(uarg, arg, ioc->size) != 0)
		return (KINST_EFAULT);
	error = kinst_dev_ioctl(d, f, cmd, arg, &copy_back);
	if ((ioc->dir & KINST_DEV_OUT) == 0 || (error != 0 && !copy_back))
		return (error);
	if (kinst_os_copyout(arg, uarg, ioc->size) != 0) {
		if (error == 0 && ioc->fn == ioc_arm)
			arm_undo(d, f, (const struct kinst_arm *)(void *)arg);
		return (KINST_EFAULT);
	}
	return (error);
}
