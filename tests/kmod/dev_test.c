/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of common/kinst_dev.c, the /dev/kinst protocol both kernel
 * modules run, against the fake kernel of control_test (fake_kernel.c) and
 * a fake user address space: only the buffers a test lends (user_lend) can
 * be copied in or out, some of them read-only.  What the guest's
 * kinst_devtest fuzz checks through the Linux module is checked here on the
 * code itself, with every ioctl number taken apart as Linux encodes it
 * (kmod/linux/kinst_linux.c does the same); the FreeBSD module calls the
 * same kinst_dev_ioctl() behind FreeBSD's copy-in/copy-out.
 */

#include <sys/ioctl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "fake_kernel.h"
#include "kinst_dev.h"
#include "kinst_ring.h"

/* ---- the fake user address space and the device hooks ---- */

struct lent {
	const void *p;
	size_t len;
	int writable;
};
static struct lent lents[8];
static int nlent;
static long ncopyout;

static void
user_lend(const void *p, size_t len, int writable)
{
	ATF_REQUIRE(nlent < (int)(sizeof(lents) / sizeof(lents[0])));
	lents[nlent].p = p;
	lents[nlent].len = len;
	lents[nlent].writable = writable;
	nlent++;
}

static void
user_reset(void)
{
	nlent = 0;
	ncopyout = 0;
}

static int
user_ok(uint64_t uaddr, size_t len, int write)
{
	int i;

	for (i = 0; i < nlent; i++) {
		uint64_t lo = (uint64_t)(uintptr_t)lents[i].p;

		if (uaddr >= lo && len <= lents[i].len &&
		    uaddr - lo <= lents[i].len - len &&
		    (!write || lents[i].writable))
			return (1);
	}
	return (0);
}

int
kinst_os_copyin(uint64_t uaddr, void *kbuf, size_t len)
{
	ATF_REQUIRE(!ctl_locked);
	if (!user_ok(uaddr, len, 0))
		return (-1);
	memcpy(kbuf, (const void *)(uintptr_t)uaddr, len);
	return (0);
}

int
kinst_os_copyout(const void *kbuf, uint64_t uaddr, size_t len)
{
	ATF_REQUIRE(!ctl_locked);
	if (!user_ok(uaddr, len, 1))
		return (-1);
	memcpy((void *)(uintptr_t)uaddr, kbuf, len);
	ncopyout++;
	return (0);
}

/* The read wait: count calls; maybe deliver a record, maybe a signal. */
static long nwaits;
static int wait_error;			/* returned once nwaits reaches wait_error_at */
static long wait_error_at = -1;
static struct kinst_dev_file *wait_feed;	/* put a record here on the 2nd wait */

static void put_record(struct kinst_dev_file *f, uint32_t cpu, uint32_t id);

int
kinst_os_dev_wait(struct kinst_dev_file *f)
{
	ATF_REQUIRE(!ctl_locked);
	nwaits++;
	if (wait_feed == f && nwaits == 2)
		put_record(f, 1, 77);
	if (nwaits == wait_error_at)
		return (wait_error);
	return (0);
}

static int arm_gate = 0;
static long nkicks;

int
kinst_os_arm_gate(void)
{
	return (arm_gate);
}

void
kinst_os_opt_kick(struct kinst_ctl *c)
{
	ATF_REQUIRE(c == &ctl);
	ATF_REQUIRE(kinst_ctl_opt_pending(c));
	nkicks++;
	(void)kinst_ctl_optimize(c);
}

/* ---- helpers ---- */

static struct kinst_dev dev;

static void
dev_setup(void)
{
	fake_reset();
	user_reset();
	prog_loading = 1;	/* the device layer allocates without the lock */
	nwaits = 0;
	wait_error_at = -1;
	wait_feed = NULL;
	arm_gate = 0;
	nkicks = 0;
	ATF_REQUIRE_EQ(kinst_dev_init(&dev, &ctl, 2, 4096), 0);
}

static struct kinst_dev_file *
dev_open_file(void)
{
	struct kinst_dev_file *f;

	f = calloc(1, sizeof(*f));
	ATF_REQUIRE(f != NULL);
	ATF_REQUIRE_EQ(kinst_dev_open(&dev, f, 4242, f), 0);
	ATF_REQUIRE_EQ(f->cs.s.exclude_pid, 4242);
	ATF_REQUIRE(f->cs.s.os_priv == f);
	return (f);
}

static void
dev_close_file(struct kinst_dev_file *f)
{
	kinst_dev_close(&dev, f);
	kinst_dev_free(f);
	free(f);
}

/* A Linux ioctl number taken apart as kmod/linux/kinst_linux.c does. */
static struct kinst_dev_cmd
linux_cmd(unsigned long cmd)
{
	struct kinst_dev_cmd dc;

	dc.group = _IOC_TYPE(cmd);
	dc.nr = _IOC_NR(cmd);
	dc.size = _IOC_SIZE(cmd);
	dc.dir = ((_IOC_DIR(cmd) & _IOC_WRITE) != 0 ? KINST_DEV_IN : 0) |
	    ((_IOC_DIR(cmd) & _IOC_READ) != 0 ? KINST_DEV_OUT : 0);
	return (dc);
}

/* ioctl(2) as a Linux caller sees it: 0 or an errno. */
static int
uioctl(struct kinst_dev_file *f, unsigned long cmd, const void *arg)
{
	struct kinst_dev_cmd dc = linux_cmd(cmd);

	return (kinst_dev_ioctl_user(&dev, f, &dc, (uint64_t)(uintptr_t)arg));
}

/* An ioctl with its argument lent writable for the call. */
static int
lioctl(struct kinst_dev_file *f, unsigned long cmd, void *arg, size_t len)
{
	int n = nlent, r;

	user_lend(arg, len, 1);
	r = uioctl(f, cmd, arg);
	nlent = n;
	return (r);
}
#define	LIOCTL(f, cmd, argp)	lioctl((f), (cmd), (argp), sizeof(*(argp)))

static int
arm_fn(struct kinst_dev_file *f, const char *fn, uint32_t off, uint32_t flags,
    struct kinst_arm *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->function, sizeof(a->function), "%s", fn);
	a->offset = off;
	a->flags = flags;
	return (LIOCTL(f, KINST_IOC_ARM, a));
}

static void
put_record(struct kinst_dev_file *f, uint32_t cpu, uint32_t id)
{
	struct kinst_hit_record r;

	memset(&r, 0, sizeof(r));
	r.hdr.size = sizeof(r);
	r.hdr.type = KINST_REC_HIT;
	r.cpu = cpu;
	r.probe_id = id;
	ATF_REQUIRE_EQ(kinst_ring_put(&f->rings[cpu], &r, sizeof(r)), 0);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng);
}

/* ---- tests ---- */

/* Every command kinst_abi.h defines. */
static const unsigned long cmds[] = { KINST_IOC_VERSION, KINST_IOC_ARM,
    KINST_IOC_DISARM, KINST_IOC_LIST, KINST_IOC_STATS, KINST_IOC_TEXT,
    KINST_IOC_FILTER, KINST_IOC_PROG_LOAD, KINST_IOC_PROG_STATS,
    KINST_IOC_AGG_SETUP, KINST_IOC_AGG_READ, KINST_IOC_AGG_CLEAR,
    KINST_IOC_AGG_STATS, KINST_IOC_AGG_STACKS, KINST_IOC_TS_SETUP,
    KINST_IOC_TS_STATS, KINST_IOC_RING, KINST_IOC_WAKE };

/* common/kinst_dev.h's errno values are this (Linux) host's. */
ATF_TC_WITHOUT_HEAD(errno_values);
ATF_TC_BODY(errno_values, tc)
{
	ATF_CHECK_EQ(KINST_EOPNOTSUPP, EOPNOTSUPP);
	ATF_CHECK_EQ(KINST_EAGAIN, EAGAIN);
	ATF_CHECK_EQ(KINST_ENODEV, ENODEV);
	ATF_CHECK_EQ(KINST_ENOTTY, ENOTTY);
	ATF_CHECK_EQ(KINST_EFBIG, EFBIG);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_OK), 0);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_INVAL), EINVAL);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_NOENT), ENOENT);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_REFUSED), EOPNOTSUPP);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_EXIST), EEXIST);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_NOSPC), ENOSPC);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_NOMEM), ENOMEM);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_FAULT), EFAULT);
	ATF_CHECK_EQ(kinst_dev_errno(KINST_E_TOOBIG), EFBIG);
	ATF_CHECK_EQ(kinst_dev_errno(12345), EIO);
	/* Ring sizes: a power of two within bounds. */
	ATF_CHECK(kinst_dev_init(&dev, &ctl, 2, 4096) == 0);
	ATF_CHECK(kinst_dev_init(&dev, &ctl, 2, 2048) == EINVAL);
	ATF_CHECK(kinst_dev_init(&dev, &ctl, 2, 6144) == EINVAL);
	ATF_CHECK(kinst_dev_init(&dev, &ctl, 2, 128u << 20) == EINVAL);
	ATF_CHECK(kinst_dev_init(&dev, &ctl, 0, 4096) == EINVAL);
}

/*
 * Every command kinst_abi.h defines reaches its handler; the same number
 * with another size or direction, another group, or any other number is
 * ENOTTY, before any byte is copied.
 */
ATF_TC_WITHOUT_HEAD(commands);
ATF_TC_BODY(commands, tc)
{
	struct kinst_dev_file *f;
	struct kinst_dev_cmd dc;
	uint64_t raw[KINST_DEV_ARG_MAX / 8];
	bool cb;
	size_t k;
	long i;
	int r;

	dev_setup();
	f = dev_open_file();
	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		/* Nothing lent: a known command faults, never ENOTTY. */
		r = uioctl(f, cmds[k], NULL);
		ATF_CHECK_MSG(r == EFAULT, "cmd %zu (nr %lu) NULL: %d", k,
		    (unsigned long)_IOC_NR(cmds[k]), r);
		dc = linux_cmd(cmds[k]);
		dc.size++;
		ATF_CHECK_EQ(kinst_dev_ioctl(&dev, f, &dc, raw, &cb), ENOTTY);
		dc.size -= 2;
		ATF_CHECK_EQ(kinst_dev_ioctl(&dev, f, &dc, raw, &cb), ENOTTY);
		dc = linux_cmd(cmds[k]);
		dc.dir ^= KINST_DEV_OUT;
		ATF_CHECK_EQ(kinst_dev_ioctl(&dev, f, &dc, raw, &cb), ENOTTY);
		dc = linux_cmd(cmds[k]);
		dc.group = 'k';
		ATF_CHECK_EQ(kinst_dev_ioctl(&dev, f, &dc, raw, &cb), ENOTTY);
	}
	ATF_CHECK_EQ(uioctl(f, _IOWR('K', 99, struct kinst_arm), raw), ENOTTY);
	ATF_CHECK_EQ(uioctl(f, _IOWR('K', 2, struct kinst_disarm), raw),
	    ENOTTY);
	ATF_CHECK_EQ(uioctl(f, _IO('K', 1), NULL), ENOTTY);
	for (i = 0; i < 100000; i++) {
		unsigned long c = (uint32_t)rnd();

		for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++)
			if (c == cmds[k])
				break;
		if (k < sizeof(cmds) / sizeof(cmds[0]))
			continue;
		r = uioctl(f, c, raw);
		ATF_REQUIRE_MSG(r == ENOTTY, "cmd %#lx: %d", c, r);
	}
	ATF_CHECK_EQ(ncopyout, 0);
	dev_close_file(f);
	check_no_leaks();
}

/* The malformed and boundary arguments of kinst_devtest fuzz, on the code. */
ATF_TC_WITHOUT_HEAD(bad_arguments);
ATF_TC_BODY(bad_arguments, tc)
{
	struct kinst_dev_file *f;
	struct kinst_version v;
	struct kinst_arm a;
	struct kinst_disarm d;
	struct kinst_list l;
	struct kinst_stats st;
	struct kinst_text t;
	struct kinst_filter fl;
	uint8_t buf[4096];
	uint32_t i;

	dev_setup();
	f = dev_open_file();
	ATF_REQUIRE_EQ(LIOCTL(f, KINST_IOC_VERSION, &v), 0);
	ATF_CHECK_EQ(v.abi_version, KINST_ABI_VERSION);
	ATF_CHECK_EQ(v.ncpus, 2);
	ATF_CHECK_EQ(v.max_probes, KINST_MAX_PROBES);
	ATF_CHECK_EQ(v.record_size, sizeof(struct kinst_hit_record));
	/* A read-only argument: VERSION cannot answer. */
	user_lend(&v, sizeof(v), 0);
	ATF_CHECK_EQ(uioctl(f, KINST_IOC_VERSION, &v), EFAULT);
	user_reset();
	/* Half a structure lent. */
	user_lend(&a, sizeof(a) / 2, 1);
	ATF_CHECK_EQ(uioctl(f, KINST_IOC_ARM, &a), EFAULT);
	user_reset();

	memset(&a, 'A', sizeof(a));
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_ARM, &a), EINVAL);
	memset(&a, 0, sizeof(a));
	memset(a.function, 'f', sizeof(a.function));
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_ARM, &a), EINVAL);
	memset(&a, 0, sizeof(a));
	memset(a.module, 'm', sizeof(a.module));
	strcpy(a.function, "f_small");
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_ARM, &a), EINVAL);
	ATF_CHECK_EQ(arm_fn(f, "", 0, 0, &a), EINVAL);
	for (i = 0; i < 32; i++) {
		if (((KINST_ARM_ALL | KINST_ARM_CHECK | KINST_ARM_STACK |
		    KINST_ARM_PROG | KINST_ARM_AGG | KINST_ARM_NOOPT) &
		    (1u << i)) != 0)
			continue;
		ATF_CHECK_EQ_MSG(arm_fn(f, "f_small", 1, 1u << i, &a), EINVAL,
		    "flag bit %u", i);
	}
	ATF_CHECK_EQ(arm_fn(f, "f_small", 2, 0, &a), EINVAL);	/* mid-insn */
	ATF_CHECK_EQ(arm_fn(f, "f_small", UINT32_MAX, 0, &a), EINVAL);
	ATF_CHECK_EQ(arm_fn(f, "no_such", 0, 0, &a), ENOENT);
	ATF_CHECK_EQ(arm_fn(f, "f_small", 0, KINST_ARM_ALL | KINST_ARM_CHECK,
	    &a), EINVAL);
	memset(&a, 0, sizeof(a));
	strcpy(a.function, "f_small");
	a.offset = 1;
	a.prog_id = 1;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_ARM, &a), EINVAL);
	a.flags = KINST_ARM_PROG;
	a.prog_id = 7;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_ARM, &a), EINVAL);
	/* A refusal's reason reaches the caller with the error. */
	ATF_CHECK_EQ(arm_fn(f, "f_excluded", 0, 0, &a), EOPNOTSUPP);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_EXCLUDED);
	ATF_CHECK_EQ(arm_fn(f, "f_fixup", 1, 0, &a), EOPNOTSUPP);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_FIXUP);
	ATF_CHECK_EQ(arm_fn(f, "f_small", 1, KINST_ARM_CHECK, &a), 0);
	ATF_CHECK(a.refuse_reason == KINST_R_NONE && a.narmed == 0);

	memset(&fl, 0, sizeof(fl));
	fl.pid = fl.cpu = fl.exclude_pid = -1;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_FILTER, &fl), 0);
	ATF_CHECK_EQ(f->cs.s.exclude_pid, -1);
	fl.flags = 1;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_FILTER, &fl), EINVAL);
	fl.flags = 0;
	fl.cpu = 2;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_FILTER, &fl), EINVAL);
	fl.cpu = -1;
	fl.pid = -2;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_FILTER, &fl), EINVAL);
	/* FILTER is in-only: a read-only argument is enough. */
	fl.pid = 5;
	user_lend(&fl, sizeof(fl), 0);
	ATF_CHECK_EQ(uioctl(f, KINST_IOC_FILTER, &fl), 0);
	ATF_CHECK_EQ(f->cs.s.filter_pid, 5);
	user_reset();

	d.probe_id = 0;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_DISARM, &d), ENOENT);
	d.probe_id = 12345;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_DISARM, &d), ENOENT);
	d.probe_id = KINST_ALL_PROBES;
	d.ndisarmed = 99;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_DISARM, &d), 0);
	ATF_CHECK_EQ(d.ndisarmed, 0);

	memset(&l, 0, sizeof(l));
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_LIST, &l), 0);
	ATF_CHECK_EQ(l.count, 0);
	l.cap = UINT32_MAX;	/* no probe: nothing to copy, no fault */
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_LIST, &l), 0);
	memset(&st, 0, sizeof(st));
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_STATS, &st), 0);
	ATF_CHECK_EQ(st.ncpus, 2);
	st.cap = UINT32_MAX;
	st.buf = 0xdead0000ull;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_STATS, &st), EFAULT);
	st.buf = (uintptr_t)buf;
	user_lend(buf, 2 * sizeof(struct kinst_cpu_stats), 1);
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_STATS, &st), 0);	/* clamped */
	user_reset();

	memset(&t, 0, sizeof(t));
	strcpy(t.function, "f_small");
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_TEXT, &t), 0);
	ATF_CHECK(t.size == SMALL_SIZE && t.addr == TEXT_BASE + SMALL_OFF);
	t.cap = UINT32_MAX;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_TEXT, &t), EFAULT);
	t.buf = (uintptr_t)buf;
	t.cap = SMALL_SIZE - 1;
	user_lend(buf, SMALL_SIZE - 1, 1);
	memset(buf, 0, sizeof(buf));
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_TEXT, &t), 0);
	ATF_CHECK(memcmp(buf, small_code, SMALL_SIZE - 1) == 0);
	user_reset();
	memset(t.function, 'x', sizeof(t.function));
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_TEXT, &t), EINVAL);
	strcpy(t.function, "no_such");
	t.size = 99;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_TEXT, &t), ENOENT);

	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_VERSION, &v), 0);
	dev_close_file(f);
	check_text_clean();
	check_no_leaks();
}

/*
 * Probes armed through the device are the file's; an ARM whose answer
 * cannot be copied back is undone; LIST copies only what fits; close
 * restores the text.
 */
ATF_TC_WITHOUT_HEAD(arm_list_close);
ATF_TC_BODY(arm_list_close, tc)
{
	struct kinst_dev_file *f, *g;
	struct kinst_probe_info pi[8];
	struct kinst_arm a;
	struct kinst_list l;
	struct kinst_disarm d;

	dev_setup();
	f = dev_open_file();
	g = dev_open_file();
	/* Read-only: armed, but the ids cannot go back: taken back. */
	memset(&a, 0, sizeof(a));
	strcpy(a.function, "f_small");
	a.flags = KINST_ARM_ALL;
	user_lend(&a, sizeof(a), 0);
	ATF_CHECK_EQ(uioctl(f, KINST_IOC_ARM, &a), EFAULT);
	user_reset();
	ATF_CHECK_EQ(engine->table.count, 0);
	ATF_CHECK_EQ(ctl.nprobes, 0);
	check_text_clean();

	ATF_REQUIRE_EQ(arm_fn(f, "f_small", 0, KINST_ARM_ALL, &a), 0);
	ATF_CHECK_EQ(a.narmed, 5);
	ATF_CHECK_EQ(text[SMALL_OFF + 1], 0xcc);
	/* The same file again: refused; another file shares the site. */
	ATF_CHECK_EQ(arm_fn(f, "f_small", 1, 0, &a), EEXIST);
	ATF_REQUIRE_EQ(arm_fn(g, "f_small", 1, 0, &a), 0);
	ATF_CHECK_EQ(a.narmed, 1);
	ATF_CHECK_EQ(engine->table.count, 5);
	ATF_CHECK_EQ(ctl.nprobes, 6);
	memset(&l, 0, sizeof(l));
	l.buf = (uintptr_t)pi;
	l.cap = 3;
	user_lend(pi, 3 * sizeof(pi[0]), 1);
	memset(pi, 0xff, sizeof(pi));
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_LIST, &l), 0);
	ATF_CHECK_EQ(l.count, 5);
	ATF_CHECK_EQ(pi[0].addr, TEXT_BASE + SMALL_OFF);
	ATF_CHECK_EQ(pi[3].addr, UINT64_MAX);	/* nothing past cap */
	l.cap = 4;	/* more than lent */
	l.count = 77;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_LIST, &l), EFAULT);
	ATF_CHECK_EQ(l.count, 77);	/* no answer with an error */
	user_reset();
	memset(&l, 0, sizeof(l));
	l.buf = (uintptr_t)pi;
	l.cap = 8;
	user_lend(pi, 8 * sizeof(pi[0]), 1);
	ATF_CHECK_EQ(LIOCTL(g, KINST_IOC_LIST, &l), 0);
	ATF_CHECK_EQ(l.count, 1);
	ATF_CHECK_EQ(pi[0].addr, TEXT_BASE + SMALL_OFF + 1);
	ATF_CHECK_EQ(KINST_PI_SESSIONS(pi[0].treatment), 2);
	user_reset();
	d.probe_id = KINST_ALL_PROBES;
	ATF_CHECK_EQ(LIOCTL(g, KINST_IOC_DISARM, &d), 0);
	ATF_CHECK_EQ(d.ndisarmed, 1);
	/* The other file's probe stays: so does the int3. */
	ATF_CHECK_EQ(text[SMALL_OFF + 1], 0xcc);
	ATF_CHECK_EQ(ctl.nprobes, 5);
	ATF_CHECK_EQ(engine->table.count, 5);
	dev_close_file(g);
	ATF_CHECK_EQ(ctl.nprobes, 5);
	dev_close_file(f);
	check_text_clean();
	check_no_leaks();
}

/* The arm gate refuses before anything is resolved; the optimizer kick. */
ATF_TC_WITHOUT_HEAD(arm_gate_and_kick);
ATF_TC_BODY(arm_gate_and_kick, tc)
{
	struct kinst_dev_file *f;
	struct kinst_arm a;

	dev_setup();
	kinst_ctl_jump_enable(&ctl, 0x1234, 0, true, 0);
	f = dev_open_file();
	arm_gate = EBUSY;
	ATF_CHECK_EQ(arm_fn(f, "f_imm", 0, 0, &a), EBUSY);
	ATF_CHECK_EQ(nrefs, 0);
	ATF_CHECK_EQ(ctl.nprobes, 0);
	arm_gate = 0;
	ATF_CHECK_EQ(arm_fn(f, "f_imm", 0, KINST_ARM_NOOPT, &a), 0);
	ATF_CHECK_EQ(nkicks, 0);
	ATF_CHECK_EQ(arm_fn(f, "f_imm", 5, 0, &a), 0);
	ATF_CHECK_EQ(nkicks, 1);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(ctl.njump, 0);	/* mov %eax,%ecx: 2 bytes, no window */
	dev_close_file(f);
	check_text_clean();
	check_no_leaks();
}

/* Random structures for every command: only the documented errors. */
ATF_TC_WITHOUT_HEAD(random_structures);
ATF_TC_BODY(random_structures, tc)
{
	struct kinst_dev_file *f;
	uint64_t raw[KINST_DEV_ARG_MAX / 8];
	uint8_t *b = (uint8_t *)raw;
	size_t k, j;
	long i;
	int r;

	dev_setup();
	f = dev_open_file();
	for (i = 0; i < 20000; i++) {
		for (j = 0; j < sizeof(raw) / 8; j++)
			raw[j] = rnd();
		/* Half the time small values, so that more paths run. */
		if ((rnd() & 1) != 0)
			for (j = 0; j < sizeof(raw); j++)
				b[j] &= (rnd() & 1) != 0 ? 0x03 : 0xff;
		k = rnd() % (sizeof(cmds) / sizeof(cmds[0]));
		if (cmds[k] == KINST_IOC_ARM) {
			struct kinst_arm *ra = (void *)raw;

			ra->module[rnd() % sizeof(ra->module)] = 0;
			if ((rnd() & 1) != 0)
				strcpy(ra->function, (rnd() & 1) != 0 ?
				    "f_small" : "f_big");
			ra->flags &= KINST_ARM_ALL | KINST_ARM_CHECK |
			    KINST_ARM_NOOPT;
		}
		r = lioctl(f, cmds[k], raw, _IOC_SIZE(cmds[k]));
		ATF_REQUIRE_MSG(r == 0 || r == EFAULT || r == EINVAL ||
		    r == ENOENT || r == EOPNOTSUPP || r == EEXIST ||
		    r == ENOSPC || r == ENOMEM,
		    "iteration %ld cmd nr %lu: %d", i,
		    (unsigned long)_IOC_NR(cmds[k]), r);
		ATF_REQUIRE(!ctl_locked && !text_locked);
	}
	dev_close_file(f);
	check_text_clean();
	check_no_leaks();
}

/* read(2): whole records, round robin, the errors, the wait. */
ATF_TC_WITHOUT_HEAD(read_and_poll);
ATF_TC_BODY(read_and_poll, tc)
{
	const size_t rs = sizeof(struct kinst_hit_record);
	struct kinst_hit_record *r;
	struct kinst_dev_file *f;
	uint32_t first;
	size_t n;

	dev_setup();
	f = dev_open_file();
	/* No ring buffer before the first ARM: nothing to read. */
	ATF_CHECK(f->rings_ready == 0 && f->bufs[0] == NULL);
	ATF_CHECK_EQ(kinst_dev_read(&dev, f, rs, true, &n), EAGAIN);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);
	ATF_REQUIRE_EQ(kinst_dev_rings_alloc(f), 0);
	ATF_CHECK_EQ(kinst_dev_read(&dev, f, rs - 1, true, &n), EINVAL);
	ATF_CHECK_EQ(kinst_dev_read(&dev, f, 0, false, &n), EINVAL);
	ATF_CHECK_EQ(kinst_dev_read(&dev, f, rs, true, &n), EAGAIN);
	ATF_CHECK_EQ(nwaits, 0);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);

	put_record(f, 0, 1);
	put_record(f, 0, 2);
	put_record(f, 1, 3);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), KINST_DEV_POLL_IN);
	/* Room for one and a half: one whole record. */
	ATF_REQUIRE_EQ(kinst_dev_read(&dev, f, rs + rs / 2, true, &n), 0);
	ATF_CHECK_EQ(n, rs);
	r = (struct kinst_hit_record *)(void *)f->bounce;
	first = r->probe_id;
	ATF_CHECK(first == 1 || first == 3);	/* the oldest of a CPU */
	/* The rest; each CPU's records in their order. */
	ATF_REQUIRE_EQ(kinst_dev_read(&dev, f, (size_t)1 << 30, false, &n), 0);
	ATF_CHECK_EQ(n, 2 * rs);
	if (first == 1)
		ATF_CHECK(r[0].probe_id + r[1].probe_id == 5);
	else
		ATF_CHECK(r[0].probe_id == 1 && r[1].probe_id == 2);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);

	/* Blocking: waits until a record comes (on the second wait). */
	wait_feed = f;
	ATF_REQUIRE_EQ(kinst_dev_read(&dev, f, 4 * rs, false, &n), 0);
	ATF_CHECK_EQ(nwaits, 2);
	ATF_CHECK_EQ(n, rs);
	ATF_CHECK_EQ(r->probe_id, 77);
	/* A signal in the wait is the read's error. */
	wait_feed = NULL;
	nwaits = 0;
	wait_error = EINTR;
	wait_error_at = 3;
	ATF_CHECK_EQ(kinst_dev_read(&dev, f, rs, false, &n), EINTR);
	ATF_CHECK_EQ(nwaits, 3);
	ATF_CHECK_EQ(n, 0);

	/* The device is going: readers, pollers and ioctls are told. */
	put_record(f, 1, 4);
	kinst_dev_set_dying(&dev);
	ATF_CHECK_EQ(kinst_dev_read(&dev, f, rs, true, &n), ENODEV);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), KINST_DEV_POLL_GONE);
	{
		struct kinst_version v;

		ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_VERSION, &v), ENODEV);
	}
	dev_close_file(f);
	check_no_leaks();
}

/*
 * KINST_IOC_RING: bounds, flags, the size in effect; the rings are
 * allocated at the first ARM at that size, which is fixed from then on;
 * running out of memory there fails the ARM and leaves nothing behind.
 */
ATF_TC_WITHOUT_HEAD(ring_size);
ATF_TC_BODY(ring_size, tc)
{
	static const uint32_t bad[] = { 1, 2048, 4095, 6144, 12288,
	    (128u << 20), 0x80000000u, 0xffffffffu };
	struct kinst_ring_size rs;
	struct kinst_dev_file *f;
	struct kinst_arm a;
	size_t i;

	dev_setup();
	f = dev_open_file();
	memset(&rs, 0, sizeof(rs));
	ATF_REQUIRE_EQ(LIOCTL(f, KINST_IOC_RING, &rs), 0);
	ATF_CHECK_EQ(rs.size, 4096);	/* the module's (dev_setup) */
	ATF_CHECK_EQ(rs.min, KINST_DEV_RING_MIN);
	ATF_CHECK_EQ(rs.max, KINST_DEV_RING_MAX);
	ATF_CHECK_EQ(rs.ncpus, 2);
	ATF_CHECK_EQ(rs.allocated, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&rs, 0, sizeof(rs));
		rs.size = bad[i];
		ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_RING, &rs), EINVAL);
	}
	memset(&rs, 0, sizeof(rs));
	rs.size = 8192;
	rs.flags = 1;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_RING, &rs), EINVAL);
	ATF_CHECK_EQ(f->ring_size, 4096);
	rs.flags = 0;
	rs.size = 65536;
	ATF_REQUIRE_EQ(LIOCTL(f, KINST_IOC_RING, &rs), 0);
	ATF_CHECK_EQ(rs.size, 65536);
	rs.size = 16384;	/* changed again: the last one counts */
	ATF_REQUIRE_EQ(LIOCTL(f, KINST_IOC_RING, &rs), 0);
	/* The first ARM allocates: out of memory there fails it. */
	alloc_fail_after = 1;
	ATF_CHECK_EQ(arm_fn(f, "f_small", 0, 0, &a), ENOMEM);
	alloc_fail_after = -1;
	ATF_CHECK(f->rings_ready == 0 && f->bufs[0] == NULL &&
	    f->bufs[1] == NULL);
	ATF_REQUIRE_EQ(arm_fn(f, "f_small", 0, 0, &a), 0);
	ATF_CHECK(f->rings_ready == 1);
	ATF_CHECK_EQ(f->rings[0].size, 16384);
	ATF_CHECK_EQ(f->rings[1].size, 16384);
	/* Fixed now; asking, or the same size, is fine. */
	rs.size = 32768;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_RING, &rs), EBUSY);
	ATF_CHECK_EQ(rs.size, 16384);
	ATF_CHECK_EQ(rs.allocated, 1);
	rs.size = 16384;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_RING, &rs), 0);
	rs.size = 0;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_RING, &rs), 0);
	ATF_CHECK_EQ(rs.size, 16384);
	put_record(f, 1, 5);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), KINST_DEV_POLL_IN);
	dev_close_file(f);
	check_text_clean();
	check_no_leaks();
}

/* An open that runs out of memory at any step leaves nothing behind. */
ATF_TC_WITHOUT_HEAD(open_out_of_memory);
ATF_TC_BODY(open_out_of_memory, tc)
{
	struct kinst_dev_file f;
	long k;

	for (k = 0; k < 8; k++) {
		dev_setup();
		alloc_fail_after = k;
		memset(&f, 0, sizeof(f));
		if (kinst_dev_open(&dev, &f, 1, NULL) == 0) {
			ATF_CHECK_MSG(k >= 5, "open survived failure %ld", k);
			kinst_dev_close(&dev, &f);
			kinst_dev_free(&f);
		} else
			ATF_CHECK(f.rings == NULL && f.bufs == NULL &&
			    f.handles == NULL && f.bounce == NULL &&
			    f.hits == NULL);
		alloc_fail_after = -1;
		check_no_leaks();
	}
}

/*
 * mmap(2): exactly one CPU's ctl page (read-write) or records (read-only)
 * of the file's own rings, shared, once they exist; everything else is
 * refused.  The memory given is the file's: its ctl page shows the head
 * the producer published, and a consumer through it (kinst_ring_map_get,
 * kinstctl's) gets the records and frees their room.
 */
ATF_TC_WITHOUT_HEAD(mmap_rings);
ATF_TC_BODY(mmap_rings, tc)
{
	const uint32_t S = KINST_DEV_MAP_SHARED, W = KINST_DEV_MAP_WRITE;
	struct {
		uint64_t off, len;
		uint32_t how;
		int error;
	} bad[] = {
		{ KINST_MAP_CTL(0), KINST_MAP_PAGE, W, EINVAL },  /* private */
		{ KINST_MAP_CTL(0), KINST_MAP_PAGE, 0, EINVAL },
		{ KINST_MAP_DATA(0), 16384, S | W, EACCES },	/* write */
		{ KINST_MAP_CTL(0), 2 * KINST_MAP_PAGE, S, EINVAL },
		{ KINST_MAP_CTL(0), KINST_MAP_PAGE + 16384, S, EINVAL },
		{ KINST_MAP_CTL(0), 0, S, EINVAL },
		{ KINST_MAP_DATA(0), 8192, S, EINVAL },		/* short */
		{ KINST_MAP_DATA(0), 32768, S, EINVAL },	/* long */
		{ KINST_MAP_DATA(0) + KINST_MAP_PAGE, 8192, S, EINVAL },
		{ 2 * KINST_MAP_PAGE, KINST_MAP_PAGE, S, EINVAL },
		{ KINST_MAP_CTL(2), KINST_MAP_PAGE, S, EINVAL },	/* no CPU 2 */
		{ KINST_MAP_DATA(2), 16384, S, EINVAL },
		{ KINST_MAP_CTL(0) + 8, KINST_MAP_PAGE, S, EINVAL },
		{ KINST_MAP_STRIDE - KINST_MAP_PAGE, KINST_MAP_PAGE, S,
		    EINVAL },
		{ ~0ull - KINST_MAP_PAGE + 1, KINST_MAP_PAGE, S, EINVAL },
		{ (uint64_t)1 << 63, KINST_MAP_PAGE, S, EINVAL },
		{ KINST_MAP_CTL(1), ~0ull, S, EINVAL },
	};
	struct kinst_dev_file *f, *g;
	struct kinst_ring_size rs;
	struct kinst_dev_map m;
	struct kinst_ring_ctl *ctl;
	struct kinst_hit_record out[4];
	bool badrec;
	size_t i, n;

	dev_setup();
	f = dev_open_file();
	g = dev_open_file();
	memset(&rs, 0, sizeof(rs));
	rs.size = 16384;
	ATF_REQUIRE_EQ(LIOCTL(f, KINST_IOC_RING, &rs), 0);
	/* No rings yet: nothing to map. */
	ATF_CHECK_EQ(kinst_dev_mmap(&dev, f, KINST_MAP_CTL(0), KINST_MAP_PAGE,
	    S | W, &m), ENXIO);
	ATF_REQUIRE_EQ(kinst_dev_rings_alloc(f), 0);
	ATF_REQUIRE_EQ(kinst_dev_rings_alloc(g), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ATF_CHECK_MSG(kinst_dev_mmap(&dev, f, bad[i].off, bad[i].len,
		    bad[i].how, &m) == bad[i].error, "case %zu", i);
	/* Each CPU's two parts, in this file's memory only. */
	for (i = 0; i < 2; i++) {
		ATF_REQUIRE_EQ(kinst_dev_mmap(&dev, f, KINST_MAP_CTL(i),
		    KINST_MAP_PAGE, S | W, &m), 0);
		ATF_CHECK(m.base == f->bufs[i] && m.base != g->bufs[i]);
		ATF_CHECK(m.handle == f->handles[i]);
		ATF_CHECK(m.off == 0 && m.len == KINST_MAP_PAGE &&
		    m.cpu == i && m.data == 0);
		ATF_CHECK((void *)f->rings[i].ctl == m.base);
		ATF_REQUIRE_EQ(kinst_dev_mmap(&dev, f, KINST_MAP_DATA(i),
		    16384, S, &m), 0);
		ATF_CHECK(m.base == f->bufs[i] && m.off == KINST_MAP_PAGE &&
		    m.len == 16384 && m.data == 1);
		ATF_CHECK(f->rings[i].buf == (uint8_t *)m.base + m.off);
		ctl = (struct kinst_ring_ctl *)f->bufs[i];
		ATF_CHECK(ctl->size == 16384 && ctl->cpu == i);
	}
	/* The other file maps its own memory at the same offsets. */
	ATF_REQUIRE_EQ(kinst_dev_mmap(&dev, g, KINST_MAP_DATA(1), 4096, S, &m),
	    0);
	ATF_CHECK(m.base == g->bufs[1]);
	ATF_CHECK_EQ(kinst_dev_mmap(&dev, g, KINST_MAP_DATA(1), 16384, S, &m),
	    EINVAL);
	/* A consumer through the ctl page. */
	put_record(f, 1, 41);
	put_record(f, 1, 42);
	ctl = (struct kinst_ring_ctl *)f->bufs[1];
	ATF_CHECK_EQ(ctl->head, 2 * sizeof(out[0]));
	ATF_CHECK_EQ(ctl->tail, 0);
	n = kinst_ring_map_get(ctl, (uint8_t *)f->bufs[1] + KINST_MAP_PAGE,
	    ctl->size, out, sizeof(out), &badrec);
	ATF_CHECK(!badrec && n == 2 * sizeof(out[0]));
	ATF_CHECK(out[0].probe_id == 41 && out[1].probe_id == 42);
	ATF_CHECK_EQ(ctl->tail, ctl->head);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);
	/*
	 * A hostile tail: behind head by more than the ring, ahead of it,
	 * misaligned.  The producer drops (never writes outside the ring),
	 * read(2) resynchronizes, and records flow again.
	 */
	{
		/* 32 KiB behind, 8 bytes ahead, 3 bytes behind. */
		static const uint64_t tails[] = { -32768ull, 8, -3ull };

		for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
			uint64_t d0 = kinst_ring_dropped(&f->rings[1]);
			struct kinst_hit_record r;

			ctl->tail = ctl->head + tails[i];
			memset(&r, 0, sizeof(r));
			r.hdr.size = sizeof(r);
			r.hdr.type = KINST_REC_HIT;
			if (i != 2) {
				ATF_CHECK(kinst_ring_put(&f->rings[1], &r,
				    sizeof(r)) != 0);
				ATF_CHECK_EQ(kinst_ring_dropped(&f->rings[1]),
				    d0 + 1);
			}
			ATF_CHECK_EQ(kinst_dev_read(&dev, f, sizeof(out), true,
			    &n), EAGAIN);
			ATF_CHECK_EQ(ctl->tail, f->rings[1].head);
			put_record(f, 1, 43);
			ATF_REQUIRE_EQ(kinst_dev_read(&dev, f, sizeof(out),
			    true, &n), 0);
			ATF_CHECK(n == sizeof(out[0]) &&
			    ((struct kinst_hit_record *)(void *)f->bounce)->
			    probe_id == 43);
		}
	}
	/* A dying device maps nothing. */
	kinst_dev_set_dying(&dev);
	ATF_CHECK_EQ(kinst_dev_mmap(&dev, f, KINST_MAP_CTL(0), KINST_MAP_PAGE,
	    S | W, &m), ENODEV);
	dev_close_file(f);
	dev_close_file(g);
	check_no_leaks();
}

/*
 * KINST_IOC_WAKE: poll(2) reports records from the watermark on (at most
 * half a ring counts), read(2) still returns what there is.
 */
ATF_TC_WITHOUT_HEAD(wake_watermark);
ATF_TC_BODY(wake_watermark, tc)
{
	const uint32_t rs = sizeof(struct kinst_hit_record);
	struct kinst_dev_file *f;
	struct kinst_wake w;
	size_t n;

	dev_setup();
	f = dev_open_file();
	ATF_REQUIRE_EQ(kinst_dev_rings_alloc(f), 0);	/* 4 KiB rings */
	memset(&w, 0, sizeof(w));
	w.flags = 1;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_WAKE, &w), EINVAL);
	w.flags = 0;
	w.bytes = KINST_DEV_RING_MAX / 2 + 1;
	ATF_CHECK_EQ(LIOCTL(f, KINST_IOC_WAKE, &w), EINVAL);
	w.bytes = 2 * rs;
	ATF_REQUIRE_EQ(LIOCTL(f, KINST_IOC_WAKE, &w), 0);
	ATF_CHECK_EQ(f->cs.s.wake_bytes, 2 * rs);
	put_record(f, 0, 1);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);	/* below */
	put_record(f, 1, 2);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);	/* per ring */
	put_record(f, 0, 3);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), KINST_DEV_POLL_IN); /* at it */
	ATF_REQUIRE_EQ(kinst_dev_read(&dev, f, rs, true, &n), 0);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);
	/* Below the watermark read(2) still returns the records. */
	ATF_REQUIRE_EQ(kinst_dev_read(&dev, f, 4 * rs, true, &n), 0);
	ATF_CHECK_EQ(n, 2 * rs);
	/* Above half a 4 KiB ring: half counts. */
	w.bytes = 1u << 20;
	ATF_REQUIRE_EQ(LIOCTL(f, KINST_IOC_WAKE, &w), 0);
	for (n = 0; (n + 1) * rs < 2048; n++)
		put_record(f, 0, 9);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), 0);
	put_record(f, 0, 10);
	ATF_CHECK_EQ(kinst_dev_poll(&dev, f), KINST_DEV_POLL_IN);
	dev_close_file(f);
	check_no_leaks();
}

/* ---- requests as an older kinstctl sends them ---- */

/* Little-endian fields of a raw argument, at offsets written by hand. */
static void
put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static void
put64(uint8_t *b, size_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static uint32_t
get32(const uint8_t *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return (v);
}

static uint64_t
get64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return (v);
}

/*
 * An ARM as kinstctl 1.0-1.12 built it: 248 bytes, function at 64, offset
 * at 192, flags at 196, prog_id (before 1.5: _pad) at 244; its number,
 * _IOWR('K', 2, 248 bytes).
 */
static int
old_arm(struct kinst_dev_file *f, uint8_t arm[248], const char *fn,
    uint32_t off, uint32_t flags, uint32_t prog)
{
	memset(arm, 0, 248);
	strcpy((char *)arm + 64, fn);
	put32(arm, 192, off);
	put32(arm, 196, flags);
	put32(arm, 244, prog);
	return (lioctl(f, 0xc0f84b02, arm, 248));
}

/*
 * The reverse direction of the ABI's compatibility (issue 45): a kinstctl
 * of an older 1.x minor builds its requests from its own kinst_abi.h.  No
 * structure changed size from 1.0 to 1.14 (kinst(4) ABI LAYOUT; git log
 * -p common/kinst_abi.h: kinst_arm 248 and kinst_probe_info 240 bytes
 * throughout, prog_id and nstacks were _pad before 1.5 and 1.8), so each
 * request here is laid out and numbered by hand as that minor had it,
 * with only the flags, opcodes and commands that minor knew, and this
 * tree's device layer must take it and answer at the same offsets.
 */
ATF_TC_WITHOUT_HEAD(older_clients);
ATF_TC_BODY(older_clients, tc)
{
	uint8_t arm[248], list[16], pi[2 * 240], b[96], prog[2 * 16];
	struct kinst_dev_file *f;
	uint32_t id, t;

	dev_setup();
	f = dev_open_file();
	/* 1.0: VERSION, _IOR('K', 1, 16 bytes). */
	memset(b, 0xa5, sizeof(b));
	ATF_REQUIRE_EQ(lioctl(f, 0x80104b01, b, 16), 0);
	ATF_CHECK_EQ(get32(b, 0) >> 16, 1);		/* the same major */
	ATF_CHECK_EQ(get32(b, 4), 8192);		/* max_probes */
	ATF_CHECK_EQ(get32(b, 8), 2);			/* ncpus */
	ATF_CHECK_EQ(get32(b, 12), 208);		/* record_size */

	/* 1.0: ARM one instruction, no flags, _pad (now prog_id) 0. */
	ATF_REQUIRE_EQ(old_arm(f, arm, "f_small", 1, 0, 0), 0);
	id = get32(arm, 200);
	ATF_CHECK(id != 0);
	ATF_CHECK_EQ(get32(arm, 204), 1);		/* narmed */
	ATF_CHECK_EQ(get32(arm, 208), 0);		/* nrefused */
	ATF_CHECK_EQ(get32(arm, 212), 0);		/* refuse_reason */
	ATF_CHECK_EQ(get64(arm, 216), TEXT_BASE + SMALL_OFF + 1);
	ATF_CHECK_EQ(get32(arm, 240), 3);		/* insn_len */
	ATF_CHECK(memcmp(arm + 224, small_code + 1, 3) == 0);
	ATF_CHECK_EQ(get32(arm, 244), 0);		/* its _pad */

	/* 1.2: a check-only ARM (flags 0x2); 1.2-1.12 read only the reason. */
	ATF_REQUIRE_EQ(old_arm(f, arm, "f_small", 4, 0x2, 0), 0);
	ATF_CHECK_EQ(get32(arm, 212), 0);
	/* A refusal's reason comes back at 212 (Linux) with the error. */
	ATF_CHECK_EQ(old_arm(f, arm, "f_excluded", 0, 0, 0), EOPNOTSUPP);
	ATF_CHECK_EQ(get32(arm, 212), 18);		/* excluded-function */

	/* 1.4: ARM with STACK (0x4). */
	ATF_REQUIRE_EQ(old_arm(f, arm, "f_small", 4, 0x4, 0), 0);
	ATF_CHECK_EQ(get32(arm, 204), 1);

	/*
	 * 1.0: LIST into 240-byte elements.  Before 1.9 treatment was the
	 * whole word; no kinstctl of any minor read it (git log -p cli/),
	 * and the low 16 bits stay the treatment (1-4).
	 */
	memset(list, 0, sizeof(list));
	memset(pi, 0xff, sizeof(pi));
	put64(list, 0, (uintptr_t)pi);
	put32(list, 8, 2);				/* cap */
	user_lend(pi, sizeof(pi), 1);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0104b04, list, sizeof(list)), 0);
	user_reset();
	ATF_CHECK_EQ(get32(list, 12), 2);		/* count */
	{
		/* In no particular order: the first probe armed, offset 1. */
		const uint8_t *p1 = get32(pi, 4) == 1 ? pi : pi + 240;
		const uint8_t *p4 = p1 == pi ? pi + 240 : pi;

		ATF_CHECK_EQ(get32(p1, 0), id);
		ATF_CHECK_EQ(get32(p1, 4), 1);			/* offset */
		ATF_CHECK_EQ(get64(p1, 8), TEXT_BASE + SMALL_OFF + 1);
		ATF_CHECK_STREQ((const char *)p1 + 88, "f_small");
		ATF_CHECK_EQ(get32(p1, 232), 3);		/* insn_len */
		t = get32(p1, 236) & 0xffff;
		ATF_CHECK_MSG(t >= 1 && t <= 4, "treatment %u", t);
		ATF_CHECK_EQ(get32(p4, 4), 4);
		ATF_CHECK_EQ(get32(p4, 232), 4);
	}

	/* 1.0: STATS (32 bytes), elements of 24. */
	memset(b, 0, sizeof(b));
	put64(b, 0, (uintptr_t)(b + 32));
	put32(b, 8, 2);
	user_lend(b + 32, 48, 1);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0204b05, b, 32), 0);
	user_reset();
	ATF_CHECK_EQ(get32(b, 12), 2);			/* ncpus */
	ATF_CHECK_EQ(get64(b, 24), 2);			/* nprobes */

	/* 1.0: TEXT (216 bytes). */
	{
		uint8_t txt[216], code[SMALL_SIZE];

		memset(txt, 0, sizeof(txt));
		strcpy((char *)txt + 64, "f_small");
		put64(txt, 192, (uintptr_t)code);
		put32(txt, 200, sizeof(code));
		user_lend(code, sizeof(code), 1);
		ATF_REQUIRE_EQ(lioctl(f, 0xc0d84b06, txt, sizeof(txt)), 0);
		user_reset();
		ATF_CHECK_EQ(get32(txt, 204), SMALL_SIZE);
		ATF_CHECK_EQ(get64(txt, 208), TEXT_BASE + SMALL_OFF);
		ATF_CHECK(memcmp(code, small_code, SMALL_SIZE) == 0);
	}

	/* 1.1: FILTER, _IOW('K', 7, 16 bytes): in only. */
	memset(b, 0, 16);
	put32(b, 0, 77);				/* pid */
	put32(b, 4, 0xffffffff);			/* cpu -1 */
	put32(b, 8, 0xffffffff);			/* exclude_pid -1 */
	ATF_REQUIRE_EQ(lioctl(f, 0x40104b07, b, 16), 0);
	ATF_CHECK_EQ(f->cs.s.filter_pid, 77);

	/* 1.5: PROG_LOAD (32 bytes) of IMM 1, RET; ARM with PROG (0x10). */
	memset(prog, 0, sizeof(prog));
	prog[0] = 1;					/* IMM */
	put64(prog, 8, 1);
	prog[16] = 29;					/* RET */
	memset(b, 0, 32);
	put64(b, 0, (uintptr_t)prog);
	put32(b, 8, 2);
	user_lend(prog, sizeof(prog), 0);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0204b10, b, 32), 0);
	user_reset();
	ATF_CHECK_EQ(get32(b, 20), 0);			/* verdict OK */
	ATF_REQUIRE_EQ(old_arm(f, arm, "f_small", 8, 0x10, get32(b, 16)), 0);

	/* 1.6: AGG_SETUP (48 bytes), COUNT with PROBE, _pad (nstacks) 0. */
	memset(b, 0, 48);
	put32(b, 0, 1);
	put32(b, 4, 0x1);
	put32(b, 8, 16);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0304b12, b, 48), 0);
	ATF_CHECK_EQ(get32(b, 8), 16);			/* nslots */
	ATF_CHECK_EQ(get32(b, 40), 56);			/* entry_size */
	ATF_CHECK_EQ(get32(b, 44), 0);
	/* 1.6: AGG_STATS (24 bytes), elements of 32; AGG_CLEAR (8). */
	memset(b, 0, 24);
	put64(b, 0, (uintptr_t)(b + 32));
	put32(b, 8, 2);
	user_lend(b + 32, 64, 1);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0184b15, b, 24), 0);
	user_reset();
	ATF_CHECK_EQ(get32(b, 12), 2);
	ATF_CHECK_EQ(get32(b, 16), 16);
	memset(b, 0, 8);
	ATF_CHECK_EQ(lioctl(f, 0xc0084b14, b, 8), 0);

	/* 1.10: TS_SETUP (16 bytes), TS_STATS _IOR 96 bytes. */
	memset(b, 0, 16);
	put32(b, 0, 5);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0104b17, b, 16), 0);
	ATF_CHECK_EQ(get32(b, 0), 8);			/* rounded up */
	ATF_CHECK_EQ(get64(b, 8), 1000000000ull);	/* idle_ns */
	memset(b, 0xa5, 96);
	ATF_REQUIRE_EQ(lioctl(f, 0x80604b18, b, 96), 0);
	ATF_CHECK_EQ(get64(b, 88), 8);			/* nslots */

	/* 1.11: RING (24 bytes) asks; 1.12: WAKE (8 bytes). */
	memset(b, 0, 24);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0184b19, b, 24), 0);
	ATF_CHECK_EQ(get32(b, 0), 4096);
	ATF_CHECK_EQ(get32(b, 16), 2);
	ATF_CHECK_EQ(get32(b, 20), 1);			/* allocated */
	memset(b, 0, 8);
	put32(b, 0, 1024);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0084b1a, b, 8), 0);

	/* 1.0: DISARM (8 bytes) of every probe. */
	put32(b, 0, 0xffffffff);
	put32(b, 4, 0);
	ATF_REQUIRE_EQ(lioctl(f, 0xc0084b03, b, 8), 0);
	ATF_CHECK_EQ(get32(b, 4), 3);			/* ndisarmed */

	/* A record as read(2) returns it, parsed at 1.0's offsets. */
	put_record(f, 1, 99);
	{
		size_t n;

		ATF_REQUIRE_EQ(kinst_dev_read(&dev, f, 4096, true, &n), 0);
		ATF_REQUIRE_EQ(n, 208);
		ATF_CHECK_EQ(get32(f->bounce, 0), 208);		/* hdr.size */
		ATF_CHECK_EQ(get32(f->bounce, 4) & 0xffff, 1);	/* HIT */
		ATF_CHECK_EQ(get32(f->bounce, 8), 1);		/* cpu */
		ATF_CHECK_EQ(get32(f->bounce, 12), 99);		/* probe_id */
	}
	dev_close_file(f);
	check_text_clean();
	check_no_leaks();
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, errno_values);
	ATF_TP_ADD_TC(tp, commands);
	ATF_TP_ADD_TC(tp, bad_arguments);
	ATF_TP_ADD_TC(tp, arm_list_close);
	ATF_TP_ADD_TC(tp, arm_gate_and_kick);
	ATF_TP_ADD_TC(tp, random_structures);
	ATF_TP_ADD_TC(tp, read_and_poll);
	ATF_TP_ADD_TC(tp, open_out_of_memory);
	ATF_TP_ADD_TC(tp, ring_size);
	ATF_TP_ADD_TC(tp, mmap_rings);
	ATF_TP_ADD_TC(tp, wake_watermark);
	ATF_TP_ADD_TC(tp, older_clients);
	return (atf_no_error());
}
