// SPDX-License-Identifier: BSD-2-Clause
/*
 * kinst_srctest.ko: a test module for source-level specs (tests/vm/testmod),
 * never part of kinst.  Built with DWARF (-g), which the .ko keeps.
 *
 * Writing /sys/module/kinst_srctest/parameters/run runs, once each:
 *
 *	kinst_srctest_loop(trips)	a loop of `trips` iterations
 *	kinst_srctest_branch(taken)	one branch, taken when `taken` != 0
 *	kinst_srctest_point(pt)		a function with a struct argument
 *
 * and kinst_srctest_mix, a static inline helper forced inline
 * (__always_inline), is inlined into all three: it runs trips + (taken ? 1
 * : 0) + 1 times per run.  Reading `run` gives "runs=N result=R".
 *
 * The tests find lines by the markers in the comments ("L:name"), never by
 * number, so that this file can change.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

struct kinst_srctest_pt {
	long x;
	long y;
	int tag;
};

static int trips = 3;
module_param(trips, int, 0600);
MODULE_PARM_DESC(trips, "iterations of kinst_srctest_loop per run (0..1000)");
static int taken;
module_param(taken, int, 0600);
MODULE_PARM_DESC(taken, "non-zero: kinst_srctest_branch takes its branch");

static volatile long kinst_srctest_sink;
static long kinst_srctest_result;
static unsigned long kinst_srctest_runs;

static __always_inline long
kinst_srctest_mix(long a, long b)
{
	long r = a * 3 + b;			/* L:mix_first */

	kinst_srctest_sink = r;			/* L:mix_store */
	return (r ^ (b << 2));
}

noinline long
kinst_srctest_loop(int n)
{
	long acc = 1;
	int i;

	for (i = 0; i < n; i++) {
		kinst_srctest_sink = i;		/* L:loop_body */
		acc = kinst_srctest_mix(acc, i);	/* L:loop_mix */
	}
	return (acc);
}

noinline long
kinst_srctest_branch(int b, long v)
{
	if (b) {
		kinst_srctest_sink = v;		/* L:branch_taken */
		v = kinst_srctest_mix(v, 7);
	} else {
		kinst_srctest_sink = -v;	/* L:branch_not_taken */
		v -= 11;
	}
	return (v);				/* L:branch_return */
}

noinline long
kinst_srctest_point(struct kinst_srctest_pt p)
{
	return (kinst_srctest_mix(p.x, p.y) + p.tag);	/* L:point_mix */
}

/*
 * Recursion: several activations on one thread.  After the recursive call
 * its parameters are dead, so their DWARF locations there are entry values
 * (DW_OP_entry_value): each activation must read its own.
 */
noinline long
kinst_srctest_rec(long depth, long tag)
{
	long r;

	if (depth <= 0)
		return (tag);
	r = kinst_srctest_rec(depth - 1, tag * 2 + depth);
	kinst_srctest_sink = r;			/* L:rec_after */
	return (r + 1);
}

/*
 * A struct local split over two registers (DW_OP_piece): q lives in
 * callee-saved registers across the call, no byte of it in memory.
 */
struct kinst_srctest_pair {
	int	lo;
	int	hi;
};

noinline long
kinst_srctest_ext(long a, long b)
{
	kinst_srctest_sink = a;
	return (a * 5 + b);
}

noinline long
kinst_srctest_split(long x, long y)
{
	struct kinst_srctest_pair q = { (int)(x + 1), (int)(y - 1) };
	long r;

	r = kinst_srctest_ext(q.lo, q.hi);
	kinst_srctest_sink = r;			/* L:split_after */
	return (r + (long)q.lo * q.hi);
}

/*
 * A 16-byte struct kept in pieces through a loop (issue 43): no byte of st
 * in memory; on the line marked hv_body an expression filters, counts and
 * sums by its members ($st.steps is the iteration's number from 1).
 */
struct kinst_srctest_hv {
	long	sum;
	int	steps;
	int	flags;
};

noinline void
kinst_srctest_keep(long *p)
{
	kinst_srctest_sink = *p;
}

/*
 * (Also, on that line: n in a register, slot in a stack slot found through
 * the CFA (its address escapes), seed dead since slot's start, so an entry
 * value: the variables tests/bench/guest_vars_rate.sh reads per hit.)
 */
noinline long
kinst_srctest_hv(int n, long seed)
{
	struct kinst_srctest_hv st = { 0, 0, n & 3 };
	long slot = kinst_srctest_ext(seed, 1);
	int i;

	kinst_srctest_keep(&slot);
	for (i = 0; i < n; i++) {
		st.sum += (long)i * st.flags + i;
		st.steps++;
		kinst_srctest_sink = st.sum + slot;	/* L:hv_body */
	}
	return (st.sum + st.steps + st.flags);
}

static int
kinst_srctest_set(const char *val, const struct kernel_param *kp)
{
	struct kinst_srctest_pt pt = { .x = 5, .y = 9, .tag = 2 };
	int n = READ_ONCE(trips);

	if (n < 0 || n > 1000)
		return (-EINVAL);
	kinst_srctest_result = kinst_srctest_loop(n) +
	    kinst_srctest_branch(READ_ONCE(taken), n) + kinst_srctest_point(pt) +
	    kinst_srctest_rec(3 + (n & 1), n) + kinst_srctest_split(n, 2 * n) +
	    kinst_srctest_hv(n, 3 * n);
	kinst_srctest_runs++;
	return (0);
}

static int
kinst_srctest_get(char *buf, const struct kernel_param *kp)
{
	return (scnprintf(buf, PAGE_SIZE, "runs=%lu result=%ld\n",
	    kinst_srctest_runs, kinst_srctest_result));
}

static const struct kernel_param_ops kinst_srctest_ops = {
	.set = kinst_srctest_set,
	.get = kinst_srctest_get,
};
module_param_cb(run, &kinst_srctest_ops, NULL, 0600);
MODULE_PARM_DESC(run, "write: run the functions once; read: runs and result");

MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("kinst tests: source lines and inline functions");
