/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * arm64 (A64) behind kinst_isa.h: a probe's preparation at arm time, the
 * breakpoint's write, the emulator on the register file, the walk of a
 * function's words and of its frame records.  No jump-optimized probes:
 * every offset is refused a jump (KINST_JQ_INSN), and no detour is built.
 *
 * Not here: the exclusive-sequence rule (kinst_a64_exclusive) needs the
 * words before the probed one, which kinst_isa_prepare() is not given;
 * the arm64 shim applies it over the function in kinst_os_insn_check(),
 * before anything is armed.
 */

#include "kinst_isa.h"
#include "kinst_os.h"
#include "kinst_probe.h"

int
kinst_isa_prepare(struct kinst_probe *p, const uint8_t *bytes, size_t avail,
    uint8_t img[KINST_TRAMP_SIZE])
{
	uint32_t w;
	size_t i;

	for (i = 0; i < KINST_TRAMP_SIZE; i++)
		img[i] = 0;			/* udf #0 */
	p->insn.len = 0;
	p->cls.treatment = KINST_T_REFUSE;
	p->cls.emul = KINST_A64_EM_NONE;
	p->cls.reason = KINST_R_UNDECODABLE;
	p->cls.flags = 0;
	if (avail < 4 || (p->addr & 3) != 0)
		return (p->cls.reason);
	w = kinst_a64_word(bytes);
	kinst_a64_decode(w, &p->insn.a);
	p->insn.len = 4;
	p->cls.treatment = p->insn.a.treatment;
	p->cls.emul = p->insn.a.emul;
	p->cls.reason = p->insn.a.reason;
	/* What the emulator cannot do here is refused, never run wrongly. */
	if (p->cls.treatment == KINST_T_EMULATE &&
	    ((p->cls.emul == KINST_A64_EM_LDR_LIT && p->insn.a.simd) ||
	    ((p->cls.emul == KINST_A64_EM_BR_PAC ||
	    p->cls.emul == KINST_A64_EM_BLR_PAC ||
	    p->cls.emul == KINST_A64_EM_RET_PAC) && kinst_os_pac_ops() == NULL))) {
		p->cls.treatment = KINST_T_REFUSE;
		p->cls.reason = KINST_R_UNDECODABLE;
	}
	if (p->cls.treatment == KINST_T_REFUSE)
		return (p->cls.reason);
	p->cls.reason = KINST_R_NONE;
	for (i = 0; i < 4; i++)
		p->orig[i] = bytes[i];
	if (p->cls.treatment == KINST_T_OOL)
		(void)kinst_a64_tramp_build(w, p->addr, p->tramp, img);
	return (KINST_R_NONE);
}

void
kinst_isa_jump(uint64_t from, uint64_t to, uint8_t out[KINST_JOPT_WINDOW])
{
	int64_t off = (int64_t)(to - from);
	uint32_t w = 0x14000000u | (uint32_t)((off >> 2) & 0x3ffffff);	/* b */
	unsigned k;

	for (k = 0; k < KINST_JOPT_WINDOW; k++)
		out[k] = (uint8_t)(w >> (8 * k));
}

int
kinst_emulate(const struct kinst_insn *insn, int emul, struct kinst_regs *regs,
    const struct kinst_mem_ops *mem)
{
	struct kinst_a64_regs a;
	unsigned i;
	int r;

	if (insn->a.emul != emul)
		return (KINST_EMU_BADINSN);
	for (i = 0; i < 31; i++)
		a.x[i] = regs->x[i];
	a.sp = regs->sp;
	a.pc = regs->pc;
	a.pstate = regs->pstate;
	r = kinst_a64_emulate(&insn->a, &a, mem, kinst_os_pac_ops());
	if (r != KINST_A64_EMU_OK)
		return (r);
	for (i = 0; i < 31; i++)
		regs->x[i] = a.x[i];
	regs->sp = a.sp;
	regs->pc = a.pc;
	regs->pstate = a.pstate;
	return (KINST_EMU_OK);
}

uint8_t
kinst_insn_length(const uint8_t *buf, size_t avail)
{

	(void)buf;
	return (avail >= 4 ? 4 : 0);
}

int
kinst_func_boundary(const uint8_t *func, size_t size, uint32_t off,
    uint32_t *prev, uint32_t *next)
{
	uint32_t words = (uint32_t)(size / 4);

	(void)func;
	if (off < words * 4 && off % 4 == 0)
		return (1);
	if (prev != NULL)
		*prev = off / 4 * 4 < words * 4 ? off / 4 * 4 : (words ? words * 4 - 4 : 0);
	if (next != NULL)
		*next = off / 4 * 4 + 4 < words * 4 ? off / 4 * 4 + 4 : (uint32_t)size;
	return (0);
}

/* Every word refused a jump: arm64 has no jump-optimized probes yet. */
static uint32_t
no_jumps(uint32_t size, uint8_t *out)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		out[i] = i % 4 == 0 && i + 4 <= size ? KINST_JQ_INSN :
		    KINST_JQ_NOT_INSN;
	return (0);
}

uint32_t
kinst_jopt_qualify(const uint8_t *func, uint32_t size,
    kinst_jopt_refusal_fn refusal, void *ctx, uint8_t *out)
{

	(void)func;
	(void)refusal;
	(void)ctx;
	return (no_jumps(size, out));
}

uint32_t
kinst_jopt_qualify_decoded(const uint8_t *func, uint32_t size,
    kinst_jopt_decode_fn decode, kinst_jopt_refusal_fn refusal, void *ctx,
    uint8_t *out)
{

	(void)func;
	(void)decode;
	(void)refusal;
	(void)ctx;
	return (no_jumps(size, out));
}

int
kinst_detour_build(const uint8_t *window, uint32_t avail,
    const struct kinst_detour_spec *sp, uint8_t out[KINST_DETOUR_SIZE],
    uint32_t *wlen, uint32_t *wstart)
{

	(void)window;
	(void)avail;
	(void)sp;
	(void)out;
	*wlen = 0;
	*wstart = 0;
	return (KINST_RELOC_NOTOOL);
}

/*
 * The callers from the frame records: x29 points at {the caller's x29,
 * the return address}; at the first instruction the return address is
 * still x30.  Records must lie in [lo, hi), aligned, each above the last.
 */
/* A return address without its pointer-authentication code (strip bits). */
static uint64_t
fp_strip(uint64_t pc, uint64_t strip)
{

	return ((pc & (1ull << 55)) != 0 ? pc | strip : pc & ~strip);
}

uint32_t
kinst_fpwalk(const struct kinst_fpwalk *w, const struct kinst_mem_ops *mem,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	uint64_t rec[2], fp = w->fp, min = w->lo, lr = fp_strip(w->lr, w->strip);
	uint32_t n = 0;

	*truncated = false;
	if (w->at_entry && lr >= w->pc_min) {
		if (max == 0) {
			*truncated = true;
			return (0);
		}
		pcs[n++] = lr;
	}
	while ((fp & 15) == 0 && fp >= min && w->hi >= 16 && fp <= w->hi - 16 &&
	    mem->read(mem->ctx, fp, rec, sizeof(rec)) == 0 &&
	    (rec[1] = fp_strip(rec[1], w->strip)) >= w->pc_min) {
		if (n == max) {
			*truncated = true;
			break;
		}
		pcs[n++] = rec[1];
		min = fp + 16;
		fp = rec[0];
	}
	return (n);
}

/* bl out of the function, and b, b.cond, cbz/cbnz, tbz/tbnz out of it. */
size_t
kinst_func_exits(const uint8_t *text, size_t size, uint64_t base,
    kinst_exit_fn fn, void *arg)
{
	struct kinst_a64_insn d;
	size_t off;
	uint64_t to;
	int kind;

	for (off = 0; off + 4 <= size; off += 4) {
		kinst_a64_decode(kinst_a64_word(text + off), &d);
		switch (d.emul) {
		case KINST_A64_EM_BL:
			kind = KINST_EXIT_CALL;
			break;
		case KINST_A64_EM_B:
			kind = KINST_EXIT_JMP;
			break;
		case KINST_A64_EM_BCOND: case KINST_A64_EM_CBZ: case KINST_A64_EM_CBNZ:
		case KINST_A64_EM_TBZ: case KINST_A64_EM_TBNZ:
			kind = KINST_EXIT_JCC;
			break;
		default:
			continue;
		}
		to = kinst_a64_target(&d, base + off);
		if ((to < base || to >= base + size) &&
		    fn(arg, base + off, to, kind) != 0)
			return (off);
	}
	return (off);
}

const char *
kinst_jopt_name(int verdict)
{

	return (verdict == KINST_JQ_INSN ? "window-instruction" : "not-an-instruction");
}
