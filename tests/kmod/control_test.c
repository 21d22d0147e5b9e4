/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of common/kinst_control.c, the OS-independent control path both
 * kernel shims use, against a fake OS: "kernel text" is an array here, the
 * text writes, synchronizations, quiescence and trampoline operations are
 * logged, and each test checks the order the design requires:
 *
 *   arm:    seal trampolines < insert in table < int3 written < text sync
 *   disarm: original byte written < text sync < removal from table <
 *           quiesce < trampoline freed / module reference dropped
 *
 * and that every batch of stores is repeated after a synchronization, so that
 * no CPU of an emulator that translates code keeps executing a byte memory
 * no longer holds (the model: xlat[] below; issue 15).
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "kinst_control.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_detour.h"

/* ---- the fake kernel ---- */

/*
 * Functions in fake text: f_small (5 instructions), f_big (9000 one-byte
 * nops: more than KINST_MAX_PROBES), f_excluded, f_fixup (second insn has a
 * "fixup").
 */
#define	TEXT_BASE	0xffffffff81000000ull
static uint8_t text[16384];

static const uint8_t small_code[] = {
	0x55,				/* push %rbp */
	0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
	0x48, 0x8b, 0x47, 0x08,		/* mov 0x8(%rdi),%rax */
	0x5d,				/* pop %rbp */
	0xc3,				/* ret */
};
#define	SMALL_OFF	0
#define	SMALL_SIZE	sizeof(small_code)
#define	EXCL_OFF	64
/* f_imm: mov $1,%eax (5 bytes: a window alone); mov %eax,%ecx; ret */
static const uint8_t imm_code[] = { 0xb8, 0x01, 0x00, 0x00, 0x00, 0x89, 0xc1,
    0xc3 };
#define	IMM_OFF		96
#define	IMM_SIZE	sizeof(imm_code)
#define	FIXUP_OFF	128
#define	BIG_OFF		256
#define	BIG_SIZE	9000

struct fn {
	const char *name;
	uint32_t off, size;
};
static const struct fn fns[] = {
	{ "f_small", SMALL_OFF, SMALL_SIZE },
	{ "f_excluded", EXCL_OFF, SMALL_SIZE },
	{ "f_imm", IMM_OFF, IMM_SIZE },
	{ "f_fixup", FIXUP_OFF, SMALL_SIZE },
	{ "f_big", BIG_OFF, BIG_SIZE },
};

static struct kinst_engine *engine;
static struct kinst_ctl ctl;
static int ctl_locked, text_locked;
static long nalloc, nrefs, ntramps;
static char log_buf[1 << 16];
static size_t log_len;
static uint64_t fixup_addr;

/*
 * What a vCPU of an emulator that translates code (QEMU's multi-threaded
 * TCG) executes at each byte of text: xlat[].  A store invalidates the
 * translations of the byte it changes, so a CPU fetches the new byte; but a
 * vCPU that was translating while the store landed links its translation of
 * the OLD byte afterwards (pending[]), at the latest before it acknowledges
 * the next synchronization.  That is the interleaving behind issue 15's
 * livelock: a removed int3 kept in a translation traps forever.
 */
static uint8_t xlat[sizeof(text)];
static int pending[sizeof(text)];	/* the old byte, or -1 */

static void
tlog(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_len += vsnprintf(log_buf + log_len, sizeof(log_buf) - log_len,
	    fmt, ap);
	va_end(ap);
	if (log_len >= sizeof(log_buf))
		log_len = sizeof(log_buf) - 1;
}

static void
fake_reset(void)
{
	size_t i;

	memset(text, 0xcc, sizeof(text));
	memcpy(text + SMALL_OFF, small_code, SMALL_SIZE);
	memcpy(text + EXCL_OFF, small_code, SMALL_SIZE);
	memcpy(text + FIXUP_OFF, small_code, SMALL_SIZE);
	memcpy(text + IMM_OFF, imm_code, IMM_SIZE);
	for (i = 0; i < BIG_SIZE; i++)
		text[BIG_OFF + i] = 0x90;
	fixup_addr = TEXT_BASE + FIXUP_OFF + 1;
	memcpy(xlat, text, sizeof(text));
	for (i = 0; i < sizeof(text); i++)
		pending[i] = -1;
	free(engine);
	engine = calloc(1, sizeof(*engine));
	ATF_REQUIRE(engine != NULL);
	kinst_engine_init(engine, 2, true);
	kinst_ctl_init(&ctl, engine);
	ctl_locked = text_locked = 0;
	nalloc = nrefs = ntramps = 0;
	log_len = 0;
	log_buf[0] = '\0';
}

/* Trap-context hooks: not exercised here. */
uint32_t kinst_os_cpu(void) { return (0); }
uint64_t kinst_os_now_ns(void) { return (0); }
void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	*pid = *tid = 1;
	memset(comm, 0, KINST_COMM_LEN);
}
void kinst_os_wake_deferred(struct kinst_session *s) { (void)s; }
int
kinst_os_write_stack(uint64_t addr, const void *buf, size_t len)
{
	(void)addr; (void)buf; (void)len;
	return (-1);
}
/* Link-time stand-in: this program never hits a probe. */
uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	(void)regs; (void)osctx; (void)offset; (void)pcs; (void)max;
	*truncated = false;
	return (0);
}

int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	if (addr < TEXT_BASE || addr + len > TEXT_BASE + sizeof(text))
		return (-1);
	memcpy(buf, text + (addr - TEXT_BASE), len);
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

void kinst_os_ctl_lock(void) { ATF_REQUIRE(!ctl_locked); ctl_locked = 1; }
void kinst_os_ctl_unlock(void) { ATF_REQUIRE(ctl_locked); ctl_locked = 0; }

void
kinst_os_text_lock(void)
{
	ATF_REQUIRE(ctl_locked && !text_locked);
	text_locked = 1;
}

void
kinst_os_text_unlock(void)
{
	size_t i;

	ATF_REQUIRE(text_locked);
	/*
	 * An arm or disarm is complete: no CPU may go on executing a byte that
	 * memory no longer holds (a translation still to be linked must hold
	 * the byte in memory too).
	 */
	for (i = 0; i < sizeof(text); i++) {
		ATF_REQUIRE_MSG(xlat[i] == text[i],
		    "text+%#zx: memory holds %#x, a CPU still executes %#x",
		    i, text[i], xlat[i]);
		ATF_REQUIRE(pending[i] < 0 || pending[i] == text[i]);
	}
	text_locked = 0;
}

/*
 * Set around kinst_ctl_prog_load() and kinst_ctl_agg_setup(), which
 * allocate (and verify a program) before they take the control lock
 * (thread context; the lock only guards publishing).
 */
static int prog_loading;

void *
kinst_os_alloc(size_t size)
{
	ATF_REQUIRE(ctl_locked || prog_loading);
	nalloc++;
	return (calloc(1, size == 0 ? 1 : size));
}

void
kinst_os_free(void *p, size_t size)
{
	(void)size;
	if (p != NULL)
		nalloc--;
	free(p);
}

int
kinst_os_func_resolve(const char *module, const char *function,
    struct kinst_func *f)
{
	size_t i;

	ATF_REQUIRE(ctl_locked);
	memset(f, 0, sizeof(*f));
	if (module[0] != '\0' && strcmp(module, "kernel") != 0)
		return (KINST_E_NOENT);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strcmp(fns[i].name, function) == 0) {
			f->addr = TEXT_BASE + fns[i].off;
			f->size = fns[i].size;
			strcpy(f->module, "kernel");
			f->os_ref = (void *)1;
			nrefs++;
			return (KINST_E_OK);
		}
	return (KINST_E_NOENT);
}

void
kinst_os_func_release(struct kinst_func *f)
{
	if (f->os_ref != NULL)
		nrefs--;
	f->os_ref = NULL;
}

int
kinst_os_func_check(const struct kinst_func *f, const char *function)
{
	static const char *const excl[] = { "f_excl*" };

	(void)f;
	return (kinst_name_listed(function, excl, 1) ? KINST_R_EXCLUDED :
	    KINST_R_NONE);
}

int
kinst_os_insn_check(const struct kinst_func *f, uint64_t addr, uint32_t len)
{
	(void)f; (void)len;
	ATF_REQUIRE(text_locked);
	return (addr == fixup_addr ? KINST_R_FIXUP : KINST_R_NONE);
}

/* The jump probe whose window's bytes 1..4 hold addr, if any. */
static struct kinst_cprobe *
jump_window_of(uint64_t addr)
{
	struct kinst_probe *p;
	uint64_t d;

	for (d = 1; d < 5; d++) {
		p = kinst_ptable_lookup(&engine->table, addr - d);
		if (p != NULL && p->addr == addr - d)
			return ((struct kinst_cprobe *)p);
	}
	return (NULL);
}

void
kinst_os_text_write(uint64_t addr, uint8_t byte)
{
	struct kinst_cprobe *cp;
	struct kinst_probe *p;

	ATF_REQUIRE(text_locked);
	ATF_REQUIRE(addr >= TEXT_BASE && addr < TEXT_BASE + sizeof(text));
	p = kinst_ptable_lookup(&engine->table, addr);
	if (p == NULL || p->addr != addr) {
		/*
		 * Bytes 1..4 of a jump window change only while the int3
		 * guards its first byte and the int3 path resumes in the
		 * detour (no thread may enter the window's interior).
		 */
		cp = jump_window_of(addr);
		ATF_REQUIRE_MSG(cp != NULL,
		    "text write at %#llx without a table entry",
		    (unsigned long long)addr);
		ATF_REQUIRE(cp->jstate == KINST_JS_RESUME ||
		    cp->jstate == KINST_JS_JUMP);
		ATF_REQUIRE_EQ(text[cp->p.addr - TEXT_BASE], 0xcc);
		ATF_REQUIRE(cp->p.jresume == cp->jwindow && cp->jwindow != 0);
	} else if (byte != text[addr - TEXT_BASE]) {
		/* The probe is in the table whenever its int3 is written or removed. */
		cp = (struct kinst_cprobe *)p;
		if (byte == 0xcc)
			ATF_REQUIRE(text[addr - TEXT_BASE] != 0xcc);
		else
			ATF_REQUIRE(text[addr - TEXT_BASE] == 0xcc);
		/* The jmp opcode goes in only over a complete rel32. */
		if (byte == 0xe9)
			ATF_REQUIRE(cp->jstate == KINST_JS_RESUME &&
			    cp->p.jresume == cp->jwindow);
	}
	if (pending[addr - TEXT_BASE] < 0)
		pending[addr - TEXT_BASE] = text[addr - TEXT_BASE];
	text[addr - TEXT_BASE] = byte;
	xlat[addr - TEXT_BASE] = byte;
	tlog("W%02x ", byte);
}

void
kinst_os_text_sync(void)
{
	size_t i;

	ATF_REQUIRE(text_locked);
	/* Every vCPU has linked what it was translating. */
	for (i = 0; i < sizeof(text); i++)
		if (pending[i] >= 0) {
			xlat[i] = (uint8_t)pending[i];
			pending[i] = -1;
		}
	tlog("S ");
}

void
kinst_os_quiesce(void)
{
	tlog("Q ");
}

int
kinst_os_jopt_check(const struct kinst_func *f, uint64_t addr,
    const uint8_t *insn, uint32_t len)
{
	(void)insn;
	return (kinst_os_insn_check(f, addr, len));
}

void
kinst_os_sync_tasks(void)
{
	ATF_REQUIRE(ctl_locked && !text_locked);
	tlog("T ");
}

struct tramp {
	uint64_t magic;
	int sealed;
	size_t size;
	uint8_t mem[];
};

void *
kinst_os_tramp_alloc(size_t size, uint64_t *addr)
{
	struct tramp *t;

	t = calloc(1, sizeof(*t) + size);
	ATF_REQUIRE(t != NULL);
	t->magic = 0x7472616d70ull;
	t->size = size;
	ntramps++;
	/* Pretend it sits near the text, as the kernel's module area does. */
	*addr = TEXT_BASE + 0x1000000 + (uint64_t)ntramps * 0x100000;
	tlog("A ");
	return (t->mem);
}

static struct tramp *
tramp_of(void *mem)
{
	return ((struct tramp *)((uint8_t *)mem - offsetof(struct tramp, mem)));
}

int
kinst_os_tramp_seal(void *mem, size_t size)
{
	struct tramp *t = tramp_of(mem);

	ATF_REQUIRE(t->magic == 0x7472616d70ull && t->size == size);
	ATF_REQUIRE(!t->sealed);
	t->sealed = 1;
	tlog("R ");
	return (0);
}

void
kinst_os_tramp_free(void *mem, size_t size)
{
	struct tramp *t = tramp_of(mem);

	ATF_REQUIRE(t->magic == 0x7472616d70ull && t->size == size);
	t->magic = 0;
	ntramps--;
	tlog("F ");
	free(t);
}

/* ---- helpers ---- */

struct sess {
	struct kinst_csession cs;
	struct kinst_ring rings[2];
	uint64_t hits[2];
	uint8_t buf[2][4096];
};

static void
sess_init(struct sess *s)
{
	memset(s, 0, sizeof(*s));
	ATF_REQUIRE(kinst_ring_init(&s->rings[0], s->buf[0], 4096) == 0);
	ATF_REQUIRE(kinst_ring_init(&s->rings[1], s->buf[1], 4096) == 0);
	kinst_session_init(&s->cs.s, s->rings, s->hits, 2);
	kinst_ctl_session_init(&ctl, &s->cs);
}

static int
arm(struct sess *s, const char *fn, uint32_t off, uint32_t flags,
    struct kinst_arm *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->function, sizeof(a->function), "%s", fn);
	a->offset = off;
	a->flags = flags;
	return (kinst_ctl_arm(&ctl, &s->cs, a));
}

static void
check_text_clean(void)
{
	ATF_CHECK(memcmp(text + SMALL_OFF, small_code, SMALL_SIZE) == 0);
	ATF_CHECK(memcmp(text + FIXUP_OFF, small_code, SMALL_SIZE) == 0);
	ATF_CHECK(engine->table.count == 0);
	ATF_CHECK_EQ(ctl.nprobes, 0);
}

static void
check_no_leaks(void)
{
	ATF_CHECK_EQ(nalloc, 0);
	ATF_CHECK_EQ(nrefs, 0);
	ATF_CHECK_EQ(ntramps, 0);
	ATF_CHECK(!ctl_locked && !text_locked);
}

/* ---- tests ---- */

ATF_TC_WITHOUT_HEAD(arm_one_disarm_order);
ATF_TC_BODY(arm_one_disarm_order, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_disarm d;
	struct kinst_probe *p;

	fake_reset();
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 4, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 1);
	ATF_CHECK(a.probe_id != 0 && a.probe_id != KINST_ALL_PROBES);
	ATF_CHECK_EQ(a.addr, TEXT_BASE + 4);
	ATF_CHECK_EQ(a.insn_len, 4);
	ATF_CHECK(memcmp(a.insn, small_code + 4, 4) == 0);
	ATF_CHECK_EQ(text[4], 0xcc);
	ATF_CHECK_STREQ(log_buf, "A R Wcc S Wcc S ");
	p = kinst_ptable_lookup(&engine->table, TEXT_BASE + 4);
	ATF_REQUIRE(p != NULL);
	ATF_CHECK(p->session == &s.cs.s);
	ATF_CHECK_EQ(nrefs, 1);

	log_len = 0;
	d.probe_id = a.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	ATF_CHECK_EQ(d.ndisarmed, 1);
	/* byte back, sync, again (probe still in table: checked in text_write), quiesce, free */
	ATF_CHECK_STREQ(log_buf, "W48 S W48 S Q F ");
	check_text_clean();
	ATF_CHECK_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_NOENT);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(boundaries_never_trusted);
ATF_TC_BODY(boundaries_never_trusted, tc)
{
	struct sess s;
	struct kinst_arm a;
	uint32_t off;

	fake_reset();
	sess_init(&s);
	for (off = 0; off < SMALL_SIZE + 3; off++) {
		int r = arm(&s, "f_small", off, 0, &a);

		if (off == 0 || off == 1 || off == 4 || off == 8 || off == 9)
			ATF_CHECK_EQ_MSG(r, KINST_E_OK, "off %u", off);
		else
			ATF_CHECK_EQ_MSG(r, KINST_E_INVAL, "off %u: %d", off, r);
	}
	ATF_CHECK_EQ(ctl.nprobes, 5);
	ATF_CHECK_EQ(arm(&s, "f_small", UINT32_MAX, 0, &a), KINST_E_INVAL);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(bad_requests);
ATF_TC_BODY(bad_requests, tc)
{
	struct sess s;
	struct kinst_arm a;
	int r;

	fake_reset();
	sess_init(&s);
	memset(&a, 'x', sizeof(a));
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "", 0, 0, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "f_small", 0, 0x80, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "nope", 0, 0, &a), KINST_E_NOENT);
	memset(&a, 0, sizeof(a));
	strcpy(a.module, "somemod");
	strcpy(a.function, "f_small");
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_NOENT);
	r = arm(&s, "f_excluded", 0, KINST_ARM_ALL, &a);
	ATF_CHECK_EQ(r, KINST_E_REFUSED);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_EXCLUDED);
	r = arm(&s, "f_fixup", 1, 0, &a);
	ATF_CHECK_EQ(r, KINST_E_REFUSED);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_FIXUP);
	/* The last byte is ret; the int3 padding after it is not in f_small. */
	ATF_CHECK_EQ(arm(&s, "f_small", 9, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(arm(&s, "f_small", 9, 0, &a), KINST_E_EXIST);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

/*
 * Captures (ABI 1.7): a program with captures gets the session's per-CPU
 * capture buffers at load (freed at close: check_no_leaks), arms for
 * records, and is refused for aggregating probes (they make no record).
 */
ATF_TC_WITHOUT_HEAD(captures_not_aggregated);
ATF_TC_BODY(captures_not_aggregated, tc)
{
	static const struct kinst_pinsn cap[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_MEM, .imm = 64 },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	}, plain[] = {
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	struct kinst_prog_load pl;
	struct kinst_agg_setup as;
	struct kinst_arm a;
	struct sess s;
	uint32_t cap_id, plain_id;

	fake_reset();
	sess_init(&s);
	memset(&pl, 0, sizeof(pl));
	pl.ninsns = 2;
	prog_loading = 1;
	ATF_REQUIRE_EQ(kinst_ctl_prog_load(&ctl, &s.cs, &pl, plain), KINST_E_OK);
	plain_id = pl.prog_id;
	ATF_CHECK(s.cs.s.capbuf == NULL);	/* no captures: no buffers */
	memset(&pl, 0, sizeof(pl));
	pl.ninsns = 4;
	ATF_REQUIRE_EQ(kinst_ctl_prog_load(&ctl, &s.cs, &pl, cap), KINST_E_OK);
	cap_id = pl.prog_id;
	ATF_CHECK(s.cs.s.capbuf != NULL);
	memset(&as, 0, sizeof(as));
	as.kind = KINST_AGG_COUNT;
	as.nslots = 16;
	ATF_REQUIRE_EQ(kinst_ctl_agg_setup(&ctl, &s.cs, &as), KINST_E_OK);
	prog_loading = 0;
	memset(&a, 0, sizeof(a));
	strcpy(a.function, "f_small");
	a.flags = KINST_ARM_PROG | KINST_ARM_AGG;
	a.prog_id = cap_id;
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_INVAL);
	a.prog_id = plain_id;
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_OK);
	memset(&a, 0, sizeof(a));
	strcpy(a.function, "f_small");
	a.offset = 9;
	a.flags = KINST_ARM_PROG;
	a.prog_id = cap_id;
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_OK);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

/* KINST_ARM_CHECK: the verdict arming would give, and nothing armed. */
ATF_TC_WITHOUT_HEAD(arm_check_only);
ATF_TC_BODY(arm_check_only, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_stats st;

	fake_reset();
	sess_init(&s);
	log_len = 0;
	log_buf[0] = '\0';
	ATF_CHECK_EQ(arm(&s, "f_small", 4, KINST_ARM_CHECK, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_NONE);
	ATF_CHECK_EQ(a.narmed, 0);
	ATF_CHECK_EQ(a.addr, TEXT_BASE + 4);
	ATF_CHECK_EQ(a.insn_len, 4);
	ATF_CHECK(memcmp(a.insn, small_code + 4, 4) == 0);
	ATF_CHECK_EQ(text[4], small_code[4]);		/* nothing written */
	ATF_CHECK(strchr(log_buf, 'W') == NULL && strchr(log_buf, 'A') == NULL);
	/* A refusal is the answer, not an error, and not counted. */
	ATF_CHECK_EQ(arm(&s, "f_fixup", 1, KINST_ARM_CHECK, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_FIXUP);
	ATF_CHECK_EQ(arm(&s, "f_excluded", 0, KINST_ARM_CHECK, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_EXCLUDED);
	memset(&st, 0, sizeof(st));
	kinst_ctl_stats(&ctl, &s.cs, NULL, 0, &st);
	ATF_CHECK_EQ(st.refusals, 0);
	/* Boundaries are still checked; CHECK with ALL is malformed. */
	ATF_CHECK_EQ(arm(&s, "f_small", 2, KINST_ARM_CHECK, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "f_small", 0, KINST_ARM_CHECK | KINST_ARM_ALL, &a),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(ctl.nprobes, 0);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(arm_all_and_refusals);
ATF_TC_BODY(arm_all_and_refusals, tc)
{
	struct sess s, s2;
	struct kinst_arm a;
	struct kinst_probe_info pi[8];
	struct kinst_text t;
	uint8_t buf[64];
	uint32_t n;

	fake_reset();
	sess_init(&s);
	sess_init(&s2);
	/* Another session owns offset 1 already. */
	ATF_REQUIRE_EQ(arm(&s2, "f_fixup", 4, 0, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(arm(&s, "f_fixup", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 3);	/* 0, 8, 9 */
	ATF_CHECK_EQ(a.nrefused, 2);	/* 1: fixup, 4: already armed */
	ATF_CHECK_EQ(text[FIXUP_OFF + 0], 0xcc);
	ATF_CHECK_EQ(text[FIXUP_OFF + 1], 0x48);
	ATF_CHECK_EQ(text[FIXUP_OFF + 4], 0xcc);
	ATF_CHECK_EQ(text[FIXUP_OFF + 8], 0xcc);

	n = kinst_ctl_list(&ctl, &s.cs, pi, 8);
	ATF_CHECK_EQ(n, 3);
	ATF_CHECK_STREQ(pi[0].function, "f_fixup");
	ATF_CHECK_STREQ(pi[0].module, "kernel");
	ATF_CHECK_EQ(kinst_ctl_list(&ctl, &s.cs, pi, 1), 3);

	/* TEXT hides every kinst int3, of any session. */
	memset(&t, 0, sizeof(t));
	strcpy(t.function, "f_fixup");
	ATF_REQUIRE_EQ(kinst_ctl_text(&ctl, &t, buf, sizeof(buf)), KINST_E_OK);
	ATF_CHECK_EQ(t.size, SMALL_SIZE);
	ATF_CHECK(memcmp(buf, small_code, SMALL_SIZE) == 0);

	/* Closing one session leaves the other's probe alone. */
	kinst_ctl_session_fini(&ctl, &s.cs);
	ATF_CHECK_EQ(text[FIXUP_OFF + 0], 0x55);
	ATF_CHECK_EQ(text[FIXUP_OFF + 4], 0xcc);
	ATF_CHECK_EQ(ctl.nprobes, 1);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(probe_limit);
ATF_TC_BODY(probe_limit, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_stats st;
	struct kinst_cpu_stats cs[2];

	fake_reset();
	sess_init(&s);
	ATF_CHECK_EQ(arm(&s, "f_big", 0, KINST_ARM_ALL, &a), KINST_E_NOSPC);
	ATF_CHECK_EQ(text[BIG_OFF], 0x90);
	ATF_CHECK_EQ(ctl.nprobes, 0);
	ATF_CHECK_EQ(arm(&s, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 5);
	memset(&st, 0, sizeof(st));
	kinst_ctl_stats(&ctl, &s.cs, cs, 2, &st);
	ATF_CHECK_EQ(st.ncpus, 2);
	ATF_CHECK_EQ(st.nprobes, 5);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(disarm_one_of_group);
ATF_TC_BODY(disarm_one_of_group, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_disarm d;

	fake_reset();
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(a.narmed, 5);
	log_len = 0;
	d.probe_id = a.probe_id + 2;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	/* The group's trampoline block stays while other probes use it. */
	ATF_CHECK_STREQ(log_buf, "W48 S W48 S Q ");
	ATF_CHECK_EQ(ntramps, 1);
	log_len = 0;
	d.probe_id = KINST_ALL_PROBES;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	ATF_CHECK_EQ(d.ndisarmed, 4);
	ATF_CHECK_STREQ(log_buf, "W55 W48 W5d Wc3 S W55 W48 W5d Wc3 S Q F ");
	check_text_clean();
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(name_list);
ATF_TC_BODY(name_list, tc)
{
	static const char *const l[] = { "do_int3", "irq_work_*", "x" };

	ATF_CHECK(kinst_name_listed("do_int3", l, 3));
	ATF_CHECK(kinst_name_listed("do_int3.cold", l, 3));
	ATF_CHECK(kinst_name_listed("do_int3.isra.0", l, 3));
	ATF_CHECK(!kinst_name_listed("do_int3x", l, 3));
	ATF_CHECK(!kinst_name_listed("do_int", l, 3));
	ATF_CHECK(kinst_name_listed("irq_work_queue", l, 3));
	ATF_CHECK(kinst_name_listed("irq_work_", l, 3));
	ATF_CHECK(!kinst_name_listed("irq_wor", l, 3));
	ATF_CHECK(kinst_name_listed("x", l, 3));
	ATF_CHECK(!kinst_name_listed("", l, 3));
	ATF_CHECK(!kinst_name_listed("y", l, 3));
	ATF_CHECK(kinst_str_ok("ab", 3));
	ATF_CHECK(!kinst_str_ok("abc", 3));
	ATF_CHECK_STREQ(kinst_ctl_err_name(KINST_E_REFUSED), "EOPNOTSUPP");
}

/* ---- jump-optimized probes (issue 13) ---- */

#define	JHANDLER	(TEXT_BASE + 0x2000000)	/* within rel32 of the detours */

static uint32_t
list_flags(struct sess *s, uint32_t id)
{
	struct kinst_probe_info pi[8];
	uint32_t i, n;

	n = kinst_ctl_list(&ctl, &s->cs, pi, 8);
	for (i = 0; i < n && i < 8; i++)
		if (pi[i].probe_id == id)
			return (pi[i].treatment & ~KINST_PI_TREATMENT);
	atf_tc_fail("probe %u not listed", id);
	return (0);
}

/*
 * f_small+0 (push %rbp; mov %rsp,%rbp; mov 0x8(%rdi),%rax: an 8-byte window)
 * qualifies.  Optimization: detour built and sealed, the int3 path resumes
 * in it, quiesce, wait for tasks, then the rel32 and the opcode, each batch
 * stored twice around a synchronization (the fake checks that bytes 1..4
 * change only under the int3 and with jresume set).  Removal: int3, the
 * original bytes, then the original first byte, quiesce, wait for tasks,
 * free.
 */
ATF_TC_WITHOUT_HEAD(jump_install_and_remove_order);
ATF_TC_BODY(jump_install_and_remove_order, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_disarm d;
	struct kinst_text t;
	struct kinst_cprobe *cp;
	uint8_t buf[SMALL_SIZE];
	char want[256];
	uint64_t det;
	uint32_t rel;

	fake_reset();
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0x1234, false);
	sess_init(&s);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_CHECK_STREQ(log_buf, "A R Wcc S Wcc S ");
	ATF_CHECK(kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), 0);

	log_len = 0;
	log_buf[0] = '\0';
	ATF_REQUIRE_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	cp = (struct kinst_cprobe *)kinst_ptable_lookup(&engine->table,
	    TEXT_BASE);
	ATF_REQUIRE(cp != NULL);
	ATF_CHECK_EQ(cp->jstate, KINST_JS_JUMP);
	ATF_CHECK_EQ(cp->jlen, 8);
	det = cp->jdetour;
	ATF_CHECK(cp->p.jresume == cp->jwindow && cp->jwindow > det &&
	    cp->jwindow < det + KINST_DETOUR_SIZE);
	rel = (uint32_t)(det - (TEXT_BASE + 5));
	snprintf(want, sizeof(want), "A R Q T W%02x W%02x W%02x W%02x S "
	    "W%02x W%02x W%02x W%02x S We9 S We9 S ", rel & 0xff,
	    (rel >> 8) & 0xff, (rel >> 16) & 0xff, rel >> 24, rel & 0xff,
	    (rel >> 8) & 0xff, (rel >> 16) & 0xff, rel >> 24);
	ATF_CHECK_STREQ(log_buf, want);
	ATF_CHECK_EQ(text[0], 0xe9);
	ATF_CHECK_EQ(text[1] | text[2] << 8 | text[3] << 16 |
	    (uint32_t)text[4] << 24, rel);
	ATF_CHECK(memcmp(text + 5, small_code + 5, SMALL_SIZE - 5) == 0);
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), KINST_PI_JUMP);
	ATF_CHECK_EQ(ctl.njump, 1);
	/* TEXT shows the original bytes. */
	memset(&t, 0, sizeof(t));
	strcpy(t.function, "f_small");
	ATF_REQUIRE_EQ(kinst_ctl_text(&ctl, &t, buf, sizeof(buf)), KINST_E_OK);
	ATF_CHECK(memcmp(buf, small_code, SMALL_SIZE) == 0);
	/* Nothing left to do. */
	log_len = 0;
	log_buf[0] = '\0';
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_STREQ(log_buf, "");

	log_len = 0;
	log_buf[0] = '\0';
	d.probe_id = a.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	ATF_CHECK_STREQ(log_buf, "Wcc S Wcc S W48 W89 We5 W48 S "
	    "W48 W89 We5 W48 S W55 S W55 S Q T F F ");
	ATF_CHECK_EQ(ctl.njump, 0);
	check_text_clean();
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_no_leaks();
}

/*
 * A new probe inside a jump window (f_small+4, in +0's window): the jump
 * goes back to an int3 first (its detour stays until the group goes); the
 * new probe's own window is then optimized, +0's is not again.
 */
ATF_TC_WITHOUT_HEAD(jump_undone_by_probe_in_window);
ATF_TC_BODY(jump_undone_by_probe_in_window, tc)
{
	struct sess s, s2;
	struct kinst_arm a, b;
	struct kinst_cprobe *cp;

	fake_reset();
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, false);
	sess_init(&s);
	sess_init(&s2);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_REQUIRE_EQ(text[0], 0xe9);
	log_len = 0;
	log_buf[0] = '\0';
	ATF_REQUIRE_EQ(arm(&s2, "f_small", 4, 0, &b), KINST_E_OK);
	ATF_CHECK_STREQ(log_buf, "A Wcc S Wcc S W48 W89 We5 W48 S "
	    "W48 W89 We5 W48 S R Wcc S Wcc S ");
	cp = (struct kinst_cprobe *)kinst_ptable_lookup(&engine->table,
	    TEXT_BASE);
	ATF_REQUIRE(cp != NULL);
	ATF_CHECK_EQ(cp->jstate, KINST_JS_NONE);
	ATF_CHECK_EQ(cp->p.jresume, 0);
	ATF_CHECK_EQ(text[0], 0xcc);
	ATF_CHECK(memcmp(text + 1, small_code + 1, 3) == 0);
	ATF_CHECK_EQ(text[4], 0xcc);
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), 0);
	/* +4's own window (mov 0x8(%rdi),%rax; pop %rbp) qualifies. */
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_CHECK_EQ(text[0], 0xcc);
	ATF_CHECK_EQ(text[4], 0xe9);
	ATF_CHECK_EQ(list_flags(&s2, b.probe_id), KINST_PI_JUMP);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

/*
 * What is never optimized: KINST_ARM_NOOPT; a window holding another probe
 * (every instruction of f_small armed); a function with a fixup; a group
 * whose session closed before the worker ran; a shim without jumps.
 */
ATF_TC_WITHOUT_HEAD(jump_not_installed);
ATF_TC_BODY(jump_not_installed, tc)
{
	struct sess s;
	struct kinst_arm a;

	fake_reset();
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));	/* not enabled */
	kinst_ctl_session_fini(&ctl, &s.cs);

	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, false);
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, KINST_ARM_NOOPT, &a), KINST_E_OK);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	kinst_ctl_session_fini(&ctl, &s.cs);

	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 5);
	log_len = 0;
	log_buf[0] = '\0';
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_STREQ(log_buf, "");
	kinst_ctl_session_fini(&ctl, &s.cs);

	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_fixup", 0, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_EQ(text[FIXUP_OFF], 0xcc);
	kinst_ctl_session_fini(&ctl, &s.cs);

	/* Closed while queued (kill -9 before the worker ran). */
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_CHECK(kinst_ctl_opt_pending(&ctl));
	kinst_ctl_session_fini(&ctl, &s.cs);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	check_text_clean();
	check_no_leaks();
}

/*
 * A shim that cannot wait for tasks (FreeBSD) optimizes only windows of one
 * instruction: f_small+0's window is three instructions, f_imm+0's one.
 */
ATF_TC_WITHOUT_HEAD(jump_single_insn_only);
ATF_TC_BODY(jump_single_insn_only, tc)
{
	struct sess s;
	struct kinst_arm a, b;

	fake_reset();
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, true);
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(arm(&s, "f_imm", 0, 0, &b), KINST_E_OK);
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), 0);
	ATF_CHECK_EQ(list_flags(&s, b.probe_id), KINST_PI_JUMP);
	ATF_CHECK_EQ(text[IMM_OFF], 0xe9);
	ATF_CHECK_EQ(text[SMALL_OFF], 0xcc);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	ATF_CHECK(memcmp(text + IMM_OFF, imm_code, IMM_SIZE) == 0);
	check_no_leaks();
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, arm_one_disarm_order);
	ATF_TP_ADD_TC(tp, boundaries_never_trusted);
	ATF_TP_ADD_TC(tp, bad_requests);
	ATF_TP_ADD_TC(tp, captures_not_aggregated);
	ATF_TP_ADD_TC(tp, arm_all_and_refusals);
	ATF_TP_ADD_TC(tp, arm_check_only);
	ATF_TP_ADD_TC(tp, probe_limit);
	ATF_TP_ADD_TC(tp, disarm_one_of_group);
	ATF_TP_ADD_TC(tp, name_list);
	ATF_TP_ADD_TC(tp, jump_install_and_remove_order);
	ATF_TP_ADD_TC(tp, jump_undone_by_probe_in_window);
	ATF_TP_ADD_TC(tp, jump_not_installed);
	ATF_TP_ADD_TC(tp, jump_single_insn_only);
	return (atf_no_error());
}
