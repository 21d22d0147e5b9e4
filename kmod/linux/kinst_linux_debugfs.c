/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for Linux: the debugfs views (root only: the directory's and the
 * files' modes), made at load after everything they show exists and
 * removed at unload before any of it goes.  Registration, like
 * kinst_linux.c: it reads the control state through common/'s control
 * path, the text synchronization's and the derived sets' counts through
 * kinst_linux_os.c and kinst_linux_trappath.c, and the no-fault read of the
 * test hook through kinst_linux_trap.c; nothing below calls back up here.
 *
 *   kinst/excluded   the exclusion sets derived from the live text
 *   kinst/jump       jump optimization: on, installed, optimizing, hits
 *   kinst/textsync   the text synchronizations and quiescences since load
 *   kinst/sites      every patched instruction
 *   kinst/holders    the sessions that keep a module from being unloaded
 *   kinst/read       test hook: kinst_os_read() on an address (0600)
 */

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include <linux/irqflags.h>
#include <linux/string.h>

#include "kinst_linux.h"
#include "kinst_linux_arch.h"

static struct dentry *kinst_debugfs;
static struct kinst_ctl *kinst_dbg_ctl;
static const bool *kinst_dbg_optimizing;

/*
 * Test hook, debugfs kinst/read (root only, 0600): write "ADDR LEN" (hex
 * address, 1..16 bytes), read back "ok BYTES", "fault" or "refused".  The
 * read is kinst_os_read() itself, with interrupts off as in trap context;
 * "refused" is the range check's answer, "fault" a load that took the
 * exception-table fixup.  Lets a guest test read an unmapped kernel
 * address, which no traced instruction can safely be made to do.
 */
static DEFINE_MUTEX(kinst_rt_lock);
static char kinst_rt_result[64] = "none\n";

static ssize_t
kinst_rt_write(struct file *fp, const char __user *ubuf, size_t n,
    loff_t *pos)
{
	char in[64];
	unsigned long long addr, len;
	unsigned long flags;
	uint8_t b[16];
	size_t i, o;
	int r;

	if (n == 0 || n >= sizeof(in))
		return (-EINVAL);
	if (copy_from_user(in, ubuf, n) != 0)
		return (-EFAULT);
	in[n] = '\0';
	if (sscanf(in, "%llx %llu", &addr, &len) != 2 || len == 0 ||
	    len > sizeof(b))
		return (-EINVAL);
	mutex_lock(&kinst_rt_lock);
	if (!kinst_linux_read_ok(addr, len)) {
		strscpy(kinst_rt_result, "refused\n", sizeof(kinst_rt_result));
	} else {
		local_irq_save(flags);
		r = kinst_os_read(addr, b, len);
		local_irq_restore(flags);
		if (r != 0)
			strscpy(kinst_rt_result, "fault\n",
			    sizeof(kinst_rt_result));
		else {
			o = scnprintf(kinst_rt_result, sizeof(kinst_rt_result),
			    "ok");
			for (i = 0; i < len; i++)
				o += scnprintf(kinst_rt_result + o,
				    sizeof(kinst_rt_result) - o, " %02x", b[i]);
			scnprintf(kinst_rt_result + o,
			    sizeof(kinst_rt_result) - o, "\n");
		}
	}
	mutex_unlock(&kinst_rt_lock);
	return (n);
}

static ssize_t
kinst_rt_read(struct file *fp, char __user *ubuf, size_t n, loff_t *pos)
{
	ssize_t r;

	mutex_lock(&kinst_rt_lock);
	r = simple_read_from_buffer(ubuf, n, pos, kinst_rt_result,
	    strlen(kinst_rt_result));
	mutex_unlock(&kinst_rt_lock);
	return (r);
}

static const struct file_operations kinst_rt_fops = {
	.owner = THIS_MODULE,
	.write = kinst_rt_write,
	.read = kinst_rt_read,
	.llseek = no_llseek,
};

/*
 * debugfs kinst/jump: whether jump optimization is on, the jumps installed
 * now (all files), whether the optimizer is running, and the hits that
 * came through a jump since load (not through an int3), summed over the
 * CPUs, and how many of those entered the handler with EFLAGS.AC set (0:
 * the detours clear it, kinst_linux_jump_ac).  Read racily: for tests and
 * curious people.
 */
static int
kinst_jump_show(struct seq_file *m, void *v)
{
	uint64_t hits = 0;
	unsigned int cpu;
	uint32_t n;
	bool busy;

	(void)v;
	for (cpu = 0; cpu < kinst_engine->ncpus; cpu++)
		hits += READ_ONCE(kinst_engine->cpu[cpu].jhits);
	n = READ_ONCE(kinst_dbg_ctl->njump);
	busy = READ_ONCE(*kinst_dbg_optimizing);
	seq_printf(m, "enabled %d\ninstalled %u\noptimizing %d\nhits %llu\n"
	    "ac_set %lu\n", kinst_linux_jump_enabled(), n, busy,
	    (unsigned long long)hits, kinst_linux_jump_ac());
	return (0);
}
DEFINE_SHOW_ATTRIBUTE(kinst_jump);

/*
 * debugfs kinst/sites: every patched instruction, one line each: address,
 * function+offset (a subscriber's name for it), module, how many sessions
 * trace it, jump or int3, its hits (all sessions').
 */
static int
kinst_sites_show(struct seq_file *m, void *v)
{
	struct kinst_site_info *si;
	uint32_t i, n, cap;

	(void)v;
	cap = KINST_MAX_PROBES;
	si = kvmalloc_array(cap, sizeof(*si), GFP_KERNEL);
	if (si == NULL)
		return (-ENOMEM);
	n = kinst_ctl_sites(kinst_dbg_ctl, si, cap);
	seq_printf(m, "# %u sites: address function+offset module sessions "
	    "kind hits\n", n);
	for (i = 0; i < n && i < cap; i++)
		seq_printf(m, "%016llx %s+0x%x %s %u %s %llu\n",
		    (unsigned long long)si[i].addr, si[i].function,
		    si[i].offset, si[i].module, si[i].sessions,
		    si[i].jump ? "jump" : "int3",
		    (unsigned long long)si[i].hits);
	kvfree(si);
	return (0);
}
DEFINE_SHOW_ATTRIBUTE(kinst_sites);

/*
 * debugfs kinst/holders: the sessions whose probes keep a module from
 * being unloaded (rmmod fails with EAGAIN meanwhile): module, pid, command,
 * probes in it.
 */
static int
kinst_holders_show(struct seq_file *m, void *v)
{
	struct kinst_holder_info *h;
	uint32_t i, n, cap;

	(void)v;
	cap = 1024;
	h = kvmalloc_array(cap, sizeof(*h), GFP_KERNEL);
	if (h == NULL)
		return (-ENOMEM);
	n = kinst_ctl_holders(kinst_dbg_ctl, NULL, h, cap);
	seq_printf(m, "# module pid comm probes (%u)\n", n);
	for (i = 0; i < n && i < cap; i++)
		seq_printf(m, "%s %d %.16s %u\n", h[i].module, h[i].pid,
		    h[i].comm, h[i].probes);
	kvfree(h);
	return (0);
}
DEFINE_SHOW_ATTRIBUTE(kinst_holders);

static int
kinst_excluded_show(struct seq_file *m, void *v)
{
	(void)v;
	return (kinst_linux_derived_show(m));
}
DEFINE_SHOW_ATTRIBUTE(kinst_excluded);

static int
kinst_textsync_show(struct seq_file *m, void *v)
{
	(void)v;
	return (kinst_linux_textsync_show(m));
}
DEFINE_SHOW_ATTRIBUTE(kinst_textsync);

/*
 * The views of c (*optimizing: whether its optimizer runs now).  A view
 * that cannot be made is left out: debugfs is for tests and the curious,
 * never a reason to refuse the load.
 */
void
kinst_linux_debugfs_init(struct kinst_ctl *c, const bool *optimizing)
{
	kinst_dbg_ctl = c;
	kinst_dbg_optimizing = optimizing;
	kinst_debugfs = debugfs_create_dir("kinst", NULL);
	if (IS_ERR_OR_NULL(kinst_debugfs))
		return;
	debugfs_create_file("excluded", 0400, kinst_debugfs, NULL,
	    &kinst_excluded_fops);
	debugfs_create_file("jump", 0400, kinst_debugfs, NULL, &kinst_jump_fops);
	debugfs_create_file("textsync", 0400, kinst_debugfs, NULL,
	    &kinst_textsync_fops);
	debugfs_create_file("sites", 0400, kinst_debugfs, NULL,
	    &kinst_sites_fops);
	debugfs_create_file("holders", 0400, kinst_debugfs, NULL,
	    &kinst_holders_fops);
	debugfs_create_file("read", 0600, kinst_debugfs, NULL, &kinst_rt_fops);
}

/* Waits for the views' readers (debugfs' removal does). */
void
kinst_linux_debugfs_fini(void)
{
	debugfs_remove_recursive(kinst_debugfs);
	kinst_debugfs = NULL;
}
