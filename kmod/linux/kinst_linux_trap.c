/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux, trap context: the #BP hook (the die notifier), the jump
 * handler, and every kinst_os.h function they reach.  Nothing here may be
 * kprobed or traced (NOKPROBE_SYMBOL below); the control path is
 * kinst_linux_os.c.
 *
 * Kernel interfaces this file relies on (Linux 6.1, x86-64):
 *
 * - The int3 path (arch/x86/kernel/traps.c): exc_int3() handles text_poke_bp
 *   sites first (poke_int3_handler), then, for a kernel-mode int3, enters
 *   NMI-like context (irqentry_nmi_enter, interrupts stay off) and calls
 *   do_int3(): kgdb, then kprobe_int3_handler(), then
 *   notify_die(DIE_INT3, ...).  If nobody returns NOTIFY_STOP the kernel
 *   die()s.  The die_args' regs->ip is the address AFTER the int3 byte.
 *   kprobes is asked first, so a kprobe and a kinst probe can never claim the
 *   same int3; kinst refuses addresses kprobes owns (get_kprobe).
 * - The entry code leaves a gap below the interrupted stack for kernel-mode
 *   int3 (entry_64.S, idtentry for X86_TRAP_BP: the iret frame is copied six
 *   words lower), which is what int3_emulate_push() relies on.  Emulated
 *   pushes (call, pushf) store at most 16 bytes below the interrupted %rsp;
 *   kinst_os_write_stack() refuses anything else.
 * - Stacks (KINST_ARM_STACK): the kernel's own unwinder (ORC on Debian's
 *   kernel, which has no frame pointers), through the GPL exports
 *   __unwind_start(), unwind_next_frame() and unwind_get_return_address()
 *   (asm/unwind.h; stack_trace_save_regs() is not exported).  Started from
 *   regs, __unwind_start() skips the regs frame itself, so the first
 *   address it yields is the probed function's return address; this is
 *   also how arch_stack_walk() uses it.  The ORC unwinder is the one perf
 *   runs from NMIs: no lock, no allocation, every stack read checked
 *   against the known stacks (get_stack_info).  Its functions are reached
 *   by direct calls from kinst_os_stack(), so the trap-path walk
 *   (kinst_linux_trappath.c) refuses them.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/kdebug.h>
#include <linux/notifier.h>
#include <linux/uaccess.h>
#include <linux/irq_work.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/cpu.h>
#include <linux/string.h>
#include <linux/extable.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/fs.h>
#include <asm/ptrace.h>
#include <asm/asm.h>
#include <asm/processor.h>
#include <asm/vsyscall.h>
#include <asm/page.h>
#include <asm/unwind.h>
#include <asm/unaligned.h>
#include <linux/jump_label.h>
#include <asm/irqflags.h>

#include "kinst_linux.h"
#include "kinst_kaddr.h"
#include "kinst_stack.h"
#include "kinst_isa.h"

/* ---- trap context ---- */

/* The interrupted %rsp of the #BP being handled on this CPU (emulated pushes). */
static DEFINE_PER_CPU(uint64_t, kinst_trap_sp);
/* Hits whose emulation faulted (the kernel then reports the int3). */
static DEFINE_PER_CPU(uint64_t, kinst_emu_faults);

#define	KINST_STACK_ROOM	16	/* bytes below the interrupted %rsp */

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
 * kinst's own no-fault load: one byte, with an entry in this module's
 * exception table (__ex_table, searched by search_module_extables() from
 * fixup_exception()).  EX_TYPE_EFAULT_REG (6.1: EX_TYPE_IMM_REG with
 * -EFAULT as the immediate) makes the fixup store -EFAULT in err and
 * resume at 2:, after the load; it warns about nothing (unlike
 * EX_TYPE_UACCESS on a #GP).  The fault path it takes from trap context
 * (exc_page_fault -> do_kern_addr_fault -> ... -> kernelmode_fixup_or_oops
 * -> fixup_exception) is in the derived trap-path set (root
 * exc_page_fault, kinst_linux_trappath.c), so no probe can sit on it.
 */
static __always_inline int
kinst_load_byte(const uint8_t *p, uint8_t *v)
{
	uint8_t b = 0;
	int err = 0;

	asm volatile("1:	movb (%[p]), %[b]\n"
	    "2:\n"
	    _ASM_EXTABLE_TYPE_REG(1b, 2b, EX_TYPE_EFAULT_REG, %[err])
	    : [b] "+q" (b), [err] "+r" (err)
	    : [p] "r" (p)
	    : "memory");
	*v = b;
	return (err);
}

/*
 * Is [addr, addr + len) something kinst_load_byte() may touch?  Kernel
 * half, canonical, not the vsyscall page (common/kinst_kaddr.h says why).
 */
static __always_inline bool
kinst_read_ok(uint64_t addr, size_t len)
{
	return (kinst_kaddr_ok(addr, len, TASK_SIZE_MAX + PAGE_SIZE,
	    boot_cpu_data.x86_virt_bits, VSYSCALL_ADDR, PAGE_SIZE) != 0);
}

/*
 * Trap context: no call out of this function (the loads are inline, the
 * range check is inline arithmetic).  Byte by byte: a read that crosses
 * into an unmapped page fails there, whatever the alignment.
 */
int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)addr;
	uint8_t *d = buf;
	size_t i;

	if (!kinst_read_ok(addr, len))
		return (-1);
	for (i = 0; i < len; i++)
		if (kinst_load_byte(p + i, &d[i]) != 0)
			return (-1);
	return (0);
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

static void
kinst_regs_in(const struct pt_regs *r, struct kinst_regs *k)
{
	k->gpr[KINST_RAX] = r->ax;
	k->gpr[KINST_RCX] = r->cx;
	k->gpr[KINST_RDX] = r->dx;
	k->gpr[KINST_RBX] = r->bx;
	k->gpr[KINST_RSP] = r->sp;
	k->gpr[KINST_RBP] = r->bp;
	k->gpr[KINST_RSI] = r->si;
	k->gpr[KINST_RDI] = r->di;
	k->gpr[KINST_R8] = r->r8;
	k->gpr[KINST_R9] = r->r9;
	k->gpr[KINST_R10] = r->r10;
	k->gpr[KINST_R11] = r->r11;
	k->gpr[KINST_R12] = r->r12;
	k->gpr[KINST_R13] = r->r13;
	k->gpr[KINST_R14] = r->r14;
	k->gpr[KINST_R15] = r->r15;
	k->rip = r->ip - 1;		/* the int3 byte = the probed instruction */
	k->rflags = r->flags;
	k->cs = (uint16_t)r->cs;
	k->ss = (uint16_t)r->ss;
	k->_pad = 0;
}

static void
kinst_regs_out(const struct kinst_regs *k, struct pt_regs *r)
{
	r->ax = k->gpr[KINST_RAX];
	r->cx = k->gpr[KINST_RCX];
	r->dx = k->gpr[KINST_RDX];
	r->bx = k->gpr[KINST_RBX];
	r->sp = k->gpr[KINST_RSP];
	r->bp = k->gpr[KINST_RBP];
	r->si = k->gpr[KINST_RSI];
	r->di = k->gpr[KINST_RDI];
	r->r8 = k->gpr[KINST_R8];
	r->r9 = k->gpr[KINST_R9];
	r->r10 = k->gpr[KINST_R10];
	r->r11 = k->gpr[KINST_R11];
	r->r12 = k->gpr[KINST_R12];
	r->r13 = k->gpr[KINST_R13];
	r->r14 = k->gpr[KINST_R14];
	r->r15 = k->gpr[KINST_R15];
	r->ip = k->rip;
	r->flags = k->rflags;
}

/*
 * The callers at a hit (common/kinst_os.h).  osctx is the trap's pt_regs
 * (NULL for a jump probe's hit: then they are built from the registers);
 * the unwinder gets a copy whose ip is the probed instruction (the trap's
 * ip is one byte past the int3: after a one-byte instruction such as
 * push %rbp, ORC would describe the frame after it, not before).
 */
uint32_t
kinst_os_stack(const struct kinst_regs *kr, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	struct unwind_state state;
	struct pt_regs regs;
	unsigned long addr;
	uint32_t n, steps;

	(void)offset;
	*truncated = false;
	if (osctx != NULL) {
		regs = *(const struct pt_regs *)osctx;
	} else {
		/* A jump probe's hit: the registers are all there is. */
		memset(&regs, 0, sizeof(regs));
		kinst_regs_out(kr, &regs);
		regs.cs = kr->cs;
		regs.ss = kr->ss;
	}
	regs.ip = kr->rip;
	n = 0;
	/* Bounded: one unwinder step per stored address, plus one. */
	steps = 0;
	for (unwind_start(&state, current, &regs, NULL);
	    !unwind_done(&state) && steps <= max;
	    unwind_next_frame(&state), steps++) {
		addr = unwind_get_return_address(&state);
		if (addr == 0)
			break;
		if (n == max) {
			*truncated = true;
			break;
		}
		pcs[n++] = addr;
	}
	return (n);
}

/*
 * The die notifier.  Runs in NMI-like context with interrupts off, on any
 * CPU, possibly nested (an NMI handler hitting a probe while this CPU is in
 * here already).  Takes no lock, does not sleep or allocate; everything it
 * calls is in this module or on kinst_excluded[].
 */
static int
kinst_die_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	struct die_args *args = data;
	struct pt_regs *regs;
	struct kinst_regs kr;

	if (val != DIE_INT3)
		return (NOTIFY_DONE);
	regs = args->regs;
	if (regs == NULL || user_mode(regs))
		return (NOTIFY_DONE);

	kinst_regs_in(regs, &kr);
	/*
	 * Interrupts are off: this CPU's slots stay this CPU's.  A fault of
	 * an emulation is counted and the kernel reports the int3.
	 */
	if (!kinst_engine_trap(kinst_engine, &kr, regs,
	    raw_cpu_ptr(&kinst_trap_sp), raw_cpu_ptr(&kinst_emu_faults)))
		return (NOTIFY_DONE);
	kinst_regs_out(&kr, regs);
	return (NOTIFY_STOP);
}
NOKPROBE_SYMBOL(kinst_die_notify);
NOKPROBE_SYMBOL(kinst_regs_in);
NOKPROBE_SYMBOL(kinst_regs_out);
NOKPROBE_SYMBOL(kinst_os_cpu);
NOKPROBE_SYMBOL(kinst_os_now_ns);
NOKPROBE_SYMBOL(kinst_os_thread);
NOKPROBE_SYMBOL(kinst_os_thread_key);
NOKPROBE_SYMBOL(kinst_os_read);
NOKPROBE_SYMBOL(kinst_os_write_stack);
NOKPROBE_SYMBOL(kinst_engine_hit);
NOKPROBE_SYMBOL(kinst_engine_hit_ctx);
NOKPROBE_SYMBOL(kinst_engine_trap);
NOKPROBE_SYMBOL(kinst_os_stack);
NOKPROBE_SYMBOL(kinst_stack_record);
NOKPROBE_SYMBOL(kinst_stack_capture);
NOKPROBE_SYMBOL(kinst_ptable_lookup);
NOKPROBE_SYMBOL(kinst_ring_put);
NOKPROBE_SYMBOL(kinst_ring_count_drop);
NOKPROBE_SYMBOL(kinst_ring_room);
NOKPROBE_SYMBOL(kinst_ring_reached);
NOKPROBE_SYMBOL(kinst_emulate);
NOKPROBE_SYMBOL(kinst_cond);
NOKPROBE_SYMBOL(kinst_effective_addr);

/*
 * A jump probe's detour (common/x86/kinst_detour.h) calls this with the
 * register file as it was at the probed instruction, in the probed code's
 * own context: whatever its preemption state, interrupts as they were, on
 * its own stack (the detour's frame and ours lie below its %rsp, in memory
 * an interrupt there would use too: kernels have no red zone).  Probe
 * context is made here: interrupts off, so no preemption, no migration
 * (the engine's per-CPU state) and no interrupt in between; an NMI may
 * still nest, and the engine's guards handle that as for int3 hits.  The
 * record is the one the int3 path makes (no osctx: kinst_os_stack builds
 * the unwinder's pt_regs from the registers when a stack is wanted); the
 * detour then runs the window.
 */
void
kinst_linux_jhandler(void *arg, struct kinst_regs *kr)
{
	unsigned long flags;

	(void)arg;
	flags = arch_local_irq_save();
	(void)kinst_engine_jhit(kinst_engine, kr, NULL);
	arch_local_irq_restore(flags);
}
NOKPROBE_SYMBOL(kinst_linux_jhandler);
NOKPROBE_SYMBOL(kinst_engine_jhit);

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

struct notifier_block kinst_linux_die_nb = {
	.notifier_call = kinst_die_notify,
	/*
	 * Highest priority: an int3 at one of our addresses is ours (we
	 * refuse addresses anyone else patches), and the chain is short-cut
	 * with NOTIFY_STOP.  kprobes does not use the chain for int3.
	 */
	.priority = INT_MAX,
};

/*
 * The functions of this module that the trap path enters other than by a
 * direct call from kinst_die_notify: the engine's memory callbacks are
 * called through pointers.  Roots of the trap-path walk
 * (kinst_linux_trappath.c), which follows them into the kernel.
 */
void *const kinst_linux_trap_roots[] = {
	kinst_die_notify, kinst_linux_jhandler, kinst_os_read,
	kinst_os_write_stack,
	kinst_os_now_ns, kinst_os_thread, kinst_os_cpu, kinst_os_wake_deferred,
};
const size_t kinst_linux_ntrap_roots = ARRAY_SIZE(kinst_linux_trap_roots);

unsigned long
kinst_linux_emu_faults(void)
{
	unsigned long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += per_cpu(kinst_emu_faults, cpu);
	return (n);
}

/* For the debugfs test hook kinst/read (kinst_linux_os.c): the range check. */
bool
kinst_linux_read_ok(uint64_t addr, size_t len)
{
	return (kinst_read_ok(addr, len));
}
