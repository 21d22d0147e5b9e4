// SPDX-License-Identifier: BSD-2-Clause
/*
 * kinst_lattest.ko: a test module for kinstctl latency and FUNC:return
 * (tests/vm/testmod), never part of kinst.
 *
 * Writing N to /sys/module/kinst_lattest/parameters/run runs N rounds;
 * each round calls, in this order:
 *
 *	kinst_lattest_wait(wait_us)	busy-waits wait_us microseconds
 *					(udelay) and returns wait_us
 *	kinst_lattest_wait(0)		the early path: returns -EINVAL at once
 *	kinst_lattest_rec(3)		recursion: four activations, each
 *					busy-waiting rec_us before and after
 *					its inner call (the innermost once)
 *	kinst_lattest_err(i)		i = the round's number from 0: returns
 *					-ENOENT, -EAGAIN, -EINTR or 7 for
 *					i % 4 = 0, 1, 2, 3
 *
 * Reading `run` gives "rounds=N".
 */
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

static int wait_us = 2000;
module_param(wait_us, int, 0600);
MODULE_PARM_DESC(wait_us, "microseconds kinst_lattest_wait busy-waits (1..100000)");
static int rec_us = 500;
module_param(rec_us, int, 0600);
MODULE_PARM_DESC(rec_us, "microseconds each kinst_lattest_rec activation busy-waits per side");

static volatile long kinst_lattest_sink;
static unsigned long kinst_lattest_rounds;

noinline int
kinst_lattest_wait(int us)
{
	if (us <= 0)
		return (-EINVAL);
	udelay(us);
	kinst_lattest_sink = us;
	return (us);
}

noinline long
kinst_lattest_rec(int depth)
{
	long r;

	udelay(READ_ONCE(rec_us));
	if (depth <= 0)
		return (0);
	r = kinst_lattest_rec(depth - 1);
	kinst_lattest_sink = r;		/* no tail call, no loop */
	udelay(READ_ONCE(rec_us));
	return (r + depth);
}

noinline int
kinst_lattest_err(unsigned long i)
{
	kinst_lattest_sink = (long)i;
	switch (i % 4) {
	case 0:
		return (-ENOENT);
	case 1:
		return (-EAGAIN);
	case 2:
		return (-EINTR);
	}
	return (7);
}

static int
kinst_lattest_set(const char *val, const struct kernel_param *kp)
{
	int n, i, us = READ_ONCE(wait_us);

	if (kstrtoint(val, 0, &n) != 0 || n < 0 || n > 10000 || us < 1 || us > 100000)
		return (-EINVAL);
	for (i = 0; i < n; i++) {
		kinst_lattest_sink += kinst_lattest_wait(us);
		kinst_lattest_sink += kinst_lattest_wait(0);
		kinst_lattest_sink += kinst_lattest_rec(3);
		kinst_lattest_sink += kinst_lattest_err(kinst_lattest_rounds);
		kinst_lattest_rounds++;
	}
	return (0);
}

static int
kinst_lattest_get(char *buf, const struct kernel_param *kp)
{
	return (scnprintf(buf, PAGE_SIZE, "rounds=%lu\n", kinst_lattest_rounds));
}

static const struct kernel_param_ops kinst_lattest_ops = {
	.set = kinst_lattest_set,
	.get = kinst_lattest_get,
};
module_param_cb(run, &kinst_lattest_ops, NULL, 0600);
MODULE_PARM_DESC(run, "write N: run N rounds; read: rounds so far");

MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("kinst tests: latency and return probes");
