/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the FreeBSD shim knows that needs no FreeBSD header: trap frame
 * arithmetic, exclusions by name, module name matching, the load/unload
 * steps.  It lives with the shim (it is FreeBSD knowledge) but includes
 * nothing of FreeBSD's, so the host tests (tests/freebsd, tests/harness)
 * compile and run it by path.  See kinst_freebsd.h and docs/freebsd.md.
 */

#include "kinst_bytes.h"
#include "kinst_control.h"
#include "kinst_isa.h"
#include "kinst_dev.h"
#include "kinst_engine.h"
#include "kinst_freebsd.h"
#include "kinst_kaddr.h"

uint64_t
kinst_fbsd_frame_at(uint64_t isp)
{
	return ((isp & ~(uint64_t)15) - KINST_FBSD_TF_SIZE);
}

uint64_t
kinst_fbsd_moved_frame_at(uint64_t isp)
{
	return (kinst_fbsd_frame_at(isp) - KINST_FBSD_FRAME_SHIFT);
}

bool
kinst_stack_write_ok(uint64_t isp, uint64_t addr, size_t len, size_t room)
{
	if (len == 0 || len > room || isp < room)
		return (false);
	if (addr < isp - room || addr > isp)
		return (false);
	return (len <= isp - addr);
}

/* The frame as words: every KINST_FBSD_TF_* register offset is 8-aligned. */
#define	TFW(tf, off)	(((uint64_t *)(tf))[(off) / 8])
#define	TFR(tf, off)	(((const uint64_t *)(tf))[(off) / 8])

void
kinst_fbsd_frame_to_regs(const void *tf, struct kinst_regs *r)
{
	r->gpr[KINST_RAX] = TFR(tf, KINST_FBSD_TF_RAX);
	r->gpr[KINST_RCX] = TFR(tf, KINST_FBSD_TF_RCX);
	r->gpr[KINST_RDX] = TFR(tf, KINST_FBSD_TF_RDX);
	r->gpr[KINST_RBX] = TFR(tf, KINST_FBSD_TF_RBX);
	r->gpr[KINST_RSP] = TFR(tf, KINST_FBSD_TF_RSP);
	r->gpr[KINST_RBP] = TFR(tf, KINST_FBSD_TF_RBP);
	r->gpr[KINST_RSI] = TFR(tf, KINST_FBSD_TF_RSI);
	r->gpr[KINST_RDI] = TFR(tf, KINST_FBSD_TF_RDI);
	r->gpr[KINST_R8] = TFR(tf, KINST_FBSD_TF_R8);
	r->gpr[KINST_R9] = TFR(tf, KINST_FBSD_TF_R9);
	r->gpr[KINST_R10] = TFR(tf, KINST_FBSD_TF_R10);
	r->gpr[KINST_R11] = TFR(tf, KINST_FBSD_TF_R11);
	r->gpr[KINST_R12] = TFR(tf, KINST_FBSD_TF_R12);
	r->gpr[KINST_R13] = TFR(tf, KINST_FBSD_TF_R13);
	r->gpr[KINST_R14] = TFR(tf, KINST_FBSD_TF_R14);
	r->gpr[KINST_R15] = TFR(tf, KINST_FBSD_TF_R15);
	r->rip = TFR(tf, KINST_FBSD_TF_RIP) - 1;
	r->rflags = TFR(tf, KINST_FBSD_TF_RFLAGS);
	r->cs = (uint16_t)TFR(tf, KINST_FBSD_TF_CS);
	r->ss = (uint16_t)TFR(tf, KINST_FBSD_TF_SS);
	r->_pad = 0;
}

void
kinst_fbsd_regs_to_frame(const struct kinst_regs *r, void *tf)
{
	TFW(tf, KINST_FBSD_TF_RAX) = r->gpr[KINST_RAX];
	TFW(tf, KINST_FBSD_TF_RCX) = r->gpr[KINST_RCX];
	TFW(tf, KINST_FBSD_TF_RDX) = r->gpr[KINST_RDX];
	TFW(tf, KINST_FBSD_TF_RBX) = r->gpr[KINST_RBX];
	TFW(tf, KINST_FBSD_TF_RSP) = r->gpr[KINST_RSP];
	TFW(tf, KINST_FBSD_TF_RBP) = r->gpr[KINST_RBP];
	TFW(tf, KINST_FBSD_TF_RSI) = r->gpr[KINST_RSI];
	TFW(tf, KINST_FBSD_TF_RDI) = r->gpr[KINST_RDI];
	TFW(tf, KINST_FBSD_TF_R8) = r->gpr[KINST_R8];
	TFW(tf, KINST_FBSD_TF_R9) = r->gpr[KINST_R9];
	TFW(tf, KINST_FBSD_TF_R10) = r->gpr[KINST_R10];
	TFW(tf, KINST_FBSD_TF_R11) = r->gpr[KINST_R11];
	TFW(tf, KINST_FBSD_TF_R12) = r->gpr[KINST_R12];
	TFW(tf, KINST_FBSD_TF_R13) = r->gpr[KINST_R13];
	TFW(tf, KINST_FBSD_TF_R14) = r->gpr[KINST_R14];
	TFW(tf, KINST_FBSD_TF_R15) = r->gpr[KINST_R15];
	TFW(tf, KINST_FBSD_TF_RIP) = r->rip;
	TFW(tf, KINST_FBSD_TF_RFLAGS) = r->rflags;
}

int
kinst_fbsd_hit(struct kinst_engine *e, void *tf, uint64_t *trap_sp,
    uint64_t *faults)
{
	struct kinst_regs r;

	kinst_fbsd_frame_to_regs(tf, &r);
	if (!kinst_engine_trap(e, &r, tf, trap_sp, faults))
		return (0);
	kinst_fbsd_regs_to_frame(&r, tf);
	return (1);
}

/*
 * Functions that run with pcb_onfault armed: a fault inside them is
 * recovered by jumping to the handler pcb_onfault names, which is only
 * correct while the faulting instruction is theirs.  Executed out of line,
 * the faulting instruction would be in a trampoline and the recovery would
 * skip the trampoline's jump back (and run with interrupts off).  FreeBSD
 * 15.1's users (docs/freebsd.md, section 5):
 *
 * - amd64/amd64/support.S: the copyin/copyout family, fu*, su*, casueword*,
 *   copyinstr*, rdmsr_safe, wrmsr_safe.  Every variant (_nosmap_std,
 *   _smap_erms, ...) is covered by the prefix.
 * - amd64/linux/linux_support.S (linux64.ko) and
 *   amd64/linux32/linux32_support.S (linux.ko): the futex helpers
 *   futex_{xchgl,addl,orl,andl,xorl}_{nosmap,smap}.
 * - amd64/sgx/sgx_support.S (sgx.ko): sgx_encls.
 * - amd64/amd64/efirt_support.S: efi_rt_arch_call (around the call into
 *   the EFI runtime service) and efi_rt_fault, the handler it names, which
 *   runs with pcb_onfault still set until it clears it (trap() does not).
 *
 * The futex prefixes also cover the ifuncs' resolvers (harmless: refusing
 * too much is safe, too little is not).  kinst_os_func_check() also refuses
 * any function whose code kinst_fbsd_arms_onfault() finds arming
 * pcb_onfault; the list stays for what that scan cannot see.
 */
const char *const kinst_fbsd_onfault[] = {
	"copyin*", "copyout*", "copyinstr*",
	"fubyte*", "fuword*", "fueword*",
	"subyte*", "suword*",
	"casueword*", "casuword*",
	"rdmsr_safe", "wrmsr_safe",
	"futex_xchgl*", "futex_addl*", "futex_orl*", "futex_andl*",
	"futex_xorl*",
	"sgx_encls",
	"efi_rt_arch_call", "efi_rt_fault",
};
const size_t kinst_fbsd_nonfault = KINST_NELEM(kinst_fbsd_onfault);

/*
 * Functions kinst refuses on FreeBSD (kinst_name_listed(): "x*" is a
 * prefix).  Besides these, the shim refuses its own module as a whole and
 * every address in [start_exceptions, end_exceptions) of the kernel when
 * those symbols exist (the trap and interrupt entry code of exception.S,
 * apic_vector.S, atpic_vector.S).
 *
 * - Trap and interrupt entry/exit by name (covers kernels without the
 *   start_exceptions/end_exceptions markers): the IDT vectors (IDTVEC(x)
 *   is "Xx"), alltraps*, calltrap, doreti*, fast_syscall*, the NMI/MC#
 *   paths, fork_trampoline, the IBRS entry/exit helpers, and the C trap
 *   handlers the #BP path falls back to (trap, trap_check, trap_fatal).
 * - What runs in NMI context: nmi_*, ipi_nmi_handler, cpustop_handler,
 *   cpususpend_handler.  The #BP return (doreti's iretq) would end the
 *   CPU's NMI blocking while the NMI handler is still running on its IST
 *   stack, and a second NMI would then overwrite that stack.  (Other code
 *   an NMI may call, e.g. hwpmc's sample handler, has the same problem and
 *   is not listed: see docs/freebsd.md.)  mca_intr (MC#) likewise.
 * - The debuggers and DTrace: kdb_*, db_*, gdb_*, dtrace_*; kinst_* (a
 *   kernel with kinst compiled in).
 * - Lock owner methods (owner_mtx, owner_rm, owner_rw, owner_sx), which
 *   upstream kinst excludes because probe context may call them.
 * - Context switch assembly: cpu_switch, cpu_throw, savectx, resumectx.
 * - What the control path runs while probes are live on other CPUs:
 *   disable_wp/restore_wp, smp_rendezvous*.
 * - What the trap handler calls: the clock (binuptime, sbinuptime and the
 *   timecounter read functions: TSC, HPET, ACPI, i8254, KVM/pvclock,
 *   Hyper-V MSR and reference-TSC, Xen), and memcpy/memset/memmove/bcopy/bzero,
 *   which the compiler may emit for structure copies.
 *
 * "X*" also refuses the few C functions whose name starts with a capital
 * X (e.g. zstd's XXH*): refusing too much is safe, too little is not.
 *
 * Each group below is refused with its own class (ABI 1.13),
 * "excluded-function (CLASS)": entry code, breakpoint path, noinstr (the
 * NMI paths), oops and debugger, kinst itself, called by kinst's handler,
 * context switch, text patching.
 */
static const char *const fbsd_excl_entry[] = {
	"X*", "alltraps*", "calltrap", "doreti*", "fast_syscall*",
	"mchk_calltrap", "fork_trampoline", "handle_ibrs_*",
};
static const char *const fbsd_excl_breakpoint[] = {
	"trap", "trap_check", "trap_fatal", "trap_pfault", "dblfault_handler",
};
static const char *const fbsd_excl_nmi[] = {
	"ipi_nmi_handler", "nmi_*", "cpustop_handler", "cpususpend_handler",
	"mca_intr",
};
static const char *const fbsd_excl_debugger[] = {
	"kdb_*", "db_*", "gdb_*", "dtrace_*",
};
static const char *const fbsd_excl_self[] = {
	"kinst_*",
};
static const char *const fbsd_excl_handler[] = {
	"owner_mtx", "owner_rm", "owner_rw", "owner_sx",
	"binuptime", "sbinuptime", "tsc_get_timecount*", "hpet_get_timecount",
	"acpi_timer_get_timecount*", "i8254_get_timecount", "kvm_clock_*",
	"pvclock_*", "hyperv_get_timecount", "hyperv_tsc_timecount*",
	"hyperv_tc64_*", "xentimer_get_timecount", "xen_fetch_vcpu_time",
	"memcpy*", "memmove*", "memset*", "bcopy*", "bzero*", "__memcpy*",
	"__memset*", "__memmove*",
};
static const char *const fbsd_excl_switch[] = {
	"cpu_switch", "cpu_throw", "savectx", "resumectx",
};
static const char *const fbsd_excl_patching[] = {
	"disable_wp", "restore_wp", "smp_rendezvous*",
};
const struct kinst_fbsd_excl kinst_fbsd_excluded[] = {
	{ fbsd_excl_entry, KINST_NELEM(fbsd_excl_entry), KINST_R_EXCL_ENTRY },
	{ fbsd_excl_breakpoint, KINST_NELEM(fbsd_excl_breakpoint),
	    KINST_R_EXCL_BREAKPOINT },
	{ fbsd_excl_nmi, KINST_NELEM(fbsd_excl_nmi), KINST_R_EXCL_NOINSTR },
	{ fbsd_excl_debugger, KINST_NELEM(fbsd_excl_debugger),
	    KINST_R_EXCL_DEBUGGER },
	{ fbsd_excl_self, KINST_NELEM(fbsd_excl_self), KINST_R_EXCL_SELF },
	{ fbsd_excl_handler, KINST_NELEM(fbsd_excl_handler),
	    KINST_R_EXCL_HANDLER },
	{ fbsd_excl_switch, KINST_NELEM(fbsd_excl_switch),
	    KINST_R_EXCL_SCHED },
	{ fbsd_excl_patching, KINST_NELEM(fbsd_excl_patching),
	    KINST_R_EXCL_PATCHING },
};
const size_t kinst_fbsd_nexcluded = KINST_NELEM(kinst_fbsd_excluded);

int
kinst_fbsd_func_reason(const char *name)
{
	size_t i;

	if (kinst_name_listed(name, kinst_fbsd_onfault, kinst_fbsd_nonfault))
		return (KINST_R_ONFAULT);
	for (i = 0; i < kinst_fbsd_nexcluded; i++)
		if (kinst_name_listed(name, kinst_fbsd_excluded[i].names,
		    kinst_fbsd_excluded[i].n))
			return (kinst_fbsd_excluded[i].reason);
	return (KINST_R_NONE);
}

/*
 * The pcb_onfault scan (kinst_freebsd.h).  Every FreeBSD 15.1 user arms
 * the handler with "movq PCPU(CURPCB),%reg" (a %gs-relative load of
 * pc_curpcb) and later "movq $handler,PCB_ONFAULT(%reg)" (or a register
 * source); PCB_ONFAULT is offsetof(struct pcb, pcb_onfault).
 */

/* The register (0..15) a "mov %gs:curpcb_off, %reg" loads, or -1. */
static int
onfault_curpcb_load(const struct kinst_insn *in, uint32_t curpcb_off)
{
	if (in->enc != KINST_ENC_LEGACY || in->map != KINST_MAP_1BYTE ||
	    in->seg != 0x65 || in->disp != (int64_t)curpcb_off)
		return (-1);
	if (in->opcode == 0xa1)		/* movabs %gs:moffs, %rax */
		return (KINST_RAX);
	if (in->opcode != 0x8b || in->mod == 3 || in->rip_relative)
		return (-1);
	return (in->reg | (in->rex_r << 3));
}

/*
 * The base register (0..15) of a memory operand without an index register
 * or RIP, or -1.
 */
static int
onfault_mem_base(const struct kinst_insn *in)
{
	if (in->mod == 3 || in->rip_relative)
		return (-1);
	if (!in->has_sib)
		return (in->rm | (in->rex_b << 3));
	if (((in->sib >> 3) & 7) != 4 || in->rex_x != 0)
		return (-1);		/* an index */
	if ((in->sib & 7) == 5 && in->mod == 0)
		return (-1);		/* no base: disp32 alone */
	return ((in->sib & 7) | (in->rex_b << 3));
}

/*
 * Is this a store of 4 or 8 bytes ("mov %reg, m": 89; "mov $imm, m":
 * C7 /0) to [base + onfault_off], base one of the registers in pcbregs?
 */
static bool
onfault_store(const struct kinst_insn *in, uint32_t pcbregs,
    uint32_t onfault_off)
{
	int base;

	if (in->enc != KINST_ENC_LEGACY || in->map != KINST_MAP_1BYTE ||
	    in->opsize < 4 || in->disp != (int64_t)onfault_off)
		return (false);
	if (in->opcode != 0x89 && !(in->opcode == 0xc7 && in->reg == 0))
		return (false);
	base = onfault_mem_base(in);
	return (base >= 0 && ((pcbregs >> base) & 1) != 0);
}

bool
kinst_fbsd_arms_onfault(const uint8_t *code, size_t len,
    uint32_t curpcb_off, uint32_t onfault_off)
{
	struct kinst_insn in;
	uint32_t pcbregs;	/* loaded from %gs:curpcb_off somewhere before */
	size_t off;
	int r;

	pcbregs = 0;
	for (off = 0; off < len; off += in.len) {
		if (kinst_decode(code + off, len - off, &in) != KINST_DEC_OK) {
			in.len = 1;	/* resynchronize one byte further */
			continue;
		}
		if (onfault_store(&in, pcbregs, onfault_off))
			return (true);
		if ((r = onfault_curpcb_load(&in, curpcb_off)) >= 0)
			pcbregs |= 1u << r;
	}
	return (false);
}

static bool
str_eq(const char *a, const char *b)
{
	while (*a != '\0' && *a == *b) {
		a++;
		b++;
	}
	return (*a == *b);
}

bool
kinst_fbsd_is_kernel_file(const char *filename)
{
	return (str_eq(filename, "kernel"));
}

int
kinst_fbsd_file_ioctl(uint32_t group, uint32_t nr, uint32_t size,
    uint32_t dir, const void *data)
{
	int32_t on;

	if (group != KINST_FBSD_FIO_GROUP || dir != KINST_DEV_IN ||
	    size != sizeof(int32_t))
		return (-1);
	if (nr == KINST_FBSD_FIONBIO_NR)
		return (0);
	if (nr != KINST_FBSD_FIOASYNC_NR)
		return (-1);
	kinst_copy(&on, data, sizeof(on));
	return (on != 0 ? KINST_EINVAL : 0);
}

bool
kinst_fbsd_modname_match(const char *want, const char *filename)
{
	size_t i;

	if (want[0] == '\0' || str_eq(want, "kernel"))
		return (kinst_fbsd_is_kernel_file(filename));
	for (i = 0; want[i] != '\0' && want[i] == filename[i]; i++)
		;
	if (want[i] != '\0')
		return (false);
	return (filename[i] == '\0' || str_eq(filename + i, ".ko"));
}

void
kinst_fbsd_modname(const char *filename, char *out, size_t size)
{
	size_t i, len;

	for (len = 0; filename[len] != '\0'; len++)
		;
	if (len > 3 && str_eq(filename + len - 3, ".ko"))
		len -= 3;
	for (i = 0; i < len && i + 1 < size; i++)
		out[i] = filename[i];
	out[i] = '\0';
}

int
kinst_fbsd_mod_load(struct kinst_fbsd_mod *m)
{
	const struct kinst_fbsd_step *st;
	int error;

	if (m->ndone != 0)
		return (0);	/* already loaded: nothing to do twice */
	while (m->ndone < m->nsteps) {
		st = &m->steps[m->ndone];
		error = st->setup != NULL ? st->setup(m->ctx) : 0;
		if (error != 0) {
			m->failed = st->name;
			while (m->ndone > 0) {
				st = &m->steps[--m->ndone];
				if (st->teardown != NULL)
					st->teardown(m->ctx);
			}
			return (error);
		}
		m->ndone++;
	}
	return (0);
}

int
kinst_fbsd_mod_unload(struct kinst_fbsd_mod *m)
{
	const struct kinst_fbsd_step *st;
	int error;

	if (m->ndone == 0)
		return (0);
	if (m->busy != NULL && (error = m->busy(m->ctx)) != 0)
		return (error);
	while (m->ndone > 0) {
		st = &m->steps[--m->ndone];
		if (st->teardown != NULL)
			st->teardown(m->ctx);
	}
	return (0);
}

size_t
kinst_fbsd_trapgate_build(uint8_t *out, uint64_t word)
{
	static const uint8_t head[] = {
		0xf3, 0x0f, 0x1e, 0xfa,		/* endbr64 */
		0x9c,				/* pushfq */
		0xfa,				/* cli */
		0x48, 0xb8,			/* movabs $word, %rax */
	};
	static const uint8_t tail[] = {
		0x48, 0x8b, 0x00,		/* movq (%rax), %rax */
		0x48, 0x85, 0xc0,		/* testq %rax, %rax */
		0x74, 0x04,			/* je 1f */
		0xff, 0xd0,			/* call *%rax */
		0x9d,				/* popfq */
		0xc3,				/* ret */
		0x9d,				/* 1: popfq */
		0x31, 0xc0,			/* xorl %eax, %eax */
		0xc3,				/* ret */
	};
	size_t i;

	kinst_copy(out, head, sizeof(head));
	for (i = 0; i < 8; i++)
		out[sizeof(head) + i] = (uint8_t)(word >> (8 * i));
	kinst_copy(out + sizeof(head) + 8, tail, sizeof(tail));
	return (sizeof(head) + 8 + sizeof(tail));
}

int
kinst_fbsd_guard_event(struct kinst_fbsd_mod *kinst, enum kinst_fbsd_ev ev)
{
	switch (ev) {
	case KINST_FBSD_EV_LOAD:
		return (kinst->ndone == kinst->nsteps && kinst->nsteps != 0 ?
		    0 : KINST_ENXIO);
	case KINST_FBSD_EV_UNLOAD:
		return (kinst_fbsd_mod_unload(kinst));
	case KINST_FBSD_EV_QUIESCE:
	case KINST_FBSD_EV_SHUTDOWN:
		return (0);
	default:
		return (KINST_EOPNOTSUPP);
	}
}

bool
kinst_fbsd_gate_enter(struct kinst_fbsd_gate *g)
{
	__atomic_add_fetch(&g->nfiles, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&g->shut, __ATOMIC_SEQ_CST) != 0) {
		__atomic_sub_fetch(&g->nfiles, 1, __ATOMIC_SEQ_CST);
		return (false);
	}
	return (true);
}

void
kinst_fbsd_gate_leave(struct kinst_fbsd_gate *g)
{
	__atomic_sub_fetch(&g->nfiles, 1, __ATOMIC_SEQ_CST);
}

bool
kinst_fbsd_gate_shut(struct kinst_fbsd_gate *g)
{
	__atomic_store_n(&g->shut, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&g->nfiles, __ATOMIC_SEQ_CST) != 0) {
		__atomic_store_n(&g->shut, 0, __ATOMIC_SEQ_CST);
		return (false);
	}
	return (true);
}

void
kinst_fbsd_gate_reopen(struct kinst_fbsd_gate *g)
{
	__atomic_store_n(&g->shut, 0, __ATOMIC_SEQ_CST);
}

uint32_t
kinst_fbsd_gate_nfiles(const struct kinst_fbsd_gate *g)
{
	return (__atomic_load_n(&g->nfiles, __ATOMIC_SEQ_CST));
}

int
kinst_fbsd_unload_check(struct kinst_fbsd_gate *g, const uint32_t *nprobes,
    const bool *jumps_used)
{
	if (!kinst_fbsd_gate_shut(g))
		return (KINST_FBSD_UNLOAD_FILES_OPEN);
	if (__atomic_load_n(nprobes, __ATOMIC_SEQ_CST) != 0) {
		kinst_fbsd_gate_reopen(g);
		return (KINST_FBSD_UNLOAD_PROBES_LEFT);
	}
	if (__atomic_load_n(jumps_used, __ATOMIC_SEQ_CST)) {
		kinst_fbsd_gate_reopen(g);
		return (KINST_FBSD_UNLOAD_JUMPS_USED);
	}
	return (KINST_FBSD_UNLOAD_OK);
}

bool
kinst_fbsd_tramp_admit(struct kinst_fbsd_tramps *t, uint64_t size)
{
	uint64_t cap;

	cap = t->cap != 0 ? t->cap : KINST_FBSD_TRAMP_CAP;
	if (size > cap || t->live + t->retired > cap - size) {
		t->refused++;
		return (false);
	}
	t->live += size;
	return (true);
}

void
kinst_fbsd_tramp_retire(struct kinst_fbsd_tramps *t, uint64_t size)
{
	t->live -= size <= t->live ? size : t->live;
	t->retired += size;
	t->nretired++;
}

void
kinst_fbsd_tramp_cancel(struct kinst_fbsd_tramps *t, uint64_t size)
{
	t->live -= size <= t->live ? size : t->live;
}

int
kinst_fbsd_nofault_fixup(void *tf, uint32_t trapno, uint32_t active,
    const struct kinst_fbsd_nofault *nf)
{
	uint64_t rip;

	if (active == 0)
		return (0);
	if ((TFR(tf, KINST_FBSD_TF_CS) & 3) != 0)
		return (0);	/* user mode */
	rip = TFR(tf, KINST_FBSD_TF_RIP);
	if (rip >= nf->ustart && rip < nf->uend) {
		if (trapno != KINST_FBSD_T_PAGEFLT ||
		    TFR(tf, KINST_FBSD_TF_ADDR) >= nf->ulimit)
			return (0);
		TFW(tf, KINST_FBSD_TF_RFLAGS) &= ~KINST_FBSD_PSL_AC;
		TFW(tf, KINST_FBSD_TF_RIP) = nf->ufail;
		return (1);
	}
	switch (trapno) {
	case KINST_FBSD_T_PAGEFLT:
	case KINST_FBSD_T_PROTFLT:
	case KINST_FBSD_T_SEGNPFLT:
	case KINST_FBSD_T_STKFLT:
		break;
	default:
		return (0);
	}
	if (rip < nf->start || rip >= nf->end)
		return (0);
	TFW(tf, KINST_FBSD_TF_RIP) = nf->fail;
	return (1);
}

bool
kinst_fbsd_user_range_ok(uint64_t addr, uint64_t len, uint64_t limit)
{
	return (len != 0 && addr < limit && len <= limit - addr);
}

bool
kinst_fbsd_kread_ok(uint64_t addr, uint64_t len, bool la57)
{
	return (kinst_kaddr_ok(addr, len, 0, la57 ? 57 : 48, 0, 0) != 0);
}
