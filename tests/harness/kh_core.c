/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The user-space breakpoint harness.
 *
 * A corpus function is always called through kh_invoke (kh_call.S), so every
 * run starts from the same register file, flags and stack pointer, on a
 * fixed stack that is zeroed before the run.  Signal handlers run on an
 * alternate stack, so no signal frame ever touches that stack.
 *
 *  - untraced run: the reference return registers, scratch and stack;
 *  - single-step run (TF set by the popf right before the call): every
 *    SIGTRAP inside the function records the register file about to execute
 *    the instruction at rip: the ground truth;
 *  - traced run: int3 on one boundary (or all of them); the SIGTRAP handler
 *    maps the signal context to struct kinst_regs, calls kinst_engine_hit()
 *    and maps the result back: the kernel's exact code path.  The records
 *    in the session ring must equal the ground truth at that address, in
 *    order, and the run must end with the same registers and memory.
 */
#include <sys/mman.h>
#include <sys/time.h>

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "kh_core.h"
#include "x86/kinst_jopt.h"
#include "kinst_engine.h"
#include "x86/kinst_detour.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_tstate.h"

#define	KH_STACK_SIZE	(64 * 1024)
#define	KH_ALTSTACK	(256 * 1024)
#define	KH_RING_SIZE	(16u * 1024 * 1024)
#define	KH_GT_MAX	(1u << 17)	/* in-function steps recorded per run */
#define	KH_STEP_MAX	(4u << 20)	/* total steps per run */
#define	KH_TRAMP_AREA	(2u * 1024 * 1024)
#define	KH_TRAMP_SLOTS	(KH_TRAMP_AREA / KINST_TRAMP_SIZE)
#define	KH_MAX_BOUNDS	4096
#define	KH_MAX_DETAIL	5
#define	KH_FL_TF	0x100ull
/* Flags compared: the arithmetic ones and DF (TF differs by design). */
#define	KH_FL_CMP	(KINST_FL_ARITH | KINST_FL_DF)
#define	KH_IN_FLAGS	(0x202ull | KINST_FL_CF | KINST_FL_ZF | KINST_FL_AF)

enum kh_mode { KH_IDLE = 0, KH_STEP, KH_TRACE };

#define	KH_MT_RING	(4u * 1024 * 1024)

/* ---- state shared with the signal handlers ---- */
static volatile sig_atomic_t kh_mode;
static volatile sig_atomic_t kh_in_run;
static sigjmp_buf kh_jmp;
static struct {
	int		sig;
	int		code;
	uint64_t	rip;
	uint64_t	addr;
	int		hitres;
} kh_fault;

static int kh_inject;			/* KH_INJ_*: harness self-test */
/*
 * kh_check_jump's phase 1 (int3 in, jresume set): an out-of-line hit must
 * resume in the detour area, never at a trampoline, which would jump back
 * into the window's interior.  Counted by the trap handler.
 */
static volatile int kh_jphase1;
static volatile uint64_t kh_jphase1_tramp;
#define	KH_JREF_INPUTS	64
static uint8_t kh_jref_scratch[KH_JREF_INPUTS][sizeof(struct kh_scratch)];
static uint8_t kh_jref_stack[KH_JREF_INPUTS][KH_STACK_SIZE];
static uint64_t kh_sti_expected;	/* redirects to a sti variant (atomic) */
static uint64_t kh_sti_emulated;	/* sti stood in for by kh_on_fault (atomic) */
static uint64_t kh_fstart, kh_fend;	/* function being stepped */
static struct kinst_regs *kh_gt;	/* ground truth states */
static uint32_t kh_ngt;
static uint32_t kh_nsteps;
static int kh_gt_overflow;
static uint64_t kh_prev_rip;
static uint64_t kh_folded;		/* rep-string iteration traps folded */
/*
 * With kh_gt_snap set, each ground-truth state also keeps the KH_SNAP bytes
 * at its %rsp (kh_check_programs compares captures with them).
 */
#define	KH_SNAP		16
static int kh_gt_snap;
static uint8_t (*kh_gt_mem)[KH_SNAP];
/* kh_vars_run: called for each ground-truth state, in the SIGTRAP handler. */
static kh_vstep_fn kh_vhook;
static void *kh_vhook_ctx;

static struct kinst_engine kh_eng;
static struct kinst_session kh_sess;
static struct kinst_ring kh_ring;
static struct kinst_pcpu_count kh_hits[1];
static uint8_t *kh_ringbuf, *kh_recbuf;

static uint8_t kh_stack[KH_STACK_SIZE] __attribute__((aligned(64)));
static uint8_t *kh_tramp_rx, *kh_tramp_rw;
static long kh_pagesz;

/* ---- helpers ---- */

static void
kh_regs_from_uc(const ucontext_t *uc, struct kinst_regs *r)
{
	const greg_t *g = uc->uc_mcontext.gregs;

	r->gpr[KINST_RAX] = (uint64_t)g[REG_RAX];
	r->gpr[KINST_RCX] = (uint64_t)g[REG_RCX];
	r->gpr[KINST_RDX] = (uint64_t)g[REG_RDX];
	r->gpr[KINST_RBX] = (uint64_t)g[REG_RBX];
	r->gpr[KINST_RSP] = (uint64_t)g[REG_RSP];
	r->gpr[KINST_RBP] = (uint64_t)g[REG_RBP];
	r->gpr[KINST_RSI] = (uint64_t)g[REG_RSI];
	r->gpr[KINST_RDI] = (uint64_t)g[REG_RDI];
	r->gpr[KINST_R8] = (uint64_t)g[REG_R8];
	r->gpr[KINST_R9] = (uint64_t)g[REG_R9];
	r->gpr[KINST_R10] = (uint64_t)g[REG_R10];
	r->gpr[KINST_R11] = (uint64_t)g[REG_R11];
	r->gpr[KINST_R12] = (uint64_t)g[REG_R12];
	r->gpr[KINST_R13] = (uint64_t)g[REG_R13];
	r->gpr[KINST_R14] = (uint64_t)g[REG_R14];
	r->gpr[KINST_R15] = (uint64_t)g[REG_R15];
	r->rip = (uint64_t)g[REG_RIP];
	r->rflags = (uint64_t)g[REG_EFL];
	r->cs = (uint16_t)((uint64_t)g[REG_CSGSFS] & 0xffff);
	r->ss = (uint16_t)((uint64_t)g[REG_CSGSFS] >> 48);
	r->_pad = 0;
}

static void
kh_regs_to_uc(const struct kinst_regs *r, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	g[REG_RAX] = (greg_t)r->gpr[KINST_RAX];
	g[REG_RCX] = (greg_t)r->gpr[KINST_RCX];
	g[REG_RDX] = (greg_t)r->gpr[KINST_RDX];
	g[REG_RBX] = (greg_t)r->gpr[KINST_RBX];
	g[REG_RSP] = (greg_t)r->gpr[KINST_RSP];
	g[REG_RBP] = (greg_t)r->gpr[KINST_RBP];
	g[REG_RSI] = (greg_t)r->gpr[KINST_RSI];
	g[REG_RDI] = (greg_t)r->gpr[KINST_RDI];
	g[REG_R8] = (greg_t)r->gpr[KINST_R8];
	g[REG_R9] = (greg_t)r->gpr[KINST_R9];
	g[REG_R10] = (greg_t)r->gpr[KINST_R10];
	g[REG_R11] = (greg_t)r->gpr[KINST_R11];
	g[REG_R12] = (greg_t)r->gpr[KINST_R12];
	g[REG_R13] = (greg_t)r->gpr[KINST_R13];
	g[REG_R14] = (greg_t)r->gpr[KINST_R14];
	g[REG_R15] = (greg_t)r->gpr[KINST_R15];
	g[REG_RIP] = (greg_t)r->rip;
	g[REG_EFL] = (greg_t)r->rflags;
}

/*
 * A repeated string instruction single-steps once per iteration with rip
 * unchanged; the probe fires once per execution.  Recognized without the
 * decoder under test: legacy/REX prefixes, then a string opcode.
 */
static bool
kh_is_rep_string(uint64_t rip)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)rip;
	bool rep = false;
	int i;

	for (i = 0; i < 14; i++, p++) {
		if (*p == 0xf2 || *p == 0xf3)
			rep = true;
		else if (*p == 0x66 || *p == 0x67 || *p == 0x2e ||
		    *p == 0x3e || *p == 0x26 || *p == 0x36 || *p == 0x64 ||
		    *p == 0x65 || *p == 0xf0)
			continue;
		else if ((*p & 0xf0) == 0x40)
			continue;
		else
			break;
	}
	return (rep && ((*p >= 0x6c && *p <= 0x6f) ||
	    (*p >= 0xa4 && *p <= 0xa7) || (*p >= 0xaa && *p <= 0xaf)));
}

/* Is rip the start of a sti trampoline variant (tramp + KINST_TRAMP_STI)? */
static bool
kh_is_sti_variant(uint64_t rip)
{
	uint64_t base = (uint64_t)(uintptr_t)kh_tramp_rx;

	return (kh_tramp_rx != NULL && rip >= base &&
	    rip < base + KH_TRAMP_AREA &&
	    (rip - base) % KINST_TRAMP_SIZE == KINST_TRAMP_STI);
}

/*
 * The stand-in for the sti that ends a sti trampoline variant: #GP in user
 * mode (SIGSEGV, SI_KERNEL) at an sti byte in the second half of a
 * trampoline slot, while the engine manages IF.  Skip it (IF is always set
 * in user mode) and count it; anything else is a real fault.
 */
static bool
kh_sti_standin(int sig, const siginfo_t *si, ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t rip = (uint64_t)g[REG_RIP];
	uint64_t base = (uint64_t)(uintptr_t)kh_tramp_rx;

	if (sig != SIGSEGV || si->si_code != SI_KERNEL ||
	    !kh_eng.manage_if || kh_tramp_rx == NULL || rip < base ||
	    rip >= base + KH_TRAMP_AREA ||
	    (rip - base) % KINST_TRAMP_SIZE < KINST_TRAMP_STI ||
	    *(const uint8_t *)(uintptr_t)rip != 0xfb)
		return (false);
	g[REG_RIP] = (greg_t)(rip + 1);
	__atomic_fetch_add(&kh_sti_emulated, 1, __ATOMIC_RELAXED);
	return (true);
}

/*
 * Sharing (kh_check_shared): after the kh_unsub_at-th hit of a traced run
 * (0: never), kh_unsub_b() takes session B's subscribers out of every
 * chain, as the control path would between two hits.
 */
static uint64_t kh_unsub_at, kh_unsub_hits;
static void kh_unsub_b(void);

static void
kh_on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	struct kinst_regs regs;
	uint64_t rip;
	int res;

	(void)sig;
	switch (kh_mode) {
	case KH_STEP:
		rip = (uint64_t)g[REG_RIP];
		if (rip == (uint64_t)(uintptr_t)kh_invoke_ret) {
			g[REG_EFL] &= ~(greg_t)KH_FL_TF;
			kh_mode = KH_IDLE;
			return;
		}
		if (++kh_nsteps > KH_STEP_MAX) {
			g[REG_EFL] &= ~(greg_t)KH_FL_TF;
			kh_gt_overflow = 1;
			kh_mode = KH_IDLE;
			return;
		}
		if (rip == kh_prev_rip && kh_is_rep_string(rip)) {
			kh_folded++;
			return;
		}
		if (rip >= kh_fstart && rip < kh_fend) {
			if (kh_ngt >= KH_GT_MAX) {
				g[REG_EFL] &= ~(greg_t)KH_FL_TF;
				kh_gt_overflow = 1;
				kh_mode = KH_IDLE;
				return;
			}
			if (kh_gt_snap && kinst_os_read_user(
			    (uint64_t)g[REG_RSP], kh_gt_mem[kh_ngt], KH_SNAP) != 0)
				memset(kh_gt_mem[kh_ngt], 0xee, KH_SNAP);
			kh_regs_from_uc(uc, &kh_gt[kh_ngt++]);
			if (kh_vhook != NULL)
				kh_vhook(kh_vhook_ctx, kh_ngt - 1,
				    &kh_gt[kh_ngt - 1]);
		}
		kh_prev_rip = rip;
		return;
	case KH_TRACE:
		kh_regs_from_uc(uc, &regs);
		regs.rip -= 1;		/* the int3 byte */
		if (kh_fake_clock)
			kh_fake_now += kh_clock_weight(regs.rip);
		res = kinst_engine_hit(&kh_eng, &regs);
		if (kh_unsub_at != 0 && ++kh_unsub_hits == kh_unsub_at)
			kh_unsub_b();
		if (res == KINST_HIT_REDIRECT && kh_is_sti_variant(regs.rip))
			__atomic_fetch_add(&kh_sti_expected, 1,
			    __ATOMIC_RELAXED);
		if (res == KINST_HIT_REDIRECT && kh_jphase1 &&
		    regs.rip < (uint64_t)(uintptr_t)kh_tramp_rx + KH_TRAMP_AREA / 2)
			kh_jphase1_tramp++;
		if (res == KINST_HIT_REDIRECT && kh_inject == KH_INJ_REG)
			regs.gpr[KINST_RDX] ^= 0x10;
		if (res == KINST_HIT_EMULATED && kh_inject == KH_INJ_FLAGS)
			regs.rflags ^= KINST_FL_CF | KINST_FL_ZF;
		if (res == KINST_HIT_REDIRECT && kh_inject == KH_INJ_RIP)
			regs.rip = (regs.rip & ~(uint64_t)(KINST_TRAMP_SIZE - 1)) +
			    KINST_TRAMP_SIZE - 1;
		if (res == KINST_HIT_EMULATED && kh_inject == KH_INJ_STACK)
			regs.gpr[KINST_RSP] -= 8;
		if (res == KINST_HIT_REDIRECT || res == KINST_HIT_EMULATED) {
			kh_regs_to_uc(&regs, uc);
			return;
		}
		kh_fault.hitres = res;
		break;
	default:
		break;
	}
	/* A trap nobody expected. */
	kh_fault.sig = SIGTRAP;
	kh_fault.code = si->si_code;
	kh_fault.rip = (uint64_t)g[REG_RIP];
	kh_fault.addr = (uint64_t)(uintptr_t)si->si_addr;
	if (kh_in_run) {
		kh_mode = KH_IDLE;
		siglongjmp(kh_jmp, 1);
	}
	abort();
}

static void
kh_on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	if (kh_sti_standin(sig, si, uc))
		return;
	if (!kh_in_run) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	kh_mode = KH_IDLE;
	kh_fault.sig = sig;
	kh_fault.code = si->si_code;
	kh_fault.rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	kh_fault.addr = (uint64_t)(uintptr_t)si->si_addr;
	siglongjmp(kh_jmp, 1);
}

/* ---- symbols ---- */

struct kh_sym {
	char		*name;
	uint64_t	addr;
	uint64_t	size;
};
static struct kh_sym *kh_syms;
static size_t kh_nsyms;

static int
kh_load_symbols(char *errbuf, size_t errlen)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *data;
	uint64_t bias = 0;
	bool have_bias = false;
	size_t i, n;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(errbuf, errlen, "libelf: %s", elf_errmsg(-1));
		return (-1);
	}
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0) {
		snprintf(errbuf, errlen, "/proc/self/exe: %s", strerror(errno));
		return (-1);
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf == NULL) {
		snprintf(errbuf, errlen, "elf_begin: %s", elf_errmsg(-1));
		close(fd);
		return (-1);
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		if (data == NULL || sh.sh_entsize == 0)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		kh_syms = calloc(n, sizeof(*kh_syms));
		if (kh_syms == NULL)
			break;
		for (i = 0; i < n; i++) {
			const char *name;

			if (gelf_getsym(data, (int)i, &sym) == NULL ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name == NULL)
				continue;
			kh_syms[kh_nsyms].name = strdup(name);
			kh_syms[kh_nsyms].addr = sym.st_value;
			kh_syms[kh_nsyms].size = sym.st_size;
			if (strcmp(name, "kh_invoke") == 0) {
				bias = (uint64_t)(uintptr_t)kh_invoke -
				    sym.st_value;
				have_bias = true;
			}
			kh_nsyms++;
		}
		break;
	}
	elf_end(elf);
	close(fd);
	if (kh_nsyms == 0 || !have_bias) {
		snprintf(errbuf, errlen,
		    "/proc/self/exe has no symbol table (stripped?)");
		return (-1);
	}
	for (i = 0; i < kh_nsyms; i++)
		kh_syms[i].addr += bias;
	return (0);
}

static const struct kh_sym *
kh_find_symbol(const char *name)
{
	size_t i;

	for (i = 0; i < kh_nsyms; i++)
		if (strcmp(kh_syms[i].name, name) == 0)
			return (&kh_syms[i]);
	return (NULL);
}

/* ---- text and trampolines ---- */

static void
kh_text_write(uint64_t addr, uint8_t byte)
{
	uintptr_t pg = (uintptr_t)addr & ~(uintptr_t)(kh_pagesz - 1);

	if (mprotect((void *)pg, (size_t)kh_pagesz,
	    PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
		err(1, "mprotect RWX %#jx", (uintmax_t)pg);
	*(volatile uint8_t *)(uintptr_t)addr = byte;
	if (mprotect((void *)pg, (size_t)kh_pagesz,
	    PROT_READ | PROT_EXEC) != 0)
		err(1, "mprotect RX %#jx", (uintmax_t)pg);
}

static int
kh_tramp_setup(char *errbuf, size_t errlen)
{
	uint64_t text = (uint64_t)(uintptr_t)kh_invoke, cand;
	void *p;
	int fd, k, dir;

	fd = memfd_create("kinst-tramp", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, KH_TRAMP_AREA) != 0) {
		snprintf(errbuf, errlen, "memfd: %s", strerror(errno));
		return (-1);
	}
	kh_tramp_rw = mmap(NULL, KH_TRAMP_AREA, PROT_READ | PROT_WRITE,
	    MAP_SHARED, fd, 0);
	if (kh_tramp_rw == MAP_FAILED) {
		snprintf(errbuf, errlen, "mmap rw: %s", strerror(errno));
		return (-1);
	}
	/* An executable alias within +-2 GiB of our text (W^X, like a kernel). */
	for (k = 1; k < 100; k++) {
		for (dir = 1; dir >= -1; dir -= 2) {
			cand = (text & ~0xfffffull) +
			    (uint64_t)((int64_t)dir * k * (16ll << 20));
			if (cand < 0x10000000ull)
				continue;
			p = mmap((void *)(uintptr_t)cand, KH_TRAMP_AREA,
			    PROT_READ | PROT_EXEC,
			    MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uint64_t)(uintptr_t)p != cand) {
				munmap(p, KH_TRAMP_AREA);
				continue;
			}
			kh_tramp_rx = p;
			close(fd);
			return (0);
		}
	}
	snprintf(errbuf, errlen, "no executable mapping within 2 GiB of %#jx",
	    (uintmax_t)text);
	return (-1);
}

int
kh_setup(char *errbuf, size_t errlen)
{
	static int done;
	struct sigaction sa;
	stack_t ss;

	if (done)
		return (0);
	kh_pagesz = sysconf(_SC_PAGESIZE);
	kh_os_init();
	if (kh_load_symbols(errbuf, errlen) != 0)
		return (-1);
	if (kh_tramp_setup(errbuf, errlen) != 0)
		return (-1);
	kh_gt = calloc(KH_GT_MAX, sizeof(*kh_gt));
	kh_gt_mem = calloc(KH_GT_MAX, sizeof(*kh_gt_mem));
	kh_ringbuf = aligned_alloc(4096, KH_RING_SIZE);
	kh_recbuf = malloc(KH_RING_SIZE);
	ss.ss_sp = malloc(KH_ALTSTACK);
	ss.ss_size = KH_ALTSTACK;
	ss.ss_flags = 0;
	if (kh_gt == NULL || kh_ringbuf == NULL || kh_recbuf == NULL ||
	    ss.ss_sp == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		return (-1);
	}
	if (sigaltstack(&ss, NULL) != 0) {
		snprintf(errbuf, errlen, "sigaltstack: %s", strerror(errno));
		return (-1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = kh_on_trap;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, NULL) != 0) {
		snprintf(errbuf, errlen, "sigaction: %s", strerror(errno));
		return (-1);
	}
	sa.sa_sigaction = kh_on_fault;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	/* One "CPU" per thread: the main thread is 0, kh_check_concurrent's workers 0..n-1. */
	kinst_engine_init(&kh_eng, KH_MT_THREADS, false);
	if (kinst_ring_init(&kh_ring, kh_ringbuf, KH_RING_SIZE) != 0) {
		snprintf(errbuf, errlen, "kinst_ring_init failed");
		return (-1);
	}
	kinst_session_init(&kh_sess, &kh_ring, kh_hits, 1);
	done = 1;
	return (0);
}

const char *
kh_unsupported(const struct kh_fn *f)
{
	__builtin_cpu_init();
	if ((f->flags & KH_NEED_AVX2) && !__builtin_cpu_supports("avx2"))
		return ("CPU/OS without AVX2");
	if ((f->flags & KH_NEED_AVX512) && !__builtin_cpu_supports("avx512f"))
		return ("CPU/OS without AVX-512F");
	return (NULL);
}

/* ---- running a corpus function ---- */

struct kh_out {
	uint64_t	regs[16];
	uint64_t	flags;		/* arithmetic flags only */
	int		failed;		/* a signal ended the run */
	int		sig, code, hitres;
	uint64_t	rip, addr;
};

static uint8_t kh_ref_scratch[sizeof(struct kh_scratch)];
static uint8_t kh_ref_stack[KH_STACK_SIZE];
/*
 * The stack is compared from this offset up: a jump-optimized probe's
 * detour and handler run on the function's own stack, below its red zone
 * (kh_check_jump sets it; 0 compares all of it).
 */
static size_t kh_stack_cmp_from;

static void
kh_reset_memory(void)
{
	uint8_t *s = (uint8_t *)&kh_scratch;
	size_t i;

	for (i = 0; i < sizeof(kh_scratch); i++)
		s[i] = (uint8_t)(i * 37 + 11);
	memset(kh_stack, 0, sizeof(kh_stack));
}

static void
kh_run(const struct kh_fn *f, const uint64_t *args, int mode,
    struct kh_out *o)
{
	struct itimerval it;
	int i;

	kh_reset_memory();
	for (i = 0; i < 16; i++)
		kh_in_regs[i] = 0x0101010101010101ull * (uint64_t)(i + 1) ^
		    0x8000000000000000ull;
	kh_in_regs[KINST_RDI] = args[0];
	kh_in_regs[KINST_RSI] = args[1];
	kh_in_regs[KINST_RDX] = args[2];
	kh_in_regs[KINST_RCX] = args[3];
	kh_in_regs[KINST_R8] = args[4];
	kh_in_regs[KINST_R9] = args[5];
	kh_in_flags = KH_IN_FLAGS | (mode == KH_STEP ? KH_FL_TF : 0);
	kh_in_rsp = (uint64_t)(uintptr_t)(kh_stack + KH_STACK_SIZE - 256);
	kh_in_fn = (uint64_t)(uintptr_t)f->fn;
	memset(o, 0, sizeof(*o));
	memset(&kh_fault, 0, sizeof(kh_fault));

	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = mode == KH_STEP ? 30 : 5;
	if (sigsetjmp(kh_jmp, 1) == 0) {
		setitimer(ITIMER_REAL, &it, NULL);
		kh_in_run = 1;
		kh_mode = mode;
		kh_invoke();
		kh_mode = KH_IDLE;
		kh_in_run = 0;
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		memcpy(o->regs, kh_out_regs, sizeof(o->regs));
		o->flags = kh_out_flags & KH_FL_CMP;
		return;
	}
	kh_mode = KH_IDLE;
	kh_in_run = 0;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	o->failed = 1;
	o->sig = kh_fault.sig;
	o->code = kh_fault.code;
	o->rip = kh_fault.rip;
	o->addr = kh_fault.addr;
	o->hitres = kh_fault.hitres;
}

/* ---- reporting ---- */

static const char *const kh_gpr_names[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

static int kh_ndetail;
static bool kh_traced_b[KH_MAX_BOUNDS];	/* a record at boundary i compared */

static void
kh_detail_header(const char *fn, uint64_t start, uint64_t addr,
    const char *what, int input)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)addr;
	uint8_t len;
	int i;

	len = kinst_insn_length(b, 15);
	printf("DIVERGENCE %s+%#jx (%#jx) input #%d: %s\n  bytes:", fn,
	    (uintmax_t)(addr - start), (uintmax_t)addr, input, what);
	for (i = 0; i < (len ? len : 8); i++)
		printf(" %02x", b[i]);
	printf("\n");
}

static void
kh_print_regs_diff(const struct kinst_regs *exp, const struct kinst_regs *got)
{
	int i;

	printf("    %-6s %-18s %-18s\n", "reg", "expected", "got");
	for (i = 0; i < 16; i++)
		printf("    %-6s %016jx %016jx%s\n", kh_gpr_names[i],
		    (uintmax_t)exp->gpr[i], (uintmax_t)got->gpr[i],
		    exp->gpr[i] != got->gpr[i] ? "  <--" : "");
	printf("    %-6s %016jx %016jx%s\n", "rip", (uintmax_t)exp->rip,
	    (uintmax_t)got->rip, exp->rip != got->rip ? "  <--" : "");
	printf("    %-6s %016jx %016jx%s (arith+DF)\n", "rflags",
	    (uintmax_t)(exp->rflags & KH_FL_CMP),
	    (uintmax_t)(got->rflags & KH_FL_CMP),
	    ((exp->rflags ^ got->rflags) & KH_FL_CMP) ? "  <--" : "");
}

static bool
kh_regs_equal(const struct kinst_regs *a, const struct kinst_regs *b)
{
	return (memcmp(a->gpr, b->gpr, sizeof(a->gpr)) == 0 &&
	    a->rip == b->rip &&
	    ((a->rflags ^ b->rflags) & KH_FL_CMP) == 0);
}

/* Same outcome as the reference run?  NULL or what differs. */
static const char *
kh_outcome_diff(const struct kh_out *ref, const struct kh_out *o,
    char *buf, size_t len)
{
	const uint8_t *a, *b;
	size_t i;

	if (o->failed) {
		if (o->sig == SIGTRAP)
			snprintf(buf, len, "unexpected SIGTRAP (si_code %d, "
			    "engine result %d) at rip %#jx", o->code,
			    o->hitres, (uintmax_t)o->rip);
		else if (o->sig == SIGALRM)
			snprintf(buf, len, "run did not finish (timeout)");
		else
			snprintf(buf, len, "signal %d (%s) at rip %#jx addr "
			    "%#jx", o->sig, strsignal(o->sig),
			    (uintmax_t)o->rip, (uintmax_t)o->addr);
		return (buf);
	}
	for (i = 0; i < 16; i++)
		if (ref->regs[i] != o->regs[i]) {
			snprintf(buf, len, "returned with %s = %#jx, "
			    "untraced %#jx", kh_gpr_names[i],
			    (uintmax_t)o->regs[i], (uintmax_t)ref->regs[i]);
			return (buf);
		}
	if (ref->flags != o->flags) {
		snprintf(buf, len, "returned with flags (arith+DF) %#jx, "
		    "untraced %#jx", (uintmax_t)o->flags,
		    (uintmax_t)ref->flags);
		return (buf);
	}
	a = kh_ref_scratch;
	b = (const uint8_t *)&kh_scratch;
	for (i = 0; i < sizeof(kh_scratch); i++)
		if (a[i] != b[i]) {
			snprintf(buf, len, "scratch memory differs at offset "
			    "%#zx: %#x, untraced %#x", i, b[i], a[i]);
			return (buf);
		}
	for (i = kh_stack_cmp_from; i < KH_STACK_SIZE; i++)
		if (kh_ref_stack[i] != kh_stack[i]) {
			snprintf(buf, len, "stack differs at rsp%+zd: %#x, "
			    "untraced %#x", (ssize_t)i - (KH_STACK_SIZE - 256),
			    kh_stack[i], kh_ref_stack[i]);
			return (buf);
		}
	return (NULL);
}

/* ---- the checks ---- */

struct kh_func {
	const struct kh_fn *fn;
	const char	*name;
	uint64_t	start, size;
	uint32_t	nb;
	uint32_t	off[KH_MAX_BOUNDS];
	uint8_t		*orig;			/* copy of the function's bytes */
	bool		reached[KH_MAX_BOUNDS];
};

static struct kh_func kh_cur;

/* Bounds from the symbol table, boundaries by linear decode.  0 or -1. */
static int
kh_func_load(const struct kh_fn *fn, struct kh_stats *st)
{
	struct kh_func *f = &kh_cur;
	const struct kh_sym *sym;
	struct kinst_insn insn;
	uint64_t off;
	int rc;

	free(f->orig);
	memset(f, 0, sizeof(*f));
	f->fn = fn;
	f->name = fn->name;
	sym = kh_find_symbol(fn->name);
	if (sym == NULL || sym->size == 0) {
		printf("HARNESS ERROR %s: no sized STT_FUNC symbol\n", fn->name);
		st->harness_errors++;
		return (-1);
	}
	if (sym->addr != (uint64_t)(uintptr_t)fn->fn) {
		printf("HARNESS ERROR %s: symbol at %#jx, pointer %p\n",
		    fn->name, (uintmax_t)sym->addr, fn->fn);
		st->harness_errors++;
		return (-1);
	}
	f->start = sym->addr;
	f->size = sym->size;
	f->orig = malloc(f->size);
	memcpy(f->orig, (void *)(uintptr_t)f->start, f->size);
	for (off = 0; off < f->size; off += insn.len) {
		if (f->nb == KH_MAX_BOUNDS) {
			printf("HARNESS ERROR %s: more than %d instructions\n",
			    fn->name, KH_MAX_BOUNDS);
			st->harness_errors++;
			return (-1);
		}
		rc = kinst_decode(f->orig + off, f->size - off, &insn);
		if (rc != KINST_DEC_OK) {
			printf("DIVERGENCE %s+%#jx: kinst_decode status %d in "
			    "a function that runs (linear sweep stops)\n",
			    fn->name, (uintmax_t)off, rc);
			st->divergences++;
			return (-1);
		}
		f->off[f->nb++] = (uint32_t)off;
	}
	return (0);
}

/*
 * A check's start on one function: skipped (counted, and said with say)
 * when this machine cannot run it, else counted and loaded into kh_cur.
 * 0 when loaded.
 */
static int
kh_func_begin(const struct kh_fn *fn, bool say, struct kh_stats *st)
{
	const char *why;

	if ((why = kh_unsupported(fn)) != NULL) {
		if (say)
			printf("SKIPPED %s: %s\n", fn->name, why);
		st->skipped++;
		return (-1);
	}
	st->functions++;
	return (kh_func_load(fn, st));
}

static int
kh_boundary_index(uint64_t off)
{
	uint32_t lo = 0, hi = kh_cur.nb;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (kh_cur.off[mid] == off)
			return ((int)mid);
		if (kh_cur.off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (-1);
}

/*
 * Reference and ground truth for one input: untraced run (twice: the corpus
 * must be deterministic), then the single-step run.  Leaves the reference
 * outcome in ref/kh_ref_*, the ground truth in kh_gt[0..kh_ngt).
 */
static int
kh_reference(const struct kh_fn *fn, int in, struct kh_out *ref,
    struct kh_stats *st)
{
	struct kh_out o;
	char why[256];
	const char *d;
	uint32_t i;

	kh_run(fn, fn->in[in], KH_IDLE, ref);
	if (ref->failed) {
		printf("HARNESS ERROR %s input #%d: untraced run failed: %s\n",
		    fn->name, in, kh_outcome_diff(ref, ref, why, sizeof(why)));
		st->harness_errors++;
		return (-1);
	}
	memcpy(kh_ref_scratch, &kh_scratch, sizeof(kh_scratch));
	memcpy(kh_ref_stack, kh_stack, sizeof(kh_stack));
	kh_run(fn, fn->in[in], KH_IDLE, &o);
	if ((d = kh_outcome_diff(ref, &o, why, sizeof(why))) != NULL) {
		printf("HARNESS ERROR %s input #%d: not deterministic: %s\n",
		    fn->name, in, d);
		st->harness_errors++;
		return (-1);
	}
	kh_fstart = kh_cur.start;
	kh_fend = kh_cur.start + kh_cur.size;
	kh_ngt = 0;
	kh_nsteps = 0;
	kh_gt_overflow = 0;
	kh_prev_rip = 0;
	kh_run(fn, fn->in[in], KH_STEP, &o);
	if (kh_gt_overflow) {
		printf("HARNESS ERROR %s input #%d: single-step run too long\n",
		    fn->name, in);
		st->harness_errors++;
		return (-1);
	}
	if ((d = kh_outcome_diff(ref, &o, why, sizeof(why))) != NULL) {
		printf("HARNESS ERROR %s input #%d: single-step run differs "
		    "from the untraced run: %s\n", fn->name, in, d);
		st->harness_errors++;
		return (-1);
	}
	if (kh_ngt == 0 || kh_gt[0].rip != kh_cur.start ||
	    kh_gt[0].gpr[KINST_RDI] != fn->in[in][0] ||
	    kh_gt[0].gpr[KINST_RSP] != kh_in_rsp - 8) {
		printf("HARNESS ERROR %s input #%d: first single-step state is "
		    "not the function entry\n", fn->name, in);
		st->harness_errors++;
		return (-1);
	}
	for (i = 0; i < kh_ngt; i++) {
		int bi = kh_boundary_index(kh_gt[i].rip - kh_cur.start);

		if (bi < 0) {
			printf("DIVERGENCE %s+%#jx: executed, but not an "
			    "instruction boundary by kinst_decode's linear "
			    "sweep\n", fn->name,
			    (uintmax_t)(kh_gt[i].rip - kh_cur.start));
			st->divergences++;
			return (-1);
		}
		kh_cur.reached[bi] = true;
	}
	return (0);
}

void
kh_check_ground_truth(const struct kh_fn *tab, struct kh_stats *st)
{
	const struct kh_fn *fn;
	struct kh_out ref;
	uint64_t steps;
	uint32_t in, i, nreached;

	for (fn = tab; fn->name != NULL; fn++) {
		if (kh_func_begin(fn, true, st) != 0)
			continue;
		steps = 0;
		for (in = 0; in < fn->ninputs; in++) {
			if (kh_reference(fn, (int)in, &ref, st) != 0)
				break;
			steps += kh_ngt;
		}
		for (i = nreached = 0; i < kh_cur.nb; i++)
			nreached += kh_cur.reached[i];
		st->boundaries += kh_cur.nb;
		st->reached += nreached;
		printf("%-24s %5ju bytes %4u insns %4u reached %7ju steps\n",
		    fn->name, (uintmax_t)kh_cur.size, kh_cur.nb, nreached,
		    (uintmax_t)steps);
	}
}

/*
 * Jump-optimization qualification on the corpus (common/x86/kinst_jopt.c),
 * checked against what the single-step ground truth shows: every time the
 * function's execution lands somewhere other than the fall-through of the
 * previous in-function instruction (a branch, a return from a recursive
 * call), the landing byte must not be strictly inside the window of an
 * instruction declared jump-optimizable -- it would be the middle of the
 * jmp.  Lists the functions where qualification refused a window for a
 * branch target (informational; the caller asserts there are some).
 */
void
kh_check_jopt(const struct kh_fn *tab, struct kh_jopt_stats *js,
    struct kh_stats *st)
{
	const struct kh_fn *fn;
	struct kh_out ref;
	struct kinst_insn insn;
	uint8_t *v, *inside;
	uint64_t off, prev, land;
	uint32_t in, i, s, p, ntarget, nyes;

	for (fn = tab; fn->name != NULL; fn++) {
		if (kh_func_begin(fn, false, st) != 0)
			continue;
		v = calloc(kh_cur.size, 1);
		inside = calloc(kh_cur.size, 1);
		nyes = kinst_jopt_qualify(kh_cur.orig, (uint32_t)kh_cur.size,
		    NULL, NULL, v);
		ntarget = 0;
		for (i = 0; i < kh_cur.nb; i++) {
			s = kh_cur.off[i];
			js->insns++;
			if (v[s] == KINST_JQ_TARGET)
				ntarget++;
			if (v[s] != KINST_JQ_YES)
				continue;
			for (p = s; p < s + KINST_JOPT_WINDOW; p += insn.len) {
				if (kinst_decode(kh_cur.orig + p,
				    kh_cur.size - p, &insn) != KINST_DEC_OK)
					break;
			}
			for (off = s + 1; off < p && off < kh_cur.size; off++)
				inside[off] = 1;
		}
		js->yes += nyes;
		js->target += ntarget;
		if (ntarget != 0) {
			js->functions_with_target++;
			printf("jopt: %-24s %3u windows refused for a branch "
			    "target inside, %3u jump-optimizable of %u\n",
			    fn->name, ntarget, nyes, kh_cur.nb);
		}
		for (in = 0; in < fn->ninputs; in++) {
			if (kh_reference(fn, (int)in, &ref, st) != 0)
				break;
			for (i = 1; i < kh_ngt; i++) {
				prev = kh_gt[i - 1].rip - kh_cur.start;
				land = kh_gt[i].rip - kh_cur.start;
				if (kinst_decode(kh_cur.orig + prev,
				    kh_cur.size - prev, &insn) != KINST_DEC_OK ||
				    land == prev + insn.len)
					continue;
				js->landings++;
				if (inside[land]) {
					printf("DIVERGENCE %s+%#jx: execution "
					    "lands inside a window declared "
					    "jump-optimizable (from +%#jx)\n",
					    fn->name, (uintmax_t)land,
					    (uintmax_t)prev);
					js->violations++;
					st->divergences++;
				}
			}
		}
		free(v);
		free(inside);
	}
}

void
kh_print_env(void)
{
	printf("trampolines at %p, text at %p; single-step traps folded into "
	    "the first of a repeated string instruction so far: %ju\n",
	    (void *)kh_tramp_rx, (void *)kh_invoke, (uintmax_t)kh_folded);
}

/* Arm a probe at boundary bi using trampoline slot.  KINST_R_NONE or a reason. */
static int
kh_arm(struct kinst_probe *p, uint32_t bi, uint32_t slot, uint32_t id,
    struct kh_stats *st)
{
	uint8_t img[KINST_TRAMP_SIZE];
	uint64_t addr = kh_cur.start + kh_cur.off[bi];
	uint64_t tramp = (uint64_t)(uintptr_t)kh_tramp_rx +
	    (uint64_t)slot * KINST_TRAMP_SIZE;
	int reason, rc;

	memset(p, 0, sizeof(*p));
	reason = kinst_probe_prepare(p, kh_cur.orig + kh_cur.off[bi],
	    kh_cur.size - kh_cur.off[bi], addr, tramp, img);
	if (reason != KINST_R_NONE)
		return (reason);
	if (p->orig[0] != kh_cur.orig[kh_cur.off[bi]]) {
		printf("HARNESS ERROR %s+%#x: probe orig byte %#x, text %#x\n",
		    kh_cur.name, kh_cur.off[bi], p->orig[0],
		    kh_cur.orig[kh_cur.off[bi]]);
		st->harness_errors++;
	}
	memcpy(kh_tramp_rw + (size_t)slot * KINST_TRAMP_SIZE, img,
	    KINST_TRAMP_SIZE);
	p->session = &kh_sess;
	p->id = id;
	p->offset = kh_cur.off[bi];
	rc = kinst_ptable_insert(&kh_eng.table, p);
	if (rc != KINST_PT_OK) {
		printf("HARNESS ERROR %s+%#x: kinst_ptable_insert: %d\n",
		    kh_cur.name, kh_cur.off[bi], rc);
		st->harness_errors++;
		return (KINST_R_COUNT + 1);
	}
	kh_text_write(addr, 0xcc);
	return (KINST_R_NONE);
}

static void
kh_disarm(struct kinst_probe *p, struct kh_stats *st)
{
	kh_text_write(p->addr, p->orig[0]);
	if (kinst_ptable_remove(&kh_eng.table, p) != KINST_PT_OK) {
		printf("HARNESS ERROR %s+%#x: kinst_ptable_remove failed\n",
		    kh_cur.name, p->offset);
		st->harness_errors++;
	}
	if (kinst_ptable_lookup(&kh_eng.table, p->addr) != NULL) {
		printf("DIVERGENCE %s+%#x: probe still found after removal\n",
		    kh_cur.name, p->offset);
		st->divergences++;
	}
}

static void
kh_ring_reset(void)
{
	kinst_ring_init(&kh_ring, kh_ringbuf, KH_RING_SIZE);
	kh_hits[0].n = 0;
}

/* Pull every record out of the ring into kh_recbuf; returns the count. */
static uint32_t
kh_ring_drain(void)
{
	size_t off = 0, n;

	while ((n = kinst_ring_get(&kh_ring, kh_recbuf + off,
	    KH_RING_SIZE - off)) > 0)
		off += n;
	return ((uint32_t)(off / sizeof(struct kinst_hit_record)));
}

/*
 * Compare the records of a traced run against the ground truth restricted
 * to the armed addresses (armed[] marks boundary indexes).  0 or -1.
 */
static int
kh_compare_records(const bool *armed, const struct kinst_probe *probes,
    const uint32_t *probe_of, int in, uint32_t nrec, struct kh_stats *st)
{
	const struct kinst_hit_record *rec =
	    (const struct kinst_hit_record *)kh_recbuf;
	const struct kinst_regs *exp;
	uint32_t i, j, nexp = 0;
	int bi;
	char what[256];

	for (i = 0, j = 0; i < kh_ngt; i++) {
		bi = kh_boundary_index(kh_gt[i].rip - kh_cur.start);
		if (bi < 0 || !armed[bi])
			continue;
		nexp++;
		exp = &kh_gt[i];
		if (j >= nrec) {
			j++;
			continue;
		}
		st->records++;
		if (rec[j].hdr.type != KINST_REC_HIT ||
		    rec[j].hdr.size != sizeof(rec[j]) ||
		    rec[j].addr != exp->rip || rec[j].regs.rip != exp->rip ||
		    rec[j].probe_id != probes[probe_of[bi]].id ||
		    rec[j].cpu != 0 || rec[j].pid != getpid() ||
		    rec[j].comm[0] == 0 || !kh_regs_equal(exp, &rec[j].regs)) {
			st->divergences++;
			if (kh_ndetail++ < KH_MAX_DETAIL) {
				snprintf(what, sizeof(what), "hit #%u of the "
				    "run: record differs from ground truth "
				    "(type %u size %u addr %#jx id %u cpu %u)",
				    j, rec[j].hdr.type, rec[j].hdr.size,
				    (uintmax_t)rec[j].addr, rec[j].probe_id,
				    rec[j].cpu);
				kh_detail_header(kh_cur.name, kh_cur.start,
				    exp->rip, what, in);
				kh_print_regs_diff(exp, &rec[j].regs);
			}
			return (-1);
		}
		kh_traced_b[bi] = true;
		j++;
	}
	if (nexp != nrec) {
		st->divergences++;
		if (kh_ndetail++ < KH_MAX_DETAIL) {
			snprintf(what, sizeof(what), "%u hit records, ground "
			    "truth has %u", nrec, nexp);
			kh_detail_header(kh_cur.name, kh_cur.start,
			    nrec > 0 ? rec[0].addr : kh_cur.start, what, in);
		}
		return (-1);
	}
	return (0);
}

/* Account the treatment of every boundary once per function. */
static void
kh_count_treatment(const struct kinst_probe *p, int reason,
    struct kh_stats *st)
{
	if (reason != KINST_R_NONE) {
		st->refused[reason < KINST_R_COUNT + 8 ? reason :
		    KINST_R_COUNT + 7]++;
		return;
	}
	switch (p->cls.treatment) {
	case KINST_T_OOL:
		st->ool++;
		break;
	case KINST_T_OOL_RIPREL:
		st->ool_riprel++;
		break;
	case KINST_T_EMULATE:
		st->emul[p->cls.emul < KINST_EM_COUNT ? p->cls.emul : 0]++;
		break;
	default:
		st->refused[KINST_R_COUNT + 7]++;
		break;
	}
}

/*
 * The classification of a function as one line: "insns N ool N riprel N
 * emul kind:N,... refused reason:N,...", from the counts kh_count_treatment
 * added to st since before.
 */
static void
kh_class_signature(const struct kh_stats *before, const struct kh_stats *st,
    char *buf, size_t len)
{
	size_t o;
	int k, first;

	o = (size_t)snprintf(buf, len, "insns %u ool %ju riprel %ju emul",
	    kh_cur.nb, (uintmax_t)(st->ool - before->ool),
	    (uintmax_t)(st->ool_riprel - before->ool_riprel));
	first = 1;
	for (k = 0; k < KINST_EM_COUNT && o < len; k++)
		if (st->emul[k] != before->emul[k]) {
			o += (size_t)snprintf(buf + o, len - o, "%s%s:%ju",
			    first ? " " : ",", kinst_emul_name(k),
			    (uintmax_t)(st->emul[k] - before->emul[k]));
			first = 0;
		}
	if (first && o < len)
		o += (size_t)snprintf(buf + o, len - o, " -");
	if (o < len)
		o += (size_t)snprintf(buf + o, len - o, " refused");
	first = 1;
	for (k = 0; k < KINST_R_COUNT + 8 && o < len; k++)
		if (st->refused[k] != before->refused[k]) {
			o += (size_t)snprintf(buf + o, len - o, "%s%s:%ju",
			    first ? " " : ",", k < KINST_R_COUNT ?
			    kinst_reason_name(k) : "harness",
			    (uintmax_t)(st->refused[k] - before->refused[k]));
			first = 0;
		}
	if (first && o < len)
		snprintf(buf + o, len - o, " -");
}

/*
 * Compare a function's classification with kh_expected.c.  The hand-written
 * corpus has explicit encodings: always exact.  The C corpus is exact when
 * built by the compiler the table was recorded with; under another compiler
 * only its invariants hold (no refusal other than endbr), and the table's
 * minimums in equivalence_test.c still apply.
 */
static void
kh_check_classification(const struct kh_fn *fn, const struct kh_stats *before,
    struct kh_stats *st)
{
	char sig[512];
	const struct kh_expect *e;
	bool exact;
	int k;

	kh_class_signature(before, st, sig, sizeof(sig));
	if (getenv("KH_PRINT_EXPECTED") != NULL)
		printf("EXPECTED\t{ \"%s\", \"%s\" },\n", fn->name, sig);
	exact = strncmp(fn->name, "asm_", 4) == 0 ||
	    strcmp(kh_expected_cc, __VERSION__) == 0;
	if (!exact) {
		for (k = 1; k < KINST_R_COUNT + 8; k++)
			if (k != KINST_R_ENDBR &&
			    st->refused[k] != before->refused[k]) {
				printf("CLASSIFICATION %s: %s (compiled C refuses "
				    "only endbr)\n", fn->name, sig);
				st->class_changes++;
				return;
			}
		return;
	}
	for (e = kh_expected; e->fn != NULL; e++)
		if (strcmp(e->fn, fn->name) == 0)
			break;
	if (e->fn == NULL || strcmp(e->sig, sig) != 0) {
		printf("CLASSIFICATION CHANGED %s:\n  now      %s\n  expected "
		    "%s\n  (tests/harness/kh_expected.c; KH_PRINT_EXPECTED=1 "
		    "prints the current lines)\n", fn->name, sig,
		    e->fn != NULL ? e->sig : "(not in the table)");
		st->class_changes++;
	}
}

static struct kinst_probe kh_probes[KH_MAX_BOUNDS];
static uint32_t kh_probe_of[KH_MAX_BOUNDS];
static bool kh_armed[KH_MAX_BOUNDS];
static struct kh_out kh_refs[KH_MAXIN];
static struct kinst_regs *kh_gts[KH_MAXIN];
static uint32_t kh_ngts[KH_MAXIN];

/*
 * Prepare every boundary of the current function into kh_probes[] (the
 * trampoline address a placeholder: kh_arm() prepares again), its
 * verdict in reason[]; nothing armed, probe i is boundary i's.
 */
static void
kh_prepare_all(int *reason)
{
	uint8_t img[KINST_TRAMP_SIZE];
	uint32_t bi;

	for (bi = 0; bi < kh_cur.nb; bi++) {
		memset(&kh_probes[bi], 0, sizeof(kh_probes[bi]));
		reason[bi] = kinst_probe_prepare(&kh_probes[bi],
		    kh_cur.orig + kh_cur.off[bi], kh_cur.size - kh_cur.off[bi],
		    kh_cur.start + kh_cur.off[bi],
		    (uint64_t)(uintptr_t)kh_tramp_rx, img);
		kh_armed[bi] = false;
		kh_probe_of[bi] = bi;
	}
}

static void
kh_text_check(struct kh_stats *st)
{
	if (memcmp(kh_cur.orig, (void *)(uintptr_t)kh_cur.start,
	    kh_cur.size) != 0) {
		printf("DIVERGENCE %s: text differs from the original after "
		    "disarming\n", kh_cur.name);
		st->divergences++;
		memcpy(kh_cur.orig, (void *)(uintptr_t)kh_cur.start,
		    kh_cur.size);
	}
}

/*
 * A traced run of input in from an empty ring with the probes marked in
 * kh_armed, then every one of them disarmed and the text checked: how the
 * run differs from ref (NULL: it does not), in why.
 */
static const char *
kh_traced_disarm(const struct kh_fn *fn, int in, const struct kh_out *ref,
    struct kh_out *o, char *why, size_t wlen, struct kh_stats *st)
{
	const char *d;
	uint32_t bi;

	kh_ring_reset();
	kh_run(fn, fn->in[in], KH_TRACE, o);
	d = kh_outcome_diff(ref, o, why, wlen);
	for (bi = 0; bi < kh_cur.nb; bi++)
		if (kh_armed[bi]) {
			kh_disarm(&kh_probes[bi], st);
			kh_armed[bi] = false;
		}
	kh_text_check(st);
	return (d);
}

/* One traced run of input in with the probes marked in kh_armed armed. */
static void
kh_traced_run(const struct kh_fn *fn, int in, const char *label,
    struct kh_stats *st)
{
	struct kh_out o;
	char why[256];
	const char *d;
	uint32_t nrec, narmed = 0, i;
	uint64_t p_hits = 0;
	int bad = 0;

	/* Restore this input's ground truth and reference memory. */
	memcpy(kh_gt, kh_gts[in], kh_ngts[in] * sizeof(*kh_gt));
	kh_ngt = kh_ngts[in];
	kh_ring_reset();
	kh_sti_expected = kh_sti_emulated = 0;
	st->runs++;
	kh_run(fn, fn->in[in], KH_TRACE, &o);
	st->sti_redirects += kh_sti_expected;
	st->sti_emulated += kh_sti_emulated;
	/* kh_ref_* hold this input's reference: recomputed by the caller. */
	d = kh_outcome_diff(&kh_refs[in], &o, why, sizeof(why));
	nrec = kh_ring_drain();
	for (i = 0; i < kh_cur.nb; i++)
		if (kh_armed[i]) {
			narmed++;
			p_hits += kh_probes[kh_probe_of[i]].hits;
		}
	if (d != NULL) {
		st->divergences++;
		bad = 1;
		if (kh_ndetail++ < KH_MAX_DETAIL) {
			uint64_t a = kh_cur.start;

			for (i = 0; i < kh_cur.nb; i++)
				if (kh_armed[i]) {
					a += kh_cur.off[i];
					break;
				}
			kh_detail_header(kh_cur.name, kh_cur.start, a, d, in);
			printf("  (%s, %u probe(s) armed)\n", label, narmed);
		}
	}
	if (!bad && kh_sti_expected != kh_sti_emulated) {
		st->divergences++;
		bad = 1;
		printf("DIVERGENCE %s input #%d: %ju redirects to a sti "
		    "trampoline variant, %ju sti executed\n", kh_cur.name, in,
		    (uintmax_t)kh_sti_expected, (uintmax_t)kh_sti_emulated);
	}
	if (!bad && kinst_ring_dropped(&kh_ring) != 0) {
		printf("HARNESS ERROR %s input #%d: %ju records dropped\n",
		    kh_cur.name, in, (uintmax_t)kinst_ring_dropped(&kh_ring));
		st->harness_errors++;
		bad = 1;
	}
	if (!bad && (kh_hits[0].n != nrec || p_hits != nrec)) {
		st->divergences++;
		bad = 1;
		printf("DIVERGENCE %s input #%d: session hits %ju, probe hits "
		    "%ju, records %u\n", kh_cur.name, in,
		    (uintmax_t)kh_hits[0].n, (uintmax_t)p_hits, nrec);
	}
	if (!bad)
		kh_compare_records(kh_armed, kh_probes, kh_probe_of, in, nrec,
		    st);
}

static void
kh_check_function(const struct kh_fn *fn, bool whole, struct kh_stats *st)
{
	struct kh_stats before = *st;
	int reason[KH_MAX_BOUNDS];
	uint32_t bi, in, nreached = 0, narm = 0;
	uint64_t nem = 0;
	size_t k;

	if (kh_func_load(fn, st) != 0)
		return;
	memset(kh_traced_b, 0, sizeof(kh_traced_b));
	/* Ground truth and reference outcome for every input. */
	for (in = 0; in < fn->ninputs; in++) {
		if (kh_reference(fn, (int)in, &kh_refs[in], st) != 0)
			return;
		free(kh_gts[in]);
		kh_gts[in] = malloc((kh_ngt ? kh_ngt : 1) * sizeof(*kh_gt));
		memcpy(kh_gts[in], kh_gt, kh_ngt * sizeof(*kh_gt));
		kh_ngts[in] = kh_ngt;
	}
	for (bi = 0; bi < kh_cur.nb; bi++)
		nreached += kh_cur.reached[bi];
	st->boundaries += kh_cur.nb;
	st->reached += nreached;

	/* Classification of every boundary (prepared once to count it). */
	kh_prepare_all(reason);
	for (bi = 0; bi < kh_cur.nb; bi++) {
		kh_count_treatment(&kh_probes[bi], reason[bi], st);
		if (reason[bi] == KINST_R_NONE)
			narm++;
	}

	if (!whole) {
		for (bi = 0; bi < kh_cur.nb; bi++) {
			if (reason[bi] != KINST_R_NONE)
				continue;
			for (in = 0; in < fn->ninputs; in++) {
				/* The reference memory of this input. */
				struct kh_out tmp;

				kh_run(fn, fn->in[in], KH_IDLE, &tmp);
				memcpy(kh_ref_scratch, &kh_scratch,
				    sizeof(kh_scratch));
				memcpy(kh_ref_stack, kh_stack,
				    sizeof(kh_stack));
				if (kh_arm(&kh_probes[bi], bi,
				    (bi * 7) % KH_TRAMP_SLOTS, 1000 + bi, st) !=
				    KINST_R_NONE)
					continue;
				kh_armed[bi] = true;
				kh_traced_run(fn, (int)in, "one probe", st);
				kh_armed[bi] = false;
				kh_disarm(&kh_probes[bi], st);
				kh_text_check(st);
			}
		}
	} else {
		for (in = 0; in < fn->ninputs; in++) {
			struct kh_out tmp;

			kh_run(fn, fn->in[in], KH_IDLE, &tmp);
			memcpy(kh_ref_scratch, &kh_scratch, sizeof(kh_scratch));
			memcpy(kh_ref_stack, kh_stack, sizeof(kh_stack));
			for (bi = 0; bi < kh_cur.nb; bi++) {
				if (reason[bi] != KINST_R_NONE)
					continue;
				if (kh_arm(&kh_probes[bi], bi, bi, 2000 + bi,
				    st) == KINST_R_NONE)
					kh_armed[bi] = true;
			}
			kh_traced_run(fn, (int)in, "whole function", st);
			for (bi = 0; bi < kh_cur.nb; bi++)
				if (kh_armed[bi]) {
					kh_disarm(&kh_probes[bi], st);
					kh_armed[bi] = false;
				}
			kh_text_check(st);
		}
	}

	for (k = 0; k < KINST_EM_COUNT; k++)
		nem += st->emul[k] - before.emul[k];
	for (bi = 0; bi < kh_cur.nb; bi++)
		st->traced += kh_traced_b[bi];
	kh_check_classification(fn, &before, st);
	printf("%-24s %4u insns %4u reached  ool %3ju riprel %3ju emul %3ju "
	    "refused %3u  runs %5ju hits %7ju  div %ju\n", fn->name,
	    kh_cur.nb, nreached, (uintmax_t)(st->ool - before.ool),
	    (uintmax_t)(st->ool_riprel - before.ool_riprel), (uintmax_t)nem,
	    kh_cur.nb - narm, (uintmax_t)(st->runs - before.runs),
	    (uintmax_t)(st->records - before.records),
	    (uintmax_t)(st->divergences - before.divergences));
	fflush(stdout);
}

/*
 * Probe programs on the corpus (issue 11): every boundary of a function
 * armed at once with one program -- the predicate (rax & 1) == 0, then a
 * 16-byte MEM capture and a 16-byte STR capture at %rsp -- and each input
 * run traced.  The records must be exactly the ground-truth states at the
 * armed boundaries where the predicate holds, in order, with the
 * registers of that state and the bytes the single-step run saw at its
 * %rsp; the others must be counted as filtered.  The test program computes
 * every expected value itself from the ground truth.
 */
static const struct kinst_pinsn kh_prog_code[] = {
	{ .op = KINST_OP_REG, .arg = KINST_RAX },
	{ .op = KINST_OP_IMM, .imm = 1 },
	{ .op = KINST_OP_AND },
	{ .op = KINST_OP_IMM, .imm = 0 },
	{ .op = KINST_OP_EQ },
	{ .op = KINST_OP_JZ, .off = 6 },		/* to the false path (12) */
	{ .op = KINST_OP_REG, .arg = KINST_RSP },
	{ .op = KINST_OP_MEM, .imm = KH_SNAP },
	{ .op = KINST_OP_REG, .arg = KINST_RSP },
	{ .op = KINST_OP_STR, .imm = KH_SNAP },
	{ .op = KINST_OP_IMM, .imm = 1 },
	{ .op = KINST_OP_RET },
	{ .op = KINST_OP_IMM, .imm = 0 },
	{ .op = KINST_OP_RET },
};

/*
 * Captured bytes against the single-step run's: equal, except that a
 * pushf (or pushfw) executed while single-stepping pushed TF, so a byte
 * that is the second byte of pushed flags -- IF (0x02) and TF (0x01) set in
 * the snapshot -- may lack TF in the capture.  Wherever pushf put it
 * (pushfw leaves it unaligned), only that one bit is excused.
 */
static uint64_t kh_tf_tolerated;

static bool
kh_snap_equal(const uint8_t *got, const uint8_t *snap, uint32_t n)
{
	uint32_t k;

	for (k = 0; k < n; k++) {
		if (got[k] == snap[k])
			continue;
		if ((got[k] | 0x01) == snap[k] && (snap[k] & 0x03) == 0x03) {
			kh_tf_tolerated++;
			continue;
		}
		return (false);
	}
	return (true);
}

/* One record's MEM and STR sections against a ground-truth snapshot. */
static int
kh_check_caps(const uint8_t *r, uint32_t size, const uint64_t rsp,
    const uint8_t *snap, struct kh_prog_stats *ps, char *why, size_t wlen)
{
	const struct kinst_rec_sec *sec;
	const struct kinst_rec_cap *cap;
	const uint8_t *b;
	uint32_t off, want, i, seen = 0;

	for (off = sizeof(struct kinst_hit_record); off + sizeof(*sec) <= size;
	    off += (uint32_t)sizeof(*sec) + ((sec->len + 7u) & ~7u)) {
		sec = (const struct kinst_rec_sec *)(r + off);
		if (sec->type != KINST_SEC_MEM && sec->type != KINST_SEC_STR)
			continue;
		cap = (const struct kinst_rec_cap *)(sec + 1);
		b = (const uint8_t *)(cap + 1);
		if (sec->len != sizeof(*cap) + cap->size || cap->addr != rsp ||
		    (sec->flags & (KINST_SECF_FAULT | KINST_SECF_DEREF)) != 0) {
			snprintf(why, wlen, "section type %u flags %#x len %u: "
			    "address %#jx, want %#jx", sec->type, sec->flags,
			    sec->len, (uintmax_t)cap->addr, (uintmax_t)rsp);
			return (-1);
		}
		if (sec->type == KINST_SEC_MEM) {
			seen |= 1;
			if (cap->index != 0 || cap->size != KH_SNAP ||
			    !kh_snap_equal(b, snap, KH_SNAP)) {
				snprintf(why, wlen, "MEM capture: %u bytes "
				    "differ from the single-step run's", cap->size);
				return (-1);
			}
			ps->mem_checked++;
		} else {
			seen |= 2;
			for (want = 0; want < KH_SNAP && snap[want] != 0; want++)
				;
			if (cap->index != 1 || cap->size != want ||
			    !kh_snap_equal(b, snap, want) ||
			    ((sec->flags & KINST_SECF_TRUNCATED) != 0) !=
			    (want == KH_SNAP)) {
				snprintf(why, wlen, "STR capture: %u bytes "
				    "flags %#x, want %u", cap->size, sec->flags,
				    want);
				return (-1);
			}
			for (i = cap->size; i < ((cap->size + 7u) & ~7u); i++)
				if (b[i] != 0) {
					snprintf(why, wlen, "STR padding "
					    "not zero");
					return (-1);
				}
			ps->str_checked++;
		}
	}
	if (seen != 3) {
		snprintf(why, wlen, "record of %u bytes without both "
		    "captures", size);
		return (-1);
	}
	return (0);
}

void
kh_check_programs(const struct kh_fn *tab, struct kh_prog_stats *ps,
    struct kh_stats *st)
{
	static struct kinst_prog prog;
	struct kinst_prog_cpu pst[64];
	const struct kh_fn *fn;
	struct kh_out ref, o;
	uint64_t *capbuf;
	uint32_t bi, in, i, j, bad_pc, nrec, exp_rec, exp_filt, off, n;
	int reason[KH_MAX_BOUNDS];
	char why[256];
	const char *d;
	size_t got;

	if (kinst_prog_verify(kh_prog_code, sizeof(kh_prog_code) /
	    sizeof(kh_prog_code[0]), &prog, &bad_pc) != KINST_PV_OK) {
		printf("HARNESS ERROR: the harness's program is refused at "
		    "instruction %u\n", bad_pc);
		st->harness_errors++;
		return;
	}
	capbuf = aligned_alloc(64, KINST_CAP_REC_MAX);
	kh_sess.capbuf = capbuf;
	kh_sess.pstats = pst;
	for (fn = tab; fn->name != NULL; fn++) {
		if (kh_func_begin(fn, false, st) != 0)
			continue;
		kh_prepare_all(reason);
		for (in = 0; in < fn->ninputs; in++) {
			kh_gt_snap = 1;
			i = (uint32_t)kh_reference(fn, (int)in, &ref, st);
			kh_gt_snap = 0;
			if (i != 0)
				break;
			kh_run(fn, fn->in[in], KH_IDLE, &o);
			memcpy(kh_ref_scratch, &kh_scratch, sizeof(kh_scratch));
			memcpy(kh_ref_stack, kh_stack, sizeof(kh_stack));
			for (bi = 0; bi < kh_cur.nb; bi++) {
				if (reason[bi] != KINST_R_NONE)
					continue;
				if (kh_arm(&kh_probes[bi], bi, bi, 3000 + bi,
				    st) == KINST_R_NONE) {
					kh_probes[bi].prog = &prog;
					kh_armed[bi] = true;
				}
			}
			memset(pst, 0, sizeof(pst));
			ps->runs++;
			d = kh_traced_disarm(fn, (int)in, &ref, &o, why,
			    sizeof(why), st);
			if (d != NULL) {
				printf("DIVERGENCE %s input #%u: run with "
				    "programs differs: %s\n", fn->name, in, d);
				st->divergences++;
				continue;
			}
			for (got = 0; (n = (uint32_t)kinst_ring_get(&kh_ring,
			    kh_recbuf + got, KH_RING_SIZE - got)) > 0; got += n)
				;
			/* Walk the ground truth and the records together. */
			exp_rec = exp_filt = nrec = 0;
			off = 0;
			for (i = 0; i < kh_ngt; i++) {
				const struct kinst_hit_record *r;
				int b = kh_boundary_index(kh_gt[i].rip -
				    kh_cur.start);

				if (b < 0 || reason[b] != KINST_R_NONE)
					continue;
				if ((kh_gt[i].gpr[KINST_RAX] & 1) != 0) {
					exp_filt++;
					continue;
				}
				exp_rec++;
				if (off >= got)
					continue;
				r = (const struct kinst_hit_record *)
				    (kh_recbuf + off);
				nrec++;
				j = r->hdr.size;
				why[0] = 0;
				if (r->hdr.type != KINST_REC_HIT ||
				    j < sizeof(*r) || off + j > got ||
				    r->addr != kh_gt[i].rip ||
				    !kh_regs_equal(&kh_gt[i], &r->regs))
					snprintf(why, sizeof(why), "record "
					    "header or registers differ");
				else
					(void)kh_check_caps((const uint8_t *)r,
					    j, kh_gt[i].gpr[KINST_RSP],
					    kh_gt_mem[i], ps, why, sizeof(why));
				if (why[0] != 0) {
					if (ps->mismatches++ < KH_MAX_DETAIL)
						printf("DIVERGENCE %s+%#jx input "
						    "#%u, record %u: %s\n",
						    fn->name, (uintmax_t)
						    (kh_gt[i].rip - kh_cur.start),
						    in, nrec - 1, why);
					st->divergences++;
					break;
				}
				off += j < sizeof(*r) ? (uint32_t)got : j;
			}
			ps->records += nrec;
			ps->expected += exp_rec;
			ps->filtered += pst[0].st.filtered;
			ps->expected_filtered += exp_filt;
			if (off != got || nrec != exp_rec ||
			    pst[0].st.filtered != exp_filt || pst[0].st.faults != 0) {
				printf("DIVERGENCE %s input #%u: %u records "
				    "(%zu bytes, %u walked), %ju filtered, %ju "
				    "faults; ground truth: %u true, %u false\n",
				    fn->name, in, nrec, got, off,
				    (uintmax_t)pst[0].st.filtered,
				    (uintmax_t)pst[0].st.faults, exp_rec, exp_filt);
				st->divergences++;
			}
		}
	}
	kh_sess.capbuf = NULL;
	kh_sess.pstats = NULL;
	free(capbuf);
	ps->tf_tolerated = kh_tf_tolerated;
}

/*
 * Two sessions on every instruction (issue 25, proof 1).  Every boundary of
 * a function is one site (no session of its own) with two subscribers:
 * session A records every hit, session B only those where the predicate
 * (rax & 1) == 0 holds, and B is unsubscribed from every site after the
 * middle hit of the run (kh_unsub_at).  A's records must be exactly the
 * ground truth at the armed boundaries, with A's probe ids; B's exactly the
 * ground-truth states among the first half where rax is even, with B's
 * ids, and B's not-matching count the odd ones of that half; each
 * session's hits its own (A: all, B: the first half); the site's the
 * whole run's.  The chain order alternates between inputs.
 */
static struct kinst_session kh_sess_b;
static struct kinst_ring kh_ring_b;
static struct kinst_pcpu_count kh_hits_b[1];
static uint8_t *kh_ringbuf_b;
static struct kinst_probe kh_sub_a[KH_MAX_BOUNDS], kh_sub_b[KH_MAX_BOUNDS];

static void
kh_unsub_b(void)
{
	struct kinst_probe *q;
	uint32_t bi;

	for (bi = 0; bi < kh_cur.nb; bi++) {
		if (!kh_armed[bi])
			continue;
		for (q = &kh_probes[bi]; q->next != NULL; q = q->next)
			if (q->next == &kh_sub_b[bi]) {
				__atomic_store_n(&q->next, kh_sub_b[bi].next,
				    __ATOMIC_RELEASE);
				break;
			}
	}
}

/* A subscriber of site p for session s. */
static void
kh_sub_init(struct kinst_probe *q, const struct kinst_probe *p,
    struct kinst_session *s, uint32_t id, const struct kinst_prog *prog)
{
	memset(q, 0, sizeof(*q));
	q->addr = p->addr;
	q->offset = p->offset;
	q->insn = p->insn;
	q->cls = p->cls;
	q->session = s;
	q->id = id;
	q->prog = prog;
}

void
kh_check_shared(const struct kh_fn *tab, struct kh_shared_stats *ss,
    struct kh_stats *st)
{
	static const struct kinst_pinsn code[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RAX },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_AND },
		{ .op = KINST_OP_IMM, .imm = 0 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_prog prog;
	struct kinst_prog_cpu pst[KH_MT_THREADS];
	const struct kinst_hit_record *r;
	const struct kh_fn *fn;
	struct kh_out ref, o;
	uint32_t bi, in, i, bad_pc, nrec_a, nrec_b, nexp, half, exp_b,
	    exp_f, k;
	int reason[KH_MAX_BOUNDS];
	uint64_t site_hits;
	char why[256];
	const char *d;
	size_t got, n;

	if (kinst_prog_verify(code, sizeof(code) / sizeof(code[0]), &prog,
	    &bad_pc) != KINST_PV_OK) {
		printf("HARNESS ERROR: the predicate is refused at %u\n",
		    bad_pc);
		st->harness_errors++;
		return;
	}
	if (kh_ringbuf_b == NULL &&
	    (kh_ringbuf_b = aligned_alloc(4096, KH_RING_SIZE)) == NULL) {
		st->harness_errors++;
		return;
	}
	kinst_ring_init(&kh_ring_b, kh_ringbuf_b, KH_RING_SIZE);
	kinst_session_init(&kh_sess_b, &kh_ring_b, kh_hits_b, 1);
	kh_sess_b.pstats = pst;
	for (fn = tab; fn->name != NULL; fn++) {
		if (kh_func_begin(fn, false, st) != 0)
			continue;
		kh_prepare_all(reason);
		for (in = 0; in < fn->ninputs; in++) {
			if (kh_reference(fn, (int)in, &ref, st) != 0)
				break;
			kh_run(fn, fn->in[in], KH_IDLE, &o);
			memcpy(kh_ref_scratch, &kh_scratch, sizeof(kh_scratch));
			memcpy(kh_ref_stack, kh_stack, sizeof(kh_stack));
			for (bi = 0; bi < kh_cur.nb; bi++) {
				struct kinst_probe *p = &kh_probes[bi];

				if (reason[bi] != KINST_R_NONE ||
				    kh_arm(p, bi, bi, 0, st) != KINST_R_NONE)
					continue;
				/* A site: no session, two subscribers. */
				p->session = NULL;
				kh_sub_init(&kh_sub_a[bi], p, &kh_sess,
				    4000 + bi, NULL);
				kh_sub_init(&kh_sub_b[bi], p, &kh_sess_b,
				    5000 + bi, &prog);
				if ((in & 1) == 0) {
					kh_sub_a[bi].next = &kh_sub_b[bi];
					p->next = &kh_sub_a[bi];
				} else {
					kh_sub_b[bi].next = &kh_sub_a[bi];
					p->next = &kh_sub_b[bi];
				}
				kh_armed[bi] = true;
			}
			/* The ground-truth hits at armed boundaries. */
			nexp = 0;
			for (i = 0; i < kh_ngt; i++) {
				int b = kh_boundary_index(kh_gt[i].rip -
				    kh_cur.start);

				if (b >= 0 && kh_armed[b])
					nexp++;
			}
			half = nexp / 2;
			kh_unsub_at = half;
			kh_unsub_hits = 0;
			kinst_ring_init(&kh_ring_b, kh_ringbuf_b, KH_RING_SIZE);
			kh_hits_b[0].n = 0;
			memset(pst, 0, sizeof(pst));
			ss->runs++;
			site_hits = 0;
			kh_ring_reset();
			kh_run(fn, fn->in[in], KH_TRACE, &o);
			kh_unsub_at = 0;
			d = kh_outcome_diff(&ref, &o, why, sizeof(why));
			for (bi = 0; bi < kh_cur.nb; bi++)
				if (kh_armed[bi])
					site_hits += kh_probes[bi].hits;
			/* Session A: the whole ground truth, A's ids. */
			nrec_a = kh_ring_drain();
			if (d == NULL && kh_compare_records(kh_armed, kh_sub_a,
			    kh_probe_of, (int)in, nrec_a, st) != 0)
				d = "session A's records differ";
			if (d == NULL && (kh_hits[0].n != nexp ||
			    site_hits != nexp))
				d = "session A's or the sites' hits differ";
			/* Session B: the first half, where rax is even. */
			for (got = 0; (n = kinst_ring_get(&kh_ring_b,
			    kh_recbuf + got, KH_RING_SIZE - got)) > 0;
			    got += n)
				;
			nrec_b = (uint32_t)(got / sizeof(*r));
			exp_b = exp_f = k = 0;
			r = (const struct kinst_hit_record *)kh_recbuf;
			for (i = 0; i < kh_ngt && k < half && d == NULL;
			    i++) {
				int b = kh_boundary_index(kh_gt[i].rip -
				    kh_cur.start);

				if (b < 0 || !kh_armed[b])
					continue;
				k++;
				if ((kh_gt[i].gpr[KINST_RAX] & 1) != 0) {
					exp_f++;
					continue;
				}
				if (exp_b >= nrec_b ||
				    r[exp_b].hdr.size != sizeof(*r) ||
				    r[exp_b].addr != kh_gt[i].rip ||
				    r[exp_b].probe_id != 5000u + (uint32_t)b ||
				    !kh_regs_equal(&kh_gt[i], &r[exp_b].regs))
					d = "session B's records differ";
				exp_b++;
			}
			if (d == NULL && (nrec_b != exp_b ||
			    got != (size_t)nrec_b * sizeof(*r) ||
			    pst[0].st.filtered != exp_f ||
			    kh_hits_b[0].n != half ||
			    kinst_ring_dropped(&kh_ring_b) != 0 ||
			    kinst_ring_dropped(&kh_ring) != 0))
				d = "session B's counts differ";
			ss->records_a += nrec_a;
			ss->records_b += nrec_b;
			ss->filtered_b += pst[0].st.filtered;
			ss->unsubscribed += nexp - half;
			for (bi = 0; bi < kh_cur.nb; bi++)
				if (kh_armed[bi]) {
					kh_disarm(&kh_probes[bi], st);
					kh_armed[bi] = false;
				}
			kh_text_check(st);
			if (d != NULL) {
				st->divergences++;
				if (kh_ndetail++ < KH_MAX_DETAIL)
					printf("DIVERGENCE %s input #%u: %s "
					    "(A: %u records, %ju hits; B: %u "
					    "records, %ju hits, %ju not "
					    "matching; ground truth %u hits, "
					    "B's half %u: %u even, %u odd; "
					    "site hits %ju)\n", fn->name, in,
					    d, nrec_a, (uintmax_t)kh_hits[0].n,
					    nrec_b, (uintmax_t)kh_hits_b[0].n,
					    (uintmax_t)pst[0].st.filtered, nexp,
					    half, exp_b, exp_f,
					    (uintmax_t)site_hits);
			}
		}
	}
}

/*
 * Jump-optimized probes on the corpus (issue 13, proof 1): every instruction
 * kinst_jopt_qualify() accepts is probed in turn the way a kernel would
 * install it -- an int3 and the probe table first, then the jmp's rel32,
 * then its first byte -- with a detour kinst_detour_build() made.  Every
 * input runs through it and is compared with the single-step ground truth
 * as for an int3 probe: the records (one per execution of the window's
 * first instruction, with its register file), the function's results and
 * its memory (the stack from the lowest red zone up), and the text after
 * removal.
 */
#define	KH_DETOUR_BASE	(KH_TRAMP_AREA / 2)
#define	KH_DETOUR_SLOTS	((KH_TRAMP_AREA / 2) / KINST_DETOUR_SIZE)

/*
 * The detour's handler.  The detour saves the general registers only, as a
 * kernel needs (kernel C code leaves the FPU and vector registers alone);
 * user-space C does not (memcpy uses them), so this handler saves and
 * restores the whole extended state around the engine, itself touching
 * only general registers.  One thread: a static save area.
 */
static uint8_t kh_xsave_area[16384] __attribute__((aligned(64)));
/*
 * Calls of the handler with the direction flag set.  C code may assume it
 * clear (the psABI; the kernel's entry code clears it on the int3 path),
 * and the kernel's memcpy is a rep movsb: a window where the probed code
 * has DF set (between std and cld) must still call the handler with it
 * clear, and get it back set.
 */
static uint64_t kh_jhit_df;

__attribute__((target("general-regs-only")))
static void
kh_jhit(void *arg, struct kinst_regs *regs)
{
	uint64_t fl;

	__asm__ volatile("pushfq; popq %0" : "=r" (fl));
	if ((fl & 0x400) != 0) {
		kh_jhit_df++;
		__asm__ volatile("cld" ::: "memory");
	}
	__asm__ volatile("xsave64 %0" : "=m" (kh_xsave_area)
	    : "a" (0xffffffffu), "d" (0xffffffffu) : "memory");
	(void)kinst_engine_jhit((struct kinst_engine *)arg, regs, NULL);
	__asm__ volatile("xrstor64 %0" : : "m" (kh_xsave_area),
	    "a" (0xffffffffu), "d" (0xffffffffu) : "memory");
}

void
kh_check_jump(const struct kh_fn *tab, struct kh_jump_stats *js,
    struct kh_stats *st)
{
	struct kinst_detour_spec sp;
	uint8_t img[KINST_DETOUR_SIZE];
	const struct kh_fn *fn;
	struct kh_out tmp;
	uint8_t *v;
	uint64_t addr, lo;
	uint32_t bi, in, i, wlen, wstart, slot;
	int32_t rel;
	int rc, phase;

	kh_ndetail = 0;
	for (fn = tab; fn->name != NULL; fn++) {
		if (kh_func_begin(fn, false, st) != 0)
			continue;
		for (in = 0; in < fn->ninputs; in++) {
			if (kh_reference(fn, (int)in, &kh_refs[in], st) != 0)
				break;
			free(kh_gts[in]);
			kh_gts[in] = malloc((kh_ngt ? kh_ngt : 1) *
			    sizeof(*kh_gt));
			memcpy(kh_gts[in], kh_gt, kh_ngt * sizeof(*kh_gt));
			kh_ngts[in] = kh_ngt;
		}
		if (in != fn->ninputs)
			continue;
		if (fn->ninputs > KH_JREF_INPUTS) {
			printf("HARNESS ERROR %s: %u inputs, at most %d\n",
			    fn->name, fn->ninputs, KH_JREF_INPUTS);
			st->harness_errors++;
			continue;
		}
		v = calloc(kh_cur.size, 1);
		js->qualified += kinst_jopt_qualify(kh_cur.orig,
		    (uint32_t)kh_cur.size, NULL, NULL, v);
		for (bi = 0; bi < kh_cur.nb; bi++) {
			kh_armed[bi] = false;
			kh_probe_of[bi] = bi;
		}
		for (bi = 0; bi < kh_cur.nb; bi++) {
			if (v[kh_cur.off[bi]] != KINST_JQ_YES)
				continue;
			addr = kh_cur.start + kh_cur.off[bi];
			slot = bi % KH_DETOUR_SLOTS;
			memset(&sp, 0, sizeof(sp));
			sp.addr = addr;
			sp.at = (uint64_t)(uintptr_t)kh_tramp_rx +
			    KH_DETOUR_BASE + (uint64_t)slot * KINST_DETOUR_SIZE;
			sp.handler = (uint64_t)(uintptr_t)kh_jhit;
			sp.arg = (uint64_t)(uintptr_t)&kh_eng;
			sp.redzone = 128;
			/* AC is never set here: the test skips the clac. */
			sp.flags = KINST_DETOUR_SMAP;
			rc = kinst_detour_build(kh_cur.orig + kh_cur.off[bi],
			    (uint32_t)(kh_cur.size - kh_cur.off[bi]), &sp, img,
			    &wlen, &wstart);
			if (rc != KINST_RELOC_OK) {
				printf("DIVERGENCE %s+%#x: qualified, but the "
				    "detour cannot be built (%d)\n", fn->name,
				    kh_cur.off[bi], rc);
				st->divergences++;
				continue;
			}
			if (kh_arm(&kh_probes[bi], bi, bi, 4000 + bi, st) !=
			    KINST_R_NONE) {
				js->not_armed++;
				continue;
			}
			memcpy(kh_tramp_rw + KH_DETOUR_BASE +
			    (size_t)slot * KINST_DETOUR_SIZE, img, sizeof(img));
			kh_armed[bi] = true;
			js->probes++;
			js->window_bytes += wlen;
			/*
			 * Phase 0: the jump (its rel32 first, then its opcode).
			 * Phase 1: the installer's and the remover's
			 * intermediate state -- the int3 back over the opcode,
			 * the original bytes under it, and the int3's hits
			 * resuming at the detour's relocated window (jresume),
			 * so that no thread enters the window's interior.  Its
			 * reference runs are phase 0's (an untraced run would
			 * trap).
			 */
			KINST_STORE_RELEASE(&kh_probes[bi].jresume,
			    sp.at + wstart);
			for (phase = 0; phase < 2; phase++) {
			if (phase == 0) {
				rel = (int32_t)(sp.at - (addr + KINST_JOPT_WINDOW));
				for (i = 1; i < KINST_JOPT_WINDOW; i++)
					kh_text_write(addr + i,
					    (uint8_t)((uint32_t)rel >> (8 * (i - 1))));
				kh_text_write(addr, 0xe9);
			} else {
				kh_text_write(addr, 0xcc);
				for (i = 1; i < KINST_JOPT_WINDOW; i++)
					kh_text_write(addr + i,
					    kh_cur.orig[kh_cur.off[bi] + i]);
			}
			kh_jphase1 = phase == 1;
			kh_jphase1_tramp = 0;
			for (in = 0; in < fn->ninputs; in++) {
				/*
				 * Below the red zone of a hit, the stack is dead
				 * at that time and the detour's: compared from
				 * the highest such red zone up.
				 */
				lo = 0;
				for (i = 0; i < kh_ngts[in]; i++)
					if (kh_gts[in][i].rip == addr &&
					    kh_gts[in][i].gpr[KINST_RSP] > lo)
						lo = kh_gts[in][i].gpr[KINST_RSP];
				lo = lo != 0 ? lo - 128 : 0;
				kh_stack_cmp_from = lo > (uint64_t)(uintptr_t)kh_stack ?
				    (size_t)(lo - (uint64_t)(uintptr_t)kh_stack) : 0;
				if (phase == 0) {
					kh_run(fn, fn->in[in], KH_IDLE, &tmp);
					memcpy(kh_ref_scratch, &kh_scratch,
					    sizeof(kh_scratch));
					memcpy(kh_ref_stack, kh_stack,
					    sizeof(kh_stack));
					memcpy(kh_jref_scratch[in], kh_ref_scratch,
					    sizeof(kh_ref_scratch));
					memcpy(kh_jref_stack[in], kh_ref_stack,
					    sizeof(kh_ref_stack));
				} else {
					memcpy(kh_ref_scratch, kh_jref_scratch[in],
					    sizeof(kh_ref_scratch));
					memcpy(kh_ref_stack, kh_jref_stack[in],
					    sizeof(kh_ref_stack));
				}
				/* The reference run above went through it too. */
				kh_probes[bi].hits = 0;
				i = (uint32_t)st->records;
				kh_traced_run(fn, (int)in, phase == 1 ?
				    "jump probe (int3, resumed in the detour)" :
				    "jump probe", st);
				if (phase == 1)
					js->resume_records += st->records - i;
				else
					js->records += st->records - i;
				kh_stack_cmp_from = 0;
			}
			kh_jphase1 = 0;
			if (kh_jhit_df != 0) {
				printf("DIVERGENCE %s+%#x: the detour called the "
				    "handler %ju times with DF set\n", fn->name,
				    kh_cur.off[bi], (uintmax_t)kh_jhit_df);
				st->divergences++;
				kh_jhit_df = 0;
			}
			if (kh_jphase1_tramp != 0) {
				printf("DIVERGENCE %s+%#x: %ju hits resumed at the "
				    "trampoline while the jump was being installed "
				    "(the window's interior was entered)\n", fn->name,
				    kh_cur.off[bi], (uintmax_t)kh_jphase1_tramp);
				st->divergences++;
			}
			}
			kh_probes[bi].jresume = 0;
			/* Removal: the int3 and the original bytes are back. */
			kh_armed[bi] = false;
			kh_disarm(&kh_probes[bi], st);
			kh_text_check(st);
		}
		free(v);
		printf("%-24s %4u insns, jump probes tried so far %ju\n",
		    fn->name, kh_cur.nb, (uintmax_t)js->probes);
	}
}

void
kh_set_inject(int mode)
{
	kh_inject = mode;
}

void
kh_set_manage_if(bool on)
{
	kh_eng.manage_if = on ? 1 : 0;
}

void
kh_reads_only_stack(bool on)
{
	kh_read_lo = (uint64_t)(uintptr_t)kh_stack;
	kh_read_hi = on ? kh_read_lo + KH_STACK_SIZE : 0;
}

uint64_t
kh_native_runs(void)
{
	return (__atomic_load_n(&kh_eng.native_runs, __ATOMIC_RELAXED));
}

void
kh_check_table(const struct kh_fn *tab, bool whole, struct kh_stats *st)
{
	const struct kh_fn *fn;
	const char *why;

	kh_ndetail = 0;
	for (fn = tab; fn->name != NULL; fn++) {
		if ((why = kh_unsupported(fn)) != NULL) {
			printf("SKIPPED %s: %s\n", fn->name, why);
			st->skipped++;
			continue;
		}
		st->functions++;
		kh_check_function(fn, whole, st);
	}
}

void
kh_print_stats(const char *title, const struct kh_stats *st)
{
	int k;

	printf("== %s ==\n", title);
	printf("functions %ju (skipped %ju)\n", (uintmax_t)st->functions,
	    (uintmax_t)st->skipped);
	printf("boundaries tried %ju (reached by the inputs %ju)\n",
	    (uintmax_t)st->boundaries, (uintmax_t)st->reached);
	printf("traced out-of-line %ju (plain %ju, rip-relative %ju)\n",
	    (uintmax_t)(st->ool + st->ool_riprel), (uintmax_t)st->ool,
	    (uintmax_t)st->ool_riprel);
	printf("emulated:");
	for (k = 1; k < KINST_EM_COUNT; k++)
		if (st->emul[k])
			printf(" %s %ju", kinst_emul_name(k),
			    (uintmax_t)st->emul[k]);
	printf("\nrefused:");
	for (k = 1; k < KINST_R_COUNT; k++)
		if (st->refused[k])
			printf(" %s %ju", kinst_reason_name(k),
			    (uintmax_t)st->refused[k]);
	for (k = KINST_R_COUNT; k < KINST_R_COUNT + 8; k++)
		if (st->refused[k])
			printf(" reason-%d %ju", k, (uintmax_t)st->refused[k]);
	printf("\ntraced runs %ju, hit records compared %ju, boundaries "
	    "traced (a record compared) %ju\n", (uintmax_t)st->runs,
	    (uintmax_t)st->records, (uintmax_t)st->traced);
	printf("trampoline variant %s: sti-variant redirects %ju, sti stood "
	    "in for %ju\n", kh_eng.manage_if ? "with sti (manage_if on)" :
	    "without sti (manage_if off)", (uintmax_t)st->sti_redirects,
	    (uintmax_t)st->sti_emulated);
	printf("classification changes against kh_expected.c %ju\n",
	    (uintmax_t)st->class_changes);
	printf("divergences %ju, harness errors %ju\n",
	    (uintmax_t)st->divergences, (uintmax_t)st->harness_errors);
	fflush(stdout);
}

/* ---- concurrency: many threads in the same trampolines at once ---- */

struct kh_mt_arg {
	const struct kh_fn *fn;
	int		in;
	uint32_t	idx;
	uint32_t	calls;
	uint64_t	expect_ret;
	const uint64_t	*expect_rip;
	uint32_t	nexpect;
	uint64_t	records;
	int32_t		tid;
	char		msg[256];
	pthread_t	thr;
};

static struct kinst_session kh_mt_sess;
static struct kinst_ring kh_mt_rings[KH_MT_THREADS];
static struct kinst_pcpu_count kh_mt_hits[KH_MT_THREADS];
static uint8_t *kh_mt_ringbuf[KH_MT_THREADS];

static void *
kh_mt_thread(void *v)
{
	struct kh_mt_arg *a = v;
	const uint64_t *x = a->fn->in[a->in];
	uint64_t (*f)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
	    uint64_t) = (uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t,
	    uint64_t, uint64_t))a->fn->fn;
	struct kinst_ring *ring = &kh_mt_rings[a->idx];
	uint8_t *buf;
	const struct kinst_hit_record *rec;
	size_t off, n;
	uint32_t c, i, nrec;
	uint64_t ret;
	stack_t ss;

	kh_os_cpu_index = a->idx;
	a->tid = (int32_t)gettid();
	ss.ss_sp = malloc(KH_ALTSTACK);
	ss.ss_size = KH_ALTSTACK;
	ss.ss_flags = 0;
	buf = malloc(KH_MT_RING);
	if (ss.ss_sp == NULL || buf == NULL || sigaltstack(&ss, NULL) != 0) {
		snprintf(a->msg, sizeof(a->msg), "thread setup failed");
		return (NULL);
	}
	for (c = 0; c < a->calls && a->msg[0] == 0; c++) {
		ret = f(x[0], x[1], x[2], x[3], x[4], x[5]);
		if (ret != a->expect_ret) {
			snprintf(a->msg, sizeof(a->msg), "call %u returned "
			    "%#jx, untraced %#jx", c, (uintmax_t)ret,
			    (uintmax_t)a->expect_ret);
			break;
		}
		/* This thread is its ring's only producer and consumer. */
		off = 0;
		while ((n = kinst_ring_get(ring, buf + off, KH_MT_RING - off))
		    > 0)
			off += n;
		nrec = (uint32_t)(off / sizeof(*rec));
		rec = (const struct kinst_hit_record *)buf;
		a->records += nrec;
		if (nrec != a->nexpect) {
			snprintf(a->msg, sizeof(a->msg), "call %u: %u records, "
			    "ground truth %u", c, nrec, a->nexpect);
			break;
		}
		for (i = 0; i < nrec; i++)
			if (rec[i].regs.rip != a->expect_rip[i] ||
			    rec[i].cpu != a->idx || rec[i].tid != a->tid) {
				snprintf(a->msg, sizeof(a->msg), "call %u hit "
				    "%u: rip %#jx cpu %u tid %d, expected rip "
				    "%#jx cpu %u tid %d", c, i,
				    (uintmax_t)rec[i].regs.rip, rec[i].cpu,
				    rec[i].tid, (uintmax_t)a->expect_rip[i],
				    a->idx, a->tid);
				break;
			}
	}
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	free(buf);
	return (NULL);
}

void
kh_check_concurrent(const struct kh_fn *fn, int in, uint32_t nthreads,
    uint32_t calls, struct kh_stats *st)
{
	struct kh_mt_arg args[KH_MT_THREADS];
	struct kh_out ref;
	uint64_t *rips, hits = 0, dropped = 0, total = 0;
	uint32_t bi, i, n = 0, narmed = 0;
	int rc;

	if (nthreads > KH_MT_THREADS)
		nthreads = KH_MT_THREADS;
	st->functions++;
	if (kh_func_load(fn, st) != 0 ||
	    kh_reference(fn, in, &ref, st) != 0)
		return;
	for (i = 0; i < KH_MT_THREADS; i++) {
		if (kh_mt_ringbuf[i] == NULL)
			kh_mt_ringbuf[i] = aligned_alloc(4096, KH_MT_RING);
		kinst_ring_init(&kh_mt_rings[i], kh_mt_ringbuf[i], KH_MT_RING);
	}
	kinst_session_init(&kh_mt_sess, kh_mt_rings, kh_mt_hits, nthreads);

	/* Arm every traceable boundary for the thread session. */
	for (bi = 0; bi < kh_cur.nb; bi++) {
		kh_armed[bi] = false;
		kh_probe_of[bi] = bi;
		if (kh_arm(&kh_probes[bi], bi, bi, 3000 + bi, st) !=
		    KINST_R_NONE)
			continue;
		kh_probes[bi].session = &kh_mt_sess;
		kh_armed[bi] = true;
		narmed++;
	}
	rips = malloc((kh_ngt ? kh_ngt : 1) * sizeof(*rips));
	for (i = 0; i < kh_ngt; i++) {
		int b = kh_boundary_index(kh_gt[i].rip - kh_cur.start);

		if (b >= 0 && kh_armed[b])
			rips[n++] = kh_gt[i].rip;
	}
	memset(args, 0, sizeof(args));
	kh_sti_expected = kh_sti_emulated = 0;
	kh_mode = KH_TRACE;
	for (i = 0; i < nthreads; i++) {
		args[i].fn = fn;
		args[i].in = in;
		args[i].idx = i;
		args[i].calls = calls;
		args[i].expect_ret = ref.regs[KINST_RAX];
		args[i].expect_rip = rips;
		args[i].nexpect = n;
		rc = pthread_create(&args[i].thr, NULL, kh_mt_thread, &args[i]);
		if (rc != 0)
			errx(1, "pthread_create: %s", strerror(rc));
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(args[i].thr, NULL);
	kh_mode = KH_IDLE;
	st->sti_redirects += kh_sti_expected;
	st->sti_emulated += kh_sti_emulated;
	if (kh_sti_expected != kh_sti_emulated) {
		printf("DIVERGENCE %s: %ju redirects to a sti trampoline "
		    "variant, %ju sti executed\n", fn->name,
		    (uintmax_t)kh_sti_expected, (uintmax_t)kh_sti_emulated);
		st->divergences++;
	}
	for (bi = 0; bi < kh_cur.nb; bi++)
		if (kh_armed[bi]) {
			hits += kh_probes[bi].hits;
			kh_disarm(&kh_probes[bi], st);
			kh_armed[bi] = false;
		}
	kh_text_check(st);
	for (i = 0; i < nthreads; i++) {
		total += args[i].records;
		dropped += kinst_ring_dropped(&kh_mt_rings[i]);
		if (args[i].msg[0] != 0) {
			printf("DIVERGENCE %s (thread %u of %u): %s\n", fn->name,
			    i, nthreads, args[i].msg);
			st->divergences++;
		}
	}
	st->runs += (uint64_t)nthreads * calls;
	st->records += total;
	st->boundaries += kh_cur.nb;
	if (dropped != 0 || hits != total + dropped) {
		printf("DIVERGENCE %s: probe hits %ju, records %ju, dropped "
		    "%ju\n", fn->name, (uintmax_t)hits, (uintmax_t)total,
		    (uintmax_t)dropped);
		st->divergences++;
	}
	printf("%-24s %u threads x %u calls, %u probes armed, %u hits per "
	    "call, %ju records\n", fn->name, nthreads, calls, narmed, n,
	    (uintmax_t)total);
	fflush(stdout);
	free(rips);
}

/* ---- drops: a hit nested in the handler, and a full ring ---- */

/* Arm one probe at a live text address (not already patched).  0 or -1. */
static int
kh_arm_addr(struct kinst_probe *p, uint64_t addr, size_t avail, uint32_t slot,
    uint32_t id)
{
	uint8_t img[KINST_TRAMP_SIZE], bytes[16];
	uint64_t tramp = (uint64_t)(uintptr_t)kh_tramp_rx +
	    (uint64_t)slot * KINST_TRAMP_SIZE;
	int r;

	memcpy(bytes, (const void *)(uintptr_t)addr, avail < 16 ? avail : 16);
	memset(p, 0, sizeof(*p));
	r = kinst_probe_prepare(p, bytes, avail < 16 ? avail : 16, addr, tramp,
	    img);
	if (r != KINST_R_NONE) {
		printf("HARNESS ERROR: probe at %#jx refused: %s\n",
		    (uintmax_t)addr, kinst_reason_name(r));
		return (-1);
	}
	memcpy(kh_tramp_rw + (size_t)slot * KINST_TRAMP_SIZE, img,
	    KINST_TRAMP_SIZE);
	p->session = &kh_sess;
	p->id = id;
	if (kinst_ptable_insert(&kh_eng.table, p) != KINST_PT_OK)
		return (-1);
	kh_text_write(addr, 0xcc);
	return (0);
}

static void
kh_disarm_addr(struct kinst_probe *p)
{
	kh_text_write(p->addr, p->orig[0]);
	kinst_ptable_remove(&kh_eng.table, p);
}

/*
 * A probe inside the handler's own path (kinst_os_now_ns, called while the
 * outer hit writes its record), with SIGTRAP allowed to nest (SA_NODEFER):
 * the kernel's "NMI hits a probe inside the handler" case.  The nested hit
 * must still run its instruction correctly and be counted as a drop; the
 * outer record must be intact.
 */
void
kh_check_nested(struct kh_stats *st)
{
	static const struct kh_fn *fn;
	struct kinst_probe outer, inner;
	struct sigaction sa, old;
	struct kh_out ref, o;
	const struct kh_sym *sym;
	const struct kinst_hit_record *rec;
	char why[256];
	const char *d;
	uint32_t nrec;
	int i;

	for (i = 0; kh_corpus_asm[i].name != NULL; i++)
		if (strcmp(kh_corpus_asm[i].name, "asm_call") == 0)
			fn = &kh_corpus_asm[i];
	sym = kh_find_symbol("kinst_os_now_ns");
	if (fn == NULL || sym == NULL) {
		printf("HARNESS ERROR: asm_call or kinst_os_now_ns missing\n");
		st->harness_errors++;
		return;
	}
	st->functions++;
	kh_run(fn, fn->in[1], KH_IDLE, &ref);
	memcpy(kh_ref_scratch, &kh_scratch, sizeof(kh_scratch));
	memcpy(kh_ref_stack, kh_stack, sizeof(kh_stack));

	sigaction(SIGTRAP, NULL, &old);
	sa = old;
	sa.sa_flags |= SA_NODEFER;
	sigaction(SIGTRAP, &sa, NULL);
	if (kh_arm_addr(&outer, (uint64_t)(uintptr_t)fn->fn, 16, 100, 77) != 0 ||
	    kh_arm_addr(&inner, sym->addr, sym->size, 101, 78) != 0) {
		st->harness_errors++;
		sigaction(SIGTRAP, &old, NULL);
		return;
	}
	kh_ring_reset();
	st->runs++;
	kh_run(fn, fn->in[1], KH_TRACE, &o);
	kh_disarm_addr(&inner);
	kh_disarm_addr(&outer);
	sigaction(SIGTRAP, &old, NULL);

	d = kh_outcome_diff(&ref, &o, why, sizeof(why));
	nrec = kh_ring_drain();
	rec = (const struct kinst_hit_record *)kh_recbuf;
	printf("nested: outer hits %ju, inner hits %ju, session hits %ju, "
	    "records %u, dropped %ju\n", (uintmax_t)outer.hits,
	    (uintmax_t)inner.hits, (uintmax_t)kh_hits[0].n, nrec,
	    (uintmax_t)kinst_ring_dropped(&kh_ring));
	if (d != NULL) {
		printf("DIVERGENCE nested hit: %s\n", d);
		st->divergences++;
	} else if (outer.hits != 1 || inner.hits != 1 || nrec != 1 ||
	    kinst_ring_dropped(&kh_ring) != 1 || kh_hits[0].n != 2 ||
	    rec[0].probe_id != 77 || rec[0].addr != outer.addr ||
	    rec[0].regs.gpr[KINST_RDI] != fn->in[1][0] ||
	    rec[0].regs.gpr[KINST_RSP] != kh_in_rsp - 8) {
		printf("DIVERGENCE nested hit: expected one outer record, one "
		    "drop, two session hits\n");
		st->divergences++;
	}
	st->records += nrec;
}

/*
 * A ring too small for a run: the run is still exact, the records that
 * fit are the ground truth's first ones, and hits == records + drops.
 */
void
kh_check_ring_full(struct kh_stats *st)
{
	const struct kh_fn *fn = NULL;
	struct kinst_probe p;
	struct kinst_ring small;
	static uint8_t smallbuf[4096] __attribute__((aligned(64)));
	struct kh_out ref, o;
	const struct kinst_hit_record *rec;
	char why[256];
	const char *d;
	uint32_t i, j, nrec, bi;
	uint64_t dropped;

	for (i = 0; kh_corpus_o2np[i].name != NULL; i++)
		if (strcmp(kh_corpus_o2np[i].name, "o2np_collatz") == 0)
			fn = &kh_corpus_o2np[i];
	if (fn == NULL || kh_func_load(fn, st) != 0 ||
	    kh_reference(fn, 1, &ref, st) != 0)
		return;
	st->functions++;
	/* The loop's most frequent address. */
	bi = kh_boundary_index(kh_gt[kh_ngt / 2].rip - kh_cur.start);
	if (kh_arm_addr(&p, kh_cur.start + kh_cur.off[bi],
	    kh_cur.size - kh_cur.off[bi], 200, 99) != 0) {
		st->harness_errors++;
		return;
	}
	kinst_ring_init(&small, smallbuf, sizeof(smallbuf));
	kh_sess.rings = &small;
	kh_hits[0].n = 0;
	st->runs++;
	kh_run(fn, fn->in[1], KH_TRACE, &o);
	kh_sess.rings = &kh_ring;
	kh_disarm_addr(&p);
	d = kh_outcome_diff(&ref, &o, why, sizeof(why));
	dropped = kinst_ring_dropped(&small);
	nrec = 0;
	{
		size_t off = 0, n;

		while ((n = kinst_ring_get(&small, kh_recbuf + off,
		    KH_RING_SIZE - off)) > 0)
			off += n;
		nrec = (uint32_t)(off / sizeof(*rec));
	}
	rec = (const struct kinst_hit_record *)kh_recbuf;
	printf("ring full: %ju hits, %u records in a %zu-byte ring, %ju "
	    "dropped\n", (uintmax_t)p.hits, nrec, sizeof(smallbuf),
	    (uintmax_t)dropped);
	if (d != NULL) {
		printf("DIVERGENCE ring full: %s\n", d);
		st->divergences++;
		return;
	}
	if (dropped == 0 || p.hits != nrec + dropped || kh_hits[0].n != p.hits) {
		printf("DIVERGENCE ring full: hits %ju != records %u + dropped "
		    "%ju (session hits %ju)\n", (uintmax_t)p.hits, nrec,
		    (uintmax_t)dropped, (uintmax_t)kh_hits[0].n);
		st->divergences++;
		return;
	}
	for (i = 0, j = 0; i < kh_ngt && j < nrec; i++) {
		if (kh_gt[i].rip != p.addr)
			continue;
		st->records++;
		if (!kh_regs_equal(&kh_gt[i], &rec[j].regs)) {
			printf("DIVERGENCE ring full: record %u differs from "
			    "ground truth\n", j);
			kh_print_regs_diff(&kh_gt[i], &rec[j].regs);
			st->divergences++;
			return;
		}
		j++;
	}
}

/*
 * The control side's OS hooks, for kinst_ts_create (kinst_tstatectl.c):
 * one thread sets tables up, so the lock has nothing to exclude.
 */
void *
kinst_os_alloc(size_t size)
{
	return (calloc(1, size ? size : 1));
}

void
kinst_os_free(void *p, size_t size)
{
	(void)size;
	free(p);
}

void
kinst_os_ctl_lock(void)
{
}

void
kinst_os_ctl_unlock(void)
{
}

/*
 * Variables by name (vars_test.cc): the function's boundaries, then one
 * input's ground truth (the hook sees each state as the single-step run
 * reaches it) and a traced run with every boundary that has a program
 * armed at once, over a per-thread state table as a kernel session has one.
 */
int
kh_vars_load(const struct kh_fn *fn, const uint32_t **offs, uint32_t *nb,
    uint64_t *start, struct kh_stats *st)
{
	if (kh_func_begin(fn, true, st) != 0)
		return (-1);
	*offs = kh_cur.off;
	*nb = kh_cur.nb;
	*start = kh_cur.start;
	return (0);
}

int
kh_vars_run(const struct kh_fn *fn, int in,
    struct kh_varm *arm, kh_vstep_fn hook, void *ctx, struct kh_vrun *vr,
    struct kh_stats *st)
{
	static struct kinst_prog_cpu pst[KH_MT_THREADS];
	struct kinst_ts_setup su;
	struct kinst_tstate *ts = NULL;
	struct kh_out ref, o;
	uint64_t *capbuf;
	char why[256];
	const char *d;
	uint32_t bi;
	size_t got, n;
	int rc;

	memset(vr, 0, sizeof(*vr));
	kh_vhook = hook;
	kh_vhook_ctx = ctx;
	rc = kh_reference(fn, in, &ref, st);
	kh_vhook = NULL;
	if (rc != 0)
		return (-1);
	vr->gt = kh_gt;
	vr->ngt = kh_ngt;
	memset(&su, 0, sizeof(su));
	su.nthreads = 4;
	if (kinst_ts_create(&su, KH_MT_THREADS, &ts) != 0) {
		printf("HARNESS ERROR %s: kinst_ts_create failed\n", fn->name);
		st->harness_errors++;
		return (-1);
	}
	capbuf = aligned_alloc(64, KH_MT_THREADS * KINST_CAP_REC_MAX);
	kh_sess.capbuf = capbuf;
	kh_sess.pstats = pst;
	kh_sess.ts = ts;
	memset(pst, 0, sizeof(pst));
	for (bi = 0; bi < kh_cur.nb; bi++) {
		kh_armed[bi] = false;
		arm[bi].armed = 0;
		if (!arm[bi].arm)
			continue;
		if (kh_arm(&kh_probes[bi], bi, bi, 5000 + bi, st) ==
		    KINST_R_NONE) {
			kh_probes[bi].prog = arm[bi].prog;
			kh_armed[bi] = true;
			arm[bi].armed = 1;
			vr->armed++;
		}
	}
	st->runs++;
	d = kh_traced_disarm(fn, in, &ref, &o, why, sizeof(why), st);
	kh_sess.capbuf = NULL;
	kh_sess.pstats = NULL;
	kh_sess.ts = NULL;
	free(capbuf);
	vr->filtered = pst[0].st.filtered;
	vr->faults = pst[0].st.faults;
	kinst_ts_read_stats(ts, &vr->ts);
	kinst_ts_free(ts);
	if (d != NULL) {
		printf("DIVERGENCE %s input #%d: the run with variables' "
		    "programs differs: %s\n", fn->name, in, d);
		st->divergences++;
		return (-1);
	}
	if (kinst_ring_dropped(&kh_ring) != 0) {
		printf("HARNESS ERROR %s input #%d: records dropped\n",
		    fn->name, in);
		st->harness_errors++;
		return (-1);
	}
	for (got = 0; (n = kinst_ring_get(&kh_ring, kh_recbuf + got,
	    KH_RING_SIZE - got)) > 0; got += n)
		;
	vr->recs = kh_recbuf;
	vr->nbytes = got;
	return (0);
}
