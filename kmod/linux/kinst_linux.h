/* SPDX-License-Identifier: BSD-2-Clause */
/* kinst for Linux: what the two files of the shim share. */
#ifndef KINST_LINUX_H
#define KINST_LINUX_H

#include "kinst_abi.h"
#include "kinst_control.h"
#include "kinst_engine.h"
#include "kinst_os.h"

extern struct kinst_engine *kinst_engine;

int	kinst_linux_syms_init(void);
int	kinst_linux_hook_init(void);
void	kinst_linux_hook_fini(void);
unsigned long kinst_linux_emu_faults(void);

#endif /* !KINST_LINUX_H */
