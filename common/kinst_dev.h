/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The /dev/kinst protocol, once for every kernel: the per-open-file session
 * (its rings, hit counters and read bounce buffer around the control
 * session), read(2), poll(2) readiness, every ioctl's decoding, validation
 * and dispatch, and the mapping of control-path results to errno.  Both
 * shims call it; the host tests (tests/kmod/dev_test.c) run it against a
 * fake OS layer, so the protocol the FreeBSD module speaks is the code they
 * test.
 *
 * A shim keeps only what is its kernel's: registering the device, the
 * per-file wait/wake mechanism (its struct embeds a struct kinst_dev_file,
 * and kinst_os_wake_deferred() finds it from the session), the serializing
 * of readers, the ioctl argument convention of its kernel, and the hooks
 * declared at the end of this file.
 *
 * Every function here runs in thread context, never in probe context, and
 * may sleep (it allocates through kinst_os_alloc and takes the control lock
 * through kinst_control.c).
 *
 * Errors are positive errno values (a Linux shim negates them).  The values
 * are FreeBSD's or Linux's, chosen at compile time; each shim asserts at
 * compile time that they equal its <errno.h>'s.
 */
#ifndef KINST_DEV_H
#define KINST_DEV_H

#include "kinst_abi.h"
#include "kinst_control.h"
#include "kinst_ring.h"

/* Bytes one read(2) returns at most. */
#define	KINST_DEV_READ_MAX	(256u * 1024)
/* Bounds of a ring (bytes per CPU per open file; a power of two). */
#define	KINST_DEV_RING_MIN	4096u
#define	KINST_DEV_RING_MAX	(64u << 20)

/* errno values (FreeBSD and Linux agree on all but two). */
#define	KINST_ENOENT		2
#define	KINST_EIO		5
#define	KINST_ENXIO		6
#define	KINST_ENOMEM		12
#define	KINST_EACCES		13
#define	KINST_EFAULT		14
#define	KINST_EBUSY		16
#define	KINST_EEXIST		17
#define	KINST_ENODEV		19
#define	KINST_EINVAL		22
#define	KINST_ENOTTY		25
#define	KINST_EFBIG		27
#define	KINST_ENOSPC		28
#ifdef __FreeBSD__
#define	KINST_EAGAIN		35
#define	KINST_EOPNOTSUPP	45
#else
#define	KINST_EAGAIN		11
#define	KINST_EOPNOTSUPP	95
#endif

/* The module-wide device state: one per loaded module. */
struct kinst_dev {
	struct kinst_ctl *ctl;
	uint32_t	ncpus;		/* CPU ids 0 .. ncpus-1 get a ring */
	uint32_t	ring_size;	/* bytes per CPU per file */
	uint32_t	dying;		/* set once: readers go away (ENODEV) */
	uint32_t	_pad;
};

/* One open file. */
struct kinst_dev_file {
	struct kinst_csession cs;	/* cs.s.os_priv: the shim's */
	struct kinst_ring *rings;	/* [ncpus] */
	struct kinst_pcpu_count *hits;	/* [ncpus] */
	void		**bufs;		/* [ncpus] ring memory: a ctl page,
					   then ring_size bytes of data */
	void		**handles;	/* [ncpus] kinst_os_ring_alloc's */
	uint8_t		*bounce;	/* KINST_DEV_READ_MAX bytes: read(2) */
	uint32_t	ncpus;
	uint32_t	ring_size;
	uint32_t	next_cpu;	/* read(2) round robin */
	uint32_t	rings_ready;	/* ring buffers allocated (first ARM);
					   set with release semantics */
};

/* Argument directions of an ioctl command, as its number encodes them. */
#define	KINST_DEV_IN		0x1	/* the caller passes the structure in */
#define	KINST_DEV_OUT		0x2	/* ... and gets it back */

/* An ioctl command number taken apart by the shim (group 'K'). */
struct kinst_dev_cmd {
	uint32_t	group;
	uint32_t	nr;
	uint32_t	size;		/* of the argument structure */
	uint32_t	dir;		/* KINST_DEV_IN | KINST_DEV_OUT */
};

/* The largest argument structure of any command. */
#define	KINST_DEV_ARG_MAX	512u

/* A control-path result (KINST_E_*) as an errno value (0 for KINST_E_OK). */
int	kinst_dev_errno(int err);

/* Set up at module load; ring_size must lie in bounds, a power of two. */
int	kinst_dev_init(struct kinst_dev *d, struct kinst_ctl *ctl,
	    uint32_t ncpus, uint32_t ring_size);

/*
 * A file's rings: the ring structures exist from open on (empty, no
 * buffer: nothing to read, counters 0); their buffers, ring_size bytes
 * each, are allocated by the file's first ARM, under the control lock, at
 * the size KINST_IOC_RING may have set before.  No probe of the file
 * writes before its ARM, so no producer ever sees a ring without a buffer,
 * and the size never changes once a buffer exists.
 *
 * open(2): set up f (the shim's zeroed memory) as a session of opener_pid
 * (never recorded: its reads would feed back), with os_priv for the shim.
 * 0 or ENOMEM (then nothing is left allocated).
 */
int	kinst_dev_open(struct kinst_dev *d, struct kinst_dev_file *f,
	    int32_t opener_pid, void *os_priv);

/*
 * close: disarm and free every probe, program and aggregation of the
 * file; once it returns no CPU writes to its rings any more.  The shim
 * then waits out its own deferred wake-up and calls kinst_dev_free().
 */
void	kinst_dev_close(struct kinst_dev *d, struct kinst_dev_file *f);

/*
 * The ring buffers at the file's ring_size, unless they exist (the first
 * ARM calls it; takes the control lock).  0 or ENOMEM (nothing allocated).
 */
int	kinst_dev_rings_alloc(struct kinst_dev_file *f);
void	kinst_dev_free(struct kinst_dev_file *f);

/*
 * read(2) of count bytes: whole records into f->bounce (the shim copies
 * *n bytes to the caller).  EINVAL when count cannot hold one record,
 * ENODEV once the device is dying, EAGAIN when nonblock and empty, else
 * it waits (kinst_os_dev_wait) until records come and returns its error
 * if it had one.  The shim lets one reader of a file in at a time.
 */
int	kinst_dev_read(struct kinst_dev *d, struct kinst_dev_file *f,
	    size_t count, bool nonblock, size_t *n);

/* poll(2): what the file is ready for, checked in this order. */
#define	KINST_DEV_POLL_GONE	0x1	/* dying: report an error / hang-up */
#define	KINST_DEV_POLL_IN	0x2	/* records to read */
int	kinst_dev_poll(struct kinst_dev *d, struct kinst_dev_file *f);

/*
 * mmap(2) of len bytes at offset off of the file (kinst_abi.h: mapped
 * rings), how a set of KINST_DEV_MAP_*: 0 and *m, the memory to map, or
 * ENODEV (dying), ENXIO (no rings yet), EINVAL (a private mapping, an
 * offset or a length that is not exactly one CPU's ctl page or data),
 * EACCES (write access to the data).  Takes no lock (the shim may hold
 * its address space's): the memory stays until kinst_dev_free(), which
 * the shim calls only once no mapping is left (Linux: the mapping holds
 * the file) or after its own reference to the memory is dropped (FreeBSD:
 * the mapping holds the memory's VM object, not the file).
 */
#define	KINST_DEV_MAP_WRITE	0x1	/* writable now or by mprotect */
#define	KINST_DEV_MAP_SHARED	0x2	/* MAP_SHARED */
struct kinst_dev_map {
	void		*base;		/* the CPU's ring memory (bufs[cpu]) */
	void		*handle;	/* kinst_os_ring_alloc()'s for it */
	uint64_t	off;		/* the mapping starts off bytes in */
	uint64_t	len;
	uint32_t	cpu;
	uint32_t	data;		/* 1: the records, 0: the ctl page */
};
int	kinst_dev_mmap(struct kinst_dev *d, struct kinst_dev_file *f,
	    uint64_t off, uint64_t len, uint32_t how, struct kinst_dev_map *m);

/* Records to read? (for a shim's wait condition) */
bool	kinst_dev_readable(const struct kinst_dev_file *f);
bool	kinst_dev_is_dying(const struct kinst_dev *d);
void	kinst_dev_set_dying(struct kinst_dev *d);

/*
 * ioctl with the argument structure already in kernel memory (arg,
 * cmd->size bytes: the kernel copied it in, as FreeBSD's ioctl layer
 * does).  Returns 0 or an errno.  *copy_back is set when the structure
 * carries answers the caller must get even with an error (a refusal's
 * reason, a verifier's verdict, the probes disarmed).  ENOTTY for a
 * command that is not kinst's or whose size or direction is wrong.
 */
int	kinst_dev_ioctl(struct kinst_dev *d, struct kinst_dev_file *f,
	    const struct kinst_dev_cmd *cmd, void *arg, bool *copy_back);

/*
 * ioctl with the caller's pointer (Linux's convention): copies the
 * structure in (EFAULT), runs kinst_dev_ioctl() and copies it back out
 * when the command has answers; an ARM whose probe ids cannot be copied
 * back is undone (EFAULT).  FreeBSD's ioctl layer does the copies itself
 * and calls kinst_dev_ioctl() between them, so there a failed copy-out
 * (EFAULT) leaves the ARM's probes armed, owned by the file until it is
 * closed (kinst(4), ERRORS).
 */
int	kinst_dev_ioctl_user(struct kinst_dev *d, struct kinst_dev_file *f,
	    const struct kinst_dev_cmd *cmd, uint64_t uarg);

/*
 * ---- What the device layer needs from the shim (thread context) ----
 *
 * kinst_os_copyin / kinst_os_copyout: len bytes from / to the calling
 * process's memory at uaddr, which is never trusted; 0, or non-zero when
 * any byte could not be copied.
 */
int	kinst_os_copyin(uint64_t uaddr, void *kbuf, size_t len);
int	kinst_os_copyout(const void *kbuf, uint64_t uaddr, size_t len);

/*
 * kinst_os_dev_wait: sleep until f may have records (the shim's deferred
 * wake-up), the device is dying, a signal, or a short timeout (a record
 * may wake nobody: the shim re-checks).  0 (look again), or the errno of
 * an interrupted sleep, returned by read(2).
 */
int	kinst_os_dev_wait(struct kinst_dev_file *f);

/*
 * kinst_os_ring_alloc: size bytes (a multiple of KINST_MAP_PAGE), zeroed,
 * page-aligned, that the shim can map into a reader (Linux: vmalloc_user;
 * FreeBSD: the pages of a VM object, *handle); NULL when out of memory.
 * kinst_os_ring_free: give it back (the memory may live on while a
 * mapping holds it).
 */
void	*kinst_os_ring_alloc(size_t size, void **handle);
void	kinst_os_ring_free(void *p, size_t size, void *handle);

/*
 * kinst_os_arm_gate: may probes be armed now?  0, or an errno (FreeBSD:
 * EBUSY when DTrace took over a trap hook kinst depends on).
 */
int	kinst_os_arm_gate(void);

/*
 * kinst_os_opt_kick: an ARM queued groups for the jump optimizer
 * (kinst_ctl_opt_pending()): run kinst_ctl_optimize() now or soon.
 */
void	kinst_os_opt_kick(struct kinst_ctl *c);

#endif /* !KINST_DEV_H */
