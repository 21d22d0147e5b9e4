/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst_devtest: exercises /dev/kinst directly (no kinstctl), inside the
 * Linux guest, and unchanged on FreeBSD (built there against FreeBSD's
 * libc; the module is kinsttrace.ko).  Every subcommand prints what it
 * checked and exits 0 only if every check held.  What differs between the
 * two kernels (the functions armed, the names refused and why, the kernel
 * code selector, how an unload is asked for) is the table `os` below;
 * every check is the same code on both.
 *
 *   kinst_devtest fuzz [ITERATIONS]
 *	malformed and boundary ioctl arguments, random structures, bad user
 *	pointers, short reads: each must fail with the documented errno.
 *   kinst_devtest cycle FUNC COUNT
 *	arm the second instruction of FUNC (a syscall handler: getpid's),
 *	call getpid COUNT times, read the records: exactly COUNT records of
 *	this process at that address; LIST/STATS agree; TEXT shows the
 *	original bytes while armed and after disarm.
 *   kinst_devtest text FUNC
 *	print the live text of FUNC as hex (to compare before/after).
 *   kinst_devtest hold FUNC [all]
 *	arm (FUNC's second instruction, or every instruction), print
 *	"armed N", then sleep forever (for kill -9 tests), printing
 *	"hits N" (this file's probes) every second it changed.
 *   kinst_devtest refuse
 *	bad requests against real functions: mid-instruction offset,
 *	unknown function, excluded function, ftrace site, offset past the end.
 *   kinst_devtest regs [COUNT]
 *	write(2) COUNT times with known arguments; the records taken at the
 *	write handler's second instruction show them: Linux's ksys_write in
 *	rdi/rsi/rdx; FreeBSD's sys_write(td, uap) through a program's
 *	memory captures of *uap (kernel memory, in the thread) and of the
 *	user buffer, and a capture of an unmapped address that must report
 *	the fault.
 *   kinst_devtest drops [COUNT]
 *	ring overflow: hits == delivered + dropped, read(2) == delivered.
 *   kinst_devtest mmap [COUNT]
 *	mapped rings (ABI 1.12): hostile mappings refused (before the rings
 *	exist, private, writable or executable records, mprotect to write,
 *	wrong offsets and sizes, a CPU that does not exist, mremap to grow);
 *	two sessions each see only their own probe's records; a child
 *	process consumes through the mapping while COUNT getpid calls on every CPU
 *	overflow a 4 KiB ring: hits == delivered + dropped on each CPU and
 *	the records taken == delivered, each one intact; a garbage tail
 *	written into the ctl page makes the producer drop, and read(2)
 *	repairs it.
 *   kinst_devtest bench [N]
 *	figures only: ns per getpid call with and without a probe, and
 *	with a probe armed with KINST_ARM_STACK (ABI 1.4).
 *   kinst_devtest flip FUNC ROUNDS
 *	arm every instruction of FUNC and disarm them again, ROUNDS times, as
 *	fast as it can (issue 15: a removed int3 must never trap forever);
 *	prints progress every 50 rounds so a hang says where it stopped.
 *   kinst_devtest spin SECONDS
 *	call getpid in a loop for SECONDS (load for flip).
 *   kinst_devtest closecall [COUNT]
 *	every instruction of the function that runs a file's close-time
 *	callback through a pointer in a heap object (FreeBSD:
 *	devfs_destroy_cdevpriv, whose call *16(%rbx) reads a malloc(9)
 *	object in the direct map; Linux: __fput), then COUNT opens and
 *	closes of /dev/kinst: its entry and its indirect calls run exactly
 *	COUNT times and the kernel lives (issue 22, defect 1).
 *   kinst_devtest unload
 *	unloading the module is refused while a probe is armed, and the
 *	device keeps working; on FreeBSD, after jump-optimized probes were
 *	used and every file is closed, it is refused again (a thread may be
 *	in a detour) and /dev/kinst opens afterwards (issue 22, defect 2).
 *	Linux stops after the armed part (rmmod there would succeed).
 *   kinst_devtest dtrace MODULE
 *	FreeBSD: kldload(MODULE) (dtrace.ko's path, or "dtrace") with a
 *	probe armed must be refused with EEXIST (kinsttrace.ko holds the
 *	module name "dtrace"), and the probe keeps recording.
 *   kinst_devtest priv [COUNT]
 *	who may open the device (kinst(4)), run as root: uid 65534 is
 *	refused by the node's mode (EACCES); on Linux, uid 0 without
 *	CAP_SYS_ADMIN and CAP_PERFMON (bounding, effective, permitted and
 *	inheritable sets) is refused by the module (EPERM), and either
 *	capability alone opens.  A file opened by root keeps working after
 *	its opener dropped its privileges (Linux: both capabilities; both
 *	kernels: setuid(65534)): VERSION, and getpid's second instruction
 *	armed, hit COUNT times and each hit read back.
 */

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kinst_abi.h"
#include "x86/kinst_classify.h"
#include "x86/kinst_decode.h"
#include "kinst_ring.h"

/*
 * The FreeBSD branches: on FreeBSD, or for a syntax check of them
 * elsewhere (-DDEVTEST_FREEBSD=1 with declarations of kldload(2),
 * kldfind(2), kldunload(2) and thr_self(2)).
 */
#if defined(__FreeBSD__) && !defined(DEVTEST_FREEBSD)
#define	DEVTEST_FREEBSD	1
#endif

#if DEVTEST_FREEBSD
#include <sys/param.h>
#include <sys/linker.h>
#include <sys/thr.h>
#else
#include <sys/prctl.h>
#include <linux/capability.h>
#endif
#include <grp.h>

#define	DEV	"/dev/kinst"

/* What differs between the kernels; every check below is shared. */
struct os_refused {
	const char	*fn;
	uint32_t	reason;		/* KINST_R_* expected with KINST_ARM_ALL */
};

struct os_names {
	const char	*name;
	const char	*getpid_fn;	/* getpid(2)'s handler: once per call */
	int		entry_patched;	/* its +0 is an ftrace site */
	const char	*regs_fn;	/* regs: gets write(2)'s fd in a register */
	const char	*args_fn;	/* args: gets a pointer to write(2)'s
					   arguments in args_reg */
	int		args_reg;	/* KINST_RDI, KINST_RSI */
	uint32_t	args_off[3];	/* fd, buf, len at these offsets there */
	uint32_t	args_size;	/* bytes captured there */
	const char	*self_module;	/* the module's own name (refused) */
	const char	*data_sym;	/* a data symbol (not a function) */
	const char	*close_fn;	/* runs close callbacks (closecall) */
	uint16_t	kernel_cs;	/* the kernel's code selector */
	int		copyout_on_error; /* an ioctl that fails still copies its
					   structure out (refuse_reason, verdict):
					   Linux's module does; FreeBSD's ioctl
					   layer copies out only on success */
	int		private_rw_errno; /* mmap(MAP_PRIVATE, PROT_WRITE) */
	int		zero_read_einval; /* read(2) of 0 bytes reaches the
					   driver (EINVAL); FreeBSD's dofileread()
					   returns 0 itself */
	int		async_refused;	/* fcntl(F_SETFL, O_ASYNC) fails: FreeBSD
					   asks the driver (FIOASYNC), which
					   refuses; Linux sets the flag itself
					   when there is no fasync method */
	struct os_refused refused[8];
};

#if DEVTEST_FREEBSD
static const struct os_names os = {
	.name = "FreeBSD",
	.getpid_fn = "sys_getpid",
	.entry_patched = 0,
	.regs_fn = "sys_write",		/* (td, uap); kern_writev is inlined */
	.args_fn = "sys_write",		/* (td, uap): struct write_args */
	.args_reg = KINST_RSI,
	.args_off = { 0, 8, 16 },	/* fd (int), buf, nbyte: register_t each */
	.args_size = 24,
	.self_module = "kinsttrace",
	.data_sym = "hz",
	.close_fn = "devfs_destroy_cdevpriv",
	.kernel_cs = 0x20,		/* GSEL(GCODE_SEL, SEL_KPL) */
	.copyout_on_error = 0,
	.private_rw_errno = EACCES,
	.zero_read_einval = 0,
	.async_refused = 1,
	.refused = {
		{ "trap", KINST_R_EXCL_BREAKPOINT },
		{ "trap_check", KINST_R_EXCL_BREAKPOINT },
		{ "kdb_trap", KINST_R_EXCL_DEBUGGER },
		{ "cpu_switch", KINST_R_EXCL_SCHED },
		{ "smp_rendezvous_cpus", KINST_R_EXCL_PATCHING },
		{ "fubyte_nosmap", KINST_R_ONFAULT },
	},
};
#else
static const struct os_names os = {
	.name = "Linux",
	.getpid_fn = "__x64_sys_getpid",
	.entry_patched = 1,
	.regs_fn = "ksys_write",	/* (fd, buf, count) */
	.args_fn = "__x64_sys_write",	/* (const struct pt_regs *) */
	.args_reg = KINST_RDI,
	.args_off = { 112, 104, 96 },	/* pt_regs di, si, dx */
	.args_size = 120,
	.self_module = "kinst",
	.data_sym = "jiffies",
	.close_fn = "__fput",
	.kernel_cs = 0x10,		/* __KERNEL_CS */
	.copyout_on_error = 1,
	.private_rw_errno = EINVAL,
	.zero_read_einval = 1,
	.async_refused = 0,
	.refused = {
		/* On the #BP path or the handler's (derived at load, 1.3). */
		{ "notify_die", KINST_R_TRAP_PATH },
		{ "exc_int3", KINST_R_TRAP_PATH },	/* noinstr */
		{ "irq_work_queue", KINST_R_TRAP_PATH },
		/* Entry text, and by name, each with its class (1.13). */
		{ "entry_SYSCALL_64", KINST_R_EXCL_ENTRY },
		{ "do_int3", KINST_R_EXCL_BREAKPOINT },
		{ "text_poke", KINST_R_EXCL_PATCHING },
		{ "default_idle", KINST_R_EXCL_IDLE },
		{ "do_user_addr_fault", KINST_R_EXCL_BLACKLIST },
	},
};
#endif

/* This thread's id as the module reports it in records. */
static int32_t
my_tid(void)
{
#if DEVTEST_FREEBSD
	long t;

	return (thr_self(&t) == 0 ? (int32_t)t : -1);
#else
	return ((int32_t)syscall(SYS_gettid));
#endif
}

static int failures;

#define	CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		failures++;						\
		printf("FAIL %s:%d: ", __func__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

static int
dev_open(int flags)
{
	int fd;

	fd = open(DEV, O_RDWR | flags);
	if (fd < 0) {
		perror(DEV);
		exit(2);
	}
	return (fd);
}

/* ioctl returning -errno or 0. */
static int
xioctl(int fd, unsigned long cmd, void *arg)
{
	return (ioctl(fd, cmd, arg) == 0 ? 0 : -errno);
}

/*
 * Sessions exclude their opener's hits by default (ABI 1.1); the tests
 * that count their own hits lift that.  A module without KINST_IOC_FILTER
 * (ABI 1.0) records everything anyway.
 */
static void
record_self(int fd)
{
#ifdef KINST_IOC_FILTER
	struct kinst_filter f = { .pid = -1, .cpu = -1, .exclude_pid = -1 };
	int r = xioctl(fd, KINST_IOC_FILTER, &f);

	CHECK(r == 0 || r == -ENOTTY, "FILTER: %d", r);
#else
	(void)fd;
#endif
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng);
}

static void
rnd_fill(void *p, size_t n)
{
	uint8_t *b = p;

	while (n-- > 0)
		*b++ = (uint8_t)rnd();
}

/* "module:function" or "function" into the two name fields. */
static void
split_name(const char *spec, char *mod, size_t modsz, char *fn, size_t fnsz)
{
	const char *c = strchr(spec, ':');

	if (c == NULL) {
		snprintf(fn, fnsz, "%s", spec);
		return;
	}
	snprintf(mod, modsz, "%.*s", (int)(c - spec), spec);
	snprintf(fn, fnsz, "%s", c + 1);
}

static int
get_text(int fd, const char *func, uint8_t *buf, uint32_t cap,
    uint32_t *size, uint64_t *addr)
{
	struct kinst_text t;
	int r;

	memset(&t, 0, sizeof(t));
	split_name(func, t.module, sizeof(t.module), t.function,
	    sizeof(t.function));
	t.buf = (uintptr_t)buf;
	t.cap = cap;
	r = xioctl(fd, KINST_IOC_TEXT, &t);
	*size = t.size;
	*addr = t.addr;
	return (r);
}

/* Offset of the n-th instruction (0-based) of func's text. */
static uint32_t
nth_insn(const uint8_t *text, uint32_t size, int n)
{
	uint32_t off = 0;
	uint8_t len;

	while (n-- > 0) {
		len = kinst_insn_length(text + off, size - off);
		if (len == 0)
			return (UINT32_MAX);
		off += len;
	}
	return (off < size ? off : UINT32_MAX);
}

/* An offset inside the first instruction longer than one byte. */
static uint32_t
mid_insn(const uint8_t *text, uint32_t size)
{
	uint32_t off = 0;
	uint8_t len;

	while (off < size) {
		len = kinst_insn_length(text + off, size - off);
		if (len == 0)
			return (UINT32_MAX);
		if (len > 1)
			return (off + 1);
		off += len;
	}
	return (UINT32_MAX);
}

static int
do_arm(int fd, const char *func, uint32_t off, uint32_t flags,
    struct kinst_arm *a)
{
	memset(a, 0, sizeof(*a));
	split_name(func, a->module, sizeof(a->module), a->function,
	    sizeof(a->function));
	a->offset = off;
	a->flags = flags;
	return (xioctl(fd, KINST_IOC_ARM, a));
}

/*
 * fcntl(F_SETFL) on a blocking descriptor: O_NONBLOCK on and off, and a
 * read that then returns EAGAIN.  FreeBSD asks the driver (FIONBIO,
 * FIOASYNC) and fails the fcntl when it refuses (issue 41, finding 1:
 * kinstctl's drain does exactly this).
 */
static void
check_setfl(void)
{
	uint8_t buf[4096];
	int fd, r;

	fd = dev_open(0);
	CHECK(fcntl(fd, F_SETFL, O_NONBLOCK) == 0, "F_SETFL O_NONBLOCK: %s",
	    strerror(errno));
	CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) != 0, "O_NONBLOCK not set");
	CHECK(read(fd, buf, sizeof(buf)) < 0 && errno == EAGAIN,
	    "read after F_SETFL O_NONBLOCK: %s", strerror(errno));
	CHECK(fcntl(fd, F_SETFL, 0) == 0, "F_SETFL 0: %s", strerror(errno));
	CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0, "O_NONBLOCK still set");
	r = fcntl(fd, F_SETFL, O_ASYNC);
	if (os.async_refused)
		CHECK(r < 0 && errno == EINVAL, "F_SETFL O_ASYNC: %d (%s)", r,
		    strerror(errno));
	else
		CHECK(r == 0, "F_SETFL O_ASYNC: %s", strerror(errno));
	(void)fcntl(fd, F_SETFL, 0);
	close(fd);
}

static int
cmd_fuzz(long iters)
{
	struct kinst_version v;
	struct kinst_arm a;
	struct kinst_disarm d;
	struct kinst_list l;
	struct kinst_stats st;
	struct kinst_text t;
	uint8_t buf[4096], big[sizeof(struct kinst_hit_record) * 2];
	unsigned long cmds[] = { KINST_IOC_VERSION, KINST_IOC_ARM,
	    KINST_IOC_DISARM, KINST_IOC_LIST, KINST_IOC_STATS,
	    KINST_IOC_TEXT };
	uint64_t addr1;
	uint32_t size1, off1;
	long i;
	int fd, r;
	size_t k;

	fd = dev_open(O_NONBLOCK);

	CHECK(xioctl(fd, KINST_IOC_VERSION, &v) == 0, "VERSION");
	CHECK(v.abi_version == KINST_ABI_VERSION, "abi %#x", v.abi_version);
	CHECK(v.record_size == sizeof(struct kinst_hit_record),
	    "record_size %u", v.record_size);
	CHECK(v.ncpus > 0 && v.max_probes == KINST_MAX_PROBES, "ncpus/max");

	/* NULL and wild pointers as the argument. */
	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		r = xioctl(fd, cmds[k], NULL);
		CHECK(r == -EFAULT, "cmd %zu NULL: %d", k, r);
		r = xioctl(fd, cmds[k], (void *)0xffff800000000000ull);
		CHECK(r == -EFAULT, "cmd %zu kernel pointer: %d", k, r);
		r = xioctl(fd, cmds[k], (void *)16);
		CHECK(r == -EFAULT, "cmd %zu low pointer: %d", k, r);
	}
	/* Unknown commands, and known numbers with the wrong size. */
	CHECK(xioctl(fd, _IOWR('K', 99, struct kinst_arm), &a) == -ENOTTY,
	    "unknown cmd");
	CHECK(xioctl(fd, _IOWR('K', 2, struct kinst_disarm), &a) == -ENOTTY,
	    "ARM number with DISARM size");
	CHECK(xioctl(fd, _IO('K', 1), NULL) == -ENOTTY, "VERSION w/o size");

	/* ARM: unterminated names, bad flags, empty function. */
	memset(&a, 'A', sizeof(a));
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "unterminated names");
	do_arm(fd, "x", 0, 0, &a);
	memset(a.function, 'f', sizeof(a.function));
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "unterminated function");
	memset(&a, 0, sizeof(a));
	memset(a.module, 'm', sizeof(a.module));
	strcpy(a.function, os.getpid_fn);
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "unterminated module");
	CHECK(do_arm(fd, "", 0, 0, &a) == -EINVAL, "empty function");
	memset(&a, 0, sizeof(a));
	strcpy(a.function, os.getpid_fn);
	/* Every flag bit the ABI does not define is refused, one by one. */
	for (i = 0; i < 32; i++) {
		if (((KINST_ARM_ALL | KINST_ARM_CHECK | KINST_ARM_STACK |
		    KINST_ARM_PROG | KINST_ARM_AGG | KINST_ARM_NOOPT) &
		    (1u << i)) != 0)
			continue;
		a.flags = 1u << i;
		CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL,
		    "bad flag bit %ld", i);
	}
	/* A program id without KINST_ARM_PROG, and an id never loaded. */
	a.flags = 0;
	a.prog_id = 1;
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "prog_id without "
	    "KINST_ARM_PROG");
	a.flags = KINST_ARM_PROG;
	a.prog_id = 7;
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "program never loaded");
	a.prog_id = 0;
	a.flags = KINST_ARM_ALL | KINST_ARM_CHECK;
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "ALL with CHECK");
	/* Check-only: the verdict, nothing armed, a refusal is no error. */
	r = get_text(fd, os.getpid_fn, buf, sizeof(buf), &size1, &addr1);
	off1 = r == 0 ? nth_insn(buf, size1, 1) : UINT32_MAX;
	CHECK(off1 != UINT32_MAX, "text %s: %d", os.getpid_fn, r);
	CHECK(do_arm(fd, os.getpid_fn, off1, KINST_ARM_CHECK, &a) == 0 &&
	    a.refuse_reason == KINST_R_NONE && a.narmed == 0,
	    "check-only +%u: reason %u narmed %u", off1, a.refuse_reason,
	    a.narmed);
	CHECK(do_arm(fd, os.getpid_fn, 0, KINST_ARM_CHECK, &a) == 0 &&
	    a.refuse_reason == (os.entry_patched ? KINST_R_TEXT_PATCHED :
	    KINST_R_NONE) && a.narmed == 0,
	    "check-only +0 (%s): reason %u", os.entry_patched ?
	    "ftrace site" : "entry", a.refuse_reason);
	CHECK(do_arm(fd, os.getpid_fn, UINT32_MAX, 0, &a) == -EINVAL,
	    "offset UINT32_MAX");
	CHECK(do_arm(fd, "no_such_function_kinst", 0, 0, &a) == -ENOENT,
	    "unknown function");
	CHECK(do_arm(fd, os.data_sym, 0, 0, &a) == -ENOENT, "data symbol %s",
	    os.data_sym);
	memset(&a, 0, sizeof(a));
	strcpy(a.module, "no_such_module");
	strcpy(a.function, os.getpid_fn);
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -ENOENT, "unknown module");
	memset(&a, 0, sizeof(a));
	strcpy(a.module, os.self_module);
	strcpy(a.function, "kinst_engine_hit");
	r = xioctl(fd, KINST_IOC_ARM, &a);
	CHECK(r == -EOPNOTSUPP && (!os.copyout_on_error ||
	    a.refuse_reason == KINST_R_EXCL_SELF),
	    "own module: %d reason %u", r, a.refuse_reason);
	memset(&a, 0, sizeof(a));
	strcpy(a.function, "a:b");
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -ENOENT, "colon in name");

#ifdef KINST_IOC_FILTER
	{
		struct kinst_filter f;

		r = xioctl(fd, KINST_IOC_FILTER, NULL);
		CHECK(r == -EFAULT || r == -ENOTTY, "FILTER NULL: %d", r);
		if (r == -EFAULT) {
			memset(&f, 0, sizeof(f));
			f.pid = f.cpu = f.exclude_pid = -1;
			CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == 0, "FILTER ok");
			f.flags = 1;
			CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == -EINVAL,
			    "FILTER flags");
			f.flags = 0;
			f.cpu = (int32_t)v.ncpus;
			CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == -EINVAL,
			    "FILTER cpu == ncpus");
			f.cpu = -1;
			f.pid = -2;
			CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == -EINVAL,
			    "FILTER pid -2");
			f.pid = -1;
			f.exclude_pid = INT32_MIN;
			CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == -EINVAL,
			    "FILTER exclude_pid INT32_MIN");
		}
	}
#endif

	/* DISARM: ids that do not exist. */
	d.probe_id = 0;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == -ENOENT, "disarm 0");
	d.probe_id = 12345;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == -ENOENT, "disarm 12345");
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0 && d.ndisarmed == 0,
	    "disarm all (none)");

	/* LIST / STATS / TEXT with bad buffers and capacities. */
	memset(&l, 0, sizeof(l));
	CHECK(xioctl(fd, KINST_IOC_LIST, &l) == 0 && l.count == 0, "list 0");
	l.cap = UINT32_MAX;
	l.buf = 0;
	/* No probe: nothing to copy, so no fault to report. */
	CHECK(xioctl(fd, KINST_IOC_LIST, &l) == 0 && l.count == 0,
	    "list NULL buf, no probes");
	memset(&st, 0, sizeof(st));
	CHECK(xioctl(fd, KINST_IOC_STATS, &st) == 0 && st.ncpus == v.ncpus,
	    "stats 0");
	st.cap = UINT32_MAX;
	st.buf = 0xdead0000ull;
	CHECK(xioctl(fd, KINST_IOC_STATS, &st) == -EFAULT, "stats bad buf");
	st.buf = (uintptr_t)buf;
	st.cap = UINT32_MAX;	/* clamped to ncpus; buf is big enough */
	CHECK(xioctl(fd, KINST_IOC_STATS, &st) == 0, "stats big cap");
	memset(&t, 0, sizeof(t));
	strcpy(t.function, os.getpid_fn);
	CHECK(xioctl(fd, KINST_IOC_TEXT, &t) == 0 && t.size > 0 && t.addr != 0,
	    "text cap 0");
	t.cap = UINT32_MAX;
	t.buf = 0;
	CHECK(xioctl(fd, KINST_IOC_TEXT, &t) == -EFAULT, "text NULL buf");
	t.buf = 0xffff888000000000ull;
	t.cap = 16;
	CHECK(xioctl(fd, KINST_IOC_TEXT, &t) == -EFAULT, "text kernel buf");
	memset(t.function, 'x', sizeof(t.function));
	t.buf = (uintptr_t)buf;
	CHECK(xioctl(fd, KINST_IOC_TEXT, &t) == -EINVAL, "text unterminated");

	/* read(2): short buffer, empty ring with O_NONBLOCK, bad pointer. */
	CHECK(read(fd, big, sizeof(struct kinst_hit_record) - 1) < 0 &&
	    errno == EINVAL, "short read");
	if (os.zero_read_einval)
		CHECK(read(fd, big, 0) < 0 && errno == EINVAL, "zero read");
	else
		CHECK(read(fd, big, 0) == 0, "zero read");
	CHECK(read(fd, big, sizeof(big)) < 0 && errno == EAGAIN,
	    "nonblock empty");
	check_setfl();

	/* Random structures for every command. */
	for (i = 0; i < iters; i++) {
		uint8_t raw[512];

		rnd_fill(raw, sizeof(raw));
		k = rnd() % (sizeof(cmds) / sizeof(cmds[0]));
		if (cmds[k] == KINST_IOC_ARM) {
			/* Random bytes, terminated or not, maybe ARM_ALL. */
			struct kinst_arm *ra = (void *)raw;

			if (rnd() & 1)
				ra->module[rnd() % sizeof(ra->module)] = 0;
			if (rnd() & 1)
				ra->function[rnd() % sizeof(ra->function)] = 0;
			if (rnd() & 1)
				ra->flags &= KINST_ARM_ALL;
			r = xioctl(fd, KINST_IOC_ARM, raw);
			CHECK(r == -EINVAL || r == -ENOENT,
			    "random arm %ld: %d", i, r);
		} else if (cmds[k] == KINST_IOC_DISARM) {
			r = xioctl(fd, KINST_IOC_DISARM, raw);
			CHECK(r == -ENOENT || r == 0, "random disarm: %d", r);
		} else {
			r = xioctl(fd, cmds[k], raw);
			CHECK(r == 0 || r == -EFAULT || r == -EINVAL ||
			    r == -ENOENT, "random cmd %zu: %d", k, r);
		}
	}
	/* Random command numbers. */
	for (i = 0; i < iters; i++) {
		unsigned long c = (unsigned long)(uint32_t)rnd();
		uint8_t raw[16384];

		for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
			if (c == cmds[k])
				break;
		if (k < sizeof(cmds) / sizeof(cmds[0]))
			continue;
		rnd_fill(raw, 64);
		r = xioctl(fd, c, raw);
		CHECK(r == -ENOTTY, "random cmd %#lx: %d", c, r);
	}
	CHECK(xioctl(fd, KINST_IOC_VERSION, &v) == 0, "VERSION after fuzz");
	close(fd);
	printf("fuzz: %ld iterations, %d failures\n", iters, failures);
	return (failures != 0);
}

static int
cmd_refuse(void)
{
	uint8_t text[65536];
	struct kinst_arm a;
	uint32_t size, off1, mid;
	uint64_t addr;
	size_t i;
	int fd, fd2, r;

	fd = dev_open(0);
	r = get_text(fd, os.getpid_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text: %d", r);
	off1 = nth_insn(text, size, 1);
	CHECK(off1 != UINT32_MAX && off1 >= 1, "second insn %u", off1);

	/* Offset 0 on Linux: the ftrace call site (5-byte nop). */
	if (os.entry_patched) {
		r = do_arm(fd, os.getpid_fn, 0, 0, &a);
		CHECK(r == -EOPNOTSUPP &&
		    a.refuse_reason == KINST_R_TEXT_PATCHED,
		    "ftrace site: %d reason %u", r, a.refuse_reason);
	}
	/* Mid-instruction: inside the first instruction longer than 1. */
	mid = mid_insn(text, size);
	CHECK(mid != UINT32_MAX, "no instruction longer than one byte");
	r = do_arm(fd, os.getpid_fn, mid, 0, &a);
	CHECK(r == -EINVAL, "mid-instruction +%u: %d", mid, r);
	r = do_arm(fd, os.getpid_fn, size, 0, &a);
	CHECK(r == -EINVAL, "offset == size: %d", r);
	/*
	 * Excluded functions (the table `os`): on the #BP path or the
	 * handler's, entry text, pcb_onfault users, and by name.
	 */
	for (i = 0; i < sizeof(os.refused) / sizeof(os.refused[0]) &&
	    os.refused[i].fn != NULL; i++) {
		r = do_arm(fd, os.refused[i].fn, 0, KINST_ARM_ALL, &a);
		CHECK(r == -EOPNOTSUPP && (!os.copyout_on_error ||
		    a.refuse_reason == os.refused[i].reason),
		    "%s: %d reason %u, want reason %u", os.refused[i].fn, r,
		    a.refuse_reason, os.refused[i].reason);
		if (os.copyout_on_error)
			continue;
		/* The reason, where a failed ARM copies nothing out. */
		r = do_arm(fd, os.refused[i].fn, 0, KINST_ARM_CHECK, &a);
		CHECK(r == 0 && a.refuse_reason == os.refused[i].reason,
		    "%s, check-only: %d reason %u, want reason %u",
		    os.refused[i].fn, r, a.refuse_reason,
		    os.refused[i].reason);
	}
	/* Arming the same instruction twice. */
	r = do_arm(fd, os.getpid_fn, off1, 0, &a);
	CHECK(r == 0 && a.narmed == 1, "arm: %d", r);
	r = do_arm(fd, os.getpid_fn, off1, 0, &a);
	CHECK(r == -EEXIST, "arm twice: %d", r);
	/* Another file shares it (ABI 1.13), and sees two sessions. */
	fd2 = dev_open(0);
	r = do_arm(fd2, os.getpid_fn, off1, 0, &a);
	CHECK(r == 0 && a.narmed == 1, "arm from a second file: %d, %u armed",
	    r, a.narmed);
	/* Check-only (1.13): narmed is the sessions tracing it. */
	r = do_arm(fd2, os.getpid_fn, off1, KINST_ARM_CHECK, &a);
	CHECK(r == 0 && a.refuse_reason == 0 && a.narmed == 2,
	    "check-only on a shared instruction: %d reason %u sessions %u",
	    r, a.refuse_reason, a.narmed);
	close(fd2);
	r = do_arm(fd, os.getpid_fn, off1, KINST_ARM_CHECK, &a);
	CHECK(r == 0 && a.narmed == 1, "after the second file closed: %d, "
	    "%u sessions", r, a.narmed);
	close(fd);
	printf("refuse: %d failures\n", failures);
	return (failures != 0);
}

static int
cmd_text(const char *func)
{
	uint8_t text[65536];
	uint32_t size, i;
	uint64_t addr;
	int fd, r;

	fd = dev_open(0);
	r = get_text(fd, func, text, sizeof(text), &size, &addr);
	if (r != 0) {
		printf("text %s: %s\n", func, strerror(-r));
		return (1);
	}
	printf("%s %#llx %u ", func, (unsigned long long)addr, size);
	for (i = 0; i < size && i < sizeof(text); i++)
		printf("%02x", text[i]);
	printf("\n");
	close(fd);
	return (0);
}

/*
 * Every second, the total hits of this file's probes (LIST), printed as
 * "hits N" whenever it changed: kill9.sh requires hits before the kill.
 * Returns only if LIST fails.
 */
static void
hold_report_hits(int fd)
{
	static struct kinst_probe_info pi[4096];
	struct kinst_list l;
	uint64_t sum, last = 0;
	uint32_t i;

	for (;;) {
		sleep(1);
		memset(&l, 0, sizeof(l));
		l.buf = (uintptr_t)pi;
		l.cap = sizeof(pi) / sizeof(pi[0]);
		if (xioctl(fd, KINST_IOC_LIST, &l) != 0) {
			printf("list failed\n");
			return;
		}
		sum = 0;
		for (i = 0; i < l.count && i < l.cap; i++)
			sum += pi[i].hits;
		if (sum != last) {
			printf("hits %llu\n", (unsigned long long)sum);
			fflush(stdout);
			last = sum;
		}
	}
}

static int
cmd_hold(const char *func, int all)
{
	uint8_t text[65536];
	struct kinst_arm a;
	uint32_t size, off;
	uint64_t addr;
	int fd, r;

	fd = dev_open(0);
	r = get_text(fd, func, text, sizeof(text), &size, &addr);
	if (r != 0) {
		printf("text %s: %s\n", func, strerror(-r));
		return (1);
	}
	off = nth_insn(text, size, 1);
	r = do_arm(fd, func, off, all ? KINST_ARM_ALL : 0, &a);
	if (r != 0) {
		printf("arm %s: %s (reason %u)\n", func, strerror(-r),
		    a.refuse_reason);
		return (1);
	}
	printf("armed %u refused %u\n", a.narmed, a.nrefused);
	fflush(stdout);
	hold_report_hits(fd);
	return (1);
}

static int
cmd_cycle(const char *func, long count)
{
	uint8_t text[65536], text2[65536];
	static uint8_t rbuf[1 << 16];
	struct kinst_cpu_stats cpus[KINST_STATS_MAXCPU];
	struct kinst_probe_info pi[4];
	struct kinst_hit_record *rec;
	struct kinst_arm a;
	struct kinst_disarm d;
	struct kinst_list l;
	struct kinst_stats st;
	struct pollfd pfd;
	uint64_t addr, addr2, hits, deliv, drop, ours;
	uint32_t size, size2, off, i;
	ssize_t n, j;
	long k;
	int fd, r;
	pid_t me = getpid();
	int32_t tid = my_tid();

	fd = dev_open(O_NONBLOCK);
	record_self(fd);
	r = get_text(fd, func, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text: %d", r);
	off = nth_insn(text, size, 1);
	CHECK(off != UINT32_MAX, "no second instruction");
	r = do_arm(fd, func, off, 0, &a);
	CHECK(r == 0 && a.narmed == 1 && a.addr == addr + off &&
	    a.insn_len > 0 && memcmp(a.insn, text + off, a.insn_len) == 0,
	    "arm %s+%#x: %d (%s) reason %u", func, off, r, strerror(-r),
	    a.refuse_reason);
	if (r != 0)
		return (1);
	printf("armed %s+%#x id %u addr %#llx len %u\n", func, off,
	    a.probe_id, (unsigned long long)a.addr, a.insn_len);

	/* TEXT hides the int3. */
	r = get_text(fd, func, text2, sizeof(text2), &size2, &addr2);
	CHECK(r == 0 && size2 == size && memcmp(text, text2, size) == 0,
	    "TEXT while armed differs");

	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 0) == 0 || 1, "poll");
	for (k = 0; k < count; k++)
		(void)syscall(SYS_getpid);
	/* poll must report data (readers are woken through irq_work). */
	r = poll(&pfd, 1, 5000);
	CHECK(r == 1 && (pfd.revents & POLLIN), "poll after hits: %d", r);

	memset(&l, 0, sizeof(l));
	l.buf = (uintptr_t)pi;
	l.cap = 4;
	r = xioctl(fd, KINST_IOC_LIST, &l);
	CHECK(r == 0 && l.count == 1 && pi[0].probe_id == a.probe_id &&
	    pi[0].addr == a.addr && pi[0].offset == off &&
	    strcmp(pi[0].function, func) == 0 &&
	    strcmp(pi[0].module, "kernel") == 0 &&
	    pi[0].hits >= (uint64_t)count, "list: %d count %u", r, l.count);

	l.buf = 0;
	r = xioctl(fd, KINST_IOC_LIST, &l);
	CHECK(r == -EFAULT, "list NULL buf with a probe: %d", r);
	l.buf = 0xffff888000000000ull;
	r = xioctl(fd, KINST_IOC_LIST, &l);
	CHECK(r == -EFAULT, "list kernel buf with a probe: %d", r);

	d.probe_id = a.probe_id;
	r = xioctl(fd, KINST_IOC_DISARM, &d);
	CHECK(r == 0 && d.ndisarmed == 1, "disarm: %d", r);
	r = xioctl(fd, KINST_IOC_DISARM, &d);
	CHECK(r == -ENOENT, "disarm twice: %d", r);
	/*
	 * Drain only now: while armed, a traced read path (ksys_read) would
	 * keep the ring from ever being empty.
	 */
	ours = 0;
	for (;;) {
		n = read(fd, rbuf, sizeof(rbuf));
		if (n < 0) {
			CHECK(errno == EAGAIN, "read: %s", strerror(errno));
			break;
		}
		CHECK(n % sizeof(*rec) == 0, "read %zd not whole records", n);
		for (j = 0; j + (ssize_t)sizeof(*rec) <= n; j += sizeof(*rec)) {
			rec = (void *)(rbuf + j);
			CHECK(rec->hdr.type == KINST_REC_HIT &&
			    rec->hdr.size == sizeof(*rec), "record header");
			CHECK(rec->probe_id == a.probe_id, "probe id %u",
			    rec->probe_id);
			CHECK(rec->addr == a.addr && rec->regs.rip == a.addr,
			    "record addr %#llx rip %#llx",
			    (unsigned long long)rec->addr,
			    (unsigned long long)rec->regs.rip);
			if (rec->pid == me) {
				ours++;
				CHECK(strncmp(rec->comm, "kinst_devtest", 15) == 0,
				    "comm %.16s", rec->comm);
				CHECK(rec->tid == tid, "tid %d, want %d",
				    rec->tid, tid);
				CHECK(rec->regs.gpr[KINST_RSP] != 0 &&
				    rec->regs.cs == os.kernel_cs &&
				    (rec->regs.rflags & KINST_FL_IF) != 0,
				    "rsp/rflags %#llx",
				    (unsigned long long)rec->regs.rflags);
			}
		}
	}
	CHECK(ours == (uint64_t)count, "records of this pid: %llu, want %ld",
	    (unsigned long long)ours, count);

	memset(&st, 0, sizeof(st));
	st.buf = (uintptr_t)cpus;
	st.cap = KINST_STATS_MAXCPU;
	r = xioctl(fd, KINST_IOC_STATS, &st);
	hits = deliv = drop = 0;
	for (i = 0; i < st.ncpus && i < KINST_STATS_MAXCPU; i++) {
		hits += cpus[i].hits;
		deliv += cpus[i].delivered;
		drop += cpus[i].dropped;
	}
	CHECK(r == 0 && st.nprobes == 0, "stats: %d nprobes %llu", r,
	    (unsigned long long)st.nprobes);
	CHECK(hits == deliv + drop && hits >= (uint64_t)count,
	    "hits %llu delivered %llu dropped %llu",
	    (unsigned long long)hits, (unsigned long long)deliv,
	    (unsigned long long)drop);
	printf("hits %llu delivered %llu dropped %llu ours %llu\n",
	    (unsigned long long)hits, (unsigned long long)deliv,
	    (unsigned long long)drop, (unsigned long long)ours);


	r = get_text(fd, func, text2, sizeof(text2), &size2, &addr2);
	CHECK(r == 0 && memcmp(text, text2, size) == 0,
	    "TEXT after disarm differs");
	/* No more records after disarm. */
	for (k = 0; k < 100; k++)
		(void)syscall(SYS_getpid);
	n = read(fd, rbuf, sizeof(rbuf));
	CHECK(n < 0 && errno == EAGAIN, "records after disarm: %zd", n);
	close(fd);
	printf("cycle: %d failures\n", failures);
	return (failures != 0);
}

/* The length of the k-th write(2) of writes(). */
static size_t
write_len(long k)
{
	return (1000 + (size_t)k % 3000);
}

/*
 * The k of a record whose write(2) had LEN bytes, claimed once: -1 if no
 * write of the first COUNT had that length or its record was seen before.
 * Records come CPU ring by CPU ring (the device drains one CPU's ring, then
 * the next), so a process that migrated has its writes out of order: a
 * record is matched to its write by its length, never by its position.
 * SEEN has a byte per write.
 */
static long
write_claim(uint8_t *seen, long count, uint64_t len)
{
	long k;

	if (len < write_len(0) || len - write_len(0) >= (uint64_t)count)
		return (-1);
	k = (long)(len - write_len(0));
	if (seen[k])
		return (-1);
	seen[k] = 1;
	return (k);
}

/* SEEN (CAP bytes) cleared for COUNT writes: 0, said, if they do not fit. */
static int
write_claims_reset(uint8_t *seen, size_t cap, long count)
{
	CHECK(count > 0 && count <= (long)cap, "count %ld: 1 to %zu", count,
	    cap);
	if (count <= 0 || count > (long)cap)
		return (0);
	memset(seen, 0, cap);
	return (1);
}

/*
 * count write(2)s of buf to fd, of write_len(0), write_len(1), ... bytes.
 * On Linux with two CPUs or more, the first half runs on the last CPU and
 * the second on CPU 0, so the device's CPU-by-CPU drain gives the records
 * out of the writes' order every time, not only when the scheduler moved
 * the writer: the readers must match records to writes (write_claim()).
 */
static void
writes(int fd, const char *buf, long count)
{
	long k, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#if !DEVTEST_FREEBSD
	cpu_set_t all, one;
	int pinned = ncpu > 1 && ncpu <= CPU_SETSIZE &&
	    sched_getaffinity(0, sizeof(all), &all) == 0;
#endif

	for (k = 0; k < count; k++) {
#if !DEVTEST_FREEBSD
		if (pinned && (k == 0 || k == count / 2)) {
			CPU_ZERO(&one);
			CPU_SET(k == 0 ? (int)ncpu - 1 : 0, &one);
			(void)sched_setaffinity(0, sizeof(one), &one);
		}
#endif
		if (write(fd, buf, write_len(k)) != (ssize_t)write_len(k))
			CHECK(0, "write %ld: %s", k, strerror(errno));
	}
#if !DEVTEST_FREEBSD
	if (pinned)
		(void)sched_setaffinity(0, sizeof(all), &all);
#else
	(void)ncpu;
#endif
}

/*
 * Do a record's registers show write(2)'s arguments at os.regs_fn's second
 * instruction?  Linux's ksys_write(fd, buf, count): rdi, rsi, rdx.
 * FreeBSD's sys_write(td, uap): rdi the thread (a kernel address, the same
 * in every record of this thread) and rsi its syscall arguments, inside
 * the thread (td_sa.args: the same small offset from rdi every time); the
 * values themselves are `args`'s captures.  On Linux rdx, the length, must
 * name a write of the COUNT not claimed before (write_claim(): records come
 * out of order once the writer moved).
 */
static int
regs_ok(const struct kinst_hit_record *rec, int fd, const void *buf,
    uint8_t *seen, long count, uint64_t *first_rdi)
{
	const uint64_t *g = rec->regs.gpr;

	if (rec->regs.cs != os.kernel_cs)
		return (0);
#if DEVTEST_FREEBSD
	(void)buf;
	(void)seen;
	(void)count;
	(void)fd;
	if (*first_rdi == 0)
		*first_rdi = g[KINST_RDI];
	return (g[KINST_RDI] == *first_rdi &&
	    g[KINST_RDI] >= 0xffff800000000000ull &&
	    g[KINST_RSI] > g[KINST_RDI] &&
	    g[KINST_RSI] - g[KINST_RDI] < 0x4000);
#else
	(void)first_rdi;
	return (g[KINST_RDI] == (uint64_t)fd &&
	    g[KINST_RSI] == (uintptr_t)buf &&
	    write_claim(seen, count, g[KINST_RDX]) >= 0);
#endif
}

/*
 * The register file in the records: arm os.regs_fn's second instruction
 * (on Linux its first is the ftrace nop; either way the arguments are
 * still in place) and write(2) COUNT times with a known fd, buffer and
 * length: every record of this process must show them (regs_ok()).
 */
static int
cmd_regs(long count)
{
	static uint8_t rbuf[1 << 16];
	static uint8_t seen[3000];
	static char wbuf[4096];
	uint8_t text[65536];
	struct kinst_hit_record *rec;
	struct kinst_arm a;
	struct kinst_disarm d;
	uint32_t size, off;
	uint64_t addr, ours, good, first_rdi = 0;
	ssize_t n, j;
	int fd, nul, r;
	pid_t me = getpid();

	if (!write_claims_reset(seen, sizeof(seen), count))
		return (1);
	fd = dev_open(O_NONBLOCK);
	record_self(fd);
	nul = open("/dev/null", O_WRONLY);
	CHECK(nul >= 0, "open /dev/null");
	r = get_text(fd, os.regs_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text %s: %d", os.regs_fn, r);
	off = nth_insn(text, size, 1);
	r = do_arm(fd, os.regs_fn, off, 0, &a);
	CHECK(r == 0, "arm %s+%#x: %s", os.regs_fn, off, strerror(-r));
	if (r != 0)
		return (1);
	writes(nul, wbuf, count);
	d.probe_id = a.probe_id;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	ours = good = 0;
	while ((n = read(fd, rbuf, sizeof(rbuf))) > 0) {
		for (j = 0; j + (ssize_t)sizeof(*rec) <= n; j += sizeof(*rec)) {
			rec = (void *)(rbuf + j);
			if (rec->pid != me)
				continue;
			ours++;
			if (rec->regs.rip == a.addr &&
			    regs_ok(rec, nul, wbuf, seen, count, &first_rdi))
				good++;
			else if (good + 3 > ours)
				printf("record %llu: rdi %#llx rsi %#llx rdx %#llx "
				    "(want %d %p, a length %zu to %zu not seen "
				    "before) cs %#x\n",
				    (unsigned long long)ours,
				    (unsigned long long)rec->regs.gpr[KINST_RDI],
				    (unsigned long long)rec->regs.gpr[KINST_RSI],
				    (unsigned long long)rec->regs.gpr[KINST_RDX],
				    nul, (void *)wbuf, write_len(0),
				    write_len(count - 1), rec->regs.cs);
		}
	}
	CHECK(ours == (uint64_t)count && good == ours,
	    "records %llu, with the right registers %llu, want %ld",
	    (unsigned long long)ours, (unsigned long long)good, count);
	printf("regs: %s+%#x: %llu records, %llu with %s; %d failures\n",
	    os.regs_fn, off,
	    (unsigned long long)ours, (unsigned long long)good,
#if DEVTEST_FREEBSD
	    "the thread in rdi and its syscall arguments in rsi",
#else
	    "fd/buf/len in rdi/rsi/rdx",
#endif
	    failures);
	close(fd);
	return (failures != 0);
}

/*
 * A full ring drops and counts: COUNT getpid calls with nobody reading
 * (load the module with a small ring_size), then hits == delivered +
 * dropped on every CPU, some were dropped, and read(2) returns exactly the
 * delivered records.
 */
/*
 * The session's counters, all CPUs: each must have hits == delivered +
 * dropped (checked here).
 */
static void
session_totals(int fd, uint64_t *hits, uint64_t *deliv, uint64_t *drop)
{
	struct kinst_cpu_stats cpus[KINST_STATS_MAXCPU];
	struct kinst_stats st;
	uint32_t i;

	memset(&st, 0, sizeof(st));
	st.buf = (uintptr_t)cpus;
	st.cap = KINST_STATS_MAXCPU;
	CHECK(xioctl(fd, KINST_IOC_STATS, &st) == 0, "stats");
	*hits = *deliv = *drop = 0;
	for (i = 0; i < st.ncpus && i < KINST_STATS_MAXCPU; i++) {
		CHECK(cpus[i].hits == cpus[i].delivered + cpus[i].dropped,
		    "cpu %u: hits %llu delivered %llu dropped %llu", i,
		    (unsigned long long)cpus[i].hits,
		    (unsigned long long)cpus[i].delivered,
		    (unsigned long long)cpus[i].dropped);
		*hits += cpus[i].hits;
		*deliv += cpus[i].delivered;
		*drop += cpus[i].dropped;
	}
}

/* One CPU's ring as a reader maps it. */
struct mring {
	struct kinst_ring_ctl *ctl;
	const uint8_t *data;
};

static int
map_cpu(int fd, uint32_t cpu, uint32_t size, struct mring *m)
{
	void *v;

	v = mmap(NULL, KINST_MAP_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	    (off_t)KINST_MAP_CTL(cpu));
	if (v == MAP_FAILED)
		return (-errno);
	m->ctl = v;
	v = mmap(NULL, size, PROT_READ, MAP_SHARED, fd,
	    (off_t)KINST_MAP_DATA(cpu));
	if (v == MAP_FAILED)
		return (-errno);
	m->data = v;
	return (0);
}

/* mmap's errno, 0 if it mapped (and is unmapped again). */
static int
try_map(int fd, uint64_t off, size_t len, int prot, int flags)
{
	void *v;

	v = mmap(NULL, len, prot, flags, fd, (off_t)off);
	if (v == MAP_FAILED)
		return (errno);
	munmap(v, len);
	return (0);
}

struct mconsumer {
	struct mring	*rings;
	uint32_t	n, size, probe;
	int32_t		pid;
	int		stopfd;		/* readable once the producer is done */
	uint64_t	taken, bad;
};

/*
 * A child process's consumer (the mappings are shared across fork, no
 * thread library needed on either system): takes records through them
 * until stopfd is readable, then once more.
 */
static void
mconsume(struct mconsumer *c)
{
	static uint8_t buf[1 << 16];
	const struct kinst_hit_record *r;
	size_t n, pos;
	uint32_t i;
	bool bad, last;
	char x;

	for (;;) {
		last = read(c->stopfd, &x, 1) == 1;
		for (i = 0; i < c->n; i++) {
			do {
				bad = false;
				n = kinst_ring_map_get(c->rings[i].ctl,
				    c->rings[i].data, c->size, buf, sizeof(buf),
				    &bad);
				if (bad)
					c->bad++;
				for (pos = 0; pos < n; pos += r->hdr.size) {
					r = (const void *)(buf + pos);
					if (r->hdr.type != KINST_REC_HIT ||
					    r->hdr.size != sizeof(*r) ||
					    r->probe_id != c->probe ||
					    r->pid != c->pid || r->cpu != i)
						c->bad++;
					c->taken++;
				}
			} while (n != 0);
		}
		if (last)
			break;
	}
}

static int
cmd_mmap(long count)
{
	static uint8_t rbuf[1 << 16];
	struct mring rings[KINST_STATS_MAXCPU];
	struct kinst_ring_size rs;
	struct kinst_hit_record *hr;
	struct kinst_disarm d;
	struct mconsumer c;
	struct kinst_arm a, b;
	uint8_t text[65536];
	uint64_t addr, hits, deliv, drop, tail, res[2];
	uint32_t size, off, i, ncpu;
	int stop[2], back[2];
	pid_t child;
	ssize_t n;
	long k;
	int fd, fd2, r, wst;
	void *v;

	fd = dev_open(O_NONBLOCK);
	fd2 = dev_open(O_NONBLOCK);
	record_self(fd);
	record_self(fd2);
	memset(&rs, 0, sizeof(rs));
	rs.size = 4096;
	r = xioctl(fd, KINST_IOC_RING, &rs);
	CHECK(r == 0, "RING: %d", r);
	ncpu = rs.ncpus;
	if (r != 0 || ncpu == 0 || ncpu > KINST_STATS_MAXCPU)
		return (1);
	/* No rings before the first ARM. */
	CHECK((r = try_map(fd, KINST_MAP_CTL(0), KINST_MAP_PAGE,
	    PROT_READ | PROT_WRITE, MAP_SHARED)) == ENXIO, "before ARM: %d", r);
	r = get_text(fd, os.getpid_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text");
	off = nth_insn(text, size, 1);
	r = do_arm(fd, os.getpid_fn, off, 0, &a);
	CHECK(r == 0, "arm: %s", strerror(-r));
	r = do_arm(fd2, os.getpid_fn, nth_insn(text, size, 2), 0, &b);
	CHECK(r == 0, "arm 2: %s", strerror(-r));
	if (failures != 0)
		return (1);

	/* Hostile mappings. */
	/*
	 * A private writable mapping: Linux's driver refuses it (EINVAL);
	 * FreeBSD's vm_mmap_cdev() refuses it first (EACCES: devfs_mmap_f
	 * grants VM_PROT_WRITE in maxprot to MAP_SHARED only).  Read-only
	 * private: EINVAL on both (FreeBSD: "cdev mapping must be shared").
	 */
	CHECK((r = try_map(fd, KINST_MAP_CTL(0), KINST_MAP_PAGE,
	    PROT_READ | PROT_WRITE, MAP_PRIVATE)) == os.private_rw_errno,
	    "private: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_CTL(0), KINST_MAP_PAGE,
	    PROT_READ, MAP_PRIVATE)) == EINVAL, "private read-only: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_DATA(0), 4096,
	    PROT_READ | PROT_WRITE, MAP_SHARED)) == EACCES, "data rw: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_DATA(0), 4096,
	    PROT_READ | PROT_EXEC, MAP_SHARED)) == EACCES, "data rx: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_CTL(0), KINST_MAP_PAGE,
	    PROT_READ | PROT_EXEC, MAP_SHARED)) == EACCES, "ctl rx: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_CTL(0), 2 * KINST_MAP_PAGE,
	    PROT_READ, MAP_SHARED)) == EINVAL, "ctl + data: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_DATA(0), 8192, PROT_READ,
	    MAP_SHARED)) == EINVAL, "data too long: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_DATA(0) + KINST_MAP_PAGE, 4096,
	    PROT_READ, MAP_SHARED)) == EINVAL, "data + 1 page: %d", r);
	CHECK((r = try_map(fd, KINST_MAP_CTL(ncpu), KINST_MAP_PAGE, PROT_READ,
	    MAP_SHARED)) == EINVAL, "CPU %u: %d", ncpu, r);
	CHECK((r = try_map(fd, (uint64_t)1 << 46, KINST_MAP_PAGE, PROT_READ,
	    MAP_SHARED)) == EINVAL, "offset 2^46: %d", r);
	v = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
	    (off_t)KINST_MAP_DATA(0));
	CHECK(v != MAP_FAILED, "data: %s", strerror(errno));
	if (v != MAP_FAILED) {
#if !DEVTEST_FREEBSD
		/*
		 * FreeBSD: d_mmap_single cannot lower the maximum protection
		 * devfs_mmap_f() derives from the file (O_RDWR: writable),
		 * so mprotect succeeds there; the garbage-tail part below
		 * checks that a spoiled ring hurts only its reader.
		 */
		errno = 0;
		r = mprotect(v, 4096, PROT_READ | PROT_WRITE);
		CHECK(r != 0 && errno == EACCES, "mprotect to write: %s",
		    r == 0 ? "succeeded" : strerror(errno));
#endif
#ifdef MREMAP_MAYMOVE
		CHECK(mremap(v, 4096, 8192, MREMAP_MAYMOVE) == MAP_FAILED,
		    "mremap to grow succeeded");
#endif
		munmap(v, 4096);
	}

	/* Each session's rings show its own probe's records only. */
	for (i = 0; i < ncpu; i++) {
		r = map_cpu(fd, i, 4096, &rings[i]);
		CHECK(r == 0, "map CPU %u: %s", i, strerror(-r));
		if (r != 0)
			return (1);
		CHECK(rings[i].ctl->size == 4096 && rings[i].ctl->cpu == i,
		    "CPU %u ctl: size %u cpu %u", i, rings[i].ctl->size,
		    rings[i].ctl->cpu);
	}
	(void)syscall(SYS_getpid);
	{
		struct mring m2;
		struct kinst_ring_size rs2;
		size_t got = 0;
		bool bad = false;

		memset(&rs2, 0, sizeof(rs2));
		CHECK(xioctl(fd2, KINST_IOC_RING, &rs2) == 0, "RING 2");
		for (i = 0; i < ncpu; i++) {
			r = map_cpu(fd2, i, rs2.size, &m2);
			CHECK(r == 0, "map 2 CPU %u: %s", i, strerror(-r));
			if (r != 0)
				break;
			n = (ssize_t)kinst_ring_map_get(m2.ctl, m2.data,
			    rs2.size, rbuf, sizeof(rbuf), &bad);
			CHECK(!bad, "session 2 CPU %u: bad ring", i);
			for (k = 0; k < n; k += hr->hdr.size) {
				hr = (void *)(rbuf + k);
				CHECK(hr->probe_id == b.probe_id,
				    "session 2 got probe %u", hr->probe_id);
				got++;
			}
			munmap(m2.ctl, KINST_MAP_PAGE);
			munmap((void *)m2.data, rs2.size);
		}
		CHECK(got == 1, "session 2: %zu records of one call", got);
	}

	/* A consumer process through the mappings, against every CPU. */
	memset(&c, 0, sizeof(c));
	c.rings = rings;
	c.n = ncpu;
	c.size = 4096;
	c.probe = a.probe_id;
	c.pid = (int32_t)getpid();
	if (pipe(stop) != 0 || pipe(back) != 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		return (1);
	}
	(void)fcntl(stop[0], F_SETFL, O_NONBLOCK);
	child = fork();
	if (child == 0) {
		c.stopfd = stop[0];
		mconsume(&c);
		res[0] = c.taken;
		res[1] = c.bad;
		_exit(write(back[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	CHECK(child > 0, "fork: %s", strerror(errno));
	if (child < 0)
		return (1);
	for (k = 0; k < count; k++) {
#if !DEVTEST_FREEBSD
		if (k % 1000 == 0) {
			cpu_set_t cs;

			CPU_ZERO(&cs);
			CPU_SET((int)((k / 1000) % ncpu), &cs);
			(void)sched_setaffinity(0, sizeof(cs), &cs);
		}
#endif
		(void)syscall(SYS_getpid);
	}
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	CHECK(write(stop[1], "x", 1) == 1, "stop the consumer");
	CHECK(read(back[0], res, sizeof(res)) == (ssize_t)sizeof(res),
	    "the consumer's counts");
	CHECK(waitpid(child, &wst, 0) == child && WIFEXITED(wst) &&
	    WEXITSTATUS(wst) == 0, "consumer exit %#x", wst);
	c.taken = res[0];
	c.bad = res[1];
	close(stop[0]);
	close(stop[1]);
	close(back[0]);
	close(back[1]);
	session_totals(fd, &hits, &deliv, &drop);
	CHECK(hits >= (uint64_t)count + 1, "hits %llu", (unsigned long long)hits);
	CHECK(c.taken == deliv && c.bad == 0,
	    "taken through the mapping %llu, delivered %llu, bad %llu",
	    (unsigned long long)c.taken, (unsigned long long)deliv,
	    (unsigned long long)c.bad);
	printf("mmap: hits %llu delivered %llu dropped %llu taken %llu\n",
	    (unsigned long long)hits, (unsigned long long)deliv,
	    (unsigned long long)drop, (unsigned long long)c.taken);

	/*
	 * A garbage tail: the producer drops (and writes nowhere else),
	 * read(2) resynchronizes, records come again.
	 */
	r = do_arm(fd, os.getpid_fn, off, 0, &a);
	CHECK(r == 0, "re-arm: %s", strerror(-r));
	for (i = 0; i < ncpu; i++)
		rings[i].ctl->tail = rings[i].ctl->head + 4096 * 7 + 3;
	for (k = 0; k < 2000; k++)
		(void)syscall(SYS_getpid);
	for (i = 0; i < ncpu; i++) {
		tail = rings[i].ctl->tail;
		CHECK(tail == rings[i].ctl->head + 4096 * 7 + 3,
		    "CPU %u: tail moved", i);
	}
	CHECK(read(fd, rbuf, sizeof(rbuf)) < 0 && errno == EAGAIN,
	    "read after a garbage tail");
	for (i = 0; i < ncpu; i++)
		CHECK(rings[i].ctl->tail == rings[i].ctl->head,
		    "CPU %u: read(2) did not resynchronize", i);
	(void)syscall(SYS_getpid);
	n = read(fd, rbuf, sizeof(rbuf));
	CHECK(n == (ssize_t)sizeof(struct kinst_hit_record),
	    "read after the repair: %zd", n);
	for (i = 0; i < ncpu; i++) {
		munmap(rings[i].ctl, KINST_MAP_PAGE);
		munmap((void *)rings[i].data, 4096);
	}
	printf("mmap: %d failures\n", failures);
	close(fd);
	close(fd2);
	return (failures != 0);
}

static int
cmd_drops(long count)
{
	static uint8_t rbuf[1 << 16];
	uint8_t text[65536];
	struct kinst_arm a;
	struct kinst_disarm d;
	uint64_t addr, hits, deliv, drop, nrec;
	uint32_t size, off;
	ssize_t n;
	long k;
	int fd, r;

	fd = dev_open(O_NONBLOCK);
	record_self(fd);
	r = get_text(fd, os.getpid_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text");
	off = nth_insn(text, size, 1);
	r = do_arm(fd, os.getpid_fn, off, 0, &a);
	CHECK(r == 0, "arm: %s", strerror(-r));
	if (r != 0)
		return (1);
	for (k = 0; k < count; k++)
		(void)syscall(SYS_getpid);
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0 && d.ndisarmed == 1,
	    "disarm");
	session_totals(fd, &hits, &deliv, &drop);
	CHECK(hits >= (uint64_t)count && drop > 0, "hits %llu dropped %llu",
	    (unsigned long long)hits, (unsigned long long)drop);
	nrec = 0;
	while ((n = read(fd, rbuf, sizeof(rbuf))) > 0)
		nrec += (uint64_t)n / sizeof(struct kinst_hit_record);
	CHECK(nrec == deliv, "read %llu records, delivered %llu",
	    (unsigned long long)nrec, (unsigned long long)deliv);
	printf("drops: hits %llu delivered %llu dropped %llu read %llu; "
	    "%d failures\n", (unsigned long long)hits,
	    (unsigned long long)deliv, (unsigned long long)drop,
	    (unsigned long long)nrec, failures);
	close(fd);
	return (failures != 0);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

/* ns per call of a getpid loop, in batches of 1000, draining between. */
static double
bench_loop(int fd, long n)
{
	static uint8_t rbuf[1 << 16];
	uint64_t t, total = 0;
	long i, k;

	for (i = 0; i < n; i += 1000) {
		t = now_ns();
		for (k = 0; k < 1000; k++)
			(void)syscall(SYS_getpid);
		total += now_ns() - t;
		while (fd >= 0 && read(fd, rbuf, sizeof(rbuf)) > 0)
			;
	}
	return ((double)total / (double)n);
}

/*
 * Per-hit cost of a kinst probe on getpid's second instruction: the same
 * loop with no probe and with the probe (records read between batches).
 * Prints figures only; never fails on timing.
 */
static int
cmd_bench(long n)
{
	uint8_t text[65536];
	struct kinst_arm a;
	struct kinst_disarm d;
	uint32_t size, off;
	uint64_t addr;
	double base, probed, stacked;
	int fd, r;

	fd = dev_open(O_NONBLOCK);
	record_self(fd);
	r = get_text(fd, os.getpid_fn, text, sizeof(text), &size, &addr);
	if (r != 0)
		return (1);
	off = nth_insn(text, size, 1);
	(void)bench_loop(-1, 10000);	/* warm up */
	base = bench_loop(-1, n);
	printf("bench: %ld getpid calls, no kinst probe: %.0f ns/call\n", n,
	    base);
	r = do_arm(fd, os.getpid_fn, off, 0, &a);
	if (r != 0) {
		printf("bench: arm __x64_sys_getpid+%#x: %s\n", off,
		    strerror(-r));
		return (1);
	}
	probed = bench_loop(fd, n);
	printf("bench: %ld getpid calls, kinst probe at +%#x: %.0f ns/call, "
	    "%.0f ns/hit\n", n, off, probed, probed - base);
	/* The same instruction with a stack at every hit. */
	memset(&d, 0, sizeof(d));
	d.probe_id = KINST_ALL_PROBES;
	r = xioctl(fd, KINST_IOC_DISARM, &d);
	if (r != 0 ||
	    (r = do_arm(fd, os.getpid_fn, off, KINST_ARM_STACK, &a)) != 0) {
		printf("bench: re-arm with KINST_ARM_STACK: %s\n", strerror(-r));
		close(fd);
		return (1);
	}
	stacked = bench_loop(fd, n);
	printf("bench: %ld getpid calls, kinst probe at +%#x with a stack: "
	    "%.0f ns/call, %.0f ns/hit\n", n, off, stacked, stacked - base);
	close(fd);
	return (0);
}

/* Arm all of func and disarm it, rounds times; every arm must take. */
static int
cmd_flip(const char *func, long rounds)
{
	struct kinst_arm a;
	struct kinst_disarm d;
	long r, probes;
	int fd, e;

	fd = dev_open(O_NONBLOCK);
	probes = 0;
	for (r = 1; r <= rounds; r++) {
		e = do_arm(fd, func, 0, KINST_ARM_ALL, &a);
		CHECK(e == 0 && a.narmed > 0, "round %ld: arm %s: %s, %u armed",
		    r, func, strerror(-e), a.narmed);
		if (e != 0)
			break;
		probes += a.narmed;
		d.probe_id = KINST_ALL_PROBES;
		e = xioctl(fd, KINST_IOC_DISARM, &d);
		CHECK(e == 0 && d.ndisarmed == a.narmed,
		    "round %ld: disarm: %s, %u of %u", r, strerror(-e),
		    d.ndisarmed, a.narmed);
		if (r % 50 == 0)
			printf("flip %s: round %ld\n", func, r);
	}
	close(fd);
	printf("flip %s: %ld rounds, %ld probes armed and disarmed; %d failures\n",
	    func, r - 1, probes, failures);
	return (failures != 0);
}

static int
cmd_spin(long seconds)
{
	uint64_t end;

	end = now_ns() + (uint64_t)seconds * 1000000000ull;
	while (now_ns() < end) {
		int k;

		for (k = 0; k < 1000; k++)
			(void)syscall(SYS_getpid);
	}
	return (0);
}

/*
 * Probe programs (ABI 1.5): hostile KINST_IOC_PROG_LOAD arguments and
 * random bytecode; the accepted programs run on getpid's probe.  Then
 * user loads on Linux: a program reading a variable of this process
 * matches exactly when its constant is the variable's value, one reading
 * unmapped or kernel-garbage addresses faults, and per CPU
 * hits == delivered + dropped + filtered.  Random programs include
 * captures (MEM/STR of registers, garbage and kernel pointers, LOADC
 * addresses; ABI 1.7), some over the verifier's limits.
 */
#define	PI(o, a, f, im)	((struct kinst_pinsn){ .op = (o), .arg = (a),	\
			    .off = (f), .imm = (im) })

static volatile uint64_t prog_magic = 0x1234567887654321ull;

/* Only this process's hits: another's memory at our addresses is not ours. */
static void
record_only_self(int fd)
{
	struct kinst_filter f = { .pid = getpid(), .cpu = -1,
	    .exclude_pid = -1 };

	CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == 0, "FILTER pid");
}

static int
prog_load(int fd, const struct kinst_pinsn *code, uint32_t n,
    struct kinst_prog_load *pl)
{
	memset(pl, 0, sizeof(*pl));
	pl->insns = (uint64_t)(uintptr_t)code;
	pl->ninsns = n;
	return (xioctl(fd, KINST_IOC_PROG_LOAD, pl));
}

/* Arm getpid with program id, make n getpid calls, disarm; sums of STATS. */
static void
prog_run(int fd, uint32_t id, long n, uint64_t sum[4])
{
	struct kinst_cpu_stats cpus[KINST_STATS_MAXCPU];
	struct kinst_prog_cpu_stats pcs[KINST_STATS_MAXCPU];
	struct kinst_prog_stats ps;
	struct kinst_stats st;
	struct kinst_disarm d;
	struct kinst_arm a;
	uint32_t c;
	long k;
	int r;

	memset(&a, 0, sizeof(a));
	split_name(os.getpid_fn, a.module, sizeof(a.module),
	    a.function, sizeof(a.function));
	a.flags = KINST_ARM_ALL | KINST_ARM_PROG;
	a.prog_id = id;
	r = xioctl(fd, KINST_IOC_ARM, &a);
	CHECK(r == 0 && a.narmed > 0, "ARM with program %u: %d", id, r);
	for (k = 0; k < n; k++)
		(void)syscall(SYS_getpid);
	memset(&d, 0, sizeof(d));
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "DISARM");
	memset(&st, 0, sizeof(st));
	st.buf = (uint64_t)(uintptr_t)cpus;
	st.cap = KINST_STATS_MAXCPU;
	CHECK(xioctl(fd, KINST_IOC_STATS, &st) == 0, "STATS");
	memset(&ps, 0, sizeof(ps));
	ps.buf = (uint64_t)(uintptr_t)pcs;
	ps.cap = KINST_STATS_MAXCPU;
	CHECK(xioctl(fd, KINST_IOC_PROG_STATS, &ps) == 0, "PROG_STATS");
	CHECK(ps.ncpus == st.ncpus, "ncpus %u vs %u", ps.ncpus, st.ncpus);
	memset(sum, 0, 4 * sizeof(sum[0]));
	for (c = 0; c < st.ncpus && c < KINST_STATS_MAXCPU; c++) {
		CHECK(cpus[c].hits == cpus[c].delivered + cpus[c].dropped +
		    pcs[c].filtered, "cpu %u: hits %llu != %llu + %llu + %llu",
		    c, (unsigned long long)cpus[c].hits,
		    (unsigned long long)cpus[c].delivered,
		    (unsigned long long)cpus[c].dropped,
		    (unsigned long long)pcs[c].filtered);
		CHECK(pcs[c].faults <= pcs[c].filtered, "faults > filtered");
		sum[0] += cpus[c].hits;
		sum[1] += cpus[c].delivered + cpus[c].dropped;
		sum[2] += pcs[c].filtered;
		sum[3] += pcs[c].faults;
	}
}

static void
prog_bad_args(int fd)
{
	struct kinst_pinsn ok[2] = { PI(KINST_OP_IMM, 0, 0, 1),
	    PI(KINST_OP_RET, 0, 0, 0) };
	struct kinst_prog_load pl;
	struct kinst_arm a;
	int r;

	r = xioctl(fd, KINST_IOC_PROG_LOAD, NULL);
	CHECK(r == -EFAULT, "PROG_LOAD NULL: %d", r);
	r = xioctl(fd, KINST_IOC_PROG_LOAD, (void *)0xffff800000000000ull);
	CHECK(r == -EFAULT, "PROG_LOAD kernel pointer: %d", r);
	r = xioctl(fd, KINST_IOC_PROG_STATS, NULL);
	CHECK(r == -EFAULT, "PROG_STATS NULL: %d", r);
	r = prog_load(fd, NULL, 2, &pl);
	CHECK(r == -EFAULT, "insns NULL: %d", r);
	r = prog_load(fd, (void *)0xffffffff81000000ull, 2, &pl);
	CHECK(r == -EFAULT, "insns kernel pointer: %d", r);
	r = prog_load(fd, ok, 0, &pl);
	CHECK(r == -EINVAL && (!os.copyout_on_error ||
	    pl.verdict == KINST_PV_EMPTY), "empty: %d %u", r, pl.verdict);
	r = prog_load(fd, ok, KINST_PROG_MAX_INSNS + 1, &pl);
	CHECK(r == -EINVAL && (!os.copyout_on_error ||
	    pl.verdict == KINST_PV_TOO_LONG), "too long: %d %u", r,
	    pl.verdict);
	r = prog_load(fd, ok, 0xffffffffu, &pl);
	CHECK(r == -EINVAL, "4G instructions: %d", r);
	memset(&pl, 0, sizeof(pl));
	pl.insns = (uint64_t)(uintptr_t)ok;
	pl.ninsns = 2;
	pl.flags = 1;
	CHECK(xioctl(fd, KINST_IOC_PROG_LOAD, &pl) == -EINVAL, "flags");
	pl.flags = 0;
	pl._pad = 1;
	CHECK(xioctl(fd, KINST_IOC_PROG_LOAD, &pl) == -EINVAL, "_pad");
	/* ARM: a program id that is not loaded, or one without the flag. */
	memset(&a, 0, sizeof(a));
	split_name(os.getpid_fn, a.module, sizeof(a.module),
	    a.function, sizeof(a.function));
	a.flags = KINST_ARM_ALL | KINST_ARM_PROG;
	a.prog_id = 0;
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "ARM prog 0");
	a.prog_id = KINST_PROG_MAX + 1;
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "ARM prog 17");
	a.prog_id = 0xffffffffu;
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "ARM prog ~0");
	a.flags = KINST_ARM_ALL;
	a.prog_id = 1;
	CHECK(xioctl(fd, KINST_IOC_ARM, &a) == -EINVAL, "prog_id w/o flag");
}

/* *(SIZE)(addr) == want */
static uint32_t
prog_user_load(int fd, uint64_t addr, uint64_t want)
{
	struct kinst_pinsn c[] = { PI(KINST_OP_IMM, 0, 0, addr),
	    PI(KINST_OP_LOAD, 8, 0, 0), PI(KINST_OP_IMM, 0, 0, want),
	    PI(KINST_OP_EQ, 0, 0, 0), PI(KINST_OP_RET, 0, 0, 0) };
	struct kinst_prog_load pl;
	int r;

	r = prog_load(fd, c, 5, &pl);
	CHECK(r == 0 && pl.prog_id != 0, "load: %d verdict %u", r,
	    pl.verdict);
	return (pl.prog_id);
}

static void
prog_loads(void)
{
	static const uint64_t bad[] = { 0, 16, 0x1000,
	    0x0000800000000000ull, 0xdead000000000000ull,
	    0xffff800000000000ull - 8, 0xfffffffffffffff8ull };
	uint64_t sum[4];
	uint32_t id, i;
	int fd;

	fd = dev_open(O_NONBLOCK);
	record_only_self(fd);
	/* The right value: every hit passes (this process's own memory). */
	id = prog_user_load(fd, (uint64_t)(uintptr_t)&prog_magic, prog_magic);
	prog_run(fd, id, 200, sum);
	CHECK(sum[0] >= 200 && sum[2] == 0 && sum[1] == sum[0],
	    "user load, right value: hits %llu passed %llu filtered %llu",
	    (unsigned long long)sum[0], (unsigned long long)sum[1],
	    (unsigned long long)sum[2]);
	printf("progfuzz: user load of a variable: %llu hits, all matched\n",
	    (unsigned long long)sum[0]);
	close(fd);
	/* A wrong value: every hit of ours is filtered, none faults. */
	fd = dev_open(O_NONBLOCK);
	record_only_self(fd);
	id = prog_user_load(fd, (uint64_t)(uintptr_t)&prog_magic,
	    prog_magic + 1);
	prog_run(fd, id, 200, sum);
	CHECK(sum[0] >= 200 && sum[2] == sum[0] && sum[3] == 0,
	    "user load, wrong value: hits %llu filtered %llu faults %llu",
	    (unsigned long long)sum[0], (unsigned long long)sum[2],
	    (unsigned long long)sum[3]);
	close(fd);
	/* Unmapped, non-canonical, kernel-garbage: faults, no oops. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = dev_open(O_NONBLOCK);
		record_only_self(fd);
		id = prog_user_load(fd, bad[i], 0);
		prog_run(fd, id, 50, sum);
		CHECK(sum[0] >= 50 && sum[2] == sum[0] && sum[3] == sum[0],
		    "load of %#llx: hits %llu filtered %llu faults %llu",
		    (unsigned long long)bad[i], (unsigned long long)sum[0],
		    (unsigned long long)sum[2], (unsigned long long)sum[3]);
		close(fd);
	}
}

/*
 * A program the verifier should accept: pushes (registers, context,
 * constants, some of them addresses), loads from whatever is on the stack
 * (kernel pointers in registers, garbage), operators, down to one value
 * and RET.  Returns its length.
 */
static uint32_t
prog_gen(struct kinst_pinsn *code)
{
	uint32_t n, depth, want;

	n = 0;
	depth = 0;
	want = 4 + (uint32_t)(rnd() % 40);
	while (n < want || depth != 1) {
		if (depth == 0 || (depth < 6 && n < want && rnd() % 2 == 0)) {
			switch (rnd() % 3) {
			case 0:
				code[n++] = PI(KINST_OP_REG, 0, 0, 0);
				code[n - 1].arg = (uint8_t)(rnd() % KINST_PREG_COUNT);
				break;
			case 1:
				code[n++] = PI(KINST_OP_CTX, 0, 0, 0);
				code[n - 1].arg = (uint8_t)(rnd() % KINST_PCTX_COUNT);
				break;
			default:
				code[n++] = PI(KINST_OP_IMM, 0, 0, rnd() % 2 ?
				    rnd() : rnd() % 64);
			}
			depth++;
		} else if (n < want && rnd() % 3 == 0) {
			code[n++] = PI(rnd() % 2 ? KINST_OP_LOAD : KINST_OP_LNOT +
			    rnd() % 3, 0, 0, 0);
			if (rnd() % 3 == 0 && code[n - 1].op == KINST_OP_LOAD)
				code[n - 1].op = KINST_OP_LOADC;
			if (code[n - 1].op != KINST_OP_LNOT &&
			    code[n - 1].op != KINST_OP_NEG &&
			    code[n - 1].op != KINST_OP_BNOT)
				code[n - 1].arg = (uint8_t)(1 << (rnd() % 4));
		} else if (depth >= 2 && rnd() % 4 == 0) {
			/* A capture (ABI 1.7) of whatever is there, its
			   length sometimes over the limits. */
			code[n++] = PI(rnd() % 2 ? KINST_OP_MEM : KINST_OP_STR,
			    0, 0, 1 + rnd() % (rnd() % 8 == 0 ? 1024 : 256));
			depth--;
		} else if (depth >= 2) {
			code[n++] = PI(KINST_OP_ADD + rnd() % 18, 0, 0, 0);
			depth--;
		} else {
			code[n++] = PI(KINST_OP_LNOT, 0, 0, 0);
		}
	}
	code[n++] = PI(KINST_OP_RET, 0, 0, 0);
	return (n);
}

static int
cmd_progfuzz(long iters)
{
	struct kinst_pinsn code[KINST_PROG_MAX_INSNS + 8];
	struct kinst_prog_load pl;
	uint64_t sum[4];
	long i, accepted, refused;
	uint32_t n, k;
	int fd, r, nprogs;

	fd = dev_open(O_NONBLOCK);
	record_only_self(fd);
	prog_bad_args(fd);
	close(fd);
	prog_loads();

	fd = dev_open(O_NONBLOCK);
	record_only_self(fd);
	nprogs = 0;
	accepted = refused = 0;
	for (i = 0; i < iters; i++) {
		n = (uint32_t)(rnd() % 12) + 1;
		if (i % 3 == 0) {
			rnd_fill(code, n * sizeof(code[0]));
		} else {
			n = prog_gen(code);
			if (i % 3 == 1) {	/* and one field broken */
				k = (uint32_t)(rnd() % n);
				((uint8_t *)&code[k])[rnd() % sizeof(code[k])] ^=
				    (uint8_t)(1 + rnd() % 255);
			}
		}
		r = prog_load(fd, code, n, &pl);
		CHECK(r == 0 || r == -EINVAL || r == -ENOSPC,
		    "PROG_LOAD random: %d", r);
		if (r == -EINVAL) {
			CHECK(!os.copyout_on_error ||
			    (pl.verdict != KINST_PV_OK && pl.error_pc <= n),
			    "refused with verdict %u at %u", pl.verdict,
			    pl.error_pc);
			refused++;
			continue;
		}
		if (r != 0)
			continue;
		accepted++;
		if (accepted % 16 == 1 || i + 1 == iters)
			prog_run(fd, pl.prog_id, 20, sum);
		if (++nprogs == KINST_PROG_MAX) {
			/* The 17th load of a session is refused; start anew. */
			r = prog_load(fd, code, n, &pl);
			CHECK(r == -ENOSPC, "17th program: %d", r);
			close(fd);
			fd = dev_open(O_NONBLOCK);
			record_only_self(fd);
			nprogs = 0;
		}
	}
	close(fd);
	printf("progfuzz: %ld programs, %ld accepted, %ld refused, "
	    "%d failures\n", iters, accepted, refused, failures);
	return (failures == 0 ? 0 : 1);
}

/*
 * Aggregation (ABI 1.6): hostile AGG_SETUP/READ/CLEAR/STATS arguments
 * (pointers, every field, random structures), KINST_ARM_AGG without an
 * aggregation or with KINST_ARM_STACK; then a real count: every
 * instruction of __x64_sys_getpid counted in the kernel for a child's
 * `calls` getpid(2)s, read per CPU and summed: the entry's count == calls,
 * every other 0 or calls, hits == aggregated == their sum, no record.
 */
static void
agg_fuzz_setup(int fd, long iters)
{
	unsigned long cmds[] = { KINST_IOC_AGG_SETUP, KINST_IOC_AGG_READ,
	    KINST_IOC_AGG_CLEAR, KINST_IOC_AGG_STATS, KINST_IOC_AGG_STACKS };
	struct kinst_agg_setup su;
	struct kinst_agg_read rd;
	struct kinst_agg_clear cl;
	struct kinst_agg_stats st;
	struct kinst_arm a;
	long i;
	size_t k;
	int r;

	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		r = xioctl(fd, cmds[k], NULL);
		CHECK(r == -EFAULT, "agg cmd %zu NULL: %d", k, r);
		r = xioctl(fd, cmds[k], (void *)0xffff800000000000ull);
		CHECK(r == -EFAULT, "agg cmd %zu kernel pointer: %d", k, r);
	}
	/* Nothing set up: read, clear, stats and ARM_AGG refuse. */
	memset(&rd, 0, sizeof(rd));
	CHECK(xioctl(fd, KINST_IOC_AGG_READ, &rd) == -EINVAL, "READ unset");
	memset(&cl, 0, sizeof(cl));
	CHECK(xioctl(fd, KINST_IOC_AGG_CLEAR, &cl) == -EINVAL, "CLEAR unset");
	memset(&st, 0, sizeof(st));
	CHECK(xioctl(fd, KINST_IOC_AGG_STATS, &st) == -EINVAL, "STATS unset");
	CHECK(xioctl(fd, KINST_IOC_AGG_STACKS, &rd) == -EINVAL, "STACKS unset");
	CHECK(do_arm(fd, os.getpid_fn, 0, KINST_ARM_ALL | KINST_ARM_AGG,
	    &a) == -EINVAL, "ARM_AGG without an aggregation");
	/* Every field of SETUP. */
#define	SU(kind_, flags_, n_, mn, mx, stp, pad, want) do {		\
	memset(&su, 0, sizeof(su));					\
	su.kind = (kind_); su.flags = (flags_); su.nslots = (n_);	\
	su.lin_min = (mn); su.lin_max = (mx); su.lin_step = (stp);	\
	su.nstacks = (pad);						\
	r = xioctl(fd, KINST_IOC_AGG_SETUP, &su);			\
	CHECK(r == (want), "SETUP kind %u flags %#x n %u lin %lld,%lld,%lld " \
	    "nstacks %u: %d", su.kind, su.flags, su.nslots, (long long)(mn), \
	    (long long)(mx), (long long)(stp), su.nstacks, r);		\
} while (0)
	SU(0, 0, 8, 0, 0, 0, 0, -EINVAL);
	SU(KINST_AGG_KIND_COUNT_, 0, 8, 0, 0, 0, 0, -EINVAL);
	SU(KINST_AGG_COUNT, 2, 8, 0, 0, 0, 0, -EINVAL);
	SU(KINST_AGG_COUNT, 0x80000000u, 8, 0, 0, 0, 0, -EINVAL);
	SU(KINST_AGG_COUNT, 0, 0, 0, 0, 0, 0, -EINVAL);
	SU(KINST_AGG_COUNT, 0, KINST_AGG_MAX_SLOTS + 1, 0, 0, 0, 0, -EINVAL);
	SU(KINST_AGG_COUNT, 0, 8, 0, 0, 0, 1, -EINVAL);
	SU(KINST_AGG_LOG2, 0, 8, 1, 2, 1, 0, -EINVAL);
	SU(KINST_AGG_LINEAR, 0, 8, 0, 10, 0, 0, -EINVAL);
	SU(KINST_AGG_LINEAR, 0, 8, 0, 10, -1, 0, -EINVAL);
	SU(KINST_AGG_LINEAR, 0, 8, 10, 0, 1, 0, -EINVAL);
	SU(KINST_AGG_LINEAR, 0, 8, INT64_MIN, INT64_MAX, 1, 0, -EINVAL);
	SU(KINST_AGG_LINEAR, 0, KINST_AGG_MAX_SLOTS, 0, 1024, 1, 0, -EFBIG);
	/* KINST_AGGF_STACK: nstacks with the flag only, within bounds. */
	SU(KINST_AGG_COUNT, KINST_AGGF_STACK, 8, 0, 0, 0, 0, -EINVAL);
	SU(KINST_AGG_COUNT, KINST_AGGF_STACK, 8, 0, 0, 0,
	    KINST_AGG_MAX_STACKS + 1, -EINVAL);
	SU(KINST_AGG_COUNT, KINST_AGGF_STACK, 8, 0, 0, 0, 0xffffffffu, -EINVAL);
	SU(KINST_AGG_COUNT, KINST_AGGF_PROBE, 8, 0, 0, 0, 8, -EINVAL);
	SU(KINST_AGG_COUNT, 4, 8, 0, 0, 0, 8, -EINVAL);
	SU(KINST_AGG_LINEAR, KINST_AGGF_STACK, KINST_AGG_MAX_SLOTS, 0, 1024, 1,
	    KINST_AGG_MAX_STACKS, -EFBIG);
	/* Random structures: refused, or the one aggregation of the file. */
	for (i = 0; i < iters; i++) {
		rnd_fill(&su, sizeof(su));
		if (i % 4 == 0)
			su.kind = 1 + (uint32_t)(rnd() % 3);
		if (i % 8 == 0)
			su.flags &= 1;
		if (i % 16 == 0)
			su.nstacks = 0;
		if (i % 16 == 8)
			su.flags = KINST_AGGF_STACK | (su.flags & 1);
		r = xioctl(fd, KINST_IOC_AGG_SETUP, &su);
		CHECK(r == -EINVAL || r == -EFBIG, "SETUP random: %d", r);
	}
	CHECK(do_arm(fd, os.getpid_fn, 0, KINST_ARM_ALL | KINST_ARM_AGG |
	    KINST_ARM_STACK, &a) == -EINVAL, "ARM_AGG with ARM_STACK");
#undef SU
}

/*
 * KINST_AGGF_STACK: hostile AGG_STACKS arguments, then a child's getpid(2)s
 * counted by stack at __x64_sys_getpid's second instruction: every entry's hash names
 * exactly one stack of its CPU, every stack starts at the probe and has
 * callers, the counts add up to the calls and to the hits; CLEAR empties
 * the stacks.
 */
/*
 * Make the session behind fd count only a child that calls getpid(2)
 * calls times, run it to its end.
 */
static void
agg_run_getpid_child(int fd, long calls)
{
	struct kinst_filter f;
	pid_t pid;
	long i;
	int p[2], r;

	CHECK(pipe(p) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		char x;

		close(p[1]);
		if (read(p[0], &x, 1) != 1)
			_exit(1);
		for (i = 0; i < calls; i++)
			(void)syscall(SYS_getpid);
		_exit(0);
	}
	close(p[0]);
	memset(&f, 0, sizeof(f));
	f.pid = (int32_t)pid;
	f.cpu = -1;
	f.exclude_pid = -1;
	CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == 0, "FILTER child");
	CHECK(write(p[1], "g", 1) == 1, "start the child");
	CHECK(waitpid(pid, &r, 0) == pid && WIFEXITED(r) &&
	    WEXITSTATUS(r) == 0, "child");
	close(p[1]);
}

static struct kinst_agg_stack agg_stk[4096];

static void
agg_fuzz_stacks(long iters, long calls)
{
	struct kinst_agg_cpu_stats as[KINST_STATS_MAXCPU];
	struct kinst_agg_setup su;
	struct kinst_agg_read rd, sr;
	struct kinst_agg_clear cl;
	struct kinst_agg_stats st;
	struct kinst_arm a;
	static uint8_t buf[1 << 16];
	static uint8_t text[65536];
	uint64_t sum, agg, over, addr;
	uint32_t c, j, m, nst, size, off1;
	int fd, r;
	long i;

	fd = dev_open(O_NONBLOCK);
	/* Offset 0 is the ftrace site: the second instruction, run once per call. */
	r = get_text(fd, os.getpid_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text: %d", r);
	off1 = nth_insn(text, size, 1);
	CHECK(off1 != UINT32_MAX && off1 >= 1, "second insn %u", off1);
	memset(&su, 0, sizeof(su));
	su.kind = KINST_AGG_COUNT;
	su.flags = KINST_AGGF_STACK;
	su.nslots = 64;
	su.nstacks = 50;
	CHECK(xioctl(fd, KINST_IOC_AGG_SETUP, &su) == 0, "SETUP stack");
	CHECK(su.nstacks == 64 && su.nslots == 64, "SETUP stack out: %u %u",
	    su.nslots, su.nstacks);
	r = do_arm(fd, os.getpid_fn, off1, KINST_ARM_AGG, &a);
	CHECK(r == 0 && a.narmed == 1, "ARM_AGG stack at +%u: %d", off1, r);
	/* Every field of STACKS. */
	memset(&sr, 0, sizeof(sr));
	sr.cpu = KINST_STATS_MAXCPU * 4;
	CHECK(xioctl(fd, KINST_IOC_AGG_STACKS, &sr) == -EINVAL, "STACKS cpu");
	sr.cpu = 0;
	sr.flags = 1;
	CHECK(xioctl(fd, KINST_IOC_AGG_STACKS, &sr) == -EINVAL, "STACKS flags");
	sr.flags = 0;
	sr.cap = 4;
	sr.buf = 0xffff800000000000ull;	/* a kernel address: no copy there */
	r = xioctl(fd, KINST_IOC_AGG_STACKS, &sr);
	CHECK(r == 0 || r == -EFAULT, "STACKS kernel buffer: %d", r);
	sr.cap = 0;
	sr.buf = 0;
	CHECK(xioctl(fd, KINST_IOC_AGG_STACKS, &sr) == 0 && sr.count == 0,
	    "STACKS cap 0");
	for (i = 0; i < iters; i++) {
		rnd_fill(&sr, sizeof(sr));
		if (i % 2 == 0) {
			sr.cpu %= 4;
			sr.flags = 0;
		}
		if (i % 4 == 0)
			sr.buf = (uint64_t)(uintptr_t)agg_stk;	/* cap may exceed it: cut below */
		if (i % 4 == 0)
			sr.cap %= 4096;
		r = xioctl(fd, KINST_IOC_AGG_STACKS, &sr);
		CHECK(r == 0 || r == -EINVAL || r == -EFAULT,
		    "STACKS random: %d", r);
	}

	agg_run_getpid_child(fd, calls);
	memset(&st, 0, sizeof(st));
	st.buf = (uint64_t)(uintptr_t)as;
	st.cap = KINST_STATS_MAXCPU;
	CHECK(xioctl(fd, KINST_IOC_AGG_STATS, &st) == 0, "STATS");
	sum = agg = over = 0;
	for (c = 0; c < st.ncpus && c < KINST_STATS_MAXCPU; c++) {
		memset(&rd, 0, sizeof(rd));
		rd.buf = (uint64_t)(uintptr_t)buf;
		rd.cap = su.nslots;
		rd.cpu = c;
		CHECK(xioctl(fd, KINST_IOC_AGG_READ, &rd) == 0, "READ cpu %u", c);
		memset(&sr, 0, sizeof(sr));
		sr.buf = (uint64_t)(uintptr_t)agg_stk;
		sr.cap = su.nstacks;
		sr.cpu = c;
		CHECK(xioctl(fd, KINST_IOC_AGG_STACKS, &sr) == 0, "STACKS cpu %u",
		    c);
		nst = sr.count;
		for (j = 0; j < nst; j++)
			CHECK(agg_stk[j].nframes >= 2 &&
			    agg_stk[j].nframes <= KINST_STACK_MAX &&
			    agg_stk[j].frames[0] == a.addr &&
			    agg_stk[j].flags == 0,
			    "cpu %u stack %u: %u frames, [0] %#llx (probe %#llx)",
			    c, j, agg_stk[j].nframes,
			    (unsigned long long)agg_stk[j].frames[0],
			    (unsigned long long)a.addr);
		for (j = 0; j < rd.count; j++) {
			struct kinst_agg_entry *e = (struct kinst_agg_entry *)
			    (buf + (size_t)j * su.entry_size);
			uint32_t named = 0;

			for (m = 0; m < nst; m++)
				named += agg_stk[m].hash == e->key[1];
			CHECK(named == 1 && e->key[0] == 0 && e->probe_id == 0,
			    "cpu %u entry %u: hash %#llx names %u stacks", c, j,
			    (unsigned long long)e->key[1], named);
			sum += e->count;
		}
		agg += as[c].aggregated;
		over += as[c].overflow + as[c].nested;
	}
	CHECK(sum == (uint64_t)calls && agg == sum && over == 0,
	    "by stack: counted %llu aggregated %llu overflow+nested %llu, "
	    "%ld calls", (unsigned long long)sum, (unsigned long long)agg,
	    (unsigned long long)over, calls);
	memset(&cl, 0, sizeof(cl));
	CHECK(xioctl(fd, KINST_IOC_AGG_CLEAR, &cl) == 0, "CLEAR");
	CHECK(xioctl(fd, KINST_IOC_AGG_CLEAR, &cl) == 0, "CLEAR");
	for (c = 0; c < st.ncpus && c < KINST_STATS_MAXCPU; c++) {
		memset(&sr, 0, sizeof(sr));
		sr.buf = (uint64_t)(uintptr_t)agg_stk;
		sr.cap = su.nstacks;
		sr.cpu = c;
		CHECK(xioctl(fd, KINST_IOC_AGG_STACKS, &sr) == 0 && sr.count == 0,
		    "STACKS after CLEAR cpu %u: %u", c, sr.count);
	}
	close(fd);
	printf("aggfuzz: %ld getpid calls counted by stack\n", calls);
}

static int
cmd_aggfuzz(long iters, long calls)
{
	struct kinst_agg_setup su;
	struct kinst_agg_read rd;
	struct kinst_agg_clear cl;
	struct kinst_agg_stats st;
	struct kinst_agg_cpu_stats as[KINST_STATS_MAXCPU];
	struct kinst_cpu_stats cs[KINST_STATS_MAXCPU];
	struct kinst_stats s;
	struct kinst_arm a;
	static uint8_t buf[1 << 20];
	uint64_t counts[64], agg, hits, delivered, sum;
	uint32_t c, j, n, first;
	int fd, r, bad;
	long i;

	fd = dev_open(O_NONBLOCK);
	agg_fuzz_setup(fd, iters);
	memset(&su, 0, sizeof(su));
	su.kind = KINST_AGG_COUNT;
	su.flags = KINST_AGGF_PROBE;
	su.nslots = 100;
	CHECK(xioctl(fd, KINST_IOC_AGG_SETUP, &su) == 0, "SETUP");
	CHECK(su.nslots == 128 && su.nbuckets == 0 &&
	    su.entry_size == sizeof(struct kinst_agg_entry),
	    "SETUP out: %u %u %u", su.nslots, su.nbuckets, su.entry_size);
	CHECK(xioctl(fd, KINST_IOC_AGG_SETUP, &su) == -EEXIST, "SETUP twice");
	r = do_arm(fd, os.getpid_fn, 0, KINST_ARM_ALL | KINST_ARM_AGG, &a);
	CHECK(r == 0 && a.narmed > 0 && a.narmed < 64, "ARM_AGG: %d, %u armed",
	    r, a.narmed);
	first = a.probe_id;
	/* READ/CLEAR/STATS: every field. */
	memset(&rd, 0, sizeof(rd));
	rd.cpu = KINST_STATS_MAXCPU * 4;
	CHECK(xioctl(fd, KINST_IOC_AGG_READ, &rd) == -EINVAL, "READ cpu");
	rd.cpu = 0;
	rd.flags = 1;
	CHECK(xioctl(fd, KINST_IOC_AGG_READ, &rd) == -EINVAL, "READ flags");
	memset(&cl, 0, sizeof(cl));
	cl._pad = 1;
	CHECK(xioctl(fd, KINST_IOC_AGG_CLEAR, &cl) == -EINVAL, "CLEAR pad");
	memset(&st, 0, sizeof(st));
	st.flags = 4;
	CHECK(xioctl(fd, KINST_IOC_AGG_STATS, &st) == -EINVAL, "STATS flags");
	memset(&rd, 0, sizeof(rd));
	CHECK(xioctl(fd, KINST_IOC_AGG_STACKS, &rd) == -EINVAL,
	    "STACKS without KINST_AGGF_STACK");
	for (i = 0; i < iters; i++) {
		rnd_fill(&rd, sizeof(rd));
		if (i % 2 == 0) {
			rd.cpu %= 4;
			rd.flags = 0;
		}
		r = xioctl(fd, KINST_IOC_AGG_READ, &rd);
		CHECK(r == 0 || r == -EINVAL || r == -EFAULT, "READ random: %d",
		    r);
		rnd_fill(&st, sizeof(st));
		st.flags = i % 2 ? st.flags : 0;
		r = xioctl(fd, KINST_IOC_AGG_STATS, &st);
		CHECK(r == 0 || r == -EINVAL || r == -EFAULT, "STATS random: %d",
		    r);
	}
	CHECK(xioctl(fd, KINST_IOC_AGG_CLEAR, &cl) == -EINVAL, "CLEAR pad");
	cl._pad = 0;
	CHECK(xioctl(fd, KINST_IOC_AGG_CLEAR, &cl) == 0, "CLEAR");

	/* A child's getpid(2)s, the only process counted. */
	agg_run_getpid_child(fd, calls);
	memset(&st, 0, sizeof(st));
	st.buf = (uint64_t)(uintptr_t)as;
	st.cap = KINST_STATS_MAXCPU;
	CHECK(xioctl(fd, KINST_IOC_AGG_STATS, &st) == 0, "STATS");
	memset(counts, 0, sizeof(counts));
	agg = 0;
	for (c = 0; c < st.ncpus && c < KINST_STATS_MAXCPU; c++) {
		memset(&rd, 0, sizeof(rd));
		rd.buf = (uint64_t)(uintptr_t)buf;
		rd.cap = su.nslots;
		rd.cpu = c;
		CHECK(xioctl(fd, KINST_IOC_AGG_READ, &rd) == 0, "READ cpu %u", c);
		for (j = 0; j < rd.count; j++) {
			struct kinst_agg_entry *e = (struct kinst_agg_entry *)
			    (buf + (size_t)j * su.entry_size);
			n = e->probe_id - first;
			CHECK(n < a.narmed && e->key[0] == 0 && e->key[1] == 0,
			    "entry probe %u key %llu", e->probe_id,
			    (unsigned long long)e->key[0]);
			if (n < a.narmed)
				counts[n] += e->count;
		}
		agg += as[c].aggregated;
		CHECK(as[c].overflow == 0 && as[c].nested == 0,
		    "cpu %u: overflow %llu nested %llu", c,
		    (unsigned long long)as[c].overflow,
		    (unsigned long long)as[c].nested);
	}
	/* Each instruction runs once per call, or never (a branch not taken). */
	bad = 0;
	sum = 0;
	for (j = 0; j < a.narmed; j++) {
		if (counts[j] != (uint64_t)calls && counts[j] != 0)
			bad++;
		sum += counts[j];
	}
	CHECK(bad == 0 && counts[0] == (uint64_t)calls, "%d of %u probes "
	    "counted neither 0 nor %ld calls (first: %llu)", bad, a.narmed,
	    calls, (unsigned long long)counts[0]);
	memset(&s, 0, sizeof(s));
	s.buf = (uint64_t)(uintptr_t)cs;
	s.cap = KINST_STATS_MAXCPU;
	CHECK(xioctl(fd, KINST_IOC_STATS, &s) == 0, "STATS");
	hits = delivered = 0;
	for (c = 0; c < s.ncpus && c < KINST_STATS_MAXCPU; c++) {
		hits += cs[c].hits;
		delivered += cs[c].delivered + cs[c].dropped;
	}
	CHECK(hits == agg && agg == sum && delivered == 0, "hits %llu aggregated %llu records %llu",
	    (unsigned long long)hits, (unsigned long long)agg,
	    (unsigned long long)delivered);
	CHECK(read(fd, buf, sizeof(buf)) < 0 && errno == EAGAIN,
	    "a record in the ring");
	/* CLEAR empties every CPU's table; the counters stay. */
	CHECK(xioctl(fd, KINST_IOC_AGG_CLEAR, &cl) == 0, "CLEAR");
	for (c = 0; c < st.ncpus && c < KINST_STATS_MAXCPU; c++) {
		memset(&rd, 0, sizeof(rd));
		rd.buf = (uint64_t)(uintptr_t)buf;
		rd.cap = su.nslots;
		rd.cpu = c;
		CHECK(xioctl(fd, KINST_IOC_AGG_READ, &rd) == 0 && rd.count == 0,
		    "READ after CLEAR cpu %u: %u", c, rd.count);
	}
	close(fd);
	agg_fuzz_stacks(iters, calls);
	printf("aggfuzz: %u probes x %ld calls counted in the kernel, "
	    "%d failures\n", a.narmed, calls, failures);
	return (failures != 0);
}

/*
 * Walk the sections of one record: the MEM/STR captures, by index, into
 * caps[] (NULL where absent).  Returns 0 if the sections do not add up.
 */
static int
rec_caps(const struct kinst_hit_record *rec, const struct kinst_rec_sec **secs,
    int ncaps)
{
	const uint8_t *p = (const uint8_t *)rec + sizeof(*rec);
	const uint8_t *end = (const uint8_t *)rec + rec->hdr.size;
	const struct kinst_rec_sec *sec;
	const struct kinst_rec_cap *cap;
	int i;

	for (i = 0; i < ncaps; i++)
		secs[i] = NULL;
	while (p + sizeof(*sec) <= end) {
		sec = (const void *)p;
		if (p + sizeof(*sec) + sec->len > end)
			return (0);
		if ((sec->type == KINST_SEC_MEM || sec->type == KINST_SEC_STR ||
		    sec->type == KINST_SEC_VAL) && sec->len >= sizeof(*cap)) {
			cap = (const void *)(sec + 1);
			if (cap->index < (uint32_t)ncaps &&
			    sizeof(*cap) + cap->size <= sec->len)
				secs[cap->index] = sec;
		}
		p += sizeof(*sec) + ((sec->len + 7u) & ~7u);
	}
	return (p == end);
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return (v);
}

/*
 * Memory captures in the records (ABI 1.7), the same program on both
 * kernels: at os.args_fn's second instruction, os.args_reg points at
 * write(2)'s arguments in kernel memory (FreeBSD: struct write_args in
 * the thread; Linux: the syscall's pt_regs on the kernel stack).  The
 * program captures them (kernel memory), loads the buffer pointer from
 * there and captures 32 bytes of the user buffer (user memory through a
 * kernel load), and captures 8 bytes at address 16 (unmapped: the section
 * must say it faulted).  COUNT write(2)s of a known pattern: every record
 * of this process has all three, right.
 */
static int
cmd_args(long count)
{
	static uint8_t rbuf[1 << 17];
	static uint8_t seen[3000];
	static char wbuf[4096];
	const struct kinst_pinsn code[] = {
		PI(KINST_OP_REG, os.args_reg, 0, 0),
		PI(KINST_OP_MEM, 0, 0, os.args_size),
		PI(KINST_OP_REG, os.args_reg, 0, 0),
		PI(KINST_OP_IMM, 0, 0, os.args_off[1]),
		PI(KINST_OP_ADD, 0, 0, 0),
		PI(KINST_OP_LOADC, 8, 0, 0),
		PI(KINST_OP_MEM, 0, 0, 32),
		PI(KINST_OP_IMM, 0, 0, 16),
		PI(KINST_OP_MEM, 0, 0, 8),
		PI(KINST_OP_IMM, 0, 0, 1),
		PI(KINST_OP_RET, 0, 0, 0),
	};
	const struct kinst_rec_sec *secs[3];
	const struct kinst_rec_cap *c0, *c1, *c2;
	const struct kinst_hit_record *rec;
	const uint8_t *b0;
	struct kinst_prog_load pl;
	struct kinst_arm a;
	struct kinst_disarm d;
	uint8_t text[65536];
	uint64_t addr, ours, good;
	uint32_t size, off;
	size_t len, i;
	ssize_t n, j;
	int fd, nul, r, bad;
	pid_t me = getpid();

	for (i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (char)(i * 7 + 3);
	if (!write_claims_reset(seen, sizeof(seen), count))
		return (1);
	fd = dev_open(O_NONBLOCK);
	record_self(fd);
	nul = open("/dev/null", O_WRONLY);
	CHECK(nul >= 0, "open /dev/null");
	r = prog_load(fd, code, sizeof(code) / sizeof(code[0]), &pl);
	CHECK(r == 0, "PROG_LOAD: %d verdict %u at %u", r, pl.verdict,
	    pl.error_pc);
	r = get_text(fd, os.args_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text %s: %d", os.args_fn, r);
	off = nth_insn(text, size, 1);
	memset(&a, 0, sizeof(a));
	snprintf(a.function, sizeof(a.function), "%s", os.args_fn);
	a.offset = off;
	a.flags = KINST_ARM_PROG;
	a.prog_id = pl.prog_id;
	r = xioctl(fd, KINST_IOC_ARM, &a);
	CHECK(r == 0, "arm %s+%#x with the program: %s", os.args_fn, off,
	    strerror(-r));
	if (r != 0)
		return (1);
	writes(nul, wbuf, count);
	d.probe_id = a.probe_id;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	ours = good = 0;
	while ((n = read(fd, rbuf, sizeof(rbuf))) > 0) {
		for (j = 0; j + (ssize_t)sizeof(*rec) <= n; j += rec->hdr.size) {
			rec = (const void *)(rbuf + j);
			if (rec->hdr.size < sizeof(*rec) || rec->hdr.size % 8 ||
			    j + (ssize_t)rec->hdr.size > n) {
				CHECK(0, "record size %u", rec->hdr.size);
				break;
			}
			if (rec->pid != me)
				continue;
			ours++;
			bad = !rec_caps(rec, secs, 3) || secs[0] == NULL ||
			    secs[1] == NULL || secs[2] == NULL;
			if (bad) {
				if (good + 3 > ours)
					printf("record %llu: sections missing\n",
					    (unsigned long long)ours);
				continue;
			}
			c0 = (const void *)(secs[0] + 1);
			c1 = (const void *)(secs[1] + 1);
			c2 = (const void *)(secs[2] + 1);
			b0 = (const uint8_t *)(c0 + 1);
			/* the length captured names the write: claimed
			 * once, whatever order the CPU rings gave */
			len = c0->size >= os.args_off[2] + 8 ?
			    (size_t)get_u64(b0 + os.args_off[2]) : 0;
			bad = secs[0]->type != KINST_SEC_MEM ||
			    secs[0]->flags != 0 || c0->size != os.args_size ||
			    c0->addr != rec->regs.gpr[os.args_reg] ||
			    (uint32_t)get_u64(b0 + os.args_off[0]) !=
			    (uint32_t)nul ||
			    get_u64(b0 + os.args_off[1]) != (uintptr_t)wbuf ||
			    write_claim(seen, count, len) < 0;
			bad |= (secs[1]->flags != 0 || c1->size != 32 ||
			    c1->addr != (uintptr_t)wbuf ||
			    memcmp(c1 + 1, wbuf, 32) != 0) << 1;
			bad |= ((secs[2]->flags & KINST_SECF_FAULT) == 0 ||
			    c2->size != 0 || c2->addr != 16) << 2;
			if (bad == 0)
				good++;
			else if (good + 3 > ours)
				printf("record %llu: capture mismatch %#x: args "
				    "at %#llx (reg %#llx) size %u flags %#x; "
				    "buffer at %#llx size %u flags %#x; "
				    "unmapped flags %#x size %u\n",
				    (unsigned long long)ours, bad,
				    (unsigned long long)c0->addr,
				    (unsigned long long)
				    rec->regs.gpr[os.args_reg], c0->size,
				    secs[0]->flags, (unsigned long long)c1->addr,
				    c1->size, secs[1]->flags, secs[2]->flags,
				    c2->size);
		}
	}
	CHECK(ours == (uint64_t)count && good == ours,
	    "records %llu, with the right captures %llu, want %ld",
	    (unsigned long long)ours, (unsigned long long)good, count);
	printf("args: %s+%#x: %llu records, %llu with write(2)'s arguments "
	    "captured from kernel memory, the user buffer, and a faulting "
	    "capture flagged; %d failures\n", os.args_fn, off,
	    (unsigned long long)ours, (unsigned long long)good, failures);
	close(fd);
	close(nul);
	return (failures != 0);
}

/*
 * Per-thread state (ABI 1.10): hostile TS_SETUP/TS_STATS arguments; then
 * the activation of a real function carried from one probe to another of
 * the same thread.  At os.args_fn's second instruction (the "entry") a
 * program pushes an activation framed by rsp with rdi and rsi saved; at
 * its third, one reads them back (VAL captures), reads the time since the
 * push and closes the activation, and looks up a wrong frame (rsp + 8).
 * The frame at the third instruction is rsp there plus the distance the
 * second one moved rsp, measured first from two plain records.  Every
 * record pair of this process: the values are the entry hit's registers,
 * the elapsed time positive and below a second, the wrong frame flagged
 * KINST_SECF_NOSTATE; TS_STATS counts exactly pushed == matched / 2 ==
 * closed == missed == calls.  A session without the table: the soft
 * lookups flag NOSTATE, nothing else changes.
 */
static void
ts_bad_args(void)
{
	struct kinst_ts_setup su;
	struct kinst_ts_stats st;
	int fd;

	fd = dev_open(O_NONBLOCK);
	memset(&st, 0xff, sizeof(st));
	CHECK(xioctl(fd, KINST_IOC_TS_STATS, &st) == 0 && st.nslots == 0 &&
	    st.pushed == 0, "TS_STATS before setup");
	memset(&su, 0, sizeof(su));
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == -EINVAL, "nthreads 0");
	su.nthreads = KINST_TS_MAX_THREADS + 1;
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == -EINVAL, "nthreads max");
	su.nthreads = 3;
	su.flags = KINST_TS_FLAGS + 1;	/* a flag no ABI defines */
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == -EINVAL, "flags");
	su.flags = 0x80000000u;
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == -EINVAL, "flags high");
	su.flags = 0;
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, (void *)8) == -EFAULT,
	    "TS_SETUP bad pointer");
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == 0 && su.nthreads == 4 &&
	    su.idle_ns == KINST_TS_IDLE_NS, "TS_SETUP: nthreads %u idle %llu",
	    su.nthreads, (unsigned long long)su.idle_ns);
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == -EEXIST, "second setup");
	CHECK(xioctl(fd, KINST_IOC_TS_STATS, &st) == 0 && st.nslots == 4 &&
	    st.pushed == 0 && st.used == 0, "TS_STATS fresh");
	CHECK(xioctl(fd, KINST_IOC_TS_STATS, (void *)8) == -EFAULT,
	    "TS_STATS bad pointer");
	close(fd);
	/* ABI 1.15: the per-CPU clock, accepted and said back in force. */
	fd = dev_open(O_NONBLOCK);
	memset(&su, 0, sizeof(su));
	su.nthreads = 3;
	su.flags = KINST_TS_LOCAL_CLOCK;
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == 0 && su.nthreads == 4 &&
	    su.flags == KINST_TS_LOCAL_CLOCK, "TS_SETUP KINST_TS_LOCAL_CLOCK: "
	    "nthreads %u flags %#x", su.nthreads, su.flags);
	close(fd);
}

/* Arm func+off with prog (0: none); the probe id, 0 on failure. */
static uint32_t
ts_arm(int fd, const char *func, uint32_t off, uint32_t prog)
{
	struct kinst_arm a;
	int r;

	memset(&a, 0, sizeof(a));
	snprintf(a.function, sizeof(a.function), "%s", func);
	a.offset = off;
	a.flags = KINST_ARM_NOOPT | (prog != 0 ? KINST_ARM_PROG : 0);
	a.prog_id = prog;
	r = xioctl(fd, KINST_IOC_ARM, &a);
	CHECK(r == 0, "arm %s+%#x: %s", func, off, strerror(-r));
	return (r == 0 ? a.probe_id : 0);
}

/* Read this process's records into recs (copies), in order; how many. */
static size_t
ts_read(int fd, uint8_t *buf, size_t cap, const struct kinst_hit_record **recs,
    size_t max)
{
	const struct kinst_hit_record *rec;
	size_t n = 0, used = 0;
	ssize_t got, j;
	uint8_t rbuf[1 << 16];

	while ((got = read(fd, rbuf, sizeof(rbuf))) > 0)
		for (j = 0; j + (ssize_t)sizeof(*rec) <= got;
		    j += rec->hdr.size) {
			rec = (const void *)(rbuf + j);
			if (rec->hdr.size < sizeof(*rec) || rec->hdr.size % 8 ||
			    j + (ssize_t)rec->hdr.size > got) {
				CHECK(0, "record size %u", rec->hdr.size);
				return (n);
			}
			if (rec->pid != getpid() || n == max ||
			    used + rec->hdr.size > cap)
				continue;
			memcpy(buf + used, rec, rec->hdr.size);
			recs[n++] = (const void *)(buf + used);
			used += rec->hdr.size;
		}
	return (n);
}

static void
ts_only_self(int fd)
{
	struct kinst_filter f = { .pid = getpid(), .cpu = -1,
	    .exclude_pid = -1 };

	CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == 0, "FILTER self");
}

/*
 * The reading probe's program, at an instruction whose rsp + delta is the
 * entry's rsp: the saved rsi, a lookup at a wrong frame (+ 8), then the
 * time since the push, closing it; each a VAL capture.  Its length.
 */
static uint32_t
ts_get_prog(struct kinst_pinsn *get, uint64_t tag, uint64_t delta)
{
	uint32_t k = 0;

	get[k++] = PI(KINST_OP_REG, KINST_RSP, 0, 0);
	get[k++] = PI(KINST_OP_IMM, 0, 0, delta);
	get[k++] = PI(KINST_OP_ADD, 0, 0, 0);
	get[k++] = PI(KINST_OP_TS_GET, KINST_TSF_SOFT | 1, 0, tag);
	get[k++] = PI(KINST_OP_VAL, 0, 0, 0);		/* saved rsi */
	get[k++] = PI(KINST_OP_REG, KINST_RSP, 0, 0);
	get[k++] = PI(KINST_OP_IMM, 0, 0, delta + 8);
	get[k++] = PI(KINST_OP_ADD, 0, 0, 0);
	get[k++] = PI(KINST_OP_TS_GET, KINST_TSF_SOFT | 0, 0, tag);
	get[k++] = PI(KINST_OP_VAL, 0, 0, 0);		/* wrong frame */
	get[k++] = PI(KINST_OP_REG, KINST_RSP, 0, 0);
	get[k++] = PI(KINST_OP_IMM, 0, 0, delta);
	get[k++] = PI(KINST_OP_ADD, 0, 0, 0);
	get[k++] = PI(KINST_OP_TS_GET, KINST_TSF_SOFT | KINST_TSF_CLOSE |
	    KINST_TS_ELAPSED, 0, tag);
	get[k++] = PI(KINST_OP_VAL, 0, 0, 0);		/* elapsed, closing */
	get[k++] = PI(KINST_OP_IMM, 0, 0, 1);
	get[k++] = PI(KINST_OP_RET, 0, 0, 0);
	return (k);
}

static int
cmd_tstate(long count)
{
	static uint8_t buf[1 << 20];
	static const struct kinst_hit_record *recs[8192];
	static char wbuf[256];
	const struct kinst_rec_sec *secs[3];
	const struct kinst_rec_cap *cap[3];
	const struct kinst_hit_record *e, *g;
	struct kinst_pinsn push[6], get[17];
	struct kinst_prog_load pl;
	struct kinst_ts_setup su;
	struct kinst_ts_stats st;
	struct kinst_disarm d;
	uint8_t text[65536];
	uint64_t addr, delta, tag, el;
	uint32_t size, off1, off2, id1, id2, pid1, pid2, ngets;
	size_t n, i, j, pairs, good, pgood;
	int fd, nul, k, bad;

	ts_bad_args();
	nul = open("/dev/null", O_WRONLY);
	CHECK(nul >= 0, "open /dev/null");
	fd = dev_open(O_NONBLOCK);
	ts_only_self(fd);
	CHECK(get_text(fd, os.args_fn, text, sizeof(text), &size, &addr) == 0,
	    "text %s", os.args_fn);
	off1 = nth_insn(text, size, 1);
	off2 = nth_insn(text, size, 2);
	/* How far the entry instruction moves rsp. */
	id1 = ts_arm(fd, os.args_fn, off1, 0);
	id2 = ts_arm(fd, os.args_fn, off2, 0);
	if (id1 == 0 || id2 == 0)
		return (1);
	(void)write(nul, wbuf, 1);
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	n = ts_read(fd, buf, sizeof(buf), recs, 8192);
	CHECK(n == 2 && recs[0]->probe_id == id1 && recs[1]->probe_id == id2,
	    "calibration: %zu records", n);
	if (n != 2)
		return (1);
	delta = recs[0]->regs.gpr[KINST_RSP] - recs[1]->regs.gpr[KINST_RSP];
	close(fd);

	fd = dev_open(O_NONBLOCK);
	ts_only_self(fd);
	memset(&su, 0, sizeof(su));
	su.nthreads = 64;
	CHECK(xioctl(fd, KINST_IOC_TS_SETUP, &su) == 0, "TS_SETUP");
	tag = addr + off1;
	k = 0;
	push[k++] = PI(KINST_OP_REG, KINST_RSP, 0, 0);
	push[k++] = PI(KINST_OP_REG, KINST_RDI, 0, 0);
	push[k++] = PI(KINST_OP_REG, KINST_RSI, 0, 0);
	push[k++] = PI(KINST_OP_TS_PUSH, 2, 0, tag);
	push[k++] = PI(KINST_OP_IMM, 0, 0, 1);
	push[k++] = PI(KINST_OP_RET, 0, 0, 0);
	CHECK(prog_load(fd, push, (uint32_t)k, &pl) == 0,
	    "PROG_LOAD push: verdict %u at %u", pl.verdict, pl.error_pc);
	pid1 = pl.prog_id;
	ngets = ts_get_prog(get, tag, delta);
	CHECK(prog_load(fd, get, ngets, &pl) == 0,
	    "PROG_LOAD get: verdict %u at %u", pl.verdict, pl.error_pc);
	pid2 = pl.prog_id;
	id1 = ts_arm(fd, os.args_fn, off1, pid1);
	id2 = ts_arm(fd, os.args_fn, off2, pid2);
	if (id1 == 0 || id2 == 0)
		return (1);
	for (i = 0; i < (size_t)count; i++)
		(void)write(nul, wbuf, 1 + i % 200);
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	CHECK(xioctl(fd, KINST_IOC_TS_STATS, &st) == 0, "TS_STATS");
	n = ts_read(fd, buf, sizeof(buf), recs, 8192);
	pairs = good = 0;
	for (i = 0; i < n; i++) {
		e = recs[i];
		if (e->probe_id != id1)
			continue;
		/*
		 * Its read-back: the next record of the same thread and CPU
		 * (one ring keeps its hits in order, but the rings come out
		 * one after another and a read(2) can end between two hits
		 * of one ring and the next begin with another ring), if it
		 * is the second probe's.
		 */
		g = NULL;
		for (j = i + 1; j < n && g == NULL; j++)
			if (recs[j]->tid == e->tid && recs[j]->cpu == e->cpu)
				g = recs[j];
		if (g == NULL || g->probe_id != id2)
			continue;
		pairs++;
		bad = !rec_caps(g, secs, 3) || secs[0] == NULL ||
		    secs[1] == NULL || secs[2] == NULL;
		if (!bad) {
			for (k = 0; k < 3; k++)
				cap[k] = (const void *)(secs[k] + 1);
			el = get_u64((const uint8_t *)(cap[2] + 1));
			bad = secs[0]->type != KINST_SEC_VAL ||
			    secs[0]->flags != 0 || cap[0]->size != 8 ||
			    get_u64((const uint8_t *)(cap[0] + 1)) !=
			    e->regs.gpr[KINST_RSI];
			bad |= (secs[1]->flags != KINST_SECF_NOSTATE ||
			    cap[1]->size != 0) << 1;
			bad |= (secs[2]->flags != 0 || cap[2]->size != 8 ||
			    el == 0 || el > 1000000000ull) << 2;
			if (bad && pairs <= good + 3)
				printf("pair %zu: mismatch %#x\n", pairs, bad);
		}
		if (!bad)
			good++;
	}
	CHECK(pairs == (size_t)count && good == pairs,
	    "pairs %zu, right %zu, want %ld", pairs, good, count);
	pgood = good;
	CHECK(st.pushed == (uint64_t)count && st.matched == 2 * st.pushed &&
	    st.closed == st.pushed && st.missed == st.pushed &&
	    st.superseded == 0 && st.nothread == 0 && st.busy == 0,
	    "TS_STATS: pushed %llu matched %llu closed %llu missed %llu "
	    "superseded %llu nothread %llu busy %llu",
	    (unsigned long long)st.pushed, (unsigned long long)st.matched,
	    (unsigned long long)st.closed, (unsigned long long)st.missed,
	    (unsigned long long)st.superseded, (unsigned long long)st.nothread,
	    (unsigned long long)st.busy);
	close(fd);

	/* No table: the soft lookups say so, the records are all there. */
	fd = dev_open(O_NONBLOCK);
	ts_only_self(fd);
	CHECK(prog_load(fd, get, ngets, &pl) == 0, "PROG_LOAD get");
	id2 = ts_arm(fd, os.args_fn, off2, pl.prog_id);
	for (i = 0; i < 10; i++)
		(void)write(nul, wbuf, 1);
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	n = ts_read(fd, buf, sizeof(buf), recs, 8192);
	for (i = good = 0; i < n; i++)
		if (rec_caps(recs[i], secs, 3) && secs[0] != NULL &&
		    secs[1] != NULL && secs[2] != NULL &&
		    secs[0]->flags == KINST_SECF_NOSTATE &&
		    secs[2]->flags == KINST_SECF_NOSTATE)
			good++;
	CHECK(n == 10 && good == 10, "no table: %zu records, %zu flagged", n,
	    good);
	close(fd);
	close(nul);
	printf("tstate: %s+%#x -> +%#x (rsp moved %lld): %zu calls, %zu "
	    "activations read back exactly, wrong frame missed, TS_STATS "
	    "exact; %d failures\n", os.args_fn, off1, off2, (long long)delta,
	    pairs, pgood, failures);
	return (failures != 0);
}

/* An indirect call through memory: ff /2 with a memory operand. */
static int
insn_is_mem_icall(const uint8_t *p, uint8_t len)
{
	uint8_t i = 0;

	/* Segment, notrack (3e) and REX prefixes. */
	while (i < len && (p[i] == 0x2e || p[i] == 0x3e || p[i] == 0x26 ||
	    p[i] == 0x36 || p[i] == 0x64 || p[i] == 0x65 ||
	    (p[i] & 0xf0) == 0x40))
		i++;
	return (i + 1 < len && p[i] == 0xff && ((p[i + 1] >> 3) & 7) == 2 &&
	    (p[i + 1] >> 6) != 3);
}

/* Sum of this file's dropped records (STATS). */
static uint64_t
stats_dropped(int fd)
{
	struct kinst_cpu_stats cs[KINST_STATS_MAXCPU];
	struct kinst_stats st;
	uint64_t drop = 0;
	uint32_t i;

	memset(&st, 0, sizeof(st));
	st.buf = (uintptr_t)cs;
	st.cap = KINST_STATS_MAXCPU;
	CHECK(xioctl(fd, KINST_IOC_STATS, &st) == 0, "STATS");
	for (i = 0; i < st.ncpus && i < KINST_STATS_MAXCPU; i++)
		drop += cs[i].dropped;
	return (drop);
}

/* Read what is there: hits of the first probe and of the indirect calls. */
static void
closecall_drain(int fd, uint64_t first, uint64_t func,
    const uint32_t *icall, uint32_t nicall, uint64_t *entry, uint64_t *ihits)
{
	static uint8_t rbuf[1 << 16];
	const struct kinst_hit_record *rec;
	ssize_t n, j;
	uint32_t i;

	while ((n = read(fd, rbuf, sizeof(rbuf))) > 0) {
		for (j = 0; j + (ssize_t)sizeof(*rec) <= n; j += rec->hdr.size) {
			rec = (const void *)(rbuf + j);
			if (rec->hdr.size < sizeof(*rec))
				break;
			/* The first probe: +0, or on Linux the
			   instruction after the ftrace site. */
			if (rec->addr == first)
				(*entry)++;
			for (i = 0; i < nicall; i++)
				if (rec->addr == func + icall[i])
					(*ihits)++;
		}
	}
}

/*
 * Every instruction of os.close_fn armed; COUNT opens and closes of
 * /dev/kinst (a second file; its close runs the module's destructor
 * through a function pointer in a heap object).  This process's records:
 * the first probe (the entry; on Linux the instruction after the ftrace
 * site) runs exactly COUNT times, and on FreeBSD the indirect calls
 * through memory (call *16(%rbx): cdpd_dtr, in a malloc(9) object of the
 * direct map) run COUNT times between them; their emulation must read
 * that object (issue 22, defect 1: it was refused, and the kernel
 * stopped in trap()).
 */
static int
cmd_closecall(long count)
{
	static uint8_t text[65536];
	static uint32_t icall[64];
	struct kinst_arm a;
	struct kinst_disarm d;
	uint64_t addr, entry, ihits;
	uint32_t size, off, nicall;
	uint8_t len;
	long k;
	int fd, fd2, r;

	fd = dev_open(O_NONBLOCK);
	record_only_self(fd);
	r = get_text(fd, os.close_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text %s: %d", os.close_fn, r);
	if (r != 0)
		return (1);
	nicall = 0;
	for (off = 0; off < size && off < sizeof(text); off += len) {
		len = kinst_insn_length(text + off, size - off);
		if (len == 0)
			break;
		if (insn_is_mem_icall(text + off, len) &&
		    nicall < sizeof(icall) / sizeof(icall[0]))
			icall[nicall++] = off;
	}
	r = do_arm(fd, os.close_fn, 0, KINST_ARM_ALL, &a);
	CHECK(r == 0 && a.narmed > 0, "arm all of %s: %s, %u armed, "
	    "%u refused", os.close_fn, strerror(-r), a.narmed, a.nrefused);
	if (r != 0)
		return (1);
	entry = ihits = 0;
	for (k = 0; k < count; k++) {
		fd2 = open(DEV, O_RDWR);
		CHECK(fd2 >= 0, "open %s: %s", DEV, strerror(errno));
		if (fd2 >= 0)
			close(fd2);
		/* Drain as we go: a close runs many instructions. */
		closecall_drain(fd, a.addr, addr, icall, nicall, &entry,
		    &ihits);
	}
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0 &&
	    d.ndisarmed == a.narmed, "disarm: %u of %u", d.ndisarmed,
	    a.narmed);
	closecall_drain(fd, a.addr, addr, icall, nicall, &entry, &ihits);
	CHECK(stats_dropped(fd) == 0, "records dropped: the counts are "
	    "not exact");
	CHECK(entry == (uint64_t)count, "%s entered %llu times, want %ld",
	    os.close_fn, (unsigned long long)entry, count);
#if DEVTEST_FREEBSD
	CHECK(nicall > 0 && ihits == (uint64_t)count,
	    "%u indirect calls through memory, run %llu times, want %ld",
	    nicall, (unsigned long long)ihits, count);
#endif
	printf("closecall: %s: %u probes, entry %llu times, %u indirect "
	    "calls through memory run %llu times; %d failures\n", os.close_fn,
	    a.narmed, (unsigned long long)entry, nicall,
	    (unsigned long long)ihits, failures);
	close(fd);
	return (failures != 0);
}

/* Ask the kernel to unload the module: 0 or an errno. */
static int
os_unload(void)
{
#if DEVTEST_FREEBSD
	int id = kldfind("kinsttrace.ko");

	if (id < 0)
		return (errno);
	return (kldunload(id) == 0 ? 0 : errno);
#else
	return (syscall(SYS_delete_module, "kinst", O_NONBLOCK) == 0 ? 0 :
	    errno);
#endif
}

/* Sum of this file's hits (LIST) and whether any probe has a jump now. */
static uint64_t
list_hits(int fd, int *jump)
{
	static struct kinst_probe_info pi[1024];
	struct kinst_list l;
	uint64_t sum = 0;
	uint32_t i;

	memset(&l, 0, sizeof(l));
	l.buf = (uintptr_t)pi;
	l.cap = sizeof(pi) / sizeof(pi[0]);
	CHECK(xioctl(fd, KINST_IOC_LIST, &l) == 0, "LIST");
	for (i = 0; i < l.count && i < l.cap; i++) {
		sum += pi[i].hits;
		if ((pi[i].treatment & KINST_PI_JUMP) != 0)
			*jump = 1;
	}
	return (sum);
}

/*
 * The module may not go while a probe is armed, and its device keeps
 * working after the refusal.  On FreeBSD, once jump-optimized probes were
 * used, it stays even with every file closed, and the device must open
 * again after that refusal (issue 22, defect 2).
 */
static int
cmd_unload(void)
{
	struct kinst_version v;
	struct kinst_arm a;
	struct kinst_disarm d;
	uint64_t h0, h1;
	int fd, r, jump = 0;
	long k, round;

	fd = dev_open(O_NONBLOCK);
	record_self(fd);
	r = do_arm(fd, os.getpid_fn, 0, KINST_ARM_ALL, &a);
	CHECK(r == 0 && a.narmed > 0, "arm all of %s: %s", os.getpid_fn,
	    strerror(-r));
	if (r != 0)
		return (1);
	/* Up to about 5 s of calls for the optimizer to put a jump in. */
	for (round = 0; round < 50 && !jump; round++) {
		for (k = 0; k < 1000; k++)
			(void)syscall(SYS_getpid);
		(void)list_hits(fd, &jump);
		usleep(100000);
	}
	printf("unload: %u probes armed, %s jump-optimized\n", a.narmed,
	    jump ? "some" : "none");
	r = os_unload();
	CHECK(r == EBUSY || r == EWOULDBLOCK, "unload while armed: %s",
	    r == 0 ? "it unloaded" : strerror(r));
	if (r == 0)
		return (1);
	printf("unload refused while armed: %s\n", strerror(r));
	h0 = list_hits(fd, &jump);
	for (k = 0; k < 100; k++)
		(void)syscall(SYS_getpid);
	h1 = list_hits(fd, &jump);
	CHECK(h1 >= h0 + 100, "hits after the refusal: %llu -> %llu",
	    (unsigned long long)h0, (unsigned long long)h1);
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0 &&
	    d.ndisarmed == a.narmed, "disarm");
	close(fd);
#if DEVTEST_FREEBSD
	CHECK(jump, "no probe of %s was jump-optimized: the refusal after "
	    "jumps is not checked", os.getpid_fn);
	r = os_unload();
	CHECK(r == EBUSY, "unload after jumps, no file open: %s",
	    r == 0 ? "it unloaded" : strerror(r));
	if (r == 0)
		return (1);
	printf("unload refused after jumps: %s\n", strerror(r));
	fd = open(DEV, O_RDWR);
	CHECK(fd >= 0, "open after the refused unload: %s", strerror(errno));
	if (fd >= 0) {
		CHECK(xioctl(fd, KINST_IOC_VERSION, &v) == 0, "VERSION");
		r = do_arm(fd, os.getpid_fn, 0, 0, &a);
		CHECK(r == 0, "arm after the refused unload: %s",
		    strerror(-r));
		close(fd);
		printf("device reopened after the refused unload\n");
	}
#else
	(void)v;
#endif
	printf("unload: %d failures\n", failures);
	return (failures != 0);
}

/*
 * Reads the non-blocking fd until it is empty and returns how many of its
 * records are this process's (pid me) and, unless probe_id is
 * KINST_ALL_PROBES, of that probe.
 */
static uint64_t
drain_own(int fd, pid_t me, uint32_t probe_id)
{
	static uint8_t rbuf[1 << 16];
	const struct kinst_hit_record *rec;
	uint64_t ours = 0;
	ssize_t n, j;

	while ((n = read(fd, rbuf, sizeof(rbuf))) > 0)
		for (j = 0; j + (ssize_t)sizeof(*rec) <= n; j += rec->hdr.size) {
			rec = (const void *)(rbuf + j);
			if (rec->hdr.size < sizeof(*rec))
				break;
			ours += rec->pid == me && (probe_id == KINST_ALL_PROBES ||
			    rec->probe_id == probe_id);
		}
	return (ours);
}

/*
 * FreeBSD: DTrace must not load under kinst (it would take the #BP hook
 * and dtrace_trap_func from armed probes): kldload(module) with a probe
 * armed is refused with EEXIST, and the probe keeps recording.
 */
static int
cmd_dtrace(const char *module)
{
#if DEVTEST_FREEBSD
	uint8_t text[65536];
	struct kinst_arm a;
	struct kinst_disarm d;
	uint64_t addr, ours;
	uint32_t size, off;
	int fd, r, id;
	long k;
	pid_t me = getpid();

	fd = dev_open(O_NONBLOCK);
	record_self(fd);
	r = get_text(fd, os.getpid_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "text: %d", r);
	off = nth_insn(text, size, 1);
	r = do_arm(fd, os.getpid_fn, off, KINST_ARM_NOOPT, &a);
	CHECK(r == 0, "arm: %s", strerror(-r));
	if (r != 0)
		return (1);
	id = kldload(module);
	CHECK(id < 0 && errno == EEXIST, "kldload %s: %s", module,
	    id >= 0 ? "it loaded" : strerror(errno));
	if (id >= 0)
		printf("dtrace: %s LOADED under kinst (file id %d)\n", module,
		    id);
	else
		printf("dtrace: kldload %s refused: %s\n", module,
		    strerror(errno));
	for (k = 0; k < 100; k++)
		(void)syscall(SYS_getpid);
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	ours = drain_own(fd, me, KINST_ALL_PROBES);
	CHECK(ours == 100, "records after the refused load: %llu, want 100",
	    (unsigned long long)ours);
	close(fd);
	printf("dtrace: %d failures\n", failures);
	return (failures != 0);
#else
	(void)module;
	printf("dtrace: FreeBSD only (Linux has no DTrace hooks to take)\n");
	return (2);
#endif
}

/*
 * fd, opened by a privileged opener that has since dropped its privileges,
 * still works: VERSION, and getpid's second instruction armed, hit count
 * times by this process, disarmed, and exactly count records of this
 * process read back.  fd is non-blocking.
 */
static void
priv_file_works(int fd, const char *who, long count)
{
	struct kinst_version v;
	struct kinst_arm a;
	struct kinst_disarm d;
	uint8_t text[65536];
	uint64_t addr, ours;
	uint32_t size, off;
	long k;
	int r;
	pid_t me = getpid();

	memset(&v, 0, sizeof(v));
	r = xioctl(fd, KINST_IOC_VERSION, &v);
	CHECK(r == 0 && v.abi_version == KINST_ABI_VERSION,
	    "%s: VERSION: %s, abi %#x", who, strerror(-r), v.abi_version);
	record_self(fd);
	r = get_text(fd, os.getpid_fn, text, sizeof(text), &size, &addr);
	CHECK(r == 0, "%s: TEXT %s: %s", who, os.getpid_fn, strerror(-r));
	if (r != 0)
		return;
	off = nth_insn(text, size, 1);
	r = do_arm(fd, os.getpid_fn, off, KINST_ARM_NOOPT, &a);
	CHECK(r == 0 && a.narmed == 1, "%s: ARM %s+%#x: %s", who,
	    os.getpid_fn, off, strerror(-r));
	if (r != 0)
		return;
	for (k = 0; k < count; k++)
		(void)syscall(SYS_getpid);
	d.probe_id = a.probe_id;
	r = xioctl(fd, KINST_IOC_DISARM, &d);
	CHECK(r == 0, "%s: DISARM: %s", who, strerror(-r));
	ours = drain_own(fd, me, a.probe_id);
	CHECK(ours == (uint64_t)count, "%s: %llu records of %ld calls", who,
	    (unsigned long long)ours, count);
	printf("priv: %s: VERSION, ARM %s+%#x, %llu of %ld calls recorded\n",
	    who, os.getpid_fn, off, (unsigned long long)ours, count);
}

/* Become uid and gid 65534 (nobody), no supplementary groups. */
static int
priv_become_nobody(void)
{
	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
	    setuid(65534) != 0)
		return (-errno);
	return (getuid() == 65534 && geteuid() == 65534 ? 0 : -EPERM);
}

/* open(2) of the device: 0 (and the file closed) or -errno. */
static int
priv_try_open(void)
{
	int fd;

	fd = open(DEV, O_RDWR);
	if (fd < 0)
		return (-errno);
	close(fd);
	return (0);
}

#if !DEVTEST_FREEBSD
#ifndef CAP_PERFMON
#define	CAP_PERFMON	38
#endif
#define	CAPBIT(c)	(1ull << (c))

/*
 * Drop the capabilities of mask (CAPBIT()s) from this process's bounding
 * set (prctl(2)) and its effective, permitted and inheritable sets
 * (capset(2); the ambient set follows), by the raw system calls.  0 or
 * -errno.
 */
static int
caps_drop(uint64_t mask)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct c[2];
	uint32_t keep;
	int cap, i;

	for (cap = 0; cap < 64; cap++)
		if ((mask & CAPBIT(cap)) != 0 &&
		    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
			return (-errno);
	memset(&h, 0, sizeof(h));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &h, c) != 0)
		return (-errno);
	for (i = 0; i < 2; i++) {
		keep = ~(uint32_t)(mask >> (32 * i));
		c[i].effective &= keep;
		c[i].permitted &= keep;
		c[i].inheritable &= keep;
	}
	if (syscall(SYS_capset, &h, c) != 0)
		return (-errno);
	return (0);
}

/*
 * The capabilities of mask this process has in its effective or permitted
 * set, or (bounding) in its bounding set.
 */
static uint64_t
caps_have(uint64_t mask, int bounding)
{
	struct __user_cap_header_struct h;
	struct __user_cap_data_struct c[2];
	uint64_t have = 0;
	int cap;

	memset(&h, 0, sizeof(h));
	h.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &h, c) != 0)
		return (mask);
	for (cap = 0; cap < 64; cap++)
		if ((mask & CAPBIT(cap)) != 0 &&
		    (((c[cap / 32].effective | c[cap / 32].permitted) >>
		    (cap % 32) & 1) != 0 ||
		    (bounding && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 0)))
			have |= CAPBIT(cap);
	return (have);
}

/* uid 0 without the capabilities of drop: open gives want (0 or -errno). */
static void
priv_caps_open(uint64_t drop, int want, const char *who)
{
	int r;

	r = caps_drop(drop);
	CHECK(r == 0, "%s: dropping the capabilities: %s", who, strerror(-r));
	CHECK(getuid() == 0 && geteuid() == 0 && caps_have(drop, 1) == 0,
	    "%s: uid %d euid %d, capabilities %#llx left", who, (int)getuid(),
	    (int)geteuid(), (unsigned long long)caps_have(drop, 1));
	r = priv_try_open();
	CHECK(r == want, "%s: open: %s, want %s", who,
	    r == 0 ? "opened" : strerror(-r), want == 0 ? "opened" :
	    strerror(-want));
	printf("priv: uid 0 %s: open %s\n", who,
	    r == 0 ? "succeeds" : strerror(-r));
}
#endif

/* Run fn(count) in a child process; its CHECKs decide its exit status. */
static void
priv_child(const char *what, void (*fn)(long), long count)
{
	pid_t pid;
	int st = -1;

	pid = fork();
	if (pid == 0) {
		failures = 0;	/* only this child's */
		fn(count);
		exit(failures != 0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0, "%s: child failed (status %#x)", what, st);
}

static void
priv_nobody(long count)
{
	int r;

	(void)count;
	r = priv_become_nobody();
	CHECK(r == 0, "setuid(65534): %s", strerror(-r));
	r = priv_try_open();
	CHECK(r == -EACCES, "uid 65534: open: %s, want %s",
	    r == 0 ? "opened" : strerror(-r), strerror(EACCES));
	printf("priv: uid 65534: open %s (the node's mode)\n",
	    r == 0 ? "succeeds" : strerror(-r));
}

#if !DEVTEST_FREEBSD
static void
priv_sysadmin_only(long count)
{
	(void)count;
	priv_caps_open(CAPBIT(CAP_PERFMON), 0,
	    "with CAP_SYS_ADMIN, without CAP_PERFMON");
}

static void
priv_perfmon_only(long count)
{
	(void)count;
	priv_caps_open(CAPBIT(CAP_SYS_ADMIN), 0,
	    "with CAP_PERFMON, without CAP_SYS_ADMIN");
}

/* Refused without both; a file opened before the drop keeps working. */
static void
priv_nocaps(long count)
{
	int fd;

	fd = dev_open(O_NONBLOCK);
	priv_caps_open(CAPBIT(CAP_SYS_ADMIN) | CAPBIT(CAP_PERFMON), -EPERM,
	    "without CAP_SYS_ADMIN and CAP_PERFMON");
	priv_file_works(fd, "opened before dropping both capabilities",
	    count);
	close(fd);
}
#endif

/* Root opens, then becomes nobody: the file keeps working. */
static void
priv_setuid(long count)
{
	int fd, r;

	fd = dev_open(O_NONBLOCK);
	r = priv_become_nobody();
	CHECK(r == 0, "setuid(65534): %s", strerror(-r));
	r = priv_try_open();
	CHECK(r == -EACCES, "uid 65534 after setuid: open: %s",
	    r == 0 ? "opened" : strerror(-r));
#if !DEVTEST_FREEBSD
	/* Leaving uid 0 cleared the effective and permitted sets. */
	CHECK(caps_have(CAPBIT(CAP_SYS_ADMIN) | CAPBIT(CAP_PERFMON), 0) == 0,
	    "capabilities left after setuid(65534)");
#endif
	priv_file_works(fd, "opened by root before setuid(65534)", count);
	close(fd);
}

static int
cmd_priv(long count)
{
	if (getuid() != 0 || geteuid() != 0) {
		printf("priv: must run as root\n");
		return (2);
	}
	priv_child("uid 65534", priv_nobody, count);
#if DEVTEST_FREEBSD
	/*
	 * Root has every privilege and another uid stops at the node's
	 * mode: a refusal by the module itself needs a jail.
	 */
	printf("priv: FreeBSD: no refusal by the module tried (it needs a "
	    "jail)\n");
#else
	priv_child("CAP_SYS_ADMIN alone", priv_sysadmin_only, count);
	priv_child("CAP_PERFMON alone", priv_perfmon_only, count);
	priv_child("neither capability", priv_nocaps, count);
#endif
	priv_child("setuid", priv_setuid, count);
	printf("priv: %d failures\n", failures);
	return (failures != 0);
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "fuzz") == 0)
		return (cmd_fuzz(argc > 2 ? atol(argv[2]) : 10000));
	if (argc >= 4 && strcmp(argv[1], "cycle") == 0)
		return (cmd_cycle(argv[2], atol(argv[3])));
	if (argc >= 3 && strcmp(argv[1], "text") == 0)
		return (cmd_text(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "hold") == 0)
		return (cmd_hold(argv[2], argc > 3));
	if (argc >= 2 && strcmp(argv[1], "mmap") == 0)
		return (cmd_mmap(argc > 2 ? atol(argv[2]) : 200000));
	if (argc >= 2 && strcmp(argv[1], "drops") == 0)
		return (cmd_drops(argc > 2 ? atol(argv[2]) : 5000));
	if (argc >= 2 && strcmp(argv[1], "regs") == 0)
		return (cmd_regs(argc > 2 ? atol(argv[2]) : 500));
	if (argc >= 2 && strcmp(argv[1], "bench") == 0)
		return (cmd_bench(argc > 2 ? atol(argv[2]) : 100000));
	if (argc >= 2 && strcmp(argv[1], "refuse") == 0)
		return (cmd_refuse());
	if (argc >= 4 && strcmp(argv[1], "flip") == 0)
		return (cmd_flip(argv[2], atol(argv[3])));
	if (argc >= 3 && strcmp(argv[1], "spin") == 0)
		return (cmd_spin(atol(argv[2])));
	if (argc >= 2 && strcmp(argv[1], "progfuzz") == 0)
		return (cmd_progfuzz(argc > 2 ? atol(argv[2]) : 2000));
	if (argc >= 2 && strcmp(argv[1], "aggfuzz") == 0)
		return (cmd_aggfuzz(argc > 2 ? atol(argv[2]) : 2000, 1000));
	if (argc >= 2 && strcmp(argv[1], "args") == 0)
		return (cmd_args(argc > 2 ? atol(argv[2]) : 500));
	if (argc >= 2 && strcmp(argv[1], "closecall") == 0)
		return (cmd_closecall(argc > 2 ? atol(argv[2]) : 100));
	if (argc >= 2 && strcmp(argv[1], "tstate") == 0)
		return (cmd_tstate(argc > 2 ? atol(argv[2]) : 500));
	if (argc >= 2 && strcmp(argv[1], "unload") == 0)
		return (cmd_unload());
	if (argc >= 3 && strcmp(argv[1], "dtrace") == 0)
		return (cmd_dtrace(argv[2]));
	if (argc >= 2 && strcmp(argv[1], "priv") == 0)
		return (cmd_priv(argc > 2 ? atol(argv[2]) : 100));
	if (argc >= 2 && strcmp(argv[1], "os") == 0) {
		printf("%s\n", os.name);
		return (0);
	}
	fprintf(stderr, "usage: kinst_devtest fuzz [N] | cycle FUNC COUNT | "
	    "text FUNC | hold FUNC [all] | refuse | flip FUNC ROUNDS | spin SECONDS | "
	    "progfuzz [N] | aggfuzz [N] | args [N] | closecall [N] | tstate [N] | unload | "
	    "dtrace MODULE | priv [N] | os\n");
	return (2);
}
