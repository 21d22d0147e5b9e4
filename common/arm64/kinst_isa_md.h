/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * arm64 (A64) behind kinst_isa.h, which includes this header (include
 * that one): the classifier and emulator (kinst_a64.h), trampolines
 * (kinst_a64_tramp.h), and the register file's accessors the neutral
 * engine uses (the register file itself is kinst_regs.h's).  No jump-
 * optimized probes yet: every offset is refused a jump (issue 44 does not
 * ask for them; a single `b` to a detour within 128 MiB is the analogue,
 * docs/engine.md).
 */
#ifndef KINST_ARM64_ISA_MD_H
#define KINST_ARM64_ISA_MD_H

#include "kinst_abi.h"
#include "kinst_jopt_api.h"
#include "kinst_os.h"
#include "arm64/kinst_a64.h"
#include "arm64/kinst_a64_tramp.h"

#define	KINST_MAX_INSN_LEN	4

/* A decoded instruction: its length (always 4) and the A64 decode. */
struct kinst_insn {
	uint8_t			len;
	struct kinst_a64_insn	a;
};

/* The verdict (kinst_a64_decode's, and kinst_a64_exclusive's). */
struct kinst_class {
	uint8_t		treatment;	/* enum kinst_treatment */
	uint8_t		emul;		/* enum kinst_a64_emul, when KINST_T_EMULATE */
	uint8_t		reason;		/* enum kinst_reason, when KINST_T_REFUSE */
	uint8_t		flags;		/* none yet */
};

#define	KINST_TRAMP_SIZE	KINST_A64_TRAMP_SIZE

/*
 * The breakpoint is a whole word, written at once
 * (kinst_os_text_write_word, the arm64 shims'); its first byte and a
 * jump's are what the neutral control path's byte-wise scans look for
 * first, then confirm against the probe table.
 */
#define	KINST_BP_LEN		4
#define	KINST_BP_WORD		KINST_A64_BRK(KINST_A64_BRK_PROBE)
#define	KINST_BP_BYTE		((uint8_t)KINST_BP_WORD)
#define	KINST_JMP_BYTE		KINST_BP_BYTE	/* never written: no jumps */

#define	KINST_JOPT_WINDOW	4	/* a b's word (never qualifies yet) */
#define	KINST_DETOUR_SIZE	64

/* The arm64 shims': store the 32-bit word w at the text address addr. */
void	kinst_os_text_write_word(uint64_t addr, uint32_t w);

/* Arm (the brk) or disarm (the original word) the probe at addr. */
static inline void
kinst_isa_text_arm(uint64_t addr, bool arm, const uint8_t *orig)
{

	kinst_os_text_write_word(addr, arm ? KINST_BP_WORD : kinst_a64_word(orig));
}

static inline uint64_t
kinst_regs_pc(const struct kinst_regs *r)
{

	return (r->pc);
}

static inline void
kinst_regs_set_pc(struct kinst_regs *r, uint64_t pc)
{

	r->pc = pc;
}

static inline uint64_t
kinst_regs_sp(const struct kinst_regs *r)
{

	return (r->sp);
}

/* A probe program's register reg (< KINST_PREG_COUNT: its verifier's bound). */
static inline uint64_t
kinst_regs_prog(const struct kinst_regs *r, uint8_t reg)
{

	if (reg < 31)
		return (r->x[reg]);
	if (reg == KINST_PREG_SP)
		return (r->sp);
	return (reg == KINST_PREG_PC ? r->pc : r->pstate);
}

/* A copy of r for a hit record (no padding to zero). */
static inline void
kinst_regs_record(struct kinst_regs *dst, const struct kinst_regs *r)
{

	*dst = *r;
}

/*
 * Out of line: resume at the probe's trampoline; in a kernel
 * (manage_if) with IRQ and FIQ masked, in the variant whose closing brk
 * unmasks what was unmasked (kinst_a64_tramp.h).
 */
static inline void
kinst_isa_ool(struct kinst_regs *regs, const struct kinst_class *cls,
    uint64_t tramp, bool manage_if)
{
	struct kinst_a64_regs a;

	(void)cls;
	a.pc = regs->pc;
	a.pstate = regs->pstate;
	kinst_a64_tramp_enter(&a, tramp, manage_if);
	regs->pc = a.pc;
	regs->pstate = a.pstate;
}

enum kinst_emu_err {
	KINST_EMU_OK = KINST_A64_EMU_OK,
	KINST_EMU_FAULT = KINST_A64_EMU_FAULT,
	KINST_EMU_BADINSN = KINST_A64_EMU_BADINSN,
	KINST_EMU_AUTH = KINST_A64_EMU_AUTH,
};

/*
 * The emulator on the register file (kinst_a64_emulate()), with the
 * shim's pointer authentication (kinst_os_pac_ops(), NULL where it has
 * none: the PAC branches are then not emulated).
 */
const struct kinst_a64_pac_ops *kinst_os_pac_ops(void);
int	kinst_emulate(const struct kinst_insn *insn, int emul,
	    struct kinst_regs *regs, const struct kinst_mem_ops *mem);

uint8_t	kinst_insn_length(const uint8_t *buf, size_t avail);
int	kinst_func_boundary(const uint8_t *func, size_t size, uint32_t off,
	    uint32_t *prev, uint32_t *next);
int	kinst_detour_build(const uint8_t *window, uint32_t avail,
	    const struct kinst_detour_spec *sp, uint8_t out[KINST_DETOUR_SIZE],
	    uint32_t *wlen, uint32_t *wstart);
const char *kinst_jopt_name(int verdict);

/*
 * The frame records' walk: x29 points at {previous x29, return address}.
 * At a function's first instruction (at_entry) the caller's return
 * address is in x30, not yet in a record.
 */
struct kinst_fpwalk {
	uint64_t	fp;		/* the interrupted x29 */
	uint64_t	lr;		/* the interrupted x30 */
	uint64_t	lo, hi;		/* stack bounds: lo <= frame < hi */
	uint64_t	pc_min;		/* lowest plausible return address */
	uint64_t	strip;		/* the pointer-authentication code's bits
					   (0: none): set in a return address
					   whose bit 55 is set, cleared otherwise */
	bool		at_entry;
};

uint32_t kinst_fpwalk(const struct kinst_fpwalk *w,
	    const struct kinst_mem_ops *mem, uint64_t *pcs, uint32_t max,
	    bool *truncated);

#endif /* !KINST_ARM64_ISA_MD_H */
