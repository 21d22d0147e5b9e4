/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: the probe-program ioctls (KINST_IOC_PROG_LOAD,
 * KINST_IOC_PROG_STATS).  Copy in, call common/kinst_progctl.c, copy out;
 * every field is validated there.  Returns a KINST_E_* code.
 */

#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kinst_linux.h"
#include "kinst_prog.h"

int
kinst_linux_prog_load(struct kinst_ctl *c, struct kinst_csession *cs,
    void __user *up)
{
	struct kinst_prog_load pl;
	struct kinst_pinsn *code;
	int err;

	if (copy_from_user(&pl, up, sizeof(pl)) != 0)
		return (KINST_E_FAULT);
	code = NULL;
	if (pl.ninsns != 0 && pl.ninsns <= KINST_PROG_MAX_INSNS) {
		code = kvmalloc_array(pl.ninsns, sizeof(*code), GFP_KERNEL);
		if (code == NULL)
			return (KINST_E_NOMEM);
		if (copy_from_user(code, u64_to_user_ptr(pl.insns),
		    (size_t)pl.ninsns * sizeof(*code)) != 0) {
			kvfree(code);
			return (KINST_E_FAULT);
		}
	}
	err = kinst_ctl_prog_load(c, cs, &pl, code);
	kvfree(code);
	/* The verdict goes back with the refusal too. */
	if (copy_to_user(up, &pl, sizeof(pl)) != 0)
		return (KINST_E_FAULT);
	return (err);
}

int
kinst_linux_prog_stats(struct kinst_ctl *c, struct kinst_csession *cs,
    void __user *up)
{
	struct kinst_prog_stats ps;
	struct kinst_prog_cpu_stats *out;
	uint32_t cap;
	int err;

	if (copy_from_user(&ps, up, sizeof(ps)) != 0)
		return (KINST_E_FAULT);
	cap = min_t(uint32_t, ps.cap, cs->s.ncpus);
	out = NULL;
	if (cap != 0) {
		out = kvcalloc(cap, sizeof(*out), GFP_KERNEL);
		if (out == NULL)
			return (KINST_E_NOMEM);
	}
	kinst_ctl_prog_stats(c, cs, out, cap, &ps);
	err = KINST_E_OK;
	if (cap != 0 && copy_to_user(u64_to_user_ptr(ps.buf), out,
	    (size_t)cap * sizeof(*out)) != 0)
		err = KINST_E_FAULT;
	kvfree(out);
	if (err == KINST_E_OK && copy_to_user(up, &ps, sizeof(ps)) != 0)
		err = KINST_E_FAULT;
	return (err);
}
