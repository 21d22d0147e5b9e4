/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What an instruction needs to be traced: run out of line in a trampoline
 * (optionally with its RIP-relative displacement rewritten), emulated in the
 * trap handler (which kind), or refused (and why).  See docs/engine.md for the
 * table and the reasoning behind every row.
 */
#ifndef KINST_CLASSIFY_H
#define KINST_CLASSIFY_H

#include "x86/kinst_decode.h"

enum kinst_treatment {
	KINST_T_NONE = 0,
	KINST_T_OOL = 1,		/* executed out of line, verbatim */
	KINST_T_OOL_RIPREL = 2,		/* out of line, disp32 rewritten */
	KINST_T_EMULATE = 3,		/* emulated on the register file */
	KINST_T_REFUSE = 4,		/* not traceable: see reason */
};

enum kinst_emul {
	KINST_EM_NONE = 0,
	KINST_EM_JCC,		/* 70-7f rel8, 0f 80-8f rel32 */
	KINST_EM_JMP_REL,	/* eb rel8, e9 rel32 */
	KINST_EM_CALL_REL,	/* e8 rel32 */
	KINST_EM_CALL_IND,	/* ff /2: register or memory */
	KINST_EM_JMP_IND,	/* ff /4: register or memory */
	KINST_EM_LOOP,		/* e2 */
	KINST_EM_LOOPE,		/* e1 */
	KINST_EM_LOOPNE,	/* e0 */
	KINST_EM_JRCXZ,		/* e3 (jecxz with 67) */
	KINST_EM_RET,		/* c3 */
	KINST_EM_RET_IMM,	/* c2 iw */
	KINST_EM_PUSHF,		/* 9c */
	KINST_EM_POPF,		/* 9d */
	KINST_EM_COUNT
};

/* Stable reason codes; their names (kinst_reason_name) are part of the CLI's JSON. */
enum kinst_reason {
	KINST_R_NONE = 0,
	KINST_R_UNDECODABLE,	/* "undecodable" */
	KINST_R_INT3,		/* "int3": 0xcc, already a breakpoint */
	KINST_R_INT,		/* "interrupt": int n, int1, into */
	KINST_R_IRET,		/* "iret" */
	KINST_R_SYSTEM_ENTRY,	/* "syscall-sysret": syscall/sysret/sysenter/sysexit */
	KINST_R_FAR,		/* "far-transfer": far call/jmp/ret */
	KINST_R_SWAPGS,		/* "swapgs" */
	KINST_R_XBEGIN,		/* "xbegin" */
	KINST_R_UD,		/* "undefined-opcode": ud0/ud1/ud2 (BUG/WARN sites) */
	KINST_R_HALT,		/* "halt": hlt, mwait, mwaitx, umwait, tpause */
	KINST_R_MOV_SS,		/* "ss-load": mov to %ss, lss */
	KINST_R_BRANCH_OPSIZE,	/* "branch-operand-size": 66-prefixed near branch */
	KINST_R_SEGMENT,	/* "segment-override": fs/gs memory operand in an emulated branch */
	KINST_R_VMENTRY,	/* "vm-entry": vmlaunch/vmresume/vmrun */
	KINST_R_RIPREL_RANGE,	/* "riprel-out-of-range": trampoline cannot reach the target */
	KINST_R_FIXUP,		/* "exception-fixup": the kernel has a fixup for this address */
	KINST_R_ONFAULT,	/* "onfault-function": runs with a fault handler armed */
	KINST_R_EXCLUDED,	/* "excluded-function": tracer's own path, entry code, debugger */
	KINST_R_TEXT_PATCHED,	/* "text-patched": ftrace/jump label/static call/kprobe site */
	KINST_R_STI_SHADOW,	/* "sti-shadow": sti right before hlt/mwait (its shadow matters) */
	KINST_R_ENDBR,		/* "endbr": an int3 on an indirect-branch target faults (#CP) under IBT */
	KINST_R_TRAP_PATH,	/* "excluded-function (trap path)": reached by the #BP path or the handler (ABI 1.3) */
	KINST_R_CPU_BRINGUP,	/* "excluded-function (cpu bring-up)": runs before a new CPU can take a #BP (ABI 1.3) */
	KINST_R_SHARED_FULL,	/* "shared-by-too-many": KINST_SITE_SUBS sessions trace it already (ABI 1.13) */
	/*
	 * excluded-function, by the list or derivation that excluded it and
	 * why (ABI 1.13; KINST_R_EXCLUDED stays for anything else).
	 */
	KINST_R_EXCL_SELF,	/* "excluded-function (kinst itself)" */
	KINST_R_EXCL_ENTRY,	/* "excluded-function (entry code)": entry, irqentry, softirqentry text; FreeBSD's exception vectors */
	KINST_R_EXCL_NOINSTR,	/* "excluded-function (noinstr: NMI and exception entry)" */
	KINST_R_EXCL_IDLE,	/* "excluded-function (idle with interrupts off)": cpuidle text */
	KINST_R_EXCL_BLACKLIST,	/* "excluded-function (kprobe blacklist)": NOKPROBE_SYMBOL, kprobes text */
	KINST_R_EXCL_THUNK,	/* "excluded-function (thunks and static calls)" */
	KINST_R_EXCL_BREAKPOINT,	/* "excluded-function (breakpoint path)": do_int3, kprobes, die notifiers */
	KINST_R_EXCL_DEBUGGER,	/* "excluded-function (oops and debugger)" */
	KINST_R_EXCL_HANDLER,	/* "excluded-function (called by kinst's handler)": clock, wake-up IPI, mem*, unwinder */
	KINST_R_EXCL_FAULT,	/* "excluded-function (page-fault path of a no-fault read)" */
	KINST_R_EXCL_PATCHING,	/* "excluded-function (text patching)": text_poke, sync_core, cross-CPU calls */
	KINST_R_EXCL_SCHED,	/* "excluded-function (context switch)": FreeBSD's cpu_switch, savectx... */
	KINST_R_COUNT
};

#define	KINST_CF_NO_STI	0x01	/* changes IF itself: use the trampoline variant without sti */
#define	KINST_CF_RIPREL	0x02	/* has a RIP-relative disp32 */
#define	KINST_CF_NOFALL	0x04	/* never continues at the next instruction (jmp, ret, ud2, iret...) */

struct kinst_class {
	uint8_t		treatment;	/* enum kinst_treatment */
	uint8_t		emul;		/* enum kinst_emul, when KINST_T_EMULATE */
	uint8_t		reason;		/* enum kinst_reason, when KINST_T_REFUSE */
	uint8_t		flags;		/* KINST_CF_* */
};

/*
 * Classify a decoded instruction.  dec_status is kinst_decode()'s return
 * value for it (anything but KINST_DEC_OK is refused as undecodable); bytes
 * are the instruction's bytes.
 */
void	kinst_classify(int dec_status, const struct kinst_insn *insn,
	    const uint8_t *bytes, struct kinst_class *out);

/*
 * The near branch insn is from its opcode alone (KINST_EM_JCC ..
 * KINST_EM_RET_IMM; KINST_EM_NONE if none): what kinst_classify() emulates,
 * unless a prefix makes it refuse (KINST_R_BRANCH_OPSIZE, KINST_R_SEGMENT).
 * The one table of branch kinds; kinst_callgraph.c and kinstctl cover
 * read it here.
 */
int	kinst_branch_kind(const struct kinst_insn *insn);

/*
 * Is insn an sti immediately followed (next, avail bytes) by an instruction
 * that halts?  Then its interrupt shadow matters and it must be refused
 * (KINST_R_STI_SHADOW); kinst_probe_prepare() checks this.
 */
bool	kinst_sti_shadow_matters(const struct kinst_insn *insn,
	    const uint8_t *next, size_t avail);

const char	*kinst_treatment_name(int treatment);	/* "out-of-line", ... */
const char	*kinst_emul_name(int emul);		/* "jcc", "call", ... */
const char	*kinst_reason_name(int reason);		/* "int3", ... */

/*
 * Walk a function's bytes from its first byte.  kinst_func_boundary() says
 * whether off is an instruction boundary strictly inside [0, size): returns
 * 1 if it is, 0 if it is not (then prev and next, when not NULL, get the
 * nearest boundaries below and above, next == size if none), -1 if the
 * function could not be decoded up to off (an undecodable instruction before
 * it).
 */
int	kinst_func_boundary(const uint8_t *func, size_t size, uint32_t off,
	    uint32_t *prev, uint32_t *next);

#endif /* !KINST_CLASSIFY_H */
