/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Control-flow emulation on a saved register file.  Everything is computed
 * into locals first and committed only when every memory access succeeded,
 * so a fault leaves the register file exactly as it was.
 */

#include "x86/kinst_emulate.h"

static uint64_t
reg(const struct kinst_regs *regs, unsigned n)
{
	return (regs->gpr[n & 15]);
}

uint64_t
kinst_effective_addr(const struct kinst_insn *insn,
    const struct kinst_regs *regs)
{
	uint64_t ea;
	unsigned base, index, scale;

	if (insn->rip_relative) {
		ea = regs->rip + insn->len + (uint64_t)insn->disp;
	} else if (insn->has_sib) {
		scale = insn->sib >> 6;
		index = ((insn->sib >> 3) & 7) | (insn->rex_x << 3);
		base = (insn->sib & 7) | (insn->rex_b << 3);
		ea = (uint64_t)insn->disp;
		/* base 101 with mod 00: no base register (REX.B ignored). */
		if (!((insn->sib & 7) == 5 && insn->mod == 0))
			ea += reg(regs, base);
		/* index 100 without REX.X: no index. */
		if (index != 4)
			ea += reg(regs, index) << scale;
	} else {
		base = insn->rm | (insn->rex_b << 3);
		ea = reg(regs, base) + (uint64_t)insn->disp;
	}
	if (insn->addrsize == 4)
		ea = (uint32_t)ea;
	return (ea);
}

/* Read a little-endian value of size bytes (at most 8), zero-extended. */
static int
read_le(const struct kinst_mem_ops *mem, uint64_t addr, uint64_t *v,
    size_t size)
{
	uint8_t b[8];
	uint64_t r;
	size_t i;

	if (mem->read(mem->ctx, addr, b, size) != 0)
		return (-1);
	r = 0;
	for (i = size; i > 0; i--)
		r = (r << 8) | b[i - 1];
	*v = r;
	return (0);
}

static int
write_le(const struct kinst_mem_ops *mem, uint64_t addr, uint64_t v,
    size_t size)
{
	uint8_t b[8];
	size_t i;

	for (i = 0; i < size; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	return (mem->write(mem->ctx, addr, b, size));
}

/* RFLAGS bits popf may change at CPL 0 (RF is cleared, VM/VIF/VIP kept). */
#define	POPF_MASK	(KINST_FL_CF | KINST_FL_PF | KINST_FL_AF | KINST_FL_ZF | \
	KINST_FL_SF | KINST_FL_TF | KINST_FL_IF | KINST_FL_DF | KINST_FL_OF | \
	KINST_FL_IOPL | KINST_FL_NT | KINST_FL_AC | KINST_FL_ID)

int
kinst_emulate(const struct kinst_insn *insn, int emul,
    struct kinst_regs *regs, const struct kinst_mem_ops *mem)
{
	uint64_t next, target, rsp, rcx, val, mask;
	bool taken;
	size_t sz;

	next = regs->rip + insn->len;
	rsp = regs->gpr[KINST_RSP];
	rcx = regs->gpr[KINST_RCX];

	switch (emul) {
	case KINST_EM_JCC:
		target = kinst_cond(insn->opcode & 0xf, regs->rflags) ?
		    next + (uint64_t)insn->imm : next;
		break;
	case KINST_EM_JMP_REL:
		target = next + (uint64_t)insn->imm;
		break;
	case KINST_EM_CALL_REL:
		target = next + (uint64_t)insn->imm;
		rsp -= 8;
		if (write_le(mem, rsp, next, 8) != 0)
			return (KINST_EMU_FAULT);
		break;
	case KINST_EM_CALL_IND:
	case KINST_EM_JMP_IND:
		if (insn->mod == 3)
			target = reg(regs, insn->rm | (insn->rex_b << 3));
		else if (read_le(mem, kinst_effective_addr(insn, regs),
		    &target, 8) != 0)
			return (KINST_EMU_FAULT);
		if (emul == KINST_EM_CALL_IND) {
			rsp -= 8;
			if (write_le(mem, rsp, next, 8) != 0)
				return (KINST_EMU_FAULT);
		}
		break;
	case KINST_EM_LOOP:
	case KINST_EM_LOOPE:
	case KINST_EM_LOOPNE:
		/* The count register is rcx, or ecx with a 0x67 prefix. */
		/* A 32-bit count is written back zero-extended, as any 32-bit write. */
		rcx = insn->addrsize == 4 ? (uint32_t)(rcx - 1) : rcx - 1;
		taken = rcx != 0;
		if (emul == KINST_EM_LOOPE)
			taken = taken && (regs->rflags & KINST_FL_ZF) != 0;
		else if (emul == KINST_EM_LOOPNE)
			taken = taken && (regs->rflags & KINST_FL_ZF) == 0;
		target = taken ? next + (uint64_t)insn->imm : next;
		break;
	case KINST_EM_JRCXZ:
		val = insn->addrsize == 4 ? (uint32_t)rcx : rcx;
		target = val == 0 ? next + (uint64_t)insn->imm : next;
		break;
	case KINST_EM_RET:
	case KINST_EM_RET_IMM:
		if (read_le(mem, rsp, &target, 8) != 0)
			return (KINST_EMU_FAULT);
		rsp += 8;
		if (emul == KINST_EM_RET_IMM)
			rsp += (uint16_t)insn->imm;
		break;
	case KINST_EM_PUSHF:
		/* The image has RF and VM cleared; IF is the interrupted one. */
		sz = insn->opsize == 2 ? 2 : 8;
		val = regs->rflags & ~(KINST_FL_RF | KINST_FL_VM);
		rsp -= sz;
		if (write_le(mem, rsp, val, sz) != 0)
			return (KINST_EMU_FAULT);
		target = next;
		break;
	case KINST_EM_POPF:
		sz = insn->opsize == 2 ? 2 : 8;
		if (read_le(mem, rsp, &val, sz) != 0)
			return (KINST_EMU_FAULT);
		rsp += sz;
		mask = POPF_MASK;
		if (sz == 2)
			mask &= 0xffff;
		/* At CPL 3 (the user-space harness), IF and IOPL are kept. */
		if ((regs->cs & 3) != 0)
			mask &= ~(KINST_FL_IF | KINST_FL_IOPL);
		regs->rflags = (regs->rflags & ~mask & ~KINST_FL_RF) |
		    (val & mask);
		target = next;
		break;
	default:
		return (KINST_EMU_BADINSN);
	}

	regs->gpr[KINST_RSP] = rsp;
	regs->gpr[KINST_RCX] = rcx;	/* changed only by loop* */
	regs->rip = target;
	return (KINST_EMU_OK);
}
