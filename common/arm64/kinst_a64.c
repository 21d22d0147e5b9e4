/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A64 decode and classification (kinst_a64.h).  Written from the Arm
 * Architecture Reference Manual's encoding index (A64 "top-level
 * encodings" and the branch, exception, system and load/store groups);
 * docs/engine.md, "arm64: the classifier", says what each verdict rests
 * on.
 */

#include "kinst_a64.h"

#define	BITS(w, hi, lo)	(((w) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1))

/* The low n bits of v, sign-extended. */
static int64_t
sext(uint32_t v, unsigned n)
{
	uint64_t m = 1ull << (n - 1);
	uint64_t x = v & ((1ull << n) - 1);

	return (int64_t)((x ^ m) - m);
}

static void
refuse(struct kinst_a64_insn *d, int reason)
{
	d->treatment = KINST_T_REFUSE;
	d->reason = (uint8_t)reason;
}

static void
emulate(struct kinst_a64_insn *d, int emul)
{
	d->treatment = KINST_T_EMULATE;
	d->emul = (uint8_t)emul;
}

/* bl, b, b.cond, cbz/cbnz, tbz/tbnz: true when w is one of them. */
static bool
direct_branch(uint32_t w, struct kinst_a64_insn *d)
{
	if ((w & 0x7c000000u) == 0x14000000u) {		/* b, bl */
		d->off = sext(BITS(w, 25, 0), 26) * 4;
		emulate(d, (w >> 31) ? KINST_A64_EM_BL : KINST_A64_EM_B);
		return true;
	}
	if ((w & 0xff000000u) == 0x54000000u) {		/* b.cond, bc.cond */
		d->cond = (uint8_t)BITS(w, 3, 0);
		d->off = sext(BITS(w, 23, 5), 19) * 4;
		emulate(d, KINST_A64_EM_BCOND);
		return true;
	}
	if ((w & 0x7e000000u) == 0x34000000u) {		/* cbz, cbnz */
		d->sf = (uint8_t)(w >> 31);
		d->rt = (uint8_t)BITS(w, 4, 0);
		d->off = sext(BITS(w, 23, 5), 19) * 4;
		emulate(d, BITS(w, 24, 24) ? KINST_A64_EM_CBNZ : KINST_A64_EM_CBZ);
		return true;
	}
	if ((w & 0x7e000000u) == 0x36000000u) {		/* tbz, tbnz */
		d->bit = (uint8_t)((BITS(w, 31, 31) << 5) | BITS(w, 23, 19));
		d->rt = (uint8_t)BITS(w, 4, 0);
		d->off = sext(BITS(w, 18, 5), 14) * 4;
		emulate(d, BITS(w, 24, 24) ? KINST_A64_EM_TBNZ : KINST_A64_EM_TBZ);
		return true;
	}
	return false;
}

/* Unconditional branch (register): br, blr, ret, eret and their PAC forms. */
static void
branch_register(uint32_t w, struct kinst_a64_insn *d)
{
	unsigned opc = BITS(w, 24, 21), op2 = BITS(w, 20, 16);
	unsigned op3 = BITS(w, 15, 10), rn = BITS(w, 9, 5), op4 = BITS(w, 4, 0);
	bool plain = op3 == 0 && op4 == 0;
	bool pacz = (op3 == 2 || op3 == 3) && op4 == 31;	/* key A, B; no Xm */

	d->rt = (uint8_t)rn;
	d->pac_key = (uint8_t)(op3 & 1);
	if (op2 != 31) {
		refuse(d, KINST_R_UNDECODABLE);
		return;
	}
	switch (opc) {
	case 0:		/* br, braaz, brabz */
	case 1:		/* blr, blraaz, blrabz */
		if (plain)
			emulate(d, opc ? KINST_A64_EM_BLR : KINST_A64_EM_BR);
		else if (pacz) {
			d->pac_mod = KINST_A64_PAC_ZERO;
			emulate(d, opc ? KINST_A64_EM_BLR_PAC : KINST_A64_EM_BR_PAC);
		} else
			refuse(d, KINST_R_UNDECODABLE);
		return;
	case 2:		/* ret, retaa, retab */
		if (plain)
			emulate(d, KINST_A64_EM_RET);
		else if (pacz && rn == 31) {
			d->rt = 30;
			d->pac_mod = KINST_A64_PAC_SP;
			emulate(d, KINST_A64_EM_RET_PAC);
		} else
			refuse(d, KINST_R_UNDECODABLE);
		return;
	case 4:		/* eret, eretaa, eretab */
	case 5:		/* drps */
		if (rn == 31 && (plain || (opc == 4 && pacz)))
			refuse(d, KINST_R_ERET);
		else
			refuse(d, KINST_R_UNDECODABLE);
		return;
	case 8:		/* braa, brab */
	case 9:		/* blraa, blrab */
		if (op3 == 2 || op3 == 3) {
			d->rm = (uint8_t)op4;
			/* <Xm|SP>: register 31 is the stack pointer here */
			d->pac_mod = op4 == 31 ? KINST_A64_PAC_SP : KINST_A64_PAC_REG;
			emulate(d, opc == 9 ? KINST_A64_EM_BLR_PAC : KINST_A64_EM_BR_PAC);
		} else
			refuse(d, KINST_R_UNDECODABLE);
		return;
	}
	refuse(d, KINST_R_UNDECODABLE);
}

/* Exception generation: svc, hvc, smc, brk, hlt, dcps*, tcancel. */
static void
exception(uint32_t w, struct kinst_a64_insn *d)
{
	unsigned opc = BITS(w, 23, 21), op2 = BITS(w, 4, 2), ll = BITS(w, 1, 0);

	if (op2 != 0)
		refuse(d, KINST_R_UNDECODABLE);
	else if ((opc == 0 || opc == 5) && ll != 0)	/* svc hvc smc, dcps1-3 */
		refuse(d, KINST_R_EXC_GEN);
	else if ((opc == 1 || opc == 2) && ll == 0)	/* brk (BUG, WARN), hlt */
		refuse(d, KINST_R_EXC_GEN);
	else if (opc == 3 && ll == 0)			/* tcancel: no PC in it */
		d->treatment = KINST_T_OOL;
	else
		refuse(d, KINST_R_UNDECODABLE);
}

/*
 * msr (register) writes that may run out of line: the flags, the
 * floating-point control and status, and EL0's thread registers.  Every
 * other system register is refused: the exception state (ELR, SPSR), the
 * vectors, the stack and per-CPU pointers (SP_EL0 is current, TPIDR_EL1
 * the per-CPU offset), DAIF, translation and debug are what kinst's own
 * breakpoint handler runs on.
 */
#define	SYSREG(op0, op1, crn, crm, op2) \
	(((op0) << 14) | ((op1) << 11) | ((crn) << 7) | ((crm) << 3) | (op2))

static bool
msr_harmless(unsigned sysreg)
{
	switch (sysreg) {
	case SYSREG(3, 3, 4, 2, 0):	/* nzcv */
	case SYSREG(3, 3, 4, 4, 0):	/* fpcr */
	case SYSREG(3, 3, 4, 4, 1):	/* fpsr */
	case SYSREG(3, 3, 13, 0, 2):	/* tpidr_el0 */
	case SYSREG(3, 3, 13, 0, 3):	/* tpidrro_el0 */
		return true;
	}
	return false;
}

/*
 * mrs of what kinst's own breakpoint exception overwrites before the
 * instruction runs from its trampoline: the exception return state (ELR,
 * SPSR), the syndrome (ESR) and the fault address (FAR, UNKNOWN after a
 * brk), of EL1 and of EL2 (a VHE kernel runs at EL2, where the EL1 names
 * reach these).  The instruction would read the brk's values, not the
 * interrupted ones: an exception handler that reads its own syndrome
 * (Linux's el1h_64_sync_handler) would dispatch the brk's.
 */
static bool
exception_state(unsigned sysreg)
{
	switch (sysreg) {
	case SYSREG(3, 0, 4, 0, 0):	/* spsr_el1 */
	case SYSREG(3, 0, 4, 0, 1):	/* elr_el1 */
	case SYSREG(3, 0, 5, 2, 0):	/* esr_el1 */
	case SYSREG(3, 0, 6, 0, 0):	/* far_el1 */
	case SYSREG(3, 4, 4, 0, 0):	/* spsr_el2 */
	case SYSREG(3, 4, 4, 0, 1):	/* elr_el2 */
	case SYSREG(3, 4, 5, 2, 0):	/* esr_el2 */
	case SYSREG(3, 4, 6, 0, 0):	/* far_el2 */
		return true;
	}
	return false;
}

/* System: hints, barriers, PSTATE, sys/sysl, msr/mrs. */
static void
system_insn(uint32_t w, struct kinst_a64_insn *d)
{
	unsigned l = BITS(w, 21, 21), op0 = BITS(w, 20, 19), op1 = BITS(w, 18, 16);
	unsigned crn = BITS(w, 15, 12), crm = BITS(w, 11, 8), op2 = BITS(w, 7, 5);
	unsigned rt = BITS(w, 4, 0);

	d->treatment = KINST_T_OOL;
	if (op0 >= 2) {				/* msr / mrs (register) */
		unsigned sr = BITS(w, 20, 5);

		d->rt = (uint8_t)rt;
		if (l == 0 && !msr_harmless(sr))
			refuse(d, KINST_R_SYSREG_WRITE);
		else if (l == 1 && sr == SYSREG(3, 3, 4, 2, 1))	/* daif */
			emulate(d, KINST_A64_EM_MRS_DAIF);
		else if (l == 1 && exception_state(sr))
			refuse(d, KINST_R_EXC_STATE_READ);
		return;
	}
	if (op0 == 1)				/* sys, sysl (dc, ic, tlbi, at) */
		return;
	if (l == 1) {				/* tstart, ttest (TME) */
		if (!(op1 == 3 && crn == 3 && crm <= 1 && op2 == 3))
			refuse(d, KINST_R_UNDECODABLE);
		return;
	}
	if (crn == 4 && rt == 31) {		/* msr (immediate): PSTATE */
		bool flags = op1 == 0 && crm == 0 && op2 <= 2;	/* cfinv, xaflag, axflag */
		if (!flags)
			refuse(d, KINST_R_SYSREG_WRITE);
		return;
	}
	if (crn == 2 && op1 == 3 && rt == 31) {	/* hint */
		unsigned n = (crm << 3) | op2;
		if (n == 2 || n == 3)		/* wfe, wfi */
			refuse(d, KINST_R_HALT);
		/* paciasp, pacibsp, bti c, bti j, bti jc */
		d->landing = n == 25 || n == 27 || n == 34 || n == 36 || n == 38;
		return;
	}
	if (crn == 3 && op1 == 3 && rt == 31) {
		/* clrex, dsb, dmb, isb, sb; dsb nXS; tcommit */
		if (!(op2 == 2 || op2 >= 4 || (op2 == 1 && (crm & 3) == 2) ||
		    (op2 == 3 && crm == 0)))
			refuse(d, KINST_R_UNDECODABLE);
		return;
	}
	if (crn == 1 && op1 == 3 && crm == 0 && op2 <= 1)	/* wfet, wfit */
		refuse(d, KINST_R_HALT);
	else	/* the rest of op0 0 is unallocated (Capstone 4 calls it msr) */
		refuse(d, KINST_R_UNDECODABLE);
}

/*
 * The exclusive kind of w, without the rest of a decode: in the class of
 * exclusives, ordered accesses and cas (bits 29-24 001000), o2 (bit 23) 0
 * is ldxr/stxr (o1, bit 21, 0) or ldxp/stxp (o1 1 with 32- or 64-bit
 * pairs); o1 1 with size 0x is casp, and o2 1 is ldar/stlr/cas.
 */
static int
excl_kind(uint32_t w)
{
	if ((w & 0x3f800000u) != 0x08000000u)	/* o2 0 */
		return KINST_A64_EXCL_NONE;
	if (BITS(w, 21, 21) && !(BITS(w, 31, 30) & 2))
		return KINST_A64_EXCL_NONE;	/* casp */
	return BITS(w, 22, 22) ? KINST_A64_EXCL_LOAD : KINST_A64_EXCL_STORE;
}

/* Loads and stores: the literal loads and the exclusives. */
static void
load_store(uint32_t w, struct kinst_a64_insn *d)
{
	d->treatment = KINST_T_OOL;
	if ((w & 0x3b000000u) == 0x18000000u) {		/* load literal */
		unsigned opc = BITS(w, 31, 30), v = BITS(w, 26, 26);
		d->rt = (uint8_t)BITS(w, 4, 0);
		d->off = sext(BITS(w, 23, 5), 19) * 4;
		if (v) {
			if (opc == 3) {
				refuse(d, KINST_R_UNDECODABLE);
				return;
			}
			d->simd = 1;
			d->size = (uint8_t)(4u << opc);
			emulate(d, KINST_A64_EM_LDR_LIT);
		} else if (opc <= 1) {
			d->sf = (uint8_t)opc;
			d->size = (uint8_t)(opc ? 8 : 4);
			emulate(d, KINST_A64_EM_LDR_LIT);
		} else if (opc == 2) {
			d->sf = 1;
			d->size = 4;
			emulate(d, KINST_A64_EM_LDRSW_LIT);
		} else
			emulate(d, KINST_A64_EM_PRFM_LIT);
		return;
	}
	d->excl = (uint8_t)excl_kind(w);
	if (d->excl != KINST_A64_EXCL_NONE)
		refuse(d, KINST_R_EXCLUSIVE);
}

void
kinst_a64_decode(uint32_t w, struct kinst_a64_insn *d)
{
	unsigned op0 = BITS(w, 28, 25);

	*d = (struct kinst_a64_insn){ .word = w, .treatment = KINST_T_OOL };
	switch (op0) {
	case 0:					/* reserved: udf; SME */
		if (BITS(w, 31, 31))
			return;			/* SME: out of line */
		if (BITS(w, 30, 16) == 0)
			refuse(d, KINST_R_UD);	/* udf #imm16 */
		else
			refuse(d, KINST_R_UNDECODABLE);
		return;
	case 1:
	case 3:
		refuse(d, KINST_R_UNDECODABLE);	/* unallocated */
		return;
	case 2:					/* SVE */
		return;
	case 8:
	case 9:					/* data processing, immediate */
		if ((w & 0x1f000000u) == 0x10000000u) {	/* adr, adrp */
			int64_t imm = sext((BITS(w, 23, 5) << 2) | BITS(w, 30, 29), 21);
			bool page = BITS(w, 31, 31);
			d->rt = (uint8_t)BITS(w, 4, 0);
			d->off = page ? imm * 4096 : imm;
			emulate(d, page ? KINST_A64_EM_ADRP : KINST_A64_EM_ADR);
		}
		return;
	case 10:
	case 11:				/* branches, exceptions, system */
		if (direct_branch(w, d))
			return;
		if ((w & 0xff000000u) == 0xd4000000u)
			exception(w, d);
		else if ((w & 0xffc00000u) == 0xd5000000u)
			system_insn(w, d);
		else if ((w & 0xfe000000u) == 0xd6000000u)
			branch_register(w, d);
		else
			refuse(d, KINST_R_UNDECODABLE);
		return;
	}
	if ((op0 & 5) == 4)			/* x1x0: loads and stores */
		load_store(w, d);
	/* x101 data processing (register), x111 SIMD and FP: out of line */
}

uint64_t
kinst_a64_target(const struct kinst_a64_insn *d, uint64_t pc)
{
	switch (d->emul) {
	case KINST_A64_EM_NONE:
	case KINST_A64_EM_BR:
	case KINST_A64_EM_BLR:
	case KINST_A64_EM_RET:
	case KINST_A64_EM_BR_PAC:
	case KINST_A64_EM_BLR_PAC:
	case KINST_A64_EM_RET_PAC:
		return pc;
	case KINST_A64_EM_ADRP:
		return (pc & ~(uint64_t)0xfff) + (uint64_t)d->off;
	}
	return pc + (uint64_t)d->off;
}

bool
kinst_a64_exclusive(const uint32_t *words, size_t n, size_t i)
{
	size_t k;

	if (i >= n)
		return false;
	if (excl_kind(words[i]) != KINST_A64_EXCL_NONE)
		return true;
	for (k = 1; k <= KINST_A64_EXCL_SPAN && k <= i; k++) {
		switch (excl_kind(words[i - k])) {
		case KINST_A64_EXCL_STORE:
			return false;
		case KINST_A64_EXCL_LOAD:
			return true;
		}
	}
	return false;
}

bool
kinst_a64_cond_holds(unsigned cond, uint64_t pstate)
{
	bool n = (pstate >> 31) & 1, z = (pstate >> 30) & 1;
	bool c = (pstate >> 29) & 1, v = (pstate >> 28) & 1;
	bool r;

	switch ((cond >> 1) & 7) {
	case 0: r = z; break;			/* eq */
	case 1: r = c; break;			/* cs */
	case 2: r = n; break;			/* mi */
	case 3: r = v; break;			/* vs */
	case 4: r = c && !z; break;		/* hi */
	case 5: r = n == v; break;		/* ge */
	case 6: r = !z && n == v; break;	/* gt */
	default: return true;			/* al, nv */
	}
	return (cond & 1) ? !r : r;
}

/* X[n] as the instructions read it: register 31 is the zero register. */
static uint64_t
xreg(const struct kinst_a64_regs *r, unsigned n)
{
	return n == 31 ? 0 : r->x[n];
}

static void
set_xreg(struct kinst_a64_regs *r, unsigned n, uint64_t v)
{
	if (n != 31)
		r->x[n] = v;
}

/* The literal loads into a general register. */
static int
emulate_literal(const struct kinst_a64_insn *d, struct kinst_a64_regs *r,
    const struct kinst_mem_ops *m)
{
	uint64_t addr = kinst_a64_target(d, r->pc), v = 0;
	uint8_t b[8];
	unsigned i;

	if (d->emul == KINST_A64_EM_PRFM_LIT) {		/* a hint: no access */
		r->pc += 4;
		return KINST_A64_EMU_OK;
	}
	if (d->simd || (d->size != 4 && d->size != 8))
		return KINST_A64_EMU_BADINSN;
	if (m == NULL || m->read(m->ctx, addr, b, d->size) != 0)
		return KINST_A64_EMU_FAULT;
	for (i = 0; i < d->size; i++)			/* little-endian */
		v |= (uint64_t)b[i] << (8 * i);
	if (d->emul == KINST_A64_EM_LDRSW_LIT)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	set_xreg(r, d->rt, v);
	r->pc += 4;
	return KINST_A64_EMU_OK;
}

/*
 * A PAC branch's target: the signed pointer in Rn (x30 for reta*),
 * authenticated with its key and modifier by signing it again
 * (kinst_a64_pac_ops).  False when it is not authentic.
 */
static bool
pac_target(const struct kinst_a64_insn *d, const struct kinst_a64_regs *r,
    const struct kinst_a64_pac_ops *pac, uint64_t *target)
{
	uint64_t signed_ptr = xreg(r, d->rt), mod, plain;

	switch (d->pac_mod) {
	case KINST_A64_PAC_SP:
		mod = r->sp;
		break;
	case KINST_A64_PAC_ZERO:
		mod = 0;
		break;
	default:
		mod = xreg(r, d->rm);
		break;
	}
	plain = pac->strip(pac->ctx, signed_ptr);
	if (pac->sign(pac->ctx, d->pac_key, plain, mod) != signed_ptr)
		return false;
	*target = plain;
	return true;
}

int
kinst_a64_emulate(const struct kinst_a64_insn *d, struct kinst_a64_regs *r,
    const struct kinst_mem_ops *m, const struct kinst_a64_pac_ops *pac)
{
	uint64_t pc = r->pc, next = pc + 4, t = kinst_a64_target(d, pc), v;
	bool taken;

	if (d->treatment != KINST_T_EMULATE)
		return KINST_A64_EMU_BADINSN;
	switch (d->emul) {
	case KINST_A64_EM_B:
		r->pc = t;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_BL:
		r->x[30] = next;
		r->pc = t;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_BCOND:
		r->pc = kinst_a64_cond_holds(d->cond, r->pstate) ? t : next;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_CBZ:
	case KINST_A64_EM_CBNZ:
		v = xreg(r, d->rt);
		if (!d->sf)
			v &= 0xffffffffu;
		taken = (v == 0) == (d->emul == KINST_A64_EM_CBZ);
		r->pc = taken ? t : next;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_TBZ:
	case KINST_A64_EM_TBNZ:
		v = (xreg(r, d->rt) >> d->bit) & 1;
		taken = (v == 0) == (d->emul == KINST_A64_EM_TBZ);
		r->pc = taken ? t : next;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_BR:
	case KINST_A64_EM_RET:
		r->pc = xreg(r, d->rt);
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_BLR:
		v = xreg(r, d->rt);			/* before x30 changes */
		r->x[30] = next;
		r->pc = v;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_ADR:
	case KINST_A64_EM_ADRP:
		set_xreg(r, d->rt, t);
		r->pc = next;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_LDR_LIT:
	case KINST_A64_EM_LDRSW_LIT:
	case KINST_A64_EM_PRFM_LIT:
		return emulate_literal(d, r, m);
	case KINST_A64_EM_MRS_DAIF:
		set_xreg(r, d->rt, r->pstate & KINST_A64_PSTATE_DAIF);
		r->pc = next;
		return KINST_A64_EMU_OK;
	case KINST_A64_EM_BR_PAC:
	case KINST_A64_EM_BLR_PAC:
	case KINST_A64_EM_RET_PAC:
		if (pac == NULL)
			return KINST_A64_EMU_BADINSN;
		if (!pac_target(d, r, pac, &v))		/* before x30 changes */
			return KINST_A64_EMU_AUTH;
		if (d->emul == KINST_A64_EM_BLR_PAC)
			r->x[30] = next;
		r->pc = v;
		return KINST_A64_EMU_OK;
	}
	return KINST_A64_EMU_BADINSN;
}

static const char *const emul_names[KINST_A64_EM_COUNT] = {
	[KINST_A64_EM_NONE] = "",
	[KINST_A64_EM_B] = "b",
	[KINST_A64_EM_BL] = "bl",
	[KINST_A64_EM_BCOND] = "b.cond",
	[KINST_A64_EM_CBZ] = "cbz",
	[KINST_A64_EM_CBNZ] = "cbnz",
	[KINST_A64_EM_TBZ] = "tbz",
	[KINST_A64_EM_TBNZ] = "tbnz",
	[KINST_A64_EM_BR] = "br",
	[KINST_A64_EM_BLR] = "blr",
	[KINST_A64_EM_RET] = "ret",
	[KINST_A64_EM_BR_PAC] = "br-pac",
	[KINST_A64_EM_BLR_PAC] = "blr-pac",
	[KINST_A64_EM_RET_PAC] = "ret-pac",
	[KINST_A64_EM_ADR] = "adr",
	[KINST_A64_EM_ADRP] = "adrp",
	[KINST_A64_EM_LDR_LIT] = "ldr-literal",
	[KINST_A64_EM_LDRSW_LIT] = "ldrsw-literal",
	[KINST_A64_EM_PRFM_LIT] = "prfm-literal",
	[KINST_A64_EM_MRS_DAIF] = "mrs-daif",
};

const char *
kinst_a64_emul_name(int emul)
{
	if (emul < 0 || emul >= KINST_A64_EM_COUNT)
		return "";
	return emul_names[emul];
}
