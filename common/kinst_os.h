/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the portable engine needs from the OS, implemented once by each shim
 * (kmod/linux, kmod/freebsd) and by the user-space test harness
 * (tests/harness).  These are plain functions resolved at link time: no
 * indirect calls in trap context.
 *
 * Trap context (called from kinst_engine_hit(), any CPU, interrupts off,
 * possibly nested in an NMI): none of these may take a lock, sleep,
 * allocate, wake a thread directly, or call a traceable function.
 */
#ifndef KINST_OS_H
#define KINST_OS_H

#include "kinst_abi.h"

struct kinst_session;

/* Index of the current CPU, 0 <= cpu < the engine's ncpus. */
uint32_t kinst_os_cpu(void);

/* Monotonic clock in nanoseconds. */
uint64_t kinst_os_now_ns(void);

/*
 * The per-CPU scheduler clock in nanoseconds (KINST_TS_LOCAL_CLOCK):
 * monotonic on one CPU; where the TSC is unstable only kept within about a
 * tick of kinst_os_now_ns()'s time, so a duration is right to about a tick
 * (Linux local_clock()).  An OS without a cheaper clock returns
 * kinst_os_now_ns().
 */
uint64_t kinst_os_local_ns(void);

/* Current thread: process id, thread id, command name (NUL-terminated). */
void	kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN]);

/*
 * The current thread's identity for per-thread state (kinst_tstate.h):
 * two words no other live thread has (Linux: the task's address and its
 * start time, which no later thread has either; FreeBSD: the thread's
 * address and tid, which a later thread can have again, docs/freebsd.md).
 */
void	kinst_os_thread_key(uint64_t key[2]);

/*
 * A record was written to s's ring on this CPU: arrange for readers to be
 * woken later (Linux irq_work; FreeBSD readers poll with a short timeout).
 * Must not wake anything directly.
 */
void	kinst_os_wake_deferred(struct kinst_session *s);

/*
 * Read len bytes of memory at addr without faulting (an emulated indirect
 * call/jmp through memory, ret's return address).  0 or non-zero on failure.
 */
int	kinst_os_read(uint64_t addr, void *buf, size_t len);

/*
 * Read len bytes of the current process's user memory at addr (a probe
 * program's load from the lower canonical half).  Trap context, interrupts
 * off, maybe nested in an NMI: never sleeps and never faults a page in; a
 * page that is not present, an address that is not user memory, or a
 * context without a user address space is a failure.  0 or non-zero.
 */
int	kinst_os_read_user(uint64_t addr, void *buf, size_t len);

/*
 * Write len bytes of stack at addr, which lies below the interrupted stack
 * pointer (an emulated call or pushf); the shim guarantees that this room
 * does not overlap its trap frame.  0 or non-zero on failure.
 */
int	kinst_os_write_stack(uint64_t addr, const void *buf, size_t len);

/*
 * The callers of the interrupted context, for probes armed with
 * KINST_ARM_STACK: the return addresses of the function holding regs->rip
 * and of its callers, innermost first (not regs->rip itself: the engine
 * stores that as frame 0), at most max of them into pcs; *truncated set
 * when there were more.  osctx is what the shim passed to
 * kinst_engine_hit_ctx() (Linux: the trap's struct pt_regs; FreeBSD: the
 * struct trapframe), offset the probe's offset in its function.  Bounded
 * work, every stack read fault-safe.  Returns the number stored.
 */
uint32_t kinst_os_stack(const struct kinst_regs *regs, void *osctx,
	    uint32_t offset, uint64_t *pcs, uint32_t max, bool *truncated);

/*
 * ---- Control path ----
 *
 * Called only from the control path (kinst_control.c and the files it
 * stands on or shares its lock with: kinst_ctltext.c, kinst_joptctl.c,
 * kinst_progctl.c, kinst_aggctl.c, kinst_tstatectl.c) and the device
 * protocol (kinst_dev.c), in thread context, never from trap context; they
 * may sleep.  kinst_control.h describes the sequences.
 */
struct kinst_func;

/* The control lock: a sleepable lock serializing all of kinst_control.c. */
void	kinst_os_ctl_lock(void);
void	kinst_os_ctl_unlock(void);

/* Zeroed memory for control structures (not executable); NULL on failure. */
void	*kinst_os_alloc(size_t size);
void	kinst_os_free(void *p, size_t size);

/*
 * Resolve module:function (module "" = the kernel, then any module;
 * "kernel" = the kernel only) to f->addr/size/module and take a reference
 * that keeps its text in place until kinst_os_func_release().  Returns a
 * KINST_E_* code (KINST_E_NOENT when unknown or not text).
 */
int	kinst_os_func_resolve(const char *module, const char *function,
	    struct kinst_func *f);
void	kinst_os_func_release(struct kinst_func *f);

/*
 * Function-level exclusions (tracer's own code and everything the trap path
 * calls, entry/noinstr text, the debugger...): a KINST_R_* reason, or
 * KINST_R_NONE.
 */
int	kinst_os_func_check(const struct kinst_func *f, const char *function);

/*
 * Control path, for the kernel log: the session opened by pid (comm) now
 * holds module (never "kernel") through its probes in function, which
 * keep the module from being unloaded (held), or holds it no longer (held
 * false; function is then the last one it traced there).
 */
void	kinst_os_log_hold(const char *module, int32_t pid, const char *comm,
	    const char *function, bool held);

/*
 * Text lock: held across the per-instruction checks and the writes so that
 * no other patcher of kernel text (kprobes, ftrace, jump labels, static
 * calls on Linux) can act in between.  Nests inside the control lock.
 */
void	kinst_os_text_lock(void);
void	kinst_os_text_unlock(void);

/*
 * Per-instruction checks, text lock held: exception fixup, text another
 * patcher owns, blacklists.  A KINST_R_* reason or KINST_R_NONE.
 */
int	kinst_os_insn_check(const struct kinst_func *f, uint64_t addr,
	    uint32_t len);

/* Write one byte of kernel text (text lock held); no cross-CPU sync yet. */
void	kinst_os_text_write(uint64_t addr, uint8_t byte);

/*
 * Make every CPU see the writes so far and serialize its instruction stream.
 * It must return even if a CPU runs a stale translation of the old bytes
 * with interrupts off (an emulator's): the Linux shim stores the bytes
 * written since the last sync again while a CPU is slow to answer.
 */
void	kinst_os_text_sync(void);

/*
 * Return only when no CPU can still be inside the trap handler for a probe
 * removed before the call, nor inside any trampoline of one (trampolines
 * run with interrupts off: one interrupt taken with IF set on every CPU is
 * the proof).
 */
/*
 * Jump optimization (kinst_control.c), only where the shim enabled it
 * (kinst_ctl_jump_enable):
 * - kinst_os_jopt_check: kinst_os_insn_check() for an instruction of a
 *   function being qualified, plus what only the live kernel knows about
 *   hidden control flow: KINST_JOPT_INDIRECT (kinst_isa.h) for a jump to
 *   a retpoline thunk, or for any instruction of a function with a patched
 *   branch site whose target the decoder cannot see (a jump label).
 * - kinst_os_sync_tasks: returns when no thread can still be executing, or
 *   be preempted or interrupted, at an instruction boundary inside a jump
 *   window whose int3 was written before the call, nor inside a detour no
 *   longer reachable before the call (Linux: synchronize_rcu_tasks() and
 *   synchronize_rcu(); docs/engine.md).  May sleep for a long time.
 */
int	kinst_os_jopt_check(const struct kinst_func *f, uint64_t addr,
	    const uint8_t *insn, uint32_t len);
void	kinst_os_sync_tasks(void);
void	kinst_os_quiesce(void);

/*
 * Trampoline memory: size bytes, within +-2 GiB of all kernel text,
 * returned writable (*addr = the address code will run at).  Seal makes it
 * read-only and executable (0 or non-zero); free releases it (sealed or not).
 */
void	*kinst_os_tramp_alloc(size_t size, uint64_t *addr);
int	kinst_os_tramp_seal(void *mem, size_t size);
void	kinst_os_tramp_free(void *mem, size_t size);
/*
 * A block no site ever held (never published: no breakpoint led to it, no
 * CPU ran it), given back at once.  FreeBSD retires what kinst_os_tramp_free
 * gets (a thread may sleep in a trampoline) and counts it against its cap;
 * this one it unmaps, so arms that patch nothing (a shared instruction,
 * EEXIST, every instruction refused) cost nothing.
 */
void	kinst_os_tramp_unused(void *mem, size_t size);

#endif /* !KINST_OS_H */
