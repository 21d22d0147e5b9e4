/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What Capstone's AArch64 disassembler says the A64 classifier must
 * answer for an instruction it decoded (a64_test, a64_corpus_test).
 */
#ifndef KINST_A64_CS_H
#define KINST_A64_CS_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#include "arm64/kinst_a64.h"

/* What Capstone's instruction id says the classifier must answer. */
struct cs_says {
	int	treatment, reason, emul;	/* emul -1: any of the PC-free */
	int	target_op;			/* operand with the target, or -1 */
};

/* mrs of what kinst's own brk overwrites: ELR, SPSR, ESR, FAR of EL1, EL2. */
static inline bool
mrs_exception_state(unsigned sysreg)
{
	return sysreg == 0xc200 || sysreg == 0xc201 || sysreg == 0xc290 ||
	    sysreg == 0xc300 || sysreg == 0xe200 || sysreg == 0xe201 ||
	    sysreg == 0xe290 || sysreg == 0xe300;
}

static inline bool
msr_allowed(unsigned sysreg)
{
	return sysreg == 0xda10 || sysreg == 0xda20 || sysreg == 0xda21 ||
	    sysreg == 0xde82 || sysreg == 0xde83;
}

/*
 * Capstone 4 writes the system encodings with op0 0 that it does not know
 * as msr or mrs of a register "s3_...".  Most are unallocated; these came
 * later (ARMv8.7 WFxT, TME) and are written here from the Arm ARM.
 */
static inline struct cs_says
op0_zero(uint32_t w)
{
	if (w == 0xd503307fu)				/* tcommit */
		return (struct cs_says){ KINST_T_OOL, 0, 0, -1 };
	if ((w & 0xffffffc0u) == 0xd5031000u)		/* wfet, wfit */
		return (struct cs_says){ KINST_T_REFUSE, KINST_R_HALT, 0, -1 };
	if ((w & 0xfffffee0u) == 0xd5233060u)		/* tstart, ttest */
		return (struct cs_says){ KINST_T_OOL, 0, 0, -1 };
	return (struct cs_says){ KINST_T_REFUSE, KINST_R_UNDECODABLE, 0, -1 };
}

static inline struct cs_says
capstone_says(const cs_insn *in, uint32_t w)
{
	const cs_arm64 *a = &in->detail->arm64;
	struct cs_says s = { KINST_T_OOL, 0, 0, -1 };

	switch (in->id) {
	case ARM64_INS_B:
		s.treatment = KINST_T_EMULATE;
		s.emul = a->cc != ARM64_CC_INVALID ? KINST_A64_EM_BCOND : KINST_A64_EM_B;
		s.target_op = 0;
		break;
	case ARM64_INS_BL:
		s = (struct cs_says){ KINST_T_EMULATE, 0, KINST_A64_EM_BL, 0 };
		break;
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
		s = (struct cs_says){ KINST_T_EMULATE, 0, in->id == ARM64_INS_CBZ ?
		    KINST_A64_EM_CBZ : KINST_A64_EM_CBNZ, 1 };
		break;
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		s = (struct cs_says){ KINST_T_EMULATE, 0, in->id == ARM64_INS_TBZ ?
		    KINST_A64_EM_TBZ : KINST_A64_EM_TBNZ, 2 };
		break;
	case ARM64_INS_BR:
		s = (struct cs_says){ KINST_T_EMULATE, 0, KINST_A64_EM_BR, -1 };
		break;
	case ARM64_INS_BLR:
		s = (struct cs_says){ KINST_T_EMULATE, 0, KINST_A64_EM_BLR, -1 };
		break;
	case ARM64_INS_RET:
		s = (struct cs_says){ KINST_T_EMULATE, 0, KINST_A64_EM_RET, -1 };
		break;
	case ARM64_INS_ADR:
	case ARM64_INS_ADRP:
		s = (struct cs_says){ KINST_T_EMULATE, 0, in->id == ARM64_INS_ADR ?
		    KINST_A64_EM_ADR : KINST_A64_EM_ADRP, 1 };
		break;
	case ARM64_INS_LDR:
	case ARM64_INS_LDRSW:
	case ARM64_INS_PRFM:
		if (a->op_count == 2 && a->operands[1].type == ARM64_OP_IMM) {
			s.treatment = KINST_T_EMULATE;
			s.emul = in->id == ARM64_INS_LDR ? KINST_A64_EM_LDR_LIT :
			    in->id == ARM64_INS_LDRSW ? KINST_A64_EM_LDRSW_LIT :
			    KINST_A64_EM_PRFM_LIT;
			s.target_op = 1;
		}
		break;
	case ARM64_INS_SVC:
	case ARM64_INS_HVC:
	case ARM64_INS_SMC:
	case ARM64_INS_BRK:
	case ARM64_INS_HLT:
	case ARM64_INS_DCPS1:
	case ARM64_INS_DCPS2:
	case ARM64_INS_DCPS3:
		s = (struct cs_says){ KINST_T_REFUSE, KINST_R_EXC_GEN, 0, -1 };
		break;
	case ARM64_INS_ERET:
	case ARM64_INS_DRPS:
		s = (struct cs_says){ KINST_T_REFUSE, KINST_R_ERET, 0, -1 };
		break;
	case ARM64_INS_WFE:
	case ARM64_INS_WFI:
		s = (struct cs_says){ KINST_T_REFUSE, KINST_R_HALT, 0, -1 };
		break;
	case ARM64_INS_LDXR: case ARM64_INS_LDXRB: case ARM64_INS_LDXRH:
	case ARM64_INS_LDAXR: case ARM64_INS_LDAXRB: case ARM64_INS_LDAXRH:
	case ARM64_INS_LDXP: case ARM64_INS_LDAXP:
	case ARM64_INS_STXR: case ARM64_INS_STXRB: case ARM64_INS_STXRH:
	case ARM64_INS_STLXR: case ARM64_INS_STLXRB: case ARM64_INS_STLXRH:
	case ARM64_INS_STXP: case ARM64_INS_STLXP:
		s = (struct cs_says){ KINST_T_REFUSE, KINST_R_EXCLUSIVE, 0, -1 };
		break;
	case ARM64_INS_MRS:
		/* Capstone 4 writes op0 0's unallocated encodings as mrs... */
		if (a->op_count >= 2 && a->operands[1].type == ARM64_OP_REG_MRS &&
		    ((a->operands[1].reg >> 14) & 3) < 2)
			s = op0_zero(w);
		else if (a->op_count >= 2 && a->operands[1].type == ARM64_OP_REG_MRS &&
		    a->operands[1].reg == 0xda11)		/* daif */
			s = (struct cs_says){ KINST_T_EMULATE, 0, KINST_A64_EM_MRS_DAIF, -1 };
		else if (a->op_count >= 2 && a->operands[1].type == ARM64_OP_REG_MRS &&
		    mrs_exception_state((unsigned)a->operands[1].reg))
			s = (struct cs_says){ KINST_T_REFUSE, KINST_R_EXC_STATE_READ, 0, -1 };
		break;
	case ARM64_INS_MSR:
		/* ...and msr. */
		if (a->op_count >= 1 && a->operands[0].type == ARM64_OP_REG_MSR &&
		    ((a->operands[0].reg >> 14) & 3) < 2)
			s = op0_zero(w);
		else if (a->op_count >= 1 && (a->operands[0].type == ARM64_OP_PSTATE ||
		    (a->operands[0].type == ARM64_OP_REG_MSR &&
		    !msr_allowed((unsigned)a->operands[0].reg))))
			s = (struct cs_says){ KINST_T_REFUSE, KINST_R_SYSREG_WRITE, 0, -1 };
		break;
	}
	return s;
}

/*
 * The classifier's d of the word w at pc against Capstone's in: kind,
 * verdict and reason, the target, the register width and bit of cbz and
 * tbz.  True, with why written, when they disagree.
 */
static inline bool
a64_mismatch(const cs_insn *in, uint32_t w, uint64_t pc,
    const struct kinst_a64_insn *d, char *why, size_t len)
{
	struct cs_says s = capstone_says(in, w);
	const cs_arm64 *a = &in->detail->arm64;

	if (d->treatment != s.treatment || d->reason != s.reason || d->emul != s.emul) {
		snprintf(why, len, "%08x at %" PRIx64 " (%s %s): treatment %d "
		    "reason %d emul %d; Capstone says %d %d %d", w, pc,
		    in->mnemonic, in->op_str, d->treatment, d->reason, d->emul,
		    s.treatment, s.reason, s.emul);
		return true;
	}
	if (s.target_op >= 0 && d->treatment == KINST_T_EMULATE) {
		const cs_arm64_op *o = &a->operands[s.target_op];
		if (o->type != ARM64_OP_IMM || kinst_a64_target(d, pc) != (uint64_t)o->imm) {
			snprintf(why, len, "%08x at %" PRIx64 " (%s %s): target %"
			    PRIx64 ", Capstone %" PRIx64, w, pc, in->mnemonic,
			    in->op_str, kinst_a64_target(d, pc), (uint64_t)o->imm);
			return true;
		}
	}
	if (d->emul == KINST_A64_EM_CBZ || d->emul == KINST_A64_EM_CBNZ ||
	    d->emul == KINST_A64_EM_TBZ || d->emul == KINST_A64_EM_TBNZ) {
		arm64_reg r = a->operands[0].reg;
		bool x = (r >= ARM64_REG_X0 && r <= ARM64_REG_X28) ||
		    r == ARM64_REG_X29 || r == ARM64_REG_X30 || r == ARM64_REG_XZR;
		bool tb = d->emul == KINST_A64_EM_TBZ || d->emul == KINST_A64_EM_TBNZ;
		bool wide = tb ? d->bit >= 32 : d->sf;
		if (x != wide || (tb && (uint64_t)a->operands[1].imm != d->bit)) {
			snprintf(why, len, "%08x (%s %s): 64-bit %d bit %d", w,
			    in->mnemonic, in->op_str, wide, d->bit);
			return true;
		}
	}
	return false;
}

#endif /* !KINST_A64_CS_H */
