/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FreeBSD #BP hook (kmod/freebsd/kinst_hook.S), assembled for the build
 * host and run on synthetic trap frames laid out as amd64's exception.S
 * leaves them for a kernel-mode int3 (kinst_fbsd_frame_at()).  The kernel's
 * exits (doreti, *dtrace_invop_calltrap_addr) are replaced by stubs that
 * record the stack pointer they were entered with (hook_harness.S), and
 * kinst_fbsd_trap() -- in the kernel the shim's C entry -- is a scripted
 * stand-in here that checks what the hook passed it.
 *
 * What this proves about the assembly: the frame is moved down by exactly
 * KINST_FBSD_FRAME_SHIFT with every word intact; the C function gets the
 * moved frame; "not ours" leaves through calltrap and "ours" through doreti,
 * each with %rsp at the moved frame; a return address stored just below
 * the interrupted %rsp survives to the exit untouched; nothing at or above
 * the interrupted %rsp is ever written; and the hook install/remove
 * helpers are compare-and-swaps that never take a hook someone else owns.
 */
#include <atf-c.h>
#include <stdint.h>
#include <string.h>

#include "kinst_freebsd.h"

int	kh_run_hook(void *frame);
int	kinst_fbsd_trap(void *tf);
void	kinst_hook(void);
int	kinst_hook_install(void);
int	kinst_hook_remove(void);
void	*kinst_hook_owner(void);

extern uint64_t kh_exit_rsp;
extern void *dtrace_invop_jump_addr;

enum scenario { SC_NOT_OURS, SC_REDIRECT, SC_CALL };

#define	STACK_SIZE	(256 * 1024)
#define	W(tf, off)	(*(uint64_t *)((uint8_t *)(tf) + (off)))

static _Alignas(64) uint8_t kh_stack[STACK_SIZE];
static enum scenario kh_sc;
static uint64_t kh_isp;
static uint8_t kh_orig[KINST_FBSD_TF_SIZE];
static int kh_calls;
static int kh_bad_frame_ptr, kh_bad_frame_copy, kh_bad_write;

#define	RETADDR		0xffffffff80a1b2c3ull
#define	TARGET		0xffffffff80c0ffeeull
#define	TRAMP		0xffffffff81234500ull

/* Stand-in for the shim's C entry (kinst_fbsd_os.c). */
int
kinst_fbsd_trap(void *tf)
{
	uint64_t sp;

	kh_calls++;
	if ((uint64_t)(uintptr_t)tf != kinst_fbsd_moved_frame_at(kh_isp))
		kh_bad_frame_ptr++;
	if (memcmp(tf, kh_orig, sizeof(kh_orig)) != 0)
		kh_bad_frame_copy++;
	switch (kh_sc) {
	case SC_NOT_OURS:
		return (0);
	case SC_REDIRECT:
		W(tf, KINST_FBSD_TF_RIP) = TRAMP;
		W(tf, KINST_FBSD_TF_RFLAGS) &= ~(uint64_t)0x200;
		return (1);
	case SC_CALL:
		/* What kinst_os_write_stack() does for an emulated call. */
		sp = W(tf, KINST_FBSD_TF_RSP) - 8;
		if (!kinst_stack_write_ok(W(tf, KINST_FBSD_TF_RSP), sp, 8,
		    KINST_FBSD_STACK_ROOM)) {
			kh_bad_write++;
			return (0);
		}
		*(volatile uint64_t *)(uintptr_t)sp = RETADDR;
		W(tf, KINST_FBSD_TF_RSP) = sp;
		W(tf, KINST_FBSD_TF_RIP) = TARGET;
		return (1);
	}
	return (0);
}

static uint8_t
pattern(size_t i)
{
	return ((uint8_t)(i * 13 + 5));
}

/*
 * Lay out a frame for interrupted stack pointer isp (offset r above a
 * 16-byte boundary), run the hook, and check everything the hook is
 * responsible for.  Returns the exit the hook took.
 */
static int
run(const atf_tc_t *tc, enum scenario sc, unsigned r)
{
	uint64_t base, isp, f, m;
	size_t i, top;
	int exit;

	(void)tc;
	base = (uint64_t)(uintptr_t)kh_stack;
	for (i = 0; i < STACK_SIZE; i++)
		kh_stack[i] = pattern(i);
	isp = ((base + STACK_SIZE - 1024) & ~(uint64_t)15) + r;
	f = kinst_fbsd_frame_at(isp);
	m = kinst_fbsd_moved_frame_at(isp);
	for (i = 0; i < KINST_FBSD_TF_SIZE; i++)
		kh_orig[i] = (uint8_t)(0x40 + i);
	/* The words the CPU pushed, as a kernel-mode #BP has them. */
	W(kh_orig, KINST_FBSD_TF_RIP) = 0xffffffff80400001ull;
	W(kh_orig, KINST_FBSD_TF_CS) = 0x20;
	W(kh_orig, KINST_FBSD_TF_RFLAGS) = 0x246;
	W(kh_orig, KINST_FBSD_TF_RSP) = isp;
	W(kh_orig, KINST_FBSD_TF_SS) = 0x28;
	memcpy(kh_stack + (f - base), kh_orig, sizeof(kh_orig));

	kh_sc = sc;
	kh_isp = isp;
	kh_calls = kh_bad_frame_ptr = kh_bad_frame_copy = kh_bad_write = 0;
	kh_exit_rsp = 0;
	exit = kh_run_hook((void *)(uintptr_t)f);

	ATF_CHECK_EQ_MSG(kh_calls, 1, "r=%u: C entry called %d times", r,
	    kh_calls);
	ATF_CHECK_EQ_MSG(kh_bad_frame_ptr, 0, "r=%u: C got the wrong frame", r);
	ATF_CHECK_EQ_MSG(kh_bad_frame_copy, 0, "r=%u: frame copied wrong", r);
	ATF_CHECK_EQ_MSG(kh_bad_write, 0, "r=%u: push refused", r);
	ATF_CHECK_EQ_MSG(kh_exit_rsp, m, "r=%u: exit %%rsp %#jx, frame at %#jx",
	    r, (uintmax_t)kh_exit_rsp, (uintmax_t)m);
	/* Nothing at or above the interrupted stack pointer was written. */
	top = (size_t)(isp - base);
	for (i = top; i < STACK_SIZE; i++)
		if (kh_stack[i] != pattern(i)) {
			ATF_CHECK_MSG(false, "r=%u: byte isp+%zu written", r,
			    i - top);
			break;
		}
	return (exit);
}

ATF_TC_WITHOUT_HEAD(not_ours);
ATF_TC_BODY(not_ours, tc)
{
	uint64_t m;
	unsigned r;

	for (r = 0; r < 16; r += 4) {
		ATF_CHECK_EQ(run(tc, SC_NOT_OURS, r), 2);
		/* calltrap gets the frame exactly as the entry code built it. */
		m = kinst_fbsd_moved_frame_at(kh_isp);
		ATF_CHECK_MSG(memcmp((void *)(uintptr_t)m, kh_orig,
		    sizeof(kh_orig)) == 0, "r=%u: frame changed", r);
	}
}

ATF_TC_WITHOUT_HEAD(redirect);
ATF_TC_BODY(redirect, tc)
{
	uint8_t want[KINST_FBSD_TF_SIZE];
	uint64_t m;
	unsigned r;

	for (r = 0; r < 16; r += 4) {
		ATF_CHECK_EQ(run(tc, SC_REDIRECT, r), 1);
		memcpy(want, kh_orig, sizeof(want));
		W(want, KINST_FBSD_TF_RIP) = TRAMP;
		W(want, KINST_FBSD_TF_RFLAGS) = 0x046;
		m = kinst_fbsd_moved_frame_at(kh_isp);
		ATF_CHECK_MSG(memcmp((void *)(uintptr_t)m, want,
		    sizeof(want)) == 0, "r=%u: doreti frame wrong", r);
	}
}

ATF_TC_WITHOUT_HEAD(emulated_call);
ATF_TC_BODY(emulated_call, tc)
{
	uint8_t want[KINST_FBSD_TF_SIZE];
	uint64_t m, got;
	unsigned r;

	for (r = 0; r < 16; r += 4) {
		ATF_CHECK_EQ(run(tc, SC_CALL, r), 1);
		m = kinst_fbsd_moved_frame_at(kh_isp);
		memcpy(want, kh_orig, sizeof(want));
		W(want, KINST_FBSD_TF_RIP) = TARGET;
		W(want, KINST_FBSD_TF_RSP) = kh_isp - 8;
		ATF_CHECK_MSG(memcmp((void *)(uintptr_t)m, want,
		    sizeof(want)) == 0, "r=%u: doreti frame wrong", r);
		/* What iretq will find at the new %rsp: the return address. */
		memcpy(&got, (void *)(uintptr_t)(kh_isp - 8), sizeof(got));
		ATF_CHECK_EQ_MSG(got, RETADDR, "r=%u: pushed %#jx", r,
		    (uintmax_t)got);
		/* And the frame iretq pops lies wholly below it. */
		ATF_CHECK(m + KINST_FBSD_TF_SIZE <= kh_isp - 8);
	}
}

ATF_TC_WITHOUT_HEAD(install_remove);
ATF_TC_BODY(install_remove, tc)
{
	static int other;

	dtrace_invop_jump_addr = NULL;
	ATF_CHECK(kinst_hook_owner() == NULL);
	ATF_CHECK_EQ(kinst_hook_install(), 0);
	ATF_CHECK(kinst_hook_owner() == (void *)kinst_hook);
	ATF_CHECK(dtrace_invop_jump_addr == (void *)kinst_hook);
	/* Already owned (by kinst itself): refused, unchanged. */
	ATF_CHECK_EQ(kinst_hook_install(), 1);
	ATF_CHECK(dtrace_invop_jump_addr == (void *)kinst_hook);
	ATF_CHECK_EQ(kinst_hook_remove(), 0);
	ATF_CHECK(dtrace_invop_jump_addr == NULL);
	ATF_CHECK_EQ(kinst_hook_remove(), 1);
	/* Owned by someone else (DTrace): never taken, never cleared. */
	dtrace_invop_jump_addr = &other;
	ATF_CHECK_EQ(kinst_hook_install(), 1);
	ATF_CHECK(dtrace_invop_jump_addr == &other);
	ATF_CHECK_EQ(kinst_hook_remove(), 1);
	ATF_CHECK(dtrace_invop_jump_addr == &other);
	dtrace_invop_jump_addr = NULL;
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, not_ours);
	ATF_TP_ADD_TC(tp, redirect);
	ATF_TP_ADD_TC(tp, emulated_call);
	ATF_TP_ADD_TC(tp, install_remove);
	return (atf_no_error());
}
