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
extern struct kinst_ctl kinst_ctl;

/* kinst_hook.S */
void	kinst_hook(void);
int	kinst_hook_install(void);
int	kinst_hook_remove(void);
void	*kinst_hook_owner(void);

/* kinst_nofault.S */
int	kinst_nofault_copy(void *dst, const void *src, size_t len);
int	kinst_nofault_copy_user(void *dst, const void *src, size_t len);
extern int kinst_nofault_smap;	/* stac/clac around the user copy */
int	kinst_nofault_install(void);
int	kinst_nofault_remove(void);
extern char kinst_nofault_start[], kinst_nofault_end[], kinst_nofault_fail[];
extern char kinst_nofault_ustart[], kinst_nofault_uend[], kinst_nofault_ufail[];

/* kinst_fbsd_os.c */
int	kinst_fbsd_trap_nofault(struct trapframe *tf, u_int type);
int	kinst_fbsd_trap(struct trapframe *tf);	/* called by kinst_hook */
int	kinst_fbsd_os_init(void);
void	kinst_fbsd_os_fini(void);
u_long	kinst_fbsd_emu_faults(void);

/*
 * FreeBSD declarations the user read (kinst_os_read_user, docs/freebsd.md
 * 4) needs that the declaration-only headers of the compile check
 * (../shared/freebsd-decls) lack.  Each is defined here only when the
 * header named did not define it; the values are FreeBSD's.
 */
#ifdef _KERNEL
/* x86/include/x86_var.h (included by machine/md_var.h): same declaration. */
extern u_int cpu_stdext_feature;
#endif
#ifndef CPUID_STDEXT_SMAP	/* x86/include/specialreg.h */
#define	CPUID_STDEXT_SMAP	0x00100000	/* CPUID.(7,0):EBX bit 20 */
#endif
#ifndef VM_MAXUSER_ADDRESS_LA48	/* amd64/include/vmparam.h */
#define	VM_MAXUSER_ADDRESS_LA48	0x0000800000000000ul	/* 2^47 */
#endif
#ifndef VM_MAXUSER_ADDRESS_LA57	/* amd64/include/vmparam.h */
#define	VM_MAXUSER_ADDRESS_LA57	0x0100000000000000ul	/* 2^56 */
#endif
/*
 * Whether process p has a user address space: p_vmspace (struct proc,
 * sys/sys/proc.h) is not vmspace0 (declared in sys/sys/proc.h), the
 * vmspace of proc0 that kernel threads and kernel processes run on.  The
 * shared declaration set's abridged struct proc has no p_vmspace and it
 * lacks vmspace0; it is recognised by the absence of P_KPROC (defined by
 * the real sys/sys/proc.h), and there the test compiles as "no user
 * address space".  tests/freebsd/fbsd_compile_test adds all three to its
 * private copy of that header, so the real line is compiled there.
 */
#ifdef P_KPROC
#define	KINST_FBSD_HAS_USER_VM(p)					\
	((p) != NULL && (p)->p_vmspace != NULL && (p)->p_vmspace != &vmspace0)
#else
#define	KINST_FBSD_HAS_USER_VM(p)	((void)(p), false)	/* decls only */
#endif

#endif /* !KINST_FBSD_H */
