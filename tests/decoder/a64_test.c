/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The A64 classifier (common/arm64/kinst_a64.c) against hand-encoded
 * instructions and against Capstone's AArch64 disassembler on random
 * words: the emulated kinds, their registers, widths, bits and targets,
 * the exclusives, the system-register writes and the exception-generating
 * and -returning instructions.  Capstone 4 (Debian 12's) knows ARMv8.0
 * only: where it cannot decode a word, the classifier may still know it
 * (PAC branches, bc.cond), and that is counted, not compared.
 */

#include <atf-c.h>
#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a64_cs.h"
#include "a64_enc.h"

struct expect {
	const char	*what;
	uint32_t	word;
	int		treatment;
	int		reason;
	int		emul;
	int		rt;		/* -1: not checked */
	int		field;		/* sf, bit, cond, size: by emul; -1 */
	int64_t		off;
};

static void
check_one(const struct expect *e)
{
	struct kinst_a64_insn d;

	kinst_a64_decode(e->word, &d);
	ATF_CHECK_MSG(d.treatment == e->treatment && d.reason == e->reason &&
	    d.emul == e->emul, "%s (%08x): treatment %d reason %d emul %d, "
	    "expected %d %d %d", e->what, e->word, d.treatment, d.reason, d.emul,
	    e->treatment, e->reason, e->emul);
	if (e->rt >= 0)
		ATF_CHECK_MSG(d.rt == e->rt, "%s: register %d, expected %d",
		    e->what, d.rt, e->rt);
	if (e->treatment == KINST_T_EMULATE)
		ATF_CHECK_MSG(d.off == e->off, "%s: offset %" PRId64 ", expected %"
		    PRId64, e->what, d.off, e->off);
	if (e->field < 0)
		return;
	switch (e->emul) {
	case KINST_A64_EM_CBZ:
	case KINST_A64_EM_CBNZ:
		ATF_CHECK_MSG(d.sf == e->field, "%s: sf %d", e->what, d.sf);
		break;
	case KINST_A64_EM_TBZ:
	case KINST_A64_EM_TBNZ:
		ATF_CHECK_MSG(d.bit == e->field, "%s: bit %d", e->what, d.bit);
		break;
	case KINST_A64_EM_BCOND:
		ATF_CHECK_MSG(d.cond == e->field, "%s: cond %d", e->what, d.cond);
		break;
	case KINST_A64_EM_LDR_LIT:
	case KINST_A64_EM_LDRSW_LIT:
		ATF_CHECK_MSG(d.size == e->field, "%s: size %d", e->what, d.size);
		break;
	}
}

#define	OOL(w, s)	{ s, w, KINST_T_OOL, 0, 0, -1, -1, 0 }
#define	REF(w, r, s)	{ s, w, KINST_T_REFUSE, r, 0, -1, -1, 0 }
#define	EM(w, k, rt, f, off, s)	{ s, w, KINST_T_EMULATE, 0, k, rt, f, off }

ATF_TC_WITHOUT_HEAD(hand_encoded);
ATF_TC_BODY(hand_encoded, tc)
{
	const struct expect e[] = {
		EM(enc_b(0, 8), KINST_A64_EM_B, -1, -1, 8, "b .+8"),
		EM(enc_b(0, -(1 << 27)), KINST_A64_EM_B, -1, -1, -(1 << 27), "b -128MiB"),
		EM(enc_b(1, (1 << 27) - 4), KINST_A64_EM_BL, -1, -1, (1 << 27) - 4, "bl +128MiB-4"),
		EM(enc_bcond(1, -4), KINST_A64_EM_BCOND, -1, 1, -4, "b.ne .-4"),
		EM(enc_bcond(14, (1 << 20) - 4), KINST_A64_EM_BCOND, -1, 14, (1 << 20) - 4, "b.al +1MiB-4"),
		EM(enc_bcond(15, -(1 << 20)), KINST_A64_EM_BCOND, -1, 15, -(1 << 20), "b.nv -1MiB"),
		EM(enc_bcond(0, 0) | 0x10, KINST_A64_EM_BCOND, -1, 0, 0, "bc.eq (v8.8)"),
		EM(enc_cb(0, 0, 3, 16), KINST_A64_EM_CBZ, 3, 0, 16, "cbz w3"),
		EM(enc_cb(1, 1, 30, -16), KINST_A64_EM_CBNZ, 30, 1, -16, "cbnz x30"),
		EM(enc_tb(0, 0, 0, 4), KINST_A64_EM_TBZ, 0, 0, 4, "tbz w0, #0"),
		EM(enc_tb(31, 1, 7, -32768), KINST_A64_EM_TBNZ, 7, 31, -32768, "tbnz w7, #31"),
		EM(enc_tb(32, 0, 7, 32764), KINST_A64_EM_TBZ, 7, 32, 32764, "tbz x7, #32"),
		EM(enc_tb(63, 1, 1, 8), KINST_A64_EM_TBNZ, 1, 63, 8, "tbnz x1, #63"),
		EM(0xd61f0220u, KINST_A64_EM_BR, 17, -1, 0, "br x17"),
		EM(0xd63f0100u, KINST_A64_EM_BLR, 8, -1, 0, "blr x8"),
		EM(0xd65f03c0u, KINST_A64_EM_RET, 30, -1, 0, "ret"),
		EM(0xd65f0000u, KINST_A64_EM_RET, 0, -1, 0, "ret x0"),
		EM(0xd65f0bffu, KINST_A64_EM_RET_PAC, 30, -1, 0, "retaa"),
		EM(0xd65f0fffu, KINST_A64_EM_RET_PAC, 30, -1, 0, "retab"),
		EM(0xd61f0a1fu, KINST_A64_EM_BR_PAC, 16, -1, 0, "braaz x16"),
		EM(0xd73f0a11u, KINST_A64_EM_BLR_PAC, 16, -1, 0, "blraa x16, x17"),
		EM(0xd71f0c11u, KINST_A64_EM_BR_PAC, 0, -1, 0, "brab x0, x17"),
		EM(enc_adr(0, 5, 1), KINST_A64_EM_ADR, 5, -1, 1, "adr x5, .+1"),
		EM(enc_adr(0, 5, -(1 << 20)), KINST_A64_EM_ADR, 5, -1, -(1 << 20), "adr -1MiB"),
		EM(enc_adr(1, 0, 1), KINST_A64_EM_ADRP, 0, -1, 4096, "adrp x0, +1 page"),
		EM(enc_adr(1, 29, -(1 << 20)), KINST_A64_EM_ADRP, 29, -1,
		    -((int64_t)1 << 32), "adrp -4GiB"),
		EM(enc_lit(0, 0, 1, 8), KINST_A64_EM_LDR_LIT, 1, 4, 8, "ldr w1, lit"),
		EM(enc_lit(1, 0, 2, -8), KINST_A64_EM_LDR_LIT, 2, 8, -8, "ldr x2, lit"),
		EM(enc_lit(2, 0, 3, 12), KINST_A64_EM_LDRSW_LIT, 3, 4, 12, "ldrsw x3, lit"),
		EM(enc_lit(3, 0, 0, 4), KINST_A64_EM_PRFM_LIT, 0, -1, 4, "prfm pldl1keep, lit"),
		EM(enc_lit(0, 1, 4, 4), KINST_A64_EM_LDR_LIT, 4, 4, 4, "ldr s4, lit"),
		EM(enc_lit(1, 1, 5, 4), KINST_A64_EM_LDR_LIT, 5, 8, 4, "ldr d5, lit"),
		EM(enc_lit(2, 1, 6, 4), KINST_A64_EM_LDR_LIT, 6, 16, 4, "ldr q6, lit"),
		REF(enc_lit(3, 1, 6, 4), KINST_R_UNDECODABLE, "literal opc 3, V 1"),
		REF(0xd4000001u, KINST_R_EXC_GEN, "svc #0"),
		REF(0xd4000002u, KINST_R_EXC_GEN, "hvc #0"),
		REF(0xd4000003u, KINST_R_EXC_GEN, "smc #0"),
		REF(0xd4210000u, KINST_R_EXC_GEN, "brk #0x800 (BUG)"),
		REF(0xd4400000u, KINST_R_EXC_GEN, "hlt #0"),
		REF(0xd4a00001u, KINST_R_EXC_GEN, "dcps1"),
		REF(0xd69f03e0u, KINST_R_ERET, "eret"),
		REF(0xd69f0bffu, KINST_R_ERET, "eretaa"),
		REF(0xd6bf03e0u, KINST_R_ERET, "drps"),
		REF(0xd50342dfu, KINST_R_SYSREG_WRITE, "msr daifset, #2"),
		REF(0xd50342ffu, KINST_R_SYSREG_WRITE, "msr daifclr, #2"),
		REF(0xd50040bfu, KINST_R_SYSREG_WRITE, "msr spsel, #0"),
		REF(0xd500419fu, KINST_R_SYSREG_WRITE, "msr pan, #1"),
		REF(0xd5184100u, KINST_R_SYSREG_WRITE, "msr sp_el0, x0"),
		REF(0xd518d080u, KINST_R_SYSREG_WRITE, "msr tpidr_el1, x0"),
		REF(0xd5184020u, KINST_R_SYSREG_WRITE, "msr elr_el1, x0"),
		REF(0xd51b4220u, KINST_R_SYSREG_WRITE, "msr daif, x0"),
		OOL(0xd51b4200u, "msr nzcv, x0"),
		OOL(0xd51b4400u, "msr fpcr, x0"),
		OOL(0xd51b4420u, "msr fpsr, x0"),
		OOL(0xd51bd040u, "msr tpidr_el0, x0"),
		EM(0xd53b4220u, KINST_A64_EM_MRS_DAIF, 0, -1, 0, "mrs x0, daif"),
		EM(0xd53b4233u, KINST_A64_EM_MRS_DAIF, 19, -1, 0, "mrs x19, daif"),
		REF(0xd5384000u, KINST_R_EXC_STATE_READ, "mrs x0, spsr_el1"),
		REF(0xd5384021u, KINST_R_EXC_STATE_READ, "mrs x1, elr_el1"),
		REF(0xd5385201u, KINST_R_EXC_STATE_READ, "mrs x1, esr_el1"),
		REF(0xd5386000u, KINST_R_EXC_STATE_READ, "mrs x0, far_el1"),
		REF(0xd53c4000u, KINST_R_EXC_STATE_READ, "mrs x0, spsr_el2"),
		REF(0xd53c4020u, KINST_R_EXC_STATE_READ, "mrs x0, elr_el2"),
		REF(0xd53c5200u, KINST_R_EXC_STATE_READ, "mrs x0, esr_el2"),
		REF(0xd53c6000u, KINST_R_EXC_STATE_READ, "mrs x0, far_el2"),
		OOL(0xd53d4020u, "mrs x0, elr_el12"),
		OOL(0xd5384100u, "mrs x0, sp_el0"),
		OOL(0xd53b4200u, "mrs x0, nzcv"),
		REF(0xd51b4220u, KINST_R_SYSREG_WRITE, "msr daif, x0 (not emulated)"),
		OOL(0xd538d080u, "mrs x0, tpidr_el1"),
		OOL(0xd500401fu, "cfinv"),
		REF(0xd503205fu, KINST_R_HALT, "wfe"),
		REF(0xd503207fu, KINST_R_HALT, "wfi"),
		REF(0xd5031000u, KINST_R_HALT, "wfet x0"),
		OOL(0xd503201fu, "nop"),
		OOL(0xd503233fu, "paciasp"),
		OOL(0xd50323bfu, "autiasp"),
		OOL(0xd503245fu, "bti c"),
		OOL(0xd50320ffu, "xpaclri"),
		OOL(0xd5033bbfu, "dmb ish"),
		OOL(0xd5033fdfu, "isb"),
		OOL(0xd503305fu, "clrex"),
		OOL(0xd50b7520u, "ic ivau, x0"),
		OOL(0xd508871fu, "tlbi vmalle1"),
		REF(0x00000000u, KINST_R_UD, "udf #0"),
		REF(0x0000ffffu, KINST_R_UD, "udf #0xffff"),
		REF(0x02000000u, KINST_R_UNDECODABLE, "unallocated (op0 0001)"),
		REF(0x06000000u, KINST_R_UNDECODABLE, "unallocated (op0 0011)"),
		REF(0xc85f7c20u, KINST_R_EXCLUSIVE, "ldxr x0, [x1]"),
		REF(0x885ffc20u, KINST_R_EXCLUSIVE, "ldaxr w0, [x1]"),
		REF(0x085f7c20u, KINST_R_EXCLUSIVE, "ldxrb w0, [x1]"),
		REF(0xc8027c20u, KINST_R_EXCLUSIVE, "stxr w2, x0, [x1]"),
		REF(0x8802fc20u, KINST_R_EXCLUSIVE, "stlxr w2, w0, [x1]"),
		REF(0xc87f0440u, KINST_R_EXCLUSIVE, "ldxp x0, x1, [x2]"),
		REF(0xc8230440u, KINST_R_EXCLUSIVE, "stxp w3, x0, x1, [x2]"),
		OOL(0xc8dffc20u, "ldar x0, [x1]"),
		OOL(0xc89ffc20u, "stlr x0, [x1]"),
		OOL(0xc8e0fc41u, "casal x0, x1, [x2]"),
		OOL(0x48207c82u, "casp w0, w1, w2, w3, [x4]"),
		OOL(0xf8200020u, "ldadd x0, x0, [x1]"),
		OOL(0xf9400020u, "ldr x0, [x1]"),
		OOL(0x8b020020u, "add x0, x1, x2"),
		OOL(0x4ea21c20u, "mov v0.16b, v1.16b"),
		OOL(0x04a03020u, "sve"),
		OOL(0xa9bf7bfdu, "stp x29, x30, [sp, #-16]!"),
	};
	size_t i;

	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		check_one(&e[i]);
}

/* kinst_a64_target: pc-relative forms from a given pc. */
ATF_TC_WITHOUT_HEAD(targets);
ATF_TC_BODY(targets, tc)
{
	const uint64_t pc = 0xffff800008123454ull;
	struct kinst_a64_insn d;

	kinst_a64_decode(enc_b(1, -8), &d);
	ATF_CHECK_EQ(kinst_a64_target(&d, pc), pc - 8);
	kinst_a64_decode(enc_adr(1, 0, -1), &d);
	ATF_CHECK_EQ(kinst_a64_target(&d, pc), 0xffff800008122000ull);
	kinst_a64_decode(enc_adr(1, 0, 2), &d);
	ATF_CHECK_EQ(kinst_a64_target(&d, pc), 0xffff800008125000ull);
	kinst_a64_decode(enc_adr(0, 0, -3), &d);
	ATF_CHECK_EQ(kinst_a64_target(&d, pc), pc - 3);
	kinst_a64_decode(enc_lit(1, 0, 0, 0x1000), &d);
	ATF_CHECK_EQ(kinst_a64_target(&d, pc), pc + 0x1000);
	kinst_a64_decode(0xd61f0220u, &d);		/* br: no target of its own */
	ATF_CHECK_EQ(kinst_a64_target(&d, pc), pc);
}

/*
 * Exclusive sequences: everything from a load-exclusive to its
 * store-exclusive is refused, the instructions after it are not, and a
 * load-exclusive without a store (the kernel's __cmpwait: ldxr, wfe)
 * refuses at most KINST_A64_EXCL_SPAN words after it.
 */
/*
 * mrs Xt, daif cannot be run at EL0 (qemu-aarch64 raises SIGILL, as Linux
 * does), so a64_emu_test cannot compare it with the CPU: its emulation is
 * checked here against the rule itself, every register and pstate's DAIF
 * and NZCV in every combination.
 */
ATF_TC_WITHOUT_HEAD(mrs_daif);
ATF_TC_BODY(mrs_daif, tc)
{
	unsigned rt, bits, i;

	for (rt = 0; rt < 32; rt++) {
		for (bits = 0; bits < 256; bits++) {
			struct kinst_a64_insn d;
			struct kinst_a64_regs r, before;
			uint64_t pstate = ((uint64_t)(bits & 0xf) << 6) |
			    ((uint64_t)(bits >> 4) << 28) | 0x5;	/* EL1h */

			kinst_a64_decode(0xd53b4220u | rt, &d);
			ATF_REQUIRE_EQ(d.emul, KINST_A64_EM_MRS_DAIF);
			for (i = 0; i < 31; i++)
				r.x[i] = 0x1111111111111111ull * (i + 1);
			r.sp = 0xffff800012345670ull;
			r.pc = 0xffff800008001000ull;
			r.pstate = pstate;
			before = r;
			ATF_REQUIRE_EQ(kinst_a64_emulate(&d, &r, NULL, NULL), KINST_A64_EMU_OK);
			for (i = 0; i < 31; i++)
				ATF_REQUIRE_MSG(r.x[i] == (i == rt ?
				    (pstate & 0x3c0) : before.x[i]),
				    "mrs x%u, daif with pstate %#" PRIx64 ": x%u = %#"
				    PRIx64, rt, pstate, i, r.x[i]);
			ATF_REQUIRE(r.sp == before.sp && r.pstate == before.pstate);
			ATF_REQUIRE_EQ(r.pc, before.pc + 4);
		}
	}
}

/* A toy PAC: the key and the modifier's low byte in the top 16 bits. */
static uint64_t
toy_sign(void *ctx, unsigned key, uint64_t ptr, uint64_t mod)
{
	(void)ctx;
	return (ptr & 0x0000ffffffffffffull) |
	    ((uint64_t)(0xa0 + key) << 56) | ((mod & 0xff) << 48);
}

static uint64_t
toy_strip(void *ctx, uint64_t ptr)
{
	(void)ctx;
	return ptr | 0xffff000000000000ull;	/* a kernel address */
}

/*
 * The PAC branches: which modifier each form takes (register 31 of braa
 * and blraa is sp), the target authenticated through the operations,
 * blr's x30 written after the target is read, and a failure leaving the
 * registers as they were.  Their execution on a CPU with PAC is
 * tests/harness/a64_harness_test's.
 */
ATF_TC_WITHOUT_HEAD(pac_branches);
ATF_TC_BODY(pac_branches, tc)
{
	static const struct {
		uint32_t	w;
		const char	*what;
		int		emul, rt, mod, rm;
	} c[] = {
		{ 0xd71f0801u, "braa x0, x1", KINST_A64_EM_BR_PAC, 0, KINST_A64_PAC_REG, 1 },
		{ 0xd71f081fu, "braa x0, sp", KINST_A64_EM_BR_PAC, 0, KINST_A64_PAC_SP, -1 },
		{ 0xd71f0fdeu, "brab x30, x30", KINST_A64_EM_BR_PAC, 30, KINST_A64_PAC_REG, 30 },
		{ 0xd73f0bdeu, "blraa x30, x30", KINST_A64_EM_BLR_PAC, 30, KINST_A64_PAC_REG, 30 },
		{ 0xd73f0fdfu, "blrab x30, sp", KINST_A64_EM_BLR_PAC, 30, KINST_A64_PAC_SP, -1 },
		{ 0xd61f0a1fu, "braaz x16", KINST_A64_EM_BR_PAC, 16, KINST_A64_PAC_ZERO, -1 },
		{ 0xd63f0e1fu, "blrabz x16", KINST_A64_EM_BLR_PAC, 16, KINST_A64_PAC_ZERO, -1 },
		{ 0xd65f0bffu, "retaa", KINST_A64_EM_RET_PAC, 30, KINST_A64_PAC_SP, -1 },
		{ 0xd65f0fffu, "retab", KINST_A64_EM_RET_PAC, 30, KINST_A64_PAC_SP, -1 },
	};
	const struct kinst_a64_pac_ops pac = { toy_sign, toy_strip, NULL };
	size_t i, k;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct kinst_a64_insn d;
		struct kinst_a64_regs r, before;
		uint64_t target = 0xffff800008123450ull, mod;
		unsigned key = (c[i].w >> 10) & 1;

		kinst_a64_decode(c[i].w, &d);
		ATF_REQUIRE_MSG(d.emul == c[i].emul && d.rt == c[i].rt &&
		    d.pac_mod == c[i].mod && (c[i].rm < 0 || d.rm == c[i].rm),
		    "%s: emul %d rt %d mod %d rm %d", c[i].what, d.emul, d.rt,
		    d.pac_mod, d.rm);
		for (k = 0; k < 31; k++)
			r.x[k] = 0x100 + k;
		r.sp = 0xffff800012345600ull + 0x42;
		r.pc = 0xffff800008001000ull;
		r.pstate = 0x3c5;
		mod = c[i].mod == KINST_A64_PAC_SP ? r.sp :
		    c[i].mod == KINST_A64_PAC_ZERO ? 0 : r.x[c[i].rm];
		if (c[i].rm == c[i].rt)	/* the signed pointer is its own
					   modifier: the toy's byte is the same */
			mod = target;
		/* Signed for the modifier the register holds before the branch. */
		r.x[c[i].rt] = toy_sign(NULL, key, target, mod);
		before = r;
		ATF_REQUIRE_EQ(kinst_a64_emulate(&d, &r, NULL, &pac), KINST_A64_EMU_OK);
		ATF_CHECK_MSG(r.pc == target, "%s: pc %#" PRIx64, c[i].what, r.pc);
		for (k = 0; k < 31; k++)
			ATF_CHECK_MSG(r.x[k] == (k == 30 && c[i].emul ==
			    KINST_A64_EM_BLR_PAC ? before.pc + 4 : before.x[k]),
			    "%s: x%zu %#" PRIx64, c[i].what, k, r.x[k]);
		/* The other key, or a changed pointer: no branch, r unchanged. */
		r = before;
		r.x[c[i].rt] = toy_sign(NULL, key ^ 1, target, mod);
		before = r;
		ATF_CHECK_EQ(kinst_a64_emulate(&d, &r, NULL, &pac), KINST_A64_EMU_AUTH);
		ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
		r.x[c[i].rt] = toy_sign(NULL, key, target, mod) ^ (1ull << 50);
		before = r;
		ATF_CHECK_EQ(kinst_a64_emulate(&d, &r, NULL, &pac), KINST_A64_EMU_AUTH);
		ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
		/* Without the operations, not emulated. */
		ATF_CHECK_EQ(kinst_a64_emulate(&d, &r, NULL, NULL), KINST_A64_EMU_BADINSN);
	}
}

ATF_TC_WITHOUT_HEAD(exclusive_regions);
ATF_TC_BODY(exclusive_regions, tc)
{
	const uint32_t nop = 0xd503201fu, ldaxr = 0x885ffc20u, stlxr = 0x8802fc20u;
	const uint32_t cmp = 0x6b02003fu, bne = 0x54000061u, cbnz = 0x35ffff83u;
	/* 0 nop, 1 ldaxr, 2 cmp, 3 b.ne, 4 stlxr, 5 cbnz, 6 nop */
	uint32_t f[] = { nop, ldaxr, cmp, bne, stlxr, cbnz, nop };
	const bool want[] = { false, true, true, true, true, false, false };
	uint32_t g[80];
	size_t i;

	for (i = 0; i < 7; i++)
		ATF_CHECK_MSG(kinst_a64_exclusive(f, 7, i) == want[i],
		    "sequence: word %zu", i);
	ATF_CHECK(!kinst_a64_exclusive(f, 7, 7));	/* past the end */
	for (i = 0; i < 80; i++)
		g[i] = nop;
	g[3] = 0xc85f7c20u;				/* ldxr, no stxr */
	for (i = 0; i < 80; i++)
		ATF_CHECK_MSG(kinst_a64_exclusive(g, 80, i) ==
		    (i >= 3 && i <= 3 + KINST_A64_EXCL_SPAN), "no store: word %zu", i);
	/* A load-exclusive in the function before... only within the function. */
	ATF_CHECK(!kinst_a64_exclusive(g + 4 + KINST_A64_EXCL_SPAN, 10, 0));
	ATF_CHECK(!kinst_a64_exclusive(g + 4, 10, 0));
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd32(void)
{
	return (uint32_t)(a64_rnd(&rng) >> 16);
}

/*
 * A random word: uniform, or with its top byte (or bits 31:24 and 22) set
 * to one of the groups where the classifier's rules are, so that every
 * rule meets many words.
 */
static uint32_t
random_word(void)
{
	static const uint32_t groups[][2] = {	/* mask, value */
		{ 0x7c000000u, 0x14000000u },	/* b, bl */
		{ 0xff000000u, 0x54000000u },	/* b.cond */
		{ 0x7e000000u, 0x34000000u },	/* cbz, cbnz */
		{ 0x7e000000u, 0x36000000u },	/* tbz, tbnz */
		{ 0xfe000000u, 0xd6000000u },	/* branch (register) */
		{ 0xfe1f0000u, 0xd61f0000u },	/* ... with op2 11111 */
		{ 0xfe1ffc1fu, 0xd61f0000u },	/* ... br, blr, ret (op3, op4 0) */
		{ 0xff000000u, 0xd4000000u },	/* exceptions */
		{ 0xffc00000u, 0xd5000000u },	/* system */
		{ 0xfff8f01fu, 0xd500401fu },	/* msr (immediate) */
		{ 0xfffff01fu, 0xd503201fu },	/* hints */
		{ 0xffe00000u, 0xd5000000u },	/* msr (register), sys */
		{ 0xffffffe0u, 0xd53b4220u },	/* mrs Xt, daif */
		{ 0xfffbffc0u, 0xd5384000u },	/* mrs spsr/elr_el1/el2 */
		{ 0xfffbffe0u, 0xd5385200u },	/* mrs esr_el1/el2 */
		{ 0xfffbffe0u, 0xd5386000u },	/* mrs far_el1/el2 */
		{ 0x1f000000u, 0x10000000u },	/* adr, adrp */
		{ 0x3b000000u, 0x18000000u },	/* literal loads */
		{ 0x3f000000u, 0x08000000u },	/* exclusives, cas, ldar */
	};
	uint32_t w = rnd32();
	unsigned g = rnd32() % (2 * (sizeof(groups) / sizeof(groups[0])));

	if (g >= sizeof(groups) / sizeof(groups[0]))
		return w;
	return (w & ~groups[g][0]) | groups[g][1];
}

ATF_TC(against_capstone);
ATF_TC_HEAD(against_capstone, tc)
{
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(against_capstone, tc)
{
	csh h;
	cs_insn *in;
	const long n = 1500000;
	long compared = 0, cs_invalid = 0, ours_only = 0, bad = 0;
	long per_emul[KINST_A64_EM_COUNT] = { 0 }, exclusives = 0, msr = 0;
	long exc_state = 0;
	long i;

	ATF_REQUIRE(cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &h) == CS_ERR_OK);
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	for (i = 0; i < n; i++) {
		uint32_t w = random_word();
		uint64_t pc = 0xffff800008000000ull + (uint64_t)(rnd32() & 0xffffff) * 4;
		const uint8_t *p;
		uint8_t b[4] = { (uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16),
		    (uint8_t)(w >> 24) };
		size_t sz = 4;
		uint64_t addr = pc;
		struct kinst_a64_insn d;
		char why[512];

		kinst_a64_decode(w, &d);
		p = b;
		if (!cs_disasm_iter(h, &p, &sz, &addr, in)) {
			cs_invalid++;
			/* What Capstone 4 cannot know (ARMv8.1 and later). */
			if (d.treatment == KINST_T_EMULATE) {
				ours_only++;
				if (d.emul != KINST_A64_EM_BR_PAC &&
				    d.emul != KINST_A64_EM_BLR_PAC &&
				    d.emul != KINST_A64_EM_RET_PAC &&
				    !(d.emul == KINST_A64_EM_BCOND && (w & 0x10)) &&
				    bad++ < 20)
					ATF_CHECK_MSG(0, "%08x: Capstone cannot decode "
					    "it, the classifier emulates it as %s",
					    w, kinst_a64_emul_name(d.emul));
			}
			/* A refusal (an exclusive pair with Rt == Rt2,
			   which Capstone rejects) is the safe side. */
			continue;
		}
		compared++;
		if (a64_mismatch(in, w, pc, &d, why, sizeof(why)) && bad++ < 20)
			ATF_CHECK_MSG(0, "%s", why);
		per_emul[d.emul]++;
		exclusives += d.reason == KINST_R_EXCLUSIVE;
		msr += d.reason == KINST_R_SYSREG_WRITE;
		exc_state += d.reason == KINST_R_EXC_STATE_READ;
	}
	cs_free(in, 1);
	cs_close(&h);
	printf("a64: %ld words, %ld compared with Capstone, %ld it cannot decode "
	    "(%ld of them emulated by the classifier: PAC branches, bc.cond); "
	    "%ld exclusives, %ld system-register writes, %ld exception-state "
	    "reads\n", n, compared, cs_invalid, ours_only, exclusives, msr,
	    exc_state);
	for (i = 1; i < KINST_A64_EM_COUNT; i++) {
		printf("  %-14s %ld\n", kinst_a64_emul_name((int)i), per_emul[i]);
		/* Every kind Capstone 4 knows was met and agreed on. */
		if (i != KINST_A64_EM_BR_PAC && i != KINST_A64_EM_BLR_PAC &&
		    i != KINST_A64_EM_RET_PAC)
			ATF_CHECK_MSG(per_emul[i] >= 100, "%s: only %ld compared",
			    kinst_a64_emul_name((int)i), per_emul[i]);
	}
	ATF_CHECK(exclusives >= 1000 && msr >= 1000 && exc_state >= 1000);
	ATF_CHECK(compared >= n / 3);
	ATF_CHECK_EQ(bad, 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, hand_encoded);
	ATF_TP_ADD_TC(tp, targets);
	ATF_TP_ADD_TC(tp, mrs_daif);
	ATF_TP_ADD_TC(tp, pac_branches);
	ATF_TP_ADD_TC(tp, exclusive_regions);
	ATF_TP_ADD_TC(tp, against_capstone);
	return atf_no_error();
}
