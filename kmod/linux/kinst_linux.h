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
void	kinst_linux_jump_init(struct kinst_ctl *c);
/* Jumps installed now, and whether the optimizer runs (kinst_linux.c). */
uint32_t kinst_linux_njump(bool *optimizing);
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

/* kinst_linux_prog.c: the probe-program ioctls; KINST_E_* codes */
int	kinst_linux_prog_load(struct kinst_ctl *c, struct kinst_csession *cs,
	    void __user *up);
int	kinst_linux_prog_stats(struct kinst_ctl *c, struct kinst_csession *cs,
	    void __user *up);

/* kinst_linux_agg.c: the aggregation ioctls; KINST_E_* codes */
int	kinst_linux_agg_ioctl(struct kinst_ctl *c, struct kinst_csession *cs,
	    unsigned int cmd, void __user *up);
int	kinst_linux_agg_setup(struct kinst_ctl *c, struct kinst_csession *cs,
	    void __user *up);
int	kinst_linux_agg_read(struct kinst_ctl *c, struct kinst_csession *cs,
	    void __user *up);
int	kinst_linux_agg_stacks(struct kinst_ctl *c, struct kinst_csession *cs,
	    void __user *up);
int	kinst_linux_agg_stats(struct kinst_ctl *c, struct kinst_csession *cs,
	    void __user *up);

#endif /* !KINST_LINUX_H */
