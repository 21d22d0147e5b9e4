/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FreeBSD no-fault read (issue 10, defect 2): kmod/freebsd/kinst_nofault.S
 * assembled for the build host, and the trap decision
 * kinst_fbsd_nofault_fixup() (common/kinst_freebsd.c).  A SIGSEGV handler
 * plays trap_check() calling dtrace_trap_func: it lays the fault out as a
 * kernel-mode struct trapframe (KINST_FBSD_TF_*), asks the decision, and
 * resumes where it says.
 */
#include <atf-c.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "kinst_freebsd.h"

/* kinst_nofault.S */
int	kinst_nofault_copy(void *dst, const void *src, size_t len);
int	kinst_nofault_install(void);
int	kinst_nofault_remove(void);
extern char kinst_nofault_start[], kinst_nofault_end[], kinst_nofault_fail[];

/* What the kernel and the shim provide. */
void	*dtrace_trap_func;
int	kinst_fbsd_trap_nofault(void *tf, unsigned type);
int
kinst_fbsd_trap_nofault(void *tf, unsigned type)
{
	(void)tf;
	(void)type;
	return (0);
}

#define	TF_WORDS	(KINST_FBSD_TF_SIZE / 8)
#define	KCS		0x20	/* a kernel-mode %cs (RPL 0) */

static uint32_t nf_active;
static unsigned nf_faults, nf_declined;
static sigjmp_buf nf_jmp;

static void
nf_on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t tf[TF_WORDS];

	(void)sig;
	(void)si;
	nf_faults++;
	memset(tf, 0, sizeof(tf));
	tf[KINST_FBSD_TF_RIP / 8] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	tf[KINST_FBSD_TF_CS / 8] = KCS;
	if (!kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, nf_active,
	    (uint64_t)(uintptr_t)kinst_nofault_start,
	    (uint64_t)(uintptr_t)kinst_nofault_end,
	    (uint64_t)(uintptr_t)kinst_nofault_fail)) {
		nf_declined++;
		siglongjmp(nf_jmp, 1);	/* trap() would have run */
	}
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)tf[KINST_FBSD_TF_RIP / 8];
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

ATF_TC_WITHOUT_HEAD(fixup_decision);
ATF_TC_BODY(fixup_decision, tc)
{
	static const uint32_t ours[] = { KINST_FBSD_T_PAGEFLT,
	    KINST_FBSD_T_PROTFLT, KINST_FBSD_T_SEGNPFLT, KINST_FBSD_T_STKFLT };
	static const uint32_t others[] = { 1, 3, 6, 10, 14, 18, 19, 22, 23,
	    25, 28, 29 };
	const uint64_t start = 0xffffffff80801000ull, end = start + 0x20,
	    fix = end + 1;
	uint64_t tf[TF_WORDS], was[TF_WORDS];
	size_t i;

#define	FRAME(rip, cs) do {						\
	memset(tf, 0x5a, sizeof(tf));					\
	tf[KINST_FBSD_TF_RIP / 8] = (rip);				\
	tf[KINST_FBSD_TF_CS / 8] = (cs);				\
	memcpy(was, tf, sizeof(tf));					\
} while (0)

	for (i = 0; i < sizeof(ours) / sizeof(ours[0]); i++) {
		FRAME(start, KCS);
		ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, ours[i], 1, start,
		    end, fix), 1);
		ATF_CHECK_EQ(tf[KINST_FBSD_TF_RIP / 8], fix);
		FRAME(end - 1, KCS);
		ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, ours[i], 2, start,
		    end, fix), 1);
	}
	/* Declined, frame untouched. */
	FRAME(start, KCS);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 0,
	    start, end, fix), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(end, KCS);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    start, end, fix), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(start - 1, KCS);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    start, end, fix), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	FRAME(start, KCS | 3);
	ATF_CHECK_EQ(kinst_fbsd_nofault_fixup(tf, KINST_FBSD_T_PAGEFLT, 1,
	    start, end, fix), 0);
	ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		FRAME(start, KCS);
		ATF_CHECK_EQ_MSG(kinst_fbsd_nofault_fixup(tf, others[i], 1,
		    start, end, fix), 0, "trap %u", others[i]);
		ATF_CHECK(memcmp(tf, was, sizeof(tf)) == 0);
	}
#undef FRAME
}

ATF_TC_WITHOUT_HEAD(install_remove);
ATF_TC_BODY(install_remove, tc)
{
	void *other = (void *)&other;

	dtrace_trap_func = NULL;
	ATF_CHECK_EQ(kinst_nofault_install(), 0);
	ATF_CHECK(dtrace_trap_func == (void *)kinst_fbsd_trap_nofault);
	ATF_CHECK_EQ(kinst_nofault_install(), 1);
	ATF_CHECK_EQ(kinst_nofault_remove(), 0);
	ATF_CHECK(dtrace_trap_func == NULL);
	ATF_CHECK_EQ(kinst_nofault_remove(), 1);
	dtrace_trap_func = other;
	ATF_CHECK_EQ(kinst_nofault_install(), 1);
	ATF_CHECK_EQ(kinst_nofault_remove(), 1);
	ATF_CHECK(dtrace_trap_func == other);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, copy);
	ATF_TP_ADD_TC(tp, fixup_decision);
	ATF_TP_ADD_TC(tp, install_remove);
	return (atf_no_error());
}
