/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux, control context: the control-path half of
 * common/kinst_os.h (function look-up and checks, text patching,
 * trampolines, quiescence).  Thread context only; the trap path is
 * kinst_linux_trap.c, the kernel's unexported symbols kinst_linux_syms.c.
 *
 * Kernel interfaces this file relies on (Linux 6.1, x86-64):
 *
 * - text_poke() (must hold text_mutex) writes through a temporary mapping
 *   of the local CPU only (no IPI); the synchronization after it is kinst's
 *   own (kinst_os_text_sync, "Text writes" below).  Every other kernel
 *   text patcher (kprobes' arm/disarm, ftrace, jump labels, static calls)
 *   writes under text_mutex too, so kinst's checks and its writes, all done
 *   under text_mutex, cannot interleave with theirs.
 * - module_alloc() returns PAGE_KERNEL (RW, NX) memory in the module area,
 *   which is within +-2 GiB of the kernel image and of every module.
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
#include <linux/seq_file.h>
#include <linux/fs.h>
#include <asm/ptrace.h>
#include <asm/page.h>
#include <asm/unaligned.h>
#include <linux/jump_label.h>
#include <asm/irqflags.h>

#include "kinst_linux.h"
#include "kinst_linux_arch.h"
#include "kinst_kaddr.h"
#include "kinst_stack.h"
#include "kinst_isa.h"

static unsigned long kinst_jl_start, kinst_jl_stop;	/* the kernel's __jump_table */

static bool kinst_optimize_on = true;
module_param_named(optimize, kinst_optimize_on, bool, 0444);
MODULE_PARM_DESC(optimize, "jump-optimize the probes that qualify (default: "
    "yes; kinstctl --no-optimize asks it per request)");

/*
 * Text that never runs kinst probes: entry code, noinstr, the kprobes and
 * cpuidle sections, the retpoline/return thunks and static call
 * trampolines.  [start, end) symbol pairs.
 */
static const char *const kinst_sections[][2] = {
	{ "__entry_text_start", "__entry_text_end" },
	{ "__irqentry_text_start", "__irqentry_text_end" },
	{ "__softirqentry_text_start", "__softirqentry_text_end" },
	{ "__noinstr_text_start", "__noinstr_text_end" },
	{ "__kprobes_text_start", "__kprobes_text_end" },
	{ "__cpuidle_text_start", "__cpuidle_text_end" },
	{ "__indirect_thunk_start", "__indirect_thunk_end" },
	{ "__static_call_text_start", "__static_call_text_end" },
};
/* The refusal (class) of each section above, in order. */
static const uint8_t kinst_section_reason[] = {
	KINST_R_EXCL_ENTRY, KINST_R_EXCL_ENTRY, KINST_R_EXCL_ENTRY,
	KINST_R_EXCL_NOINSTR, KINST_R_EXCL_BLACKLIST, KINST_R_EXCL_IDLE,
	KINST_R_EXCL_THUNK, KINST_R_EXCL_THUNK,
};
#define	KINST_NSECTIONS	ARRAY_SIZE(kinst_sections)
_Static_assert(ARRAY_SIZE(kinst_section_reason) == KINST_NSECTIONS,
    "a reason per section");
static unsigned long kinst_sect[KINST_NSECTIONS][2];

/*
 * Functions kinst refuses by name (kinst_name_listed(): "x*" is a prefix).
 * What is here and why:
 *
 * - The #BP path before and around our notifier: do_int3, the kprobes int3
 *   handler and get_kprobe (also on the kprobe blacklist), the die notifier
 *   chain (notify_die, atomic_notifier_call_chain, notifier_call_chain),
 *   die/oops reporting, kgdb/kdb.
 * - What our handler calls: ktime_get_mono_fast_ns and local_clock (with
 *   sched_clock and what it reads through), the page-fault fixup
 *   path that kinst_os_read()'s own no-fault load may take (fixup_exception,
 *   the ex_handler_* helpers, the exception table search), irq_work_queue and
 *   the self-IPI it raises (arch_irq_work_raise and the APIC write
 *   functions), and memcpy/memset/memmove, which the compiler may call for
 *   structure copies.  The engine is in this module, refused as a whole.
 * - Kernel text patching and the cross-CPU synchronization kinst itself
 *   uses while arming and disarming: text_poke*, __text_poke, do_sync_core,
 *   on_each_cpu/smp_call_function* and the IPI handler side
 *   (generic_smp_call_function*, flush_smp_call_function*); on arm64
 *   aarch64_insn_patch_text_nosync, the fixmap write under it and the
 *   cache maintenance after it.
 * Entry and noinstr code is refused by section (kinst_sections) and
 * NOKPROBE_SYMBOL functions by the kprobe blacklist.  Each list, section
 * and the blacklist has its own refusal, "excluded-function (CLASS)", so
 * that a user learns which one refused a function and why.
 */
static const char *const kinst_excl_breakpoint[] = {
	"do_int3", "do_int3_user", "exc_int3", "poke_int3_handler",
	"kprobe_*", "get_kprobe", "kprobes_*", "arch_*kprobe*",
	"notify_die", "atomic_notifier_call_chain", "notifier_call_chain",
	"register_die_notifier", "unregister_die_notifier", "do_trap",
};
static const char *const kinst_excl_debugger[] = {
	"die", "die_addr", "__die", "__die_*", "oops_*",
	"kgdb_*", "kdb_*", "dbg_*",
};
static const char *const kinst_excl_handler[] = {
	"ktime_get_mono_fast_ns", "ktime_get_raw_fast_ns",
	"local_clock", "sched_clock", "sched_clock_cpu", "sched_clock_local",
	"native_sched_clock",
	"irq_work_*", "__irq_work_*", "arch_irq_work_raise",
	"x2apic_*", "__x2apic_*", "native_apic_*", "default_send_IPI_*",
	"__default_send_IPI_*", "native_x2apic_*",
	"memcpy", "__memcpy", "memset", "__memset", "memmove", "__memmove",
	"memcpy_*", "memset_*",
	"__unwind_start", "unwind_*", "orc_*", "__orc_*", "get_stack_info*",
};
static const char *const kinst_excl_fault[] = {
	"fixup_exception", "ex_handler_*", "search_exception_tables",
	"search_extable", "search_kernel_exception_table",
	"search_module_extables", "cmp_ex_search", "bsearch",
	"kernelmode_fixup_or_oops",
};
static const char *const kinst_excl_patching[] = {
	"text_poke*", "__text_poke", "do_sync_core", "sync_core*",
	"on_each_cpu*", "smp_call_function*", "generic_smp_call_function*",
	"flush_smp_call_function*", "__flush_smp_call_function_queue",
	/* arm64's (kinst_linux_arm64.c): the word write and its cache upkeep */
	"aarch64_insn_patch_text*", "aarch64_insn_write*",
	"__aarch64_insn_write", "patch_map", "patch_unmap",
	"caches_clean_inval_pou*", "icache_inval_*", "dcache_clean_pou",
	"__flush_icache_range", "flush_icache_range",
};
/* The lists above, each with its refusal (class). */
static const struct {
	const char *const *names;
	size_t	n;
	int	reason;
} kinst_excluded[] = {
	{ kinst_excl_breakpoint, ARRAY_SIZE(kinst_excl_breakpoint),
	    KINST_R_EXCL_BREAKPOINT },
	{ kinst_excl_debugger, ARRAY_SIZE(kinst_excl_debugger),
	    KINST_R_EXCL_DEBUGGER },
	{ kinst_excl_handler, ARRAY_SIZE(kinst_excl_handler),
	    KINST_R_EXCL_HANDLER },
	{ kinst_excl_fault, ARRAY_SIZE(kinst_excl_fault), KINST_R_EXCL_FAULT },
	{ kinst_excl_patching, ARRAY_SIZE(kinst_excl_patching),
	    KINST_R_EXCL_PATCHING },
};

/* The refusal of a name on one of the lists, or KINST_R_NONE. */
static int
kinst_excluded_reason(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinst_excluded); i++)
		if (kinst_name_listed(name, kinst_excluded[i].names,
		    kinst_excluded[i].n))
			return (kinst_excluded[i].reason);
	return (KINST_R_NONE);
}

/*
 * At load, after kinst_linux_syms_init(): the sections kinst refuses and
 * the kernel's jump table (either may be missing: nothing is refused by
 * section, no jump-label target is known).
 */
void
kinst_linux_os_init(void)
{
	size_t i;

	for (i = 0; i < KINST_NSECTIONS; i++) {
		kinst_sect[i][0] = kinst_linux_lookup_name(kinst_sections[i][0]);
		kinst_sect[i][1] = kinst_linux_lookup_name(kinst_sections[i][1]);
	}
	kinst_jl_start = kinst_linux_lookup_name("__start___jump_table");
	kinst_jl_stop = kinst_linux_lookup_name("__stop___jump_table");
}

/* For debugfs kinst/textsync (kinst_os_text_sync; written with the control lock held). */
static uint64_t kinst_sync_count, kinst_sync_slow, kinst_sync_restores,
    kinst_sync_bytes, kinst_sync_lost;
static uint64_t kinst_sync_max_us;
/* kinst_os_quiesce(): waits that found a CPU slow (1 ms), and stores. */
static uint64_t kinst_quiesce_slow, kinst_quiesce_restores;

/*
 * debugfs kinst/textsync: the text synchronizations since load
 * (kinst_os_text_sync), those that found a CPU slow to answer (1 ms), how
 * often the written bytes were stored again meanwhile and how many bytes,
 * batches that overflowed the write log, and the longest synchronization;
 * then the quiescences that found a CPU slow and how often they stored the
 * last batch again.  Read racily.
 */
int
kinst_linux_textsync_show(struct seq_file *m)
{
	seq_printf(m, "syncs %llu\nslow %llu\nrestores %llu\nbytes_restored %llu\n"
	    "log_overflows %llu\nmax_us %llu\nquiesce_slow %llu\n"
	    "quiesce_restores %llu\n",
	    (unsigned long long)READ_ONCE(kinst_sync_count),
	    (unsigned long long)READ_ONCE(kinst_sync_slow),
	    (unsigned long long)READ_ONCE(kinst_sync_restores),
	    (unsigned long long)READ_ONCE(kinst_sync_bytes),
	    (unsigned long long)READ_ONCE(kinst_sync_lost),
	    (unsigned long long)READ_ONCE(kinst_sync_max_us),
	    (unsigned long long)READ_ONCE(kinst_quiesce_slow),
	    (unsigned long long)READ_ONCE(kinst_quiesce_restores));
	return (0);
}

/* For debugfs kinst/jump: whether jump optimization is on. */
bool
kinst_linux_jump_enabled(void)
{
	return (KINST_LINUX_JUMPS && k_synchronize_rcu_tasks != NULL &&
	    kinst_optimize_on);
}

/* ---- control path ---- */

/*
 * The control lock, and why it holds off CPU hotplug.
 *
 * Quiescence (kinst_os_quiesce) and text synchronization
 * (kinst_os_text_sync) are IPIs to every CPU, waited for (kinst_ipi_wait),
 * which reach the CPUs in cpu_online_mask.  A CPU
 * going offline (Linux 6.1, x86) clears its online bit in take_cpu_down()
 * -> __cpu_disable() and then still runs kernel code on its own: the CPUHP
 * "dying" callbacks, the idle loop's cpuhp_report_idle_dead() ->
 * rcu_report_dead() and the IPI that completes the control CPU's wait,
 * arch_cpu_idle_dead() -> native_play_dead() -> play_dead_common() ->
 * idle_task_exit(), cpu_report_death().  A disarm in that window would
 * not wait for it: a trampoline it is executing could be freed under it,
 * a probe structure it is reading in the handler could be freed, and its
 * instruction stream would not be serialized after the text write.
 *
 * The whole of that window lies inside one cpus_write_lock() section of
 * the control CPU: _cpu_down() takes the lock, takedown_cpu() waits in
 * wait_for_ap_thread() for cpuhp_report_idle_dead()'s completion and then
 * __cpu_die() -> native_cpu_die() -> cpu_wait_death() for
 * cpu_report_death(), and only after the remaining teardown callbacks is
 * the lock released.  Bringing a CPU up is one such section too (_cpu_up).
 * So every kinst control operation (arm, disarm, close, unload: their
 * text writes, table changes, synchronizations and quiescence, and the
 * freeing after them) holds cpus_read_lock() for its whole length: while
 * it runs, every CPU is either online (reached by on_each_cpu) or past
 * cpu_report_death(), running only the dead loop.  That loop
 * (native_play_dead()'s tail: mwait/hlt play_dead, tboot_shutdown,
 * cpuidle_play_dead) runs after the lock is released, for as long as the
 * CPU is down, so no lock can cover it: it is refused instead, derived
 * from the live text (kinst_linux_trappath.c, class "cpu dead", reported
 * as "cpu bring-up").  Limit: cpu_wait_death() gives up after 5 s ("CPU
 * n didn't die"); the kernel then proceeds with a CPU in an unknown state,
 * and so does kinst.
 *
 * Lock order (lockdep is off in Debian's kernel, so it is written here):
 *
 *   kinst_gate (read, ioctls)  ->  cpu_hotplug_lock (read)  ->
 *   kinst_ctl_mutex  ->  text_mutex
 *   kinst_files_lock  ->  cpu_hotplug_lock (read) ...  (kinst_stop_files)
 *
 * cpu_hotplug_lock before text_mutex is the kernel's own order (kprobes'
 * arm_kprobe, static_key_enable, static_call_update take cpus_read_lock()
 * and then text_mutex).  The hotplug writer calls kinst back only through
 * kinst_cpu_dead() (kinst_linux.c), which takes no lock, so no kinst lock
 * is ever wanted under cpu_hotplug_lock held for writing.  Nothing the
 * control path calls takes cpus_read_lock() again (a second read lock
 * blocks behind a waiting writer): text_poke, on_each_cpu, module_alloc,
 * set_memory_*, vmalloc and the kallsyms, kprobes, ftrace, jump label and
 * static call look-ups do not.
 */
static DEFINE_MUTEX(kinst_ctl_mutex);

void
kinst_os_ctl_lock(void)
{
	cpus_read_lock();
	mutex_lock(&kinst_ctl_mutex);
}

void
kinst_os_ctl_unlock(void)
{
	mutex_unlock(&kinst_ctl_mutex);
	cpus_read_unlock();
}

void *
kinst_os_alloc(size_t size)
{
	return (kvzalloc(size == 0 ? 1 : size, GFP_KERNEL));
}

void
kinst_os_free(void *p, size_t size)
{
	(void)size;
	kvfree(p);
}

/* Ring memory (kinst_dev.h): mappable with remap_vmalloc_range(). */
void *
kinst_os_ring_alloc(size_t size, void **handle)
{
	*handle = NULL;
	return (vmalloc_user(size));
}

void
kinst_os_ring_free(void *p, size_t size, void *handle)
{
	(void)size;
	(void)handle;
	vfree(p);
}

/*
 * The last name kallsyms_lookup_name() found in the core kernel's text.
 * Linux 6.1's lookup by name is a linear walk over every symbol (about
 * 10 ms under QEMU's TCG), and list-offsets asks one check per
 * instruction of a function, by its name: 288 s for the 28,000
 * instructions of 400 functions before this cache.  Only core kernel text
 * is cached: its symbols never move after boot, while a module's can go
 * and come back elsewhere.  Under the control lock (kinst_os_ctl_lock).
 */
static struct {
	char		name[KINST_NAME_MAX];
	unsigned long	addr;
} kinst_name_cache;

static unsigned long
kinst_lookup_core_cached(const char *name)
{
	unsigned long addr;

	lockdep_assert_held(&kinst_ctl_mutex);
	if (kinst_name_cache.addr != 0 &&
	    strcmp(kinst_name_cache.name, name) == 0)
		return (kinst_name_cache.addr);
	addr = kinst_linux_lookup_name(name);
	kinst_name_cache.addr = 0;
	if (addr != 0 && kinst_in_kernel_text(addr) &&
	    strscpy(kinst_name_cache.name, name,
	    sizeof(kinst_name_cache.name)) > 0)
		kinst_name_cache.addr = addr;
	return (addr);
}

int
kinst_os_func_resolve(const char *module, const char *function,
    struct kinst_func *f)
{
	char name[KINST_MODNAME_MAX + KINST_NAME_MAX + 2];
	struct module *mod;
	unsigned long addr, size, off, base, end;
	bool any, kernel_only;

	memset(f, 0, sizeof(*f));
	any = module[0] == '\0';
	kernel_only = strcmp(module, "kernel") == 0;
	if (strchr(function, ':') != NULL || strchr(module, ':') != NULL)
		return (KINST_E_NOENT);
	if (any || kernel_only)
		snprintf(name, sizeof(name), "%s", function);
	else
		snprintf(name, sizeof(name), "%s:%s", module, function);
	/* A module-qualified name (module:function) is never core text. */
	addr = any || kernel_only ? kinst_lookup_core_cached(name) :
	    kinst_linux_lookup_name(name);
	if (addr == 0)
		return (KINST_E_NOENT);
	if (!k_lookup_size_offset(addr, &size, &off) || off != 0 || size == 0)
		return (KINST_E_NOENT);

	if (kinst_in_kernel_text(addr)) {
		if (!any && !kernel_only)
			return (KINST_E_NOENT);
		end = kinst_etext;
		strscpy(f->module, "kernel", sizeof(f->module));
	} else {
		if (kernel_only)
			return (KINST_E_NOENT);
		preempt_disable();
		mod = k_module_text_address(addr);
		if (mod != NULL && (mod->state != MODULE_STATE_LIVE ||
		    !try_module_get(mod)))
			mod = NULL;
		preempt_enable();
		if (mod == NULL)
			return (KINST_E_NOENT);	/* not text, init text, or going */
		base = (unsigned long)mod->core_layout.base;
		end = base + mod->core_layout.text_size;
		if (addr < base || addr >= end) {
			module_put(mod);
			return (KINST_E_NOENT);
		}
		strscpy(f->module, mod->name, sizeof(f->module));
		f->os_ref = mod;
	}
	if (size > end - addr)
		size = end - addr;
	f->addr = addr;
	f->size = size;
	return (KINST_E_OK);
}

void
kinst_os_func_release(struct kinst_func *f)
{
	if (f->os_ref != NULL)
		module_put(f->os_ref);
	f->os_ref = NULL;
}

/*
 * rmmod of a module kinst holds fails with a bare EAGAIN ("Resource
 * temporarily unavailable") that kinst cannot change: say here, when a
 * session starts and stops holding one, who it is.
 */
void
kinst_os_log_hold(const char *module, int32_t pid, const char *comm,
    const char *function, bool held)
{
	if (held)
		pr_info("kinst: pid %d (%.16s) traces %s:%s: module %s cannot be "
		    "unloaded until it stops (debugfs kinst/holders)\n", pid,
		    comm, module, function, module);
	else
		pr_info("kinst: pid %d (%.16s) no longer holds module %s\n",
		    pid, comm, module);
}

int
kinst_os_func_check(const struct kinst_func *f, const char *function)
{
	char sym[KSYM_SYMBOL_LEN], *p;
	unsigned long a = (unsigned long)f->addr;
	size_t i;
	int r;

	if (within_module(a, THIS_MODULE))
		return (KINST_R_EXCL_SELF);
	/* Derived from the live text at load: more precise than the rest. */
	if ((r = kinst_linux_derived_check(a)) != KINST_R_NONE)
		return (r);
	for (i = 0; i < KINST_NSECTIONS; i++)
		if (kinst_sect[i][0] != 0 && a >= kinst_sect[i][0] &&
		    a < kinst_sect[i][1])
			return (kinst_section_reason[i]);
	if ((r = kinst_excluded_reason(function)) != KINST_R_NONE)
		return (r);
	/*
	 * The name kallsyms gives the address too: an alias (another symbol
	 * at the same address) must not get around the list.
	 */
	sprint_symbol_no_offset(sym, a);
	if ((p = strchr(sym, ' ')) != NULL)
		*p = '\0';		/* " [module]" */
	if ((r = kinst_excluded_reason(sym)) != KINST_R_NONE)
		return (r);
	if (k_within_kprobe_blacklist(a))
		return (KINST_R_EXCL_BLACKLIST);
	return (KINST_R_NONE);
}

void
kinst_os_text_lock(void)
{
	mutex_lock(k_text_mutex);
}

/*
 * Function-wide kprobe scan, cached while the text lock is held (kprobes
 * arms under text_mutex too, so the answer cannot change until unlock).
 */
static uint64_t kinst_kp_scanned;	/* function address, 0: none */
static bool kinst_kp_found;

void
kinst_os_text_unlock(void)
{
	kinst_kp_scanned = 0;
	mutex_unlock(k_text_mutex);
}

/*
 * Does the function hold a kprobe anywhere?  Its int3 (or an optimized
 * kprobe's 5-byte jump, which leaves the tail of the instructions it
 * covers behind) hides the instruction boundaries after it from our
 * decoder, exactly as our int3s would hide them from kprobes' (which then
 * refuses: can_probe()).  So kinst refuses such a function as a whole.
 */
static bool
kinst_func_has_kprobe(const struct kinst_func *f)
{
	unsigned long b;
	bool kp = false;

	if (kinst_kp_scanned == f->addr)
		return (kinst_kp_found);
	preempt_disable();
	for (b = f->addr; b < f->addr + f->size && !kp; b++)
		kp = k_get_kprobe((void *)b) != NULL;
	preempt_enable();
	kinst_kp_scanned = f->addr;
	kinst_kp_found = kp;
	return (kp);
}

/*
 * What the whole of one core-kernel function holds, for the per-instruction
 * checks below: whether it is on the kprobe blacklist, and whether any
 * jump label or static call site overlaps it.  Linux 6.1 answers the
 * latter two by walking every site of the kernel (tens of thousands of
 * jump entries) and the blacklist by walking a list; list-offsets asks
 * once per instruction (about 7 ms each under QEMU's TCG).  A site that
 * overlaps an instruction overlaps its function, so a function without
 * any needs no per-instruction walk; the blacklist is by function (and by
 * section).  Core kernel text only: its sites and blacklist entries are
 * fixed after boot, while a module's come and go with it.  One entry (a
 * check asks about one function at a time), under the control lock.
 */
struct kinst_func_sites {
	bool	cached;		/* false: ask per instruction */
	bool	blacklisted;
	bool	jump_label;
	bool	static_call;
};

static struct {
	unsigned long	addr, size;
	struct kinst_func_sites sites;
} kinst_sites_cache;

static struct kinst_func_sites
kinst_func_sites(const struct kinst_func *f)
{
	struct kinst_func_sites fs = { .cached = false };
	unsigned long a = (unsigned long)f->addr, last;

	lockdep_assert_held(&kinst_ctl_mutex);
	if (f->size == 0 || !kinst_in_kernel_text(a))
		return (fs);
	if (kinst_sites_cache.addr == a && kinst_sites_cache.size == f->size)
		return (kinst_sites_cache.sites);
	last = a + f->size - 1;
	fs.cached = true;
	fs.blacklisted = k_within_kprobe_blacklist(a);
	fs.jump_label = k_jump_label_text_reserved == NULL ||
	    k_jump_label_text_reserved((void *)a, (void *)last);
	fs.static_call = k_static_call_text_reserved == NULL ||
	    k_static_call_text_reserved((void *)a, (void *)last);
	kinst_sites_cache.addr = a;
	kinst_sites_cache.size = f->size;
	kinst_sites_cache.sites = fs;
	return (fs);
}

int
kinst_os_insn_check(const struct kinst_func *f, uint64_t addr, uint32_t len)
{
	struct kinst_func_sites fs;
	unsigned long a = (unsigned long)addr, last = a + len - 1, b;
	size_t i;
	bool kp;

	/* A section boundary inside a symbol (noinstr functions are aligned). */
	for (i = 0; i < KINST_NSECTIONS; i++)
		if (kinst_sect[i][0] != 0 && last >= kinst_sect[i][0] &&
		    a < kinst_sect[i][1])
			return (kinst_section_reason[i]);
	fs = kinst_func_sites(f);
	if (fs.blacklisted || (!fs.cached && k_within_kprobe_blacklist(a)))
		return (KINST_R_EXCL_BLACKLIST);
	if (k_search_exception_tables(a) != NULL)
		return (KINST_R_FIXUP);
	if (k_ftrace_location_range != NULL &&
	    k_ftrace_location_range(a, last) != 0)
		return (KINST_R_TEXT_PATCHED);
	if ((!fs.cached || fs.jump_label) &&
	    k_jump_label_text_reserved != NULL &&
	    k_jump_label_text_reserved((void *)a, (void *)last))
		return (KINST_R_TEXT_PATCHED);
	if ((!fs.cached || fs.static_call) &&
	    k_static_call_text_reserved != NULL &&
	    k_static_call_text_reserved((void *)a, (void *)last))
		return (KINST_R_TEXT_PATCHED);
	/*
	 * A kprobe at the instruction, or an optimized kprobe whose 5-byte
	 * jump starts up to 4 bytes before it (before the function, too).
	 */
	kp = false;
	preempt_disable();
	for (b = a >= 4 ? a - 4 : 0; b <= last && !kp; b++)
		kp = k_get_kprobe((void *)b) != NULL;
	preempt_enable();
	if (kp || kinst_func_has_kprobe(f))
		return (KINST_R_TEXT_PATCHED);
	return (kinst_linux_arch_insn_check(f, addr));
}

/*
 * Jump optimization's view of hidden control flow (common/kinst_os.h).
 * - A direct jmp/jcc into the retpoline thunks (__x86_indirect_thunk_*,
 *   __x86_indirect_jump_thunk_*) is an indirect jump: a jump table may
 *   land anywhere in the function.  The return thunk is a return.
 * - A jump label's site is a nop or a jmp that static_key flips at any
 *   time; its target is a label of the function the decoder does not see
 *   while the site is a nop, and it may be inside a window.  Every jump
 *   entry whose site is in the function gives its target (the kernel's
 *   __jump_table, or the module's): KINST_JOPT_TARGET for the instruction
 *   there.  More than KINST_JL_MAX of them: the function is not optimized.
 *   The site itself is refused by kinst_os_insn_check (text-patched).
 *   Static call sites are calls or tail jumps out of the function.
 */
#define	KINST_JL_MAX	256
static struct {
	unsigned long	addr, size;
	unsigned int	n;		/* targets in the function; > MAX: too many */
	unsigned long	t[KINST_JL_MAX];
} kinst_jl_cache;

static void
kinst_jl_scan(const struct jump_entry *e, const struct jump_entry *end,
    unsigned long a, unsigned long size)
{
	unsigned long code, t;

	for (; e < end; e++) {
		code = jump_entry_code(e);
		if (code < a || code >= a + size)
			continue;
		t = jump_entry_target(e);
		if (t < a || t >= a + size)
			continue;
		if (kinst_jl_cache.n < KINST_JL_MAX)
			kinst_jl_cache.t[kinst_jl_cache.n] = t;
		kinst_jl_cache.n++;
	}
}

/* KINST_R_NONE, KINST_JOPT_TARGET or KINST_JOPT_INDIRECT (too many). */
static int
kinst_jump_label_target(const struct kinst_func *f, uint64_t addr)
{
	unsigned long a = (unsigned long)f->addr;
	struct module *mod;
	unsigned int i;

	lockdep_assert_held(&kinst_ctl_mutex);
	if (kinst_jl_cache.addr != a || kinst_jl_cache.size != f->size) {
		kinst_jl_cache.addr = a;
		kinst_jl_cache.size = f->size;
		kinst_jl_cache.n = 0;
		if (kinst_in_kernel_text(a)) {
			if (kinst_jl_start == 0 || kinst_jl_stop < kinst_jl_start)
				kinst_jl_cache.n = KINST_JL_MAX + 1;
			else
				kinst_jl_scan(
				    (const struct jump_entry *)kinst_jl_start,
				    (const struct jump_entry *)kinst_jl_stop,
				    a, f->size);
		} else {
			/* f holds a reference on its module (func_resolve). */
			preempt_disable();
			mod = k_module_text_address(a);
#ifdef CONFIG_JUMP_LABEL
			if (mod != NULL)
				kinst_jl_scan(mod->jump_entries,
				    mod->jump_entries + mod->num_jump_entries,
				    a, f->size);
#endif
			preempt_enable();
		}
	}
	if (kinst_jl_cache.n > KINST_JL_MAX)
		return (KINST_JOPT_INDIRECT);
	for (i = 0; i < kinst_jl_cache.n; i++)
		if (kinst_jl_cache.t[i] == addr)
			return (KINST_JOPT_TARGET);
	return (KINST_R_NONE);
}

static bool
kinst_thunk_target(uint64_t addr, const uint8_t *insn, uint32_t len)
{
	char sym[KSYM_SYMBOL_LEN];
	unsigned long t;
	int64_t rel;
	size_t i;

	if (len == 5 && insn[0] == 0xe9)
		rel = (int32_t)get_unaligned((const uint32_t *)(insn + 1));
	else if (len == 2 && (insn[0] == 0xeb || (insn[0] & 0xf0) == 0x70))
		rel = (int8_t)insn[1];
	else if (len == 6 && insn[0] == 0x0f && (insn[1] & 0xf0) == 0x80)
		rel = (int32_t)get_unaligned((const uint32_t *)(insn + 2));
	else
		return (false);
	t = (unsigned long)(addr + len + (uint64_t)rel);
	for (i = 0; i < KINST_NSECTIONS; i++)
		if (strcmp(kinst_sections[i][0], "__indirect_thunk_start") == 0)
			break;
	if (i < KINST_NSECTIONS && kinst_sect[i][0] != 0 &&
	    (t < kinst_sect[i][0] || t >= kinst_sect[i][1]))
		return (false);
	sprint_symbol_no_offset(sym, t);
	return (strncmp(sym, "__x86_indirect_thunk", 20) == 0 ||
	    strncmp(sym, "__x86_indirect_jump_thunk", 25) == 0);
}

int
kinst_os_jopt_check(const struct kinst_func *f, uint64_t addr,
    const uint8_t *insn, uint32_t len)
{
	int r;

	r = kinst_os_insn_check(f, addr, len);
	if (r != KINST_R_NONE)
		return (r);
	if (kinst_thunk_target(addr, insn, len))
		return (KINST_JOPT_INDIRECT);
	return (kinst_jump_label_target(f, addr));
}

/*
 * No thread is still inside a jump window's interior (entered before its
 * int3 went in) or inside a detour (entered before its jump went out):
 * - synchronize_rcu_tasks() waits until every task that is not an idle
 *   task has switched voluntarily, or run in user mode, since the call.
 *   Neither happens inside a window or a detour (no call, no sleep in
 *   either), so a task that was in one, running, interrupted or
 *   preempted there, has left it.  kprobes waits the same way before
 *   optimizing (kprobe_optimizer()).
 * - Idle tasks are not waited for by it; they run with preemption
 *   disabled, so they are never preempted inside one, and an idle task
 *   interrupted there is in an RCU read-side critical section (the
 *   interrupt, the preemption-disabled region) that synchronize_rcu()
 *   waits for.  Code that runs while RCU is not watching (noinstr, the
 *   idle entry) is refused by kinst anyway.
 * May sleep for a long time; called with the control lock held, like
 * kprobes' optimizer, which holds cpus_read_lock() and text_mutex across
 * the same wait (we drop text_mutex).
 */
void
kinst_os_sync_tasks(void)
{
	might_sleep();
	k_synchronize_rcu_tasks();
	synchronize_rcu();
}

/* At load: jump-optimized probes when the kernel has what they need. */
void
kinst_linux_jump_init(struct kinst_ctl *c)
{
	if (!KINST_LINUX_JUMPS) {
		pr_info("kinst: no jump-optimized probes on this architecture\n");
		return;
	}
	if (!kinst_optimize_on) {
		pr_info("kinst: jump optimization off (optimize=0)\n");
		return;
	}
	if (k_synchronize_rcu_tasks == NULL) {
		pr_info("kinst: no synchronize_rcu_tasks: every probe stays an int3 probe\n");
		return;
	}
#if KINST_LINUX_JUMPS
	kinst_ctl_jump_enable(c, (uint64_t)(uintptr_t)kinst_linux_jhandler, 0,
	    false, kinst_linux_detour_flags());
#endif
}

/*
 * Text writes and their synchronization, made safe against a translating
 * emulator's stale code.
 *
 * A text write is text_poke() (text_mutex held); the synchronization that
 * follows a batch of them is an IPI to every other online CPU that
 * serializes it (sync_core), which is what text_poke_sync() does.  The
 * engine stores every batch twice with a synchronization between
 * (ctl_publish, kinst_control.c): QEMU's multi-threaded TCG can link a
 * translation made from the old byte while the first store lands, and the
 * second store invalidates it.  That argument needs the first
 * synchronization to finish, and text_poke_sync() cannot when the CPU
 * holding the stale translation runs it with interrupts off: a stale int3
 * over a byte that no longer is one traps, kprobes' int3 handler answers
 * "breakpoint gone, run the instruction again" (it is asked before kinst),
 * the CPU returns to the same stale int3, and it never reaches an
 * instruction boundary with IF set where the IPI could be taken; the
 * control CPU waits for it forever (the soak's CI failure of 2026-12-03:
 * exit_to_user_mode_prepare, prepare_to_wait_event under a spin lock).
 *
 * So the synchronization here does not wait blindly: it sends the IPIs
 * without waiting (smp_call_function_many, wait false), and while a CPU has
 * not answered it stores again, every so often (1 ms, doubling up to
 * 100 ms), each byte written since the last synchronization that completed
 * (the write log).  On QEMU that store invalidates the stale translation,
 * the CPU executes the real byte and goes on to take the IPI.  On hardware
 * the store changes nothing (the same byte); the CPU is only slow to
 * answer.  The log holds every write of a batch: at most one per site for
 * an int3 batch and KINST_JOPT_WINDOW - 1 per site for a jump stage; a
 * batch that overflowed it (it cannot, by those bounds) is counted and
 * re-stored as far as it was logged.  All of this runs with the control
 * lock held (CPU hotplug held off) and text_mutex held.
 */
#define	KINST_WLOG_MAX	(KINST_MAX_PROBES * \
	(KINST_JOPT_WINDOW > KINST_BP_LEN ? KINST_JOPT_WINDOW : KINST_BP_LEN))

static uint64_t kinst_wlog[KINST_WLOG_MAX];	/* addresses written */
static uint32_t kinst_wlog_n;
static bool kinst_wlog_lost;
/*
 * The log is the last batch, synchronized: kept for kinst_os_quiesce()'s
 * stores (below), emptied by the next batch's first write.
 */
static bool kinst_wlog_synced;
static atomic_t kinst_sync_left;	/* CPUs that have not answered */

/* Store n bytes of text at addr and log each address written. */
static void
kinst_text_write(uint64_t addr, const uint8_t *buf, uint32_t n)
{
	uint32_t i;

	lockdep_assert_held(k_text_mutex);
	if (kinst_wlog_synced) {
		kinst_wlog_n = 0;
		kinst_wlog_lost = false;
		kinst_wlog_synced = false;
	}
	kinst_linux_text_store(addr, buf, n);
	for (i = 0; i < n; i++) {
		if (kinst_wlog_n < KINST_WLOG_MAX)
			kinst_wlog[kinst_wlog_n++] = addr + i;
		else
			kinst_wlog_lost = true;
	}
}

void
kinst_os_text_write(uint64_t addr, uint8_t byte)
{
	kinst_text_write(addr, &byte, 1);
}

#if KINST_BP_LEN == 4
/* The arm64 breakpoint: one aligned word (kinst_isa_text_arm). */
void
kinst_os_text_write_word(uint64_t addr, uint32_t w)
{
	uint8_t b[4];

	put_unaligned_le32(w, b);
	kinst_text_write(addr, b, sizeof(b));
}
#endif

static void
kinst_sync_ipi(void *arg)
{
	(void)arg;
	kinst_linux_sync_core();
	smp_mb__before_atomic();
	atomic_dec(&kinst_sync_left);
}

/*
 * Store every logged byte again: the byte the text holds now, which is the
 * byte written (text_mutex is held: nobody else writes).  Runs of
 * consecutive addresses (a jump stage's four bytes) go in one text_poke().
 */
static void
kinst_wlog_restore(void)
{
	uint8_t buf[16];
	uint64_t a;
	uint32_t i, n;

	for (i = 0; i < kinst_wlog_n; i += n) {
		a = kinst_wlog[i];
		for (n = 1; n < sizeof(buf) && i + n < kinst_wlog_n &&
		    kinst_wlog[i + n] == a + n; n++)
			;
		memcpy(buf, (const void *)(uintptr_t)a, n);
		kinst_linux_text_store(a, buf, n);
	}
}

/*
 * Run fn on every other online CPU (smp_call_function_many, not waiting;
 * fn decrements *left) and wait until each has run it, storing the write
 * log again every so often while one has not (1 ms, doubling up to
 * 100 ms; see above).  text_locked: the log is the caller's batch (a
 * synchronization), or not (a quiescence: only a synchronized batch is
 * stored); text_mutex is held either way.  The wait never yields: a
 * control thread that gave its CPU away here could be left out for good
 * by tasks looping on a stale int3 with interrupts on (they answer the
 * IPI, and on a kernel without full preemption a task looping in the
 * kernel through exc_int3 never gives the CPU back), and then the store
 * that would free them is never made (issue 45's jump-probe hang:
 * docs/engine.md, "Text writes").  *slow counts
 * the waits that found a CPU slow, *stores the stores (and a
 * synchronization's bytes stored, kinst_sync_bytes).
 * After 1 s the kernel log says what waits and for how many CPUs, once: a
 * hang of the kind is then a line that names it.
 */
static void
kinst_ipi_wait(smp_call_func_t fn, atomic_t *left, bool text_locked,
    const char *what, uint64_t *slow, uint64_t *stores)
{
	ktime_t start, next;
	unsigned int step_us;
	bool warned;
	int others;

	start = ktime_get();
	preempt_disable();
	others = (int)num_online_cpus() - 1;
	atomic_set(left, others);
	if (others > 0)
		smp_call_function_many(cpu_online_mask, fn, NULL, false);
	kinst_linux_sync_core();
	preempt_enable();

	step_us = 1000;
	next = ktime_add_us(start, step_us);
	warned = false;
	while (atomic_read(left) > 0) {
		cpu_relax();
		if (ktime_before(ktime_get(), next))
			continue;
		if (step_us == 1000)
			(*slow)++;
		if (kinst_wlog_n != 0 && (text_locked || kinst_wlog_synced)) {
			kinst_wlog_restore();
			(*stores)++;
			if (text_locked)
				kinst_sync_bytes += kinst_wlog_n;
		}
		if (!warned && ktime_us_delta(ktime_get(), start) > 1000000) {
			pr_warn("kinst: %s: %d CPU(s) have not answered for 1 s; "
			    "storing the last text written again meanwhile\n",
			    what, atomic_read(left));
			warned = true;
		}
		step_us = min(step_us * 2, 100000U);
		next = ktime_add_us(ktime_get(), step_us);
	}
	smp_mb__after_atomic();
}

void
kinst_os_text_sync(void)
{
	ktime_t start;
	uint64_t us;

	lockdep_assert_held(k_text_mutex);
	start = ktime_get();
	kinst_ipi_wait(kinst_sync_ipi, &kinst_sync_left, true,
	    "text synchronization", &kinst_sync_slow, &kinst_sync_restores);
	if (kinst_wlog_lost && !kinst_wlog_synced)
		kinst_sync_lost++;
	kinst_wlog_synced = true;
	kinst_sync_count++;
	us = (uint64_t)ktime_us_delta(ktime_get(), start);
	if (us > kinst_sync_max_us)
		kinst_sync_max_us = us;
}

static atomic_t kinst_quiesce_left;	/* CPUs that have not answered */

static void
kinst_quiesce_ipi(void *arg)
{
	(void)arg;
	smp_mb__before_atomic();
	atomic_dec(&kinst_quiesce_left);
}

/*
 * Quiescence: an IPI to every CPU, waited for (on_each_cpu(wait) in
 * substance, kinst_ipi_wait above), not synchronize_rcu().
 *
 * The engine's lookup and everything that uses the probe afterwards runs in
 * the #BP handler with interrupts disabled, and the trampoline runs with
 * interrupts disabled (the handler clears IF; the sti at its end has a
 * one-instruction shadow covering the jump back).  A CPU executes a
 * cross-call function only where it is not inside either: from the IPI
 * (taken only with IF set), or from the idle loop's queue flush when it was
 * polling (outside any trampoline by construction).  An NMI may interrupt a
 * trampoline, but an NMI handler never runs cross-call functions, and a
 * nested hit inside it is itself IF-off code.  So when the wait returns,
 * every online CPU has passed a point outside all handlers and trampolines
 * after the probes were removed from the table, and none can enter them
 * again (no int3 left, no table entry left).  No CPU is between leaving
 * the online mask and its death report meanwhile (the control lock holds
 * off hotplug, see kinst_os_ctl_lock), and a dead CPU runs only code that
 * kinst refuses.
 *
 * synchronize_rcu() would also wait for the IF-off regions (they are RCU
 * read-side critical sections), but its correctness there rests on RCU's
 * view of CPUs that may be in an extended quiescent state (idle, or code run
 * while RCU is not watching); the IPI argument does not, and it is fast.
 */
void
kinst_os_quiesce(void)
{
	/*
	 * on_each_cpu(wait) in substance, with the wait of
	 * kinst_os_text_sync() (text_mutex held across it, taken once: the
	 * wait neither yields nor sleeps): while a CPU has not answered, the
	 * last synchronized batch of text writes is stored again.  A CPU that a
	 * translating emulator still runs from a stale copy of a byte kinst
	 * rewrote, with interrupts off (the stale int3 that kprobes answers
	 * "gone, run it again", above), would otherwise never take the IPI,
	 * and this wait, with the control lock held, would never end.  On
	 * hardware the stores change nothing.
	 */
	mutex_lock(k_text_mutex);
	kinst_ipi_wait(kinst_quiesce_ipi, &kinst_quiesce_left, false,
	    "quiescence", &kinst_quiesce_slow, &kinst_quiesce_restores);
	/*
	 * The batch is done with: a later quiescence stores nothing of it.
	 * That is what makes the stores while waiting safe: every batch is
	 * written while kinst holds a reference on each module it touches,
	 * and a disarm drops those references only after its quiescence, so
	 * a module whose text the log names cannot have been unloaded while
	 * the log is kept.
	 */
	kinst_wlog_n = 0;
	kinst_wlog_lost = false;
	mutex_unlock(k_text_mutex);
}

void *
kinst_os_tramp_alloc(size_t size, uint64_t *addr)
{
	void *p;

	size = PAGE_ALIGN(size);
	p = k_module_alloc(size);
	if (p == NULL)
		return (NULL);
	memset(p, KINST_LINUX_TRAMP_FILL, size);
	*addr = (uint64_t)(uintptr_t)p;
	return (p);
}

int
kinst_os_tramp_seal(void *mem, size_t size)
{
	int n = PAGE_ALIGN(size) >> PAGE_SHIFT;

	if (kinst_linux_tramp_sealed(mem, PAGE_ALIGN(size)) != 0)
		return (-1);
	if (k_set_memory_ro((unsigned long)mem, n) != 0)
		return (-1);
	if (k_set_memory_x((unsigned long)mem, n) != 0)
		return (-1);
	return (0);
}

void
kinst_os_tramp_free(void *mem, size_t size)
{
	int n = PAGE_ALIGN(size) >> PAGE_SHIFT;

	kinst_linux_tramp_gone(mem, PAGE_ALIGN(size));
	(void)k_set_memory_nx((unsigned long)mem, n);
	(void)k_set_memory_rw((unsigned long)mem, n);
	k_module_memfree(mem);
}

/* Linux frees every block at once (after quiescence): nothing different. */
void
kinst_os_tramp_unused(void *mem, size_t size)
{
	kinst_os_tramp_free(mem, size);
}
