/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: the kernel symbols the shim needs that the kernel does
 * not export, found at load (control context; the bottom layer of the
 * shim: it calls no other file of it).
 *
 * kallsyms_lookup_name() is not exported since 5.7; it is found through a
 * kprobe on it (register_kprobe fills kp.addr), and every other symbol
 * through it (kinst_sym[]).  The pointers are read-only after load.
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/kallsyms.h>
#include <linux/string.h>
#include <linux/preempt.h>
#include <linux/extable.h>

#include "kinst_linux.h"

unsigned long kinst_stext, kinst_etext;

static unsigned long (*k_lookup_name)(const char *name);
int (*k_lookup_size_offset)(unsigned long addr, unsigned long *size,
    unsigned long *off);
#ifdef CONFIG_X86_64
void *(*k_text_poke)(void *addr, const void *opcode, size_t len);
#endif
#ifdef CONFIG_ARM64
int (*k_patch_text_word)(void *addr, u32 insn);
void (*k_register_kernel_break_hook)(struct break_hook *hook);
void (*k_unregister_kernel_break_hook)(struct break_hook *hook);
#endif
struct mutex *k_text_mutex;
static DEFINE_MUTEX(kinst_own_text_mutex);
void *(*k_module_alloc)(unsigned long size);
void (*k_module_memfree)(void *p);
int (*k_set_memory_ro)(unsigned long addr, int n);
int (*k_set_memory_rw)(unsigned long addr, int n);
int (*k_set_memory_x)(unsigned long addr, int n);
int (*k_set_memory_nx)(unsigned long addr, int n);
const struct exception_table_entry *(*k_search_exception_tables)(
    unsigned long addr);
unsigned long (*k_ftrace_location_range)(unsigned long start,
    unsigned long end);
int (*k_jump_label_text_reserved)(void *start, void *end);
int (*k_static_call_text_reserved)(void *start, void *end);
struct kprobe *(*k_get_kprobe)(void *addr);
bool (*k_within_kprobe_blacklist)(unsigned long addr);
struct module *(*k_module_text_address)(unsigned long addr);
void (*k_synchronize_rcu_tasks)(void);

static struct {
	const char	*name;
	void		*ptr;		/* where to store the address */
	bool		optional;
} kinst_sym[] = {
	{ "kallsyms_lookup_size_offset", &k_lookup_size_offset, false },
#ifdef CONFIG_X86_64
	{ "text_poke", &k_text_poke, false },
#endif
#ifdef CONFIG_ARM64
	{ "aarch64_insn_patch_text_nosync", &k_patch_text_word, false },
	{ "register_kernel_break_hook", &k_register_kernel_break_hook, false },
	{ "unregister_kernel_break_hook", &k_unregister_kernel_break_hook,
	    false },
#endif
	/*
	 * Data: found only with CONFIG_KALLSYMS_ALL, which Debian's arm64
	 * kernel lacks (its x86-64 kernel has it).  Without it kinst
	 * serializes its own writes only (below).
	 */
	{ "text_mutex", &k_text_mutex, !IS_ENABLED(CONFIG_X86_64) },
	{ "module_alloc", &k_module_alloc, false },
	{ "module_memfree", &k_module_memfree, false },
	{ "set_memory_ro", &k_set_memory_ro, false },
	{ "set_memory_rw", &k_set_memory_rw, false },
	{ "set_memory_x", &k_set_memory_x, false },
	{ "set_memory_nx", &k_set_memory_nx, false },
	{ "search_exception_tables", &k_search_exception_tables, false },
	{ "ftrace_location_range", &k_ftrace_location_range, true },
	{ "jump_label_text_reserved", &k_jump_label_text_reserved, true },
	{ "static_call_text_reserved", &k_static_call_text_reserved, true },
	{ "get_kprobe", &k_get_kprobe, false },
	{ "within_kprobe_blacklist", &k_within_kprobe_blacklist, false },
	{ "__module_text_address", &k_module_text_address, false },
	/* Jump optimization only (kinst_linux_jump_init). */
	{ "synchronize_rcu_tasks", &k_synchronize_rcu_tasks, true },
};

int
kinst_linux_syms_init(void)
{
	struct kprobe kp;
	char buf[KSYM_SYMBOL_LEN];
	unsigned long a, off, sz;
	size_t i;
	int error;

	/*
	 * A kprobe on kallsyms_lookup_name gives its address (perhaps past an
	 * endbr64); sprint_symbol() tells the offset into the symbol.
	 */
	memset(&kp, 0, sizeof(kp));
	kp.symbol_name = "kallsyms_lookup_name";
	error = register_kprobe(&kp);
	if (error != 0) {
		pr_err("kinst: cannot locate kallsyms_lookup_name (kprobe: %d)\n",
		    error);
		return (error);
	}
	a = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	sprint_symbol(buf, a);
	if (strncmp(buf, "kallsyms_lookup_name+", 21) != 0 ||
	    sscanf(buf + 21, "%lx/%lx", &off, &sz) != 2) {
		pr_err("kinst: kprobe on kallsyms_lookup_name is at %s\n", buf);
		return (-ENOENT);
	}
	k_lookup_name = (void *)(a - off);

	for (i = 0; i < ARRAY_SIZE(kinst_sym); i++) {
		a = k_lookup_name(kinst_sym[i].name);
		if (a == 0 && !kinst_sym[i].optional) {
			pr_err("kinst: kernel symbol %s not found\n",
			    kinst_sym[i].name);
			return (-ENOENT);
		}
		*(unsigned long *)kinst_sym[i].ptr = a;
	}
	/*
	 * No text_mutex (arm64 without CONFIG_KALLSYMS_ALL): kinst's writes
	 * are serialized among themselves by a mutex of its own.  Every other
	 * arm64 patcher that kinst could meet at an instruction is refused at
	 * it (ftrace sites, jump labels, kprobes); kprobes registering at an
	 * instruction kinst arms at the same moment is the one race left, and
	 * it cannot corrupt the text: arm64 kprobes refuses to step a brk,
	 * and a kprobe brk written over kinst's only takes kinst's hits (the
	 * first of the two to disarm puts the original word back)
	 * (docs/engine.md, "arm64 on Linux").
	 */
	if (k_text_mutex == NULL) {
		k_text_mutex = &kinst_own_text_mutex;
		pr_info("kinst: no text_mutex in kallsyms (CONFIG_KALLSYMS_ALL off): kinst's text writes serialize among themselves\n");
	}
	kinst_stext = k_lookup_name("_stext");
	kinst_etext = k_lookup_name("_etext");
	if (kinst_stext == 0 || kinst_etext <= kinst_stext) {
		pr_err("kinst: cannot find the kernel text bounds\n");
		return (-ENOENT);
	}
	return (0);
}

/* The address of a kernel symbol by name, 0 when there is none. */
unsigned long
kinst_linux_lookup_name(const char *name)
{
	return (k_lookup_name(name));
}

/*
 * The function containing a, in the kernel's core text or a live module's
 * text: its first byte and size (*own: in this module).  False otherwise.
 */
bool
kinst_linux_func_bounds(unsigned long a, unsigned long *start,
    unsigned long *size, bool *own)
{
	struct module *mod;
	unsigned long sz, off;

	if (!k_lookup_size_offset(a, &sz, &off) || sz == 0)
		return (false);
	*start = a - off;
	*size = sz;
	*own = within_module(a, THIS_MODULE);
	if (kinst_in_kernel_text(*start)) {
		if (*size > kinst_etext - *start)
			*size = kinst_etext - *start;
		return (true);
	}
	preempt_disable();
	mod = k_module_text_address(a);
	preempt_enable();
	return (mod != NULL);
}

/* Is a the ftrace call site of a function (the call there is ftrace's)? */
bool
kinst_linux_ftrace_site(unsigned long a)
{
	return (k_ftrace_location_range != NULL &&
	    k_ftrace_location_range(a, a) == a);
}
