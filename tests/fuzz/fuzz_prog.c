/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the probe-program verifier and interpreter
 * (common/kinst_prog.c).  The input is a program: 16-byte instructions as
 * struct kinst_pinsn.  The verifier must refuse it, or the interpreter must
 * keep tests/unit/prog_check.h's property: at most ninsns steps, the stack
 * within its bounds, at most nloads reads of exactly the sizes the LOAD
 * instructions declared (abort() otherwise; ASan/UBSan watch the rest).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "prog_check.h"
#include "kinst_tstate.c"
#include "kinst_prog.c"
#include "kinst_progname.c"
#include "kinst_agg.c"		/* KINST_OP_KEY / KINST_OP_VALUE */

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kinst_pinsn code[KINST_PROG_MAX_INSNS + 1];
	uint32_t n;

	n = (uint32_t)(size / sizeof(code[0]));
	if (n > KINST_PROG_MAX_INSNS + 1)
		n = KINST_PROG_MAX_INSNS + 1;
	memcpy(code, data, (size_t)n * sizeof(code[0]));
	(void)prog_check_one(code, n);
	return (0);
}
