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
#include "kinst_isa.h"

void
kinst_ctl_jump_enable(struct kinst_ctl *c, uint64_t handler, uint64_t arg,
    bool single_insn, uint32_t detour_flags)
{
	c->jhandler = handler;
	c->jarg = arg;
	c->jsingle = single_insn ? 1 : 0;
	c->jdflags = detour_flags;
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
 * One stage of a site's jump (kinst_isa_jump's bytes), text lock held:
 * stage 0 the int3, 1 the original bytes 1..4, 2 the jump's (the rel32),
 * 3 the jump's first (the jmp opcode).
 */
static void
ctl_jwrite(struct kinst_csite *st, int stage)
{
	uint8_t jmp[KINST_JOPT_WINDOW];
	uint32_t k;

	kinst_isa_jump(st->p.addr, st->jdetour, jmp);
	switch (stage) {
	case 0:
		kinst_os_text_write(st->p.addr, KINST_BP_BYTE);
		break;
	case 1:
		for (k = 1; k < KINST_JOPT_WINDOW; k++)
			kinst_os_text_write(st->p.addr + k, st->jorig[k]);
		break;
	case 2:
		for (k = 1; k < KINST_JOPT_WINDOW; k++)
			kinst_os_text_write(st->p.addr + k, jmp[k]);
		break;
	default:
		kinst_os_text_write(st->p.addr, jmp[0]);
		break;
	}
}

/*
 * One stage for sts[0 .. n-1].  Like ctl_publish() (kinst_control.c),
 * every batch is stored again after a synchronization.
 */
static void
ctl_jtext(struct kinst_csite **sts, uint32_t n, int stage)
{
	uint32_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++)
			ctl_jwrite(sts[i], stage);
		kinst_os_text_sync();
	}
}

/*
 * Back to an int3 site, text lock held: the int3 over the jmp's opcode,
 * then the original bytes under its rel32, then the int3 path goes back to
 * the trampoline.  Until then a hit traps and resumes in the detour, so no
 * thread enters the window's interior while it changes; threads already
 * in the detour leave it by its jmp back after the window.  The detour
 * stays allocated until its site is freed (after kinst_os_sync_tasks).
 */
void
kinst_ctl_unoptimize(struct kinst_ctl *c, struct kinst_csite **sts,
    uint32_t n)
{
	uint32_t i;

	if (n == 0)
		return;
	ctl_jtext(sts, n, 0);
	ctl_jtext(sts, n, 1);
	for (i = 0; i < n; i++) {
		KINST_STORE_RELEASE(&sts[i]->p.jresume, 0);
		sts[i]->jstate = KINST_JS_NONE;
		c->njump--;
	}
}

/* kinst_ctl_unoptimize() for the marked sites whose jump is in. */
void
kinst_ctl_unoptimize_marked(struct kinst_ctl *c)
{
	struct kinst_csite *st;
	uint32_t n;
	int stage, pass;

	n = 0;
	for (st = c->sites; st != NULL; st = st->next)
		if (st->mark && st->jstate == KINST_JS_JUMP)
			n++;
	if (n == 0)
		return;
	for (stage = 0; stage < 2; stage++)
		for (pass = 0; pass < 2; pass++) {
			for (st = c->sites; st != NULL; st = st->next)
				if (st->mark && st->jstate == KINST_JS_JUMP)
					ctl_jwrite(st, stage);
			kinst_os_text_sync();
		}
	for (st = c->sites; st != NULL; st = st->next)
		if (st->mark && st->jstate == KINST_JS_JUMP) {
			KINST_STORE_RELEASE(&st->p.jresume, 0);
			st->jstate = KINST_JS_NONE;
			c->njump--;
		}
}

/* The jump site whose window's interior holds addr, if any. */
struct kinst_csite *
kinst_ctl_jump_covering(struct kinst_ctl *c, uint64_t addr)
{
	struct kinst_csite *st;
	uint32_t d;

	if (c->njump == 0)
		return (NULL);
	for (d = 1; d < KINST_JOPT_WINDOW && d <= addr; d++) {
		st = ctl_site_at(c, addr - d);
		if (st != NULL && st->jstate == KINST_JS_JUMP &&
		    d < st->jlen)
			return (st);
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

/* May st, a site of a probe of g, be optimized now (before the checks)? */
static bool
ctl_opt_wanted(struct kinst_ctl *c, const struct kinst_csite *st)
{
	return (st->jstate == KINST_JS_NONE && st->dblock == NULL &&
	    st->nnoopt == 0 &&
	    (!c->jsingle || st->p.insn.len >= KINST_JOPT_WINDOW));
}

/*
 * Build and seal the detours of the sites of g's probes that qualify
 * (control and text locks held); they are then KINST_JS_BUILT and appended
 * to sts[*m ...] (room for every site).  A site shared with other groups
 * is built once, by the first.
 */
static void
ctl_opt_build(struct kinst_ctl *c, struct kinst_group *g,
    struct kinst_csite **sts, uint32_t *m)
{
	struct kinst_detour_spec sp;
	struct kinst_xblock *b;
	struct ctl_jctx x;
	struct kinst_cprobe *cp;
	struct kinst_csite *st;
	uint8_t *text, *v, *det;
	uint64_t a;
	uint32_t i, n, k, d, wlen, wstart, size, first;

	size = (uint32_t)g->func.size;
	text = kinst_os_alloc(size);
	v = kinst_os_alloc(size);
	first = *m;
	k = 0;
	if (text == NULL || v == NULL ||
	    kinst_ctl_read_text(c, &g->func, text, size) != KINST_E_OK)
		goto out;
	x.f = &g->func;
	x.text = text;
	x.size = size;
	(void)kinst_jopt_qualify(text, size, ctl_jopt_refusal, &x, v);
	/* Qualified, and no other site in the window (any session's). */
	n = 0;
	for (i = 0; i < g->nprobes; i++) {
		cp = &g->probes[i];
		if (!cp->live || cp->site->mark ||
		    v[cp->p.offset] != KINST_JQ_YES ||
		    !ctl_opt_wanted(c, cp->site))
			continue;
		a = cp->p.addr;
		for (d = 1; d < KINST_JOPT_WINDOW; d++)
			if (ctl_probe_at(c, a + d) != NULL)
				break;
		if (d < KINST_JOPT_WINDOW)
			continue;
		cp->site->mark = 1;	/* a candidate */
		n++;
	}
	if (n == 0)
		goto out;
	b = kinst_ctl_xblock_new((size_t)n * KINST_DETOUR_SIZE);
	if (b == NULL)
		goto unmark;
	det = b->mem;
	for (i = 0; i < g->nprobes; i++) {
		cp = &g->probes[i];
		st = cp->site;
		if (!cp->live || !st->mark)
			continue;
		st->mark = 0;
		kinst_bzero(&sp, sizeof(sp));
		sp.addr = st->p.addr;
		sp.at = b->addr + (uint64_t)k * KINST_DETOUR_SIZE;
		sp.handler = c->jhandler;
		sp.arg = c->jarg;
		sp.redzone = 0;		/* kernels: -mno-red-zone */
		sp.flags = c->jdflags;
		if (kinst_detour_build(text + cp->p.offset,
		    size - cp->p.offset, &sp,
		    det + (size_t)k * KINST_DETOUR_SIZE, &wlen, &wstart) !=
		    KINST_RELOC_OK)
			continue;
		st->jlen = (uint8_t)wlen;
		kinst_copy(st->jorig, text + cp->p.offset, KINST_JOPT_WINDOW);
		st->jdetour = sp.at;
		st->jwindow = sp.at + wstart;
		st->jstate = KINST_JS_BUILT;
		sts[(*m)++] = st;
		k++;
	}
	if (k == 0 || kinst_os_tramp_seal(det, b->size) != 0) {
		kinst_ctl_xblock_put(b);
		for (i = first; i < *m; i++)
			sts[i]->jstate = KINST_JS_NONE;
		*m = first;
		goto out;
	}
	for (i = first; i < *m; i++) {
		sts[i]->dblock = b;
		b->refs++;
	}
	goto out;
unmark:
	for (i = 0; i < g->nprobes; i++)
		if (g->probes[i].live)
			g->probes[i].site->mark = 0;
out:
	if (text != NULL)
		kinst_os_free(text, size);
	if (v != NULL)
		kinst_os_free(v, size);
}

/*
 * Install the jumps of the sites of every queued group's probes that
 * qualify (a worker of the shim's; may sleep long).  The control lock is
 * held throughout, so no probe is armed or disarmed meanwhile; the text
 * lock is dropped for the wait.
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
	struct kinst_group *g;
	struct kinst_csite *st, **sts;
	uint8_t cur[KINST_JOPT_WINDOW];
	uint32_t i, k, m, cap;

	kinst_os_ctl_lock();
	cap = c->nsites;
	sts = cap != 0 && c->opt_queue != NULL && c->jhandler != 0 ?
	    kinst_os_alloc((size_t)cap * sizeof(*sts)) : NULL;
	m = 0;
	while ((g = c->opt_queue) != NULL) {
		c->opt_queue = g->opt_next;
		g->opt_next = NULL;
		g->opt_queued = 0;
		if (sts == NULL || g->nlive == 0)
			continue;	/* no memory: they stay int3 sites */
		kinst_os_text_lock();
		ctl_opt_build(c, g, sts, &m);
		kinst_os_text_unlock();
	}
	if (m == 0) {
		if (sts != NULL)
			kinst_os_free(sts, (size_t)cap * sizeof(*sts));
		kinst_os_ctl_unlock();
		return (0);
	}
	for (i = 0; i < m; i++) {
		KINST_STORE_RELEASE(&sts[i]->p.jresume, sts[i]->jwindow);
		sts[i]->jstate = KINST_JS_RESUME;
	}
	kinst_os_quiesce();
	kinst_os_sync_tasks();

	kinst_os_text_lock();
	/* Only windows exactly as the detours were built from. */
	k = 0;
	for (i = 0; i < m; i++) {
		st = sts[i];
		if (kinst_os_read(st->p.addr, cur, sizeof(cur)) != 0 ||
		    cur[0] != KINST_BP_BYTE || !ctl_same(cur + 1, st->jorig + 1,
		    KINST_JOPT_WINDOW - 1)) {
			KINST_STORE_RELEASE(&st->p.jresume, 0);
			st->jstate = KINST_JS_NONE;
			continue;
		}
		sts[k++] = st;
	}
	if (k != 0) {
		ctl_jtext(sts, k, 2);
		ctl_jtext(sts, k, 3);
	}
	for (i = 0; i < k; i++)
		sts[i]->jstate = KINST_JS_JUMP;
	c->njump += k;
	kinst_os_text_unlock();
	kinst_os_ctl_unlock();
	kinst_os_free(sts, (size_t)cap * sizeof(*sts));
	return (k);
}
