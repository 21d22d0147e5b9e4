/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Trampoline lifetime on FreeBSD (issue 10, defect 2; docs/freebsd.md 1.6)
 * in the user-space breakpoint harness: a thread takes a fault inside a
 * trampoline and blocks in the fault handler (a SIGSEGV handler that waits,
 * standing in for vm_fault() sleeping after trap() re-enabled interrupts),
 * while another thread disarms the probe, "frees" its trampoline block the
 * way the FreeBSD shim does (kinst_fbsd_tramp_retire(): kept mapped) and
 * arms a new probe, whose block is allocated the way the shim does (first
 * free range from a fixed hint, as vm_map_find from KERNBASE).  The blocked
 * thread's trampoline must be neither freed nor reused: when released it
 * finishes its instruction and returns the right value.
 *
 * The real engine (kinst_probe_prepare, kinst_engine_hit) and the real
 * accounting (kmod/freebsd/kinst_freebsd.c) run; the OS calls are kh_os.c's.
 */
#include <atf-c.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "kh.h"
#include "kinst_engine.h"
#include "kinst_freebsd.h"
#include "kinst_probe.h"
#include "kinst_ring.h"

extern char lt_page[];
uint64_t lt_load(const uint64_t *p);
uint64_t lt_other(uint64_t x);

#define	LT_VALUE	0x1122334455667788ull
#define	LT_BLOCK	4096

static struct kinst_engine lt_eng;
static struct kinst_session lt_sess;
static struct kinst_ring lt_ring;
static struct kinst_pcpu_count lt_hits[1];
static uint8_t lt_ringbuf[1 << 16];
static struct kinst_fbsd_tramps lt_tramps;
static bool lt_unmap_on_free;		/* the bug this test guards against */

static uint64_t *lt_data;		/* PROT_NONE until "paged in" */
static sem_t lt_blocked, lt_release;
static volatile uint64_t lt_fault_rip;

/* ---- trampoline blocks as the FreeBSD shim allocates them ---- */

static uint64_t
lt_hint(void)
{
	/* Below the text, well within rel32 reach. */
	return (((uint64_t)(uintptr_t)lt_page - (64ull << 20)) &
	    ~(uint64_t)(LT_BLOCK - 1));
}

/* First free block from the hint upwards (vm_map_find from KERNBASE). */
static uint8_t *
lt_tramp_alloc(void)
{
	uint64_t a;
	void *p;

	if (!kinst_fbsd_tramp_admit(&lt_tramps, LT_BLOCK))
		return (NULL);
	for (a = lt_hint(); a < (uint64_t)(uintptr_t)lt_page; a += LT_BLOCK) {
		p = mmap((void *)(uintptr_t)a, LT_BLOCK, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		if (p != (void *)(uintptr_t)a) {
			munmap(p, LT_BLOCK);
			continue;
		}
		memset(p, 0xcc, LT_BLOCK);
		return (p);
	}
	kinst_fbsd_tramp_cancel(&lt_tramps, LT_BLOCK);
	return (NULL);
}

static void
lt_tramp_free(uint8_t *block)
{
	kinst_fbsd_tramp_retire(&lt_tramps, LT_BLOCK);
	if (lt_unmap_on_free)
		munmap(block, LT_BLOCK);
}

/* ---- probes ---- */

static void
lt_text_write(uint64_t addr, uint8_t b)
{
	*(volatile uint8_t *)(uintptr_t)addr = b;
	__builtin_ia32_mfence();
}

static uint8_t *
lt_arm(struct kinst_probe *p, void *fn, uint32_t id)
{
	uint8_t img[KINST_TRAMP_SIZE], bytes[16];
	uint8_t *block;
	uint64_t addr;
	int r;

	block = lt_tramp_alloc();
	ATF_REQUIRE_MSG(block != NULL, "no trampoline block");
	addr = (uint64_t)(uintptr_t)fn;
	memcpy(bytes, fn, sizeof(bytes));
	memset(p, 0, sizeof(*p));
	r = kinst_probe_prepare(p, bytes, sizeof(bytes), addr,
	    (uint64_t)(uintptr_t)block, img);
	ATF_REQUIRE_EQ_MSG(r, KINST_R_NONE, "probe refused: %d", r);
	ATF_REQUIRE_MSG(p->tramp == (uint64_t)(uintptr_t)block,
	    "the probe must run out of line");
	memcpy(block, img, KINST_TRAMP_SIZE);
	ATF_REQUIRE_EQ(mprotect(block, LT_BLOCK, PROT_READ | PROT_EXEC), 0);
	p->session = &lt_sess;
	p->id = id;
	ATF_REQUIRE_EQ(kinst_ptable_insert(&lt_eng.table, p), KINST_PT_OK);
	lt_text_write(addr, 0xcc);
	return (block);
}

/*
 * The control path's disarm: restore the byte, remove from the table,
 * quiesce, free the block.  The quiescence completes although a thread is
 * inside the trampoline: on FreeBSD that thread re-enabled interrupts in
 * trap() and takes the rendezvous IPI; here no thread is in the SIGTRAP
 * handler (the blocked one is in the SIGSEGV handler).
 */
static void
lt_disarm(struct kinst_probe *p, uint8_t *block)
{
	lt_text_write(p->addr, p->orig[0]);
	kinst_ptable_remove(&lt_eng.table, p);
	lt_tramp_free(block);
}

/* ---- signal handlers ---- */

static void
lt_on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	struct kinst_regs r;
	static const int map[16] = { REG_RAX, REG_RCX, REG_RDX, REG_RBX,
	    REG_RSP, REG_RBP, REG_RSI, REG_RDI, REG_R8, REG_R9, REG_R10,
	    REG_R11, REG_R12, REG_R13, REG_R14, REG_R15 };
	int i, res;

	(void)sig;
	(void)si;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < 16; i++)
		r.gpr[i] = (uint64_t)g[map[i]];
	r.rip = (uint64_t)g[REG_RIP] - 1;
	r.rflags = (uint64_t)g[REG_EFL];
	res = kinst_engine_hit(&lt_eng, &r);
	if (res != KINST_HIT_REDIRECT && res != KINST_HIT_EMULATED)
		abort();
	for (i = 0; i < 16; i++)
		g[map[i]] = (greg_t)r.gpr[i];
	g[REG_RIP] = (greg_t)r.rip;
	g[REG_EFL] = (greg_t)r.rflags;
}

/* vm_fault() stand-in: block, then make the page present and retry. */
static void
lt_on_segv(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	if ((uint64_t *)si->si_addr != lt_data)
		abort();
	lt_fault_rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	sem_post(&lt_blocked);
	while (sem_wait(&lt_release) != 0 && errno == EINTR)
		;
	if (mprotect(lt_data, (size_t)getpagesize(), PROT_READ) != 0)
		abort();
}

static void *
lt_thread(void *arg)
{
	uint64_t *out = arg;

	*out = lt_load(lt_data);
	return (NULL);
}

static void
lt_setup(void)
{
	struct sigaction sa;
	long pg;

	pg = getpagesize();
	kh_os_init();
	kinst_engine_init(&lt_eng, 1, false);
	ATF_REQUIRE_EQ(kinst_ring_init(&lt_ring, lt_ringbuf,
	    sizeof(lt_ringbuf)), 0);
	kinst_session_init(&lt_sess, &lt_ring, lt_hits, 1);
	ATF_REQUIRE_EQ(mprotect(lt_page, (size_t)pg,
	    PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	lt_data = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ATF_REQUIRE(lt_data != MAP_FAILED);
	*lt_data = LT_VALUE;
	ATF_REQUIRE_EQ(mprotect(lt_data, (size_t)pg, PROT_NONE), 0);
	ATF_REQUIRE_EQ(sem_init(&lt_blocked, 0, 0), 0);
	ATF_REQUIRE_EQ(sem_init(&lt_release, 0, 0), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = lt_on_trap;
	sa.sa_flags = SA_SIGINFO;
	ATF_REQUIRE_EQ(sigaction(SIGTRAP, &sa, NULL), 0);
	sa.sa_sigaction = lt_on_segv;
	ATF_REQUIRE_EQ(sigaction(SIGSEGV, &sa, NULL), 0);
}

static void
lt_scenario(void)
{
	struct kinst_probe p1, p2;
	uint8_t *b1, *b2, saved[LT_BLOCK];
	pthread_t th;
	uint64_t got;

	lt_setup();
	b1 = lt_arm(&p1, (void *)lt_load, 1);
	memcpy(saved, b1, LT_BLOCK);
	ATF_REQUIRE_EQ(pthread_create(&th, NULL, lt_thread, &got), 0);
	/* The thread is now blocked inside b1's trampoline. */
	while (sem_wait(&lt_blocked) != 0 && errno == EINTR)
		;
	ATF_CHECK_MSG(lt_fault_rip == p1.tramp, "fault at %#jx, trampoline "
	    "at %#jx", (uintmax_t)lt_fault_rip, (uintmax_t)p1.tramp);
	lt_disarm(&p1, b1);
	b2 = lt_arm(&p2, (void *)lt_other, 2);
	ATF_CHECK_MSG(b2 != b1, "trampoline block %p reused while a thread "
	    "is inside it", (void *)b1);
	ATF_CHECK_EQ(lt_other(7), 7 + 0x5a5a);	/* the new probe works */
	sem_post(&lt_release);
	ATF_REQUIRE_EQ(pthread_join(th, NULL), 0);
	ATF_CHECK_MSG(got == LT_VALUE, "the blocked thread returned %#jx, "
	    "not %#jx", (uintmax_t)got, (uintmax_t)LT_VALUE);
	if (!lt_unmap_on_free) {
		ATF_CHECK_MSG(memcmp(b1, saved, LT_BLOCK) == 0,
		    "a retired trampoline block changed");
		ATF_CHECK_EQ(lt_tramps.nretired, 1);
		ATF_CHECK_EQ(lt_tramps.retired, LT_BLOCK);
		ATF_CHECK_EQ(lt_tramps.live, LT_BLOCK);
	}
	ATF_CHECK_EQ(p1.hits, 1);
	ATF_CHECK_EQ(p2.hits, 1);
}

ATF_TC_WITHOUT_HEAD(blocked_in_trampoline);
ATF_TC_BODY(blocked_in_trampoline, tc)
{
	lt_scenario();
}

/*
 * The harness itself: with the old behaviour (the block unmapped on free,
 * as kmem_unback + vm_map_remove did) the same scenario must go wrong.
 * Run in a child: the resumed thread may crash.
 */
ATF_TC_WITHOUT_HEAD(detects_reuse);
ATF_TC_BODY(detects_reuse, tc)
{
	pid_t pid;
	int status;

	pid = fork();
	ATF_REQUIRE(pid >= 0);
	if (pid == 0) {
		struct kinst_probe p1, p2;
		uint8_t *b1, *b2;
		pthread_t th;
		uint64_t got;

		lt_unmap_on_free = true;
		lt_setup();
		b1 = lt_arm(&p1, (void *)lt_load, 1);
		if (pthread_create(&th, NULL, lt_thread, &got) != 0)
			_exit(2);
		while (sem_wait(&lt_blocked) != 0 && errno == EINTR)
			;
		lt_disarm(&p1, b1);
		b2 = lt_arm(&p2, (void *)lt_other, 2);
		sem_post(&lt_release);
		pthread_join(th, NULL);
		/* 0: the reuse went unnoticed (the test would be blind). */
		_exit(b2 == b1 && got != LT_VALUE ? 1 : 0);
	}
	ATF_REQUIRE_EQ(waitpid(pid, &status, 0), pid);
	ATF_CHECK_MSG(!(WIFEXITED(status) && WEXITSTATUS(status) == 0),
	    "freeing the block under the blocked thread went unnoticed");
	printf("informational: with the block unmapped on free the child %s "
	    "%d\n", WIFEXITED(status) ? "exited" : "died of signal",
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* The cap: admit() refuses past it and counts; retire() keeps the bytes. */
ATF_TC_WITHOUT_HEAD(cap);
ATF_TC_BODY(cap, tc)
{
	struct kinst_fbsd_tramps t;

	memset(&t, 0, sizeof(t));
	t.cap = 3 * LT_BLOCK;
	ATF_CHECK(kinst_fbsd_tramp_admit(&t, LT_BLOCK));
	ATF_CHECK(kinst_fbsd_tramp_admit(&t, LT_BLOCK));
	kinst_fbsd_tramp_retire(&t, LT_BLOCK);
	ATF_CHECK(kinst_fbsd_tramp_admit(&t, LT_BLOCK));
	ATF_CHECK(!kinst_fbsd_tramp_admit(&t, LT_BLOCK));  /* retired still counts */
	ATF_CHECK_EQ(t.refused, 1);
	kinst_fbsd_tramp_cancel(&t, LT_BLOCK);
	ATF_CHECK(kinst_fbsd_tramp_admit(&t, LT_BLOCK));
	ATF_CHECK(!kinst_fbsd_tramp_admit(&t, UINT64_MAX));
	ATF_CHECK_EQ(t.live, 2 * LT_BLOCK);
	ATF_CHECK_EQ(t.retired, LT_BLOCK);
	ATF_CHECK_EQ(t.nretired, 1);
	memset(&t, 0, sizeof(t));
	ATF_CHECK(kinst_fbsd_tramp_admit(&t, KINST_FBSD_TRAMP_CAP));
	ATF_CHECK(!kinst_fbsd_tramp_admit(&t, 1));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, blocked_in_trampoline);
	ATF_TP_ADD_TC(tp, detects_reuse);
	ATF_TP_ADD_TC(tp, cap);
	return (atf_no_error());
}
