/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stacks in the user-space breakpoint harness (issue 11): real int3s in a
 * known call chain (stack_asm.S: st_base -> st_top -> st_mid -> st_leaf),
 * handled from SIGTRAP by the real engine with KINST_PF_STACK, whose
 * kinst_os_stack() (kh_os.c) is the portable frame-pointer walk FreeBSD
 * uses (common/x86/kinst_fpwalk.c), bounded by this thread's own stack.  The
 * STACK section of each record must show exactly the chain the assembly
 * makes: the probed instruction, then st_mid_ret, st_top_ret, st_base_ret.
 * At the function's first instruction (before push %rbp) the immediate
 * caller comes from [%rsp], not from the frame chain.
 */
#include <atf-c.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "kh.h"
#include "kinst_engine.h"
#include "kinst_probe.h"
#include "kinst_ring.h"
#include "kinst_stack.h"

extern char st_page[], st_leaf[], st_leaf_body[];
extern char st_mid_ret[], st_top_ret[], st_base_ret[];
uint64_t st_base(uint64_t x);

extern uint64_t kh_stack_lo, kh_stack_hi;	/* kh_os.c */

static struct kinst_engine st_eng;
static struct kinst_session st_sess;
static struct kinst_ring st_ring;
static struct kinst_pcpu_count st_hits[1];
static uint8_t st_ringbuf[1 << 16] __attribute__((aligned(8)));
static uint8_t *st_tramp;
static int st_bad_hits;

static void
st_on_trap(int sig, siginfo_t *si, void *ucv)
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
	res = kinst_engine_hit_ctx(&st_eng, &r, uc);
	if (res != KINST_HIT_REDIRECT && res != KINST_HIT_EMULATED) {
		st_bad_hits++;
		abort();
	}
	for (i = 0; i < 16; i++)
		g[map[i]] = (greg_t)r.gpr[i];
	g[REG_RIP] = (greg_t)r.rip;
	g[REG_EFL] = (greg_t)r.rflags;
}

static void
st_setup(void)
{
	struct sigaction sa;
	long pg = sysconf(_SC_PAGESIZE);

	kinst_engine_init(&st_eng, 1, false);
	ATF_REQUIRE_EQ(kinst_ring_init(&st_ring, st_ringbuf,
	    sizeof(st_ringbuf)), 0);
	kinst_session_init(&st_sess, &st_ring, st_hits, 1);
	ATF_REQUIRE_EQ(mprotect(st_page, (size_t)pg,
	    PROT_READ | PROT_WRITE | PROT_EXEC), 0);
	/* Trampolines near the text (rel32 reach), as the kernels place them. */
	st_tramp = mmap((void *)(((uintptr_t)st_page - (32ul << 20)) &
	    ~(uintptr_t)(pg - 1)), (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ATF_REQUIRE(st_tramp != MAP_FAILED);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = st_on_trap;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	ATF_REQUIRE_EQ(sigaction(SIGTRAP, &sa, NULL), 0);
}

/* Arm the instruction at addr (offset off in st_leaf), trampoline slot k. */
static void
st_arm(struct kinst_probe *p, char *addr, uint32_t off, int k, uint32_t id)
{
	uint8_t img[KINST_TRAMP_SIZE];
	uint64_t a = (uint64_t)(uintptr_t)addr;
	uint8_t *slot = st_tramp + k * KINST_TRAMP_SIZE;
	int r;

	memset(p, 0, sizeof(*p));
	r = kinst_probe_prepare(p, (const uint8_t *)addr, 16, a,
	    (uint64_t)(uintptr_t)slot, img);
	ATF_REQUIRE_EQ_MSG(r, KINST_R_NONE, "probe refused: %d", r);
	ATF_REQUIRE_EQ(mprotect(st_tramp, (size_t)getpagesize(),
	    PROT_READ | PROT_WRITE), 0);
	memcpy(slot, img, KINST_TRAMP_SIZE);
	ATF_REQUIRE_EQ(mprotect(st_tramp, (size_t)getpagesize(),
	    PROT_READ | PROT_EXEC), 0);
	p->id = id;
	p->offset = off;
	p->flags = KINST_PF_STACK;
	p->session = &st_sess;
	ATF_REQUIRE_EQ(kinst_ptable_insert(&st_eng.table, p), KINST_PT_OK);
	*(volatile uint8_t *)addr = 0xcc;
}

/* The chain runs on a thread whose stack we own, so its bounds are exact. */
static uint8_t st_stack[256 * 1024] __attribute__((aligned(4096)));
static uint64_t st_result;

static void *
st_thread(void *arg)
{
	(void)arg;
	st_result = st_base(0x1234);
	return (NULL);
}

static void
st_run_chain(void)
{
	pthread_attr_t at;
	pthread_t t;

	kh_stack_lo = (uint64_t)(uintptr_t)st_stack;
	kh_stack_hi = kh_stack_lo + sizeof(st_stack);
	ATF_REQUIRE_EQ(pthread_attr_init(&at), 0);
	ATF_REQUIRE_EQ(pthread_attr_setstack(&at, st_stack, sizeof(st_stack)), 0);
	ATF_REQUIRE_EQ(pthread_create(&t, &at, st_thread, NULL), 0);
	ATF_REQUIRE_EQ(pthread_join(t, NULL), 0);
	kh_stack_lo = kh_stack_hi = 0;
	ATF_REQUIRE_EQ(st_result, 0x1234);	/* the traced chain still works */
}

struct st_rec {
	struct kinst_hit_record rec;
	struct kinst_rec_sec sec;
	uint64_t pcs[KINST_STACK_MAX];
};

static void
st_expect_chain(const struct st_rec *r, uint64_t first)
{
	const uint64_t want[4] = { first, (uint64_t)(uintptr_t)st_mid_ret,
	    (uint64_t)(uintptr_t)st_top_ret, (uint64_t)(uintptr_t)st_base_ret };
	uint32_t n = r->sec.len / 8, i;

	printf("probe %u: %u frames:", r->rec.probe_id, n);
	for (i = 0; i < n; i++)
		printf(" %#llx", (unsigned long long)r->pcs[i]);
	printf("\n");
	ATF_REQUIRE_EQ(r->sec.type, KINST_SEC_STACK);
	ATF_REQUIRE_MSG(n >= 4, "probe %u: %u frames, want at least 4",
	    r->rec.probe_id, n);
	for (i = 0; i < 4; i++)
		ATF_CHECK_EQ_MSG(r->pcs[i], want[i], "probe %u frame %u: %#llx, want %#llx",
		    r->rec.probe_id, i, (unsigned long long)r->pcs[i],
		    (unsigned long long)want[i]);
	ATF_CHECK_EQ(r->sec.flags & KINST_SECF_TRUNCATED, 0);
}

ATF_TC_WITHOUT_HEAD(known_chain);
ATF_TC_BODY(known_chain, tc)
{
	struct kinst_probe pa, pb;
	static uint8_t buf[2 * sizeof(struct st_rec)] __attribute__((aligned(8)));
	struct st_rec r;
	size_t len;

	st_setup();
	st_arm(&pa, st_leaf, 0, 0, 1);
	st_arm(&pb, st_leaf_body, (uint32_t)(st_leaf_body - st_leaf), 1, 2);
	st_run_chain();
	ATF_REQUIRE_EQ(st_bad_hits, 0);
	ATF_REQUIRE_EQ(kinst_ring_written(&st_ring), 2);

	/* Both records at once (a get copies every whole record that fits). */
	len = kinst_ring_get(&st_ring, buf, sizeof(buf));
	ATF_REQUIRE(len > sizeof(r.rec));
	memcpy(&r, buf, sizeof(r));
	ATF_REQUIRE_EQ(r.rec.probe_id, 1);
	ATF_REQUIRE(r.rec.hdr.size < len);
	st_expect_chain(&r, (uint64_t)(uintptr_t)st_leaf);	/* at entry */
	memcpy(&r, buf + r.rec.hdr.size, sizeof(r));
	ATF_REQUIRE_EQ(r.rec.probe_id, 2);
	st_expect_chain(&r, (uint64_t)(uintptr_t)st_leaf_body);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, known_chain);
	return (atf_no_error());
}
