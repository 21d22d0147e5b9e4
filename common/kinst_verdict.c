/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names of the treatments and the reasons (kinst_verdict.h): stable,
 * part of kinstctl's JSON and of its refusal messages.
 */

#include "kinst_verdict.h"

static const char *const treatment_names[] = {
	[KINST_T_NONE] = "none",
	[KINST_T_OOL] = "out-of-line",
	[KINST_T_OOL_RIPREL] = "out-of-line-riprel",
	[KINST_T_EMULATE] = "emulated",
	[KINST_T_REFUSE] = "refused",
};

static const char *const reason_names[] = {
	[KINST_R_NONE] = "none",
	[KINST_R_UNDECODABLE] = "undecodable",
	[KINST_R_INT3] = "int3",
	[KINST_R_INT] = "interrupt",
	[KINST_R_IRET] = "iret",
	[KINST_R_SYSTEM_ENTRY] = "syscall-sysret",
	[KINST_R_FAR] = "far-transfer",
	[KINST_R_SWAPGS] = "swapgs",
	[KINST_R_XBEGIN] = "xbegin",
	[KINST_R_UD] = "undefined-opcode",
	[KINST_R_HALT] = "halt",
	[KINST_R_MOV_SS] = "ss-load",
	[KINST_R_BRANCH_OPSIZE] = "branch-operand-size",
	[KINST_R_SEGMENT] = "segment-override",
	[KINST_R_VMENTRY] = "vm-entry",
	[KINST_R_RIPREL_RANGE] = "riprel-out-of-range",
	[KINST_R_FIXUP] = "exception-fixup",
	[KINST_R_ONFAULT] = "onfault-function",
	[KINST_R_EXCLUDED] = "excluded-function",
	[KINST_R_TEXT_PATCHED] = "text-patched",
	[KINST_R_STI_SHADOW] = "sti-shadow",
	[KINST_R_ENDBR] = "endbr",
	[KINST_R_TRAP_PATH] = "excluded-function (trap path)",
	[KINST_R_CPU_BRINGUP] = "excluded-function (cpu bring-up)",
	[KINST_R_SHARED_FULL] = "shared-by-too-many",
	[KINST_R_EXCL_SELF] = "excluded-function (kinst itself)",
	[KINST_R_EXCL_ENTRY] = "excluded-function (entry code)",
	[KINST_R_EXCL_NOINSTR] =
	    "excluded-function (noinstr: NMI and exception entry)",
	[KINST_R_EXCL_IDLE] = "excluded-function (idle with interrupts off)",
	[KINST_R_EXCL_BLACKLIST] = "excluded-function (kprobe blacklist)",
	[KINST_R_EXCL_THUNK] = "excluded-function (thunks and static calls)",
	[KINST_R_EXCL_BREAKPOINT] = "excluded-function (breakpoint path)",
	[KINST_R_EXCL_DEBUGGER] = "excluded-function (oops and debugger)",
	[KINST_R_EXCL_HANDLER] =
	    "excluded-function (called by kinst's handler)",
	[KINST_R_EXCL_FAULT] =
	    "excluded-function (page-fault path of a no-fault read)",
	[KINST_R_EXCL_PATCHING] = "excluded-function (text patching)",
	[KINST_R_EXCL_SCHED] = "excluded-function (context switch)",
	[KINST_R_EXCLUSIVE] = "exclusive-monitor",
	[KINST_R_SYSREG_WRITE] = "system-register-write",
	[KINST_R_EXC_GEN] = "exception-generating",
	[KINST_R_ERET] = "exception-return",
	[KINST_R_EXC_STATE_READ] = "exception-state-read",
};

_Static_assert(KINST_NELEM(treatment_names) == KINST_T_REFUSE + 1, "names");
_Static_assert(KINST_NELEM(reason_names) == KINST_R_COUNT, "names");

const char *
kinst_treatment_name(int t)
{
	if (t < 0 || (unsigned)t >= KINST_NELEM(treatment_names))
		return ("unknown");
	return (treatment_names[t]);
}

const char *
kinst_reason_name(int r)
{
	if (r < 0 || (unsigned)r >= KINST_NELEM(reason_names))
		return ("unknown");
	return (reason_names[r]);
}
