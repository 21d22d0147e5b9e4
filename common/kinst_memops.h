/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory access for the instruction set's code that reads or writes memory
 * in trap context (kinst_isa.h: the emulator, the frame-pointer walk):
 * both return 0 on success, non-zero on a fault.  The engine passes the
 * OS's no-fault read and stack write (kinst_os.h); tests pass their own.
 */
#ifndef KINST_MEMOPS_H
#define KINST_MEMOPS_H

#include "kinst_types.h"

struct kinst_mem_ops {
	int	(*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int	(*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
	void	*ctx;
};

#endif /* !KINST_MEMOPS_H */
