/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst_os_stack() for user-space tests that link kinst_agg.c (whose stack
 * keys, KINST_AGGF_STACK, call the OS unwinder) but take no stacks: no
 * frames.  Include once per program, at file scope (in C++, inside the
 * extern "C" block of the other kinst_os_* stubs).
 */
#ifndef KINST_TEST_OS_STACK_NONE_H
#define KINST_TEST_OS_STACK_NONE_H

uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	(void)regs;
	(void)osctx;
	(void)offset;
	(void)pcs;
	(void)max;
	*truncated = false;
	return 0;
}

#endif
