/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What kinst_control.c and kinst_joptctl.c (the jump optimizer) share;
 * not part of the control path's interface (kinst_control.h).  Every
 * function here is called with the control lock held.
 */
#ifndef KINST_CONTROLVAR_H
#define KINST_CONTROLVAR_H

#include "kinst_bytes.h"
#include "kinst_control.h"


static inline bool
ctl_same(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return (false);
	return (true);
}

/* Our live probe at exactly addr, if any. */
static inline struct kinst_probe *
ctl_probe_at(struct kinst_ctl *c, uint64_t addr)
{
	struct kinst_probe *p;

	p = kinst_ptable_lookup(&c->engine->table, addr);
	if (p != NULL && p->addr == addr)
		return (p);
	return (NULL);
}

/* kinst_control.c: the function's text with kinst's int3s and jumps out. */
int	kinst_ctl_read_text(struct kinst_ctl *c, const struct kinst_func *f,
	    uint8_t *buf, size_t len);

/*
 * kinst_joptctl.c.  Queue a group just armed for kinst_ctl_optimize()
 * (nothing when the shim enabled no jumps), take it off the queue (before
 * it is freed); turn jump probes back into int3 probes, text lock held:
 * cps[0 .. n-1], or the session's probes with id (or KINST_ALL_PROBES)
 * whose jump is built or in; the jump probe whose window's interior holds
 * addr, if any.
 */
void	kinst_ctl_opt_queue(struct kinst_ctl *c, struct kinst_group *g);
void	kinst_ctl_opt_dequeue(struct kinst_ctl *c, struct kinst_group *g);
void	kinst_ctl_unoptimize(struct kinst_ctl *c, struct kinst_cprobe **cps,
	    uint32_t n);
void	kinst_ctl_unoptimize_sel(struct kinst_ctl *c,
	    struct kinst_csession *cs, uint32_t id);
struct kinst_cprobe *kinst_ctl_jump_covering(struct kinst_ctl *c,
	    uint64_t addr);

#endif /* !KINST_CONTROLVAR_H */
