/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: the aggregation ioctls (KINST_IOC_AGG_SETUP, _READ,
 * _CLEAR, _STATS, _STACKS).  Copy in, call common/kinst_aggctl.c (which validates
 * every field), copy out.  Returns a KINST_E_* code.
 */

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kinst_linux.h"

int
kinst_linux_agg_ioctl(struct kinst_ctl *c, struct kinst_csession *cs,
    unsigned int cmd, void __user *up)
{
	switch (cmd) {
	case KINST_IOC_AGG_SETUP:
		return (kinst_linux_agg_setup(c, cs, up));
	case KINST_IOC_AGG_READ:
		return (kinst_linux_agg_read(c, cs, up));
	case KINST_IOC_AGG_CLEAR: {
		struct kinst_agg_clear cl;

		if (copy_from_user(&cl, up, sizeof(cl)) != 0)
			return (KINST_E_FAULT);
		return (kinst_ctl_agg_clear(c, cs, &cl));
	}
	case KINST_IOC_AGG_STACKS:
		return (kinst_linux_agg_stacks(c, cs, up));
	default:
		return (kinst_linux_agg_stats(c, cs, up));
	}
}

/* KINST_IOC_AGG_STACKS: one CPU's stacks (KINST_AGGF_STACK). */
int
kinst_linux_agg_stacks(struct kinst_ctl *c, struct kinst_csession *cs,
    void __user *up)
{
	struct kinst_agg_stack *out;
	struct kinst_agg_read rd;
	uint32_t nstacks, cap;
	int err;

	if (copy_from_user(&rd, up, sizeof(rd)) != 0)
		return (KINST_E_FAULT);
	if ((err = kinst_ctl_agg_stack_geom(cs, &nstacks)) != KINST_E_OK)
		return (err);
	cap = min_t(uint32_t, rd.cap, nstacks);
	out = NULL;
	if (cap != 0 &&
	    (out = kvmalloc_array(cap, sizeof(*out), GFP_KERNEL)) == NULL)
		return (KINST_E_NOMEM);
	err = kinst_ctl_agg_stacks(c, cs, &rd, out, cap);
	if (err == KINST_E_OK && rd.count != 0 &&
	    copy_to_user(u64_to_user_ptr(rd.buf), out,
	    (size_t)rd.count * sizeof(*out)) != 0)
		err = KINST_E_FAULT;
	kvfree(out);
	if (err == KINST_E_OK && copy_to_user(up, &rd, sizeof(rd)) != 0)
		err = KINST_E_FAULT;
	return (err);
}

int
kinst_linux_agg_setup(struct kinst_ctl *c, struct kinst_csession *cs,
    void __user *up)
{
	struct kinst_agg_setup su;
	int err;

	if (copy_from_user(&su, up, sizeof(su)) != 0)
		return (KINST_E_FAULT);
	err = kinst_ctl_agg_setup(c, cs, &su);
	if (err == KINST_E_OK && copy_to_user(up, &su, sizeof(su)) != 0)
		err = KINST_E_FAULT;
	return (err);
}

int
kinst_linux_agg_read(struct kinst_ctl *c, struct kinst_csession *cs,
    void __user *up)
{
	struct kinst_agg_read rd;
	uint32_t nslots, esize, cap;
	uint8_t *out;
	int err;

	if (copy_from_user(&rd, up, sizeof(rd)) != 0)
		return (KINST_E_FAULT);
	if ((err = kinst_ctl_agg_geom(cs, &nslots, &esize)) != KINST_E_OK)
		return (err);
	cap = min_t(uint32_t, rd.cap, nslots);
	out = NULL;
	if (cap != 0 && (out = kvmalloc_array(cap, esize, GFP_KERNEL)) == NULL)
		return (KINST_E_NOMEM);
	err = kinst_ctl_agg_read(c, cs, &rd, out, cap);
	if (err == KINST_E_OK && rd.count != 0 &&
	    copy_to_user(u64_to_user_ptr(rd.buf), out,
	    (size_t)rd.count * esize) != 0)
		err = KINST_E_FAULT;
	kvfree(out);
	if (err == KINST_E_OK && copy_to_user(up, &rd, sizeof(rd)) != 0)
		err = KINST_E_FAULT;
	return (err);
}

int
kinst_linux_agg_stats(struct kinst_ctl *c, struct kinst_csession *cs,
    void __user *up)
{
	struct kinst_agg_stats st;
	struct kinst_agg_cpu_stats *out;
	uint32_t cap;
	int err;

	if (copy_from_user(&st, up, sizeof(st)) != 0)
		return (KINST_E_FAULT);
	cap = min_t(uint32_t, st.cap, cs->s.ncpus);
	out = NULL;
	if (cap != 0 && (out = kvcalloc(cap, sizeof(*out), GFP_KERNEL)) ==
	    NULL)
		return (KINST_E_NOMEM);
	err = kinst_ctl_agg_stats(c, cs, out, cap, &st);
	if (err == KINST_E_OK && cap != 0 &&
	    copy_to_user(u64_to_user_ptr(st.buf), out,
	    (size_t)cap * sizeof(*out)) != 0)
		err = KINST_E_FAULT;
	kvfree(out);
	if (err == KINST_E_OK && copy_to_user(up, &st, sizeof(st)) != 0)
		err = KINST_E_FAULT;
	return (err);
}
