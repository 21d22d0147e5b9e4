/* SPDX-License-Identifier: BSD-2-Clause */
/* kinst for Linux: what the files of the shim share. */
#ifndef KINST_LINUX_H
#define KINST_LINUX_H

#include "kinst_abi.h"
#include "kinst_control.h"
#include "kinst_dev.h"
#include "kinst_engine.h"
#include "kinst_os.h"

extern struct kinst_engine *kinst_engine;

int	kinst_linux_syms_init(void);
void	kinst_linux_jump_init(struct kinst_ctl *c);
/* Jumps installed now, and whether the optimizer runs (kinst_linux.c). */
uint32_t kinst_linux_njump(bool *optimizing);
struct kinst_site_info;
uint32_t kinst_linux_sites(struct kinst_site_info *out, uint32_t cap);
struct kinst_holder_info;
uint32_t kinst_linux_holders(struct kinst_holder_info *out, uint32_t cap);
/* kinst_linux_trap.c */
bool	kinst_linux_read_ok(uint64_t addr, size_t len);
void	kinst_linux_jhandler(void *arg, struct kinst_regs *kr);
int	kinst_linux_hook_init(void);
void	kinst_linux_hook_fini(void);
unsigned long kinst_linux_emu_faults(void);

/* kinst_linux_os.c, for the walk */
unsigned long kinst_linux_lookup_name(const char *name);
bool	kinst_linux_func_bounds(unsigned long a, unsigned long *start,
	    unsigned long *size, bool *own);
bool	kinst_linux_ftrace_site(unsigned long a);
struct dentry;
void	kinst_linux_debugfs_os(struct dentry *dir);	/* test hook kinst/read */

/* kinst_linux_trappath.c: the exclusion sets derived from the live text */
struct notifier_block;
int	kinst_linux_derive(struct notifier_block *ours, void *const *roots,
	    size_t nroots);
void	kinst_linux_derive_fini(void);
int	kinst_linux_derived_check(unsigned long a);

#endif /* !KINST_LINUX_H */
