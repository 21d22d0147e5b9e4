/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verdict on an instruction and why one is refused: what every
 * instruction set's classifier answers (kinst_isa.h, struct kinst_class's
 * treatment and reason), and what the control path and the shims refuse
 * with too.  The codes and their names are the ABI's (kinst_arm's
 * refuse_reason, kinstctl's JSON): an instruction set adds its own reasons
 * here, never renumbers one.
 */
#ifndef KINST_VERDICT_H
#define KINST_VERDICT_H

#include "kinst_types.h"

enum kinst_treatment {
	KINST_T_NONE = 0,
	KINST_T_OOL = 1,		/* executed out of line, verbatim */
	KINST_T_OOL_RIPREL = 2,		/* out of line, its pc-relative
					   operand rewritten (x86-64: disp32) */
	KINST_T_EMULATE = 3,		/* emulated on the register file */
	KINST_T_REFUSE = 4,		/* not traceable: see reason */
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
	/*
	 * arm64's (issue 44; common/arm64/kinst_a64.h).  No module returns
	 * them yet: the x86-64 engine never does.
	 */
	KINST_R_EXCLUSIVE,	/* "exclusive-monitor": ldxr/stxr, or inside such a sequence */
	KINST_R_SYSREG_WRITE,	/* "system-register-write": msr to DAIF, SP_EL0, ELR... */
	KINST_R_EXC_GEN,	/* "exception-generating": svc, hvc, smc, brk, hlt, dcps */
	KINST_R_ERET,		/* "exception-return": eret, eretaa/ab, drps */
	KINST_R_EXC_STATE_READ,	/* "exception-state-read": mrs of ELR, SPSR, ESR, FAR */
	KINST_R_COUNT
};

const char	*kinst_treatment_name(int treatment);	/* "out-of-line", ... */
const char	*kinst_reason_name(int reason);		/* "int3", ... */

#endif /* !KINST_VERDICT_H */
