/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the classifier, the trampoline builder, the emulator and the
 * trap entry, on instructions decoded by the real decoder.  The OS layer is
 * faked here; the harness in tests/harness proves the same code on real
 * hardware.
 */
#include <sys/mman.h>
#include <sys/uio.h>

#include <atf-c.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kinst_engine.h"
#include "x86/kinst_callgraph.h"
#include "kinst_kaddr.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_tstate.h"
#include "kinst_stack.h"

/* ---- a fake OS: one flat "memory" window, a nesting hook ---- */

static uint8_t fake_mem[4096];
static uint64_t fake_base = 0x7000;	/* fake_mem[0] is at this address */
static int fake_cpu;
static int nest_once;			/* re-enter the engine from inside a hit */
static struct kinst_engine *nest_engine;
static struct kinst_regs nest_regs;
static int nest_result = -1;

uint32_t
kinst_os_cpu(void)
{
	return ((uint32_t)fake_cpu);
}

uint64_t
kinst_os_now_ns(void)
{
	if (nest_once) {
		struct kinst_regs r = nest_regs;

		nest_once = 0;
		nest_result = kinst_engine_hit(nest_engine, &r);
	}
	return (42);
}

uint64_t
kinst_os_local_ns(void)
{
	return (43);
}

/* Re-enter the engine at this address from every record (a probe on a callee). */
static uint64_t recurse_addr;
static int recurse_calls;

void
kinst_os_thread(int32_t *pid, int32_t *tid, char comm[KINST_COMM_LEN])
{
	if (recurse_addr != 0 && recurse_calls < 1000) {
		struct kinst_regs r;

		recurse_calls++;
		memset(&r, 0, sizeof(r));
		r.rip = recurse_addr;
		r.gpr[KINST_RSP] = fake_base + 2048;
		(void)kinst_engine_hit(nest_engine, &r);
	}
	*pid = 100;
	*tid = 101;
	strcpy(comm, "unit");
}

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = 100;
	key[1] = 101;
}

static int wakes;

void
kinst_os_wake_deferred(struct kinst_session *s)
{
	(void)s;
	wakes++;
}

static int
in_window(uint64_t addr, size_t len)
{
	return (addr >= fake_base && addr + len <= fake_base + sizeof(fake_mem) &&
	    addr + len >= addr);
}

/*
 * A fake kernel half for probe programs and captures: one readable page at
 * KWIN_BASE; the page after it is "unmapped" (every read of it fails).
 */
#define	KWIN_BASE	0xffffffff81000000ull
static uint8_t kwin[4096];
static uint32_t kwin_reads;

int
kinst_os_read(uint64_t addr, void *buf, size_t len)
{
	if (addr >= KWIN_BASE && addr - KWIN_BASE < sizeof(kwin)) {
		kwin_reads++;
		if (len > sizeof(kwin) - (addr - KWIN_BASE))
			return (-1);
		memcpy(buf, kwin + (addr - KWIN_BASE), len);
		return (0);
	}
	if (!in_window(addr, len))
		return (-1);
	memcpy(buf, fake_mem + (addr - fake_base), len);
	return (0);
}

/*
 * Probe programs' user loads: this process's own memory, read without
 * faulting (process_vm_readv fails on a page that is not readable), so a
 * test can put a PROT_NONE page after its data.  user_reads counts calls.
 */
static uint32_t user_reads;

int
kinst_os_read_user(uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	user_reads++;
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)len)
		return (-1);
	return (0);
}

int
kinst_os_write_stack(uint64_t addr, const void *buf, size_t len)
{
	if (!in_window(addr, len))
		return (-1);
	memcpy(fake_mem + (addr - fake_base), buf, len);
	return (0);
}

/*
 * Fake unwinder: fake_frames callers at 0xc0de0000 + 0x10 * i, honouring
 * max the way kinst_os_stack() must; remembers what the engine passed.
 */
static uint32_t fake_frames;
static void *fake_osctx_seen;
static uint32_t fake_offset_seen;
static int fake_stack_calls;

uint32_t
kinst_os_stack(const struct kinst_regs *regs, void *osctx, uint32_t offset,
    uint64_t *pcs, uint32_t max, bool *truncated)
{
	uint32_t i;

	(void)regs;
	fake_stack_calls++;
	fake_osctx_seen = osctx;
	fake_offset_seen = offset;
	for (i = 0; i < fake_frames && i < max; i++)
		pcs[i] = 0xc0de0000ull + 0x10ull * i;
	*truncated = fake_frames > max;
	return (i);
}

static const struct kinst_mem_ops test_mem = {
	.read = NULL, .write = NULL, .ctx = NULL,
};

static int
tm_read(void *ctx, uint64_t a, void *b, size_t l)
{
	(void)ctx;
	return (kinst_os_read(a, b, l));
}

static int
tm_write(void *ctx, uint64_t a, const void *b, size_t l)
{
	(void)ctx;
	return (kinst_os_write_stack(a, b, l));
}

static struct kinst_mem_ops mem = { tm_read, tm_write, NULL };

static uint64_t
mem64(uint64_t addr)
{
	uint64_t v;

	ATF_REQUIRE(kinst_os_read(addr, &v, 8) == 0);
	return (v);
}

static void
decode_ok(const uint8_t *b, size_t n, struct kinst_insn *insn)
{
	int st = kinst_decode(b, n, insn);

	ATF_REQUIRE_MSG(st == KINST_DEC_OK, "decode status %d", st);
	ATF_REQUIRE_EQ(insn->len, n);
}

/* ---- classifier ---- */

struct ccase {
	const char *what;
	uint8_t bytes[15];
	uint8_t len;
	int treatment;
	int detail;	/* emul or reason */
	int flags;
};

static const struct ccase ccases[] = {
	{ "mov %rdi,%rax", { 0x48, 0x89, 0xf8 }, 3, KINST_T_OOL, 0, 0 },
	{ "push %rbp", { 0x55 }, 1, KINST_T_OOL, 0, 0 },
	{ "mov 0x10(%rip),%rax", { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 }, 7,
	    KINST_T_OOL_RIPREL, 0, KINST_CF_RIPREL },
	{ "cmpl $1,0x10(%rip)", { 0x83, 0x3d, 0x10, 0, 0, 0, 1 }, 7,
	    KINST_T_OOL_RIPREL, 0, KINST_CF_RIPREL },
	{ "cli", { 0xfa }, 1, KINST_T_OOL, 0, KINST_CF_NO_STI },
	{ "sti", { 0xfb }, 1, KINST_T_OOL, 0, KINST_CF_NO_STI },
	{ "jz rel8", { 0x74, 0x05 }, 2, KINST_T_EMULATE, KINST_EM_JCC, 0 },
	{ "jg rel32", { 0x0f, 0x8f, 1, 0, 0, 0 }, 6, KINST_T_EMULATE, KINST_EM_JCC, 0 },
	{ "jmp rel8", { 0xeb, 0xfe }, 2, KINST_T_EMULATE, KINST_EM_JMP_REL, KINST_CF_NOFALL },
	{ "jmp rel32", { 0xe9, 0, 0, 0, 0 }, 5, KINST_T_EMULATE, KINST_EM_JMP_REL, KINST_CF_NOFALL },
	{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, KINST_T_EMULATE, KINST_EM_CALL_REL, 0 },
	{ "call *%rax", { 0xff, 0xd0 }, 2, KINST_T_EMULATE, KINST_EM_CALL_IND, 0 },
	{ "call *0x8(%rsp)", { 0xff, 0x54, 0x24, 0x08 }, 4, KINST_T_EMULATE,
	    KINST_EM_CALL_IND, 0 },
	{ "call *0(%rip)", { 0xff, 0x15, 0, 0, 0, 0 }, 6, KINST_T_EMULATE,
	    KINST_EM_CALL_IND, KINST_CF_RIPREL },
	{ "notrack jmp *%rax", { 0x3e, 0xff, 0xe0 }, 3, KINST_T_EMULATE,
	    KINST_EM_JMP_IND, KINST_CF_NOFALL },
	{ "jmp *%gs:0x10", { 0x65, 0xff, 0x24, 0x25, 0x10, 0, 0, 0 }, 8,
	    KINST_T_REFUSE, KINST_R_SEGMENT, KINST_CF_NOFALL },
	{ "loop", { 0xe2, 0xfe }, 2, KINST_T_EMULATE, KINST_EM_LOOP, 0 },
	{ "loope", { 0xe1, 0xfe }, 2, KINST_T_EMULATE, KINST_EM_LOOPE, 0 },
	{ "loopne", { 0xe0, 0xfe }, 2, KINST_T_EMULATE, KINST_EM_LOOPNE, 0 },
	{ "jrcxz", { 0xe3, 0x00 }, 2, KINST_T_EMULATE, KINST_EM_JRCXZ, 0 },
	{ "ret", { 0xc3 }, 1, KINST_T_EMULATE, KINST_EM_RET, KINST_CF_NOFALL },
	{ "rep ret", { 0xf3, 0xc3 }, 2, KINST_T_EMULATE, KINST_EM_RET, KINST_CF_NOFALL },
	{ "ret $16", { 0xc2, 0x10, 0x00 }, 3, KINST_T_EMULATE, KINST_EM_RET_IMM, KINST_CF_NOFALL },
	{ "pushf", { 0x9c }, 1, KINST_T_EMULATE, KINST_EM_PUSHF, 0 },
	{ "popf", { 0x9d }, 1, KINST_T_EMULATE, KINST_EM_POPF, 0 },
	{ "int3", { 0xcc }, 1, KINST_T_REFUSE, KINST_R_INT3, KINST_CF_NOFALL },
	{ "int $0x80", { 0xcd, 0x80 }, 2, KINST_T_REFUSE, KINST_R_INT, 0 },
	{ "int1", { 0xf1 }, 1, KINST_T_REFUSE, KINST_R_INT, 0 },
	{ "iretq", { 0x48, 0xcf }, 2, KINST_T_REFUSE, KINST_R_IRET, KINST_CF_NOFALL },
	{ "sysretq", { 0x48, 0x0f, 0x07 }, 3, KINST_T_REFUSE, KINST_R_SYSTEM_ENTRY, KINST_CF_NOFALL },
	{ "syscall", { 0x0f, 0x05 }, 2, KINST_T_REFUSE, KINST_R_SYSTEM_ENTRY, 0 },
	{ "sysenter", { 0x0f, 0x34 }, 2, KINST_T_REFUSE, KINST_R_SYSTEM_ENTRY, 0 },
	{ "lret", { 0xcb }, 1, KINST_T_REFUSE, KINST_R_FAR, KINST_CF_NOFALL },
	{ "ljmp *(%rax)", { 0xff, 0x28 }, 2, KINST_T_REFUSE, KINST_R_FAR, KINST_CF_NOFALL },
	{ "lcall *(%rax)", { 0xff, 0x18 }, 2, KINST_T_REFUSE, KINST_R_FAR, 0 },
	{ "swapgs", { 0x0f, 0x01, 0xf8 }, 3, KINST_T_REFUSE, KINST_R_SWAPGS, 0 },
	{ "xbegin", { 0xc7, 0xf8, 0, 0, 0, 0 }, 6, KINST_T_REFUSE, KINST_R_XBEGIN, 0 },
	{ "ud2", { 0x0f, 0x0b }, 2, KINST_T_REFUSE, KINST_R_UD, KINST_CF_NOFALL },
	{ "hlt", { 0xf4 }, 1, KINST_T_REFUSE, KINST_R_HALT, 0 },
	{ "mwait", { 0x0f, 0x01, 0xc9 }, 3, KINST_T_REFUSE, KINST_R_HALT, 0 },
	{ "mov %eax,%ss", { 0x8e, 0xd0 }, 2, KINST_T_REFUSE, KINST_R_MOV_SS, 0 },
	{ "mov %eax,%ds", { 0x8e, 0xd8 }, 2, KINST_T_OOL, 0, 0 },
	{ "data16 call", { 0x66, 0xe8, 0, 0, 0, 0 }, 6, KINST_T_REFUSE,
	    KINST_R_BRANCH_OPSIZE, 0 },
	{ "vmlaunch", { 0x0f, 0x01, 0xc2 }, 3, KINST_T_REFUSE, KINST_R_VMENTRY, 0 },
	{ "vmovdqu 0(%rip),%ymm0", { 0xc5, 0xfe, 0x6f, 0x05, 0, 0, 0, 0 }, 8,
	    KINST_T_OOL_RIPREL, 0, KINST_CF_RIPREL },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, KINST_T_REFUSE, KINST_R_ENDBR, 0 },
	{ "nopl (%rax) via 0f 1e", { 0x0f, 0x1e, 0x00 }, 3, KINST_T_OOL, 0, 0 },
	{ "lock xadd %eax,(%rdi)", { 0xf0, 0x0f, 0xc1, 0x07 }, 4, KINST_T_OOL, 0, 0 },
	{ "rep movsb", { 0xf3, 0xa4 }, 2, KINST_T_OOL, 0, 0 },
};

ATF_TC_WITHOUT_HEAD(classify_table);
ATF_TC_BODY(classify_table, tc)
{
	size_t i;

	for (i = 0; i < sizeof(ccases) / sizeof(ccases[0]); i++) {
		const struct ccase *c = &ccases[i];
		struct kinst_insn insn;
		struct kinst_class cls;
		int st;

		st = kinst_decode(c->bytes, c->len, &insn);
		kinst_classify(st, &insn, c->bytes, &cls);
		ATF_CHECK_EQ_MSG(cls.treatment, c->treatment, "%s: treatment %s",
		    c->what, kinst_treatment_name(cls.treatment));
		if (c->treatment == KINST_T_EMULATE)
			ATF_CHECK_EQ_MSG(cls.emul, c->detail, "%s: emul %s",
			    c->what, kinst_emul_name(cls.emul));
		if (c->treatment == KINST_T_REFUSE)
			ATF_CHECK_EQ_MSG(cls.reason, c->detail, "%s: reason %s",
			    c->what, kinst_reason_name(cls.reason));
		ATF_CHECK_EQ_MSG(cls.flags, c->flags, "%s: flags %#x", c->what,
		    cls.flags);
	}
}

ATF_TC_WITHOUT_HEAD(classify_undecodable);
ATF_TC_BODY(classify_undecodable, tc)
{
	static const uint8_t bad[] = { 0x06 };		/* push %es: invalid */
	static const uint8_t trunc[] = { 0x48, 0x8b };	/* mov missing ModRM */
	struct kinst_insn insn;
	struct kinst_class cls;

	kinst_classify(kinst_decode(bad, sizeof(bad), &insn), &insn, bad, &cls);
	ATF_CHECK_EQ(cls.treatment, KINST_T_REFUSE);
	ATF_CHECK_EQ(cls.reason, KINST_R_UNDECODABLE);
	kinst_classify(kinst_decode(trunc, sizeof(trunc), &insn), &insn, trunc,
	    &cls);
	ATF_CHECK_EQ(cls.reason, KINST_R_UNDECODABLE);
	ATF_CHECK_STREQ(kinst_reason_name(KINST_R_INT3), "int3");
	ATF_CHECK_STREQ(kinst_reason_name(9999), "unknown");
	ATF_CHECK_STREQ(kinst_emul_name(KINST_EM_RET_IMM), "ret-imm");
}

ATF_TC_WITHOUT_HEAD(sti_shadow);
ATF_TC_BODY(sti_shadow, tc)
{
	static const uint8_t sti_hlt[] = { 0xfb, 0xf4 };
	static const uint8_t sti_ret[] = { 0xfb, 0xc3 };
	static const uint8_t sti_mwait[] = { 0xfb, 0x0f, 0x01, 0xc9 };
	struct kinst_probe p;
	uint8_t img[KINST_TRAMP_SIZE];

	ATF_CHECK_EQ(kinst_probe_prepare(&p, sti_hlt, 2, 0x1000, 0x2000, img),
	    KINST_R_STI_SHADOW);
	ATF_CHECK_EQ(kinst_probe_prepare(&p, sti_mwait, 4, 0x1000, 0x2000, img),
	    KINST_R_STI_SHADOW);
	ATF_CHECK_EQ(kinst_probe_prepare(&p, sti_ret, 2, 0x1000, 0x2000, img),
	    KINST_R_NONE);
	ATF_CHECK_EQ(p.cls.flags & KINST_CF_NO_STI, KINST_CF_NO_STI);
}

/* ---- function boundaries ---- */

ATF_TC_WITHOUT_HEAD(func_boundary);
ATF_TC_BODY(func_boundary, tc)
{
	/* push %rbp; mov %rsp,%rbp; mov 0x10(%rip),%rax; pop %rbp; ret */
	static const uint8_t f[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x8b, 0x05,
	    0x10, 0, 0, 0, 0x5d, 0xc3 };
	uint32_t prev, next;

	ATF_CHECK_EQ(kinst_func_boundary(f, sizeof(f), 0, NULL, NULL), 1);
	ATF_CHECK_EQ(kinst_func_boundary(f, sizeof(f), 1, NULL, NULL), 1);
	ATF_CHECK_EQ(kinst_func_boundary(f, sizeof(f), 4, NULL, NULL), 1);
	ATF_CHECK_EQ(kinst_func_boundary(f, sizeof(f), 12, NULL, NULL), 1);
	ATF_CHECK_EQ(kinst_func_boundary(f, sizeof(f), 7, &prev, &next), 0);
	ATF_CHECK_EQ(prev, 4);
	ATF_CHECK_EQ(next, 11);
	ATF_CHECK_EQ(kinst_func_boundary(f, sizeof(f), 2, &prev, &next), 0);
	ATF_CHECK_EQ(prev, 1);
	ATF_CHECK_EQ(next, 4);
	ATF_CHECK_EQ(kinst_func_boundary(f, sizeof(f), 13, &prev, &next), 0);
	ATF_CHECK_EQ(next, 13);
	/* An undecodable byte before the offset: cannot tell. */
	static const uint8_t g[] = { 0x90, 0x06, 0x90, 0x90 };
	ATF_CHECK_EQ(kinst_func_boundary(g, sizeof(g), 3, NULL, NULL), -1);
	ATF_CHECK_EQ(kinst_func_boundary(g, sizeof(g), 1, NULL, NULL), 1);
}

/* ---- trampolines ---- */

static int32_t
get32(const uint8_t *p)
{
	return ((int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
	    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24));
}

ATF_TC_WITHOUT_HEAD(tramp_riprel);
ATF_TC_BODY(tramp_riprel, tc)
{
	/* cmpl $0x7f,0x100(%rip): immediate after the displacement. */
	static const uint8_t b[] = { 0x83, 0x3d, 0x00, 0x01, 0, 0, 0x7f };
	const uint64_t addr = 0xffffffff81000000ull;
	const uint64_t tramp = 0xffffffffc0001000ull;
	struct kinst_insn insn;
	struct kinst_class cls;
	uint8_t img[KINST_TRAMP_SIZE];
	uint64_t target;
	int v;

	decode_ok(b, sizeof(b), &insn);
	kinst_classify(KINST_DEC_OK, &insn, b, &cls);
	ATF_REQUIRE_EQ(cls.treatment, KINST_T_OOL_RIPREL);
	ATF_REQUIRE_EQ(kinst_tramp_build(b, &insn, &cls, addr, tramp, img),
	    KINST_RELOC_OK);
	for (v = 0; v < 2; v++) {
		uint64_t at = tramp + (v ? KINST_TRAMP_STI : KINST_TRAMP_NOSTI);
		const uint8_t *code = img + (v ? KINST_TRAMP_STI : KINST_TRAMP_NOSTI);
		size_t j = sizeof(b);

		ATF_CHECK_EQ(code[0], 0x83);
		ATF_CHECK_EQ(code[1], 0x3d);
		ATF_CHECK_EQ(code[6], 0x7f);	/* immediate untouched */
		target = at + sizeof(b) + (int64_t)get32(code + 2);
		ATF_CHECK_EQ(target, addr + sizeof(b) + 0x100);
		if (v) {
			ATF_CHECK_EQ(code[j], 0xfb);
			j++;
		}
		ATF_CHECK_EQ(code[j], 0xe9);
		ATF_CHECK_EQ(at + j + 5 + (int64_t)get32(code + j + 1),
		    addr + sizeof(b));
		ATF_CHECK_EQ(code[j + 5], 0xcc);	/* filler */
	}
	ATF_CHECK(kinst_tramp_reaches(&insn, addr, tramp));
	/* 3 GiB away does not reach: refused cleanly. */
	ATF_CHECK_EQ(kinst_tramp_build(b, &insn, &cls, addr,
	    addr + 0xc0000000ull, img), KINST_RELOC_RANGE);
	ATF_CHECK(!kinst_tramp_reaches(&insn, addr, addr + 0xc0000000ull));
}

ATF_TC_WITHOUT_HEAD(tramp_cli);
ATF_TC_BODY(tramp_cli, tc)
{
	static const uint8_t b[] = { 0xfa };
	struct kinst_insn insn;
	struct kinst_class cls;
	uint8_t img[KINST_TRAMP_SIZE];

	decode_ok(b, 1, &insn);
	kinst_classify(KINST_DEC_OK, &insn, b, &cls);
	ATF_REQUIRE_EQ(kinst_tramp_build(b, &insn, &cls, 0x1000, 0x5000, img), 0);
	/* Both variants are cli; jmp — never an sti after a cli. */
	ATF_CHECK_EQ(img[KINST_TRAMP_NOSTI + 1], 0xe9);
	ATF_CHECK_EQ(img[KINST_TRAMP_STI], 0xfa);
	ATF_CHECK_EQ(img[KINST_TRAMP_STI + 1], 0xe9);
	/* Emulated instructions have no trampoline. */
	static const uint8_t r[] = { 0xc3 };
	decode_ok(r, 1, &insn);
	kinst_classify(KINST_DEC_OK, &insn, r, &cls);
	ATF_CHECK_EQ(kinst_tramp_build(r, &insn, &cls, 0x1000, 0x5000, img),
	    KINST_RELOC_NOTOOL);
}

/* ---- emulator ---- */

static void
regs_init(struct kinst_regs *r, uint64_t rip)
{
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < KINST_NGPR; i++)
		r->gpr[i] = 0x1111111111111111ull * (uint64_t)(i + 1);
	r->gpr[KINST_RSP] = fake_base + 2048;
	r->rip = rip;
	r->rflags = 0x202;
}

static void
emu(const uint8_t *b, size_t n, struct kinst_regs *r, int want)
{
	struct kinst_insn insn;
	struct kinst_class cls;

	decode_ok(b, n, &insn);
	kinst_classify(KINST_DEC_OK, &insn, b, &cls);
	ATF_REQUIRE_EQ(cls.treatment, KINST_T_EMULATE);
	ATF_REQUIRE_EQ(kinst_emulate(&insn, cls.emul, r, &mem), want);
}

/* Reference condition evaluation, written from the SDM's jcc table. */
static int
ref_cond(int cc, uint64_t f)
{
	int cf = !!(f & 1), pf = !!(f & 4), zf = !!(f & 0x40), sf = !!(f & 0x80),
	    of = !!(f & 0x800);

	switch (cc) {
	case 0x0: return (of == 1);			/* jo */
	case 0x1: return (of == 0);			/* jno */
	case 0x2: return (cf == 1);			/* jb */
	case 0x3: return (cf == 0);			/* jae */
	case 0x4: return (zf == 1);			/* je */
	case 0x5: return (zf == 0);			/* jne */
	case 0x6: return (cf == 1 || zf == 1);		/* jbe */
	case 0x7: return (cf == 0 && zf == 0);		/* ja */
	case 0x8: return (sf == 1);			/* js */
	case 0x9: return (sf == 0);			/* jns */
	case 0xa: return (pf == 1);			/* jp */
	case 0xb: return (pf == 0);			/* jnp */
	case 0xc: return (sf != of);			/* jl */
	case 0xd: return (sf == of);			/* jge */
	case 0xe: return (zf == 1 || sf != of);		/* jle */
	default: return (zf == 0 && sf == of);		/* jg */
	}
}

ATF_TC_WITHOUT_HEAD(emulate_jcc_all);
ATF_TC_BODY(emulate_jcc_all, tc)
{
	int cc, fl, form;
	uint64_t flags;

	for (cc = 0; cc < 16; cc++) {
		for (fl = 0; fl < 32; fl++) {
			/* Every combination of CF PF ZF SF OF. */
			flags = 0x202 | ((fl & 1) ? 1 : 0) | ((fl & 2) ? 4 : 0) |
			    ((fl & 4) ? 0x40 : 0) | ((fl & 8) ? 0x80 : 0) |
			    ((fl & 16) ? 0x800 : 0);
			for (form = 0; form < 2; form++) {
				uint8_t b8[2] = { (uint8_t)(0x70 + cc), 0xf0 };
				uint8_t b32[6] = { 0x0f, (uint8_t)(0x80 + cc),
				    0x00, 0x10, 0x00, 0x00 };
				struct kinst_regs r;
				uint64_t want;

				regs_init(&r, 0x400000);
				r.rflags = flags;
				if (form == 0) {
					emu(b8, 2, &r, 0);
					want = ref_cond(cc, flags) ?
					    0x400002 - 0x10 : 0x400002;
				} else {
					emu(b32, 6, &r, 0);
					want = ref_cond(cc, flags) ?
					    0x400006 + 0x1000 : 0x400006;
				}
				ATF_CHECK_EQ_MSG(r.rip, want, "cc %x flags %#lx",
				    cc, (unsigned long)flags);
				ATF_CHECK_EQ(r.rflags, flags);
				ATF_CHECK_EQ(r.gpr[KINST_RSP], fake_base + 2048);
			}
		}
	}
}

ATF_TC_WITHOUT_HEAD(emulate_calls);
ATF_TC_BODY(emulate_calls, tc)
{
	struct kinst_regs r;
	uint64_t sp = fake_base + 2048, v;

	/* call rel32 backwards */
	static const uint8_t call[] = { 0xe8, 0xfb, 0xff, 0xff, 0xff };
	regs_init(&r, 0x400100);
	emu(call, sizeof(call), &r, 0);
	ATF_CHECK_EQ(r.rip, 0x400100);		/* call to itself */
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp - 8);
	ATF_CHECK_EQ(mem64(sp - 8), 0x400105);

	/* call *%r11 */
	static const uint8_t callr[] = { 0x41, 0xff, 0xd3 };
	regs_init(&r, 0x400100);
	emu(callr, sizeof(callr), &r, 0);
	ATF_CHECK_EQ(r.rip, r.gpr[KINST_R11]);
	ATF_CHECK_EQ(mem64(sp - 8), 0x400103);

	/* call *0x10(%rsp): the operand is read with the old %rsp. */
	static const uint8_t callsp[] = { 0xff, 0x54, 0x24, 0x10 };
	regs_init(&r, 0x400100);
	v = 0xdeadbeefcafe;
	kinst_os_write_stack(sp + 0x10, &v, 8);
	emu(callsp, sizeof(callsp), &r, 0);
	ATF_CHECK_EQ(r.rip, v);
	ATF_CHECK_EQ(mem64(sp - 8), 0x400104);

	/* call *0x8(%rax,%rcx,8) with fake_base-relative registers */
	static const uint8_t callsib[] = { 0xff, 0x54, 0xc8, 0x08 };
	regs_init(&r, 0x400100);
	r.gpr[KINST_RAX] = fake_base + 256;
	r.gpr[KINST_RCX] = 3;
	v = 0x123456789;
	kinst_os_write_stack(fake_base + 256 + 24 + 8, &v, 8);
	emu(callsib, sizeof(callsib), &r, 0);
	ATF_CHECK_EQ(r.rip, v);

	/* call *disp(%rip) */
	static const uint8_t callrip[] = { 0xff, 0x15, 0x10, 0x00, 0x00, 0x00 };
	regs_init(&r, fake_base + 100);
	v = 0xabcdef;
	kinst_os_write_stack(fake_base + 100 + 6 + 0x10, &v, 8);
	emu(callrip, sizeof(callrip), &r, 0);
	ATF_CHECK_EQ(r.rip, v);
	ATF_CHECK_EQ(mem64(sp - 8), fake_base + 106);

	/* jmp *(%r13) (mod 01 disp8 0 for r13) and jmp *table(,%rdx,8) */
	static const uint8_t jmpr13[] = { 0x41, 0xff, 0x65, 0x00 };
	regs_init(&r, 0x400100);
	r.gpr[KINST_R13] = fake_base + 512;
	v = 0x777;
	kinst_os_write_stack(fake_base + 512, &v, 8);
	emu(jmpr13, sizeof(jmpr13), &r, 0);
	ATF_CHECK_EQ(r.rip, 0x777);
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp);

	uint8_t jtab[] = { 0xff, 0x24, 0xd5, 0, 0, 0, 0 };
	uint32_t tab = (uint32_t)(fake_base + 1024);
	memcpy(jtab + 3, &tab, 4);
	regs_init(&r, 0x400100);
	r.gpr[KINST_RDX] = 2;
	v = 0x888;
	kinst_os_write_stack(fake_base + 1024 + 16, &v, 8);
	emu(jtab, sizeof(jtab), &r, 0);
	ATF_CHECK_EQ(r.rip, 0x888);
}

ATF_TC_WITHOUT_HEAD(emulate_loops);
ATF_TC_BODY(emulate_loops, tc)
{
	struct kinst_regs r;
	static const uint8_t loop[] = { 0xe2, 0xfe };
	static const uint8_t loop32[] = { 0x67, 0xe2, 0xfd };
	static const uint8_t loope[] = { 0xe1, 0x10 };
	static const uint8_t loopne[] = { 0xe0, 0x10 };
	static const uint8_t jrcxz[] = { 0xe3, 0x10 };
	static const uint8_t jecxz[] = { 0x67, 0xe3, 0x10 };

	regs_init(&r, 0x1000);
	r.gpr[KINST_RCX] = 2;
	emu(loop, 2, &r, 0);
	ATF_CHECK_EQ(r.gpr[KINST_RCX], 1);
	ATF_CHECK_EQ(r.rip, 0x1000);
	emu(loop, 2, &r, 0);
	ATF_CHECK_EQ(r.gpr[KINST_RCX], 0);
	ATF_CHECK_EQ(r.rip, 0x1002);

	/* 32-bit count: ecx 0 -> 0xffffffff, taken, upper half cleared. */
	regs_init(&r, 0x1000);
	r.gpr[KINST_RCX] = 0x500000000ull;
	emu(loop32, 3, &r, 0);
	ATF_CHECK_EQ(r.gpr[KINST_RCX], 0xffffffffull);
	ATF_CHECK_EQ(r.rip, 0x1000);
	r.gpr[KINST_RCX] = 0x500000001ull;
	emu(loop32, 3, &r, 0);
	ATF_CHECK_EQ(r.gpr[KINST_RCX], 0);
	ATF_CHECK_EQ(r.rip, 0x1003);

	regs_init(&r, 0x1000);
	r.gpr[KINST_RCX] = 5;
	r.rflags = 0x202 | KINST_FL_ZF;
	emu(loope, 2, &r, 0);
	ATF_CHECK_EQ(r.rip, 0x1012);
	r.rip = 0x1000;
	emu(loopne, 2, &r, 0);
	ATF_CHECK_EQ(r.rip, 0x1002);		/* ZF set: not taken */
	ATF_CHECK_EQ(r.gpr[KINST_RCX], 3);

	regs_init(&r, 0x1000);
	r.gpr[KINST_RCX] = 0x100000000ull;
	emu(jrcxz, 2, &r, 0);
	ATF_CHECK_EQ(r.rip, 0x1002);		/* rcx != 0 */
	r.rip = 0x1000;
	emu(jecxz, 3, &r, 0);
	ATF_CHECK_EQ(r.rip, 0x1013);		/* ecx == 0 */
	ATF_CHECK_EQ(r.gpr[KINST_RCX], 0x100000000ull);	/* untouched */
}

ATF_TC_WITHOUT_HEAD(emulate_ret_flags);
ATF_TC_BODY(emulate_ret_flags, tc)
{
	struct kinst_regs r;
	uint64_t sp = fake_base + 2048, v;
	static const uint8_t ret[] = { 0xc3 };
	static const uint8_t retimm[] = { 0xc2, 0xff, 0xff };
	static const uint8_t pushf[] = { 0x9c };
	static const uint8_t pushfw[] = { 0x66, 0x9c };
	static const uint8_t popf[] = { 0x9d };

	regs_init(&r, 0x1000);
	v = 0x4242;
	kinst_os_write_stack(sp, &v, 8);
	emu(ret, 1, &r, 0);
	ATF_CHECK_EQ(r.rip, 0x4242);
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp + 8);

	/* ret $0xffff: the immediate is unsigned. */
	regs_init(&r, 0x1000);
	emu(retimm, 3, &r, 0);
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp + 8 + 0xffff);

	/* pushf pushes the interrupted flags, without RF and VM. */
	regs_init(&r, 0x1000);
	r.rflags = 0x202 | KINST_FL_RF | KINST_FL_CF | KINST_FL_AC;
	emu(pushf, 1, &r, 0);
	ATF_CHECK_EQ(mem64(sp - 8), 0x202 | KINST_FL_CF | KINST_FL_AC);
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp - 8);
	ATF_CHECK_EQ(r.rip, 0x1001);

	regs_init(&r, 0x1000);
	v = 0xaaaaaaaaaaaaaaaaull;
	kinst_os_write_stack(sp - 8, &v, 8);
	emu(pushfw, 2, &r, 0);
	ATF_CHECK_EQ(mem64(sp - 8), 0x0202aaaaaaaaaaaaull);
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp - 2);

	/* popf at CPL 0: IF, AC, DF restored; RF cleared; VM kept. */
	regs_init(&r, 0x1000);
	r.rflags = 0x2 | KINST_FL_RF;
	v = 0x2 | KINST_FL_IF | KINST_FL_AC | KINST_FL_DF | KINST_FL_ZF |
	    KINST_FL_VM;
	kinst_os_write_stack(sp, &v, 8);
	emu(popf, 1, &r, 0);
	ATF_CHECK_EQ(r.rflags, 0x2 | KINST_FL_IF | KINST_FL_AC | KINST_FL_DF |
	    KINST_FL_ZF);
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp + 8);
	/* popf at CPL 3 keeps IF. */
	regs_init(&r, 0x1000);
	r.cs = 0x33;
	r.rflags = 0x202;
	v = 0x2 | KINST_FL_CF;
	kinst_os_write_stack(sp, &v, 8);
	emu(popf, 1, &r, 0);
	ATF_CHECK_EQ(r.rflags, 0x202 | KINST_FL_CF);
}

ATF_TC_WITHOUT_HEAD(emulate_fault_leaves_regs);
ATF_TC_BODY(emulate_fault_leaves_regs, tc)
{
	struct kinst_regs r, before;
	static const uint8_t call[] = { 0xe8, 0, 0, 0, 0 };
	static const uint8_t callm[] = { 0xff, 0x10 };
	static const uint8_t ret[] = { 0xc3 };

	regs_init(&r, 0x1000);
	r.gpr[KINST_RSP] = 0x10;		/* outside the window */
	before = r;
	emu(call, 5, &r, KINST_EMU_FAULT);
	ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
	emu(ret, 1, &r, KINST_EMU_FAULT);
	ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
	regs_init(&r, 0x1000);
	r.gpr[KINST_RAX] = 0x10;
	before = r;
	emu(callm, 2, &r, KINST_EMU_FAULT);
	ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
}

/* ---- trap entry ---- */

static struct kinst_engine eng;
static struct kinst_ring rings[2];
static uint8_t ringbuf[2][8192];
static struct kinst_pcpu_count shits[2];
static struct kinst_session sess;

static void
setup_engine(bool manage_if)
{
	kinst_engine_init(&eng, 2, manage_if);
	kinst_ring_init(&rings[0], ringbuf[0], sizeof(ringbuf[0]));
	kinst_ring_init(&rings[1], ringbuf[1], sizeof(ringbuf[1]));
	kinst_session_init(&sess, rings, shits, 2);
	fake_cpu = 0;
}

static void
arm(struct kinst_probe *p, const uint8_t *b, size_t n, uint64_t addr,
    uint64_t tramp, uint32_t id)
{
	uint8_t img[KINST_TRAMP_SIZE];

	memset(p, 0, sizeof(*p));
	ATF_REQUIRE_EQ(kinst_probe_prepare(p, b, n, addr, tramp, img), 0);
	p->id = id;
	p->session = &sess;
	ATF_REQUIRE_EQ(kinst_ptable_insert(&eng.table, p), 0);
}

/*
 * The wake-up watermark: with wake_bytes set, the hit whose record brings
 * its ring to the watermark asks for the wake-up (and every hit after it
 * while the reader has not emptied the ring); none before.  0 wakes at
 * every record; a watermark above half the ring counts as half.
 */
ATF_TC_WITHOUT_HEAD(wake_at_watermark);
ATF_TC_BODY(wake_at_watermark, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	const uint32_t rs = sizeof(struct kinst_hit_record);
	struct kinst_hit_record out[4];
	struct kinst_probe p;
	struct kinst_regs r;
	int w0, i;

	setup_engine(true);
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	sess.wake_bytes = 3 * rs;
	w0 = wakes;
	for (i = 1; i <= 4; i++) {
		regs_init(&r, 0x400000);
		ATF_REQUIRE_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
		ATF_CHECK_EQ_MSG(wakes - w0, i < 3 ? 0 : i - 2, "hit %d", i);
	}
	/* Emptied: below the watermark again. */
	while (kinst_ring_get(&rings[0], out, sizeof(out)) != 0)
		;
	w0 = wakes;
	regs_init(&r, 0x400000);
	ATF_REQUIRE_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(wakes, w0);
	/* 0: every record. */
	sess.wake_bytes = 0;
	regs_init(&r, 0x400000);
	ATF_REQUIRE_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(wakes, w0 + 1);
	/* Above half of the 8 KiB ring: 4 KiB counts. */
	while (kinst_ring_get(&rings[0], out, sizeof(out)) != 0)
		;
	sess.wake_bytes = 1u << 20;
	w0 = wakes;
	for (i = 1; (uint32_t)i * rs < 4096; i++) {
		regs_init(&r, 0x400000);
		ATF_REQUIRE_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	}
	ATF_CHECK_EQ(wakes, w0);
	regs_init(&r, 0x400000);
	ATF_REQUIRE_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(wakes, w0 + 1);
	sess.wake_bytes = 0;
}

ATF_TC_WITHOUT_HEAD(hit_redirect_and_if);
ATF_TC_BODY(hit_redirect_and_if, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	static const uint8_t cli[] = { 0xfa };
	struct kinst_probe p, q;
	struct kinst_regs r;
	struct kinst_hit_record rec;

	setup_engine(true);
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	arm(&q, cli, 1, 0x400010, 0x500040, 8);

	regs_init(&r, 0x400000);
	r.rflags = 0x246;			/* IF set */
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_STI);
	ATF_CHECK_EQ(r.rflags, 0x246 & ~KINST_FL_IF);

	regs_init(&r, 0x400000);
	r.rflags = 0x046;			/* IF clear */
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_NOSTI);
	ATF_CHECK_EQ(r.rflags, 0x046);

	regs_init(&r, 0x400010);		/* cli with IF set: no sti */
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500040 + KINST_TRAMP_NOSTI);
	ATF_CHECK_EQ(r.rflags & KINST_FL_IF, 0);

	regs_init(&r, 0x400001);		/* not a probe address */
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_NOT_OURS);
	ATF_CHECK_EQ(r.rip, 0x400001);

	/* The record shows the registers as the instruction saw them. */
	ATF_REQUIRE_EQ(kinst_ring_get(&rings[0], &rec, sizeof(rec)), sizeof(rec));
	ATF_CHECK_EQ(rec.hdr.type, KINST_REC_HIT);
	ATF_CHECK_EQ(rec.addr, 0x400000);
	ATF_CHECK_EQ(rec.regs.rip, 0x400000);
	ATF_CHECK_EQ(rec.regs.rflags, 0x246);
	ATF_CHECK_EQ(rec.regs.gpr[KINST_RDI], 0x8888888888888888ull);
	ATF_CHECK_EQ(rec.probe_id, 7);
	ATF_CHECK_EQ(rec.pid, 100);
	ATF_CHECK_STREQ(rec.comm, "unit");
	ATF_CHECK_EQ(p.hits, 2);
	ATF_CHECK_EQ(shits[0].n, 3);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 3);

	/* User-space mode never touches IF. */
	setup_engine(false);
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	regs_init(&r, 0x400000);
	r.rflags = 0x246;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_NOSTI);
	ATF_CHECK_EQ(r.rflags, 0x246);
}

/*
 * A probe with a predicate (kinst_prog.c): the program runs before the
 * record; a false result or a faulting load records nothing and counts the
 * hit as filtered (and faulted), the instruction still executes, and
 * hits == delivered + dropped + filtered.
 */
ATF_TC_WITHOUT_HEAD(hit_predicate);
ATF_TC_BODY(hit_predicate, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	/* rdx == 7 && pid == 100, then a variant loading through rsi. */
	static const struct kinst_pinsn pred[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDX },
		{ .op = KINST_OP_IMM, .imm = 7 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_CTX, .arg = KINST_PCTX_PID },
		{ .op = KINST_OP_IMM, .imm = 100 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_AND },
		{ .op = KINST_OP_RET },
	};
	static const struct kinst_pinsn load[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RSI },
		{ .op = KINST_OP_LOAD, .arg = 4 },
		{ .op = KINST_OP_RET },
	};
	static struct kinst_prog prog, lprog;
	struct kinst_prog_cpu ps[2];
	struct kinst_hit_record rec;
	struct kinst_probe p, q;
	struct kinst_regs r;
	uint32_t bad, i;

	ATF_REQUIRE_EQ(kinst_prog_verify(pred, 8, &prog, &bad), KINST_PV_OK);
	ATF_REQUIRE_EQ(kinst_prog_verify(load, 3, &lprog, &bad), KINST_PV_OK);
	setup_engine(true);
	memset(ps, 0, sizeof(ps));
	sess.pstats = ps;
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	p.prog = &prog;
	arm(&q, mov, 3, 0x400010, 0x500040, 8);
	q.prog = &lprog;
	for (i = 0; i < 10; i++) {
		regs_init(&r, 0x400000);
		r.gpr[KINST_RDX] = i % 2 ? 7 : 9;
		ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
		ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_STI);
	}
	ATF_CHECK_EQ(shits[0].n, 10);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 5);
	ATF_CHECK_EQ(ps[0].st.filtered, 5);
	ATF_CHECK_EQ(ps[0].st.faults, 0);
	for (i = 0; i < 5; i++) {
		ATF_REQUIRE_EQ(kinst_ring_get(&rings[0], &rec, sizeof(rec)),
		    sizeof(rec));
		ATF_CHECK_EQ(rec.regs.gpr[KINST_RDX], 7);
	}
	/* A load from memory the OS cannot read: filtered, and a fault. */
	regs_init(&r, 0x400010);
	r.gpr[KINST_RSI] = 0x10;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500040 + KINST_TRAMP_STI);
	ATF_CHECK_EQ(ps[0].st.filtered, 6);
	ATF_CHECK_EQ(ps[0].st.faults, 1);
	ATF_CHECK_EQ(shits[0].n, kinst_ring_written(&rings[0]) +
	    kinst_ring_dropped(&rings[0]) + ps[0].st.filtered);
	/* A non-zero value loaded from the kernel half (kinst_os_read). */
	memset(fake_mem, 0, sizeof(fake_mem));
	fake_mem[4] = 1;
	regs_init(&r, 0x400010);
	r.gpr[KINST_RSI] = 0xffff800000000000ull;	/* not in the window */
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(ps[0].st.faults, 2);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 5);
	sess.pstats = NULL;
}

/* ---- captures (KINST_OP_MEM / STR / LOADC) ---- */

#define	CI(o, a, im)	((struct kinst_pinsn){ .op = (o), .arg = (a), .imm = (im) })

struct cap_view {
	struct kinst_rec_sec sec;
	struct kinst_rec_cap cap;
	const uint8_t *bytes;
};

/* Take one record off ring 0; split its capture sections into v[]. */
static uint32_t
cap_record(uint8_t *buf, size_t cap, struct cap_view *v, uint32_t max,
    size_t *len)
{
	struct kinst_hit_record rec;
	size_t pos;
	uint32_t n;

	*len = kinst_ring_get(&rings[0], buf, cap);
	ATF_REQUIRE(*len >= sizeof(rec));
	memcpy(&rec, buf, sizeof(rec));
	ATF_REQUIRE_EQ(rec.hdr.size, *len);
	pos = sizeof(rec);
	n = 0;
	while (pos < *len) {
		ATF_REQUIRE(n < max);
		memcpy(&v[n].sec, buf + pos, sizeof(v[n].sec));
		pos += sizeof(v[n].sec);
		if (v[n].sec.type == KINST_SEC_STACK) {
			pos += v[n].sec.len;
			continue;
		}
		ATF_REQUIRE(v[n].sec.len >= sizeof(v[n].cap));
		memcpy(&v[n].cap, buf + pos, sizeof(v[n].cap));
		ATF_REQUIRE_EQ(v[n].sec.len, sizeof(v[n].cap) + v[n].cap.size);
		v[n].bytes = buf + pos + sizeof(v[n].cap);
		pos += (v[n].sec.len + 7) & ~7u;
		ATF_REQUIRE(pos <= *len);
		n++;
	}
	return (n);
}

/*
 * Captures of known bytes and strings in both halves, against the data
 * this test wrote: page by page, so a string that ends just before an
 * unmapped page is whole, and one that runs into it is a fault; a faulting
 * address computation (LOADC) is DEREF, not a fault of the hit; the ring
 * room reserved is the program's declared maximum.
 */
ATF_TC_WITHOUT_HEAD(hit_captures);
ATF_TC_BODY(hit_captures, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	/*
	 * rdx == 7: mem rdi:24, str rsi:256, str *(rbx+8):256 (deref),
	 * mem rcx:16, str r8:4.
	 */
	static const struct kinst_pinsn code[] = {
		CI(KINST_OP_REG, KINST_RDX, 0), CI(KINST_OP_IMM, 0, 7),
		CI(KINST_OP_EQ, 0, 0),
		{ .op = KINST_OP_JZ, .off = 15 },
		CI(KINST_OP_REG, KINST_RDI, 0), CI(KINST_OP_MEM, 0, 24),
		CI(KINST_OP_REG, KINST_RSI, 0), CI(KINST_OP_STR, 0, 256),
		CI(KINST_OP_REG, KINST_RBX, 0), CI(KINST_OP_IMM, 0, 8),
		CI(KINST_OP_ADD, 0, 0), CI(KINST_OP_LOADC, 8, 0),
		CI(KINST_OP_STR, 0, 256),
		CI(KINST_OP_REG, KINST_RCX, 0), CI(KINST_OP_MEM, 0, 16),
		CI(KINST_OP_REG, KINST_R8, 0), CI(KINST_OP_STR, 0, 4),
		CI(KINST_OP_IMM, 0, 1), CI(KINST_OP_RET, 0, 0),
		CI(KINST_OP_IMM, 0, 0), CI(KINST_OP_RET, 0, 0),
	};
	static struct kinst_prog prog;
	static uint64_t capbuf[2 * KINST_CAP_REC_MAX / 8];
	static uint8_t buf[KINST_CAP_REC_MAX];
	struct kinst_prog_cpu ps[2];
	struct kinst_hit_record rec;
	struct cap_view v[8];
	struct kinst_probe p;
	struct kinst_regs r;
	uint8_t *pg;
	size_t len;
	uint32_t bad, n, i;
	long psz = sysconf(_SC_PAGESIZE);

	ATF_REQUIRE_EQ(kinst_prog_verify(code, sizeof(code) / sizeof(code[0]),
	    &prog, &bad), KINST_PV_OK);
	ATF_CHECK_EQ(prog.ncaps, 5);
	ATF_CHECK_EQ(prog.cap_bytes, 5 * 24 + 24 + 256 + 256 + 16 + 8);
	ATF_REQUIRE_EQ(psz, 4096);
	pg = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ATF_REQUIRE(pg != MAP_FAILED);
	ATF_REQUIRE_EQ(mprotect(pg + psz, psz, PROT_NONE), 0);
	for (i = 0; i < sizeof(kwin); i++)
		kwin[i] = (uint8_t)(i * 31 + 5);

	setup_engine(true);
	memset(ps, 0, sizeof(ps));
	sess.pstats = ps;
	sess.capbuf = capbuf;
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	p.prog = &prog;

	/* 1: everything readable; a string ending 1 byte before the hole. */
	memcpy(pg + psz - 6, "abcd", 5);
	memcpy(pg + 64, "ok", 3);
	memcpy(pg + 256, &(uint64_t){ (uint64_t)(uintptr_t)(pg + 64) }, 8);
	regs_init(&r, 0x400000);
	r.gpr[KINST_RDX] = 7;
	r.gpr[KINST_RDI] = KWIN_BASE + 100;		/* kernel half */
	r.gpr[KINST_RSI] = (uintptr_t)(pg + psz - 6);	/* user half */
	r.gpr[KINST_RBX] = (uintptr_t)(pg + 248);	/* *(rbx+8) = pg+64 */
	r.gpr[KINST_RCX] = KWIN_BASE + 4096 - 16;	/* last 16 bytes */
	r.gpr[KINST_R8] = (uintptr_t)(pg + psz - 6);	/* cut at 4 */
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	n = cap_record(buf, sizeof(buf), v, 8, &len);
	ATF_REQUIRE_EQ(n, 5);
	ATF_CHECK(len <= sizeof(rec) + prog.cap_bytes);
	for (i = 0; i < n; i++)
		ATF_CHECK_EQ(v[i].cap.index, i);
	ATF_CHECK_EQ(v[0].sec.type, KINST_SEC_MEM);
	ATF_CHECK_EQ(v[0].sec.flags, 0);
	ATF_CHECK_EQ(v[0].cap.addr, KWIN_BASE + 100);
	ATF_CHECK_EQ(v[0].cap.size, 24);
	ATF_CHECK(memcmp(v[0].bytes, kwin + 100, 24) == 0);
	ATF_CHECK_EQ(v[1].sec.type, KINST_SEC_STR);
	ATF_CHECK_EQ(v[1].sec.flags, 0);
	ATF_CHECK_EQ(v[1].cap.size, 4);
	ATF_CHECK(memcmp(v[1].bytes, "abcd", 4) == 0);
	ATF_CHECK_EQ(v[2].sec.flags, 0);
	ATF_CHECK_EQ(v[2].cap.addr, (uintptr_t)(pg + 64));
	ATF_CHECK_EQ(v[2].cap.size, 2);
	ATF_CHECK(memcmp(v[2].bytes, "ok", 2) == 0);
	ATF_CHECK_EQ(v[3].sec.flags, 0);
	ATF_CHECK_EQ(v[3].cap.size, 16);
	ATF_CHECK(memcmp(v[3].bytes, kwin + 4096 - 16, 16) == 0);
	ATF_CHECK_EQ(v[4].sec.flags, KINST_SECF_TRUNCATED);
	ATF_CHECK_EQ(v[4].cap.size, 4);
	ATF_CHECK(memcmp(v[4].bytes, "abcd", 4) == 0);

	/* 2: into the unmapped pages, and a faulting address. */
	memcpy(pg + psz - 4, "wxyz", 4);		/* no NUL before the hole */
	regs_init(&r, 0x400000);
	r.gpr[KINST_RDX] = 7;
	r.gpr[KINST_RDI] = KWIN_BASE + 4096 - 8;	/* 24 bytes: 16 unmapped */
	r.gpr[KINST_RSI] = (uintptr_t)(pg + psz - 4);
	r.gpr[KINST_RBX] = (uintptr_t)(pg + psz - 8);	/* *(hole) */
	r.gpr[KINST_RCX] = 0;				/* NULL */
	r.gpr[KINST_R8] = 0x10;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	n = cap_record(buf, sizeof(buf), v, 8, &len);
	ATF_REQUIRE_EQ(n, 5);
	ATF_CHECK_EQ(v[0].sec.flags, KINST_SECF_FAULT);
	ATF_CHECK_EQ(v[0].cap.addr, KWIN_BASE + 4096 - 8);
	ATF_CHECK_EQ(v[0].cap.size, 0);
	ATF_CHECK_EQ(v[1].sec.flags, KINST_SECF_FAULT);
	ATF_CHECK_EQ(v[1].cap.size, 0);
	ATF_CHECK_EQ(v[2].sec.flags, KINST_SECF_DEREF);
	ATF_CHECK_EQ(v[2].cap.addr, 0);
	ATF_CHECK_EQ(v[2].cap.size, 0);
	ATF_CHECK_EQ(v[3].sec.flags, KINST_SECF_FAULT);
	ATF_CHECK_EQ(v[3].cap.addr, 0);
	ATF_CHECK_EQ(v[4].sec.flags, KINST_SECF_FAULT);
	/* A faulting capture is not a faulting predicate. */
	ATF_CHECK_EQ(ps[0].st.faults, 0);
	ATF_CHECK_EQ(ps[0].st.filtered, 0);

	/* 3: the predicate false: no capture read at all, counted. */
	regs_init(&r, 0x400000);
	r.gpr[KINST_RDX] = 8;
	kwin_reads = 0;
	user_reads = 0;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(kwin_reads + user_reads, 0);
	ATF_CHECK_EQ(ps[0].st.filtered, 1);
	ATF_CHECK_EQ(kinst_ring_get(&rings[0], buf, sizeof(buf)), 0);

	/*
	 * 4: the ring has room for this hit's actual record but not for the
	 * program's maximum: dropped (the room check reserves the maximum).
	 */
	{
		static uint64_t small[64];

		ATF_REQUIRE_EQ(kinst_ring_init(&rings[0], small,
		    sizeof(small)), 0);
		ATF_REQUIRE(!kinst_ring_room(&rings[0],
		    sizeof(rec) + prog.cap_bytes));
		/* This hit's record: 48 + 4 * 24 bytes of sections. */
		ATF_REQUIRE(kinst_ring_room(&rings[0], sizeof(rec) + 144));
		regs_init(&r, 0x400000);
		r.gpr[KINST_RDX] = 7;
		r.gpr[KINST_RDI] = KWIN_BASE;
		ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
		ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 0);
		ATF_CHECK_EQ(kinst_ring_dropped(&rings[0]), 1);
	}
	ATF_CHECK_EQ(shits[0].n, 4);
	ATF_CHECK_EQ(shits[0].n, 2 + 1 + ps[0].st.filtered);	/* 2 written, 1 dropped */
	sess.pstats = NULL;
	sess.capbuf = NULL;
	munmap(pg, 2 * psz);
}

/* A capture's stack section comes first, then the captures. */
ATF_TC_WITHOUT_HEAD(hit_captures_with_stack);
ATF_TC_BODY(hit_captures_with_stack, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	static const struct kinst_pinsn code[] = {
		CI(KINST_OP_REG, KINST_RDI, 0), CI(KINST_OP_MEM, 0, 9),
		CI(KINST_OP_IMM, 0, 1), CI(KINST_OP_RET, 0, 0),
	};
	static struct kinst_prog prog;
	static uint64_t capbuf[2 * KINST_CAP_REC_MAX / 8];
	static uint8_t buf[KINST_CAP_REC_MAX];
	struct kinst_prog_cpu ps[2];
	struct kinst_rec_sec sec;
	struct cap_view v[2];
	struct kinst_probe p;
	struct kinst_regs r;
	size_t len;
	uint32_t bad;

	ATF_REQUIRE_EQ(kinst_prog_verify(code, 4, &prog, &bad), KINST_PV_OK);
	setup_engine(true);
	memset(ps, 0, sizeof(ps));
	sess.pstats = ps;
	sess.capbuf = capbuf;
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	p.prog = &prog;
	p.flags = KINST_PF_STACK;
	regs_init(&r, 0x400000);
	r.gpr[KINST_RDI] = KWIN_BASE + 8;
	fake_stack_calls = 0;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(cap_record(buf, sizeof(buf), v, 2, &len), 1);
	memcpy(&sec, buf + sizeof(struct kinst_hit_record), sizeof(sec));
	ATF_CHECK_EQ(sec.type, KINST_SEC_STACK);
	ATF_CHECK_EQ(fake_stack_calls, 1);
	ATF_CHECK_EQ(v[0].cap.size, 9);
	ATF_CHECK(memcmp(v[0].bytes, kwin + 8, 9) == 0);
	/* The 7 padding bytes are zero. */
	ATF_CHECK(memcmp(v[0].bytes + 9, "\0\0\0\0\0\0\0", 7) == 0);
	ATF_CHECK(len <= KINST_STACK_REC_MAX + prog.cap_bytes);
	sess.pstats = NULL;
	sess.capbuf = NULL;
}

/*
 * Per-thread state and nesting: a hit nested inside another (an NMI) gets
 * no table, so its program's TS_PUSH does nothing; the same probe pushes
 * when it is hit on its own, and the outer hit's push and lookup work.
 */
ATF_TC_WITHOUT_HEAD(hit_tstate_nested);
ATF_TC_BODY(hit_tstate_nested, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	static const uint8_t mov2[] = { 0x48, 0x89, 0xf0 };
	static const struct kinst_pinsn outer[] = {
		CI(KINST_OP_REG, KINST_RSP, 0), CI(KINST_OP_IMM, 0, 77),
		CI(KINST_OP_TS_PUSH, 1, 1), CI(KINST_OP_REG, KINST_RSP, 0),
		CI(KINST_OP_TS_GET, 0, 1), CI(KINST_OP_VAL, 0, 0),
		CI(KINST_OP_IMM, 0, 1), CI(KINST_OP_RET, 0, 0),
	};
	static const struct kinst_pinsn inner[] = {
		CI(KINST_OP_REG, KINST_RSP, 0), CI(KINST_OP_TS_PUSH, 0, 2),
		CI(KINST_OP_IMM, 0, 1), CI(KINST_OP_RET, 0, 0),
	};
	static struct kinst_prog po, pi;
	static uint64_t capbuf[2 * KINST_CAP_REC_MAX / 8];
	static struct kinst_ts_slot slots[4];
	static struct kinst_ts_cpu tst[2];
	static struct kinst_tstate ts = {
		.nslots = 4, .ncpus = 2, .idle_ns = 1000000, .epoch = 1,
		.slots = slots, .stats = tst,
	};
	struct kinst_prog_cpu ps[2];
	struct kinst_ts_stats st;
	struct kinst_probe p, q;
	struct kinst_regs r;
	uint32_t bad;

	ATF_REQUIRE_EQ(kinst_prog_verify(outer, 8, &po, &bad), KINST_PV_OK);
	ATF_REQUIRE_EQ(kinst_prog_verify(inner, 4, &pi, &bad), KINST_PV_OK);
	ATF_CHECK_EQ(po.flags, KINST_PROGF_PUSH);
	ATF_CHECK_EQ(pi.flags, KINST_PROGF_PUSH);
	setup_engine(true);
	memset(ps, 0, sizeof(ps));
	sess.pstats = ps;
	sess.capbuf = capbuf;
	sess.ts = &ts;
	arm(&p, mov, 3, 0x400000, 0x500000, 1);
	arm(&q, mov2, 3, 0x400100, 0x500040, 2);
	p.prog = &po;
	q.prog = &pi;
	/* The outer program's clock read (TS_PUSH) runs the nested hit. */
	nest_once = 1;
	nest_engine = &eng;
	regs_init(&nest_regs, 0x400100);
	regs_init(&r, 0x400000);
	(void)kinst_engine_hit(&eng, &r);
	ATF_CHECK_EQ(nest_once, 0);
	kinst_ts_read_stats(&ts, &st);
	ATF_CHECK_EQ(st.pushed, 1);		/* the outer hit's only */
	ATF_CHECK_EQ(st.matched, 1);
	/* Both recorded: the nested one ran before the outer one wrote. */
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 2);
	/* On its own, the inner probe pushes. */
	regs_init(&r, 0x400100);
	(void)kinst_engine_hit(&eng, &r);
	kinst_ts_read_stats(&ts, &st);
	ATF_CHECK_EQ(st.pushed, 2);
	sess.ts = NULL;
	sess.pstats = NULL;
	sess.capbuf = NULL;
}

ATF_TC_WITHOUT_HEAD(hit_emulated_and_nested);
ATF_TC_BODY(hit_emulated_and_nested, tc)
{
	static const uint8_t call[] = { 0xe8, 0x10, 0, 0, 0 };
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	struct kinst_probe p, q;
	struct kinst_regs r;
	uint64_t sp = fake_base + 2048;

	setup_engine(true);
	arm(&p, call, 5, 0x400000, 0x500000, 1);
	arm(&q, mov, 3, 0x400100, 0x500040, 2);

	/* A hit nested inside the first one's record (as an NMI would). */
	nest_once = 1;
	nest_engine = &eng;
	regs_init(&nest_regs, 0x400100);
	regs_init(&r, 0x400000);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_EMULATED);
	ATF_CHECK_EQ(nest_result, KINST_HIT_REDIRECT);	/* still executed */
	ATF_CHECK_EQ(r.rip, 0x400015);
	ATF_CHECK_EQ(r.gpr[KINST_RSP], sp - 8);
	ATF_CHECK_EQ(r.rflags, 0x202);		/* emulation keeps IF */
	ATF_CHECK_EQ(mem64(sp - 8), 0x400005);
	/* hits == delivered + dropped: the nested one was dropped. */
	ATF_CHECK_EQ(shits[0].n, 2);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 1);
	ATF_CHECK_EQ(kinst_ring_dropped(&rings[0]), 1);
	ATF_CHECK_EQ(eng.cpu[0].depth, 0);

	/* Another CPU records into its own ring; filters apply. */
	fake_cpu = 1;
	regs_init(&r, 0x400100);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(kinst_ring_written(&rings[1]), 1);
	sess.filter_pid = 5;
	regs_init(&r, 0x400100);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(kinst_ring_written(&rings[1]), 1);
	ATF_CHECK_EQ(shits[1].n, 1);		/* filtered hits are not counted */
	ATF_CHECK_EQ(q.hits, 3);
	sess.filter_pid = 100;			/* the fake OS's pid: recorded */
	regs_init(&r, 0x400100);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(kinst_ring_written(&rings[1]), 2);
	sess.filter_pid = -1;
	sess.exclude_pid = 100;			/* the tracer itself: never */
	regs_init(&r, 0x400100);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(kinst_ring_written(&rings[1]), 2);
	sess.exclude_pid = -1;
	sess.filter_cpu = 0;			/* another CPU's hits only */
	regs_init(&r, 0x400100);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(kinst_ring_written(&rings[1]), 2);
	ATF_CHECK_EQ(shits[1].n, 2);
	sess.filter_cpu = -1;

	/* An emulation fault: regs untouched, reported. */
	sess.filter_pid = -1;
	regs_init(&r, 0x400000);
	r.gpr[KINST_RSP] = 0x10;
	struct kinst_regs before = r;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_ERROR);
	ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
	(void)test_mem;
}

/*
 * The native fallback (kinst_native_build): an indirect call or jump
 * through memory whose operand the no-fault read refuses runs its native
 * image instead of failing: the slot holds [push $next] [sti] [jmp *mem],
 * the hit is redirected there with regs otherwise untouched (the CPU does
 * the push and the read), and it is counted.  Without an image (operand
 * through %rsp, register operand, next beyond the sign-extended imm32)
 * the fault is reported as before.
 */
static uint8_t native_img[KINST_TRAMP_SIZE];

static int
native_prepare(struct kinst_probe *p, const uint8_t *b, size_t n,
    uint64_t addr, uint64_t tramp)
{
	memset(p, 0, sizeof(*p));
	ATF_REQUIRE_EQ(kinst_probe_prepare(p, b, n, addr, tramp, native_img),
	    0);
	p->id = 9;
	p->session = &sess;
	ATF_REQUIRE_EQ(kinst_ptable_insert(&eng.table, p), 0);
	return ((int)p->native);
}

ATF_TC_WITHOUT_HEAD(hit_native_fallback);
ATF_TC_BODY(hit_native_fallback, tc)
{
	/* call *8(%rax); jmp *0x100(%rip); call *8(%rsp); call *%rax */
	static const uint8_t callm[] = { 0xff, 0x50, 0x08 };
	static const uint8_t jmpr[] = { 0xff, 0x25, 0x00, 0x01, 0x00, 0x00 };
	static const uint8_t callsp[] = { 0xff, 0x54, 0x24, 0x08 };
	static const uint8_t callr[] = { 0xff, 0xd0 };
	static const uint8_t want_nosti[] = { 0x68, 0x03, 0x00, 0x40, 0x00,
	    0xff, 0x60, 0x08, 0xcc };
	static const uint8_t want_sti[] = { 0x68, 0x03, 0x00, 0x40, 0x00,
	    0xfb, 0xff, 0x60, 0x08, 0xcc };
	struct kinst_probe p;
	struct kinst_regs r, before;
	int32_t rel;

	setup_engine(true);
	ATF_REQUIRE(native_prepare(&p, callm, 3, 0x400000, 0x500000));
	ATF_CHECK(memcmp(native_img + KINST_TRAMP_NOSTI, want_nosti,
	    sizeof(want_nosti)) == 0);
	ATF_CHECK(memcmp(native_img + KINST_TRAMP_STI, want_sti,
	    sizeof(want_sti)) == 0);
	/* The operand (rax + 8) is outside every readable window. */
	regs_init(&r, 0x400000);
	r.gpr[KINST_RAX] = 0xdead0000;
	before = r;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_STI);	/* IF was set */
	ATF_CHECK_EQ(r.rflags, before.rflags & ~KINST_FL_IF);
	before.rip = r.rip;
	before.rflags = r.rflags;
	ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);	/* rsp too */
	ATF_CHECK_EQ(eng.native_runs, 1);
	/* A readable operand is still emulated, not run natively. */
	regs_init(&r, 0x400000);
	r.gpr[KINST_RAX] = fake_base + 64 - 8;
	memset(fake_mem + 64, 0x42, 8);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_EMULATED);
	ATF_CHECK_EQ(r.rip, 0x4242424242424242ull);
	ATF_CHECK_EQ(eng.native_runs, 1);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&eng.table, &p), 0);

	/* IF clear: the no-sti variant. */
	setup_engine(true);
	ATF_REQUIRE(native_prepare(&p, callm, 3, 0x400000, 0x500000));
	regs_init(&r, 0x400000);
	r.gpr[KINST_RAX] = 0xdead0000;
	r.rflags &= ~KINST_FL_IF;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_NOSTI);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&eng.table, &p), 0);

	/* RIP-relative jmp: no push, the displacement follows the copy. */
	setup_engine(false);
	ATF_REQUIRE(native_prepare(&p, jmpr, 6, 0x400000, 0x500000));
	ATF_CHECK_EQ(native_img[KINST_TRAMP_NOSTI], 0xff);
	ATF_CHECK_EQ(native_img[KINST_TRAMP_NOSTI + 1], 0x25);
	memcpy(&rel, native_img + KINST_TRAMP_NOSTI + 2, 4);
	ATF_CHECK_EQ(0x500000 + 6 + (int64_t)rel, 0x400000 + 6 + 0x100);
	ATF_CHECK_EQ(native_img[KINST_TRAMP_STI], 0xfb);
	memcpy(&rel, native_img + KINST_TRAMP_STI + 3, 4);
	ATF_CHECK_EQ(0x500000 + KINST_TRAMP_STI + 7 + (int64_t)rel,
	    0x400000 + 6 + 0x100);
	regs_init(&r, 0x400000);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_NOSTI);	/* manage_if off */
	ATF_REQUIRE_EQ(kinst_ptable_remove(&eng.table, &p), 0);

	/* No image: through %rsp, a register operand, next past 2 GiB. */
	setup_engine(true);
	ATF_CHECK(!native_prepare(&p, callsp, 4, 0x400000, 0x500000));
	regs_init(&r, 0x400000);
	r.gpr[KINST_RSP] = 0xdead0000;
	before = r;
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_ERROR);
	ATF_CHECK(memcmp(&r, &before, sizeof(r)) == 0);
	ATF_CHECK_EQ(eng.native_runs, 0);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&eng.table, &p), 0);
	ATF_CHECK(!native_prepare(&p, callr, 2, 0x400000, 0x500000));
	ATF_REQUIRE_EQ(kinst_ptable_remove(&eng.table, &p), 0);
	ATF_CHECK(!native_prepare(&p, callm, 3, 0x100000000ull,
	    0x100100000ull));
	ATF_REQUIRE_EQ(kinst_ptable_remove(&eng.table, &p), 0);
	/* Kernel text, where next sign-extends: an image. */
	ATF_CHECK(native_prepare(&p, callm, 3, 0xffffffff81000000ull,
	    0xffffffff81100000ull));
	ATF_CHECK_EQ(native_img[1], 0x03);
	ATF_CHECK_EQ(native_img[4], 0x81);
	ATF_REQUIRE_EQ(kinst_ptable_remove(&eng.table, &p), 0);
}

/*
 * The nesting guard: a probe on something the handler calls re-enters the
 * engine from inside every hit; beyond KINST_NEST_MAX levels the hit runs
 * quietly (no record, no call out), the probe is marked tripped and
 * counted, and the recursion ends.
 */
ATF_TC_WITHOUT_HEAD(hit_nesting_guard);
ATF_TC_BODY(hit_nesting_guard, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	struct kinst_probe p;
	struct kinst_regs r;

	setup_engine(true);
	arm(&p, mov, 3, 0x400000, 0x500000, 1);
	nest_engine = &eng;
	recurse_calls = 0;
	recurse_addr = 0x400000;
	regs_init(&r, 0x400000);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	recurse_addr = 0;
	/* Levels 1..NEST_MAX record (and re-enter); level NEST_MAX+1 does not. */
	ATF_CHECK_EQ(recurse_calls, KINST_NEST_MAX);
	ATF_CHECK_EQ(p.hits, KINST_NEST_MAX + 1);
	ATF_CHECK_EQ(p.tripped, 1);
	ATF_CHECK_EQ(eng.tripped, 1);
	ATF_CHECK_EQ(eng.cpu[0].hdepth, 0);
	/* hits == delivered + dropped still: the quiet hit is not a session hit. */
	ATF_CHECK_EQ(shits[0].n, KINST_NEST_MAX);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]) +
	    kinst_ring_dropped(&rings[0]), KINST_NEST_MAX);
	ATF_CHECK_EQ(r.rip, 0x500000 + KINST_TRAMP_STI);
}

/* kinst_func_exits: the direct branches that leave a function, in order. */
static uint64_t ex_from[8], ex_to[8];
static int ex_kind[8], ex_n;

static int
ex_collect(void *arg, uint64_t from, uint64_t to, int kind)
{
	(void)arg;
	if (ex_n < 8) {
		ex_from[ex_n] = from;
		ex_to[ex_n] = to;
		ex_kind[ex_n] = kind;
	}
	ex_n++;
	return (0);
}

ATF_TC_WITHOUT_HEAD(callgraph_exits);
ATF_TC_BODY(callgraph_exits, tc)
{
	static const uint8_t f[] = {
		0xe8, 0xfb, 0x0f, 0x00, 0x00,		/* +0  call +0x1000 */
		0xe8, 0x00, 0x00, 0x00, 0x00,		/* +5  call +10: inside */
		0x74, 0x02,				/* +10 je +14: inside */
		0x0f, 0x85, 0xde, 0xff, 0xff, 0xff,	/* +12 jne 0xff0: before the function */
		0xff, 0xd0,				/* +18 call *%rax: not an edge */
		0x66, 0xe9, 0x00, 0x00,			/* +20 jmpw: vendor-dependent, not an edge */
		0xe9, 0xe3, 0x1f, 0x00, 0x00,		/* +24 jmp 0x3000: a tail call */
		0xeb, 0x10,				/* +29 jmp +0x2f: outside (size 31) */
	};
	size_t n;

	ex_n = 0;
	n = kinst_func_exits(f, sizeof(f), 0x1000, ex_collect, NULL);
	ATF_CHECK_EQ(n, sizeof(f));
	ATF_REQUIRE_EQ(ex_n, 4);
	ATF_CHECK_EQ(ex_from[0], 0x1000);
	ATF_CHECK_EQ(ex_to[0], 0x2000);
	ATF_CHECK_EQ(ex_kind[0], KINST_EXIT_CALL);
	ATF_CHECK_EQ(ex_from[1], 0x100c);
	ATF_CHECK_EQ(ex_to[1], 0xff0);
	ATF_CHECK_EQ(ex_kind[1], KINST_EXIT_JCC);
	ATF_CHECK_EQ(ex_from[2], 0x1018);
	ATF_CHECK_EQ(ex_to[2], 0x3000);
	ATF_CHECK_EQ(ex_kind[2], KINST_EXIT_JMP);
	ATF_CHECK_EQ(ex_to[3], 0x1000 + 31 + 0x10);
	ATF_CHECK_EQ(ex_kind[3], KINST_EXIT_JMP);

	/* An undecodable byte stops the walk; exits before it are reported. */
	static const uint8_t g[] = { 0xe8, 0x00, 0x01, 0x00, 0x00, 0x06, 0xc3 };
	ex_n = 0;
	n = kinst_func_exits(g, sizeof(g), 0x1000, ex_collect, NULL);
	ATF_CHECK_EQ(n, 5);
	ATF_CHECK_EQ(ex_n, 1);
}

ATF_TC_WITHOUT_HEAD(hit_ring_full);
ATF_TC_BODY(hit_ring_full, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	static uint8_t small[512] __attribute__((aligned(8)));
	struct kinst_probe p;
	struct kinst_regs r;
	struct kinst_hit_record rec;
	int i;

	setup_engine(true);
	ATF_REQUIRE_EQ(kinst_ring_init(&rings[0], small, sizeof(small)), 0);
	arm(&p, mov, 3, 0x400000, 0x500000, 1);
	for (i = 0; i < 5; i++) {
		regs_init(&r, 0x400000);
		r._pad = 0xdeadbeef;
		ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	}
	/* 512 bytes hold two records: the rest are dropped, and counted. */
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 2);
	ATF_CHECK_EQ(kinst_ring_dropped(&rings[0]), 3);
	ATF_CHECK_EQ(shits[0].n, 5);
	ATF_REQUIRE_EQ(kinst_ring_get(&rings[0], &rec, sizeof(rec)), sizeof(rec));
	ATF_CHECK_EQ(rec.regs._pad, 0);		/* nothing of the caller leaks */
	/* Room again: the next hit is delivered. */
	regs_init(&r, 0x400000);
	ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), 3);
}

/* Fills the stack below the caller with b: where a hit's locals go next. */
static __attribute__((noinline)) void
scribble_stack(uint8_t b)
{
	volatile uint8_t junk[16384];
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = b;
}

/*
 * A record carries no byte of the stack it was built on: record()'s
 * locals are left out of the compiler's zeroing (KINST_NOINIT), so every
 * byte must be written.  Two hits that differ only in what the stack held
 * before them give the same bytes.
 */
ATF_TC_WITHOUT_HEAD(hit_record_every_byte);
ATF_TC_BODY(hit_record_every_byte, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	static const uint8_t fill[2] = { 0xa5, 0x5a };
	struct kinst_hit_record rec[2];
	struct kinst_probe p;
	struct kinst_regs r;
	const uint8_t *a, *b;
	size_t k;
	int i;

	setup_engine(true);
	arm(&p, mov, 3, 0x400000, 0x500000, 1);
	for (i = 0; i < 2; i++) {
		regs_init(&r, 0x400000);
		scribble_stack(fill[i]);
		ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
		ATF_REQUIRE_EQ(kinst_ring_get(&rings[0], &rec[i],
		    sizeof(rec[i])), sizeof(rec[i]));
	}
	a = (const uint8_t *)&rec[0];
	b = (const uint8_t *)&rec[1];
	for (k = 0; k < sizeof(rec[0]) && a[k] == b[k]; k++)
		;
	ATF_CHECK_MSG(k == sizeof(rec[0]),
	    "byte %zu of the record differs (%#x, %#x): the stack's", k,
	    k < sizeof(rec[0]) ? a[k] : 0, k < sizeof(rec[0]) ? b[k] : 0);
	ATF_CHECK_STREQ(rec[0].comm, "unit");
	ATF_CHECK_EQ(rec[0].comm[KINST_COMM_LEN - 1], 0);
}

/*
 * What a CPU writes at every hit lies on cache lines of its own
 * (kinst_types.h): each per-CPU element starts a line and fills whole
 * lines, so no two CPUs' elements share one (false sharing).  The objects
 * here are the ones the engine indexes by CPU.
 */
#define	LINES_OWN(a)	do {						\
	ATF_CHECK_EQ_MSG((uintptr_t)&(a)[0] % KINST_CACHE_LINE, 0,	\
	    "%s[0] at %p: not on a line of its own", #a, (void *)&(a)[0]); \
	ATF_CHECK_EQ_MSG(((uintptr_t)&(a)[1] - (uintptr_t)&(a)[0]) %	\
	    KINST_CACHE_LINE, 0, "%s: %zu bytes per CPU", #a,		\
	    (size_t)((uintptr_t)&(a)[1] - (uintptr_t)&(a)[0]));	\
} while (0)

ATF_TC_WITHOUT_HEAD(percpu_lines);
ATF_TC_BODY(percpu_lines, tc)
{
	static struct kinst_engine e;
	static struct kinst_pcpu_count hits[2];
	static struct kinst_ring rings[2];
	static struct kinst_agg_cpu ast[2];
	static struct kinst_ts_cpu tst[2];
	static struct kinst_prog_cpu pst[2];

	ATF_REQUIRE_EQ(KINST_CACHE_LINE, 64);
	LINES_OWN(e.cpu);
	LINES_OWN(hits);
	LINES_OWN(rings);
	LINES_OWN(ast);
	LINES_OWN(tst);
	LINES_OWN(pst);
}

/*
 * kinst_kaddr_ok(): which ranges the Linux shim's no-fault load may touch.
 * Figures as Linux 6.1 x86-64 uses them: lo = TASK_SIZE_MAX + PAGE_SIZE,
 * the vsyscall page excluded, 48- and 57-bit virtual addresses.
 */
ATF_TC_WITHOUT_HEAD(kaddr_ok);
ATF_TC_BODY(kaddr_ok, tc)
{
	static const struct {
		uint64_t	addr, len;
		unsigned int	bits;
		int		ok;
	} t[] = {
		{ 0xffffffff81000000ull, 8, 48, 1 },	/* kernel text */
		{ 0xffff888000000000ull, 1, 48, 1 },	/* direct map */
		{ 0xffff800000000000ull, 8, 48, 1 },	/* lowest canonical, 48 */
		{ 0xffff7ffffffffff8ull, 8, 48, 0 },	/* non-canonical, 48 */
		{ 0xff00000000000000ull, 8, 57, 1 },	/* lowest canonical, 57 */
		{ 0xff00000000000000ull, 8, 48, 0 },	/* ... not with 48 bits */
		{ 0xfeffffffffffffffull, 1, 57, 0 },
		{ 0x8000000000000000ull, 8, 48, 0 },
		{ 0x0000000000001000ull, 8, 48, 0 },	/* user */
		{ 0x00007ffffffff000ull, 8, 48, 0 },	/* user guard page */
		{ 0xffffffffff600000ull, 8, 48, 0 },	/* vsyscall */
		{ 0xffffffffff600ff8ull, 8, 48, 0 },
		{ 0xffffffffff5ffffcull, 8, 48, 0 },	/* ends in vsyscall */
		{ 0xffffffffff5ffff9ull, 8, 48, 0 },	/* its first byte */
		{ 0xffffffffff5ff000ull, 4096, 48, 1 },	/* ends right before */
		{ 0xffffffffff601000ull, 8, 48, 1 },	/* right after */
		{ 0xfffffffffffffff8ull, 8, 48, 1 },	/* the last 8 bytes */
		{ 0xfffffffffffffffcull, 8, 48, 0 },	/* wraps */
		{ 0xffffffff81000000ull, 0, 48, 1 },	/* touches nothing */
		{ 0xffffffff81000000ull, 8, 0, 0 },	/* no width: refuse */
		{ 0xffffffff81000000ull, 8, 64, 0 },
	};
	const uint64_t lo = 0x00007ffffffff000ull + 4096;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ATF_CHECK_MSG(kinst_kaddr_ok(t[i].addr, t[i].len, lo, t[i].bits,
		    0xffffffffff600000ull, 4096) == t[i].ok,
		    "%#llx+%llu (%u bits): expected %d",
		    (unsigned long long)t[i].addr, (unsigned long long)t[i].len,
		    t[i].bits, t[i].ok);
}

/* ---- stacks (KINST_ARM_STACK): the record section ---- */

/* A record with its sections, as read(2) returns it. */
struct stack_rec {
	struct kinst_hit_record rec;
	struct kinst_rec_sec sec;
	uint64_t pcs[KINST_STACK_MAX];
};

static void
stack_hit(struct kinst_probe *p, uint32_t frames, struct stack_rec *out,
    size_t *len)
{
	struct kinst_regs r;

	fake_frames = frames;
	regs_init(&r, p->addr);
	ATF_REQUIRE_EQ(kinst_engine_hit_ctx(&eng, &r, (void *)0x1234),
	    KINST_HIT_REDIRECT);
	memset(out, 0xa5, sizeof(*out));
	*len = kinst_ring_get(&rings[0], out, sizeof(*out));
}

ATF_TC_WITHOUT_HEAD(hit_stack_section);
ATF_TC_BODY(hit_stack_section, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	struct kinst_probe p;
	struct stack_rec sr;
	size_t len;
	uint32_t i;

	setup_engine(true);
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	p.flags = KINST_PF_STACK;
	p.offset = 0x2c;
	fake_stack_calls = 0;
	stack_hit(&p, 3, &sr, &len);
	/* Fixed record, one section header, rip and its 3 callers. */
	ATF_CHECK_EQ(len, sizeof(sr.rec) + sizeof(sr.sec) + 4 * 8);
	ATF_CHECK_EQ(sr.rec.hdr.size, len);
	ATF_CHECK_EQ(sr.rec.hdr.type, KINST_REC_HIT);
	ATF_CHECK_EQ(sr.rec.addr, 0x400000);
	ATF_CHECK_EQ(sr.sec.type, KINST_SEC_STACK);
	ATF_CHECK_EQ(sr.sec.flags, 0);
	ATF_CHECK_EQ(sr.sec.len, 4 * 8);
	ATF_CHECK_EQ(sr.pcs[0], 0x400000);	/* the probed instruction first */
	for (i = 1; i < 4; i++)
		ATF_CHECK_EQ(sr.pcs[i], 0xc0de0000ull + 0x10ull * (i - 1));
	ATF_CHECK_EQ(fake_stack_calls, 1);
	ATF_CHECK_EQ((uintptr_t)fake_osctx_seen, 0x1234);
	ATF_CHECK_EQ(fake_offset_seen, 0x2c);

	/* No callers at all: still the probed instruction. */
	stack_hit(&p, 0, &sr, &len);
	ATF_CHECK_EQ(len, sizeof(sr.rec) + sizeof(sr.sec) + 8);
	ATF_CHECK_EQ(sr.sec.len, 8);
	ATF_CHECK_EQ(sr.pcs[0], 0x400000);

	/* kinst_engine_hit() has no trap context to give: NULL. */
	{
		struct kinst_regs r;

		regs_init(&r, 0x400000);
		fake_osctx_seen = (void *)1;
		ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
		ATF_CHECK(fake_osctx_seen == NULL);
	}
}

ATF_TC_WITHOUT_HEAD(hit_stack_truncated);
ATF_TC_BODY(hit_stack_truncated, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	struct kinst_probe p;
	struct stack_rec sr;
	size_t len;

	setup_engine(true);
	arm(&p, mov, 3, 0x400000, 0x500000, 7);
	p.flags = KINST_PF_STACK;

	/* Exactly KINST_STACK_MAX frames (rip + 63 callers): complete. */
	stack_hit(&p, KINST_STACK_MAX - 1, &sr, &len);
	ATF_CHECK_EQ(len, sizeof(sr));
	ATF_CHECK_EQ(sr.sec.len, KINST_STACK_MAX * 8);
	ATF_CHECK_EQ(sr.sec.flags, 0);
	ATF_CHECK_EQ(sr.pcs[KINST_STACK_MAX - 1],
	    0xc0de0000ull + 0x10ull * (KINST_STACK_MAX - 2));

	/* One more: the same 64 frames, flagged truncated. */
	stack_hit(&p, KINST_STACK_MAX, &sr, &len);
	ATF_CHECK_EQ(len, sizeof(sr));
	ATF_CHECK_EQ(sr.sec.len, KINST_STACK_MAX * 8);
	ATF_CHECK_EQ(sr.sec.flags, KINST_SECF_TRUNCATED);

	/* Far more: still 64. */
	stack_hit(&p, 1000, &sr, &len);
	ATF_CHECK_EQ(len, sizeof(sr));
	ATF_CHECK_EQ(sr.sec.len, KINST_STACK_MAX * 8);
	ATF_CHECK_EQ(sr.sec.flags, KINST_SECF_TRUNCATED);
	ATF_CHECK_EQ(sr.pcs[0], 0x400000);
}

ATF_TC_WITHOUT_HEAD(hit_stack_only_flagged);
ATF_TC_BODY(hit_stack_only_flagged, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	struct kinst_probe p;
	struct stack_rec sr;
	size_t len;

	setup_engine(true);
	arm(&p, mov, 3, 0x400000, 0x500000, 7);	/* no KINST_PF_STACK */
	fake_stack_calls = 0;
	stack_hit(&p, 5, &sr, &len);
	ATF_CHECK_EQ(len, sizeof(struct kinst_hit_record));
	ATF_CHECK_EQ(sr.rec.hdr.size, sizeof(struct kinst_hit_record));
	ATF_CHECK_EQ(fake_stack_calls, 0);
}

/*
 * Ring accounting with stacks: a stack probe reserves room for the largest
 * section (KINST_STACK_REC_MAX) but writes only what it found; a bare probe
 * on the same ring still needs only its fixed record.  Every hit is
 * delivered or counted dropped.
 */
ATF_TC_WITHOUT_HEAD(hit_stack_ring_accounting);
ATF_TC_BODY(hit_stack_ring_accounting, tc)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	static uint8_t small[2048] __attribute__((aligned(8)));
	struct kinst_probe p, q;
	struct kinst_regs r;
	const uint32_t rec = sizeof(struct kinst_hit_record);
	const uint32_t srec = rec + 8 + 4 * 8;	/* rip + 3 callers */
	uint32_t want, used, i;

	setup_engine(true);
	ATF_REQUIRE_EQ(kinst_ring_init(&rings[0], small, sizeof(small)), 0);
	arm(&p, mov, 3, 0x400000, 0x500000, 1);
	arm(&q, mov, 3, 0x400010, 0x500040, 2);
	p.flags = KINST_PF_STACK;
	fake_frames = 3;
	for (i = 0; i < 10; i++) {
		regs_init(&r, 0x400000);
		ATF_CHECK_EQ(kinst_engine_hit_ctx(&eng, &r, NULL),
		    KINST_HIT_REDIRECT);
	}
	/* Written while the free space was >= KINST_STACK_REC_MAX. */
	want = 0;
	for (used = 0; sizeof(small) - used >= KINST_STACK_REC_MAX;
	    used += srec)
		want++;
	printf("stack records that fit a 2048-byte ring: %u\n", want);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]), want);
	ATF_CHECK_EQ(kinst_ring_dropped(&rings[0]), 10 - want);
	/* The bare probe fills the rest with fixed records. */
	for (i = 0; i < 10; i++) {
		regs_init(&r, 0x400010);
		ATF_CHECK_EQ(kinst_engine_hit(&eng, &r), KINST_HIT_REDIRECT);
	}
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]),
	    want + (sizeof(small) - used) / rec);
	ATF_CHECK_EQ(shits[0].n, 20);
	ATF_CHECK_EQ(kinst_ring_written(&rings[0]) +
	    kinst_ring_dropped(&rings[0]), shits[0].n);
}

/* ---- the frame-pointer walk (FreeBSD's stacks) on a synthetic stack ---- */

#define	FS_BASE	0xffff800000100000ull	/* "kernel stack" [FS_BASE, +FS_SIZE) */
#define	FS_SIZE	4096
#define	FS_PC(i)	(0xffffffff80200000ull + 0x100ull * (i))
static uint64_t fs_mem[FS_SIZE / 8];
static uint64_t fs_hole;		/* an unreadable word (0: none) */
static int fs_reads;

static int
fs_read(void *ctx, uint64_t a, void *b, size_t l)
{
	(void)ctx;
	fs_reads++;
	if (a < FS_BASE || a + l > FS_BASE + FS_SIZE || a + l < a)
		return (-1);
	if (fs_hole != 0 && fs_hole + 8 > a && fs_hole < a + l)
		return (-1);
	memcpy(b, (uint8_t *)fs_mem + (a - FS_BASE), l);
	return (0);
}

static const struct kinst_mem_ops fs_ops = { fs_read, NULL, NULL };

/* Frame i at FS_BASE + 0x80 * (i + 1): [fp] = next fp, [fp + 8] = FS_PC(i). */
static uint64_t
fs_chain(int n)
{
	uint64_t fp;
	int i;

	memset(fs_mem, 0, sizeof(fs_mem));
	fs_hole = 0;
	for (i = 0; i < n; i++) {
		fp = FS_BASE + 0x80ull * (i + 1);
		fs_mem[(fp - FS_BASE) / 8] = i + 1 < n ? fp + 0x80 : 0;
		fs_mem[(fp - FS_BASE) / 8 + 1] = FS_PC(i);
	}
	return (FS_BASE + 0x80);
}

static uint32_t
fs_walk(uint64_t fp, bool at_entry, uint64_t *pcs, uint32_t max, bool *trunc)
{
	struct kinst_fpwalk w;

	w.fp = fp;
	w.sp = FS_BASE + 0x40;
	w.lo = FS_BASE;
	w.hi = FS_BASE + FS_SIZE;
	w.pc_min = 0xffffffff80000000ull;
	w.at_entry = at_entry;
	fs_reads = 0;
	return (kinst_fpwalk(&w, &fs_ops, pcs, max, trunc));
}

ATF_TC_WITHOUT_HEAD(fpwalk_chain);
ATF_TC_BODY(fpwalk_chain, tc)
{
	uint64_t pcs[64], fp;
	uint32_t n, i;
	bool trunc;

	fp = fs_chain(5);
	n = fs_walk(fp, false, pcs, 64, &trunc);
	ATF_CHECK_EQ(n, 5);
	ATF_CHECK(!trunc);
	for (i = 0; i < n; i++)
		ATF_CHECK_EQ(pcs[i], FS_PC(i));

	/* At function entry: the return address at [sp] first. */
	fs_mem[0x40 / 8] = FS_PC(99);
	n = fs_walk(fp, true, pcs, 64, &trunc);
	ATF_CHECK_EQ(n, 6);
	ATF_CHECK_EQ(pcs[0], FS_PC(99));
	ATF_CHECK_EQ(pcs[1], FS_PC(0));
	ATF_CHECK_EQ(pcs[5], FS_PC(4));

	/* Exactly max frames: complete; one fewer room: truncated. */
	n = fs_walk(fp, false, pcs, 5, &trunc);
	ATF_CHECK_EQ(n, 5);
	ATF_CHECK(!trunc);
	n = fs_walk(fp, false, pcs, 4, &trunc);
	ATF_CHECK_EQ(n, 4);
	ATF_CHECK(trunc);
	ATF_CHECK_EQ(pcs[3], FS_PC(3));
	n = fs_walk(fp, true, pcs, 0, &trunc);
	ATF_CHECK_EQ(n, 0);
	ATF_CHECK(trunc);
}

ATF_TC_WITHOUT_HEAD(fpwalk_deep_bounded);
ATF_TC_BODY(fpwalk_deep_bounded, tc)
{
	uint64_t pcs[64], fp;
	uint32_t n;
	bool trunc;

	fp = fs_chain(31);	/* 31 frames of 0x80 fill the 4 KiB stack */
	n = fs_walk(fp, false, pcs, 10, &trunc);
	ATF_CHECK_EQ(n, 10);
	ATF_CHECK(trunc);
	ATF_CHECK(fs_reads <= 10 + 2);
	n = fs_walk(fp, false, pcs, 64, &trunc);
	ATF_CHECK_EQ(n, 31);
	ATF_CHECK(!trunc);
}

ATF_TC_WITHOUT_HEAD(fpwalk_hostile);
ATF_TC_BODY(fpwalk_hostile, tc)
{
	uint64_t pcs[64], fp;
	uint32_t n;
	bool trunc;

	/* A loop (frame 2 points back at frame 0): ends at the turn. */
	fp = fs_chain(5);
	fs_mem[(FS_BASE + 0x180 - FS_BASE) / 8] = fp;
	n = fs_walk(fp, false, pcs, 64, &trunc);
	ATF_CHECK_EQ(n, 3);
	ATF_CHECK(!trunc);

	/* A frame pointing at itself. */
	fp = fs_chain(5);
	fs_mem[(fp - FS_BASE) / 8] = fp;
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 1);

	/* A frame overlapping the one below it (fp + 8): not above it. */
	fp = fs_chain(5);
	fs_mem[(fp - FS_BASE) / 8] = fp + 8;
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 1);

	/* Misaligned next frame pointer. */
	fp = fs_chain(5);
	fs_mem[(FS_BASE + 0x100 - FS_BASE) / 8] = FS_BASE + 0x183;
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 2);

	/* Out of the stack: above it, below it, straddling its top. */
	fp = fs_chain(5);
	fs_mem[(fp - FS_BASE) / 8] = FS_BASE + FS_SIZE;
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 1);
	fs_mem[(fp - FS_BASE) / 8] = FS_BASE + FS_SIZE - 8;
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 1);
	fs_mem[(fp - FS_BASE) / 8] = 0xffffffffffffff00ull;	/* would wrap */
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 1);
	ATF_CHECK_EQ(fs_walk(FS_BASE - 0x1000, false, pcs, 64, &trunc), 0);
	ATF_CHECK_EQ(fs_walk(0, false, pcs, 64, &trunc), 0);
	/* Below the interrupted %rsp: not a live frame. */
	ATF_CHECK_EQ(fs_walk(FS_BASE + 0x20, false, pcs, 64, &trunc), 0);

	/* A return address that is not kernel text ends the walk. */
	fp = fs_chain(5);
	fs_mem[(FS_BASE + 0x180 - FS_BASE) / 8 + 1] = 0x401000;
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 2);

	/* An unreadable frame ends it (the reads are fault-safe). */
	fp = fs_chain(5);
	fs_hole = FS_BASE + 0x200;
	ATF_CHECK_EQ(fs_walk(fp, false, pcs, 64, &trunc), 3);

	/* at_entry with an unreadable or misaligned %rsp: no leaf, walk on. */
	fp = fs_chain(2);
	fs_hole = FS_BASE + 0x40;
	n = fs_walk(fp, true, pcs, 64, &trunc);
	ATF_CHECK_EQ(n, 2);
	ATF_CHECK_EQ(pcs[0], FS_PC(0));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, hit_stack_section);
	ATF_TP_ADD_TC(tp, hit_stack_truncated);
	ATF_TP_ADD_TC(tp, hit_stack_only_flagged);
	ATF_TP_ADD_TC(tp, hit_stack_ring_accounting);
	ATF_TP_ADD_TC(tp, fpwalk_chain);
	ATF_TP_ADD_TC(tp, fpwalk_deep_bounded);
	ATF_TP_ADD_TC(tp, fpwalk_hostile);
	ATF_TP_ADD_TC(tp, hit_ring_full);
	ATF_TP_ADD_TC(tp, hit_record_every_byte);
	ATF_TP_ADD_TC(tp, classify_table);
	ATF_TP_ADD_TC(tp, classify_undecodable);
	ATF_TP_ADD_TC(tp, sti_shadow);
	ATF_TP_ADD_TC(tp, func_boundary);
	ATF_TP_ADD_TC(tp, tramp_riprel);
	ATF_TP_ADD_TC(tp, tramp_cli);
	ATF_TP_ADD_TC(tp, emulate_jcc_all);
	ATF_TP_ADD_TC(tp, emulate_calls);
	ATF_TP_ADD_TC(tp, emulate_loops);
	ATF_TP_ADD_TC(tp, emulate_ret_flags);
	ATF_TP_ADD_TC(tp, emulate_fault_leaves_regs);
	ATF_TP_ADD_TC(tp, hit_predicate);
	ATF_TP_ADD_TC(tp, hit_captures);
	ATF_TP_ADD_TC(tp, hit_captures_with_stack);
	ATF_TP_ADD_TC(tp, hit_redirect_and_if);
	ATF_TP_ADD_TC(tp, wake_at_watermark);
	ATF_TP_ADD_TC(tp, hit_native_fallback);
	ATF_TP_ADD_TC(tp, hit_emulated_and_nested);
	ATF_TP_ADD_TC(tp, hit_tstate_nested);
	ATF_TP_ADD_TC(tp, hit_nesting_guard);
	ATF_TP_ADD_TC(tp, callgraph_exits);
	ATF_TP_ADD_TC(tp, kaddr_ok);
	ATF_TP_ADD_TC(tp, percpu_lines);
	return (atf_no_error());
}
