/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: what the files of the shim share, by layer.  A file
 * calls only into its own layer's files and the layers below it
 * (tests/lint/cycles_test checks that no two files call each other):
 *
 *   registration      kinst_linux.c (load/unload, /dev/kinst, the #BP
 *                     hook's registration), kinst_linux_debugfs.c
 *   control context   kinst_linux_os.c (common/kinst_os.h's control half:
 *                     symbols, text writes, trampolines, quiescence)
 *                     kinst_linux_trappath.c (the exclusion sets derived
 *                     from the live text at load)
 *   trap context      kinst_linux_trap.c (kinst_os.h's trap half that
 *                     is the same everywhere), kinst_linux_x86.c or
 *                     kinst_linux_arm64.c (kinst_linux_arch.h: the
 *                     breakpoint hook, kernel reads, stacks, the text
 *                     store; Kbuild builds one)
 *
 *   kernel symbols    kinst_linux_syms.c (what the kernel does not
 *                     export, found through kallsyms at load)
 *
 * In the control layer, kinst_linux_os.c stands on kinst_linux_trappath.c
 * (the derived check at arm time), never the reverse.
 */
#ifndef KINST_LINUX_H
#define KINST_LINUX_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>

#include "kinst_abi.h"
#include "kinst_control.h"
#include "kinst_dev.h"
#include "kinst_engine.h"
#include "kinst_os.h"

extern struct kinst_engine *kinst_engine;

/* An open file: the portable session and this kernel's wait/wake. */
struct kinst_file {
	struct kinst_dev_file df;
	struct list_head link;		/* kinst_files (kinst_linux.c) */
	struct mutex	read_lock;
	wait_queue_head_t wq;
	struct irq_work	work;		/* kinst_os_wake_deferred() queues it */
	atomic_t	waiting;	/* a reader wants a wakeup */
};

/* ---- registration ---- */

/* kinst_linux_debugfs.c: the views of c (*optimizing: its optimizer runs). */
void	kinst_linux_debugfs_init(struct kinst_ctl *c, const bool *optimizing);
void	kinst_linux_debugfs_fini(void);

/* ---- control context ---- */

/* kinst_linux_os.c */
void	kinst_linux_os_init(void);
void	kinst_linux_jump_init(struct kinst_ctl *c);
bool	kinst_linux_jump_enabled(void);
struct seq_file;
int	kinst_linux_textsync_show(struct seq_file *m);	/* debugfs kinst/textsync */

/* kinst_linux_trappath.c: the exclusion sets derived from the live text */
int	kinst_linux_derive(void);
void	kinst_linux_derive_fini(void);
int	kinst_linux_derived_check(unsigned long a);
int	kinst_linux_derived_show(struct seq_file *m);	/* debugfs kinst/excluded */

/*
 * ---- trap context: kinst_linux_trap.c, and the architecture's file
 * (kinst_linux_arch.h: the breakpoint hook, kernel reads, stacks) ----
 */

unsigned long kinst_linux_emu_faults(void);
/* A per-CPU counter summed over the possible CPUs (racily: for reports). */
unsigned long kinst_linux_percpu_sum(uint64_t __percpu *v);
/* The functions the trap path enters by pointer (the walk's roots). */
extern void *const kinst_linux_trap_roots[];
extern const size_t kinst_linux_ntrap_roots;

/* ---- kernel symbols: kinst_linux_syms.c (calls no other file) ---- */

int	kinst_linux_syms_init(void);
unsigned long kinst_linux_lookup_name(const char *name);
bool	kinst_linux_func_bounds(unsigned long a, unsigned long *start,
	    unsigned long *size, bool *own);
bool	kinst_linux_ftrace_site(unsigned long a);
/* The core kernel's text, [_stext, _etext). */
extern unsigned long kinst_stext, kinst_etext;
static inline bool
kinst_in_kernel_text(unsigned long a)
{
	return (a >= kinst_stext && a < kinst_etext);
}
/* What the kernel does not export, found through kallsyms at load. */
struct exception_table_entry;
struct kprobe;
struct module;
extern int (*k_lookup_size_offset)(unsigned long addr, unsigned long *size,
    unsigned long *off);
#ifdef CONFIG_X86_64
extern void *(*k_text_poke)(void *addr, const void *opcode, size_t len);
#endif
#ifdef CONFIG_ARM64
struct break_hook;
extern int (*k_patch_text_word)(void *addr, u32 insn);	/* aarch64_insn_patch_text_nosync */
extern void (*k_register_kernel_break_hook)(struct break_hook *hook);
extern void (*k_unregister_kernel_break_hook)(struct break_hook *hook);
#endif
extern struct mutex *k_text_mutex;
extern void *(*k_module_alloc)(unsigned long size);
extern void (*k_module_memfree)(void *p);
extern int (*k_set_memory_ro)(unsigned long addr, int n);
extern int (*k_set_memory_rw)(unsigned long addr, int n);
extern int (*k_set_memory_x)(unsigned long addr, int n);
extern int (*k_set_memory_nx)(unsigned long addr, int n);
extern const struct exception_table_entry *(*k_search_exception_tables)(
    unsigned long addr);
extern unsigned long (*k_ftrace_location_range)(unsigned long start,
    unsigned long end);
extern int (*k_jump_label_text_reserved)(void *start, void *end);
extern int (*k_static_call_text_reserved)(void *start, void *end);
extern struct kprobe *(*k_get_kprobe)(void *addr);
extern bool (*k_within_kprobe_blacklist)(unsigned long addr);
extern struct module *(*k_module_text_address)(unsigned long addr);
extern void (*k_synchronize_rcu_tasks)(void);

#endif /* !KINST_LINUX_H */
