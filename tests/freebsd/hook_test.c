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
 * engine_through_hook replaces the stand-in by the real thing
 * (kinst_fbsd_hit() and the engine, with this file's trap-context OS
 * functions) for an emulated call, an out-of-line instruction and a
 * foreign int3.
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

#include "kinst_engine.h"
#include "kinst_freebsd.h"
#include "kinst_os.h"

int	kh_run_hook(void *frame);
int	kinst_fbsd_trap(void *tf);
void	kinst_hook(void);
int	kinst_hook_install(void);
int	kinst_hook_remove(void);
void	*kinst_hook_owner(void);
int	kinst_hook_free(void);

extern uint64_t kh_exit_rsp;
extern void *dtrace_invop_jump_addr;
extern char calltrap[];	/* hook_harness.S: the kernel's calltrap */

enum scenario {
	SC_NOT_OURS, SC_REDIRECT, SC_CALL,
	SC_ENGINE,		/* the real engine behind the hook */
	SC_ENGINE_RAX0,		/* the same, with tf_rax = 0 */
};

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
#define	TRAPRIP		0xffffffff80400001ull	/* tf_rip of the scripted traps */

/*
 * The real engine, for SC_ENGINE: one CPU, one session, probes armed by
 * hand in its table, and the trap-context OS functions below in place of
 * the shim's (kinst_fbsd_os.c).
 */
static struct kinst_engine kh_eng;
static struct kinst_session kh_sess;
static struct kinst_ring kh_ring;
static struct kinst_pcpu_count kh_hits;
static uint8_t kh_ringbuf[1 << 16];
static uint64_t kh_trap_sp = 0x5a5a;	/* this CPU's slot; restored after */
static uint64_t kh_faults;
static int kh_stack_writes;

uint32_t
kinst_os_cpu(void)
{
	return (0);
}

uint64_t
kinst_os_now_ns(void)
{
	return (1000);
}

uint64_t
kinst_os_local_ns(void)
{
	return (1000);
}

void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	*pid = 42;
	*tid = 100042;
	memset(comm, 0, KINST_COMM_LEN);
	strcpy(comm, "khtest");
}

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = 42;
	key[1] = 100042;
}

void
kinst_os_wake_deferred(struct kinst_session *s)
{
	(void)s;
}

/* The first page stands for memory the emulation must not read. */
int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	if (addr < 4096)
		return (-1);
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return (0);
}

/* Probe programs' user loads: this test has no user memory to offer. */
int
kinst_os_read_user(uint64_t addr, void *buf, size_t len)
{
	(void)addr;
	(void)buf;
	(void)len;
	return (-1);
}

/* What kinst_fbsd_os.c does: only inside the room below this trap's %rsp. */
int
kinst_os_write_stack(uint64_t addr, const void *buf, size_t len)
{
	if (!kinst_stack_write_ok(kh_trap_sp, addr, len,
	    KINST_FBSD_STACK_ROOM))
		return (-1);
	memcpy((void *)(uintptr_t)addr, buf, len);
	kh_stack_writes++;
	return (0);
}

/* Link-time stand-in: no probe here asks for stacks (tests/engine covers the walk). */
uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	(void)regs; (void)osctx; (void)offset; (void)pcs; (void)max;
	*truncated = false;
	return (0);
}

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
	case SC_ENGINE:
		return (kinst_fbsd_hit(&kh_eng, tf, &kh_trap_sp, &kh_faults));
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
	case SC_ENGINE_RAX0:
		/* run_at() turns it into SC_ENGINE before the hook runs. */
		kh_bad_frame_copy++;
		return (0);
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
run_at(const atf_tc_t *tc, enum scenario sc, unsigned r, uint64_t rip)
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
	W(kh_orig, KINST_FBSD_TF_RIP) = rip;
	W(kh_orig, KINST_FBSD_TF_CS) = 0x20;
	W(kh_orig, KINST_FBSD_TF_RFLAGS) = 0x246;
	W(kh_orig, KINST_FBSD_TF_RSP) = isp;
	W(kh_orig, KINST_FBSD_TF_SS) = 0x28;
	if (sc == SC_ENGINE_RAX0) {
		W(kh_orig, KINST_FBSD_TF_RAX) = 0;
		sc = SC_ENGINE;
	}
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

static int
run(const atf_tc_t *tc, enum scenario sc, unsigned r)
{
	return (run_at(tc, sc, r, TRAPRIP));
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

/* Arm one probe at addr (bytes, padded with nops) in the test engine. */
static void
arm(struct kinst_probe *p, uint32_t id, const uint8_t *insn, size_t len,
    uint64_t addr, uint64_t tramp)
{
	uint8_t bytes[32], img[KINST_TRAMP_SIZE];

	memset(bytes, 0x90, sizeof(bytes));
	memcpy(bytes, insn, len);
	memset(p, 0, sizeof(*p));
	ATF_REQUIRE_EQ(kinst_probe_prepare(p, bytes, sizeof(bytes), addr, tramp,
	    img), KINST_R_NONE);
	p->id = id;
	p->session = &kh_sess;
	ATF_REQUIRE_EQ(kinst_ptable_insert(&kh_eng.table, p), KINST_PT_OK);
}

static void
engine_setup(void)
{
	kinst_engine_init(&kh_eng, 1, true);
	ATF_REQUIRE_EQ(kinst_ring_init(&kh_ring, kh_ringbuf,
	    sizeof(kh_ringbuf)), 0);
	kinst_session_init(&kh_sess, &kh_ring, &kh_hits, 1);
}

/*
 * The whole FreeBSD trap path but the kernel: the real hook assembly, the
 * real frame conversion (kinst_fbsd_hit) and the real engine.  An emulated
 * call, an out-of-line instruction, and an int3 that is not kinst's.
 */
ATF_TC_WITHOUT_HEAD(engine_through_hook);
ATF_TC_BODY(engine_through_hook, tc)
{
	static const uint8_t call[] = { 0xe8, 0x10, 0x20, 0x00, 0x00 };
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };	/* mov %rdi,%rax */
	static struct kinst_probe pcall, pmov;
	const uint64_t acall = 0xffffffff80500000ull;
	const uint64_t amov = 0xffffffff80500100ull;
	const uint64_t tcall = 0xffffffff81000000ull;
	const uint64_t tmov = 0xffffffff81000040ull;
	struct kinst_hit_record rec;
	uint64_t m, got;
	unsigned r;

	engine_setup();
	arm(&pcall, 7, call, sizeof(call), acall, tcall);
	arm(&pmov, 8, mov, sizeof(mov), amov, tmov);

	for (r = 0; r < 16; r += 8) {
		/* call rel32: emulated, return address pushed below isp. */
		kh_stack_writes = 0;
		ATF_CHECK_EQ(run_at(tc, SC_ENGINE, r, acall + 1), 1);
		m = kinst_fbsd_moved_frame_at(kh_isp);
		ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RIP), acall + 5 + 0x2010);
		ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RSP), kh_isp - 8);
		ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RFLAGS), 0x246);
		ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RDI), W(kh_orig,
		    KINST_FBSD_TF_RDI));
		memcpy(&got, (void *)(uintptr_t)(kh_isp - 8), sizeof(got));
		ATF_CHECK_EQ(got, acall + 5);
		ATF_CHECK_EQ(kh_stack_writes, 1);
		ATF_CHECK_EQ(kh_trap_sp, 0x5a5a);
		/* The snapshot: the registers as the call saw them. */
		ATF_REQUIRE_EQ(kinst_ring_get(&kh_ring, &rec, sizeof(rec)),
		    sizeof(rec));
		ATF_CHECK_EQ(rec.probe_id, 7);
		ATF_CHECK_EQ(rec.regs.rip, acall);
		ATF_CHECK_EQ(rec.regs.gpr[KINST_RSP], kh_isp);
		ATF_CHECK_EQ(rec.regs.gpr[KINST_RDI],
		    W(kh_orig, KINST_FBSD_TF_RDI));
		ATF_CHECK_EQ(rec.regs.gpr[KINST_R15],
		    W(kh_orig, KINST_FBSD_TF_R15));
		ATF_CHECK_EQ(rec.regs.cs, 0x20);
		ATF_CHECK_EQ(rec.pid, 42);

		/* mov: out of line, with IF cleared, via the sti variant. */
		ATF_CHECK_EQ(run_at(tc, SC_ENGINE, r, amov + 1), 1);
		m = kinst_fbsd_moved_frame_at(kh_isp);
		ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RIP), tmov + KINST_TRAMP_STI);
		ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RFLAGS), 0x046);
		ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RSP), kh_isp);
		ATF_REQUIRE_EQ(kinst_ring_get(&kh_ring, &rec, sizeof(rec)),
		    sizeof(rec));
		ATF_CHECK_EQ(rec.probe_id, 8);
		ATF_CHECK_EQ(rec.regs.rip, amov);

		/* Someone else's int3: calltrap, frame untouched, no record. */
		ATF_CHECK_EQ(run_at(tc, SC_ENGINE, r, amov + 0x10 + 1), 2);
		m = kinst_fbsd_moved_frame_at(kh_isp);
		ATF_CHECK(memcmp((void *)(uintptr_t)m, kh_orig,
		    sizeof(kh_orig)) == 0);
		ATF_CHECK(kinst_ring_empty(&kh_ring));
	}
	ATF_CHECK_EQ(kh_faults, 0);
	ATF_CHECK_EQ(kh_hits.n, 4);
}

/*
 * An emulation that faults (call *(%rax) with %rax pointing at memory the
 * OS says cannot be read).  In kernel text the probe has a native image
 * (kinst_native_build): the hook returns through doreti into its sti
 * variant, the frame otherwise as it was (the CPU will push and read), no
 * fault counted.  Where the image cannot exist (here: a return address
 * beyond a sign-extended imm32), the fault is counted and the trap goes to
 * the kernel's calltrap with the frame exactly as it was.
 */
ATF_TC_WITHOUT_HEAD(engine_emulation_fault);
ATF_TC_BODY(engine_emulation_fault, tc)
{
	static const uint8_t callind[] = { 0xff, 0x10 };	/* call *(%rax) */
	static struct kinst_probe p, q;
	const uint64_t a = 0xffffffff80600000ull;
	const uint64_t ta = 0xffffffff81000080ull;
	const uint64_t b = 0x100000000ull;
	struct kinst_hit_record rec;
	uint64_t m;

	engine_setup();
	kh_faults = 0;
	arm(&p, 9, callind, sizeof(callind), a, ta);
	ATF_REQUIRE(p.native);
	ATF_CHECK_EQ(run_at(tc, SC_ENGINE_RAX0, 8, a + 1), 1);
	m = kinst_fbsd_moved_frame_at(kh_isp);
	ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RIP), ta + KINST_TRAMP_STI);
	ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RFLAGS), 0x046);
	ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RSP), kh_isp);
	ATF_CHECK_EQ(W(m, KINST_FBSD_TF_RAX), 0);
	ATF_CHECK_EQ(kh_faults, 0);
	ATF_CHECK_EQ(kh_eng.native_runs, 1);
	ATF_CHECK_EQ(kinst_ring_get(&kh_ring, &rec, sizeof(rec)), sizeof(rec));
	ATF_CHECK_EQ(rec.probe_id, 9);

	arm(&q, 10, callind, sizeof(callind), b, b + 0x100000);
	ATF_REQUIRE(!q.native);
	ATF_CHECK_EQ(run_at(tc, SC_ENGINE_RAX0, 8, b + 1), 2);
	m = kinst_fbsd_moved_frame_at(kh_isp);
	ATF_CHECK(memcmp((void *)(uintptr_t)m, kh_orig, sizeof(kh_orig)) == 0);
	ATF_CHECK_EQ(kh_faults, 1);
	ATF_CHECK_EQ(kh_eng.native_runs, 1);
	ATF_CHECK_EQ(kh_trap_sp, 0x5a5a);
	/* The hit itself was recorded before the emulation was tried. */
	ATF_CHECK_EQ(kinst_ring_get(&kh_ring, &rec, sizeof(rec)), sizeof(rec));
	ATF_CHECK_EQ(rec.probe_id, 10);
}

ATF_TC_WITHOUT_HEAD(install_remove);
ATF_TC_BODY(install_remove, tc)
{
	static int other;

	dtrace_invop_jump_addr = NULL;
	ATF_CHECK(kinst_hook_owner() == NULL);
	ATF_CHECK_EQ(kinst_hook_free(), 1);
	ATF_CHECK_EQ(kinst_hook_install(), 0);
	ATF_CHECK(kinst_hook_owner() == (void *)kinst_hook);
	ATF_CHECK(dtrace_invop_jump_addr == (void *)kinst_hook);
	ATF_CHECK_EQ(kinst_hook_free(), 0);
	/* Already owned (by kinst itself): refused, unchanged. */
	ATF_CHECK_EQ(kinst_hook_install(), 1);
	ATF_CHECK(dtrace_invop_jump_addr == (void *)kinst_hook);
	/* Removed: calltrap, never NULL (defect 6), and free again. */
	ATF_CHECK_EQ(kinst_hook_remove(), 0);
	ATF_CHECK(dtrace_invop_jump_addr == (void *)calltrap);
	ATF_CHECK_EQ(kinst_hook_free(), 1);
	ATF_CHECK_EQ(kinst_hook_remove(), 1);
	ATF_CHECK(dtrace_invop_jump_addr == (void *)calltrap);
	/* A reload takes it from calltrap. */
	ATF_CHECK_EQ(kinst_hook_install(), 0);
	ATF_CHECK(dtrace_invop_jump_addr == (void *)kinst_hook);
	ATF_CHECK_EQ(kinst_hook_remove(), 0);
	/* Owned by someone else (DTrace): never taken, never cleared. */
	dtrace_invop_jump_addr = &other;
	ATF_CHECK_EQ(kinst_hook_free(), 0);
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
	ATF_TP_ADD_TC(tp, engine_through_hook);
	ATF_TP_ADD_TC(tp, engine_emulation_fault);
	ATF_TP_ADD_TC(tp, install_remove);
	return (atf_no_error());
}
