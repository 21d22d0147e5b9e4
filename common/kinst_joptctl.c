/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Jump-optimized probes on the control path (issue 13; docs/engine.md,
 * "Installation"): the optimizer the shim's worker runs
 * (kinst_ctl_optimize), and what arming and disarming need from it (undo a
 * jump, leave the queue).  Control lock held throughout; kinst_control.h
 * has the arm and disarm sequences, kinst_controlvar.h what this file
 * shares with kinst_control.c.
 */

#include "kinst_control.h"
#include "kinst_controlvar.h"
#include "kinst_os.h"
#include "kinst_jopt.h"
#include "kinst_detour.h"

void
kinst_ctl_jump_enable(struct kinst_ctl *c, uint64_t handler, uint64_t arg,
    bool single_insn)
{
	c->jhandler = handler;
	c->jarg = arg;
	c->jsingle = single_insn ? 1 : 0;
}

bool
kinst_ctl_opt_pending(struct kinst_ctl *c)
{
	bool pending;

	kinst_os_ctl_lock();
	pending = c->opt_queue != NULL;
	kinst_os_ctl_unlock();
	return (pending);
}

void
kinst_ctl_opt_queue(struct kinst_ctl *c, struct kinst_group *g)
{
	if (c->jhandler == 0)
		return;
	g->opt_next = c->opt_queue;
	c->opt_queue = g;
	g->opt_queued = 1;
}

void
kinst_ctl_opt_dequeue(struct kinst_ctl *c, struct kinst_group *g)
{
	struct kinst_group **gp;

	if (!g->opt_queued)
		return;
	for (gp = &c->opt_queue; *gp != NULL; gp = &(*gp)->opt_next)
		if (*gp == g) {
			*gp = g->opt_next;
			break;
		}
	g->opt_next = NULL;
	g->opt_queued = 0;
}

/*
 * One stage of a probe's jump, text lock held: stage 0 the int3, 1 the
 * original bytes 1..4, 2 the rel32, 3 the jmp opcode.
 */
static void
ctl_jwrite(struct kinst_cprobe *cp, int stage)
{
	uint32_t k, rel;

	rel = (uint32_t)(cp->jdetour - (cp->p.addr + KINST_JOPT_WINDOW));
	switch (stage) {
	case 0:
		kinst_os_text_write(cp->p.addr, 0xcc);
		break;
	case 1:
		for (k = 1; k < KINST_JOPT_WINDOW; k++)
			kinst_os_text_write(cp->p.addr + k, cp->jorig[k]);
		break;
	case 2:
		for (k = 1; k < KINST_JOPT_WINDOW; k++)
			kinst_os_text_write(cp->p.addr + k,
			    (uint8_t)(rel >> (8 * (k - 1))));
		break;
	default:
		kinst_os_text_write(cp->p.addr, 0xe9);
		break;
	}
}

/*
 * One stage for cps[0 .. n-1].  Like ctl_publish() (kinst_control.c), every
 * batch is stored
 * again after a synchronization.
 */
static void
ctl_jtext(struct kinst_cprobe **cps, uint32_t n, int stage)
{
	uint32_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++)
			ctl_jwrite(cps[i], stage);
		kinst_os_text_sync();
	}
}

/*
 * Back to an int3 probe, text lock held: the int3 over the jmp's opcode,
 * then the original bytes under its rel32, then the int3 path goes back to
 * the trampoline.  Until then a hit traps and resumes in the detour, so no
 * thread enters the window's interior while it changes; threads already
 * in the detour leave it by its jmp back after the window.  The detour
 * stays allocated until its group is freed (after kinst_os_sync_tasks).
 */
void
kinst_ctl_unoptimize(struct kinst_ctl *c, struct kinst_cprobe **cps,
    uint32_t n)
{
	uint32_t i;

	if (n == 0)
		return;
	ctl_jtext(cps, n, 0);
	ctl_jtext(cps, n, 1);
	for (i = 0; i < n; i++) {
		KINST_STORE_RELEASE(&cps[i]->p.jresume, 0);
		cps[i]->jstate = KINST_JS_NONE;
		c->njump--;
	}
}

/* kinst_ctl_unoptimize() for the session's jump probes with id (or all). */
void
kinst_ctl_unoptimize_sel(struct kinst_ctl *c, struct kinst_csession *cs,
    uint32_t id)
{
	struct kinst_group *g;
	struct kinst_cprobe *cp;
	uint32_t i, n;
	int stage, pass;

#define	CTL_JSEL(cp)	((cp)->live && (cp)->jstate != KINST_JS_NONE && \
	(id == KINST_ALL_PROBES || (cp)->p.id == id))
	n = 0;
	for (g = cs->groups; g != NULL; g = g->next)
		for (i = 0; i < g->nprobes; i++)
			if (CTL_JSEL(&g->probes[i]) &&
			    g->probes[i].jstate == KINST_JS_JUMP)
				n++;
	for (stage = 0; stage < 2 && n != 0; stage++)
		for (pass = 0; pass < 2; pass++) {
			for (g = cs->groups; g != NULL; g = g->next)
				for (i = 0; i < g->nprobes; i++) {
					cp = &g->probes[i];
					if (CTL_JSEL(cp) &&
					    cp->jstate == KINST_JS_JUMP)
						ctl_jwrite(cp, stage);
				}
			kinst_os_text_sync();
		}
	for (g = cs->groups; g != NULL; g = g->next)
		for (i = 0; i < g->nprobes; i++) {
			cp = &g->probes[i];
			if (!CTL_JSEL(cp))
				continue;
			KINST_STORE_RELEASE(&cp->p.jresume, 0);
			if (cp->jstate == KINST_JS_JUMP)
				c->njump--;
			cp->jstate = KINST_JS_NONE;
		}
#undef	CTL_JSEL
}

/* The jump probe whose window's interior holds addr, if any. */
struct kinst_cprobe *
kinst_ctl_jump_covering(struct kinst_ctl *c, uint64_t addr)
{
	struct kinst_cprobe *cp;
	uint32_t d;

	if (c->njump == 0)
		return (NULL);
	for (d = 1; d < KINST_JOPT_WINDOW && d <= addr; d++) {
		cp = (struct kinst_cprobe *)ctl_probe_at(c, addr - d);
		if (cp != NULL && cp->jstate == KINST_JS_JUMP &&
		    d < cp->jlen)
			return (cp);
	}
	return (NULL);
}

struct ctl_jctx {
	const struct kinst_func *f;
	const uint8_t	*text;
	uint32_t	size;
};

static int
ctl_jopt_refusal(void *arg, uint32_t off)
{
	struct ctl_jctx *x = arg;
	uint32_t len;

	len = kinst_insn_length(x->text + off, x->size - off);
	if (len == 0)
		return (KINST_R_NONE);	/* the qualifier sees the failure itself */
	return (kinst_os_jopt_check(x->f, x->f->addr + off, x->text + off,
	    len));
}

/*
 * Build and seal the detours of g's probes that qualify (control and text
 * locks held).  Returns how many; they are then KINST_JS_BUILT.
 */
static uint32_t
ctl_opt_build(struct kinst_ctl *c, struct kinst_group *g)
{
	struct kinst_detour_spec sp;
	struct ctl_jctx x;
	struct kinst_cprobe *cp;
	uint8_t *text, *v, *det;
	uint64_t daddr, a;
	uint32_t i, n, k, d, wlen, wstart, size;

	size = (uint32_t)g->func.size;
	text = kinst_os_alloc(size);
	v = kinst_os_alloc(size);
	k = 0;
	if (text == NULL || v == NULL ||
	    kinst_ctl_read_text(c, &g->func, text, size) != KINST_E_OK)
		goto out;
	x.f = &g->func;
	x.text = text;
	x.size = size;
	(void)kinst_jopt_qualify(text, size, ctl_jopt_refusal, &x, v);
	/* Qualified, and no other probe in the window (any session's). */
	n = 0;
	for (i = 0; i < g->nprobes; i++) {
		cp = &g->probes[i];
		cp->jstate = KINST_JS_NONE;
		if (!cp->live || v[cp->p.offset] != KINST_JQ_YES ||
		    (c->jsingle && cp->p.insn.len < KINST_JOPT_WINDOW))
			continue;
		a = cp->p.addr;
		for (d = 1; d < KINST_JOPT_WINDOW; d++)
			if (ctl_probe_at(c, a + d) != NULL)
				break;
		if (d < KINST_JOPT_WINDOW)
			continue;
		cp->jstate = KINST_JS_BUILT;	/* tentatively: a candidate */
		n++;
	}
	if (n == 0)
		goto out;
	g->detour_size = (size_t)n * KINST_DETOUR_SIZE;
	det = kinst_os_tramp_alloc(g->detour_size, &daddr);
	if (det == NULL) {
		for (i = 0; i < g->nprobes; i++)
			g->probes[i].jstate = KINST_JS_NONE;
		goto out;
	}
	for (i = 0; i < g->nprobes; i++) {
		cp = &g->probes[i];
		if (cp->jstate != KINST_JS_BUILT)
			continue;
		kinst_bzero(&sp, sizeof(sp));
		sp.addr = cp->p.addr;
		sp.at = daddr + (uint64_t)k * KINST_DETOUR_SIZE;
		sp.handler = c->jhandler;
		sp.arg = c->jarg;
		sp.redzone = 0;		/* kernels: -mno-red-zone */
		if (kinst_detour_build(text + cp->p.offset,
		    size - cp->p.offset, &sp,
		    det + (size_t)k * KINST_DETOUR_SIZE, &wlen, &wstart) !=
		    KINST_RELOC_OK) {
			cp->jstate = KINST_JS_NONE;
			continue;
		}
		cp->jlen = (uint8_t)wlen;
		kinst_copy(cp->jorig, text + cp->p.offset, KINST_JOPT_WINDOW);
		cp->jdetour = sp.at;
		cp->jwindow = sp.at + wstart;
		k++;
	}
	if (k == 0 || kinst_os_tramp_seal(det, g->detour_size) != 0) {
		kinst_os_tramp_free(det, g->detour_size);
		for (i = 0; i < g->nprobes; i++)
			g->probes[i].jstate = KINST_JS_NONE;
		k = 0;
		goto out;
	}
	g->detour = det;
	g->detour_addr = daddr;
out:
	if (text != NULL)
		kinst_os_free(text, size);
	if (v != NULL)
		kinst_os_free(v, size);
	return (k);
}

/*
 * Install the jumps of every queued group's qualifying probes (a worker of
 * the shim's; may sleep long).  The control lock is held throughout, so no
 * probe is armed or disarmed meanwhile; the text lock is dropped for the
 * wait.
 *
 *   1. build and seal each detour (ctl_opt_build);
 *   2. jresume: the int3 path now runs the whole window in the detour, so
 *      no new thread enters the window's interior; quiesce, so that no CPU
 *      is still in a trampoline that jumps back into it;
 *   3. kinst_os_sync_tasks(): every thread that was inside a window's
 *      interior (running, interrupted or preempted there) has left it;
 *   4. check that each window still holds the int3 and its original bytes;
 *      write the rel32s, synchronize, the jmp opcodes, synchronize.
 */
uint32_t
kinst_ctl_optimize(struct kinst_ctl *c)
{
	struct kinst_group *g, *ready;
	struct kinst_cprobe *cp, **cps;
	uint8_t cur[KINST_JOPT_WINDOW];
	uint32_t i, k, n, m;

	kinst_os_ctl_lock();
	ready = NULL;
	n = 0;
	while ((g = c->opt_queue) != NULL) {
		c->opt_queue = g->opt_next;
		g->opt_next = NULL;
		g->opt_queued = 0;
		if (c->jhandler == 0 || g->nlive == 0 || g->detour != NULL)
			continue;
		kinst_os_text_lock();
		k = ctl_opt_build(c, g);
		kinst_os_text_unlock();
		if (k != 0) {
			g->opt_next = ready;
			ready = g;
			n += k;
		}
	}
	cps = n != 0 ? kinst_os_alloc((size_t)n * sizeof(*cps)) : NULL;
	if (cps == NULL) {
		/* Nothing to do, or no memory: the probes stay int3 probes. */
		for (g = ready; g != NULL; g = ready) {
			ready = g->opt_next;
			g->opt_next = NULL;
			for (i = 0; i < g->nprobes; i++)
				g->probes[i].jstate = KINST_JS_NONE;
		}
		kinst_os_ctl_unlock();
		return (0);
	}
	m = 0;
	for (g = ready; g != NULL; g = g->opt_next)
		for (i = 0; i < g->nprobes; i++) {
			cp = &g->probes[i];
			if (cp->jstate != KINST_JS_BUILT)
				continue;
			KINST_STORE_RELEASE(&cp->p.jresume, cp->jwindow);
			cp->jstate = KINST_JS_RESUME;
			cps[m++] = cp;
		}
	for (g = ready; g != NULL; g = ready) {
		ready = g->opt_next;
		g->opt_next = NULL;
	}
	kinst_os_quiesce();
	kinst_os_sync_tasks();

	kinst_os_text_lock();
	/* Only windows exactly as the detours were built from. */
	k = 0;
	for (i = 0; i < m; i++) {
		cp = cps[i];
		if (kinst_os_read(cp->p.addr, cur, sizeof(cur)) != 0 ||
		    cur[0] != 0xcc || !ctl_same(cur + 1, cp->jorig + 1,
		    KINST_JOPT_WINDOW - 1)) {
			KINST_STORE_RELEASE(&cp->p.jresume, 0);
			cp->jstate = KINST_JS_NONE;
			continue;
		}
		cps[k++] = cp;
	}
	if (k != 0) {
		ctl_jtext(cps, k, 2);
		ctl_jtext(cps, k, 3);
	}
	for (i = 0; i < k; i++)
		cps[i]->jstate = KINST_JS_JUMP;
	c->njump += k;
	kinst_os_text_unlock();
	kinst_os_ctl_unlock();
	kinst_os_free(cps, (size_t)n * sizeof(*cps));
	return (k);
}
