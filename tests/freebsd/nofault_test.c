/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FreeBSD no-fault reads (issue 10, defect 2; issue 11's user reads):
 * kmod/freebsd/kinst_nofault.S assembled for the build host, the trap
 * decision kinst_fbsd_nofault_fixup() and the user range check
 * kinst_fbsd_user_range_ok() (kmod/freebsd/kinst_freebsd.c).  A SIGSEGV handler
 * plays trap_check() calling dtrace_trap_func: it lays the fault out as a
 * kernel-mode struct trapframe (KINST_FBSD_TF_*), asks the decision, and
 * resumes where it says.  stac/clac are #UD in user mode: a SIGILL handler
 * counts them, keeps the AC flag they would set in nf_ac, and skips them.
 */
#include <atf-c.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "kinst_freebsd.h"

/* kinst_nofault.S */
int	kinst_nofault_copy(void *dst, const void *src, size_t len);
int	kinst_nofault_install(void *gate);
int	kinst_nofault_remove(void *gate);
extern void *kinst_nofault_gate;
int	kinst_nofault_copy_user(void *dst, const void *src, size_t len);
extern int kinst_nofault_smap;
extern char kinst_nofault_start[], kinst_nofault_end[], kinst_nofault_fail[];
extern char kinst_nofault_ustart[], kinst_nofault_uend[], kinst_nofault_ufail[];

/* What the kernel and the shim provide. */
void	*dtrace_trap_func;
int	kinst_fbsd_trap_nofault(void *tf, unsigned type);
int	kinst_nofault_ours(void);
int
kinst_fbsd_trap_nofault(void *tf, unsigned type)
{
	(void)tf;
	(void)type;
	return (0);
}

#define	TF_WORDS	(KINST_FBSD_TF_SIZE / 8)
#define	KCS		0x20	/* a kernel-mode %cs (RPL 0) */

#define	LIMIT48	0x0000800000000000ull	/* VM_MAXUSER_ADDRESS_LA48 */

static uint32_t nf_active;
static unsigned nf_faults, nf_declined;
static sigjmp_buf nf_jmp;
static uint32_t nf_trapno = KINST_FBSD_T_PAGEFLT;
static bool nf_ac;			/* the AC flag stac/clac would keep */
static bool nf_ac_at_fault;
static unsigned nf_stac, nf_clac;
static uint64_t nf_fault_rip;

static void
nf_layout(struct kinst_fbsd_nofault *nf)
{
	nf->start = (uint64_t)(uintptr_t)kinst_nofault_start;
	nf->end = (uint64_t)(uintptr_t)kinst_nofault_end;
	nf->fail = (uint64_t)(uintptr_t)kinst_nofault_fail;
	nf->ustart = (uint64_t)(uintptr_t)kinst_nofault_ustart;
	nf->uend = (uint64_t)(uintptr_t)kinst_nofault_uend;
	nf->ufail = (uint64_t)(uintptr_t)kinst_nofault_ufail;
	nf->ulimit = LIMIT48;
}

static void
nf_on_segv(int sig, siginfo_t *si, void *ucv)
{
	struct kinst_fbsd_nofault nf;
	ucontext_t *uc = ucv;
	uint64_t tf[TF_WORDS];

	(void)sig;
	nf_faults++;
	nf_ac_at_fault = nf_ac;
	nf_fault_rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	memset(tf, 0, sizeof(tf));
	tf[KINST_FBSD_TF_RIP / 8] = nf_fault_rip;
	tf[KINST_FBSD_TF_CS / 8] = KCS;
	tf[KINST_FBSD_TF_ADDR / 8] = (uint64_t)(uintptr_t)si->si_addr;
	tf[KINST_FBSD_TF_RFLAGS / 8] = 0x2 | (nf_ac ? KINST_FBSD_PSL_AC : 0);
	nf_layout(&nf);
	if (!kinst_fbsd_nofault_fixup(tf, nf_trapno, nf_active, &nf)) {
		nf_declined++;
		siglongjmp(nf_jmp, 1);	/* trap() would have run */
	}
	/* iretq: rip and rflags from the frame. */
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)tf[KINST_FBSD_TF_RIP / 8];
	nf_ac = (tf[KINST_FBSD_TF_RFLAGS / 8] & KINST_FBSD_PSL_AC) != 0;
}

/* stac (0f 01 cb) and clac (0f 01 ca) raise #UD in user mode. */
static void
nf_on_sigill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	const uint8_t *ip;

	(void)sig;
	(void)si;
	ip = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
	if (ip[0] != 0x0f || ip[1] != 0x01 || (ip[2] != 0xcb && ip[2] != 0xca))
		abort();
	if (ip[2] == 0xcb) {
		nf_stac++;
		nf_ac = true;
	} else {
		nf_clac++;
		nf_ac = false;
	}
	uc->uc_mcontext.gregs[REG_RIP] += 3;
}

static uint8_t *
nf_pages(void)
{
	struct sigaction sa;
	uint8_t *p;
	long pg;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = nf_on_segv;
	sa.sa_flags = SA_SIGINFO;
	ATF_REQUIRE_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
	sa.sa_sigaction = nf_on_sigill;
	ATF_REQUIRE_EQ(sigaction(SIGILL, &sa, NULL), 0);
	pg = getpagesize();
	p = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ATF_REQUIRE(p != MAP_FAILED);
	for (long i = 0; i < pg; i++)
		p[i] = (uint8_t)(i * 7 + 1);
	ATF_REQUIRE_EQ(mprotect(p + pg, (size_t)pg, PROT_NONE), 0);
	return (p);
}

ATF_TC_WITHOUT_HEAD(copy);
ATF_TC_BODY(copy, tc)
{
	uint8_t *p, dst[64];
	long pg;

	p = nf_pages();
	pg = getpagesize();
	nf_active = 1;
	nf_faults = 0;
	memset(dst, 0, sizeof(dst));
	ATF_CHECK_EQ(kinst_nofault_copy(dst, p + 100, sizeof(dst)), 0);
	ATF_CHECK(memcmp(dst, p + 100, sizeof(dst)) == 0);
	ATF_CHECK_EQ(kinst_nofault_copy(dst, p + pg, 0), 0);
	ATF_CHECK_EQ(nf_faults, 0);
	/* 16 readable bytes, then the unmapped page. */
	memset(dst, 0xee, sizeof(dst));
	if (sigsetjmp(nf_jmp, 1) == 0)
		ATF_CHECK_EQ(kinst_nofault_copy(dst, p + pg - 16, 32), -1);
	else
		atf_tc_fail("a fault inside kinst_nofault_copy was declined");
	ATF_CHECK_EQ(nf_faults, 1);
	ATF_CHECK(memcmp(dst, p + pg - 16, 16) == 0);
	ATF_CHECK_EQ(dst[16], 0xee);
	/* Not inside a no-fault read: the fault goes to trap(). */
	nf_active = 0;
	nf_declined = 0;
	if (sigsetjmp(nf_jmp, 1) == 0) {
		(void)kinst_nofault_copy(dst, p + pg, 8);
		atf_tc_fail("the copy returned although nothing fixed it up");
	}
	ATF_CHECK_EQ(nf_declined, 1);
}

#define	FRAME(rip, cs, addr) do {					\
	memset(tf, 0x5a, sizeof(tf));					\
	tf[KINST_FBSD_TF_RIP / 8] = (rip);				\
	tf[KINST_FBSD_TF_CS / 8] = (cs);				\
	tf[KINST_FBSD_TF_ADDR / 8] = (addr);				\
	tf[KINST_FBSD_TF_RFLAGS / 8] = 0x40246;	/* AC and IF set */	\
	memcpy(was, tf, sizeof(tf));					\
} while (0)

/* Two synthetic copies: kernel [start, end), user [ustart, uend). */
static const struct kinst_fbsd_nofault fx = {
	.start = 0xffffffff80801000ull, .end = 0xffffffff80801020ull,
	.fail = 0xffffffff80801021ull,
	.ustart = 0xffffffff80801040ull, .uend = 0xffffffff80801050ull,
	.ufail = 0xffffffff80801058ull,
	.ulimit = LIMIT48,
};

static const uint32_t others[] = { 1, 3, 6, 10, 14, 18, 19, 22, 23,
    25, 28, 29 };

ATF_TC_WITHOUT_HEAD(fixup_decision);
ATF_TC_BODY(fixup_decision, tc)
{
	static const uint32_t ours[] = { KINST_FBSD_T_PAGEFLT,
	    KINST_FBSD_T_PROTFLT, KINST_FBSD_T_SEGNPFLT, KINST_FBSD_T_STKFLT };
	const uint64_t start = fx.start, end = fx.end, fix = fx.fail;
	uint64_t tf[TF_WORDS], was[TF_WORDS];
	size_t i;

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		FRAME(start, KCS, 0);
		ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, ours[i], 1, &fx), 1);
		ATF_CHECK_EQ(tf[KINST_FBSD_TF_RIP / 8], fix);
		FRAME(end - 1, KCS, 0);
		ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, ours[i], 2, &fx), 1);
		ATF_CHECK_EQ(tf[KINST_FBSD_TF_RIP / 8], fix);
	}
	/* A fault in the kernel copy at a user address: today's rules. */
	FRAME(start + 4, KCS, 0x1000);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    &fx), 1);
	ATF_CHECK_EQ(tf[KINST_FBSD_TF_RIP / 8], fix);
	/* Declined, frame untouched. */
	FRAME(start, KCS, 0);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 0,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(end, KCS, 0);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(start - 1, KCS, 0);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(start, KCS | 3, 0);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		FRAME(start, KCS, 0);
		ATF_CHECK_EQ_MSG(kinst_fbsd_nofault_fixup(tf, others[i], 1,
		    &fx), 0, "trap %u", others[i]);
		ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	}
}

ATF_TC_WITHOUT_HEAD(user_fixup_decision);
ATF_TC_BODY(user_fixup_decision, tc)
{
	static const uint32_t notours[] = { KINST_FBSD_T_PROTFLT,
	    KINST_FBSD_T_SEGNPFLT, KINST_FBSD_T_STKFLT };
	static const uint64_t uaddrs[] = { 0, 0x1000, 0x7fffffffeff8ull,
	    LIMIT48 - 1 };
	static const uint64_t kaddrs[] = { LIMIT48, 0x0100000000000000ull,
	    0xffff800000000000ull, 0xffffffff80801000ull };
	uint64_t tf[TF_WORDS], was[TF_WORDS];
	size_t i;

	/* A user-address page fault in the user copy: ufail, AC cleared. */
	for (i = 0; i < sizeof(uaddrs) / sizeof(uaddrs[0]); i++) {
		FRAME(fx.ustart, KCS, uaddrs[i]);
		ATF_CHECK_EQ_MSG(kinst_fbsd_nofault_fixup(tf,
		    KINST_FBSD_T_PAGEFLT, 1, &fx), 1, "addr %#llx",
		    (unsigned long long)uaddrs[i]);
		ATF_CHECK_EQ(tf[KINST_FBSD_TF_RIP / 8], fx.ufail);
		ATF_CHECK_EQ(tf[KINST_FBSD_TF_RFLAGS / 8], 0x246);
		/* Nothing but rip and rflags changed. */
		tf[KINST_FBSD_TF_RIP / 8] = was[KINST_FBSD_TF_RIP / 8];
		tf[KINST_FBSD_TF_RFLAGS / 8] = was[KINST_FBSD_TF_RFLAGS / 8];
		ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	}
	FRAME(fx.uend - 1, KCS, 0x1000);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 3,
	    &fx), 1);
	ATF_CHECK_EQ(tf[KINST_FBSD_TF_RIP / 8], fx.ufail);
	/* Outside the user copy's range: not ours. */
	FRAME(fx.uend, KCS, 0x1000);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(fx.ustart - 1, KCS, 0x1000);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	/* A fault on a kernel (or non-canonical) address there: trap(). */
	for (i = 0; i < sizeof(kaddrs) / sizeof(kaddrs[0]); i++) {
		FRAME(fx.ustart, KCS, kaddrs[i]);
		ATF_CHECK_EQ_MSG(kinst_fbsd_nofault_fixup(tf,
		    KINST_FBSD_T_PAGEFLT, 1, &fx), 0, "addr %#llx",
		    (unsigned long long)kaddrs[i]);
		ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	}
	/* Not a page fault: trap(). */
	for (i = 0; i < sizeof(notours) / sizeof(notours[0]); i++) {
		FRAME(fx.ustart, KCS, 0x1000);
		ATF_CHECK_EQ_MSG(kinst_fbsd_nofault_fixup(tf, notours[i], 1,
		    &fx), 0, "trap %u", notours[i]);
		ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	}
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		FRAME(fx.ustart, KCS, 0x1000);
		ATF_CHECK_EQ_MSG(kinst_fbsd_nofault_fixup(tf, others[i], 1,
		    &fx), 0, "trap %u", others[i]);
		ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	}
	/* No read in progress, or from user mode: not ours. */
	FRAME(fx.ustart, KCS, 0x1000);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 0,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(fx.ustart, KCS | 3, 0x1000);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    &fx), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
}
#undef FRAME

/*
 * Issue 22, defect 1 (seen live on FreeBSD 15.1): the kernel read must take
 * the direct map, below VM_MIN_KERNEL_ADDRESS, where the cdevpriv object
 * that devfs_destroy_cdevpriv calls through lived (0xfffff8000239b200).
 */
ATF_TC_WITHOUT_HEAD(kernel_range);
ATF_TC_BODY(kernel_range, tc)
{
	const uint64_t dmap48 = 0xfffff80000000000ull;	/* DMAP_MIN_ADDRESS */
	const uint64_t dmap57 = 0xff00000000000000ull;	/* with LA57 */
	const uint64_t kva = 0xfffffe0000000000ull;	/* VM_MIN_KERNEL_ADDRESS */
	bool la57;

	for (la57 = false; ; la57 = true) {
		ATF_CHECK(kinst_fbsd_kread_ok(0xfffff8000239b200ull + 16, 8,
		    la57));
		ATF_CHECK(kinst_fbsd_kread_ok(dmap48, 8, la57));
		ATF_CHECK(kinst_fbsd_kread_ok(kva, 4096, la57));
		ATF_CHECK(kinst_fbsd_kread_ok(0xffffffff80200000ull, 1 << 20,
		    la57));	/* KERNBASE text */
		ATF_CHECK(kinst_fbsd_kread_ok(0xfffffffffffffff8ull, 8, la57));
		ATF_CHECK(kinst_fbsd_kread_ok(0xffff800000000000ull, 8, la57));
		ATF_CHECK(kinst_fbsd_kread_ok(kva, 0, la57));
		ATF_CHECK(!kinst_fbsd_kread_ok(0xfffffffffffffff8ull, 9, la57));
		ATF_CHECK(!kinst_fbsd_kread_ok(0x1000, 8, la57));
		ATF_CHECK(!kinst_fbsd_kread_ok(0x00007fffffffe000ull, 8, la57));
		ATF_CHECK(!kinst_fbsd_kread_ok(0x0000800000000000ull, 8, la57));
		ATF_CHECK(!kinst_fbsd_kread_ok(0x00ff000000000000ull, 8, la57));
		if (la57)
			break;
	}
	/* LA57's kernel half (and direct map) start lower. */
	ATF_CHECK(kinst_fbsd_kread_ok(dmap57, 8, true));
	ATF_CHECK(!kinst_fbsd_kread_ok(dmap57, 8, false));
	ATF_CHECK(!kinst_fbsd_kread_ok(0xffff7ffffffffff8ull, 8, false));
	ATF_CHECK(kinst_fbsd_kread_ok(0xffff7ffffffffff8ull, 8, true));
}

ATF_TC_WITHOUT_HEAD(user_range);
ATF_TC_BODY(user_range, tc)
{
	const uint64_t L = LIMIT48;

	ATF_CHECK(kinst_fbsd_user_range_ok(0, 1, L));
	ATF_CHECK(kinst_fbsd_user_range_ok(0x1000, 8, L));
	ATF_CHECK(kinst_fbsd_user_range_ok(L - 8, 8, L));
	ATF_CHECK(kinst_fbsd_user_range_ok(L - 1, 1, L));
	ATF_CHECK(kinst_fbsd_user_range_ok(0, L, L));
	ATF_CHECK(!kinst_fbsd_user_range_ok(0x1000, 0, L));	/* empty */
	ATF_CHECK(!kinst_fbsd_user_range_ok(L - 8, 9, L));	/* crosses */
	ATF_CHECK(!kinst_fbsd_user_range_ok(L, 1, L));
	ATF_CHECK(!kinst_fbsd_user_range_ok(0, L + 1, L));
	ATF_CHECK(!kinst_fbsd_user_range_ok(L + 0x1000, 8, L)); /* hole */
	ATF_CHECK(!kinst_fbsd_user_range_ok(0xffffffff80000000ull, 8, L));
	ATF_CHECK(!kinst_fbsd_user_range_ok(~0ull - 3, 8, L));	/* wraps */
	ATF_CHECK(!kinst_fbsd_user_range_ok(8, ~0ull, L));	/* wraps */
	/* LA57: the limit is 2^56. */
	ATF_CHECK(kinst_fbsd_user_range_ok(L, 8, 0x0100000000000000ull));
	ATF_CHECK(!kinst_fbsd_user_range_ok(0x0100000000000000ull - 4, 8,
	    0x0100000000000000ull));
}

/*
 * The real user copy, with and without SMAP: the copy, a page fault in the
 * middle (fixed up, -1, the bytes before it copied), stac before the loop
 * and clac on both exits when kinst_nofault_smap is set, neither when not,
 * AC clear after either exit.
 */
static void
nf_copy_user_case(int smap)
{
	uint8_t *p, dst[64];
	long pg;
	unsigned n;

	p = nf_pages();
	pg = getpagesize();
	kinst_nofault_smap = smap;
	n = smap ? 1 : 0;
	nf_active = 1;
	nf_faults = nf_stac = nf_clac = 0;
	nf_ac = false;
	memset(dst, 0, sizeof(dst));
	ATF_CHECK_EQ(kinst_nofault_copy_user(dst, p + 100, sizeof(dst)), 0);
	ATF_CHECK(memcmp(dst, p + 100, sizeof(dst)) == 0);
	ATF_CHECK_EQ(nf_stac, n);
	ATF_CHECK_EQ(nf_clac, n);
	ATF_CHECK(!nf_ac);
	/* Zero bytes: no access, no stac. */
	ATF_CHECK_EQ(kinst_nofault_copy_user(dst, p + pg, 0), 0);
	ATF_CHECK_EQ(nf_stac, n);
	ATF_CHECK_EQ(nf_faults, 0);
	/* 16 readable bytes, then the page that is not present. */
	nf_stac = nf_clac = 0;
	memset(dst, 0xee, sizeof(dst));
	if (sigsetjmp(nf_jmp, 1) == 0)
		ATF_CHECK_EQ(kinst_nofault_copy_user(dst, p + pg - 16, 32),
		    -1);
	else
		atf_tc_fail("a fault inside kinst_nofault_copy_user was "
		    "declined");
	ATF_CHECK_EQ(nf_faults, 1);
	ATF_CHECK(nf_fault_rip >= (uint64_t)(uintptr_t)kinst_nofault_ustart &&
	    nf_fault_rip < (uint64_t)(uintptr_t)kinst_nofault_uend);
	ATF_CHECK_EQ(nf_ac_at_fault, smap != 0);
	ATF_CHECK(memcmp(dst, p + pg - 16, 16) == 0);
	ATF_CHECK_EQ(dst[16], 0xee);
	ATF_CHECK_EQ(nf_stac, n);
	ATF_CHECK_EQ(nf_clac, n);
	ATF_CHECK(!nf_ac);
	/* Not inside a no-fault read: the fault goes to trap(). */
	nf_active = 0;
	nf_declined = 0;
	if (sigsetjmp(nf_jmp, 1) == 0) {
		(void)kinst_nofault_copy_user(dst, p + pg, 8);
		atf_tc_fail("the copy returned although nothing fixed it up");
	}
	ATF_CHECK_EQ(nf_declined, 1);
	nf_ac = false;
	/* The kernel copy's range does not cover the user copy's. */
	nf_active = 1;
	nf_declined = 0;
	nf_trapno = KINST_FBSD_T_PROTFLT;
	if (sigsetjmp(nf_jmp, 1) == 0) {
		(void)kinst_nofault_copy_user(dst, p + pg, 8);
		atf_tc_fail("a #GP in the user copy was fixed up");
	}
	nf_trapno = KINST_FBSD_T_PAGEFLT;
	ATF_CHECK_EQ(nf_declined, 1);
	nf_ac = false;
	kinst_nofault_smap = 0;
	ATF_REQUIRE_EQ(munmap(p, (size_t)pg * 2), 0);
}

ATF_TC_WITHOUT_HEAD(copy_user);
ATF_TC_BODY(copy_user, tc)
{
	nf_copy_user_case(0);
}

ATF_TC_WITHOUT_HEAD(copy_user_smap);
ATF_TC_BODY(copy_user_smap, tc)
{
	nf_copy_user_case(1);
}

ATF_TC_WITHOUT_HEAD(install_remove);
ATF_TC_BODY(install_remove, tc)
{
	void *other = (void *)&other;
	static char gate[32];

	dtrace_trap_func = NULL;
	kinst_nofault_gate = NULL;
	ATF_CHECK_EQ(kinst_nofault_ours(), 0);
	ATF_CHECK_EQ(kinst_nofault_install(gate), 0);
	ATF_CHECK(dtrace_trap_func == (void *)gate);
	/* Not ours until the shim has published the gate it installed. */
	ATF_CHECK_EQ(kinst_nofault_ours(), 0);
	kinst_nofault_gate = gate;
	ATF_CHECK_EQ(kinst_nofault_ours(), 1);
	ATF_CHECK_EQ(kinst_nofault_install(gate), 1);
	/* dtrace.ko's load stores its handler over ours (issue 22, 4). */
	dtrace_trap_func = other;
	ATF_CHECK_EQ(kinst_nofault_ours(), 0);
	dtrace_trap_func = (void *)gate;
	ATF_CHECK_EQ(kinst_nofault_remove(gate), 0);
	ATF_CHECK(dtrace_trap_func == NULL);
	ATF_CHECK_EQ(kinst_nofault_ours(), 0);
	ATF_CHECK_EQ(kinst_nofault_remove(gate), 1);
	dtrace_trap_func = other;
	ATF_CHECK_EQ(kinst_nofault_install(gate), 1);
	ATF_CHECK_EQ(kinst_nofault_remove(gate), 1);
	ATF_CHECK(dtrace_trap_func == other);
	ATF_CHECK_EQ(kinst_nofault_ours(), 0);
	kinst_nofault_gate = NULL;
	dtrace_trap_func = NULL;
}

/*
 * The trap gate (kinst_fbsd_trapgate_build, defect 6), run: cli is #GP in
 * user mode (SIGSEGV, SI_KERNEL), so a handler stands in for it at the
 * gate's one cli byte and counts it; pushfq/popfq run as they are.  With
 * the word naming a handler the gate calls it with the trap's arguments
 * and the stack aligned as after a call, and returns its answer; with the
 * word 0 (after the unload) it returns 0 without calling anything.
 */
static uint8_t *tg_code;
static unsigned tg_cli, tg_calls, tg_misaligned;
static void *tg_tf;
static unsigned tg_type;

static void
tg_on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint8_t *ip = (uint8_t *)uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	if (si->si_code != SI_KERNEL || ip != tg_code + 5 || *ip != 0xfa)
		abort();
	tg_cli++;
	uc->uc_mcontext.gregs[REG_RIP] += 1;
}

static __attribute__((noinline)) int
tg_handler(void *tf, unsigned type)
{
	if ((uintptr_t)__builtin_frame_address(0) % 16 != 0)
		tg_misaligned++;
	tg_calls++;
	tg_tf = tf;
	tg_type = type;
	return (5);
}

ATF_TC_WITHOUT_HEAD(trap_gate);
ATF_TC_BODY(trap_gate, tc)
{
	struct sigaction sa, old;
	int (*gate)(void *, unsigned);
	static uint64_t word;
	long pg = getpagesize();
	uint8_t *p;
	int tf;

	p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ATF_REQUIRE(p != MAP_FAILED);
	memset(p, 0xcc, (size_t)pg);
	ATF_REQUIRE_EQ(kinst_fbsd_trapgate_build(p,
	    (uint64_t)(uintptr_t)&word), KINST_FBSD_TRAPGATE_SIZE);
	ATF_REQUIRE_EQ(mprotect(p, (size_t)pg, PROT_READ | PROT_EXEC), 0);
	tg_code = p;
	gate = (int (*)(void *, unsigned))(void *)p;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = tg_on_segv;
	sa.sa_flags = SA_SIGINFO;
	ATF_REQUIRE_EQ(sigaction(SIGSEGV, &sa, &old), 0);

	word = (uint64_t)(uintptr_t)tg_handler;
	ATF_CHECK_EQ(gate(&tf, 12), 5);
	ATF_CHECK_EQ(tg_calls, 1);
	ATF_CHECK(tg_tf == &tf);
	ATF_CHECK_EQ(tg_type, 12);
	ATF_CHECK_EQ(tg_misaligned, 0);
	ATF_CHECK_EQ(tg_cli, 1);
	/* The unload stored 0: a late caller gets "not mine". */
	word = 0;
	ATF_CHECK_EQ(gate(&tf, 12), 0);
	ATF_CHECK_EQ(tg_calls, 1);
	ATF_CHECK_EQ(tg_cli, 2);
	/* The word is read at every call, not at build time. */
	word = (uint64_t)(uintptr_t)tg_handler;
	ATF_CHECK_EQ(gate(NULL, 3), 5);
	ATF_CHECK_EQ(tg_calls, 2);
	ATF_CHECK_EQ(tg_type, 3);
	ATF_REQUIRE_EQ(sigaction(SIGSEGV, &old, NULL), 0);
	munmap(p, (size_t)pg);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, copy);
	ATF_TP_ADD_TC(tp, fixup_decision);
	ATF_TP_ADD_TC(tp, user_fixup_decision);
	ATF_TP_ADD_TC(tp, user_range);
	ATF_TP_ADD_TC(tp, kernel_range);
	ATF_TP_ADD_TC(tp, copy_user);
	ATF_TP_ADD_TC(tp, copy_user_smap);
	ATF_TP_ADD_TC(tp, install_remove);
	ATF_TP_ADD_TC(tp, trap_gate);
	return (atf_no_error());
}
