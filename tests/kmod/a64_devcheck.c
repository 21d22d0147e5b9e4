/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * a64_devcheck: kinst.ko on arm64, through /dev/kinst alone (no kinstctl),
 * inside the arm64 guest (issue 44).  Each subcommand prints what it
 * checked and exits 0 only if every check held.
 *
 *   a64_devcheck cycle FUNC COUNT
 *	arm FUNC's second instruction (or the first traceable one after
 *	it), call getpid COUNT times, read the records: exactly COUNT of
 *	this thread's, at that address, with pc == the address and a kernel
 *	sp; TEXT shows the original words while armed and after the disarm;
 *	no record after the disarm.
 *   a64_devcheck regs COUNT
 *	write(2) COUNT times with known arguments; the records at ksys_write's
 *	first traceable instruction among its first four show them in x0,
 *	x1, x2 (fd, buf, count: AAPCS64's argument registers).
 *   a64_devcheck stack FUNC OFF CALLER COUNT
 *	FUNC+OFF armed with stacks (KINST_ARM_STACK), getpid COUNT times:
 *	every record of this process has a stack whose frame 0 is the probe
 *	and whose frame 1 lies in CALLER (the frame-record walk, PAC codes
 *	stripped; at offset 0 the caller is still in x30).
 *   a64_devcheck exclusive FUNC...
 *	in each FUNC, the first load-exclusive and the instruction after it
 *	are refused (exclusive-monitor): the second only by the shim's scan.
 *   a64_devcheck shared COUNT
 *	two sessions arm getpid's probe: each gets exactly COUNT records.
 *   a64_devcheck masks COUNT
 *	getpid's first traceable instruction (out of line) and the next:
 *	every record of both shows IRQ and FIQ unmasked (the trampoline's
 *	brk gave back the masks it took), COUNT records each.
 *   a64_devcheck pred COUNT
 *	a probe program at ksys_write: records only write(2)s to one
 *	descriptor (x0), each with 9 bytes of its user buffer (x1)
 *	captured; COUNT writes there and COUNT elsewhere.
 *   a64_devcheck loop N, a64_devcheck armloop FUNC OFF N
 *	figures only (tests/bench/guest_a64_hit_rate.sh): ns per getpid(2),
 *	bare, or with FUNC+OFF armed (records read after).
 *   a64_devcheck text FUNC
 *	FUNC's live text, as hex words (kinst's brks hidden).
 *   a64_devcheck hold FUNC
 *	arm every instruction of FUNC it can, print "armed N", then wait
 *	for a signal (kill -9, and the unload checks).
 *   a64_devcheck all FUNC COUNT
 *	arm every instruction of FUNC kinst accepts, run COUNT rounds of a
 *	load that calls it (getpid, a read of /proc/self/stat, a stat(2)),
 *	check the load's results are right while armed, that the function's
 *	instructions were hit, then disarm: the text is as before.
 */

#define _GNU_SOURCE	/* sched_setaffinity */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kinst_abi.h"
#include "kinst_verdict.h"

#define	DEV	"/dev/kinst"
#define	TEXT_MAX 65536

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
xioctl(int fd, unsigned long cmd, void *arg)
{
	return (ioctl(fd, cmd, arg) == 0 ? 0 : -errno);
}

static int
dev_open(void)
{
	struct kinst_filter f = { .pid = -1, .cpu = -1, .exclude_pid = -1 };
	int fd;

	fd = open(DEV, O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		perror(DEV);
		exit(2);
	}
	/* Record this process's own hits too. */
	CHECK(xioctl(fd, KINST_IOC_FILTER, &f) == 0, "FILTER");
	return (fd);
}

static int
get_text(int fd, const char *func, uint8_t *buf, uint32_t *size,
    uint64_t *addr)
{
	struct kinst_text t;
	int r;

	memset(&t, 0, sizeof(t));
	snprintf(t.function, sizeof(t.function), "%s", func);
	t.buf = (uintptr_t)buf;
	t.cap = TEXT_MAX;
	r = xioctl(fd, KINST_IOC_TEXT, &t);
	*size = t.size;
	*addr = t.addr;
	return (r);
}

/* Arm func+off (flags), 0 or -errno. */
static int
do_arm(int fd, const char *func, uint32_t off, uint32_t flags,
    struct kinst_arm *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->function, sizeof(a->function), "%s", func);
	a->offset = off;
	a->flags = flags;
	return (xioctl(fd, KINST_IOC_ARM, a));
}

/* The first offset in [from, to] (words) that arms; UINT32_MAX if none. */
static uint32_t
arm_first(int fd, const char *func, uint32_t from, uint32_t to,
    struct kinst_arm *a)
{
	uint32_t off;
	int r;

	for (off = from; off <= to; off += 4) {
		r = do_arm(fd, func, off, 0, a);
		if (r == 0)
			return (off);
		printf("%s+%#x refused: %s (reason %u)\n", func, off,
		    strerror(-r), a->refuse_reason);
	}
	return (UINT32_MAX);
}

/* Every record in the ring, to fn; the number of records. */
static uint64_t
drain(int fd, void (*fn)(const struct kinst_hit_record *, void *), void *arg)
{
	static uint8_t buf[1 << 16];
	const struct kinst_rec_hdr *h;
	uint64_t n = 0;
	ssize_t got, j;

	for (;;) {
		got = read(fd, buf, sizeof(buf));
		if (got < 0) {
			CHECK(errno == EAGAIN, "read: %s", strerror(errno));
			return (n);
		}
		for (j = 0; j + (ssize_t)sizeof(*h) <= got; j += h->size) {
			h = (const void *)(buf + j);
			if (h->size < sizeof(*h) || j + h->size > got) {
				CHECK(0, "record size %u at %zd of %zd",
				    h->size, j, got);
				return (n);
			}
			if (h->type == KINST_REC_HIT) {
				fn((const void *)h, arg);
				n++;
			}
		}
	}
}

struct cycle_ctx {
	uint64_t	addr;
	int32_t		pid, tid;
	uint64_t	ours;
	const void	*buf;		/* regs: write(2)'s buffer */
	int		fd;		/* regs: its descriptor */
	uint64_t	by_len[8];	/* regs: records per length x2, 1..7 */
};

static void
cycle_rec(const struct kinst_hit_record *r, void *arg)
{
	struct cycle_ctx *c = arg;

	CHECK(r->addr == c->addr && r->regs.pc == c->addr,
	    "record addr %#llx pc %#llx", (unsigned long long)r->addr,
	    (unsigned long long)r->regs.pc);
	if (r->pid != c->pid)
		return;
	c->ours++;
	CHECK(r->tid == c->tid, "tid %d want %d", r->tid, c->tid);
	/* A kernel stack pointer, EL1h in pstate's mode bits. */
	CHECK((r->regs.sp >> 48) == 0xffff && (r->regs.pstate & 0xf) == 0x5,
	    "sp %#llx pstate %#llx", (unsigned long long)r->regs.sp,
	    (unsigned long long)r->regs.pstate);
}

static int
cmd_cycle(const char *func, long count)
{
	static uint8_t text[TEXT_MAX], text2[TEXT_MAX];
	struct cycle_ctx c = { 0 };
	struct kinst_disarm d;
	struct kinst_arm a;
	uint32_t size, size2, off;
	uint64_t addr, addr2;
	long k;
	int fd, r;

	fd = dev_open();
	r = get_text(fd, func, text, &size, &addr);
	CHECK(r == 0 && size >= 8, "text %s: %d", func, r);
	if (r != 0)
		return (1);
	off = arm_first(fd, func, 4, 32, &a);
	CHECK(off != UINT32_MAX, "nothing in %s+4..+32 arms", func);
	if (off == UINT32_MAX)
		return (1);
	CHECK(a.narmed == 1 && a.addr == addr + off && a.insn_len == 4 &&
	    memcmp(a.insn, text + off, 4) == 0, "arm result");
	printf("armed %s+%#x addr %#llx insn %02x%02x%02x%02x\n", func, off,
	    (unsigned long long)a.addr, a.insn[3], a.insn[2], a.insn[1],
	    a.insn[0]);
	r = get_text(fd, func, text2, &size2, &addr2);
	CHECK(r == 0 && size2 == size && memcmp(text, text2, size) == 0,
	    "TEXT while armed differs");
	for (k = 0; k < count; k++)
		(void)syscall(SYS_getpid);
	d.probe_id = a.probe_id;
	r = xioctl(fd, KINST_IOC_DISARM, &d);
	CHECK(r == 0 && d.ndisarmed == 1, "disarm: %d", r);
	c.addr = a.addr;
	c.pid = getpid();
	c.tid = (int32_t)syscall(SYS_gettid);
	(void)drain(fd, cycle_rec, &c);
	CHECK(c.ours == (uint64_t)count, "records of this pid %llu, want %ld",
	    (unsigned long long)c.ours, count);
	r = get_text(fd, func, text2, &size2, &addr2);
	CHECK(r == 0 && memcmp(text, text2, size) == 0, "TEXT after disarm");
	for (k = 0; k < 100; k++)
		(void)syscall(SYS_getpid);
	CHECK(drain(fd, cycle_rec, &c) == 0, "records after disarm");
	printf("cycle %s: %llu records of ours, %d failures\n", func,
	    (unsigned long long)c.ours, failures);
	close(fd);
	return (failures != 0);
}

static void
regs_rec(const struct kinst_hit_record *r, void *arg)
{
	struct cycle_ctx *c = arg;

	if (r->pid != c->pid || r->tid != c->tid)
		return;
	/*
	 * Which write a record is comes from its length, counted per length
	 * (cmd_regs compares the counts): read(2) drains one CPU's ring,
	 * then the next, so a writer the scheduler moved has its records
	 * out of order.
	 */
	CHECK(r->regs.x[0] == (uint64_t)c->fd &&
	    r->regs.x[1] == (uint64_t)(uintptr_t)c->buf &&
	    r->regs.x[2] >= 1 && r->regs.x[2] <= 7,
	    "write #%llu: x0 %#llx x1 %#llx x2 %#llx, want %d %p and 1 to 7",
	    (unsigned long long)c->ours, (unsigned long long)r->regs.x[0],
	    (unsigned long long)r->regs.x[1], (unsigned long long)r->regs.x[2],
	    c->fd, c->buf);
	if (r->regs.x[2] >= 1 && r->regs.x[2] <= 7)
		c->by_len[r->regs.x[2]]++;
	c->ours++;
}

static int
cmd_regs(long count)
{
	static const char msg[] = "kinst-a64";
	struct cycle_ctx c = { 0 };
	struct kinst_disarm d;
	struct kinst_arm a;
	uint32_t off;
	long k, ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t all, one;
	int fd, out, pinned;

	fd = dev_open();
	out = open("/dev/null", O_WRONLY);
	CHECK(out >= 0, "/dev/null");
	off = arm_first(fd, "ksys_write", 0, 12, &a);
	CHECK(off != UINT32_MAX, "nothing in ksys_write+0..+12 arms");
	if (off == UINT32_MAX)
		return (1);
	/*
	 * Nothing printed while armed: stdout's writes would be recorded.
	 * The first half on the last CPU, the second on CPU 0: the records
	 * come out of the writes' order every run (regs_rec).
	 */
	pinned = ncpu > 1 && ncpu <= CPU_SETSIZE &&
	    sched_getaffinity(0, sizeof(all), &all) == 0;
	for (k = 0; k < count; k++) {
		if (pinned && (k == 0 || k == count / 2)) {
			CPU_ZERO(&one);
			CPU_SET(k == 0 ? (int)ncpu - 1 : 0, &one);
			(void)sched_setaffinity(0, sizeof(one), &one);
		}
		CHECK(write(out, msg, 1 + k % 7) == 1 + k % 7, "write");
	}
	if (pinned)
		(void)sched_setaffinity(0, sizeof(all), &all);
	d.probe_id = a.probe_id;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	printf("armed ksys_write+%#x insn %02x%02x%02x%02x\n", off, a.insn[3],
	    a.insn[2], a.insn[1], a.insn[0]);
	c.pid = getpid();
	c.tid = (int32_t)syscall(SYS_gettid);
	c.fd = out;
	c.buf = msg;
	(void)drain(fd, regs_rec, &c);
	CHECK(c.ours == (uint64_t)count, "records %llu, want %ld",
	    (unsigned long long)c.ours, count);
	for (k = 1; k <= 7; k++)
		CHECK(c.by_len[k] == (uint64_t)(count / 7 +
		    (count % 7 >= k ? 1 : 0)), "records with x2 %ld: %llu, "
		    "want %ld", k, (unsigned long long)c.by_len[k],
		    count / 7 + (count % 7 >= k ? 1 : 0));
	printf("regs: %llu writes seen in x0-x2, %d failures\n",
	    (unsigned long long)c.ours, failures);
	return (failures != 0);
}

static void
count_rec(const struct kinst_hit_record *r, void *arg)
{
	(void)r;
	(*(uint64_t *)arg)++;
}

/* One round of the load; its results checked. */
static void
load_round(long k)
{
	char buf[512];
	struct stat st;
	ssize_t n;
	int fd;

	CHECK(syscall(SYS_getpid) == getpid(), "getpid");
	fd = open("/proc/self/stat", O_RDONLY);
	CHECK(fd >= 0, "open /proc/self/stat");
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		CHECK(n > 0 && atol(buf) == getpid(), "read /proc/self/stat: %zd",
		    n);
		close(fd);
	}
	CHECK(stat("/init", &st) == 0 && S_ISREG(st.st_mode), "stat /init");
	(void)k;
}

static int
cmd_all(const char *func, long count)
{
	static uint8_t text[TEXT_MAX], text2[TEXT_MAX];
	struct kinst_disarm d;
	struct kinst_arm a;
	uint64_t addr, addr2, n;
	uint32_t size, size2;
	long k;
	int fd, r;

	fd = dev_open();
	r = get_text(fd, func, text, &size, &addr);
	CHECK(r == 0, "text %s: %d", func, r);
	r = do_arm(fd, func, 0, KINST_ARM_ALL, &a);
	CHECK(r == 0 && a.narmed > 0, "arm all %s: %d (%s)", func, r,
	    strerror(-r));
	if (r != 0)
		return (1);
	printf("all %s: %u of %u instructions armed, %u refused\n", func,
	    a.narmed, size / 4, a.nrefused);
	for (k = 0; k < count; k++)
		load_round(k);
	d.probe_id = KINST_ALL_PROBES;
	r = xioctl(fd, KINST_IOC_DISARM, &d);
	CHECK(r == 0 && d.ndisarmed == a.narmed, "disarm: %d, %u of %u", r,
	    d.ndisarmed, a.narmed);
	n = 0;
	(void)drain(fd, count_rec, &n);
	CHECK(n > 0, "no record");
	r = get_text(fd, func, text2, &size2, &addr2);
	CHECK(r == 0 && size2 == size && memcmp(text, text2, size) == 0,
	    "TEXT after disarm differs");
	printf("all %s: %llu records, %d failures\n", func,
	    (unsigned long long)n, failures);
	close(fd);
	return (failures != 0);
}

/* The address of a kernel function from /proc/kallsyms, 0 if none. */
static uint64_t
kallsyms(const char *name)
{
	char line[256], sym[128], t;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t r = 0;

	if (f == NULL)
		return (0);
	while (r == 0 && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%llx %c %127s", &a, &t, sym) == 3 &&
		    strcmp(sym, name) == 0)
			r = a;
	fclose(f);
	return (r);
}

struct stack_ctx {
	int32_t		pid;
	uint64_t	ours, within;	/* records; with frame 1 in caller */
	uint64_t	caller, caller_end;
	uint64_t	addr;
};

static void
stack_rec(const struct kinst_hit_record *r, void *arg)
{
	struct stack_ctx *c = arg;
	const struct kinst_rec_sec *sec;
	const uint64_t *pcs;
	uint32_t off, n;

	if (r->pid != c->pid)
		return;
	c->ours++;
	for (off = sizeof(*r); off + sizeof(*sec) <= r->hdr.size;
	    off += sizeof(*sec) + ((sec->len + 7) & ~7u)) {
		sec = (const void *)((const uint8_t *)r + off);
		if (sec->type != KINST_SEC_STACK)
			continue;
		pcs = (const void *)(sec + 1);
		n = sec->len / 8;
		CHECK(n >= 3 && pcs[0] == c->addr, "stack of %u frames, [0] %#llx",
		    n, n > 0 ? (unsigned long long)pcs[0] : 0ull);
		if (n >= 2 && pcs[1] >= c->caller && pcs[1] < c->caller_end)
			c->within++;
		else if (c->ours == 1)
			printf("frame 1 %#llx not in the caller [%#llx, %#llx)\n",
			    n >= 2 ? (unsigned long long)pcs[1] : 0ull,
			    (unsigned long long)c->caller,
			    (unsigned long long)c->caller_end);
	}
}

/*
 * Stacks from the frame records: FUNC+off (off 0: x30 holds the caller;
 * later: a record does) called from CALLER: every hit's frame 1 lies in
 * CALLER (whose size is the distance to NEXT, the symbol after it in
 * /proc/kallsyms, given by the caller of this program).
 */
static int
cmd_stack(const char *func, uint32_t off, const char *caller, long count)
{
	struct stack_ctx c = { 0 };
	struct kinst_disarm d;
	struct kinst_arm a;
	long k;
	int fd, r;

	c.caller = kallsyms(caller);
	CHECK(c.caller != 0, "no %s in /proc/kallsyms", caller);
	c.caller_end = c.caller + 4096;	/* bounded below by the next symbol */
	{
		char line[256], sym[128], t;
		unsigned long long x;
		FILE *f = fopen("/proc/kallsyms", "r");

		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "%llx %c %127s", &x, &t, sym) == 3 &&
			    x > c.caller && x < c.caller_end)
				c.caller_end = x;
		if (f != NULL)
			fclose(f);
	}
	fd = dev_open();
	r = do_arm(fd, func, off, KINST_ARM_STACK, &a);
	CHECK(r == 0, "arm %s+%#x: %d reason %u", func, off, r,
	    a.refuse_reason);
	if (r != 0)
		return (1);
	for (k = 0; k < count; k++)
		(void)syscall(SYS_getpid);
	d.probe_id = a.probe_id;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	c.pid = getpid();
	c.addr = a.addr;
	(void)drain(fd, stack_rec, &c);
	CHECK(c.ours == (uint64_t)count && c.within == c.ours,
	    "%llu records, %llu with frame 1 in %s", (unsigned long long)c.ours,
	    (unsigned long long)c.within, caller);
	printf("stack %s+%#x: %llu records, %llu with frame 1 in %s, %d failures\n",
	    func, off, (unsigned long long)c.ours,
	    (unsigned long long)c.within, caller, failures);
	close(fd);
	return (failures != 0);
}

/*
 * Exclusive sequences refused: in each FUNC, the first load-exclusive
 * (ldxr, ldaxr, ldxp, ldaxp: the inlined LL/SC atomics, kept beside their
 * LSE alternatives) and the instruction after it must be refused with
 * exclusive-monitor; the first by the classifier, the second (not itself
 * exclusive) only by the shim's scan of the words before it.  Fails when
 * none of the functions has one.
 */
static int
cmd_exclusive(int argc, char **argv)
{
	static uint8_t text[TEXT_MAX];
	struct kinst_arm a;
	uint64_t addr;
	uint32_t size, off, w, k;
	int fd, i, r, found = 0;

	fd = dev_open();
	for (i = 0; i < argc; i++) {
		if (get_text(fd, argv[i], text, &size, &addr) != 0)
			continue;
		for (off = 0; off + 8 <= size && off + 8 <= TEXT_MAX; off += 4) {
			w = (uint32_t)text[off] | (uint32_t)text[off + 1] << 8 |
			    (uint32_t)text[off + 2] << 16 |
			    (uint32_t)text[off + 3] << 24;
			/* load-exclusive: sz 001000 o2=0 L=1 o1 Rs o0 Rt2 Rn Rt */
			if ((w & 0x3fc00000u) == 0x08400000u)
				break;
		}
		if (off + 8 > size || off + 8 > TEXT_MAX)
			continue;
		found++;
		for (k = 0; k < 2; k++) {
			r = do_arm(fd, argv[i], off + 4 * k, KINST_ARM_CHECK, &a);
			CHECK(r == 0 && a.refuse_reason == KINST_R_EXCLUSIVE,
			    "%s+%#x: %d, reason %u, want %u", argv[i],
			    off + 4 * k, r, a.refuse_reason, KINST_R_EXCLUSIVE);
			printf("exclusive %s+%#x (%02x%02x%02x%02x): reason %u\n",
			    argv[i], off + 4 * k, text[off + 4 * k + 3],
			    text[off + 4 * k + 2], text[off + 4 * k + 1],
			    text[off + 4 * k], a.refuse_reason);
		}
	}
	CHECK(found > 0, "no load-exclusive in any of the %d functions", argc);
	printf("exclusive: %d functions with one, %d failures\n", found,
	    failures);
	close(fd);
	return (failures != 0);
}

/*
 * Each FUNC is refused whole as trap path: what kinst's handler calls
 * (through the module's PLT when KASLR put the module beyond a bl's
 * reach), checked at its first instruction.
 */
static int
cmd_trap_path(int argc, char **argv)
{
	struct kinst_arm a;
	int fd, i, r;

	fd = dev_open();
	for (i = 0; i < argc; i++) {
		r = do_arm(fd, argv[i], 0, KINST_ARM_CHECK, &a);
		CHECK(r == 0 && a.refuse_reason == KINST_R_TRAP_PATH,
		    "%s+0: %d, reason %u, want %u (trap path)", argv[i], r,
		    a.refuse_reason, KINST_R_TRAP_PATH);
		printf("trap-path %s+0: reason %u\n", argv[i],
		    a.refuse_reason);
	}
	printf("trap-path: %d functions, %d failures\n", argc, failures);
	close(fd);
	return (failures != 0);
}

/*
 * Two sessions on one instruction: both arm getpid's probe (one site, two
 * subscribers); COUNT calls give each exactly COUNT records of ours.
 */
static int
cmd_shared(long count)
{
	struct cycle_ctx c[2];
	struct kinst_disarm d;
	struct kinst_arm a[2];
	uint32_t off;
	long k;
	int fd[2], i;

	memset(c, 0, sizeof(c));
	c[0].pid = c[1].pid = getpid();	/* not while armed: a getpid(2) */
	c[0].tid = c[1].tid = (int32_t)syscall(SYS_gettid);
	for (i = 0; i < 2; i++)
		fd[i] = dev_open();
	off = arm_first(fd[0], "__arm64_sys_getpid", 4, 32, &a[0]);
	CHECK(off != UINT32_MAX, "nothing arms");
	if (off == UINT32_MAX)
		return (1);
	CHECK(do_arm(fd[1], "__arm64_sys_getpid", off, 0, &a[1]) == 0 &&
	    a[1].addr == a[0].addr, "second session's arm");
	for (k = 0; k < count; k++)
		(void)syscall(SYS_getpid);
	for (i = 0; i < 2; i++) {
		d.probe_id = a[i].probe_id;
		CHECK(xioctl(fd[i], KINST_IOC_DISARM, &d) == 0, "disarm %d", i);
	}
	for (i = 0; i < 2; i++) {
		c[i].addr = a[0].addr;
		(void)drain(fd[i], cycle_rec, &c[i]);
		CHECK(c[i].ours == (uint64_t)count,
		    "session %d: %llu records, want %ld", i,
		    (unsigned long long)c[i].ours, count);
		close(fd[i]);
	}
	printf("shared __arm64_sys_getpid+%#x: %llu and %llu records, %d failures\n",
	    off, (unsigned long long)c[0].ours, (unsigned long long)c[1].ours,
	    failures);
	return (failures != 0);
}

#define	PI(o, a, f, im)	((struct kinst_pinsn){ .op = (o), .arg = (a),	\
			    .off = (f), .imm = (im) })

struct pred_ctx {
	int32_t		pid;
	int		fd;
	const char	*msg;
	uint64_t	ours, captured;
};

static void
pred_rec(const struct kinst_hit_record *r, void *arg)
{
	struct pred_ctx *c = arg;
	const struct kinst_rec_sec *sec;
	const struct kinst_rec_cap *cap;
	uint32_t off;

	if (r->pid != c->pid)
		return;
	c->ours++;
	CHECK(r->regs.x[0] == (uint64_t)c->fd, "x0 %llu, want %d",
	    (unsigned long long)r->regs.x[0], c->fd);
	for (off = sizeof(*r); off + sizeof(*sec) <= r->hdr.size;
	    off += sizeof(*sec) + ((sec->len + 7) & ~7u)) {
		sec = (const void *)((const uint8_t *)r + off);
		if (sec->type != KINST_SEC_MEM)
			continue;
		cap = (const void *)(sec + 1);
		if (cap->size == 9 && sec->len >= sizeof(*cap) + 9 &&
		    memcmp(cap + 1, c->msg, 9) == 0 && (sec->flags == 0))
			c->captured++;
	}
}

/*
 * A probe program on arm64: at ksys_write's first traceable instruction,
 * record only when x0 is one descriptor, and capture 9 bytes of the user
 * buffer x1 points at.  COUNT writes there and COUNT to another descriptor:
 * exactly COUNT records of ours, each with x0 that descriptor and the
 * buffer's bytes captured.
 */
static int
cmd_pred(long count)
{
	static const char msg[] = "kinst-a64";
	struct pred_ctx c = { 0 };
	struct kinst_prog_load pl;
	struct kinst_disarm d;
	struct kinst_arm a;
	uint32_t off;
	long k;
	int fd, out, other, r;

	fd = dev_open();
	out = open("/dev/null", O_WRONLY);
	other = open("/dev/null", O_WRONLY);
	CHECK(out >= 0 && other >= 0, "/dev/null");
	{
		struct kinst_pinsn code[] = {
			PI(KINST_OP_REG, 1, 0, 0),
			PI(KINST_OP_MEM, 0, 0, 9),
			PI(KINST_OP_REG, 0, 0, 0),
			PI(KINST_OP_IMM, 0, 0, (uint64_t)out),
			PI(KINST_OP_EQ, 0, 0, 0),
			PI(KINST_OP_RET, 0, 0, 0),
		};

		memset(&pl, 0, sizeof(pl));
		pl.insns = (uint64_t)(uintptr_t)code;
		pl.ninsns = sizeof(code) / sizeof(code[0]);
		r = xioctl(fd, KINST_IOC_PROG_LOAD, &pl);
		CHECK(r == 0, "PROG_LOAD: %d", r);
		if (r != 0)
			return (1);
	}
	for (off = 0; off <= 12; off += 4) {
		memset(&a, 0, sizeof(a));
		snprintf(a.function, sizeof(a.function), "ksys_write");
		a.offset = off;
		a.flags = KINST_ARM_PROG;
		a.prog_id = pl.prog_id;
		if ((r = xioctl(fd, KINST_IOC_ARM, &a)) == 0)
			break;
	}
	CHECK(r == 0, "arm ksys_write with the program: %d", r);
	if (r != 0)
		return (1);
	for (k = 0; k < count; k++) {
		CHECK(write(out, msg, 9) == 9, "write");
		CHECK(write(other, msg, 9) == 9, "write");
	}
	d.probe_id = a.probe_id;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	c.pid = getpid();
	c.fd = out;
	c.msg = msg;
	(void)drain(fd, pred_rec, &c);
	CHECK(c.ours == (uint64_t)count && c.captured == c.ours,
	    "%llu records (want %ld), %llu with the buffer captured",
	    (unsigned long long)c.ours, count, (unsigned long long)c.captured);
	printf("pred ksys_write+%#x: %llu records of %ld writes to fd %d, %llu captures, %d failures\n",
	    off, (unsigned long long)c.ours, 2 * count, out,
	    (unsigned long long)c.captured, failures);
	close(fd);
	return (failures != 0);
}

struct masks_ctx {
	int32_t		pid;
	uint64_t	addr[2], n[2];
};

static void
masks_rec(const struct kinst_hit_record *r, void *arg)
{
	struct masks_ctx *c = arg;
	int i;

	if (r->pid != c->pid)
		return;
	for (i = 0; i < 2; i++)
		if (r->addr == c->addr[i]) {
			c->n[i]++;
			/* A syscall from user space runs with IRQ and FIQ unmasked. */
			CHECK((r->regs.pstate & 0xc0) == 0,
			    "probe %d: pstate %#llx: interrupts masked", i,
			    (unsigned long long)r->regs.pstate);
		}
}

/*
 * Interrupts as they were after an out-of-line hit: the trampoline runs
 * with IRQ and FIQ masked and its brk must unmask them.  getpid's first
 * traceable instruction (paciasp, out of line) and the next one armed:
 * every record of both shows pstate's I and F clear, as el0_svc leaves
 * them, and each has COUNT records.
 */
static int
cmd_masks(long count)
{
	struct kinst_probe_info pi[2];
	struct masks_ctx c = { 0 };
	struct kinst_disarm d;
	struct kinst_arm a[2];
	struct kinst_list l;
	uint32_t off, off2;
	long k;
	int fd, i;

	c.pid = getpid();
	fd = dev_open();
	off = arm_first(fd, "__arm64_sys_getpid", 4, 32, &a[0]);
	off2 = off == UINT32_MAX ? off :
	    arm_first(fd, "__arm64_sys_getpid", off + 4, off + 32, &a[1]);
	CHECK(off2 != UINT32_MAX, "two probes in __arm64_sys_getpid");
	if (off2 == UINT32_MAX)
		return (1);
	memset(&l, 0, sizeof(l));
	l.buf = (uintptr_t)pi;
	l.cap = 2;
	CHECK(xioctl(fd, KINST_IOC_LIST, &l) == 0 && l.count == 2, "LIST");
	for (i = 0; i < 2 && i < (int)l.count; i++)
		if (pi[i].offset == off)
			CHECK((pi[i].treatment & KINST_PI_TREATMENT) == KINST_T_OOL,
			    "+%#x treatment %u, not out of line", off,
			    pi[i].treatment & KINST_PI_TREATMENT);
	for (k = 0; k < count; k++)
		(void)syscall(SYS_getpid);
	d.probe_id = KINST_ALL_PROBES;
	CHECK(xioctl(fd, KINST_IOC_DISARM, &d) == 0, "disarm");
	c.addr[0] = a[0].addr;
	c.addr[1] = a[1].addr;
	(void)drain(fd, masks_rec, &c);
	CHECK(c.n[0] == (uint64_t)count && c.n[1] == (uint64_t)count,
	    "records %llu and %llu, want %ld", (unsigned long long)c.n[0],
	    (unsigned long long)c.n[1], count);
	printf("masks __arm64_sys_getpid+%#x (out of line) and +%#x: %llu and %llu records, %d failures\n",
	    off, off2, (unsigned long long)c.n[0], (unsigned long long)c.n[1],
	    failures);
	close(fd);
	return (failures != 0);
}

/* Nanoseconds per getpid(2) over n calls (CLOCK_MONOTONIC). */
static double
getpid_ns(long n)
{
	struct timespec t0, t1;
	long k;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = 0; k < n; k++)
		(void)syscall(SYS_getpid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
	    (double)n);
}

/*
 * Figures only (tests/bench/guest_a64_hit_rate.sh): ns per getpid(2) over
 * N calls, bare ("loop"), or with a kinst probe at FUNC+OFF recording every
 * hit to the ring ("armloop"; records read after, the ring's drops
 * counted).
 */
static int
cmd_loop(long n)
{
	printf("loop: %.0f ns/call\n", getpid_ns(n));
	return (0);
}

static int
cmd_armloop(const char *func, uint32_t off, long n)
{
	struct kinst_disarm d;
	struct kinst_arm a;
	uint64_t recs = 0;
	double ns;
	int fd, r;

	fd = dev_open();
	r = do_arm(fd, func, off, 0, &a);
	if (r != 0) {
		printf("ERROR: arm %s+%#x: %s (reason %u)\n", func, off,
		    strerror(-r), a.refuse_reason);
		return (1);
	}
	ns = getpid_ns(n);
	d.probe_id = a.probe_id;
	(void)xioctl(fd, KINST_IOC_DISARM, &d);
	(void)drain(fd, count_rec, &recs);
	printf("armloop %s+%#x: %.0f ns/call, %llu records\n", func, off, ns,
	    (unsigned long long)recs);
	close(fd);
	return (0);
}

/* The live text of FUNC as hex words, one line (TEXT hides kinst's brks). */
static int
cmd_text(const char *func)
{
	static uint8_t text[TEXT_MAX];
	uint64_t addr;
	uint32_t size, i;
	int fd, r;

	fd = dev_open();
	r = get_text(fd, func, text, &size, &addr);
	if (r != 0) {
		printf("text %s: %s\n", func, strerror(-r));
		return (1);
	}
	for (i = 0; i + 4 <= size && i < TEXT_MAX; i += 4)
		printf("%02x%02x%02x%02x%s", text[i + 3], text[i + 2],
		    text[i + 1], text[i], i + 8 <= size ? " " : "\n");
	close(fd);
	return (0);
}

/*
 * Arm every instruction of FUNC it can, say "armed N", and stay (for the
 * kill -9 and unload checks): the file's close is what disarms.
 */
static int
cmd_hold(const char *func)
{
	struct kinst_arm a;
	int fd, r;

	fd = dev_open();
	r = do_arm(fd, func, 0, KINST_ARM_ALL, &a);
	if (r != 0) {
		printf("arm %s: %s\n", func, strerror(-r));
		return (1);
	}
	printf("armed %u\n", a.narmed);
	for (;;)
		pause();
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "cycle") == 0)
		return (cmd_cycle(argv[2], atol(argv[3])));
	if (argc == 3 && strcmp(argv[1], "regs") == 0)
		return (cmd_regs(atol(argv[2])));
	if (argc == 4 && strcmp(argv[1], "all") == 0)
		return (cmd_all(argv[2], atol(argv[3])));
	if (argc == 3 && strcmp(argv[1], "shared") == 0)
		return (cmd_shared(atol(argv[2])));
	if (argc == 3 && strcmp(argv[1], "masks") == 0)
		return (cmd_masks(atol(argv[2])));
	if (argc == 3 && strcmp(argv[1], "pred") == 0)
		return (cmd_pred(atol(argv[2])));
	if (argc == 3 && strcmp(argv[1], "loop") == 0)
		return (cmd_loop(atol(argv[2])));
	if (argc == 5 && strcmp(argv[1], "armloop") == 0)
		return (cmd_armloop(argv[2], (uint32_t)strtoul(argv[3], NULL, 0),
		    atol(argv[4])));
	if (argc >= 3 && strcmp(argv[1], "exclusive") == 0)
		return (cmd_exclusive(argc - 2, argv + 2));
	if (argc >= 3 && strcmp(argv[1], "trap-path") == 0)
		return (cmd_trap_path(argc - 2, argv + 2));
	if (argc == 3 && strcmp(argv[1], "text") == 0)
		return (cmd_text(argv[2]));
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return (cmd_hold(argv[2]));
	if (argc == 6 && strcmp(argv[1], "stack") == 0)
		return (cmd_stack(argv[2], (uint32_t)strtoul(argv[3], NULL, 0),
		    argv[4], atol(argv[5])));
	fprintf(stderr, "usage: a64_devcheck cycle FUNC COUNT | regs COUNT | "
	    "all FUNC COUNT | stack FUNC OFF CALLER COUNT | text FUNC | "
	    "hold FUNC | exclusive FUNC... | trap-path FUNC... | shared COUNT | pred COUNT | "
	    "masks COUNT | "
	    "loop N | armloop FUNC OFF N\n");
	return (2);
}
