/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The OS-independent control path.  See kinst_control.h for the arm and
 * disarm sequences and the reasoning behind their order.
 */

#include "kinst_control.h"
#include "kinst_tstate.h"
#include "kinst_controlvar.h"
#include "kinst_stack.h"
#include "kinst_os.h"
#include "kinst_prog.h"

_Static_assert(KINST_SITE_SUBS <= 0x3f,
    "KINST_PI_SESSIONS has 6 bits");

static void
ctl_strlcpy(char *dst, const char *src, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i] != '\0'; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

bool
kinst_str_ok(const char *s, size_t size)
{
	size_t i;

	for (i = 0; i < size; i++)
		if (s[i] == '\0')
			return (true);
	return (false);
}

/* Length of name without a trailing compiler suffix (".isra.0", ".cold", ...). */
static size_t
base_len(const char *name)
{
	size_t i;

	for (i = 0; name[i] != '\0'; i++)
		if (name[i] == '.' && i > 0)
			return (i);
	return (i);
}

bool
kinst_name_listed(const char *name, const char *const *list, size_t n)
{
	size_t blen, i, j;
	const char *e;

	blen = base_len(name);
	for (i = 0; i < n; i++) {
		e = list[i];
		for (j = 0; e[j] != '\0' && e[j] != '*'; j++)
			if (j >= blen || e[j] != name[j])
				break;
		if (e[j] == '*')
			return (true);		/* prefix matched */
		if (e[j] == '\0' && j == blen)
			return (true);		/* whole base name matched */
	}
	return (false);
}

const char *
kinst_ctl_err_name(int err)
{
	static const char *const names[] = {
		[KINST_E_OK] = "OK",
		[KINST_E_INVAL] = "EINVAL",
		[KINST_E_NOENT] = "ENOENT",
		[KINST_E_REFUSED] = "EOPNOTSUPP",
		[KINST_E_EXIST] = "EEXIST",
		[KINST_E_NOSPC] = "ENOSPC",
		[KINST_E_NOMEM] = "ENOMEM",
		[KINST_E_FAULT] = "EFAULT",
		[KINST_E_TOOBIG] = "EFBIG",
	};

	if (err < 0 || (size_t)err >= KINST_NELEM(names))
		return ("?");
	return (names[err]);
}

void
kinst_ctl_init(struct kinst_ctl *c, struct kinst_engine *e)
{
	uint32_t i;

	c->engine = e;
	c->nprobes = 0;
	c->nsites = 0;
	c->sites = NULL;
	c->next_id = 1;
	c->jhandler = 0;
	c->jarg = 0;
	c->opt_queue = NULL;
	c->njump = 0;
	c->jsingle = 0;
	c->jdflags = 0;
	for (i = 0; i < KINST_HITC_CHUNKS; i++)
		c->hitc[i] = NULL;
}

void
kinst_ctl_session_init(struct kinst_ctl *c, struct kinst_csession *cs)
{
	uint32_t i;

	(void)c;
	cs->pid = -1;
	for (i = 0; i < KINST_COMM_LEN; i++)
		cs->comm[i] = '\0';
	cs->groups = NULL;
	cs->refusals = 0;
	cs->nprobes = 0;
	cs->nprogs = 0;
	for (i = 0; i < KINST_PROG_MAX; i++)
		cs->progs[i] = NULL;
}

/* Probe ids: never 0, never KINST_ALL_PROBES; 2^32 - 2 before reuse. */
static uint32_t
ctl_new_id(struct kinst_ctl *c)
{
	uint32_t id;

	id = c->next_id++;
	if (c->next_id == 0 || c->next_id == KINST_ALL_PROBES)
		c->next_id = 1;
	return (id);
}

static bool
ctl_names_ok(const char *module, const char *function)
{
	if (!kinst_str_ok(module, KINST_MODNAME_MAX) ||
	    !kinst_str_ok(function, KINST_NAME_MAX))
		return (false);
	return (function[0] != '\0');
}

/*
 * Free a site no CPU can reach any more (out of the table, quiesced; and,
 * when it has a detour, every task waited out).
 */
static void
ctl_site_free(struct kinst_ctl *c, struct kinst_csite *st)
{
	*st->prevp = st->next;
	if (st->next != NULL)
		st->next->prevp = st->prevp;
	c->nsites--;
	kinst_ctl_xblock_put(st->tblock);
	kinst_ctl_xblock_put(st->dblock);
	kinst_hitc_put(c, st->p.hitc);
	kinst_os_free(st, sizeof(*st));
}

static bool
ctl_streq(const char *a, const char *b)
{
	size_t i;

	for (i = 0; a[i] != '\0' && a[i] == b[i]; i++)
		;
	return (a[i] == b[i]);
}

/* Is module the kernel's name (not a loadable module)? */
static bool
ctl_is_kernel(const char *module)
{
	return (module[0] == '\0' || ctl_streq(module, "kernel"));
}

/* The first group of the list in module, if any. */
static struct kinst_group *
ctl_group_in(struct kinst_group *g, const char *module)
{
	for (; g != NULL; g = g->next)
		if (ctl_streq(g->func.module, module))
			return (g);
	return (NULL);
}

/* Free a group that has no live probe (after quiescence). */
static void
ctl_group_free(struct kinst_ctl *c, struct kinst_group *g)
{
	uint32_t i;

	for (i = 0; i < g->nprobes; i++)
		kinst_hitc_put(c, g->probes[i].p.hitc);
	if (g->tblock != NULL && g->tblock->refs == 0)
		kinst_ctl_xblock_put(g->tblock);
	kinst_os_func_release(&g->func);
	kinst_os_free(g, g->alloc_size);
}

/*
 * Candidate offsets: the single offset (validated as an instruction
 * boundary by decoding from the first byte), or every instruction boundary
 * of the function.  offs may be NULL to count.  With KINST_ARM_ALL, an
 * undecodable instruction ends the walk (*undecodable is set).
 */
static int
ctl_candidates(const uint8_t *text, size_t size, const struct kinst_arm *a,
    uint32_t *offs, uint32_t *n, bool *undecodable)
{
	uint32_t off, cnt;
	uint8_t len;
	int r;

	*undecodable = false;
	if ((a->flags & KINST_ARM_ALL) == 0) {
		if (a->offset >= size)
			return (KINST_E_INVAL);
		r = kinst_func_boundary(text, size, a->offset, NULL, NULL);
		if (r < 0) {
			*undecodable = true;
			*n = 0;
			return (KINST_E_OK);
		}
		if (r == 0)
			return (KINST_E_INVAL);
		if (offs != NULL)
			offs[0] = a->offset;
		*n = 1;
		return (KINST_E_OK);
	}
	cnt = 0;
	for (off = 0; off < size; off += len) {
		len = kinst_insn_length(text + off, size - off);
		if (len == 0) {
			*undecodable = true;
			break;
		}
		if (offs != NULL)
			offs[cnt] = off;
		cnt++;
	}
	*n = cnt;
	return (KINST_E_OK);
}

/*
 * Store a byte at every marked site (st->mark): the int3 when arm is true,
 * the original first byte otherwise.  Text lock held.
 *
 * Every byte is stored, every CPU synchronized, and then both are done a
 * second time.  On hardware the second pass changes nothing: the
 * synchronization serializes every CPU, and the iret that ends a trap on a
 * just-removed int3 (kprobes' "breakpoint gone, run the instruction again"
 * answer on Linux) makes the CPU fetch the restored byte.  An emulator that
 * translates code, QEMU's multi-threaded TCG among them, can instead link a
 * translation made from the old byte while the first store was landing, after
 * that store invalidated the page's translations: a removed int3 then traps
 * forever (kprobes answers "gone, retry" each time; issue 15's livelock), and
 * a new int3 is never taken.  Every CPU has finished any translation it had
 * started once the first synchronization returns, so the second store
 * invalidates whatever was linked stale, and a translation that races with
 * the second store reads the same byte either way.  The first
 * synchronization must itself return while a CPU loops on a stale int3
 * with interrupts off: the shim's kinst_os_text_sync() stores the bytes
 * again while a CPU is slow to answer (Linux: kinst_linux_os.c).
 */
static void
ctl_publish(struct kinst_ctl *c, bool arm)
{
	struct kinst_csite *st;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (st = c->sites; st != NULL; st = st->next)
			if (st->mark)
				kinst_isa_text_arm(st->p.addr, arm,
				    st->p.orig);
		kinst_os_text_sync();
	}
}

/* A refused arm request counts in STATS; a check-only request does not. */
static void
ctl_count_refusal(struct kinst_csession *cs, const struct kinst_arm *a)
{
	if ((a->flags & KINST_ARM_CHECK) == 0)
		cs->refusals++;
}

/*
 * One ARM request on its way through ctl_arm()'s steps, and what
 * ctl_arm_done() frees: until the group is made, f's reference is the
 * request's; then the group's (ctl_group_free releases it); once armed, the
 * session's.
 */
struct ctl_arm_req {
	struct kinst_ctl *c;
	struct kinst_csession *cs;
	struct kinst_arm *a;
	const struct kinst_prog *prog;	/* KINST_ARM_PROG's */
	struct kinst_func f;
	uint8_t		*text;		/* f.size bytes of live text */
	uint32_t	*offs;		/* ncand candidate offsets */
	uint32_t	ncand;
	uint32_t	refused;	/* KINST_ARM_ALL: how many refused */
	struct kinst_group *g;
	bool		resolved;	/* f holds a reference */
	bool		text_locked;
	bool		undecodable;	/* the decode stopped early */
};

/* Refuse the request for reason (counted unless check-only). */
static int
ctl_arm_refuse(struct ctl_arm_req *r, int reason)
{
	r->a->refuse_reason = reason;
	ctl_count_refusal(r->cs, r->a);
	return (KINST_E_REFUSED);
}

/* Clear a's out fields; its in fields must be well formed. */
static int
ctl_arm_validate(struct kinst_arm *a)
{
	a->probe_id = 0;
	a->narmed = 0;
	a->nrefused = 0;
	a->refuse_reason = KINST_R_NONE;
	a->addr = 0;
	kinst_bzero(a->insn, sizeof(a->insn));
	a->insn_len = 0;
	if (!ctl_names_ok(a->module, a->function) ||
	    (a->flags & ~(KINST_ARM_ALL | KINST_ARM_CHECK |
	    KINST_ARM_PROG | KINST_ARM_STACK | KINST_ARM_AGG |
	    KINST_ARM_NOOPT)) != 0 ||
	    (a->flags & (KINST_ARM_AGG | KINST_ARM_STACK)) ==
	    (KINST_ARM_AGG | KINST_ARM_STACK) ||
	    (a->flags & (KINST_ARM_ALL | KINST_ARM_CHECK)) ==
	    (KINST_ARM_ALL | KINST_ARM_CHECK) ||
	    ((a->flags & KINST_ARM_PROG) == 0 && a->prog_id != 0))
		return (KINST_E_INVAL);
	return (KINST_E_OK);
}

/*
 * The program the request names, the session's aggregation, the function
 * (a module reference is held from here on) and its function-level
 * exclusions (kinst_os_func_check).
 */
static int
ctl_arm_resolve(struct ctl_arm_req *r)
{
	struct kinst_arm *a = r->a;
	int err, reason;

	if ((a->flags & KINST_ARM_PROG) != 0 &&
	    (r->prog = kinst_ctl_prog_get(r->cs, a->prog_id)) == NULL)
		return (KINST_E_INVAL);
	/*
	 * Aggregating probes need the session's aggregation first, and make
	 * no record: a program with captures is refused for them.
	 */
	if ((a->flags & KINST_ARM_AGG) != 0 && (r->cs->s.agg == NULL ||
	    (r->prog != NULL && r->prog->ncaps != 0)))
		return (KINST_E_INVAL);
	err = kinst_os_func_resolve(a->module, a->function, &r->f);
	if (err != KINST_E_OK)
		return (err);
	r->resolved = true;
	if (r->f.size == 0)
		return (KINST_E_NOENT);
	if (r->f.size > KINST_FUNC_MAX)
		return (KINST_E_TOOBIG);
	reason = kinst_os_func_check(&r->f, a->function);
	if (reason != KINST_R_NONE)
		return (ctl_arm_refuse(r, reason));
	return (KINST_E_OK);
}

/*
 * Take the text lock (held until the int3s are written) and read the live
 * text with kinst's own int3s and jumps taken out.
 */
static int
ctl_arm_read(struct ctl_arm_req *r)
{
	r->text = kinst_os_alloc(r->f.size);
	if (r->text == NULL)
		return (KINST_E_NOMEM);
	kinst_os_text_lock();
	r->text_locked = true;
	return (kinst_ctl_read_text(r->c, &r->f, r->text, r->f.size));
}

/* Count the candidates, decoding from the first byte (ctl_candidates). */
static int
ctl_arm_candidates(struct ctl_arm_req *r)
{
	int err;
	bool all;

	all = (r->a->flags & KINST_ARM_ALL) != 0;
	err = ctl_candidates(r->text, r->f.size, r->a, NULL, &r->ncand,
	    &r->undecodable);
	if (err != KINST_E_OK)
		return (err);
	/*
	 * A whole function must decode exactly to its end.  A walk that
	 * stops early is the one symptom a wrong instruction length (a
	 * decoder bug, data in text) tends to leave: arming the prefix could
	 * put an int3 inside an instruction.  Refuse all of it instead.
	 */
	if (all && r->undecodable)
		return (ctl_arm_refuse(r, KINST_R_UNDECODABLE));
	r->refused = r->undecodable ? 1 : 0;
	if (r->ncand == 0) {
		if (!all || r->undecodable)
			return (ctl_arm_refuse(r, KINST_R_UNDECODABLE));
		return (KINST_E_INVAL);
	}
	return (KINST_E_OK);
}

/* KINST_ARM_CHECK: the verdict arming would give; nothing is armed. */
static int
ctl_arm_check(struct ctl_arm_req *r)
{
	uint8_t img[KINST_TRAMP_SIZE];
	struct kinst_probe check;
	struct kinst_arm *a = r->a;
	struct kinst_csite *st;
	uint64_t addr;
	int reason;

	addr = r->f.addr + a->offset;
	reason = KINST_R_NONE;
	st = ctl_site_at(r->c, addr);
	if (st == NULL) {
		reason = kinst_probe_prepare(&check, r->text + a->offset,
		    r->f.size - a->offset, addr, addr, img);
		if (reason == KINST_R_NONE)
			reason = kinst_os_insn_check(&r->f, addr,
			    check.insn.len);
	} else {
		/* Traced: another subscriber may join, up to the limit. */
		a->narmed = st->nsubs;	/* check-only: the sessions (1.13) */
		if (st->nsubs >= KINST_SITE_SUBS &&
		    ctl_site_sub(st, &r->cs->s) == NULL)
			reason = KINST_R_SHARED_FULL;
	}
	a->refuse_reason = (uint32_t)reason;
	a->addr = addr;
	a->insn_len = kinst_insn_length(r->text + a->offset,
	    r->f.size - a->offset);
	kinst_copy(a->insn, r->text + a->offset, a->insn_len);
	return (KINST_E_OK);
}

/*
 * Room in the probe table, the candidates' offsets, the group, and ONE
 * trampoline block for the whole request (KINST_TRAMP_SIZE bytes per
 * candidate).
 */
static int
ctl_arm_group(struct ctl_arm_req *r)
{
	struct kinst_group *g;
	size_t gsize, tsize;

	if (r->ncand > KINST_MAX_SUBSCRIBERS - r->c->nprobes)
		return (KINST_E_NOSPC);
	r->offs = kinst_os_alloc((size_t)r->ncand * sizeof(*r->offs));
	gsize = sizeof(*g) + (size_t)r->ncand * sizeof(g->probes[0]);
	g = kinst_os_alloc(gsize);
	if (r->offs == NULL || g == NULL) {
		if (g != NULL)
			kinst_os_free(g, gsize);
		return (KINST_E_NOMEM);
	}
	(void)ctl_candidates(r->text, r->f.size, r->a, r->offs, &r->ncand,
	    &r->undecodable);
	g->alloc_size = gsize;
	g->func = r->f;
	g->opt_next = NULL;
	g->opt_queued = 0;
	g->noopt = (r->a->flags & KINST_ARM_NOOPT) != 0;
	g->nprobes = 0;
	g->nlive = 0;
	ctl_strlcpy(g->function, r->a->function, sizeof(g->function));
	tsize = (size_t)r->ncand * KINST_TRAMP_SIZE;
	g->tblock = kinst_ctl_xblock_new(tsize);
	if (g->tblock == NULL) {
		kinst_os_free(g, gsize);
		return (KINST_E_NOMEM);
	}
	r->g = g;
	return (KINST_E_OK);
}

/*
 * Candidate i into the group's probe k: a subscriber of the site already
 * at its address (sharing: nothing to build), or of a new site, prepared
 * here (address checks, kinst_os_insn_check, kinst_probe_prepare) with
 * its image in trampoline slot k, made by ctl_arm_insert().  On
 * KINST_E_REFUSED, *reason says why.
 */
static int
ctl_arm_prepare_one(struct ctl_arm_req *r, uint32_t i, uint32_t k,
    int *reason)
{
	uint8_t img[KINST_TRAMP_SIZE];
	struct kinst_group *g = r->g;
	struct kinst_cprobe *cp;
	struct kinst_csite *st, *jc;
	uint64_t addr;
	uint32_t off;

	off = r->offs[i];
	addr = r->f.addr + off;
	cp = &g->probes[k];
	/*
	 * Inside another site's jump window: that site goes back to an int3
	 * (the text here is its jmp's rel32 until then).
	 */
	if ((jc = kinst_ctl_jump_covering(r->c, addr)) != NULL)
		kinst_ctl_unoptimize(r->c, &jc, 1);
	*reason = KINST_R_NONE;
	st = ctl_site_at(r->c, addr);
	if (st != NULL) {
		if (ctl_site_sub(st, &r->cs->s) != NULL)
			return (KINST_E_EXIST);
		if (st->nsubs >= KINST_SITE_SUBS) {
			*reason = KINST_R_SHARED_FULL;
			return (KINST_E_REFUSED);
		}
		/* A subscriber that wants none: an int3 site for everybody. */
		if (g->noopt && st->jstate == KINST_JS_JUMP)
			kinst_ctl_unoptimize(r->c, &st, 1);
		cp->p = st->p;		/* what runs the instruction, for LIST */
		cp->site = st;
	} else {
		*reason = kinst_probe_prepare(&cp->p, r->text + off,
		    r->f.size - off, addr, g->tblock->addr +
		    (uint64_t)k * KINST_TRAMP_SIZE, img);
		if (*reason == KINST_R_NONE)
			*reason = kinst_os_insn_check(&r->f, addr,
			    cp->p.insn.len);
		if (*reason != KINST_R_NONE)
			return (KINST_E_REFUSED);
		kinst_copy((uint8_t *)g->tblock->mem +
		    (size_t)k * KINST_TRAMP_SIZE, img, sizeof(img));
		cp->site = NULL;	/* ctl_arm_insert() makes it */
	}
	cp->p.id = 0;
	cp->p.offset = off;
	cp->p.session = NULL;
	cp->p.next = NULL;
	cp->p.hits = 0;
	cp->p.hitc = NULL;	/* ctl_arm_insert() gives it one */
	cp->p.tripped = 0;
	cp->p.os_priv = NULL;
	cp->p.prog = r->prog;
	cp->p.flags = ((r->a->flags & KINST_ARM_STACK) != 0 ?
	    KINST_PF_STACK : 0) |
	    ((r->a->flags & KINST_ARM_AGG) != 0 ? KINST_PF_AGG : 0);
	cp->group = g;
	cp->live = 0;
	cp->sessions_max = 0;
	return (KINST_E_OK);
}

/*
 * Prepare each candidate (refused ones do not use a slot; without
 * KINST_ARM_ALL a refusal refuses the request), then seal the block read-only
 * and executable.  *nprep: the probes prepared (0: nothing to arm).
 */
static int
ctl_arm_prepare(struct ctl_arm_req *r, uint32_t *nprep)
{
	uint32_t i, k;
	int err, reason;

	k = 0;
	for (i = 0; i < r->ncand; i++) {
		err = ctl_arm_prepare_one(r, i, k, &reason);
		if (err == KINST_E_OK) {
			k++;
			continue;
		}
		if ((r->a->flags & KINST_ARM_ALL) == 0)
			return (err == KINST_E_REFUSED ?
			    ctl_arm_refuse(r, reason) : err);
		r->refused++;
	}
	r->cs->refusals += r->refused;
	r->a->nrefused = r->refused;
	*nprep = k;
	if (k == 0)
		return (KINST_E_OK);
	r->g->nprobes = k;
	if (kinst_os_tramp_seal(r->g->tblock->mem, r->g->tblock->size) != 0)
		return (KINST_E_NOMEM);
	return (KINST_E_OK);
}

/*
 * A site for every new probe of the group (a copy of what
 * kinst_probe_prepare() made, with no session of its own), inserted into
 * the engine's table; every probe gets its id.  Nothing is written yet: a
 * failure takes the new sites out again, drops the text lock, quiesces and
 * frees them.
 */
static int
ctl_arm_insert(struct ctl_arm_req *r)
{
	struct kinst_group *g = r->g;
	struct kinst_ctl *c = r->c;
	struct kinst_cprobe *cp;
	struct kinst_csite *st;
	uint32_t i;
	int err, res;

	err = KINST_E_OK;
	for (i = 0; i < g->nprobes; i++) {
		cp = &g->probes[i];
		cp->p.id = ctl_new_id(c);
		cp->p.hitc = kinst_hitc_get(c);	/* NULL: counts in p.hits */
		if (cp->site != NULL)
			continue;
		st = kinst_os_alloc(sizeof(*st));
		if (st == NULL) {
			err = KINST_E_NOMEM;
			break;
		}
		kinst_bzero(st, sizeof(*st));
		st->p = cp->p;
		st->p.id = 0;
		st->p.session = NULL;
		st->p.prog = NULL;
		st->p.flags = 0;
		st->p.hitc = kinst_hitc_get(c);
		st->tblock = g->tblock;
		g->tblock->refs++;
		st->next = c->sites;
		if (c->sites != NULL)
			c->sites->prevp = &st->next;
		st->prevp = &c->sites;
		c->sites = st;
		c->nsites++;
		cp->site = st;
		st->mark = 1;		/* new: its int3 is written */
		res = kinst_ptable_insert(&c->engine->table, &st->p);
		if (res != KINST_PT_OK) {
			err = res == KINST_PT_EXISTS ? KINST_E_EXIST :
			    KINST_E_NOSPC;
			st->mark = 0;	/* not in the table */
			break;
		}
	}
	if (err == KINST_E_OK)
		return (KINST_E_OK);
	for (i = 0; i < g->nprobes; i++) {
		st = g->probes[i].site;
		if (st != NULL && st->nsubs == 0 && st->mark)
			(void)kinst_ptable_remove(&c->engine->table, &st->p);
		if (st != NULL && st->nsubs == 0) {
			/* The group keeps its block (ctl_arm_done frees it). */
			st->tblock->refs--;
			st->tblock = NULL;
		}
	}
	kinst_os_text_unlock();
	r->text_locked = false;
	kinst_os_quiesce();
	for (i = 0; i < g->nprobes; i++) {
		cp = &g->probes[i];
		st = cp->site;
		if (st != NULL && st->nsubs == 0) {
			st->mark = 0;
			ctl_site_free(c, st);
		}
		cp->site = NULL;
	}
	return (err);
}

/* The most subscribers st has had, for each of its live subscribers. */
static void
ctl_site_seen(struct kinst_csite *st)
{
	struct kinst_probe *q;
	struct kinst_cprobe *cp;

	for (q = st->p.next; q != NULL; q = q->next) {
		cp = (struct kinst_cprobe *)q;	/* q is its first member */
		if (cp->sessions_max < st->nsubs)
			cp->sessions_max = st->nsubs;
	}
}

/*
 * Subscribe every probe of the group to its site (release: a CPU walking
 * the chain sees a complete subscriber), then write the int3s of the new
 * sites, if any (ctl_publish: stores and syncs), drop the text lock.
 */
static void
ctl_arm_publish(struct ctl_arm_req *r)
{
	struct kinst_cprobe *cp;
	struct kinst_csite *st;
	uint32_t i;
	bool any;

	any = false;
	for (i = 0; i < r->g->nprobes; i++) {
		cp = &r->g->probes[i];
		st = cp->site;
		any |= st->mark != 0;
		KINST_STORE_RELEASE(&cp->p.session, &r->cs->s);
		cp->p.next = st->p.next;
		KINST_STORE_RELEASE(&st->p.next, &cp->p);
		cp->live = 1;
		st->nsubs++;
		if (r->g->noopt)
			st->nnoopt++;
		ctl_site_seen(st);
	}
	/* Only shared sites: no text write, no CPU to synchronize. */
	if (any)
		ctl_publish(r->c, true);
	for (i = 0; i < r->g->nprobes; i++)
		r->g->probes[i].site->mark = 0;
	kinst_os_text_unlock();
	r->text_locked = false;
}

/*
 * The group is the session's from now on, and is queued for jump
 * optimization, later, in the shim's worker (unless KINST_ARM_NOOPT).  The
 * out fields name its first probe.
 */
static void
ctl_arm_queue(struct ctl_arm_req *r)
{
	struct kinst_group *g = r->g;
	struct kinst_arm *a = r->a;
	struct kinst_probe *p;

	g->nlive = g->nprobes;
	if (!ctl_is_kernel(g->func.module) &&
	    ctl_group_in(r->cs->groups, g->func.module) == NULL)
		kinst_os_log_hold(g->func.module, r->cs->pid, r->cs->comm,
		    g->function, true);
	g->next = r->cs->groups;
	r->cs->groups = g;
	if ((a->flags & KINST_ARM_NOOPT) == 0)
		kinst_ctl_opt_queue(r->c, g);
	r->cs->nprobes += g->nprobes;
	r->c->nprobes += g->nprobes;
	p = &g->probes[0].p;
	a->probe_id = p->id;
	a->narmed = g->nprobes;
	a->addr = p->addr;
	kinst_copy(a->insn, p->orig, p->insn.len);
	a->insn_len = p->insn.len;
	/* The new sites hold the block now (or none does: freed here). */
	if (g->tblock->refs == 0)
		kinst_ctl_xblock_put(g->tblock);
	g->tblock = NULL;
	r->g = NULL;
	r->resolved = false;
}

/* Drop the locks, free what the request still holds. */
static void
ctl_arm_done(struct ctl_arm_req *r)
{
	if (r->text_locked)
		kinst_os_text_unlock();
	r->text_locked = false;
	if (r->g != NULL)
		ctl_group_free(r->c, r->g);	/* releases f */
	if (r->text != NULL)
		kinst_os_free(r->text, r->f.size);
	if (r->offs != NULL)
		kinst_os_free(r->offs, (size_t)r->ncand * sizeof(*r->offs));
	if (r->g == NULL && r->resolved)
		kinst_os_func_release(&r->f);
	kinst_os_ctl_unlock();
}

/*
 * The arm sequence of kinst_control.h, under the control lock: validate,
 * resolve and read the text, candidates, (check only: the verdict), group,
 * prepare, insert, publish, queue.
 */
static int
ctl_arm(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_arm *a)
{
	struct ctl_arm_req r;
	uint32_t nprep;
	int err;

	nprep = 0;
	err = ctl_arm_validate(a);
	if (err != KINST_E_OK)
		return (err);
	r.c = c;
	r.cs = cs;
	r.a = a;
	r.prog = NULL;
	r.text = NULL;
	r.offs = NULL;
	r.ncand = 0;
	r.refused = 0;
	r.g = NULL;
	r.resolved = false;
	r.text_locked = false;
	r.undecodable = false;
	kinst_os_ctl_lock();
	if ((err = ctl_arm_resolve(&r)) != KINST_E_OK ||
	    (err = ctl_arm_read(&r)) != KINST_E_OK ||
	    (err = ctl_arm_candidates(&r)) != KINST_E_OK)
		goto done;
	if ((a->flags & KINST_ARM_CHECK) != 0) {
		err = ctl_arm_check(&r);
		goto done;
	}
	if ((err = ctl_arm_group(&r)) != KINST_E_OK ||
	    (err = ctl_arm_prepare(&r, &nprep)) != KINST_E_OK ||
	    nprep == 0 ||	/* KINST_ARM_ALL, nothing traceable: OK */
	    (err = ctl_arm_insert(&r)) != KINST_E_OK)
		goto done;
	ctl_arm_publish(&r);
	ctl_arm_queue(&r);
done:
	ctl_arm_done(&r);
	return (err);
}

/*
 * With KINST_ARM_CHECK a refusal is the answer, not an error (it also
 * reaches FreeBSD callers, whose ioctl structures are copied out only on
 * success).
 */
int
kinst_ctl_arm(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_arm *a)
{
	int err;

	err = ctl_arm(c, cs, a);
	if (err == KINST_E_REFUSED && (a->flags & KINST_ARM_CHECK) != 0)
		err = KINST_E_OK;
	return (err);
}

/* Is cp selected by id (or KINST_ALL_PROBES)? */
static inline bool
ctl_sel(const struct kinst_cprobe *cp, uint32_t id)
{
	return (cp->live && (id == KINST_ALL_PROBES || cp->p.id == id));
}

/* Take cp out of its site's chain (release; cp stays readable). */
static void
ctl_site_unlink(struct kinst_csite *st, struct kinst_cprobe *cp)
{
	struct kinst_probe *q;

	for (q = &st->p; q->next != NULL; q = q->next)
		if (q->next == &cp->p) {
			KINST_STORE_RELEASE(&q->next, cp->p.next);
			return;
		}
}

/*
 * A site's last KINST_ARM_NOOPT subscriber has left: queue the groups of
 * the others for optimization again (kinst_ctl_optimize decides).
 */
static void
ctl_site_requeue(struct kinst_ctl *c, struct kinst_csite *st)
{
	struct kinst_probe *q;
	struct kinst_group *g;

	if (st->dblock != NULL)
		return;
	for (q = st->p.next; q != NULL; q = q->next) {
		g = ((struct kinst_cprobe *)q)->group;
		if (!g->noopt && !g->opt_queued)
			kinst_ctl_opt_queue(c, g);
	}
}

/*
 * Disarm the session's probes with id (or all), control lock held: each
 * leaves its site; a site left with no subscriber is taken out of the text
 * and the table (marked), and freed after quiescence.  Returns the number
 * disarmed.
 */
static uint32_t
ctl_disarm_locked(struct kinst_ctl *c, struct kinst_csession *cs, uint32_t id)
{
	struct kinst_group *g, **gp;
	struct kinst_cprobe *cp;
	struct kinst_csite *st, *nst;
	uint32_t i, n;
	bool pusher, detours, dying;

	n = 0;
	pusher = false;
	dying = false;
	for (g = cs->groups; g != NULL; g = g->next)
		for (i = 0; i < g->nprobes; i++) {
			cp = &g->probes[i];
			if (!ctl_sel(cp, id))
				continue;
			n++;
			if (cp->p.prog != NULL &&
			    (cp->p.prog->flags & KINST_PROGF_PUSH) != 0)
				pusher = true;
			/* A session subscribes to a site once. */
			if (cp->site->nsubs == 1) {
				cp->site->mark = 1;
				dying = true;
			}
		}
	if (n == 0)
		return (0);

	kinst_os_text_lock();
	if (dying) {
		kinst_ctl_unoptimize_marked(c);
		ctl_publish(c, false);
	}
	for (g = cs->groups; g != NULL; g = g->next)
		for (i = 0; i < g->nprobes; i++) {
			cp = &g->probes[i];
			if (!ctl_sel(cp, id))
				continue;
			st = cp->site;
			if (st->mark)
				(void)kinst_ptable_remove(&c->engine->table,
				    &st->p);
			else
				ctl_site_unlink(st, cp);
			st->nsubs--;
			if (g->noopt && --st->nnoopt == 0 && !st->mark)
				ctl_site_requeue(c, st);
			cp->live = 0;
			g->nlive--;
		}
	kinst_os_text_unlock();

	kinst_os_quiesce();
	/* Activations it opened can no longer be told from stale ones. */
	if (pusher && cs->s.ts != NULL)
		kinst_ts_new_epoch(cs->s.ts);
	/* A detour may hold threads preempted in it: wait them out. */
	detours = false;
	for (st = c->sites; st != NULL; st = st->next)
		if (st->mark && st->dblock != NULL)
			detours = true;
	if (detours)
		kinst_os_sync_tasks();
	for (st = c->sites; st != NULL; st = nst) {
		nst = st->next;
		if (st->mark)
			ctl_site_free(c, st);
	}

	gp = &cs->groups;
	while ((g = *gp) != NULL) {
		if (g->nlive == 0) {
			*gp = g->next;
			kinst_ctl_opt_dequeue(c, g);
			/* The last group of the session in the module. */
			if (!ctl_is_kernel(g->func.module) &&
			    ctl_group_in(cs->groups, g->func.module) == NULL)
				kinst_os_log_hold(g->func.module, cs->pid,
				    cs->comm, g->function, false);
			ctl_group_free(c, g);
		} else
			gp = &g->next;
	}
	cs->nprobes -= n;
	c->nprobes -= n;
	return (n);
}

/*
 * Disarm the session's probes the nesting guard tripped (kinst_engine.h),
 * control lock held.  Returns the number disarmed.
 */
static uint32_t
ctl_reap_tripped_locked(struct kinst_ctl *c, struct kinst_csession *cs)
{
	struct kinst_group *g;
	struct kinst_cprobe *cp;
	uint32_t i, id, n;

	n = 0;
	for (;;) {
		id = 0;
		for (g = cs->groups; g != NULL && id == 0; g = g->next)
			for (i = 0; i < g->nprobes && id == 0; i++) {
				cp = &g->probes[i];
				if (cp->live && KINST_LOAD_RELAXED(
				    &cp->site->p.tripped) != 0)
					id = cp->p.id;
			}
		if (id == 0)
			return (n);
		n += ctl_disarm_locked(c, cs, id);
	}
}

uint32_t
kinst_ctl_reap_tripped(struct kinst_ctl *c, struct kinst_csession *cs)
{
	uint32_t n;

	kinst_os_ctl_lock();
	n = ctl_reap_tripped_locked(c, cs);
	kinst_os_ctl_unlock();
	return (n);
}

int
kinst_ctl_disarm(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_disarm *d)
{
	uint32_t n;

	d->ndisarmed = 0;
	if (d->probe_id == 0)
		return (KINST_E_NOENT);
	kinst_os_ctl_lock();
	n = ctl_disarm_locked(c, cs, d->probe_id);
	kinst_os_ctl_unlock();
	d->ndisarmed = n;
	if (n == 0 && d->probe_id != KINST_ALL_PROBES)
		return (KINST_E_NOENT);
	return (KINST_E_OK);
}

void
kinst_ctl_session_fini(struct kinst_ctl *c, struct kinst_csession *cs)
{
	kinst_os_ctl_lock();
	(void)ctl_disarm_locked(c, cs, KINST_ALL_PROBES);
	kinst_ctl_prog_fini(cs);	/* no probe can run one any more */
	kinst_ctl_agg_fini(cs);
	kinst_ts_free(cs->s.ts);
	cs->s.ts = NULL;
	kinst_os_ctl_unlock();
}

uint32_t
kinst_ctl_list(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_probe_info *out, uint32_t cap)
{
	struct kinst_group *g;
	struct kinst_cprobe *cp;
	struct kinst_probe_info *pi;
	uint32_t i, n;

	n = 0;
	kinst_os_ctl_lock();
	(void)ctl_reap_tripped_locked(c, cs);
	for (g = cs->groups; g != NULL; g = g->next)
		for (i = 0; i < g->nprobes; i++) {
			cp = &g->probes[i];
			if (!cp->live)
				continue;
			if (n < cap) {
				pi = &out[n];
				kinst_bzero(pi, sizeof(*pi));
				pi->probe_id = cp->p.id;
				pi->offset = cp->p.offset;
				pi->addr = cp->p.addr;
				pi->hits = kinst_probe_hits(&cp->p,
				    c->engine->ncpus);

				ctl_strlcpy(pi->module, g->func.module,
				    sizeof(pi->module));
				ctl_strlcpy(pi->function, g->function,
				    sizeof(pi->function));
				kinst_copy(pi->insn, cp->p.orig, cp->p.insn.len);
				pi->insn_len = cp->p.insn.len;
				pi->treatment = cp->p.cls.treatment |
				    (cp->site->jstate == KINST_JS_JUMP ?
				    KINST_PI_JUMP : 0) |
				    KINST_PI_MK_SESSIONS(cp->site->nsubs,
				    cp->sessions_max);
			}
			n++;
		}
	kinst_os_ctl_unlock();
	return (n);
}

void
kinst_ctl_stats(struct kinst_ctl *c, struct kinst_csession *cs,
    struct kinst_cpu_stats *out, uint32_t cap, struct kinst_stats *st)
{
	struct kinst_session *s;
	uint32_t i, n;

	s = &cs->s;
	n = cap < s->ncpus ? cap : s->ncpus;
	/*
	 * The engine counts a hit before it writes or drops its record: read
	 * the ring's counters first, so that a snapshot taken while probes
	 * fire has hits >= delivered + dropped (equal once they are quiet).
	 */
	for (i = 0; i < n; i++) {
		out[i].delivered = kinst_ring_written(&s->rings[i]);
		out[i].dropped = kinst_ring_dropped(&s->rings[i]);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		out[i].hits = KINST_LOAD_RELAXED(&s->hits[i].n);
	}
	kinst_os_ctl_lock();
	(void)ctl_reap_tripped_locked(c, cs);
	st->ncpus = s->ncpus;
	st->refusals = cs->refusals;
	st->nprobes = cs->nprobes;
	kinst_os_ctl_unlock();
}

int
kinst_ctl_text(struct kinst_ctl *c, struct kinst_text *t, uint8_t *buf,
    uint32_t cap)
{
	struct kinst_func f;
	size_t n;
	int err;

	t->size = 0;
	t->addr = 0;
	if (!ctl_names_ok(t->module, t->function))
		return (KINST_E_INVAL);
	kinst_os_ctl_lock();
	err = kinst_os_func_resolve(t->module, t->function, &f);
	if (err != KINST_E_OK) {
		kinst_os_ctl_unlock();
		return (err);
	}
	if (f.size > KINST_FUNC_MAX) {
		err = KINST_E_TOOBIG;
		goto out;
	}
	n = cap < f.size ? cap : f.size;
	err = kinst_ctl_read_text(c, &f, buf, n);
	if (err != KINST_E_OK)
		goto out;
	t->size = (uint32_t)f.size;
	t->addr = f.addr;
	err = KINST_E_OK;
out:
	kinst_os_func_release(&f);
	kinst_os_ctl_unlock();
	return (err);
}

uint32_t
kinst_ctl_sites(struct kinst_ctl *c, struct kinst_site_info *out,
    uint32_t cap)
{
	struct kinst_site_info *si;
	struct kinst_cprobe *cp;
	struct kinst_csite *st;
	uint32_t n;

	n = 0;
	kinst_os_ctl_lock();
	for (st = c->sites; st != NULL; st = st->next, n++) {
		if (n >= cap)
			continue;
		si = &out[n];
		kinst_bzero(si, sizeof(*si));
		si->addr = st->p.addr;
		si->hits = kinst_probe_hits(&st->p, c->engine->ncpus);
		si->sessions = st->nsubs;
		si->jump = st->jstate == KINST_JS_JUMP;
		si->treatment = st->p.cls.treatment;
		cp = (struct kinst_cprobe *)st->p.next;
		if (cp != NULL) {
			si->offset = cp->p.offset;
			ctl_strlcpy(si->module, cp->group->func.module,
			    sizeof(si->module));
			ctl_strlcpy(si->function, cp->group->function,
			    sizeof(si->function));
		}
	}
	kinst_os_ctl_unlock();
	return (n);
}

#define	CTL_ROW_NONE	0xffffffffu	/* a holder row not numbered yet */

uint32_t
kinst_ctl_holders(struct kinst_ctl *c, const char *module,
    struct kinst_holder_info *out, uint32_t cap)
{
	struct kinst_holder_info *h;
	struct kinst_csession *cs;
	struct kinst_group *row;
	struct kinst_csite *st;
	struct kinst_probe *q;
	const char *m;
	uint32_t n;
	int pass;

	/*
	 * A pair's row belongs to the session's first group in the module
	 * (every probe of the pair finds the same one): the first pass marks
	 * each row unnumbered, the second numbers a row at its first probe
	 * and counts every probe into it, so a pair is one row however many
	 * groups and sites it has, past cap too.
	 */
	n = 0;
	kinst_os_ctl_lock();
	for (pass = 0; pass < 2; pass++)
		for (st = c->sites; st != NULL; st = st->next)
			for (q = st->p.next; q != NULL; q = q->next) {
				/* The probe and the session embed q and s first. */
				m = ((struct kinst_cprobe *)q)->group->func.module;
				if (ctl_is_kernel(m) ||
				    (module != NULL && !ctl_streq(m, module)))
					continue;
				cs = (struct kinst_csession *)(void *)q->session;
				row = ctl_group_in(cs->groups, m);
				if (pass == 0) {
					row->holder_row = CTL_ROW_NONE;
					continue;
				}
				if (row->holder_row == CTL_ROW_NONE) {
					row->holder_row = n++;
					if (row->holder_row < cap) {
						h = &out[row->holder_row];
						kinst_bzero(h, sizeof(*h));
						ctl_strlcpy(h->module, m,
						    sizeof(h->module));
						ctl_strlcpy(h->comm, cs->comm,
						    sizeof(h->comm));
						h->pid = cs->pid;
					}
				}
				if (row->holder_row < cap)
					out[row->holder_row].probes++;
			}
	kinst_os_ctl_unlock();
	return (n);
}

int
kinst_ctl_filter(struct kinst_ctl *c, struct kinst_csession *cs,
    const struct kinst_filter *f)
{
	struct kinst_session *s = &cs->s;

	(void)c;
	if (f->flags != 0 || f->pid < -1 || f->cpu < -1 ||
	    f->exclude_pid < -1 ||
	    (f->cpu >= 0 && (uint32_t)f->cpu >= s->ncpus))
		return (KINST_E_INVAL);
	/* Trap context reads these one at a time; each value alone is valid. */
	KINST_STORE_RELAXED(&s->filter_pid, f->pid);
	KINST_STORE_RELAXED(&s->filter_cpu, f->cpu);
	KINST_STORE_RELAXED(&s->exclude_pid, f->exclude_pid);
	return (KINST_E_OK);
}
