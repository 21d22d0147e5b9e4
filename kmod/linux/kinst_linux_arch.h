/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: what the shim needs of the machine, one file per
 * architecture (kinst_linux_x86.c, kinst_linux_arm64.c; Kbuild picks one).
 * Everything else in kmod/linux is the same on both.
 *
 * An architecture file is trap context (the breakpoint hook and what it
 * reaches: kinst_os_read, kinst_os_stack, the register file's copies in
 * and out) plus three control-path primitives (the text store, the
 * trampolines' fill and flush) and the roots of the trap-path walk
 * (kinst_linux_trappath.c).  It calls nothing in the control or
 * registration layers.
 */
#ifndef KINST_LINUX_ARCH_H
#define KINST_LINUX_ARCH_H

#include <linux/types.h>

#if defined(CONFIG_X86_64)
#include <asm/sync_core.h>
/* Serialize this CPU's instruction stream after another CPU wrote text. */
static inline void
kinst_linux_sync_core(void)
{
	sync_core();
}
#define	KINST_LINUX_TRAMP_FILL	0xcc	/* int3 in every unused byte */
#define	KINST_LINUX_JUMPS	1	/* jump-optimized probes */
#elif defined(CONFIG_ARM64)
#include <asm/barrier.h>
static inline void
kinst_linux_sync_core(void)
{
	isb();
}
#define	KINST_LINUX_TRAMP_FILL	0x00	/* udf #0 in every unused word */
#define	KINST_LINUX_JUMPS	0
#else
#error "kinst: no Linux shim for this architecture (kmod/linux/kinst_linux_arch.h)"
#endif

/* ---- registration: the breakpoint hook ---- */

int	kinst_linux_hook_register(void);
void	kinst_linux_hook_unregister(void);

/* ---- control context ---- */

/*
 * Store n bytes of kernel text at addr (text_mutex held), on this CPU only;
 * kinst_os_text_sync() does the rest.  x86-64: text_poke().  arm64: the
 * aligned words covering them, each through aarch64_insn_patch_text_nosync()
 * (which cleans the data and invalidates the instruction cache to the PoU).
 */
void	kinst_linux_text_store(uint64_t addr, const void *buf, size_t n);

/*
 * A block of trampolines, written, about to be sealed (arm64: made visible
 * to instruction fetch, and registered for the resume brk); 0, or -1 when
 * it cannot be.  kinst_linux_tramp_gone(): the block is about to be freed,
 * after the quiescence that proves no CPU is in it.
 */
int	kinst_linux_tramp_sealed(void *mem, size_t size);
void	kinst_linux_tramp_gone(void *mem, size_t size);

/*
 * The architecture's own refusal of the instruction at addr of f, or
 * KINST_R_NONE (arm64: the exclusive-sequence rule).
 */
struct kinst_func;
int	kinst_linux_arch_insn_check(const struct kinst_func *f, uint64_t addr);

/*
 * The trap-path walk's roots and stops (kinst_linux_trappath.c), by name:
 * what the architecture's breakpoint and fault paths run before and around
 * kinst's hook, what a secondary CPU runs before it can take a breakpoint,
 * and what a dead CPU runs.  NULL-terminated lists.
 */
struct kinst_linux_roots {
	const char *const *trap;	/* class trap path, walked */
	const char *const *cut;		/* stop points (not walked, not refused) */
	const char *const *leaf;	/* refused, not walked */
	const char *prefix;		/* bring-up: walked up to rcu_cpu_starting */
	const char *const *bringup;	/* class cpu bring-up, walked */
	const char *const *dead;	/* class cpu dead, walked */
};
extern const struct kinst_linux_roots kinst_linux_arch_roots;

/*
 * Roots found through pointers fixed once the system runs: add(p, reason)
 * for each, of the trap path (!dead; x86-64: the die notifiers before
 * kinst's, the APIC driver's IPI functions) or of a dead CPU (dead; x86-64:
 * smp_ops.play_dead).
 */
void	kinst_linux_arch_root_ptrs(bool dead,
	    void (*add)(const void *p, uint8_t reason));

/*
 * Where a branch to a goes when a is a veneer (arm64: a module's PLT
 * entry); a itself otherwise.  The trap-path walk follows it.
 */
unsigned long kinst_linux_arch_veneer(unsigned long a);

/* ---- trap context ---- */

/* The breakpoint hooks (the trap-path walk's roots, with kinst_linux.h's). */
extern void *const kinst_linux_arch_trap_roots[];
extern const size_t kinst_linux_arch_ntrap_roots;
bool	kinst_linux_read_ok(uint64_t addr, size_t len);
struct kinst_regs;
void	kinst_linux_jhandler(void *arg, struct kinst_regs *kr);
#if KINST_LINUX_JUMPS
/* The detours' KINST_DETOUR_* flags: what this CPU has. */
uint32_t kinst_linux_detour_flags(void);
/*
 * debugfs kinst/jump: calls of kinst_linux_jhandler() made with EFLAGS.AC
 * set (SMAP off), summed over the CPUs; 0 while every detour clears it.
 */
unsigned long kinst_linux_jump_ac(void);
#else
static inline unsigned long
kinst_linux_jump_ac(void)
{
	return (0);
}
#endif

#endif /* !KINST_LINUX_ARCH_H */
