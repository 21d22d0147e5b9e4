/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What kinst_agghit.c needs of the OS that user-space tests linking it do not
 * use: kinst_os_stack() (stack keys, KINST_AGGF_STACK, call the unwinder):
 * no frames; kinst_os_wake_deferred() (sample records, KINST_AGGF_RECORD,
 * wake the reader): nothing to wake.  Include once per program, at file
 * scope (in C++, inside the extern "C" block of the other kinst_os_* stubs).
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

void
kinst_os_wake_deferred(struct kinst_session *s)
{
	(void)s;
}

#endif
