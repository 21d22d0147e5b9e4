/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for FreeBSD/amd64: the OS interface (common/kinst_os.h) and the C
 * side of the #BP hook.
 *
 * Every FreeBSD interface used here is listed, with the source file it was
 * checked against and the facts relied on, in docs/freebsd.md.  Nothing in
 * this file decides anything the Linux shim would also have to decide; the
 * arithmetic and the name lists live in kmod/freebsd/kinst_freebsd.c.
 */

#include <sys/param.h>
#include <sys/systm.h>
#include <sys/kernel.h>
#include <sys/eventhandler.h>
#include <sys/linker.h>
#include <sys/lock.h>
#include <sys/malloc.h>
#include <sys/mutex.h>
#include <sys/pcpu.h>
#include <sys/proc.h>
#include <sys/queue.h>
#include <sys/smp.h>
#include <sys/sx.h>
#include <sys/time.h>

#include <vm/vm.h>
#include <vm/vm_param.h>
#include <vm/vm_extern.h>
#include <vm/vm_kern.h>
#include <vm/pmap.h>		/* before vm_map.h: it uses pmap_t (15.1) */
#include <vm/vm_map.h>
#include <vm/vm_object.h>

#include <machine/cpu.h>
#include <machine/cpufunc.h>
#include <machine/frame.h>
#include <machine/md_var.h>	/* la57; cpu_stdext_feature (x86/x86_var.h) */
#if __has_include(<machine/pcb.h>)
#include <machine/pcb.h>	/* struct pcb: pcb_onfault */
#define	KINST_PCB_ONFAULT	offsetof(struct pcb, pcb_onfault)
#else
/*
 * Only the transcribed declarations the compile check uses
 * (../shared/freebsd-decls) lack machine/pcb.h; every FreeBSD/amd64 has it.
 */
#define	KINST_PCB_ONFAULT	KINST_FBSD_PCB_ONFAULT_151
#endif
#include <machine/specialreg.h>	/* CPUID_STDEXT_SMAP */
#include <machine/vmparam.h>	/* VM_MAXUSER_ADDRESS_LA48, _LA57 */

#include "kinst_fbsd.h"
#include "kinst_isa.h"
#include "kinst_stack.h"

/* The frame geometry common/ and kinst_hook.S assume is the kernel's. */
#define	KINST_TF_AT(f, off)						\
	_Static_assert(offsetof(struct trapframe, f) == (off), #f)
KINST_TF_AT(tf_rdi, KINST_FBSD_TF_RDI);
KINST_TF_AT(tf_rsi, KINST_FBSD_TF_RSI);
KINST_TF_AT(tf_rdx, KINST_FBSD_TF_RDX);
KINST_TF_AT(tf_rcx, KINST_FBSD_TF_RCX);
KINST_TF_AT(tf_r8, KINST_FBSD_TF_R8);
KINST_TF_AT(tf_r9, KINST_FBSD_TF_R9);
KINST_TF_AT(tf_rax, KINST_FBSD_TF_RAX);
KINST_TF_AT(tf_rbx, KINST_FBSD_TF_RBX);
KINST_TF_AT(tf_rbp, KINST_FBSD_TF_RBP);
KINST_TF_AT(tf_r10, KINST_FBSD_TF_R10);
KINST_TF_AT(tf_r11, KINST_FBSD_TF_R11);
KINST_TF_AT(tf_r12, KINST_FBSD_TF_R12);
KINST_TF_AT(tf_r13, KINST_FBSD_TF_R13);
KINST_TF_AT(tf_r14, KINST_FBSD_TF_R14);
KINST_TF_AT(tf_r15, KINST_FBSD_TF_R15);
KINST_TF_AT(tf_trapno, KINST_FBSD_TF_TRAPNO);
KINST_TF_AT(tf_addr, KINST_FBSD_TF_ADDR);
KINST_TF_AT(tf_flags, KINST_FBSD_TF_FLAGS);
KINST_TF_AT(tf_err, KINST_FBSD_TF_ERR);
KINST_TF_AT(tf_rip, KINST_FBSD_TF_RIP);
KINST_TF_AT(tf_cs, KINST_FBSD_TF_CS);
KINST_TF_AT(tf_rflags, KINST_FBSD_TF_RFLAGS);
KINST_TF_AT(tf_rsp, KINST_FBSD_TF_RSP);
KINST_TF_AT(tf_ss, KINST_FBSD_TF_SS);
_Static_assert(sizeof(struct trapframe) == KINST_FBSD_TF_SIZE, "tf size");
_Static_assert(sizeof(((struct thread *)0)->td_name) >= KINST_COMM_LEN,
    "td_name");

/* ---- trap context ---- */

/*
 * Per CPU (indexed by curcpu; kinst_fbsd_os_init() refuses mp_maxid >=
 * KINST_MAXCPU): the interrupted %rsp of the #BP being handled (bounds
 * kinst_os_write_stack), and hits whose emulation faulted.
 */
static uint64_t kinst_trap_sp[KINST_MAXCPU];
static uint64_t kinst_emu_faults[KINST_MAXCPU];

uint32_t
kinst_os_cpu(void)
{
	return (PCPU_GET(cpuid));
}

/*
 * sbinuptime(): the monotonic uptime, lock-free (timehands generation
 * protocol; tc_windup() updates the timehands the readers are not using)
 * and usable with interrupts disabled.  See docs/freebsd.md.
 */
uint64_t
kinst_os_now_ns(void)
{
	return ((uint64_t)sbttons(sbinuptime()));
}

/*
 * KINST_TS_LOCAL_CLOCK: FreeBSD has no cheaper per-CPU clock in the
 * kernel's interface than the timecounter, so the same (docs/freebsd.md).
 */
uint64_t
kinst_os_local_ns(void)
{
	return (kinst_os_now_ns());
}

void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	struct thread *td;
	int i;

	td = curthread;
	*pid = td->td_proc != NULL ? td->td_proc->p_pid : -1;
	*tid = td->td_tid;
	/* A byte loop: no call to a (traceable) string function. */
	for (i = 0; i < KINST_COMM_LEN - 1 && td->td_name[i] != '\0'; i++)
		comm[i] = td->td_name[i];
	for (; i < KINST_COMM_LEN; i++)
		comm[i] = '\0';
}

/*
 * The thread's address and its id.  FreeBSD hands both out again, even
 * together (15.1, kern_thread.c and kern_fork.c: a process's last thread
 * stays with its cached struct proc, tid included, for a later fork;
 * tid_alloc() reaches a freed tid again once its cursor has wrapped round
 * the tid bitmap): framed activations never match across threads anyway
 * (kinst_tstate.h); docs/freebsd.md says what that leaves for unframed
 * ones.
 */
void
kinst_os_thread_key(uint64_t key[2])
{
	struct thread *td = curthread;

	key[0] = (uint64_t)(uintptr_t)td;
	key[1] = (uint64_t)(uint32_t)td->td_tid;
}

/*
 * Per CPU: no-fault reads in progress (nested: an NMI's probe hit inside
 * one).  Read by kinst_fbsd_trap_nofault() on the same CPU.
 */
static volatile uint32_t kinst_nofault_active[KINST_MAXCPU];

/*
 * The no-fault kernel read (docs/freebsd.md 1.5): a fault while copying is
 * turned into -1 by kinst_fbsd_trap_nofault() before trap() could enable
 * interrupts or call vm_fault(), so this never sleeps, in trap context or
 * not.  Interrupts are disabled around the copy so the thread stays on the
 * CPU whose count it raised.  Kernel-half addresses only.
 */
#define	KINST_NOFAULT_CHUNK	4096	/* bytes copied per interrupts-off section */

int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	register_t rflags;
	uint8_t *d;
	size_t n;
	u_int cpu;
	int rv;

	if (len == 0)
		return (0);
	/* The kernel half, direct map included (kinst_freebsd.h). */
	if (!kinst_fbsd_kread_ok(addr, len, la57 != 0))
		return (-1);
	/* Nobody would absorb a fault once DTrace took dtrace_trap_func. */
	if (!kinst_nofault_ours())
		return (-1);
	/* The control path reads up to KINST_FUNC_MAX: not all with IF off. */
	for (d = buf, rv = 0; len > 0 && rv == 0; d += n, addr += n, len -= n) {
		n = MIN(len, KINST_NOFAULT_CHUNK);
		rflags = intr_disable();
		cpu = PCPU_GET(cpuid);
		kinst_nofault_active[cpu]++;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		rv = kinst_nofault_copy(d, (const void *)(uintptr_t)addr, n);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		kinst_nofault_active[cpu]--;
		intr_restore(rflags);
	}
	return (rv == 0 ? 0 : -1);
}

/*
 * A probe program's load from the current process's user memory
 * (docs/freebsd.md 4): the kernel read's protocol around
 * kinst_nofault_copy_user(), which sets EFLAGS.AC (stac) when the CPU has
 * SMAP.  Refused without a copy: an empty or out-of-range request (not
 * wholly below the end of the lower canonical half: 2^47, or 2^56 with
 * LA57, the limits amd64_syscall() checks %rip against), and a thread
 * whose process has no user address space (kernel threads and processes
 * run on vmspace0).  A page that is not present faults and the fault is
 * turned into -1 before trap() (and so vm_fault()) could run: nothing is
 * ever paged in.
 */
#define	KINST_FBSD_USER_LIMIT						\
	(la57 ? VM_MAXUSER_ADDRESS_LA57 : VM_MAXUSER_ADDRESS_LA48)

/*
 * Whether process p has a user address space: p_vmspace (struct proc,
 * sys/sys/proc.h) is not vmspace0, the vmspace of proc0 that kernel
 * threads and kernel processes run on.
 */
static bool
kinst_fbsd_has_user_vm(const struct proc *p)
{
	return (p != NULL && p->p_vmspace != NULL && p->p_vmspace != &vmspace0);
}

int
kinst_os_read_user(uint64_t addr, void *buf, size_t len)
{
	register_t rflags;
	u_int cpu;
	int rv;

	if (!kinst_fbsd_user_range_ok(addr, len, KINST_FBSD_USER_LIMIT) ||
	    len > KINST_NOFAULT_CHUNK)
		return (-1);
	if (!kinst_fbsd_has_user_vm(curthread->td_proc) || !kinst_nofault_ours())
		return (-1);
	rflags = intr_disable();
	cpu = PCPU_GET(cpuid);
	kinst_nofault_active[cpu]++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rv = kinst_nofault_copy_user(buf, (const void *)(uintptr_t)addr, len);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	kinst_nofault_active[cpu]--;
	intr_restore(rflags);
	return (rv == 0 ? 0 : -1);
}

/*
 * dtrace_trap_func while kinst is loaded: trap_check() calls it for every
 * trap before trap(), with interrupts as the trap left them.  Only a fault
 * inside kinst_nofault_copy() during kinst_os_read(), or a user-address
 * page fault inside kinst_nofault_copy_user() during kinst_os_read_user(),
 * on this CPU is ours (kinst_fbsd_nofault_fixup, kmod/freebsd/kinst_freebsd.c).
 */
int
kinst_fbsd_trap_nofault(struct trapframe *tf, u_int type)
{
	struct kinst_fbsd_nofault nf;
	u_int cpu;

	cpu = PCPU_GET(cpuid);
	if (cpu >= KINST_MAXCPU || kinst_nofault_active[cpu] == 0)
		return (0);
	nf.start = (uint64_t)(uintptr_t)kinst_nofault_start;
	nf.end = (uint64_t)(uintptr_t)kinst_nofault_end;
	nf.fail = (uint64_t)(uintptr_t)kinst_nofault_fail;
	nf.ustart = (uint64_t)(uintptr_t)kinst_nofault_ustart;
	nf.uend = (uint64_t)(uintptr_t)kinst_nofault_uend;
	nf.ufail = (uint64_t)(uintptr_t)kinst_nofault_ufail;
	nf.ulimit = KINST_FBSD_USER_LIMIT;
	return (kinst_fbsd_nofault_fixup(tf, type, kinst_nofault_active[cpu],
	    &nf));
}

int
kinst_os_write_stack(uint64_t addr, const void *buf, size_t len)
{
	volatile uint8_t *d;
	const uint8_t *s;
	uint64_t sp;
	u_int cpu;

	cpu = PCPU_GET(cpuid);
	sp = cpu < KINST_MAXCPU ? kinst_trap_sp[cpu] : 0;
	if (sp == 0 ||
	    !kinst_stack_write_ok(sp, addr, len, KINST_FBSD_STACK_ROOM))
		return (-1);
	d = (volatile uint8_t *)(uintptr_t)addr;
	s = buf;
	while (len-- > 0)
		*d++ = *s++;
	return (0);
}

static int
kinst_stack_read(void *ctx, uint64_t addr, void *buf, size_t len)
{

	(void)ctx;
	return (kinst_os_read(addr, buf, len));
}

/*
 * The callers at a hit: the frame-pointer walk DTrace's
 * dtrace_getpcstack() does (amd64 kernels keep %rbp frames), in
 * common/x86/kinst_fpwalk.c, bounded by the current thread's kernel stack
 * [td_kstack, td_kstack + td_kstack_pages * PAGE_SIZE) and with every word
 * read through the no-fault copy.  A hit on another stack (an NMI's IST
 * stack) yields no callers.  A return address below VM_MIN_KERNEL_ADDRESS
 * ends the walk; on 15.1 that is not a constant but a load of the kernel
 * variable kva_layout.km_low (amd64/include/vmparam.h).  osctx (the trap
 * frame) is not needed: the engine's register file holds %rbp and %rsp.
 */
uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	static const struct kinst_mem_ops ops = { kinst_stack_read, NULL, NULL };
	struct kinst_fpwalk w;
	struct thread *td;

	(void)osctx;
	td = curthread;
	w.fp = regs->gpr[KINST_RBP];
	w.sp = regs->gpr[KINST_RSP];
	w.lo = (uint64_t)td->td_kstack;
	w.hi = w.lo + (uint64_t)td->td_kstack_pages * PAGE_SIZE;
	w.pc_min = VM_MIN_KERNEL_ADDRESS;
	w.at_entry = offset == 0;
	return (kinst_fpwalk(&w, &ops, pcs, max, truncated));
}

void
kinst_os_wake_deferred(struct kinst_session *s)
{
	/*
	 * Nothing to do in trap context: read(2) sleeps at most
	 * KINST_POLL_TICKS between looks at the rings, and a callout completes
	 * poll(2) (kinst_fbsd_dev.c).  No wakeup is ever issued from here.
	 */
	(void)s;
}

/*
 * Called by kinst_hook with the (moved) trap frame of a kernel-mode #BP,
 * interrupts disabled, on any CPU, possibly nested inside an NMI or inside
 * this very function.  Returns 0: not kinst's (frame untouched, the kernel's
 * trap() handles it); 1: the frame was rewritten, return through doreti.
 * Takes no lock, does not sleep or allocate; everything it calls is in this
 * module, inlined, or on kinst_fbsd_excluded[].  The work is
 * kinst_fbsd_hit() (kmod/freebsd/kinst_freebsd.c, tested on the build host).
 */
int
kinst_fbsd_trap(struct trapframe *tf)
{
	struct kinst_engine *e;
	u_int cpu;

	e = __atomic_load_n(&kinst_engine, __ATOMIC_ACQUIRE);
	if (e == NULL || TRAPF_USERMODE(tf))
		return (0);
	cpu = PCPU_GET(cpuid);
	if (cpu >= KINST_MAXCPU)
		return (0);
	return (kinst_fbsd_hit(e, tf, &kinst_trap_sp[cpu],
	    &kinst_emu_faults[cpu]));
}

u_long
kinst_fbsd_emu_faults(void)
{
	u_long n;
	u_int i;

	n = 0;
	for (i = 0; i < KINST_MAXCPU; i++)
		n += kinst_emu_faults[i];
	return (n);
}

/* ---- control path ---- */

static struct sx kinst_ctl_sx;
static struct sx kinst_text_sx;

void
kinst_os_ctl_lock(void)
{
	sx_xlock(&kinst_ctl_sx);
}

void
kinst_os_ctl_unlock(void)
{
	sx_xunlock(&kinst_ctl_sx);
}

void *
kinst_os_alloc(size_t size)
{
	return (malloc(size == 0 ? 1 : size, M_KINST, M_WAITOK | M_ZERO));
}

void
kinst_os_free(void *p, size_t size)
{
	(void)size;
	free(p, M_KINST);
}

/*
 * Linker files kinst has probes in.  A file with a reference here cannot
 * be unloaded: the kld_unload_try handler vetoes it (EBUSY), so its text
 * stays where the probes are.  kinst_modref_mtx is a leaf lock: taken with
 * kld_sx held (resolve, the veto) or alone (release), never the reverse.
 */
struct kinst_modref {
	LIST_ENTRY(kinst_modref) link;
	linker_file_t	lf;
	u_int		refs;
	bool		self;		/* kinst's own module */
};

static LIST_HEAD(, kinst_modref) kinst_modrefs =
    LIST_HEAD_INITIALIZER(kinst_modrefs);
static struct mtx kinst_modref_mtx;
static eventhandler_tag kinst_unload_try_tag;
static vm_offset_t kinst_exc_start, kinst_exc_end;

static void
kinst_kld_unload_try(void *arg, linker_file_t lf, int *error)
{
	struct kinst_modref *m;

	(void)arg;
	mtx_lock(&kinst_modref_mtx);
	LIST_FOREACH(m, &kinst_modrefs, link)
		if (m->lf == lf && m->refs != 0) {
			*error = EBUSY;
			printf("kinst: %s has armed kinst probes; "
			    "close kinstctl first (earlier \"kinst: pid\" "
			    "lines name the sessions)\n", lf->filename);
			break;
		}
	mtx_unlock(&kinst_modref_mtx);
}

/* kld_sx is held (linker_file_foreach), so lf stays while we look. */
static struct kinst_modref *
kinst_modref_get(linker_file_t lf, bool self)
{
	struct kinst_modref *m, *n;

	n = malloc(sizeof(*n), M_KINST, M_WAITOK | M_ZERO);
	mtx_lock(&kinst_modref_mtx);
	LIST_FOREACH(m, &kinst_modrefs, link)
		if (m->lf == lf)
			break;
	if (m == NULL) {
		m = n;
		n = NULL;
		m->lf = lf;
		m->self = self;
		LIST_INSERT_HEAD(&kinst_modrefs, m, link);
	}
	m->refs++;
	mtx_unlock(&kinst_modref_mtx);
	if (n != NULL)
		free(n, M_KINST);
	return (m);
}

static void
kinst_modref_put(struct kinst_modref *m)
{
	bool last;

	mtx_lock(&kinst_modref_mtx);
	KASSERT(m->refs > 0, ("kinst: modref underflow"));
	last = --m->refs == 0;
	if (last)
		LIST_REMOVE(m, link);
	mtx_unlock(&kinst_modref_mtx);
	if (last)
		free(m, M_KINST);
}

struct kinst_resolve {
	const char	*module;
	const char	*function;
	bool		kernel_pass;	/* looking at the kernel, or modules */
	bool		found;
	linker_symval_t	sym;
	struct kinst_func *f;
};

static int
kinst_resolve_sym(linker_file_t lf, int symidx, linker_symval_t *sv,
    void *arg)
{
	struct kinst_resolve *ra;

	(void)lf;
	(void)symidx;
	ra = arg;
	if (sv->name == NULL || sv->value == 0 ||
	    strcmp(sv->name, ra->function) != 0)
		return (0);
	ra->sym = *sv;
	ra->found = true;
	return (1);		/* the first definition in the file wins */
}

static bool
kinst_lf_contains(linker_file_t lf, vm_offset_t a)
{
	vm_offset_t base;

	base = (vm_offset_t)lf->address;
	return (a >= base && a - base < lf->size);
}

static int
kinst_resolve_file(linker_file_t lf, void *arg)
{
	struct kinst_resolve *ra;
	struct kinst_func *f;
	vm_offset_t a;
	bool kernel, self;

	ra = arg;
	kernel = kinst_fbsd_is_kernel_file(lf->filename);
	if (kernel != ra->kernel_pass)
		return (0);
	if (ra->module[0] != '\0' &&
	    !kinst_fbsd_modname_match(ra->module, lf->filename))
		return (0);
	ra->found = false;
	(void)linker_file_function_listall(lf, kinst_resolve_sym, ra);
	if (!ra->found)
		return (0);
	a = (vm_offset_t)ra->sym.value;
	if (!kinst_lf_contains(lf, a) || ra->sym.size == 0 ||
	    ra->sym.size > lf->size - (a - (vm_offset_t)lf->address)) {
		ra->found = false;	/* not text of this file */
		return (0);
	}
	self = !kernel && kinst_lf_contains(lf, (vm_offset_t)kinst_hook);
	f = ra->f;
	f->addr = (uint64_t)a;
	f->size = (uint64_t)ra->sym.size;
	kinst_fbsd_modname(lf->filename, f->module, sizeof(f->module));
	f->os_ref = kinst_modref_get(lf, self);
	return (1);
}

/*
 * The address must map back to the name.  linker_file_function_listall()
 * also reports ifunc symbols (STT_GNU_IFUNC), with the address of the
 * implementation the resolver picked; their size is, in 15.1, the
 * implementation symbol's or 0 (link_elf_ifunc_symbol_value), and was
 * taken for the resolver's when this was written (decoding that range
 * would cross into other functions).  The implementation's own name is
 * what to trace.  (A function with an alias may be refused here
 * too, when the reverse lookup prefers the other name: refusing is safe.)
 * Called without kld_sx, which linker_search_symbol_name() takes; the
 * module reference keeps the file loaded.
 */
static int
kinst_resolve_check(struct kinst_func *f, const char *function)
{
	char name[KINST_NAME_MAX];
	long off;

	if (linker_search_symbol_name((caddr_t)(uintptr_t)f->addr, name,
	    sizeof(name), &off) != 0 || off != 0 ||
	    strcmp(name, function) != 0) {
		kinst_os_func_release(f);
		return (KINST_E_NOENT);
	}
	return (KINST_E_OK);
}

int
kinst_os_func_resolve(const char *module, const char *function,
    struct kinst_func *f)
{
	struct kinst_resolve ra;

	memset(f, 0, sizeof(*f));
	memset(&ra, 0, sizeof(ra));
	ra.module = module;
	ra.function = function;
	ra.f = f;
	/* "" and "kernel": the kernel first; "": then every module. */
	ra.kernel_pass = true;
	if (module[0] == '\0' || kinst_fbsd_modname_match(module, "kernel")) {
		if (linker_file_foreach(kinst_resolve_file, &ra) != 0)
			return (kinst_resolve_check(f, function));
		if (module[0] != '\0')
			return (KINST_E_NOENT);
	}
	ra.kernel_pass = false;
	if (linker_file_foreach(kinst_resolve_file, &ra) != 0)
		return (kinst_resolve_check(f, function));
	return (KINST_E_NOENT);
}

void
kinst_os_func_release(struct kinst_func *f)
{
	if (f->os_ref != NULL)
		kinst_modref_put(f->os_ref);
	f->os_ref = NULL;
}

/* Who holds a module, for the kldunload refusal's reader (kinst(4)). */
void
kinst_os_log_hold(const char *module, int32_t pid, const char *comm,
    const char *function, bool held)
{
	if (held)
		printf("kinst: pid %d (%.16s) traces %s:%s: %s cannot be "
		    "unloaded until it stops\n", pid, comm, module, function,
		    module);
	else
		printf("kinst: pid %d (%.16s) no longer holds %s\n", pid,
		    comm, module);
}

/*
 * The module itself, the entry code, the lists by name, then a function
 * whose code arms pcb_onfault (kinst_fbsd_arms_onfault, docs/freebsd.md
 * section 5).  Its text is read in place: f lies inside its linker file,
 * which f->os_ref keeps loaded, and f->size <= KINST_FUNC_MAX.
 */
int
kinst_os_func_check(const struct kinst_func *f, const char *function)
{
	const struct kinst_modref *m;
	vm_offset_t a;
	int reason;

	m = f->os_ref;
	if (m != NULL && m->self)
		return (KINST_R_EXCL_SELF);
	a = (vm_offset_t)f->addr;
	if (kinst_exc_start != 0 && a >= kinst_exc_start && a < kinst_exc_end)
		return (KINST_R_EXCL_ENTRY);
	reason = kinst_fbsd_func_reason(function);
	if (reason != KINST_R_NONE)
		return (reason);
	if (kinst_fbsd_arms_onfault((const uint8_t *)a, (size_t)f->size,
	    offsetof(struct pcpu, pc_curpcb), KINST_PCB_ONFAULT))
		return (KINST_R_ONFAULT);
	return (KINST_R_NONE);
}

void
kinst_os_text_lock(void)
{
	sx_xlock(&kinst_text_sx);
}

void
kinst_os_text_unlock(void)
{
	sx_xunlock(&kinst_text_sx);
}

/*
 * Nothing else patches kernel text on a kernel kinst can load into: DTrace
 * (fbt, kinst, and on 15 the SDT hot-patching), the only other patcher,
 * needs the #BP hook kinst owns (see kinst_fbsd_dev.c on loading DTrace
 * afterwards).  FreeBSD has no exception tables: fault recovery is
 * pcb_onfault, refused per function.  An int3 already there is refused by
 * the classifier.
 */
int
kinst_os_insn_check(const struct kinst_func *f, uint64_t addr, uint32_t len)
{
	(void)f;
	(void)addr;
	(void)len;
	return (KINST_R_NONE);
}

/*
 * Jump optimization on FreeBSD (kinst_fbsd_dev.c enables it with
 * single-instruction windows only): FreeBSD has no jump labels and no
 * exception tables.  It has retpolines (WITH_KERNEL_RETPOLINE: clang's
 * -mretpoline, indirect branches through __llvm_retpoline_* thunks), which
 * hide indirect jumps from the decoder; a window of one instruction has no
 * instruction boundary inside for any jump to land on, so they need no
 * check here, and the int3 checks are all there is.
 */
int
kinst_os_jopt_check(const struct kinst_func *f, uint64_t addr,
    const uint8_t *insn, uint32_t len)
{
	(void)insn;
	return (kinst_os_insn_check(f, addr, len));
}

/*
 * Nothing to wait for, by construction: (1) a window is one instruction, so
 * no thread can be at a boundary inside it when its jump goes in or out;
 * (2) detours, like trampolines, are retired and never unmapped or reused
 * while the module is loaded (kinst_os_tramp_free), and the module refuses
 * to unload once a jump was used (kinst_busy), so a thread preempted inside
 * a detour always finds it, and the handler it calls, intact.
 */
void
kinst_os_sync_tasks(void)
{
}


/*
 * One byte of kernel text: interrupts off (no preemption, no interrupt
 * handler runs with CR0.WP clear) and write protection lifted around a
 * single store.  Other CPUs see it after kinst_os_text_sync().
 */
void
kinst_os_text_write(uint64_t addr, uint8_t byte)
{
	register_t rflags;
	bool wp;

	sx_assert(&kinst_text_sx, SA_XLOCKED);
	rflags = intr_disable();
	wp = disable_wp();
	*(volatile uint8_t *)(uintptr_t)addr = byte;
	restore_wp(wp);
	intr_restore(rflags);
}

static void
kinst_serialize(void *arg)
{
	u_int regs[4];

	(void)arg;
	do_cpuid(0, regs);	/* cpuid serializes the instruction stream */
}

/*
 * Both the cross-modifying-code synchronization and the quiescence proof
 * are one smp_rendezvous(): every other CPU takes the rendezvous IPI (only
 * with interrupts enabled, i.e. outside any trampoline and outside the #BP
 * handler, both of which run with IF clear), runs kinst_serialize and
 * returns through iretq; the calling CPU runs kinst_serialize itself and is
 * in thread context.  smp_rendezvous() returns when every CPU has finished.
 */
void
kinst_os_text_sync(void)
{
	smp_rendezvous(smp_no_rendezvous_barrier, kinst_serialize,
	    smp_no_rendezvous_barrier, NULL);
}

void
kinst_os_quiesce(void)
{
	smp_rendezvous(smp_no_rendezvous_barrier, kinst_serialize,
	    smp_no_rendezvous_barrier, NULL);
}

/*
 * Trampolines: kernel_map space at or above KERNBASE (where the kernel and
 * every module live, so any two addresses there are within 2 GiB: rel32
 * jumps and rewritten RIP-relative displacements reach), backed by wired
 * pages mapped read/write/execute (kmem_back with M_EXEC), then made
 * read+execute only by kinst_os_tramp_seal().  kmem_malloc() is not used:
 * its kernel_arena lies far below KERNBASE.
 *
 * A block is never unmapped or reused (kinst_fbsd_tramp_retire(): a thread
 * may sleep inside a trampoline, docs/freebsd.md 1.6); kinst_fbsd_tramps
 * bounds what is kept.  Control lock held (kinst_control.c).
 */
static struct kinst_fbsd_tramps kinst_tramps;

void *
kinst_os_tramp_alloc(size_t size, uint64_t *addr)
{
	vm_offset_t va;
	uint8_t *p;
	size_t i;

	size = round_page(size);
	if (!kinst_fbsd_tramp_admit(&kinst_tramps, size)) {
		printf("kinst: %ju bytes of trampolines kept since load (cap "
		    "%ju): reload the module to arm more\n",
		    (uintmax_t)(kinst_tramps.live + kinst_tramps.retired),
		    (uintmax_t)KINST_FBSD_TRAMP_CAP);
		return (NULL);
	}
	va = KERNBASE;
	if (vm_map_find(kernel_map, NULL, 0, &va, size, 0, VMFS_ANY_SPACE,
	    VM_PROT_ALL, VM_PROT_ALL, 0) != KERN_SUCCESS)
		goto fail;
	if (va < KERNBASE) {
		(void)vm_map_remove(kernel_map, va, va + size);
		goto fail;
	}
	if (kmem_back(kernel_object, va, size, M_WAITOK | M_EXEC) !=
	    KERN_SUCCESS) {
		(void)vm_map_remove(kernel_map, va, va + size);
		goto fail;
	}
	p = (uint8_t *)va;
	for (i = 0; i < size; i++)
		p[i] = 0xcc;	/* int3 in every unused byte */
	*addr = (uint64_t)va;
	return (p);
fail:
	kinst_fbsd_tramp_cancel(&kinst_tramps, size);
	return (NULL);
}

static int
kinst_fbsd_protect(void *mem, size_t size, vm_prot_t prot)
{
	vm_offset_t va;
	int rv;

	va = (vm_offset_t)mem;
	size = round_page(size);
#if __FreeBSD_version >= 1300135
	rv = vm_map_protect(kernel_map, va, va + size, prot, 0,
	    VM_MAP_PROTECT_SET_PROT);
#else
	rv = vm_map_protect(kernel_map, va, va + size, prot, FALSE);
#endif
	return (rv == KERN_SUCCESS ? 0 : -1);
}

int
kinst_os_tramp_seal(void *mem, size_t size)
{
	return (kinst_fbsd_protect(mem, size, VM_PROT_READ | VM_PROT_EXECUTE));
}

/*
 * The trap gate (kinst_fbsd_trapgate_build) and its handler word: two
 * pages of trampoline memory, the gate's read+execute, the word's
 * read+write, never freed (a thread may call the gate after the unload).
 * Load path only (no file is open yet).  NULL when there is no memory.
 */
void *
kinst_fbsd_gate_alloc(uint64_t **word)
{
	uint64_t addr;
	uint8_t *mem;

	mem = kinst_os_tramp_alloc(2 * PAGE_SIZE, &addr);
	if (mem == NULL)
		return (NULL);
	*word = (uint64_t *)(void *)(mem + PAGE_SIZE);
	**word = 0;
	(void)kinst_fbsd_trapgate_build(mem, (uint64_t)(uintptr_t)*word);
	if (kinst_os_tramp_seal(mem, PAGE_SIZE) != 0 ||
	    kinst_fbsd_protect(mem + PAGE_SIZE, PAGE_SIZE,
	    VM_PROT_READ | VM_PROT_WRITE) != 0) {
		/* Never installed: given back. */
		kinst_os_tramp_unused(mem, 2 * PAGE_SIZE);
		return (NULL);
	}
	return (mem);
}

/*
 * Retire, never free: the block stays mapped with its bytes, so a thread
 * that took a page fault inside one of its trampolines (and slept in
 * vm_fault with interrupts enabled, past every quiescence) resumes the
 * instruction and jumps back as if nothing had happened.  Since the range
 * stays mapped, vm_map_find() never hands it out again.
 */
void
kinst_os_tramp_free(void *mem, size_t size)
{
	(void)mem;
	kinst_fbsd_tramp_retire(&kinst_tramps, round_page(size));
}

/*
 * Never published: no CPU can be in it, so it is unmapped (kmem_back()'s
 * pages too) and no longer counts against the cap.
 */
void
kinst_os_tramp_unused(void *mem, size_t size)
{
	vm_offset_t va;

	va = (vm_offset_t)mem;
	size = round_page(size);
	kmem_unback(kernel_object, va, size);
	(void)vm_map_remove(kernel_map, va, va + size);
	kinst_fbsd_tramp_cancel(&kinst_tramps, size);
}

/* ---- setup ---- */

int
kinst_fbsd_os_init(void)
{
	if (mp_maxid >= KINST_MAXCPU) {
		printf("kinst: mp_maxid %u: at most %u CPUs are supported\n",
		    mp_maxid, KINST_MAXCPU);
		return (ENXIO);
	}
	/* As FreeBSD's copyin/dtrace_copy ifunc resolvers decide (1.5, 4). */
	kinst_nofault_smap = (cpu_stdext_feature & CPUID_STDEXT_SMAP) != 0;
	sx_init(&kinst_ctl_sx, "kinst ctl");
	sx_init(&kinst_text_sx, "kinst text");
	mtx_init(&kinst_modref_mtx, "kinst modref", NULL, MTX_DEF);
	/* The entry code's extent, when the kernel marks it. */
	kinst_exc_start = (vm_offset_t)linker_file_lookup_symbol(
	    linker_kernel_file, "start_exceptions", 0);
	kinst_exc_end = (vm_offset_t)linker_file_lookup_symbol(
	    linker_kernel_file, "end_exceptions", 0);
	if (kinst_exc_start == 0 || kinst_exc_end <= kinst_exc_start)
		kinst_exc_start = kinst_exc_end = 0;
	kinst_unload_try_tag = EVENTHANDLER_REGISTER(kld_unload_try,
	    kinst_kld_unload_try, NULL, EVENTHANDLER_PRI_ANY);
	return (0);
}

void
kinst_fbsd_os_fini(void)
{
	if (kinst_tramps.nretired != 0)
		printf("kinst: %ju trampoline blocks (%ju bytes) stay mapped "
		    "after unload: a thread may still be inside one\n",
		    (uintmax_t)kinst_tramps.nretired,
		    (uintmax_t)kinst_tramps.retired);
	EVENTHANDLER_DEREGISTER(kld_unload_try, kinst_unload_try_tag);
	mtx_destroy(&kinst_modref_mtx);
	sx_destroy(&kinst_text_sx);
	sx_destroy(&kinst_ctl_sx);
}
