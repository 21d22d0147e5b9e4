/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: the exclusion sets derived from the live kernel.
 *
 * A probe on a function that the #BP path itself runs recurses: the int3
 * re-enters the int3 path before (or inside) kinst's handler, without bound
 * (a hang, or a #DF from stack overflow).  A probe on code a secondary CPU
 * runs before it can take a #BP triple-faults the machine.  Names alone
 * (kinst_excluded[] in kinst_linux_os.c) cannot keep up with the kernel:
 * which functions these paths reach depends on the configuration, the
 * compiler's inlining and the paravirt/alternatives/static-call patching
 * done at boot.  So at load, this file walks the LIVE text, with the
 * engine's decoder (the instruction set's kinst_func_exits(), through
 * kinst_isa.h), from a few roots along
 * every direct call, tail jump and conditional tail jump that leaves a
 * function, with function bounds from kallsyms, and keeps the closure in a
 * sorted table of address ranges that kinst_os_func_check() searches at arm
 * time (control path only; nothing here runs in trap context).
 *
 * Class "trap path" (KINST_R_TRAP_PATH).  Roots and why:
 *
 * - exc_int3: the kernel-mode #BP path, exc_int3 -> irqentry_nmi_enter ->
 *   do_int3 (inlined or not) -> kgdb_ll_trap, kprobe_int3_handler ->
 *   notify_die -> atomic_notifier_call_chain -> rcu_read_lock/unlock
 *   (__rcu_read_lock/__rcu_read_unlock with PREEMPT_RCU) and
 *   notifier_call_chain -> irqentry_nmi_exit.  These run BEFORE kinst's
 *   notifier: a probe there recurses without ever reaching kinst's handler,
 *   so no guard inside the handler can stop it; only exclusion does.
 * - The die notifiers that run before kinst's (the chain is walked in
 *   priority order; kprobes' kprobe_exceptions_notify has kinst's priority
 *   and was registered first): the one indirect call of the path that can
 *   be resolved, so it is, from die_chain itself.
 * - kinst_die_notify: kinst's handler, and through the module's own code
 *   (walked, not listed: the module is refused as a whole anyway) every
 *   kernel function it calls (ktime_get_mono_fast_ns, irq_work_queue, ...),
 *   through a veneer where the module has one (arm64: the module's PLT,
 *   kinst_linux_arch_veneer()).
 * - What those reach through a pointer that is fixed once the system runs:
 *   the current clocksource's read function (ktime_get_mono_fast_ns) and
 *   the APIC driver's IPI functions (irq_work_queue's self-IPI).
 * - exc_page_fault: kinst_os_read()'s no-fault load (an exception-table
 *   entry in the module's own asm) may fault on a kernel address; the
 *   fault path to the exception fixup then runs inside the handler.
 *
 * Where the walk stops (kinst_trap_cut[]): code that runs only when the
 * trap came from user mode (do_int3_user and the user entry/exit work),
 * when nobody handled it or the kernel is failing (die, oops, panic,
 * printk and WARN reporting, page_fault_oops), with a debugger attached
 * (kgdb_handle_exception), for user-address faults (do_user_addr_fault,
 * signal delivery) or when the interrupted context had interrupts enabled
 * (the preemption at irqentry_exit: the handler runs with them off).  Those
 * functions are not refused by this table (the name list still refuses
 * die/oops/kgdb); over-approximating through them would swallow the
 * scheduler, the console drivers and the page allocator.  Leaves
 * (kinst_trap_leaf[]) are refused but not walked: rcu_read_unlock_special
 * is reached from __rcu_read_unlock on the path, but returns at once in NMI
 * context (in_nmi()), and the whole #BP path from irqentry_nmi_enter to
 * irqentry_nmi_exit is NMI context; its callees (wakeups, RCU boosting)
 * never run there.  The die notifiers before kinst's that return at once
 * for DIE_INT3 (hw_breakpoint_exceptions_notify: DIE_DEBUG only;
 * kprobe_exceptions_notify: NOTIFY_DONE on x86) are leaves too.
 *
 * Measured on Debian's 6.1 under QEMU: without the stop points the trap
 * path closure held 1836 functions (the user-mode do_trap branch and the
 * page-fault oops/signal paths pull in the page allocator, reclaim, the
 * block layer and the scheduler); with them, 103 trap-path and 198
 * bring-up functions are refused (the load message prints both counts).
 *
 * Class "cpu bring-up" (KINST_R_CPU_BRINGUP): a secondary CPU enters
 * secondary_startup_64 with a bring-up IDT that has no #BP handler and
 * loads the kernel's IDT in cpu_init_exception_handling(), called from
 * start_secondary(); an int3 before that is a triple fault.  After the IDT
 * load it is still not safe until rcu_cpu_starting(): RCU ignores a CPU it
 * does not know as online, so the notifier chain's rcu_read_lock() there
 * would not hold off unregister_die_notifier()'s grace period (kinst's
 * handler could be unloaded under it).  So the roots are secondary_startup_64
 * and startup_64 (head code, walked whole) and start_secondary, walked only
 * up to and including its call to rcu_cpu_starting; start_secondary itself
 * is refused whole.  Boot-only code (kernel_init, rest_init,
 * start_kernel) is refused as a leaf; .init text is freed after boot and
 * never resolves (kinst_os_func_resolve accepts only _stext.._etext).
 *
 * Class "cpu dead" (also KINST_R_CPU_BRINGUP, "cpu-dead" in debugfs): what
 * a CPU going offline runs after it reported its death (cpu_report_death)
 * and for as long as it stays down: smp_ops.play_dead (native_play_dead),
 * play_dead_common, cpu_report_death, tboot_shutdown, the mwait/hlt dead
 * loops, cpuidle_play_dead and the cpuidle driver's enter_dead
 * (acpi_idle_play_dead).  Everything the dying CPU runs before the report
 * is allowed: the control path holds off CPU hotplug while it writes text
 * and waits for quiescence (kinst_os_ctl_lock in kinst_linux_os.c explains
 * why that covers it), but no lock can cover a CPU that runs after the
 * hotplug operation is over.  idle_task_exit, which play_dead_common calls
 * before the report, stops this walk (kinst_dead_cut[]).
 *
 * Limits: indirect calls other than those resolved above (kprobes' handlers,
 * tracepoint and ftrace callbacks enabled later on a trap-path function, a
 * clocksource change after load) are not followed; kinst_excluded[] names
 * what is known to be reached that way.  Functions that only the stop
 * points reach are not refused.  A walk that meets an undecodable
 * instruction keeps the exits found before it and says so in the log.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kallsyms.h>
#include <linux/kdebug.h>
#include <linux/notifier.h>
#include <linux/clocksource.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/bsearch.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/string.h>

#include "kinst_linux.h"
#include "kinst_linux_arch.h"
#include "kinst_isa.h"

/* One function of a derived set. */
struct kinst_xrange {
	unsigned long	start;
	unsigned long	size;
	unsigned long	via;		/* the caller it was first reached from, 0: a root */
	uint8_t		reason;		/* KINST_R_TRAP_PATH / KINST_R_CPU_BRINGUP */
	uint8_t		flags;		/* KINST_XF_* */
};
#define	KINST_XF_LEAF	0x01	/* refused, callees not followed */
#define	KINST_XF_OWN	0x02	/* kinst's own code: walked, not listed */
#define	KINST_XF_WALKED	0x04
#define	KINST_XF_PREFIX	0x08	/* walk only up to the call to prefix_end */
#define	KINST_XF_ROOT	0x10
#define	KINST_XF_DEAD	0x20	/* class "cpu dead" (reason KINST_R_CPU_BRINGUP) */

#define	KINST_XMAX	16384	/* functions; the walk stops (and says so) beyond */

static struct kinst_xrange *kinst_xr;
static size_t kinst_nxr;
static size_t kinst_nxr_listed[KINST_R_COUNT];
static size_t kinst_nxr_dead;	/* of kinst_nxr_listed[KINST_R_CPU_BRINGUP] */
static unsigned long kinst_prefix_end;	/* rcu_cpu_starting */
static uint8_t *kinst_walkbuf;

/*
 * Stop points (see the comment at the top): not followed, not refused by
 * the table.  Names as kinst_name_listed() matches them.
 */
static const char *const kinst_trap_cut[] = {
	/* user entry/exit work */
	"irqentry_enter_from_user_mode", "irqentry_exit_to_user_mode",
	"exit_to_user_mode_prepare", "syscall_exit_to_user_mode*",
	/* nobody handled it, the kernel is failing */
	"die", "panic", "nmi_panic", "show_regs", "__show_regs", "show_stack",
	"show_trace_log_lvl", "dump_stack*",
	"_printk", "vprintk*", "_printk_deferred", "__dynamic_pr_debug",
	"__dynamic_*", "__warn",
	"__warn_printk", "warn_slowpath_fmt", "report_bug",
	"__stack_chk_fail", "__ubsan_handle_*", "__list_add_valid_or_report",
	"__list_del_entry_valid_or_report", "__list_valid_report",
	/* a debugger attached */
	"kgdb_handle_exception", "kgdb_cpu_enter",
	/* signals */
	"force_sig*", "send_sig*", "__send_signal*", "do_exit", "make_task_dead",
	/* preemption on return to an interrupts-enabled context */
	"preempt_schedule*", "irqentry_exit_cond_resched",
	"raw_irqentry_exit_cond_resched", "dynamic_irqentry_exit_cond_resched",
	"schedule", "__schedule",
};

/* Refused, callees not followed (see the comment at the top). */
static const char *const kinst_trap_leaf[] = {
	"rcu_read_unlock_special",
};

/*
 * Bring-up leaves: boot-only code, and rcu_cpu_starting, whose callees run
 * after it has made the CPU known to RCU (qsmaskinitnext).
 */
static const char *const kinst_boot_leaf[] = {
	"rcu_cpu_starting",
	"kernel_init", "rest_init", "start_kernel", "kernel_init_freeable",
};

/*
 * Stop points of the "cpu dead" walk only: what play_dead_common() calls
 * before cpu_report_death() runs while the control CPU still waits for the
 * report, under the hotplug lock that kinst's control path holds off
 * (kinst_os_ctl_lock); it is not refused, and its callees (switch_mm and
 * the rest of the scheduler) are not followed.
 */
static const char *const kinst_dead_cut[] = {
	"idle_task_exit",
};

/* Is name on list (the architecture's NULL-terminated list too)? */
static bool
kinst_listed2(const char *name, const char *const *list, size_t n,
    const char *const *arch)
{
	size_t k;

	if (kinst_name_listed(name, list, n))
		return (true);
	for (k = 0; arch != NULL && arch[k] != NULL; k++)
		if (kinst_name_listed(name, &arch[k], 1))
			return (true);
	return (false);
}

/* kallsyms' name for a (no module suffix); "" when unknown. */
static void
kinst_sym_name(unsigned long a, char buf[KSYM_SYMBOL_LEN])
{
	char *p;

	buf[0] = '\0';
	sprint_symbol_no_offset(buf, a);
	if ((p = strchr(buf, ' ')) != NULL)
		*p = '\0';
}

static bool
kinst_cut(const char *name)
{
	return (kinst_listed2(name, kinst_trap_cut,
	    ARRAY_SIZE(kinst_trap_cut), kinst_linux_arch_roots.cut));
}

/* The function containing a, or NULL; *added when new. */
static struct kinst_xrange *
kinst_xr_find(unsigned long start)
{
	size_t i;

	for (i = 0; i < kinst_nxr; i++)
		if (kinst_xr[i].start == start)
			return (&kinst_xr[i]);
	return (NULL);
}

static int kinst_xr_overflow;

/*
 * Add the function containing a (reason, flags), unless it is cut, outside
 * text, or already there.  A function already in the table with another
 * class keeps the first one (trap path is added first).
 */
static unsigned long kinst_walking;	/* the function being walked */

static struct kinst_xrange *
kinst_xr_add(unsigned long a, uint8_t reason, uint8_t flags)
{
	char name[KSYM_SYMBOL_LEN];
	struct kinst_xrange *x;
	unsigned long start, size;
	bool own;

	if (!kinst_linux_func_bounds(a, &start, &size, &own))
		return (NULL);
	if ((x = kinst_xr_find(start)) != NULL) {
		/* A leaf or prefix met again as an ordinary callee. */
		return (x);
	}
	kinst_sym_name(start, name);
	if (kinst_cut(name))
		return (NULL);
	if ((flags & KINST_XF_DEAD) != 0 && kinst_name_listed(name,
	    kinst_dead_cut, ARRAY_SIZE(kinst_dead_cut)))
		return (NULL);
	if (kinst_nxr >= KINST_XMAX) {
		kinst_xr_overflow = 1;
		return (NULL);
	}
	if (kinst_listed2(name, kinst_trap_leaf,
	    ARRAY_SIZE(kinst_trap_leaf), kinst_linux_arch_roots.leaf) ||
	    kinst_name_listed(name, kinst_boot_leaf,
	    ARRAY_SIZE(kinst_boot_leaf)))
		flags |= KINST_XF_LEAF;
	x = &kinst_xr[kinst_nxr++];
	x->start = start;
	x->size = size;
	x->reason = reason;
	x->via = (flags & KINST_XF_ROOT) != 0 ? 0 : kinst_walking;
	x->flags = flags | (own ? KINST_XF_OWN : 0);
	return (x);
}

struct kinst_walk {
	uint8_t		reason;
	uint8_t		inherit;	/* KINST_XF_DEAD of the function walked */
	bool		prefix;		/* stop after the call to kinst_prefix_end */
	unsigned long	partial;	/* functions not decoded to their end */
};

static int
kinst_walk_exit(void *arg, uint64_t from, uint64_t to, int kind)
{
	struct kinst_walk *w = arg;

	/* The ftrace site's call (if tracing is on) is ftrace's, not the code's. */
	if (kinst_linux_ftrace_site(from))
		return (0);
	(void)kinst_xr_add(kinst_linux_arch_veneer(to), w->reason,
	    w->inherit);
	if (w->prefix && kind == KINST_EXIT_CALL && to == kinst_prefix_end)
		return (1);
	return (0);
}

/* Walk every function of the table not walked yet (breadth first). */
static void
kinst_walk_all(struct kinst_walk *w)
{
	struct kinst_xrange *x;
	size_t i, len, done;

	for (i = 0; i < kinst_nxr; i++) {
		x = &kinst_xr[i];
		if ((x->flags & (KINST_XF_WALKED | KINST_XF_LEAF)) != 0)
			continue;
		x->flags |= KINST_XF_WALKED;
		len = min_t(unsigned long, x->size, KINST_FUNC_MAX);
		if (copy_from_kernel_nofault(kinst_walkbuf, (void *)x->start,
		    len) != 0) {
			w->partial++;
			continue;
		}
		w->reason = x->reason;
		w->inherit = x->flags & KINST_XF_DEAD;
		kinst_walking = x->start;
		w->prefix = (x->flags & KINST_XF_PREFIX) != 0;
		done = kinst_func_exits(kinst_walkbuf, len, x->start,
		    kinst_walk_exit, w);
		if (done < len && !w->prefix) {
			w->partial++;
			pr_info("kinst: trap-path walk: %pS decoded to +0x%zx of 0x%zx\n",
			    (void *)x->start, done, len);
		}
	}
}

static void
kinst_root_name(const char *name, uint8_t reason, uint8_t flags)
{
	unsigned long a = kinst_linux_lookup_name(name);

	if (a == 0) {
		pr_info("kinst: trap-path root %s not found\n", name);
		return;
	}
	(void)kinst_xr_add(a, reason, flags | KINST_XF_ROOT);
}

/*
 * A root by address (the hooks, the architecture's pointers, kinst's own
 * entries).  A full table is kinst_xr_add()'s to flag.
 */
static void
kinst_root_ptr(const void *p, uint8_t reason)
{
	uint8_t flags = KINST_XF_ROOT;

	if (reason == KINST_R_CPU_BRINGUP)	/* only "cpu dead" is by pointer */
		flags |= KINST_XF_DEAD;
	if (p != NULL)
		(void)kinst_xr_add((unsigned long)p, reason, flags);
}

/* Each name of a NULL-terminated list as a root. */
static void
kinst_root_names(const char *const *names, uint8_t reason, uint8_t flags)
{
	size_t i;

	for (i = 0; names != NULL && names[i] != NULL; i++)
		kinst_root_name(names[i], reason, flags);
}

/*
 * The current clocksource's read function: ktime_get_mono_fast_ns() calls
 * it through a pointer that is fixed once the system runs.
 */
static void
kinst_roots_clocksource(void)
{
	struct clocksource **cs;

	cs = (void *)kinst_linux_lookup_name("curr_clocksource");
	if (cs != NULL && *cs != NULL)
		kinst_root_ptr((*cs)->read, KINST_R_TRAP_PATH);
}

static int
kinst_xr_cmp(const void *a, const void *b)
{
	const struct kinst_xrange *x = a, *y = b;

	return (x->start < y->start ? -1 : x->start > y->start);
}

static int
kinst_xr_key(const void *key, const void *elt)
{
	unsigned long a = *(const unsigned long *)key;
	const struct kinst_xrange *x = elt;

	if (a < x->start)
		return (-1);
	return (a >= x->start + x->size ? 1 : 0);
}

/*
 * Which derived class refuses the function at a: KINST_R_TRAP_PATH,
 * KINST_R_CPU_BRINGUP, or KINST_R_NONE.  Control path.
 */
int
kinst_linux_derived_check(unsigned long a)
{
	const struct kinst_xrange *x;

	if (kinst_xr == NULL)
		return (KINST_R_NONE);
	x = bsearch(&a, kinst_xr, kinst_nxr, sizeof(*kinst_xr), kinst_xr_key);
	return (x != NULL ? x->reason : KINST_R_NONE);
}

/* debugfs kinst/excluded (kinst_linux_debugfs.c): the derived sets. */
int
kinst_linux_derived_show(struct seq_file *m)
{
	size_t i;

	seq_printf(m, "# kinst derived exclusions: %zu trap-path, %zu cpu-bringup, %zu cpu-dead functions\n"
	    "# class name size reached-from address\n",
	    kinst_nxr_listed[KINST_R_TRAP_PATH],
	    kinst_nxr_listed[KINST_R_CPU_BRINGUP] - kinst_nxr_dead,
	    kinst_nxr_dead);
	/* The stop points, so that a check of the set can use the same ones. */
	seq_puts(m, "# cut:");
	for (i = 0; i < ARRAY_SIZE(kinst_trap_cut); i++)
		seq_printf(m, " %s", kinst_trap_cut[i]);
	for (i = 0; kinst_linux_arch_roots.cut[i] != NULL; i++)
		seq_printf(m, " %s", kinst_linux_arch_roots.cut[i]);
	seq_puts(m, "\n# leaf:");
	for (i = 0; i < ARRAY_SIZE(kinst_trap_leaf); i++)
		seq_printf(m, " %s", kinst_trap_leaf[i]);
	for (i = 0; kinst_linux_arch_roots.leaf[i] != NULL; i++)
		seq_printf(m, " %s", kinst_linux_arch_roots.leaf[i]);
	for (i = 0; i < ARRAY_SIZE(kinst_boot_leaf); i++)
		seq_printf(m, " %s", kinst_boot_leaf[i]);
	seq_puts(m, "\n# dead-cut:");
	for (i = 0; i < ARRAY_SIZE(kinst_dead_cut); i++)
		seq_printf(m, " %s", kinst_dead_cut[i]);
	seq_printf(m, "\n# prefix: %s rcu_cpu_starting\n",
	    kinst_linux_arch_roots.prefix);
	for (i = 0; i < kinst_nxr; i++) {
		const struct kinst_xrange *x = &kinst_xr[i];

		if ((x->flags & KINST_XF_OWN) != 0)
			continue;
		seq_printf(m, "%s %ps 0x%lx %ps %016lx\n",
		    x->reason == KINST_R_TRAP_PATH ? "trap-path" :
		    (x->flags & KINST_XF_DEAD) != 0 ? "cpu-dead" : "cpu-bringup",
		    (void *)x->start, x->size, (void *)x->via, x->start);
	}
	return (0);
}

/* Drop kinst's own functions (walked only) and sort for bsearch. */
static void
kinst_xr_finish(void)
{
	size_t i, n;

	for (i = n = 0; i < kinst_nxr; i++) {
		if ((kinst_xr[i].flags & KINST_XF_OWN) != 0)
			continue;
		kinst_xr[n++] = kinst_xr[i];
		kinst_nxr_listed[kinst_xr[n - 1].reason]++;
		if ((kinst_xr[n - 1].flags & KINST_XF_DEAD) != 0)
			kinst_nxr_dead++;
	}
	kinst_nxr = n;
	sort(kinst_xr, kinst_nxr, sizeof(*kinst_xr), kinst_xr_cmp, NULL);
}

int
kinst_linux_derive(void)
{
	const struct kinst_linux_roots *ar = &kinst_linux_arch_roots;
	struct kinst_walk w = { 0 };
	size_t i, ntrap;

	kinst_xr = kvcalloc(KINST_XMAX, sizeof(*kinst_xr), GFP_KERNEL);
	kinst_walkbuf = kvmalloc(KINST_FUNC_MAX, GFP_KERNEL);
	if (kinst_xr == NULL || kinst_walkbuf == NULL) {
		kvfree(kinst_xr);
		kvfree(kinst_walkbuf);
		kinst_xr = NULL;
		kinst_walkbuf = NULL;
		return (-ENOMEM);
	}
	kinst_prefix_end = kinst_linux_lookup_name("rcu_cpu_starting");

	/* Trap path first: a function on both paths says "trap path". */
	kinst_root_names(ar->trap, KINST_R_TRAP_PATH, 0);
	for (i = 0; i < kinst_linux_arch_ntrap_roots; i++)
		kinst_root_ptr(kinst_linux_arch_trap_roots[i], KINST_R_TRAP_PATH);
	for (i = 0; i < kinst_linux_ntrap_roots; i++)
		kinst_root_ptr(kinst_linux_trap_roots[i], KINST_R_TRAP_PATH);
	kinst_linux_arch_root_ptrs(false, kinst_root_ptr);
	kinst_roots_clocksource();
	kinst_walk_all(&w);
	ntrap = kinst_nxr;

	if (kinst_prefix_end != 0)
		kinst_root_name(ar->prefix, KINST_R_CPU_BRINGUP,
		    KINST_XF_PREFIX);
	else
		pr_warn("kinst: rcu_cpu_starting not found: %s not walked\n",
		    ar->prefix);
	kinst_root_names(ar->bringup, KINST_R_CPU_BRINGUP, 0);
	kinst_root_name("kernel_init", KINST_R_CPU_BRINGUP, 0);
	kinst_root_name("rest_init", KINST_R_CPU_BRINGUP, 0);
	kinst_root_name("start_kernel", KINST_R_CPU_BRINGUP, 0);
	kinst_walk_all(&w);

	/* After bring-up: a function on both keeps "cpu-bringup". */
	kinst_linux_arch_root_ptrs(true, kinst_root_ptr);
	kinst_root_names(ar->dead, KINST_R_CPU_BRINGUP, KINST_XF_DEAD);
	kinst_walk_all(&w);

	kvfree(kinst_walkbuf);
	kinst_walkbuf = NULL;
	if (kinst_xr_overflow)
		pr_warn("kinst: derived exclusion set truncated at %d functions\n",
		    KINST_XMAX);
	pr_info("kinst: derived exclusions: %zu functions walked (%zu trap path), %lu not decoded to their end\n",
	    kinst_nxr, ntrap, w.partial);
	kinst_xr_finish();
	pr_info("kinst: refused as trap path: %zu functions; as cpu bring-up: %zu functions; as run by a dead cpu: %zu functions\n",
	    kinst_nxr_listed[KINST_R_TRAP_PATH],
	    kinst_nxr_listed[KINST_R_CPU_BRINGUP] - kinst_nxr_dead,
	    kinst_nxr_dead);

	return (0);
}

void
kinst_linux_derive_fini(void)
{
	kvfree(kinst_xr);
	kinst_xr = NULL;
	kinst_nxr = 0;
	kinst_nxr_dead = 0;
	memset(kinst_nxr_listed, 0, sizeof(kinst_nxr_listed));
}
