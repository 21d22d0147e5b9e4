/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux on arm64 (kinst_linux_arch.h): the brk hooks, kernel-
 * memory reads, the frame-record stack walk, the text store, the
 * trampolines' registry and the trap-path walk's roots.  Nothing here may
 * be kprobed or traced (NOKPROBE_SYMBOL below) but the control-path
 * primitives.
 *
 * Kernel interfaces this file relies on (Linux 6.1, arm64):
 *
 * - A brk at EL1 (arch/arm64/kernel/entry-common.c, debug-monitors.c):
 *   el1h_64_sync_handler -> el1_dbg (arm64_enter_el1_dbg: NMI-like, every
 *   DAIF bit still masked as the exception set them) -> do_debug_exception
 *   -> brk_handler -> call_break_hook(), which walks kernel_break_hook (an
 *   RCU list) and calls the hook whose immediate matches the brk's
 *   (ESR's comment, masked by hook->mask).  regs->pc is the brk itself; a
 *   hook that returns DBG_HOOK_HANDLED resumes at regs->pc as it left it,
 *   any other return makes the kernel die ("BRK handler").
 *   register_kernel_break_hook()/unregister_kernel_break_hook() are not
 *   exported (kallsyms, kinst_linux_syms.c); unregistering waits with
 *   synchronize_rcu().
 * - kinst's immediates (common/arm64/kinst_a64_tramp.h): 0x4b0, the probe;
 *   0x4b4-0x4b7, the end of a trampoline's variant.  Linux 6.1's
 *   brk-imm.h uses none of them.
 * - For an exception from EL1, kernel_exit restores x0-x30, pc (ELR) and
 *   pstate (SPSR) from pt_regs but not sp: the emulator never writes sp
 *   (no emulated A64 instruction does), instructions that move sp run out
 *   of line.
 * - aarch64_insn_patch_text_nosync() writes one aligned word through the
 *   fixmap (patch_lock, interrupts off) and cleans and invalidates it to
 *   the PoU; the other CPUs' instruction streams are kinst_os_text_sync()'s
 *   (an IPI whose handler runs isb, kinst_linux_os.c).
 * - __get_kernel_nofault() is inline: an ldrb with an exception-table
 *   entry (EX_TYPE_KACCESS_ERR_ZERO); a fault on it goes el1_abort ->
 *   do_mem_abort -> do_translation_fault/do_page_fault (kprobes text) ->
 *   __do_kernel_fault -> fixup_exception, on the trap-path walk's roots.
 * - Stacks: frame records (CONFIG_FRAME_POINTER, Debian's), whose return
 *   addresses carry a pointer-authentication code when
 *   CONFIG_ARM64_PTR_AUTH_KERNEL is on (paciasp signs x30 before the stp):
 *   the walk strips it.
 * - Pointer authentication of emulated braa/blraa/retaa: not offered
 *   (kinst_os_pac_ops() is NULL): Linux 6.1 builds the kernel with
 *   paciasp/autiasp and plain ret, never with the combined forms, so those
 *   are refused (undecodable) rather than emulated with the kernel's keys.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/mm.h>
#include <linux/clocksource.h>
#include <asm/debug-monitors.h>
#include <asm/ptrace.h>
#include <asm/cacheflush.h>
#include <asm/memory.h>
#include <asm/unaligned.h>
#include <asm/cpufeature.h>

#include "kinst_linux.h"
#include "kinst_linux_arch.h"
#include "kinst_kaddr.h"
#include "kinst_stack.h"
#include "kinst_isa.h"

DECLARE_PER_CPU(uint64_t, kinst_trap_sp);
DECLARE_PER_CPU(uint64_t, kinst_emu_faults);

/* ---- trap context ---- */

/*
 * Is [addr, addr + len) something kinst_os_read() may touch?  The upper
 * (TTBR1) half only: user addresses are the program's user loads'.
 */
static __always_inline bool
kinst_read_ok(uint64_t addr, size_t len)
{
	return (kinst_kaddr_ok(addr, len, 0, vabits_actual + 1, 0, 0) != 0);
}

/* Trap context: inline loads only, byte by byte (kinst_linux_x86.c says why). */
int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)addr;
	uint8_t *d = buf;
	size_t i;

	if (!kinst_read_ok(addr, len))
		return (-1);
	for (i = 0; i < len; i++) {
		__get_kernel_nofault(&d[i], p + i, uint8_t, fault);
	}
	return (0);
fault:
	return (-1);
}

static void
kinst_regs_in(const struct pt_regs *r, struct kinst_regs *k)
{
	BUILD_BUG_ON(sizeof(k->x) != sizeof(r->regs));
	memcpy(k->x, r->regs, sizeof(k->x));
	k->sp = r->sp;
	k->pc = r->pc;			/* the brk: the probed instruction */
	k->pstate = r->pstate;
}

static void
kinst_regs_out(const struct kinst_regs *k, struct pt_regs *r)
{
	memcpy(r->regs, k->x, sizeof(k->x));
	r->pc = k->pc;
	r->pstate = k->pstate;
	/* sp: never written by the emulator, never restored for EL1. */
}

/* The frame records' reads: kinst_os_read(). */
static int
kinst_stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	return (kinst_os_read(addr, buf, len));
}

/* A kernel return address without its pointer-authentication code. */
#define	KINST_A64_PAC_STRIP	(~0ull << vabits_actual)

/*
 * Has the function whose instruction at pc is offset bytes in made its
 * frame record yet (an add x29, sp, #n -- mov x29, sp is n 0 -- before
 * pc)?  Until it has, x29 is still the caller's record and x30 the return
 * address (a function that calls nothing keeps it there throughout).  The
 * words before pc are read back to KINST_A64_PROLOGUE of them (a prologue,
 * shrink-wrapped or not, is nearer the entry than that); a probe further
 * in counts as made.
 */
#define	KINST_A64_PROLOGUE	64
static bool
kinst_frame_made(uint64_t pc, uint32_t offset)
{
	const uint32_t *f = (const uint32_t *)(uintptr_t)(pc - offset);
	uint32_t n = offset / 4, i, w;

	if (n > KINST_A64_PROLOGUE || (pc & 3) != 0 ||
	    !kinst_read_ok(pc - offset, offset))
		return (true);
	for (i = 0; i < n; i++) {
		__get_kernel_nofault(&w, f + i, uint32_t, fault);
		w = le32_to_cpu((__force __le32)w);	/* A64 words are little-endian */
		if ((w & 0xff8003ffu) == 0x910003fdu)
			return (true);
	}
	return (false);
fault:
	return (true);
}

/*
 * The callers at a hit, from the frame records (common/arm64's
 * kinst_fpwalk): bounded by the THREAD_SIZE-aligned stack the interrupted
 * sp lies in (task and IRQ stacks are both so aligned on arm64); before
 * the function has made its frame record, its caller is still in x30.
 */
uint32_t
kinst_os_stack(const struct kinst_regs *kr, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	const struct kinst_mem_ops m = { .read = kinst_stack_read };
	struct kinst_fpwalk w;

	(void)osctx;
	memset(&w, 0, sizeof(w));
	w.fp = kr->x[29];
	w.lr = kr->x[30];
	w.lo = kr->sp;
	w.hi = round_up(kr->sp + 1, THREAD_SIZE);
	w.pc_min = MODULES_VADDR;
	w.at_entry = !kinst_frame_made(kr->pc, offset);
	w.strip = KINST_A64_PAC_STRIP;
	return (kinst_fpwalk(&w, &m, pcs, max, truncated));
}

/*
 * The registry of trampoline memory: a resume brk is kinst's only inside a
 * block kinst allocated, sealed and has not freed.  Written by the control
 * path (kinst_linux_tramp_sealed before the block's probes are published,
 * kinst_linux_tramp_gone after their quiescence), read racily here.
 */
#define	KINST_A64_BLOCKS	1024
static struct {
	unsigned long	start, end;	/* start 0: a free slot */
} kinst_blocks[KINST_A64_BLOCKS];
static unsigned int kinst_blocks_hi;	/* slots ever used: the scan's bound */

/*
 * A slot is filled end first, then start, and emptied start first: a
 * reader that sees a start sees its end (or, emptying, 0: no match).
 */
static bool
kinst_in_tramp(unsigned long pc)
{
	unsigned int i, n = READ_ONCE(kinst_blocks_hi);
	unsigned long s;

	for (i = 0; i < n && i < KINST_A64_BLOCKS; i++) {
		s = READ_ONCE(kinst_blocks[i].start);
		if (s == 0 || pc < s)
			continue;
		smp_rmb();
		if (pc < READ_ONCE(kinst_blocks[i].end))
			return (true);
	}
	return (false);
}

/* The probe's brk (0x4b0): the engine records and runs the instruction. */
static int
kinst_brk_probe(struct pt_regs *regs, unsigned long esr)
{
	struct kinst_regs kr;
	uint8_t cur[4];

	(void)esr;
	if (user_mode(regs))
		return (DBG_HOOK_ERROR);
	kinst_regs_in(regs, &kr);
	if (kinst_engine_trap(kinst_engine, &kr, regs,
	    raw_cpu_ptr(&kinst_trap_sp), raw_cpu_ptr(&kinst_emu_faults))) {
		kinst_regs_out(&kr, regs);
		return (DBG_HOOK_HANDLED);
	}
	/*
	 * Not a probe of the table.  A CPU that still ran a brk another CPU
	 * had already replaced (a translating emulator's stale code; the
	 * probe's disarm then left the table) finds the original word there:
	 * run it again, as kprobes does on x86-64 for an int3 that is gone.
	 */
	if (kinst_os_read(regs->pc, cur, sizeof(cur)) == 0 &&
	    kinst_a64_word(cur) != KINST_BP_WORD)
		return (DBG_HOOK_HANDLED);
	return (DBG_HOOK_ERROR);
}

/* The end of a trampoline's variant (0x4b4 + k): back to the text. */
static int
kinst_brk_resume(struct pt_regs *regs, unsigned long esr)
{
	struct kinst_a64_regs a;
	uint64_t tramp, back;
	uint32_t word;

	if (user_mode(regs) || !kinst_in_tramp(regs->pc))
		return (DBG_HOOK_ERROR);
	tramp = regs->pc & ~(uint64_t)(KINST_A64_TRAMP_SIZE - 1);
	if (kinst_os_read(tramp + KINST_A64_TRAMP_BACK, &back,
	    sizeof(back)) != 0)
		return (DBG_HOOK_ERROR);
	word = KINST_A64_BRK(esr & 0xffff);
	a.pc = regs->pc;
	a.pstate = regs->pstate;
	if (kinst_a64_tramp_resume(&a, tramp, word, back) != 0)
		return (DBG_HOOK_ERROR);
	regs->pc = a.pc;
	regs->pstate = a.pstate;
	return (DBG_HOOK_HANDLED);
}
NOKPROBE_SYMBOL(kinst_brk_probe);
NOKPROBE_SYMBOL(kinst_brk_resume);
NOKPROBE_SYMBOL(kinst_in_tramp);
NOKPROBE_SYMBOL(kinst_regs_in);
NOKPROBE_SYMBOL(kinst_regs_out);
NOKPROBE_SYMBOL(kinst_os_read);
NOKPROBE_SYMBOL(kinst_os_stack);
NOKPROBE_SYMBOL(kinst_stack_read);
NOKPROBE_SYMBOL(kinst_frame_made);
NOKPROBE_SYMBOL(kinst_fpwalk);
NOKPROBE_SYMBOL(kinst_a64_emulate);
NOKPROBE_SYMBOL(kinst_a64_tramp_enter);
NOKPROBE_SYMBOL(kinst_a64_tramp_resume);

static struct break_hook kinst_hook_probe = {
	.fn = kinst_brk_probe,
	.imm = KINST_A64_BRK_PROBE,
};
static struct break_hook kinst_hook_resume = {
	.fn = kinst_brk_resume,
	.imm = KINST_A64_BRK_RESUME,
	.mask = KINST_A64_TRAMP_VARIANTS - 1,
};

/* No pointer authentication for the emulator (see the top). */
const struct kinst_a64_pac_ops *
kinst_os_pac_ops(void)
{
	return (NULL);
}

/* The hooks: roots of the trap-path walk (kinst_linux_trappath.c). */
void *const kinst_linux_arch_trap_roots[] = {
	kinst_brk_probe, kinst_brk_resume,
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
	k_register_kernel_break_hook(&kinst_hook_probe);
	k_register_kernel_break_hook(&kinst_hook_resume);
	return (0);
}

void
kinst_linux_hook_unregister(void)
{
	/* Each waits with synchronize_rcu(). */
	k_unregister_kernel_break_hook(&kinst_hook_resume);
	k_unregister_kernel_break_hook(&kinst_hook_probe);
}

/* ---- control context ---- */

/* Every aligned word that [addr, addr + n) touches, with those bytes replaced. */
void
kinst_linux_text_store(uint64_t addr, const void *buf, size_t n)
{
	const uint8_t *s = buf;
	uint64_t w, a;
	uint8_t word[4];
	size_t k;

	for (w = addr & ~3ull; w < addr + n; w += 4) {
		memcpy(word, (const void *)(uintptr_t)w, 4);
		for (k = 0; k < 4; k++) {
			a = w + k;
			if (a >= addr && a < addr + n)
				word[k] = s[a - addr];
		}
		(void)k_patch_text_word((void *)(uintptr_t)w,
		    get_unaligned_le32(word));
	}
}

/*
 * A block of trampolines, written, about to be sealed: cleaned and
 * invalidated to the PoU, and registered for the resume hook.  Fails when
 * the registry is full.
 */
int
kinst_linux_tramp_sealed(void *mem, size_t size)
{
	unsigned long s = (unsigned long)mem;
	size_t i;

	flush_icache_range(s, s + size);
	for (i = 0; i < KINST_A64_BLOCKS; i++)
		if (kinst_blocks[i].start == 0) {
			WRITE_ONCE(kinst_blocks[i].end, s + size);
			smp_wmb();
			WRITE_ONCE(kinst_blocks[i].start, s);
			if (i >= kinst_blocks_hi)
				WRITE_ONCE(kinst_blocks_hi, i + 1);
			return (0);
		}
	pr_warn_ratelimited("kinst: more than %d trampoline blocks\n",
	    KINST_A64_BLOCKS);
	return (-1);
}

/* A block no CPU can be in any more (after quiescence), before its free. */
void
kinst_linux_tramp_gone(void *mem, size_t size)
{
	unsigned long s = (unsigned long)mem;
	size_t i;

	(void)size;
	for (i = 0; i < KINST_A64_BLOCKS; i++)
		if (kinst_blocks[i].start == s) {
			WRITE_ONCE(kinst_blocks[i].start, 0);
			smp_wmb();
			WRITE_ONCE(kinst_blocks[i].end, 0);
		}
}

/*
 * The exclusive-sequence rule (common/arm64/kinst_a64.h) needs the words
 * before the instruction, which kinst_isa_prepare() is not given: checked
 * here, before anything is armed, over the live text of the function.
 * Then the landing pads, where the kernel enforces BTI.
 */
int
kinst_linux_arch_insn_check(const struct kinst_func *f, uint64_t addr)
{
	uint32_t words[KINST_A64_EXCL_SPAN + 1];
	struct kinst_a64_insn d;
	uint64_t first;
	size_t n, i;
	uint8_t b[4];

	first = addr - f->addr > 4 * KINST_A64_EXCL_SPAN ?
	    addr - 4 * KINST_A64_EXCL_SPAN : f->addr;
	n = (size_t)(addr - first) / 4 + 1;
	for (i = 0; i < n; i++) {
		if (copy_from_kernel_nofault(b,
		    (const void *)(uintptr_t)(first + 4 * i), 4) != 0)
			return (KINST_R_UNDECODABLE);
		words[i] = get_unaligned_le32(b);
	}
	if (kinst_a64_exclusive(words, n, n - 1))
		return (KINST_R_EXCLUSIVE);
	/*
	 * A kernel that enforces BTI on its own text (CONFIG_ARM64_BTI_KERNEL
	 * on a CPU with BTI): an indirect branch to a brk where a landing pad
	 * was raises a Branch Target exception before the brk (x86-64's
	 * endbr under IBT, the same reason).  Debian's 6.1 does not.
	 */
	kinst_a64_decode(words[n - 1], &d);
	if (IS_ENABLED(CONFIG_ARM64_BTI_KERNEL) && system_supports_bti() &&
	    d.landing)
		return (KINST_R_ENDBR);
	return (KINST_R_NONE);
}

/*
 * The trap-path walk (kinst_linux_trappath.c): the brk path's functions
 * that are ordinary text (el1h_64_sync_handler and el1_dbg are noinstr,
 * do_debug_exception, brk_handler and call_break_hook are on the kprobe
 * blacklist, all refused anyway, but their callees are walked), the fault
 * path of kinst_os_read()'s loads, the IPI that irq_work_queue() raises;
 * the bring-up and dead-CPU code of arm64.
 */
static const char *const kinst_a64_trap[] = {
	"el1h_64_sync_handler", "do_debug_exception", "brk_handler",
	"call_break_hook", "do_mem_abort", "do_translation_fault",
	"do_bad_area", "__do_kernel_fault",
	"fixup_exception", "arch_irq_work_raise", "__ipi_send_mask",
	"gic_ipi_send_mask", "smp_cross_call",
	/*
	 * The clocksource (ktime_get_mono_fast_ns reads it through a
	 * pointer; curr_clocksource is data, not in kallsyms here).
	 */
	"arch_counter_read", "arch_counter_get_cntvct",
	"arch_counter_get_cntpct", "arch_counter_get_cntvct_stable",
	"arch_counter_get_cntpct_stable", "arch_counter_read_cc", NULL,
};
static const char *const kinst_a64_cut[] = {
	/* other exceptions than a brk or a kernel-address fault */
	"el1_undef", "do_undefinstr", "el1_bti", "do_el1_bti", "el1_fpac",
	"do_el1_fpac", "el1_pc", "do_sp_pc_abort", "el1_inv",
	"__panic_unhandled", "bad_mode", "arm64_notify_die",
	"do_el1_undef", "do_alignment_fault", "do_sea", "do_tag_check_fault",
	"do_bad", "die_kernel_fault", "show_pte", "arm64_force_sig_*",
	/*
	 * A user address's fault (do_translation_fault calls it for TTBR0
	 * addresses; kinst_os_read() reads the TTBR1 half only, and a
	 * permission fault on a kernel address dies there).
	 */
	"do_page_fault", "handle_mm_fault", "lock_mm_and_find_vma",
	"__do_page_fault",
	"mmap_read_*", "do_page_fault_*", "__kprobes_*", "kprobe_*",
	"uprobe_*", "kgdb_*", "early_brk64", "bug_handler", "reserved_fault_handler",
	"kasan_handler", "ubsan_handler", "cfi_handler",
	NULL,
};
static const char *const kinst_a64_leaf[] = {
	NULL,
};
static const char *const kinst_a64_bringup[] = {
	"secondary_entry", "secondary_startup", "__secondary_switched", NULL,
};
static const char *const kinst_a64_dead[] = {
	"cpu_die", "cpu_report_death", "cpu_psci_cpu_die", "psci_cpu_off",
	"__invoke_psci_fn_hvc", "__invoke_psci_fn_smc", NULL,
};
const struct kinst_linux_roots kinst_linux_arch_roots = {
	.trap = kinst_a64_trap,
	.cut = kinst_a64_cut,
	.leaf = kinst_a64_leaf,
	.prefix = "secondary_start_kernel",
	.bringup = kinst_a64_bringup,
	.dead = kinst_a64_dead,
};

void
kinst_linux_arch_root_ptrs(bool dead, void (*add)(const void *p,
    uint8_t reason))
{
	(void)dead;
	(void)add;
}

/*
 * A module's PLT veneer: where a branch to a really goes.  An arm64
 * module's call to a kernel function more than 128 MiB away goes through
 * an entry of the module's PLT, "adrp x16, page; add x16, x16, #lo12;
 * br x16" (the kernel's module-plts.c).  KASLR puts the module that far
 * on most boots, and not on some.  kallsyms knows no symbol for the PLT
 * and places it in the module function before it, so the walk took that
 * function for the callee: what kinst's handler calls through the PLT
 * (ktime_get_mono_fast_ns, memcpy, copy_from_user_nofault and what they
 * reach) was refused or not as the module landed, and a function
 * kinst's control path calls could come in instead (try_to_wake_up, in
 * one CI run).  Any adrp/add/br of one register at a is taken for a
 * veneer: no kernel function starts so (each starts with its ftrace
 * site), and the sequence jumps to the address it computes either way.
 */
unsigned long
kinst_linux_arch_veneer(unsigned long a)
{
	struct kinst_a64_insn d;
	uint8_t b[12];
	uint32_t add, br;
	unsigned int r;

	if (copy_from_kernel_nofault(b, (const void *)a, sizeof(b)) != 0)
		return (a);
	kinst_a64_decode(get_unaligned_le32(b), &d);
	if (d.emul != KINST_A64_EM_ADRP)
		return (a);
	r = d.rt;
	add = get_unaligned_le32(b + 4);	/* add Xr, Xr, #imm12 (LSL 0) */
	br = get_unaligned_le32(b + 8);		/* br Xr */
	if ((add & 0xffc00000) != 0x91000000 || (add & 0x1f) != r ||
	    ((add >> 5) & 0x1f) != r ||
	    (br & 0xfffffc1f) != 0xd61f0000 || ((br >> 5) & 0x1f) != r)
		return (a);
	return ((unsigned long)kinst_a64_target(&d, a) + ((add >> 10) & 0xfff));
}
