/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux on x86-64 (kinst_linux_arch.h): the #BP hook (the die
 * notifier), the jump handler, kernel-memory reads, the stack walk, the
 * text store and the trap-path walk's roots.  Nothing here may be kprobed
 * or traced (NOKPROBE_SYMBOL below) but the control-path primitives at the
 * end; the neutral trap-context functions are kinst_linux_trap.c.
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
#include <asm/sync_core.h>
#include <asm/apic.h>
#include <asm/smp.h>

#include "kinst_linux.h"
#include "kinst_linux_arch.h"
#include "kinst_kaddr.h"
#include "kinst_stack.h"
#include "kinst_isa.h"

DECLARE_PER_CPU(uint64_t, kinst_trap_sp);
DECLARE_PER_CPU(uint64_t, kinst_emu_faults);

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
	struct kinst_regs kr KINST_NOINIT;	/* kinst_regs_in() sets it all */

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
NOKPROBE_SYMBOL(kinst_os_read);
NOKPROBE_SYMBOL(kinst_os_stack);
NOKPROBE_SYMBOL(kinst_cond);
NOKPROBE_SYMBOL(kinst_effective_addr);

/* kinst_linux_jhandler()'s calls made with EFLAGS.AC set (kinst_linux_jump_ac). */
static DEFINE_PER_CPU(uint64_t, kinst_jump_ac);

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
	/* The detour's clac missed (debugfs kinst/jump says; a test checks). */
	if (unlikely((flags & X86_EFLAGS_AC) != 0))
		__this_cpu_inc(kinst_jump_ac);
	(void)kinst_engine_jhit(kinst_engine, kr, NULL);
	arch_local_irq_restore(flags);
}
NOKPROBE_SYMBOL(kinst_linux_jhandler);

unsigned long
kinst_linux_jump_ac(void)
{
	return (kinst_linux_percpu_sum(&kinst_jump_ac));
}

/*
 * SMAP: a window between stac and clac runs with AC set, and the detour
 * clears it for the handler (common/x86/kinst_detour.c).  Without the
 * feature bit (no SMAP, or booted with nosmap) AC means nothing to kernel
 * code, and the detours have no clac, which would be #UD there.
 */
uint32_t
kinst_linux_detour_flags(void)
{
	return (boot_cpu_has(X86_FEATURE_SMAP) ? KINST_DETOUR_SMAP : 0);
}
NOKPROBE_SYMBOL(kinst_engine_jhit);

static struct notifier_block kinst_linux_die_nb = {
	.notifier_call = kinst_die_notify,
	/*
	 * Highest priority: an int3 at one of our addresses is ours (we
	 * refuse addresses anyone else patches), and the chain is short-cut
	 * with NOTIFY_STOP.  kprobes does not use the chain for int3.
	 */
	.priority = INT_MAX,
};

/* The hooks: roots of the trap-path walk (kinst_linux_trappath.c). */
void *const kinst_linux_arch_trap_roots[] = {
	kinst_die_notify, kinst_linux_jhandler,
};
const size_t kinst_linux_arch_ntrap_roots =
    ARRAY_SIZE(kinst_linux_arch_trap_roots);

/* For the debugfs test hook kinst/read (kinst_linux_os.c): the range check. */
bool
kinst_linux_read_ok(uint64_t addr, size_t len)
{
	return (kinst_read_ok(addr, len));
}

/* ---- registration ---- */

int
kinst_linux_hook_register(void)
{
	return (register_die_notifier(&kinst_linux_die_nb));
}

void
kinst_linux_hook_unregister(void)
{
	/* atomic_notifier_chain_unregister() waits with synchronize_rcu(). */
	unregister_die_notifier(&kinst_linux_die_nb);
}

/* ---- control context ---- */

void
kinst_linux_text_store(uint64_t addr, const void *buf, size_t n)
{
	k_text_poke((void *)(uintptr_t)addr, buf, n);
}

/* x86-64 keeps instruction fetches coherent with stores: nothing to do. */
int
kinst_linux_tramp_sealed(void *mem, size_t size)
{
	(void)mem;
	(void)size;
	return (0);
}

void
kinst_linux_tramp_gone(void *mem, size_t size)
{
	(void)mem;
	(void)size;
}

/* The decoder's verdict is the whole of x86-64's. */
int
kinst_linux_arch_insn_check(const struct kinst_func *f, uint64_t addr)
{
	(void)f;
	(void)addr;
	return (KINST_R_NONE);
}

/*
 * The trap-path walk (kinst_linux_trappath.c, whose comment says why each
 * is there): the #BP and page-fault paths, their x86-64 stop points, and
 * the bring-up and dead-CPU code of x86-64.
 */
static const char *const kinst_x86_trap[] = {
	"exc_int3", "exc_page_fault", NULL,
};
static const char *const kinst_x86_cut[] = {
	/* user-mode #BP (do_int3_user may be inlined: do_trap) */
	"do_int3_user", "do_trap",
	"die_addr", "__die", "__die_*", "oops_*", "page_fault_oops",
	"no_context",
	/* mmiotrace active; KVM's async page faults are user mode only (6.1) */
	"kmmio_handler", "__kvm_handle_async_pf",
	/* user-address faults; is_prefetch runs for user faults or before an oops */
	"do_user_addr_fault", "is_prefetch", "print_vma_addr",
	/*
	 * A fault inside the handler is kinst_os_read()'s own load: an
	 * EX_TYPE_EFAULT_REG fixup, never load_unaligned_zeropad's (which
	 * decodes the faulting instruction).
	 */
	"ex_handler_zeropad",
	/*
	 * Bring-up: an incoming CPU caches microcode found in the initrd
	 * only at boot, before kinst can be loaded; later onlines use the
	 * cached copy (and the allocator behind this would be refused).
	 */
	"save_microcode_patch", "memdup_patch",
	"show_signal_msg",
	NULL,
};
static const char *const kinst_x86_leaf[] = {
	/* die notifiers before kinst's that return at once for DIE_INT3 */
	"hw_breakpoint_exceptions_notify", "kprobe_exceptions_notify",
	"x86_64_start_kernel", "x86_64_start_reservations",
	NULL,
};
static const char *const kinst_x86_bringup[] = {
	"secondary_startup_64", "startup_64", NULL,
};
static const char *const kinst_x86_dead[] = {
	"native_play_dead", "play_dead_common", "cpu_report_death",
	"acpi_idle_play_dead", NULL,
};
const struct kinst_linux_roots kinst_linux_arch_roots = {
	.trap = kinst_x86_trap,
	.cut = kinst_x86_cut,
	.leaf = kinst_x86_leaf,
	.prefix = "start_secondary",
	.bringup = kinst_x86_bringup,
	.dead = kinst_x86_dead,
};

/* The die notifiers that run before (and including) kinst's. */
static void
kinst_root_die_chain(void (*add)(const void *p, uint8_t reason))
{
	struct atomic_notifier_head *h;
	struct notifier_block *nb;
	const void *fn[16];
	unsigned long flags;
	int i, n = 0;

	h = (void *)kinst_linux_lookup_name("die_chain");
	if (h == NULL) {
		pr_info("kinst: die_chain not found; notifiers before kinst's not walked\n");
		return;
	}
	spin_lock_irqsave(&h->lock, flags);
	for (nb = rcu_dereference_raw(h->head); nb != NULL &&
	    nb != &kinst_linux_die_nb; nb = rcu_dereference_raw(nb->next))
		if (n < (int)ARRAY_SIZE(fn))
			fn[n++] = nb->notifier_call;
	spin_unlock_irqrestore(&h->lock, flags);
	/* Only the addresses were taken under the lock; walked after. */
	for (i = 0; i < n; i++)
		add(fn[i], KINST_R_TRAP_PATH);
}

/*
 * The clocksource is the trap-path walk's own; here, what x86-64 reaches
 * through pointers: the die notifiers before kinst's, the APIC driver's
 * IPI functions (irq_work_queue's self-IPI), and for a dead CPU
 * smp_ops.play_dead (native_play_dead on bare metal and under QEMU).
 */
void
kinst_linux_arch_root_ptrs(bool dead, void (*add)(const void *p,
    uint8_t reason))
{
	struct apic **ap;
	struct smp_ops *ops;

	if (dead) {
		ops = (void *)kinst_linux_lookup_name("smp_ops");
		if (ops != NULL)
			add((const void *)ops->play_dead, KINST_R_CPU_BRINGUP);
		return;
	}
	kinst_root_die_chain(add);
	ap = (void *)kinst_linux_lookup_name("apic");
	if (ap != NULL && *ap != NULL) {
		add((const void *)(*ap)->send_IPI_self, KINST_R_TRAP_PATH);
		add((const void *)(*ap)->send_IPI, KINST_R_TRAP_PATH);
		add((const void *)(*ap)->icr_write, KINST_R_TRAP_PATH);
		add((const void *)(*ap)->write, KINST_R_TRAP_PATH);
		add((const void *)(*ap)->read, KINST_R_TRAP_PATH);
		add((const void *)(*ap)->eoi_write, KINST_R_TRAP_PATH);
	}
}

/* A module's call reaches the kernel directly on x86-64 (rel32): no veneer. */
unsigned long
kinst_linux_arch_veneer(unsigned long a)
{
	return (a);
}
