/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Detour construction for jump-optimized probes: see kinst_detour.h for
 * the layout.  The encodings are written out here byte by byte; each
 * helper names the instruction it emits.
 */
#include "x86/kinst_detour.h"
#include "x86/kinst_jopt.h"

#define	REGS_SIZE	((uint32_t)sizeof(struct kinst_regs))	/* 152 */
#define	OFF_RIP		(8u * KINST_NGPR)			/* 128 */
#define	OFF_RFLAGS	(OFF_RIP + 8u)				/* 136 */
#define	OFF_CS		(OFF_RFLAGS + 8u)			/* 144 */

struct em {
	uint8_t		*b;
	uint32_t	n;
	uint64_t	at;	/* address of b[0] */
	bool		full;
};

static void
put(struct em *e, uint8_t v)
{
	if (e->n >= KINST_DETOUR_SIZE) {
		e->full = true;
		return;
	}
	e->b[e->n++] = v;
}

static void
put32(struct em *e, uint32_t v)
{
	put(e, (uint8_t)v);
	put(e, (uint8_t)(v >> 8));
	put(e, (uint8_t)(v >> 16));
	put(e, (uint8_t)(v >> 24));
}

static void
put64(struct em *e, uint64_t v)
{
	put32(e, (uint32_t)v);
	put32(e, (uint32_t)(v >> 32));
}

static bool
fits32(int64_t v)
{
	return (v >= -2147483648LL && v <= 2147483647LL);
}

/* ModRM + SIB + disp for [%rsp + disp], reg field r (0..7). */
static void
rsp_mem(struct em *e, uint8_t r, int32_t disp)
{
	if (disp >= -128 && disp <= 127) {
		put(e, (uint8_t)(0x44 | (r << 3)));
		put(e, 0x24);
		put(e, (uint8_t)(int8_t)disp);
	} else {
		put(e, (uint8_t)(0x84 | (r << 3)));
		put(e, 0x24);
		put32(e, (uint32_t)disp);
	}
}

/* mov %reg, disp(%rsp) (store) or mov disp(%rsp), %reg (load); reg 0..15. */
static void
mov_rsp(struct em *e, uint8_t reg, int32_t disp, bool store)
{
	put(e, (uint8_t)(0x48 | (reg >= 8 ? 0x04 : 0)));	/* REX.W, .R */
	put(e, store ? 0x89 : 0x8b);
	rsp_mem(e, reg & 7, disp);
}

/* lea disp(%rsp), %reg (flags untouched). */
static void
lea_rsp(struct em *e, uint8_t reg, int32_t disp)
{
	put(e, (uint8_t)(0x48 | (reg >= 8 ? 0x04 : 0)));
	put(e, 0x8d);
	rsp_mem(e, reg & 7, disp);
}

/* A rel32 from the end of the instruction being emitted (len bytes from here). */
static bool
rel32_to(struct em *e, uint32_t len, uint64_t target)
{
	int64_t rel = (int64_t)(target - (e->at + e->n + len));

	if (!fits32(rel))
		return (false);
	put32(e, (uint32_t)rel);
	return (true);
}

static bool
save_regs(struct em *e, const struct kinst_detour_spec *sp)
{
	uint8_t r;

	lea_rsp(e, KINST_RSP, -(int32_t)(sp->redzone + REGS_SIZE));
	put(e, 0x9c);					/* pushfq */
	put(e, 0x8f);					/* popq OFF_RFLAGS(%rsp) */
	rsp_mem(e, 0, (int32_t)OFF_RFLAGS);
	for (r = 0; r < KINST_NGPR; r++)
		if (r != KINST_RSP)
			mov_rsp(e, r, (int32_t)(8u * r), true);
	/* The interrupted %rsp, %rip, %cs, %ss (rax is saved: scratch). */
	lea_rsp(e, KINST_RAX, (int32_t)(sp->redzone + REGS_SIZE));
	mov_rsp(e, KINST_RAX, 8 * KINST_RSP, true);
	put(e, 0x48);					/* movabs $addr, %rax */
	put(e, 0xb8);
	put64(e, sp->addr);
	mov_rsp(e, KINST_RAX, (int32_t)OFF_RIP, true);
	put(e, 0x8c);					/* mov %cs, OFF_CS(%rsp) */
	rsp_mem(e, 1, (int32_t)OFF_CS);
	put(e, 0x8c);					/* mov %ss, OFF_CS+2(%rsp) */
	rsp_mem(e, 2, (int32_t)OFF_CS + 2);
	put(e, 0xc7);					/* movl $0, OFF_CS+4(%rsp) */
	rsp_mem(e, 0, (int32_t)OFF_CS + 4);
	put32(e, 0);
	return (true);
}

static bool
call_handler(struct em *e, const struct kinst_detour_spec *sp)
{
	/*
	 * The handler runs with SMAP on, as the int3 path's kernel entry
	 * leaves it: inside a user-access region (stac ... clac) the window's
	 * AC is set.  clac only then, testing the saved rflags: clac is #UD
	 * in user space (the harness, which never sets AC) and ends a
	 * translation block under QEMU's TCG.  The popfq after the call gives
	 * the window its AC back.
	 */
	if ((sp->flags & KINST_DETOUR_SMAP) != 0) {
		put(e, 0xf6);				/* testb $4, OFF_RFLAGS+2(%rsp) */
		rsp_mem(e, 0, (int32_t)OFF_RFLAGS + 2);	/* (AC, bit 18) */
		put(e, 0x04);
		put(e, 0x74); put(e, 0x03);		/* jz 1f */
		put(e, 0x0f); put(e, 0x01); put(e, 0xca);	/* clac; 1: */
	}
	put(e, 0x48); put(e, 0x89); put(e, 0xe6);	/* mov %rsp, %rsi */
	put(e, 0x48); put(e, 0xbf); put64(e, sp->arg);	/* movabs $arg, %rdi */
	put(e, 0x48); put(e, 0x89); put(e, 0xe3);	/* mov %rsp, %rbx */
	put(e, 0x48); put(e, 0x83); put(e, 0xe4);	/* and $-16, %rsp */
	put(e, 0xf0);
	/*
	 * The handler is C: DF clear, as the int3 path's kernel entry leaves
	 * it.  The window may be where the probed code has set it (between
	 * std and cld), and the kernel's memcpy is a rep movsb.  The popfq
	 * after the call gives the window its DF back.
	 */
	put(e, 0xfc);					/* cld */
	put(e, 0xe8);					/* call handler */
	if (!rel32_to(e, 4, sp->handler))
		return (false);
	put(e, 0x48); put(e, 0x89); put(e, 0xdc);	/* mov %rbx, %rsp */
	return (true);
}

static void
restore_regs(struct em *e, const struct kinst_detour_spec *sp)
{
	uint8_t r;

	put(e, 0xff);					/* pushq OFF_RFLAGS(%rsp) */
	rsp_mem(e, 6, (int32_t)OFF_RFLAGS);
	put(e, 0x9d);					/* popfq */
	for (r = 0; r < KINST_NGPR; r++)
		if (r != KINST_RSP)
			mov_rsp(e, r, (int32_t)(8u * r), false);
	lea_rsp(e, KINST_RSP, (int32_t)(sp->redzone + REGS_SIZE));
}

/*
 * One instruction of the window, relocated to run at the detour: verbatim
 * (a RIP-relative displacement rewritten), or, for the last one only, a
 * direct jmp/jcc re-encoded as rel32 to the same target.
 */
static int
relocate(struct em *e, const uint8_t *bytes, const struct kinst_insn *in,
    const struct kinst_class *cls, uint64_t addr, bool last)
{
	uint64_t target;
	uint32_t i, start;
	int64_t rel;

	if (cls->treatment == KINST_T_OOL || cls->treatment == KINST_T_OOL_RIPREL) {
		if ((cls->flags & KINST_CF_NO_STI) != 0)
			return (KINST_RELOC_NOTOOL);
		start = e->n;
		for (i = 0; i < in->len; i++)
			put(e, bytes[i]);
		if (in->rip_relative && !e->full) {
			rel = (int64_t)(addr + in->len + (uint64_t)in->disp -
			    (e->at + start + in->len));
			if (in->disp_size != 4 || !fits32(rel))
				return (KINST_RELOC_RANGE);
			for (i = 0; i < 4; i++)
				e->b[start + in->disp_off + i] =
				    (uint8_t)((uint64_t)rel >> (8 * i));
		}
		return (KINST_RELOC_OK);
	}
	if (!last || cls->treatment != KINST_T_EMULATE ||
	    (cls->emul != KINST_EM_JMP_REL && cls->emul != KINST_EM_JCC) ||
	    (in->prefixes & KINST_PFX_66) != 0)
		return (KINST_RELOC_NOTOOL);
	target = addr + in->len + (uint64_t)in->imm;
	if (cls->emul == KINST_EM_JMP_REL) {
		put(e, 0xe9);
		return (rel32_to(e, 4, target) ? KINST_RELOC_OK :
		    KINST_RELOC_RANGE);
	}
	/* 70+cc rel8 or 0f 80+cc rel32: the condition is the low nibble. */
	put(e, 0x0f);
	put(e, (uint8_t)(0x80 | (in->opcode & 0x0f)));
	return (rel32_to(e, 4, target) ? KINST_RELOC_OK : KINST_RELOC_RANGE);
}

/*
 * The window at the detour's e->n: its instructions relocated, then a jmp
 * back after it -- or, for a return padded to a jump's size, the ret alone
 * (the int3s after it never run).  *wlen: the window's length.
 */
static int
relocate_window(struct em *e, const uint8_t *window, uint32_t avail,
    uint64_t addr, uint32_t *wlen)
{
	struct kinst_insn in;
	struct kinst_class cls;
	uint32_t off;
	int st, rc;

	if (kinst_jopt_padded_ret(window, avail)) {
		put(e, 0xc3);				/* ret */
		*wlen = KINST_JOPT_WINDOW;
		return (KINST_RELOC_OK);
	}
	for (off = 0; off < KINST_JOPT_WINDOW; off += in.len) {
		if (off >= avail)
			return (KINST_RELOC_NOTOOL);
		st = kinst_decode(window + off, avail - off, &in);
		if (st != KINST_DEC_OK)
			return (KINST_RELOC_NOTOOL);
		kinst_classify(st, &in, window + off, &cls);
		rc = relocate(e, window + off, &in, &cls, addr + off,
		    off + in.len >= KINST_JOPT_WINDOW);
		if (rc != KINST_RELOC_OK)
			return (rc);
	}
	put(e, 0xe9);					/* jmp back */
	if (!rel32_to(e, 4, addr + off))
		return (KINST_RELOC_RANGE);
	*wlen = off;
	return (KINST_RELOC_OK);
}

int
kinst_detour_build(const uint8_t *window, uint32_t avail,
    const struct kinst_detour_spec *sp, uint8_t out[KINST_DETOUR_SIZE],
    uint32_t *wlen, uint32_t *wstart)
{
	struct em e = { out, 0, sp->at, false };
	uint32_t i, start, len;
	int rc;

	for (i = 0; i < KINST_DETOUR_SIZE; i++)
		out[i] = 0xcc;
	if (sp->redzone > 4096)
		return (KINST_RELOC_RANGE);
	save_regs(&e, sp);
	if (!call_handler(&e, sp))
		return (KINST_RELOC_RANGE);
	restore_regs(&e, sp);
	start = e.n;
	rc = relocate_window(&e, window, avail, sp->addr, &len);
	if (rc != KINST_RELOC_OK)
		return (rc);
	if (e.full) {
		for (i = 0; i < KINST_DETOUR_SIZE; i++)
			out[i] = 0xcc;
		return (KINST_RELOC_RANGE);
	}
	*wlen = len;
	if (wstart != NULL)
		*wstart = start;
	return (KINST_RELOC_OK);
}
