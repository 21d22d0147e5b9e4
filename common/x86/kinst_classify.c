/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Instruction classification: out of line, emulated, or refused.
 *
 * The rule (DESIGN.md): control flow whose effect depends on where the
 * instruction sits is emulated on the saved register file; everything else
 * runs out of line in a trampoline, with a RIP-relative displacement
 * rewritten; what cannot be done safely is refused with a stable reason.
 * docs/engine.md has the table with the reasoning for every row.
 */

#include "x86/kinst_classify.h"
#include "x86/kinst_flags.h"

static const char *const emul_names[] = {
	[KINST_EM_NONE] = "none",
	[KINST_EM_JCC] = "jcc",
	[KINST_EM_JMP_REL] = "jmp",
	[KINST_EM_CALL_REL] = "call",
	[KINST_EM_CALL_IND] = "call-indirect",
	[KINST_EM_JMP_IND] = "jmp-indirect",
	[KINST_EM_LOOP] = "loop",
	[KINST_EM_LOOPE] = "loope",
	[KINST_EM_LOOPNE] = "loopne",
	[KINST_EM_JRCXZ] = "jrcxz",
	[KINST_EM_RET] = "ret",
	[KINST_EM_RET_IMM] = "ret-imm",
	[KINST_EM_PUSHF] = "pushf",
	[KINST_EM_POPF] = "popf",
};

_Static_assert(KINST_NELEM(emul_names) == KINST_EM_COUNT, "names");

const char *
kinst_emul_name(int e)
{
	if (e < 0 || (unsigned)e >= KINST_NELEM(emul_names))
		return ("unknown");
	return (emul_names[e]);
}

static void
refuse(struct kinst_class *out, int reason)
{
	out->treatment = KINST_T_REFUSE;
	out->emul = KINST_EM_NONE;
	out->reason = (uint8_t)reason;
}

static void
emulate(struct kinst_class *out, int emul)
{
	out->treatment = KINST_T_EMULATE;
	out->emul = (uint8_t)emul;
	out->reason = KINST_R_NONE;
}

/*
 * A near branch: emulated, unless an operand-size prefix makes its meaning
 * vendor-dependent (Intel ignores 0x66 on near branches in 64-bit mode, AMD
 * truncates the target to 16 bits), or its memory operand is fs/gs-relative
 * (the emulator does not know segment bases).
 */
static void
branch(const struct kinst_insn *insn, struct kinst_class *out, int emul)
{
	if (insn->prefixes & KINST_PFX_66) {
		refuse(out, KINST_R_BRANCH_OPSIZE);
		return;
	}
	if (insn->has_modrm && insn->mod != 3 &&
	    (insn->prefixes & (KINST_PFX_FS | KINST_PFX_GS)) != 0) {
		refuse(out, KINST_R_SEGMENT);
		return;
	}
	emulate(out, emul);
}

/*
 * Near branches, by opcode: what kinst_classify() emulates (or refuses for a
 * prefix, branch()) and kinst_branch_kind() answers.  reg: the ModRM reg
 * field the opcode needs (ff /2, ff /4), or BR_ANY.  In ascending order of
 * map, then lo: branch_op() stops at the first entry past the opcode.
 */
#define	BR_ANY	8
#define	NOFALL	KINST_CF_NOFALL
static const struct branch_op {
	uint8_t	map, lo, hi, reg;
	uint8_t	emul;			/* enum kinst_emul */
	uint8_t	flags;			/* NOFALL or 0 */
} branch_ops[] = {
	{ KINST_MAP_1BYTE, 0x70, 0x7f, BR_ANY, KINST_EM_JCC, 0 },
	{ KINST_MAP_1BYTE, 0xc2, 0xc2, BR_ANY, KINST_EM_RET_IMM, NOFALL },
	{ KINST_MAP_1BYTE, 0xc3, 0xc3, BR_ANY, KINST_EM_RET, NOFALL },
	{ KINST_MAP_1BYTE, 0xe0, 0xe0, BR_ANY, KINST_EM_LOOPNE, 0 },
	{ KINST_MAP_1BYTE, 0xe1, 0xe1, BR_ANY, KINST_EM_LOOPE, 0 },
	{ KINST_MAP_1BYTE, 0xe2, 0xe2, BR_ANY, KINST_EM_LOOP, 0 },
	{ KINST_MAP_1BYTE, 0xe3, 0xe3, BR_ANY, KINST_EM_JRCXZ, 0 },
	{ KINST_MAP_1BYTE, 0xe8, 0xe8, BR_ANY, KINST_EM_CALL_REL, 0 },
	{ KINST_MAP_1BYTE, 0xe9, 0xe9, BR_ANY, KINST_EM_JMP_REL, NOFALL },
	{ KINST_MAP_1BYTE, 0xeb, 0xeb, BR_ANY, KINST_EM_JMP_REL, NOFALL },
	{ KINST_MAP_1BYTE, 0xff, 0xff, 2, KINST_EM_CALL_IND, 0 },
	{ KINST_MAP_1BYTE, 0xff, 0xff, 4, KINST_EM_JMP_IND, NOFALL },
	{ KINST_MAP_0F, 0x80, 0x8f, BR_ANY, KINST_EM_JCC, 0 },
};

static const struct branch_op *
branch_op(const struct kinst_insn *insn)
{
	const struct branch_op *b;
	size_t i;

	if (insn->enc != KINST_ENC_LEGACY)
		return (NULL);
	for (i = 0; i < KINST_NELEM(branch_ops); i++) {
		b = &branch_ops[i];
		if (b->map < insn->map)
			continue;
		if (b->map > insn->map || b->lo > insn->opcode)
			break;		/* every later entry is past it */
		if (insn->opcode <= b->hi &&
		    (b->reg == BR_ANY || b->reg == insn->reg))
			return (b);
	}
	return (NULL);
}

int
kinst_branch_kind(const struct kinst_insn *insn)
{
	const struct branch_op *b;

	b = branch_op(insn);
	return (b != NULL ? b->emul : KINST_EM_NONE);
}

/* Refused, and execution never continues at the next instruction. */
static void
refuse_nofall(struct kinst_class *out, int reason)
{
	refuse(out, reason);
	out->flags |= KINST_CF_NOFALL;
}

/*
 * The primary opcode map, near branches aside.  Returns true when it
 * decided.
 */
static bool
classify_1byte(const struct kinst_insn *insn, struct kinst_class *out)
{
	uint8_t op = insn->opcode;

	switch (op) {
	case 0xcc:				/* int3 */
		refuse_nofall(out, KINST_R_INT3);
		return (true);
	case 0xcd:				/* int n */
	case 0xce:				/* into (invalid in 64-bit mode) */
	case 0xf1:				/* int1 / icebp */
		refuse(out, KINST_R_INT);
		return (true);
	case 0xcf:				/* iret */
		refuse_nofall(out, KINST_R_IRET);
		return (true);
	case 0xca:				/* lret imm16 */
	case 0xcb:				/* lret */
	case 0xea:				/* ljmp ptr (invalid in 64-bit) */
		refuse_nofall(out, KINST_R_FAR);
		return (true);
	case 0x9a:				/* lcall ptr (invalid in 64-bit) */
		refuse(out, KINST_R_FAR);
		return (true);
	case 0x9c:				/* pushf: IF must be the interrupted one */
		emulate(out, KINST_EM_PUSHF);
		return (true);
	case 0x9d:				/* popf: see docs/engine.md */
		emulate(out, KINST_EM_POPF);
		return (true);
	case 0xf4:				/* hlt */
		refuse(out, KINST_R_HALT);
		return (true);
	case 0x8e:				/* mov r/m16, Sreg */
		if (insn->reg == 2) {
			refuse(out, KINST_R_MOV_SS);
			return (true);
		}
		return (false);
	case 0xfa:				/* cli */
	case 0xfb:				/* sti */
		out->flags |= KINST_CF_NO_STI;
		return (false);
	case 0xc7:				/* c7 f8: xbegin rel32 */
		if (insn->modrm == 0xf8) {
			refuse(out, KINST_R_XBEGIN);
			return (true);
		}
		return (false);
	case 0xff:
		switch (insn->reg) {
		case 3:				/* lcall */
			refuse(out, KINST_R_FAR);
			return (true);
		case 5:				/* ljmp */
			refuse_nofall(out, KINST_R_FAR);
			return (true);
		}
		return (false);
	}
	return (false);
}

/* The 0F map (near branches aside). */
static bool
classify_0f(const struct kinst_insn *insn, struct kinst_class *out)
{
	uint8_t op = insn->opcode;

	switch (op) {
	case 0x05:				/* syscall */
	case 0x34:				/* sysenter */
		refuse(out, KINST_R_SYSTEM_ENTRY);
		return (true);
	case 0x07:				/* sysret */
	case 0x35:				/* sysexit */
		refuse_nofall(out, KINST_R_SYSTEM_ENTRY);
		return (true);
	case 0x0b:				/* ud2 */
	case 0xb9:				/* ud1 */
	case 0xff:				/* ud0 */
		refuse_nofall(out, KINST_R_UD);
		return (true);
	case 0xaa:				/* rsm: #UD outside SMM */
		refuse(out, KINST_R_UD);
		return (true);
	case 0x1e:
		/*
		 * f3 0f 1e fa/fb: endbr64/endbr32.  With IBT enforced, an
		 * indirect branch must land on endbr; an int3 there raises
		 * #CP instead.  The next instruction traces the same entry.
		 */
		if ((insn->prefixes & KINST_PFX_F3) != 0 &&
		    (insn->modrm == 0xfa || insn->modrm == 0xfb)) {
			refuse(out, KINST_R_ENDBR);
			return (true);
		}
		return (false);
	case 0xb2:				/* lss */
		refuse(out, KINST_R_MOV_SS);
		return (true);
	case 0xae:
		/* 66 0f ae /6 (mod 3): tpause; f2 0f ae /6: umwait. */
		if (insn->mod == 3 && insn->reg == 6 &&
		    (insn->prefixes & (KINST_PFX_66 | KINST_PFX_F2)) != 0) {
			refuse(out, KINST_R_HALT);
			return (true);
		}
		return (false);
	case 0x01:
		switch (insn->modrm) {
		case 0xf8:			/* swapgs */
			refuse(out, KINST_R_SWAPGS);
			return (true);
		case 0xc9:			/* mwait */
		case 0xfb:			/* mwaitx */
			refuse(out, KINST_R_HALT);
			return (true);
		case 0xc2:			/* vmlaunch */
		case 0xc3:			/* vmresume */
		case 0xd8:			/* vmrun */
			refuse(out, KINST_R_VMENTRY);
			return (true);
		case 0xca:			/* f3: eretu, f2: erets (FRED) */
			if (insn->prefixes & (KINST_PFX_F2 | KINST_PFX_F3)) {
				refuse(out, KINST_R_IRET);
				return (true);
			}
			return (false);		/* clac */
		}
		return (false);
	}
	return (false);
}

void
kinst_classify(int dec_status, const struct kinst_insn *insn,
    const uint8_t *bytes, struct kinst_class *out)
{
	const struct branch_op *b;
	bool decided;

	out->treatment = KINST_T_NONE;
	out->emul = KINST_EM_NONE;
	out->reason = KINST_R_NONE;
	out->flags = 0;

	if (dec_status != KINST_DEC_OK || insn->len == 0) {
		refuse(out, KINST_R_UNDECODABLE);
		return;
	}
	/* Somebody else's breakpoint (or ours): never stack a probe on it. */
	if (bytes[0] == 0xcc) {
		refuse_nofall(out, KINST_R_INT3);
		return;
	}
	if (insn->rip_relative)
		out->flags |= KINST_CF_RIPREL;

	decided = false;
	if ((b = branch_op(insn)) != NULL) {
		branch(insn, out, b->emul);
		out->flags |= b->flags;
		decided = true;
	} else if (insn->enc == KINST_ENC_LEGACY) {
		if (insn->map == KINST_MAP_1BYTE)
			decided = classify_1byte(insn, out);
		else if (insn->map == KINST_MAP_0F)
			decided = classify_0f(insn, out);
	}
	if (decided)
		return;

	/* Everything else has no control flow of its own: run it out of line. */
	out->treatment = insn->rip_relative ? KINST_T_OOL_RIPREL : KINST_T_OOL;
}

/*
 * Is insn (already decoded) an sti whose one-instruction interrupt shadow
 * matters because the next instruction (next, avail bytes) halts?  Out of
 * line, the shadow would cover the jump back instead, and an interrupt
 * arriving before the hlt/mwait would be taken too early: the CPU could
 * then sleep with its wakeup already consumed.
 */
bool
kinst_sti_shadow_matters(const struct kinst_insn *insn, const uint8_t *next,
    size_t avail)
{
	struct kinst_insn n;
	struct kinst_class c;

	if (insn->enc != KINST_ENC_LEGACY || insn->map != KINST_MAP_1BYTE ||
	    insn->opcode != 0xfb)
		return (false);
	if (kinst_decode(next, avail, &n) != KINST_DEC_OK)
		return (true);		/* cannot tell: assume it matters */
	kinst_classify(KINST_DEC_OK, &n, next, &c);
	return (c.treatment == KINST_T_REFUSE && c.reason == KINST_R_HALT);
}

int
kinst_func_boundary(const uint8_t *func, size_t size, uint32_t off,
    uint32_t *prev, uint32_t *next)
{
	struct kinst_insn insn;
	size_t pos, last;

	if (off >= size) {
		if (prev != NULL)
			*prev = 0;
		if (next != NULL)
			*next = (uint32_t)size;
		return (0);
	}
	pos = 0;
	last = 0;
	while (pos < size) {
		if (pos == off)
			return (1);
		if (pos > off)
			break;
		if (kinst_decode(func + pos, size - pos, &insn) != KINST_DEC_OK)
			return (-1);
		last = pos;
		pos += insn.len;
	}
	if (prev != NULL)
		*prev = (uint32_t)last;
	if (next != NULL)
		*next = (uint32_t)(pos < size ? pos : size);
	return (0);
}

bool
kinst_cond(unsigned cc, uint64_t fl)
{
	bool cf = (fl & KINST_FL_CF) != 0;
	bool zf = (fl & KINST_FL_ZF) != 0;
	bool sf = (fl & KINST_FL_SF) != 0;
	bool of = (fl & KINST_FL_OF) != 0;
	bool pf = (fl & KINST_FL_PF) != 0;
	bool r;

	switch ((cc >> 1) & 7) {
	case 0: r = of; break;			/* o / no */
	case 1: r = cf; break;			/* b / ae */
	case 2: r = zf; break;			/* e / ne */
	case 3: r = cf || zf; break;		/* be / a */
	case 4: r = sf; break;			/* s / ns */
	case 5: r = pf; break;			/* p / np */
	case 6: r = sf != of; break;		/* l / ge */
	default: r = zf || (sf != of); break;	/* le / g */
	}
	return ((cc & 1) ? !r : r);
}
