/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What kinst_control.c, kinst_joptctl.c (the jump optimizer) and
 * kinst_ctltext.c (the text and blocks both use) share; not part of the
 * control path's interface (kinst_control.h).  Every function here is
 * called with the control lock held.
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

/* The site a table entry is (the control path's entries are all sites). */
static inline struct kinst_csite *
ctl_site(struct kinst_probe *p)
{
	return ((struct kinst_csite *)(void *)p);	/* p is its first member */
}

/* Our site at exactly addr, if any. */
static inline struct kinst_csite *
ctl_site_at(struct kinst_ctl *c, uint64_t addr)
{
	struct kinst_probe *p;

	p = ctl_probe_at(c, addr);
	return (p != NULL ? ctl_site(p) : NULL);
}

/* The session's subscriber of st, if it has one. */
static inline struct kinst_probe *
ctl_site_sub(struct kinst_csite *st, const struct kinst_session *s)
{
	struct kinst_probe *q;

	for (q = st->p.next; q != NULL; q = q->next)
		if (q->session == s)
			return (q);
	return (NULL);
}

/* kinst_ctltext.c: the function's text with kinst's int3s and jumps out. */
int	kinst_ctl_read_text(struct kinst_ctl *c, const struct kinst_func *f,
	    uint8_t *buf, size_t len);

/*
 * kinst_ctltext.c: a trampoline or detour block with no site yet; drop a
 * site's reference to one (the last frees it; a block no site took is
 * freed at once).
 */
struct kinst_xblock *kinst_ctl_xblock_new(size_t size);
void	kinst_ctl_xblock_put(struct kinst_xblock *b);

/*
 * kinst_joptctl.c.  Queue a group just armed for kinst_ctl_optimize()
 * (nothing when the shim enabled no jumps), take it off the queue (before
 * it is freed); turn jump sites back into int3 sites, text lock held:
 * sts[0 .. n-1], or the marked sites (st->mark) whose jump is in; the
 * jump site whose window's interior holds addr, if any.
 */
void	kinst_ctl_opt_queue(struct kinst_ctl *c, struct kinst_group *g);
void	kinst_ctl_opt_dequeue(struct kinst_ctl *c, struct kinst_group *g);
void	kinst_ctl_unoptimize(struct kinst_ctl *c, struct kinst_csite **sts,
	    uint32_t n);
void	kinst_ctl_unoptimize_marked(struct kinst_ctl *c);
struct kinst_csite *kinst_ctl_jump_covering(struct kinst_ctl *c,
	    uint64_t addr);

#endif /* !KINST_CONTROLVAR_H */
