/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux, trap context, the part that is the same on every
 * architecture: kinst_os.h's trap-half functions that read the current
 * task, the clock and user memory, the bounded stack writes of emulated
 * pushes, the deferred wake-up, and the engine's functions that must never
 * be kprobed.  The breakpoint hook itself, the kernel-memory reads and the
 * stack walk are the architecture's (kinst_linux_x86.c,
 * kinst_linux_arm64.c).  Nothing here may be kprobed or traced
 * (NOKPROBE_SYMBOL below); the control path is kinst_linux_os.c.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include <linux/irq_work.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/string.h>

#include "kinst_linux.h"
#include "kinst_linux_arch.h"
#include "kinst_stack.h"
#include "kinst_isa.h"

/* ---- trap context ---- */

/* The interrupted stack pointer of the breakpoint being handled on this CPU. */
DEFINE_PER_CPU(uint64_t, kinst_trap_sp);
/* Hits whose emulation faulted (the kernel then reports the breakpoint). */
DEFINE_PER_CPU(uint64_t, kinst_emu_faults);

#define	KINST_STACK_ROOM	16	/* bytes below the interrupted stack pointer */

uint32_t
kinst_os_cpu(void)
{
	return (raw_smp_processor_id());
}

uint64_t
kinst_os_now_ns(void)
{
	return (ktime_get_mono_fast_ns());
}

/*
 * KINST_TS_LOCAL_CLOCK: the scheduler clock of this CPU, as perf reads it
 * (notrace, NMI-safe, lockless; x86: the TSC where sched_clock is stable,
 * else sched_clock_cpu()'s per-CPU TSC kept within a tick of the last
 * tick's global time; arm64: sched_clock(), the architected counter).
 */
uint64_t
kinst_os_local_ns(void)
{
	return (local_clock());
}

void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	struct task_struct *t = current;

	BUILD_BUG_ON(sizeof(t->comm) != KINST_COMM_LEN);
	*pid = t->tgid;
	*tid = t->pid;
	__builtin_memcpy(comm, t->comm, KINST_COMM_LEN);
	comm[KINST_COMM_LEN - 1] = '\0';
}

void
kinst_os_thread_key(uint64_t key[2])
{
	struct task_struct *t = current;

	/* No later task has both: start_time is the task's birth, in ns. */
	key[0] = (uint64_t)(uintptr_t)t;
	key[1] = t->start_time;
}

/*
 * A probe program's user load.  copy_from_user_nofault() (mm/maccess.c,
 * exported since 5.8) checks access_ok() and nmi_uaccess_okay() (the CR3
 * loaded is current's mm), then copies with page faults disabled: a fault
 * goes to the exception fixup (faulthandler_disabled() in
 * do_user_addr_fault), never to handle_mm_fault(), so it neither sleeps
 * nor faults a page in, with interrupts off and in NMI-like context (the
 * same routine bpf_probe_read_user() uses from kprobes).  A kernel thread
 * has no user memory to read.
 */
int
kinst_os_read_user(uint64_t addr, void *buf, size_t len)
{
	if (current->mm == NULL)
		return (-1);
	return (copy_from_user_nofault(buf,
	    (const void __user *)(uintptr_t)addr, len) != 0 ? -1 : 0);
}

int
kinst_os_write_stack(uint64_t addr, const void *buf, size_t len)
{
	unsigned long sp = this_cpu_read(kinst_trap_sp);
	volatile uint8_t *d = (volatile uint8_t *)(uintptr_t)addr;
	const uint8_t *s = buf;

	if (sp == 0 || len > KINST_STACK_ROOM ||
	    addr < sp - KINST_STACK_ROOM || addr + len > sp)
		return (-1);
	while (len-- > 0)
		*d++ = *s++;
	return (0);
}


/*
 * Trap context: a record was written; wake readers later, never here.
 *
 * Only a CPU that is online queues the irq_work.  A CPU going offline
 * (Linux 6.1, x86) runs, in this order and all on itself:
 *
 *   take_cpu_down() (stop_machine, interrupts off, every other online CPU
 *   spinning in the stopper) -> __cpu_disable() = native_cpu_disable() ->
 *   cpu_disable_common() -> remove_cpu_from_maps() -> set_cpu_online(cpu,
 *   false), then apic_soft_disable(); -> the CPUHP "dying" callbacks, among
 *   them smpcfd_dying_cpu(), whose irq_work_run() runs this CPU's irq_work
 *   lists a last time -> the idle loop: cpuhp_report_idle_dead(),
 *   arch_cpu_idle_dead() -> native_play_dead() -> play_dead_common() ->
 *   mwait/hlt_play_dead(), never to return.
 *
 * (Checked on Debian's 6.1.0-57 live text: take_cpu_down calls
 * smp_ops.cpu_disable, then __cpuhp_invoke_callback_range; native_cpu_disable
 * calls cpu_disable_common, which calls set_cpu_online, then
 * apic_soft_disable; smpcfd_dying_cpu calls irq_work_run.)  cpu_online() of
 * the current CPU compiles to one bt on __cpu_online_mask: no call.
 *
 * So a hit after that last flush (cpuhp_report_idle_dead, play_dead_common
 * and everything else the dying CPU runs from there on) happens with the
 * CPU's online bit already clear: an irq_work it queued would sit on a
 * list nobody runs, with IRQ_WORK_BUSY set, and irq_work_sync() in
 * kinst_release() would spin forever (and irq_work_queue() from any other
 * CPU would fail to claim it: no reader would be woken again).  The bit is
 * written only by the CPU itself (cleared above, set again in
 * start_secondary() before interrupts are enabled), so reading our own bit
 * here, in trap context, is exact: no other CPU can change it under us.
 * If it is set, the work we queue goes on the list of a CPU that either
 * stays online (the self-IPI runs it) or goes down later, and then the
 * dying flush above runs it before the bit can be cleared.  If it is
 * clear, we queue nothing: the record stays in the ring, where a blocked
 * read(2) finds it within KINST_READ_RECHECK, poll() at the next wake-up
 * (the next hit on an online CPU, or kinst_cpu_dead(), kinst_linux.c,
 * once the CPU is dead).  A disarm never overlaps that window: the control
 * lock holds off CPU hotplug (kinst_os_ctl_lock, kinst_linux_os.c).  Hence
 * no kinst irq_work is left on the list of a CPU that is not online,
 * nothing of ours runs when a CPU comes back (no stale
 * work pointing at a freed file), and irq_work_sync() waits only for work
 * that an online CPU will run.
 */
void
kinst_os_wake_deferred(struct kinst_session *s)
{
	struct kinst_file *kf = s->os_priv;

	if (!cpu_online(raw_smp_processor_id()))
		return;
	/* Order the ring's head store before the load of "waiting". */
	smp_mb();
	if (atomic_read(&kf->waiting) != 0)
		irq_work_queue(&kf->work);
}
NOKPROBE_SYMBOL(kinst_os_wake_deferred);

unsigned long
kinst_linux_percpu_sum(uint64_t __percpu *v)
{
	unsigned long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *per_cpu_ptr(v, cpu);
	return (n);
}

unsigned long
kinst_linux_emu_faults(void)
{
	return (kinst_linux_percpu_sum(&kinst_emu_faults));
}
/*
 * The functions of this module that the trap path enters other than by a
 * direct call from the architecture's hook (kinst_linux_arch_trap_roots):
 * the engine's memory callbacks and the clock, thread and wake-up ones,
 * called through pointers.  Roots of the trap-path walk
 * (kinst_linux_trappath.c), which follows them into the kernel.
 */
void *const kinst_linux_trap_roots[] = {
	kinst_os_read, kinst_os_write_stack, kinst_os_now_ns, kinst_os_local_ns,
	kinst_os_thread, kinst_os_cpu, kinst_os_wake_deferred,
};
const size_t kinst_linux_ntrap_roots = ARRAY_SIZE(kinst_linux_trap_roots);

NOKPROBE_SYMBOL(kinst_os_cpu);
NOKPROBE_SYMBOL(kinst_os_now_ns);
NOKPROBE_SYMBOL(kinst_os_local_ns);
NOKPROBE_SYMBOL(kinst_os_thread);
NOKPROBE_SYMBOL(kinst_os_thread_key);
NOKPROBE_SYMBOL(kinst_os_write_stack);
NOKPROBE_SYMBOL(kinst_engine_hit);
NOKPROBE_SYMBOL(kinst_engine_hit_ctx);
NOKPROBE_SYMBOL(kinst_engine_trap);
NOKPROBE_SYMBOL(kinst_stack_record);
NOKPROBE_SYMBOL(kinst_stack_capture);
NOKPROBE_SYMBOL(kinst_ptable_lookup);
NOKPROBE_SYMBOL(kinst_ring_put);
NOKPROBE_SYMBOL(kinst_ring_count_drop);
NOKPROBE_SYMBOL(kinst_ring_room);
NOKPROBE_SYMBOL(kinst_ring_reached);
NOKPROBE_SYMBOL(kinst_emulate);
