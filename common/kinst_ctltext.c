/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the control path and the jump optimizer (kinst_control.c,
 * kinst_joptctl.c) both stand on: a function's text as it was before kinst
 * patched it, and the blocks of executable memory that trampolines and
 * detours live in (kinst_controlvar.h).  Control lock held throughout.
 */

#include "kinst_control.h"
#include "kinst_controlvar.h"
#include "kinst_os.h"
#include "kinst_isa.h"

/* How far before an address a jump window covering it may begin. */
#define	JBACK	(KINST_JOPT_WINDOW - 1)

/*
 * Replace kinst's own int3s and jumps in a copy of [addr, addr + len) by the
 * bytes they replaced (control lock held, so the set of probes and their
 * states are stable; the text changes only under it).  A jump window may
 * begin up to JBACK (4) bytes before addr.
 */
static void
ctl_unpatch(struct kinst_ctl *c, uint64_t addr, uint8_t *buf, size_t len)
{
	struct kinst_csite *st;
	struct kinst_probe *p;
	uint64_t pa;
	size_t i, k;

	if (c->nsites == 0)
		return;
	for (i = 0; i < len + JBACK; i++) {
		if (i < JBACK && addr < JBACK - i)
			continue;
		pa = addr + i - JBACK;
		if (i >= JBACK && buf[i - JBACK] != KINST_BP_BYTE &&
		    buf[i - JBACK] != KINST_JMP_BYTE)
			continue;
		p = ctl_probe_at(c, pa);
		if (p == NULL)
			continue;
		st = ctl_site(p);
		if (st->jstate == KINST_JS_JUMP) {
			for (k = 0; k < KINST_JOPT_WINDOW; k++)
				if (pa + k >= addr && pa + k < addr + len)
					buf[pa + k - addr] = st->jorig[k];
		} else if (i >= JBACK && buf[i - JBACK] == KINST_BP_BYTE) {
			for (k = 0; k < KINST_BP_LEN; k++)
				if (pa + k < addr + len)
					buf[pa + k - addr] = p->orig[k];
		}
	}
}

/* A block of size bytes for trampolines or detours, with no site yet. */
struct kinst_xblock *
kinst_ctl_xblock_new(size_t size)
{
	struct kinst_xblock *b;

	b = kinst_os_alloc(sizeof(*b));
	if (b == NULL)
		return (NULL);
	b->mem = kinst_os_tramp_alloc(size, &b->addr);
	if (b->mem == NULL) {
		kinst_os_free(b, sizeof(*b));
		return (NULL);
	}
	b->size = size;
	b->refs = 0;
	b->_xpad = 0;
	return (b);
}

/*
 * Drop a site's reference; the last frees the block.  A block no site held
 * (refs 0: never published) goes back as unused.
 */
void
kinst_ctl_xblock_put(struct kinst_xblock *b)
{
	if (b == NULL)
		return;
	if (b->refs == 0)
		kinst_os_tramp_unused(b->mem, b->size);
	else if (--b->refs == 0)
		kinst_os_tramp_free(b->mem, b->size);
	else
		return;
	kinst_os_free(b, sizeof(*b));
}

/* Read the function's text with kinst's breakpoints taken out. */
int
kinst_ctl_read_text(struct kinst_ctl *c, const struct kinst_func *f,
    uint8_t *buf, size_t len)
{
	if (kinst_os_read(f->addr, buf, len) != 0)
		return (KINST_E_FAULT);
	ctl_unpatch(c, f->addr, buf, len);
	return (KINST_E_OK);
}
