/* SPDX-License-Identifier: BSD-2-Clause */
/* kinst for FreeBSD: what the files of the shim share. */
#ifndef KINST_FBSD_H
#define KINST_FBSD_H

#include "kinst_abi.h"
#include "kinst_control.h"
#include "kinst_dev.h"
#include "kinst_engine.h"
#include "kinst_freebsd.h"
#include "kinst_os.h"

#ifdef MALLOC_DECLARE
MALLOC_DECLARE(M_KINST);
#endif

struct trapframe;

/* The engine and the control state (kinst_fbsd_dev.c). */
extern struct kinst_engine *kinst_engine;

/*
 * kinst_fbsd_vm.c: the VM glue of mapped rings (kinst_os_ring_alloc/free
 * of common/kinst_dev.h, and the object a mapping gets): set *object to
 * m's VM object with a reference for the mapping, *offset to m->off.
 */
struct vm_object;
void	kinst_fbsd_map_object(const struct kinst_dev_map *m,
	    vm_ooffset_t *offset, struct vm_object **object);
extern struct kinst_ctl kinst_ctl;

/* kinst_hook.S */
void	kinst_hook(void);
int	kinst_hook_install(void);
int	kinst_hook_remove(void);
void	*kinst_hook_owner(void);
int	kinst_hook_free(void);	/* the hook is NULL or calltrap */

/* kinst_nofault.S */
int	kinst_nofault_copy(void *dst, const void *src, size_t len);
int	kinst_nofault_copy_user(void *dst, const void *src, size_t len);
extern int kinst_nofault_smap;	/* stac/clac around the user copy */
int	kinst_nofault_install(void *gate);
int	kinst_nofault_remove(void *gate);
int	kinst_nofault_ours(void);	/* dtrace_trap_func is still ours */
extern void *kinst_nofault_gate;	/* the installed trap gate, or NULL */
extern char kinst_nofault_start[], kinst_nofault_end[], kinst_nofault_fail[];
extern char kinst_nofault_ustart[], kinst_nofault_uend[], kinst_nofault_ufail[];

/* kinst_fbsd_dev.c: both trap hooks are kinst's (DTrace took neither) */
bool	kinst_fbsd_hooks_ours(void);

/* kinst_fbsd_os.c */
int	kinst_fbsd_trap_nofault(struct trapframe *tf, u_int type);
int	kinst_fbsd_trap(struct trapframe *tf);	/* called by kinst_hook */
int	kinst_fbsd_os_init(void);
void	kinst_fbsd_os_fini(void);
u_long	kinst_fbsd_emu_faults(void);
void	*kinst_fbsd_gate_alloc(uint64_t **word);

#endif /* !KINST_FBSD_H */
