/* SPDX-License-Identifier: BSD-2-Clause */
/* The fake kernel of control_test and dev_test: see fake_kernel.h. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "fake_kernel.h"
#include "x86/kinst_detour.h"

/* ---- the fake kernel ---- */

/*
 * Functions in fake text: f_small (5 instructions), f_big (9000 one-byte
 * nops: more than KINST_MAX_PROBES), f_excluded, f_fixup (second insn has a
 * "fixup").
 */
uint8_t text[16384];

const uint8_t small_code[SMALL_SIZE] = {
	0x55,				/* push %rbp */
	0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
	0x48, 0x8b, 0x47, 0x08,		/* mov 0x8(%rdi),%rax */
	0x5d,				/* pop %rbp */
	0xc3,				/* ret */
};
/* f_imm: mov $1,%eax (5 bytes: a window alone); mov %eax,%ecx; ret */
const uint8_t imm_code[IMM_SIZE] = { 0xb8, 0x01, 0x00, 0x00, 0x00, 0x89, 0xc1,
    0xc3 };

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

struct kinst_engine *engine;
struct kinst_ctl ctl;
int ctl_locked, text_locked;
long nalloc, nrefs, ntramps;
char log_buf[1 << 16];
size_t log_len;
uint64_t fixup_addr;

/*
 * What a vCPU of an emulator that translates code (QEMU's multi-threaded
 * TCG) executes at each byte of text: xlat[].  A store invalidates the
 * translations of the byte it changes, so a CPU fetches the new byte; but a
 * vCPU that was translating while the store landed links its translation of
 * the OLD byte afterwards (pending[]), at the latest before it acknowledges
 * the next synchronization.  That is the interleaving behind issue 15's
 * livelock: a removed int3 kept in a translation traps forever.
 */
uint8_t xlat[sizeof(text)];
int pending[sizeof(text)];	/* the old byte, or -1 */

void
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

void
fake_reset(void)
{
	size_t i;

	memset(text, 0xcc, sizeof(text));
	hold_log[0] = '\0';
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
	alloc_fail_after = -1;
	fake_cpu = 0;
	tramp_admit_hook = NULL;
	tramp_retire_hook = NULL;
	tramp_cancel_hook = NULL;
	log_len = 0;
	log_buf[0] = '\0';
}

/* Trap-context hooks: not exercised here. */
uint32_t fake_cpu;	/* what kinst_os_cpu() says; fake_reset(): 0 */
uint32_t kinst_os_cpu(void) { return (fake_cpu); }
uint64_t kinst_os_now_ns(void) { return (0); }
uint64_t kinst_os_local_ns(void) { return (0); }
void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	*pid = *tid = 1;
	memset(comm, 0, KINST_COMM_LEN);
}
void kinst_os_thread_key(uint64_t key[2]) { key[0] = key[1] = 1; }
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
int prog_loading;

long alloc_fail_after = -1;

void *
kinst_os_alloc(size_t size)
{
	ATF_REQUIRE(ctl_locked || prog_loading);
	if (alloc_fail_after == 0)
		return (NULL);
	if (alloc_fail_after > 0)
		alloc_fail_after--;
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

/* Ring memory: page-aligned, zeroed; the handle checks the pairing. */
void *
kinst_os_ring_alloc(size_t size, void **handle)
{
	void *p;

	ATF_REQUIRE(ctl_locked);
	ATF_REQUIRE(size % KINST_MAP_PAGE == 0);
	if (alloc_fail_after == 0)
		return (NULL);
	if (alloc_fail_after > 0)
		alloc_fail_after--;
	p = aligned_alloc(KINST_MAP_PAGE, size);
	if (p == NULL)
		return (NULL);
	memset(p, 0, size);
	nalloc++;
	*handle = (void *)((uintptr_t)p ^ size);
	return (p);
}

void
kinst_os_ring_free(void *p, size_t size, void *handle)
{
	ATF_REQUIRE(handle == (void *)((uintptr_t)p ^ size));
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
	/*
	 * "fakemod" and "fakemod2": modules whose functions are the kernel's
	 * (holders; the same address under two names is one site).
	 */
	if (module[0] != '\0' && strcmp(module, "kernel") != 0 &&
	    strcmp(module, "fakemod") != 0 && strcmp(module, "fakemod2") != 0)
		return (KINST_E_NOENT);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strcmp(fns[i].name, function) == 0) {
			f->addr = TEXT_BASE + fns[i].off;
			f->size = fns[i].size;
			strcpy(f->module, module[0] == '\0' ? "kernel" :
			    module);
			f->os_ref = (void *)1;
			nrefs++;
			return (KINST_E_OK);
		}
	return (KINST_E_NOENT);
}

/* kinst_os_log_hold's lines, "+module pid comm function" / "-module ...". */
char hold_log[1024];

void
kinst_os_log_hold(const char *module, int32_t pid, const char *comm,
    const char *function, bool held)
{
	size_t l = strlen(hold_log);

	ATF_REQUIRE(ctl_locked);
	snprintf(hold_log + l, sizeof(hold_log) - l, "%c%s %d %s %s;",
	    held ? '+' : '-', module, pid, comm, function);
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
struct kinst_csite *
jump_window_of(uint64_t addr)
{
	struct kinst_probe *p;
	uint64_t d;

	for (d = 1; d < 5; d++) {
		p = kinst_ptable_lookup(&engine->table, addr - d);
		if (p != NULL && p->addr == addr - d)
			return ((struct kinst_csite *)p);
	}
	return (NULL);
}

void
kinst_os_text_write(uint64_t addr, uint8_t byte)
{
	struct kinst_csite *cp;
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
		cp = (struct kinst_csite *)p;
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

bool (*tramp_admit_hook)(uint64_t size);
void (*tramp_retire_hook)(uint64_t size);
void (*tramp_cancel_hook)(uint64_t size);

static uint64_t
tramp_pages(size_t size)
{
	return (((uint64_t)size + 4095) & ~(uint64_t)4095);
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

	if (tramp_admit_hook != NULL && !tramp_admit_hook(tramp_pages(size))) {
		tlog("A! ");
		return (NULL);
	}
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
	if (tramp_retire_hook != NULL)
		tramp_retire_hook(tramp_pages(size));
	tlog("F ");
	free(t);
}

/* "U": a block no site held, given back (FreeBSD unmaps it, uncounted). */
void
kinst_os_tramp_unused(void *mem, size_t size)
{
	struct tramp *t = tramp_of(mem);

	ATF_REQUIRE(t->magic == 0x7472616d70ull && t->size == size);
	t->magic = 0;
	ntramps--;
	if (tramp_cancel_hook != NULL)
		tramp_cancel_hook(tramp_pages(size));
	tlog("U ");
	free(t);
}

/* ---- helpers ---- */


void
sess_init(struct sess *s)
{
	memset(s, 0, sizeof(*s));
	ATF_REQUIRE(kinst_ring_init(&s->rings[0], s->buf[0], 4096) == 0);
	ATF_REQUIRE(kinst_ring_init(&s->rings[1], s->buf[1], 4096) == 0);
	kinst_session_init(&s->cs.s, s->rings, s->hits, 2);
	kinst_ctl_session_init(&ctl, &s->cs);
}

int
arm(struct sess *s, const char *fn, uint32_t off, uint32_t flags,
    struct kinst_arm *a)
{
	return (arm_in(s, "", fn, off, flags, a));
}

int
arm_in(struct sess *s, const char *module, const char *fn, uint32_t off,
    uint32_t flags, struct kinst_arm *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->module, sizeof(a->module), "%s", module);
	snprintf(a->function, sizeof(a->function), "%s", fn);
	a->offset = off;
	a->flags = flags;
	return (kinst_ctl_arm(&ctl, &s->cs, a));
}

void
check_text_clean(void)
{
	ATF_CHECK(memcmp(text + SMALL_OFF, small_code, SMALL_SIZE) == 0);
	ATF_CHECK(memcmp(text + FIXUP_OFF, small_code, SMALL_SIZE) == 0);
	ATF_CHECK(engine->table.count == 0);
	ATF_CHECK_EQ(ctl.nprobes, 0);
}

void
check_no_leaks(void)
{
	ATF_CHECK_EQ(nalloc, 0);
	ATF_CHECK_EQ(nrefs, 0);
	ATF_CHECK_EQ(ntramps, 0);
	ATF_CHECK(!ctl_locked && !text_locked);
}

