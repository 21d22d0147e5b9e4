/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verifier's verdicts by name (kinst_prog.h), apart from the verifier
 * and interpreter so that kinstctl can link it without the trap-context
 * OS hooks.
 */

#include "kinst_prog.h"

static const char *const verdict_names[KINST_PV_COUNT_] = {
	[KINST_PV_OK] = "ok",
	[KINST_PV_EMPTY] = "empty program",
	[KINST_PV_TOO_LONG] = "too many instructions",
	[KINST_PV_BAD_OP] = "unknown opcode",
	[KINST_PV_BAD_ARG] = "register, context item or load size out of range",
	[KINST_PV_NONZERO] = "unused field not zero",
	[KINST_PV_JUMP_BACK] = "jump backward",
	[KINST_PV_JUMP_OUT] = "jump past the end",
	[KINST_PV_UNDERFLOW] = "stack underflow",
	[KINST_PV_OVERFLOW] = "stack overflow",
	[KINST_PV_MISMATCH] = "paths join with different stack depths",
	[KINST_PV_UNREACHABLE] = "unreachable instruction",
	[KINST_PV_FALL_OFF] = "falls off the end",
	[KINST_PV_RET_DEPTH] = "ret with other than one value",
	[KINST_PV_TOO_MANY_LOADS] = "too many loads",
	[KINST_PV_CAP_LEN] = "capture length out of range",
	[KINST_PV_TOO_MANY_CAPS] = "too many captures",
	[KINST_PV_CAP_BYTES] = "captures too big in total",
};

const char *
kinst_prog_verdict_name(uint32_t verdict)
{
	if (verdict >= KINST_PV_COUNT_)
		return ("unknown verdict");
	return (verdict_names[verdict]);
}
