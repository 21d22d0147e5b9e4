/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prog_bench's step counter: common/kinst_prog.c compiled a second time,
 * its public functions renamed, with the KINST_PROG_STEP hook counting the
 * bytecode instructions a run executes (a jump skips some, so a program's
 * length is not what a run costs).  The timed runs use kinst_common's
 * interpreter, without the hook.
 */
#include <stdint.h>

static uint64_t prog_steps;

#define	KINST_PROG_STEP(p, pc, sp)	(prog_steps++)
#define	kinst_prog_verify	prog_steps_verify
#define	kinst_prog_run		prog_steps_run
#define	kinst_prog_load_mem	prog_steps_load_mem
#define	kinst_prog_pass		prog_steps_pass
#define	kinst_prog_read		prog_steps_read
#define	kinst_prog_run_caps	prog_steps_run_caps
#define	kinst_cap_section	prog_steps_cap_section
#include "kinst_prog.c"

uint64_t	prog_bench_steps(const struct kinst_prog *p,
		    const struct kinst_prog_ctx *c);

/* The instructions one run of p on c executes. */
uint64_t
prog_bench_steps(const struct kinst_prog *p, const struct kinst_prog_ctx *c)
{
	uint64_t v;

	prog_steps = 0;
	(void)prog_steps_run(p, c, &v);
	return (prog_steps);
}
