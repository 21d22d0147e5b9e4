/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Trampoline construction.  See kinst_relocate.h for the layout.
 */

#include "x86/kinst_relocate.h"

static void
put32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = (uint8_t)u;
	p[1] = (uint8_t)(u >> 8);
	p[2] = (uint8_t)(u >> 16);
	p[3] = (uint8_t)(u >> 24);
}

static bool
fits32(int64_t v)
{
	return (v >= -2147483648LL && v <= 2147483647LL);
}

/*
 * The copy of insn (from addr) at copy, which will sit at at: a RIP-relative
 * disp32 rewritten to keep its target.  false if it does not reach.
 */
static bool
riprel_fix(uint8_t *copy, const struct kinst_insn *insn, uint64_t addr,
    uint64_t at)
{
	int64_t rel;

	if (!insn->rip_relative)
		return (true);
	/* target = addr + len + disp; keep it from the new address. */
	rel = (int64_t)(addr + insn->len + (uint64_t)insn->disp -
	    (at + insn->len));
	if (insn->disp_size != 4 || !fits32(rel))
		return (false);
	put32(copy + insn->disp_off, (int32_t)rel);
	return (true);
}

/*
 * Emit one variant at out (room bytes), for code that will sit at at.
 * Returns the number of bytes used, or 0 when a displacement does not reach.
 */
static size_t
emit(const uint8_t *bytes, const struct kinst_insn *insn, uint64_t addr,
    uint64_t at, bool sti, uint8_t *out, size_t room)
{
	size_t n, i;
	uint64_t back;
	int64_t rel;

	n = insn->len;
	if (n + (sti ? 1 : 0) + 5 > room)
		return (0);
	for (i = 0; i < n; i++)
		out[i] = bytes[i];
	if (!riprel_fix(out, insn, addr, at))
		return (0);
	if (sti)
		out[n++] = 0xfb;
	back = addr + insn->len;
	rel = (int64_t)(back - (at + n + 5));
	if (!fits32(rel))
		return (0);
	out[n] = 0xe9;
	put32(out + n + 1, (int32_t)rel);
	return (n + 5);
}

int
kinst_tramp_build(const uint8_t *bytes, const struct kinst_insn *insn,
    const struct kinst_class *cls, uint64_t addr, uint64_t tramp,
    uint8_t out[KINST_TRAMP_SIZE])
{
	size_t i;
	bool sti;

	if (cls->treatment != KINST_T_OOL && cls->treatment != KINST_T_OOL_RIPREL)
		return (KINST_RELOC_NOTOOL);
	if (insn->len == 0 || insn->len > KINST_MAX_INSN_LEN)
		return (KINST_RELOC_NOTOOL);
	for (i = 0; i < KINST_TRAMP_SIZE; i++)
		out[i] = 0xcc;
	if (emit(bytes, insn, addr, tramp + KINST_TRAMP_NOSTI, false,
	    out + KINST_TRAMP_NOSTI, KINST_TRAMP_STI - KINST_TRAMP_NOSTI) == 0)
		return (KINST_RELOC_RANGE);
	/* An instruction that sets IF itself never gets the sti variant. */
	sti = (cls->flags & KINST_CF_NO_STI) == 0;
	if (emit(bytes, insn, addr, tramp + KINST_TRAMP_STI, sti,
	    out + KINST_TRAMP_STI, KINST_TRAMP_SIZE - KINST_TRAMP_STI) == 0)
		return (KINST_RELOC_RANGE);
	return (KINST_RELOC_OK);
}

/* Does the memory operand use %rsp (base; it cannot be an index)? */
static bool
uses_rsp(const struct kinst_insn *insn)
{
	if (insn->rip_relative)
		return (false);
	if (insn->has_sib)
		return ((insn->sib & 7) == 4 && insn->rex_b == 0);
	return (insn->rm == 4 && insn->rex_b == 0);
}

/* One native variant at out (room bytes) for code at at; 0: no fit. */
static size_t
emit_native(const uint8_t *bytes, const struct kinst_insn *insn,
    uint64_t addr, uint64_t at, bool call, bool sti, uint8_t *out,
    size_t room)
{
	uint64_t next = addr + insn->len;
	size_t n = 0, j, i;

	if ((call ? 5 : 0) + (sti ? 1 : 0) + (size_t)insn->len > room)
		return (0);
	if (call) {
		if ((uint64_t)(int64_t)(int32_t)next != next)
			return (0);
		out[n++] = 0x68;		/* push imm32 (sign-extended) */
		put32(out + n, (int32_t)next);
		n += 4;
	}
	if (sti)
		out[n++] = 0xfb;
	j = n;
	for (i = 0; i < insn->len; i++)
		out[n++] = bytes[i];
	/* ff /2 (call) -> ff /4 (jmp): ModRM.reg only. */
	out[j + insn->modrm_off] = (uint8_t)((insn->modrm & 0xc7) | (4 << 3));
	if (!riprel_fix(out + j, insn, addr, at + j))
		return (0);
	return (n);
}

int
kinst_native_build(const uint8_t *bytes, const struct kinst_insn *insn,
    const struct kinst_class *cls, uint64_t addr, uint64_t tramp,
    uint8_t out[KINST_TRAMP_SIZE])
{
	bool call;
	size_t i;

	if (cls->treatment != KINST_T_EMULATE ||
	    (cls->emul != KINST_EM_CALL_IND && cls->emul != KINST_EM_JMP_IND) ||
	    !insn->has_modrm || insn->mod == 3 || uses_rsp(insn) ||
	    insn->len == 0 || insn->len > KINST_MAX_INSN_LEN ||
	    insn->modrm_off >= insn->len)
		return (KINST_RELOC_NOTOOL);
	call = cls->emul == KINST_EM_CALL_IND;
	for (i = 0; i < KINST_TRAMP_SIZE; i++)
		out[i] = 0xcc;
	if (emit_native(bytes, insn, addr, tramp + KINST_TRAMP_NOSTI, call,
	    false, out + KINST_TRAMP_NOSTI,
	    KINST_TRAMP_STI - KINST_TRAMP_NOSTI) == 0 ||
	    emit_native(bytes, insn, addr, tramp + KINST_TRAMP_STI, call, true,
	    out + KINST_TRAMP_STI, KINST_TRAMP_SIZE - KINST_TRAMP_STI) == 0) {
		for (i = 0; i < KINST_TRAMP_SIZE; i++)
			out[i] = 0xcc;
		return (KINST_RELOC_RANGE);
	}
	return (KINST_RELOC_OK);
}

bool
kinst_tramp_reaches(const struct kinst_insn *insn, uint64_t addr,
    uint64_t tramp)
{
	uint64_t lo, hi;
	int64_t d1, d2;

	/* Worst cases over both variants: the lowest and highest code address. */
	lo = tramp;
	hi = tramp + KINST_TRAMP_SIZE;
	d1 = (int64_t)(addr - lo);
	d2 = (int64_t)(addr - hi);
	if (!fits32(d1) || !fits32(d2))
		return (false);
	if (insn->rip_relative) {
		d1 = (int64_t)(addr + (uint64_t)insn->disp - lo);
		d2 = (int64_t)(addr + (uint64_t)insn->disp - hi);
		if (!fits32(d1) || !fits32(d2))
			return (false);
	}
	return (true);
}
