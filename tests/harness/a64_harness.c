/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The A64 engine on real breakpoints: an arm64 program (cross-built,
 * static) run under qemu-aarch64 by a64_harness_test, which delivers brk
 * as SIGTRAP with the whole register file.  For every corpus function
 * (symbols kh64_*: a64_corpus.S, a64_corpus.c at -O0 and -O2) and input,
 * it compares a ground truth with the engine:
 *
 *   ground truth	every armed boundary holds a brk; at each trap the
 *			registers are recorded, the original word is put back
 *			and the one put back before is armed again, and the
 *			instruction runs natively at its own address (a
 *			debugger's way to step without a single-step bit);
 *   the engine		every armed boundary holds kinst's brk; at each trap
 *			the registers are recorded and the engine does the
 *			instruction: kinst_a64_emulate() for the emulated
 *			kinds, else its trampoline (kinst_a64_tramp_build(),
 *			_enter(), and _resume() at the brk that ends it),
 *			near the text (variant 0 branches back) and far from
 *			it (variant 0 ends in a brk), with the interrupt
 *			masks managed as in a kernel (variant 3: the masks
 *			cannot be set in user mode, so the handler stands in
 *			for the CPU holding them) and not.
 *
 * Every hit record (x0-x30, sp, pc, NZCV), the registers and flags at
 * return, the scratch area and the whole fixed stack must be the same.
 * Armed: every instruction the classifier does not refuse and the
 * emulator can do (not mrs daif, which EL0 cannot run, nor SIMD literal
 * loads).  The PAC branches authenticate with this process's keys
 * (qemu-aarch64's CPU has FEAT_PAuth), through pacia/pacib1716 and
 * xpaclri.  Exclusive loops are refused and must still end (after
 * 60 s an alarm ends a livelock: qemu-aarch64 clears the exclusive
 * monitor on a signal, as a kernel's exception return does).  Exits 1 on any difference, after its totals.
 */
#define	_GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "arm64/kinst_a64.h"
#include "arm64/kinst_a64_tramp.h"

uint64_t kh64_scratch[512];
extern char _end[];			/* the linker's: the end of the bss */
void	kh64_invoke(uint64_t fn, const uint64_t in[32], uint64_t out[33],
	    uint64_t stack_top);

#define	GT_IMM		0x4bf		/* the ground truth's brk */
#define	MAXFN		64
#define	MAXWORDS	1024
#define	MAXREC		65536
#define	STACK_SIZE	65536

struct fn {
	char			name[64];
	uint64_t		start;
	size_t			n;
	uint32_t		orig[MAXWORDS];
	struct kinst_a64_insn	d[MAXWORDS];
	bool			armed[MAXWORDS];
};

struct rec {
	uint64_t	x[31], sp, pc, nzcv;
};

struct run {
	struct rec	rec[MAXREC];
	size_t		nrec;
	bool		overflow;
	uint64_t	out[33];
	uint64_t	scratch[512];
	uint8_t		stack[STACK_SIZE];
};

enum mode { M_NATIVE, M_GT, M_ENGINE };

static struct fn fns[MAXFN];
static size_t nfn;
static struct run runs[2];			/* 0: ground truth, 1: this run */
static uint8_t stack[STACK_SIZE] __attribute__((aligned(16)));
static uint8_t *tramp_near, *tramp_far;

/* The run in progress (the signal handler's). */
static struct {
	enum mode	mode;
	struct fn	*f;
	struct run	*r;
	uint8_t		*tramps;
	bool		mask;
	long		prev;			/* GT: the word put back */
} cur;

static struct {
	long	runs, hits, records, errors, mismatches;
	long	emul[KINST_A64_EM_COUNT], ool, resume[KINST_A64_TRAMP_VARIANTS];
	long	branch_back, boundaries, armed, refused[KINST_R_COUNT];
} tot;

static void
fail(const char *what, uint64_t pc)
{
	/* Async-signal-safe enough for a test that is ending. */
	char b[256];
	int n = snprintf(b, sizeof(b), "a64 harness: ERROR %s (%s, pc %#lx)\n",
	    what, cur.f != NULL ? cur.f->name : "?", (unsigned long)pc);

	(void)!write(2, b, (size_t)n);
	_exit(3);
}

static void
on_alarm(int sig)
{
	(void)sig;
	fail("no end within 60 s: a livelock (an exclusive loop armed?)",
	    cur.f != NULL ? cur.f->start : 0);
}

static void
put_word(uint64_t addr, uint32_t w)
{
	*(volatile uint32_t *)addr = w;
	__builtin___clear_cache((char *)addr, (char *)addr + 4);
}

static int
mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memcpy(buf, (const void *)addr, len);
	return 0;
}

static const struct kinst_mem_ops memops = { mem_read, NULL, NULL };

/* pacia1716 / pacib1716 (hint space): x17 signed with modifier x16. */
static uint64_t
pac_sign(void *ctx, unsigned key, uint64_t ptr, uint64_t mod)
{
	register uint64_t x17 __asm__("x17") = ptr;
	register uint64_t x16 __asm__("x16") = mod;

	(void)ctx;
	if (key == 0)
		__asm__ __volatile__("hint #8" : "+r"(x17) : "r"(x16));
	else
		__asm__ __volatile__("hint #10" : "+r"(x17) : "r"(x16));
	return x17;
}

/* xpaclri (hint space): x30 stripped. */
static uint64_t
pac_strip(void *ctx, uint64_t ptr)
{
	register uint64_t x30 __asm__("x30") = ptr;

	(void)ctx;
	__asm__ __volatile__("hint #7" : "+r"(x30));
	return x30;
}

static const struct kinst_a64_pac_ops pacops = { pac_sign, pac_strip, NULL };

/*
 * A PAC branch to a pointer that is not authentic must not be emulated
 * (the CPU would fault): for each key, a pointer signed with this
 * process's real key, then a bit of its PAC flipped.  The number of
 * wrong answers.
 */
static int
pac_selftest(void)
{
	static const uint32_t braa_x0_x1 = 0xd71f0801u, brab_x0_x1 = 0xd71f0c01u;
	int bad = 0;
	unsigned key;

	for (key = 0; key < 2; key++) {
		struct kinst_a64_insn d;
		struct kinst_a64_regs r = { .pc = 0x400000 }, before;
		uint64_t target = (uint64_t)(uintptr_t)kh64_invoke;

		kinst_a64_decode(key ? brab_x0_x1 : braa_x0_x1, &d);
		r.x[1] = 0x1234;
		r.x[0] = pac_sign(NULL, key, target, r.x[1]);
		if (r.x[0] == target) {
			printf("a64 harness: FAIL: pointer authentication is off "
			    "(key %u signs nothing)\n", key);
			bad++;
			continue;
		}
		before = r;
		if (kinst_a64_emulate(&d, &r, NULL, &pacops) != KINST_A64_EMU_OK ||
		    r.pc != target)
			bad++;
		r = before;
		r.x[0] ^= 1ull << 53;			/* inside the PAC */
		before = r;
		if (kinst_a64_emulate(&d, &r, NULL, &pacops) != KINST_A64_EMU_AUTH ||
		    memcmp(&r, &before, sizeof(r)) != 0)
			bad++;
	}
	return bad;
}

static void
regs_from(const mcontext_t *mc, struct kinst_a64_regs *r)
{
	memcpy(r->x, mc->regs, sizeof(r->x));
	r->sp = mc->sp;
	r->pc = mc->pc;
	r->pstate = mc->pstate;
}

static void
regs_to(mcontext_t *mc, const struct kinst_a64_regs *r)
{
	memcpy(mc->regs, r->x, sizeof(r->x));
	mc->sp = r->sp;
	mc->pc = r->pc;
	mc->pstate = r->pstate;
}

static void
record(const mcontext_t *mc)
{
	struct run *r = cur.r;
	struct rec *e;

	if (r->nrec == MAXREC) {
		r->overflow = true;
		return;
	}
	e = &r->rec[r->nrec++];
	memcpy(e->x, mc->regs, sizeof(e->x));
	e->sp = mc->sp;
	e->pc = mc->pc;
	e->nzcv = mc->pstate & 0xf0000000ull;
}

static long
index_of(uint64_t pc)
{
	struct fn *f = cur.f;

	if (pc < f->start || pc >= f->start + 4 * f->n || (pc & 3) != 0)
		return -1;
	return (long)((pc - f->start) / 4);
}

static void
on_gt(mcontext_t *mc, long i)
{
	struct fn *f = cur.f;

	record(mc);
	put_word(f->start + 4 * (uint64_t)i, f->orig[i]);
	if (cur.prev >= 0 && cur.prev != i)
		put_word(f->start + 4 * (uint64_t)cur.prev,
		    KINST_A64_BRK(GT_IMM));
	cur.prev = i;
}

static void
on_probe(mcontext_t *mc, long i)
{
	struct fn *f = cur.f;
	struct kinst_a64_regs r;
	uint64_t tramp = (uint64_t)cur.tramps + KINST_A64_TRAMP_SIZE * (uint64_t)i;

	record(mc);
	tot.hits++;
	regs_from(mc, &r);
	if (f->d[i].treatment == KINST_T_EMULATE) {
		if (kinst_a64_emulate(&f->d[i], &r, &memops, &pacops) !=
		    KINST_A64_EMU_OK)
			fail("the emulator refused an armed instruction", mc->pc);
		tot.emul[f->d[i].emul]++;
	} else {
		kinst_a64_tramp_enter(&r, tramp, cur.mask);
		if (cur.mask) {
			if ((r.pstate & (KINST_A64_PSTATE_I | KINST_A64_PSTATE_F)) !=
			    (KINST_A64_PSTATE_I | KINST_A64_PSTATE_F))
				fail("entered a trampoline with interrupts unmasked",
				    mc->pc);
			/* User mode cannot mask them: the CPU's part. */
			r.pstate &= ~(KINST_A64_PSTATE_I | KINST_A64_PSTATE_F);
		}
		if (r.pc == tramp && !cur.mask && (uint64_t)cur.tramps ==
		    (uint64_t)tramp_near)
			tot.branch_back++;
		tot.ool++;
	}
	regs_to(mc, &r);
}

static void
on_resume(mcontext_t *mc, uint32_t w)
{
	uint64_t pc = mc->pc;
	uint64_t tramp = pc & ~(uint64_t)(KINST_A64_TRAMP_SIZE - 1);
	uint64_t base = (uint64_t)cur.tramps, back;
	struct kinst_a64_regs r;

	if (tramp < base || tramp >= base + KINST_A64_TRAMP_SIZE * MAXWORDS)
		fail("a resume brk outside the trampolines", pc);
	memcpy(&back, (const void *)(tramp + KINST_A64_TRAMP_BACK), 8);
	regs_from(mc, &r);
	if (cur.mask)		/* the CPU held them masked in the trampoline */
		r.pstate |= KINST_A64_PSTATE_I | KINST_A64_PSTATE_F;
	if (kinst_a64_tramp_resume(&r, tramp, w, back) != 0)
		fail("kinst_a64_tramp_resume refused its own brk", pc);
	if ((r.pstate & (KINST_A64_PSTATE_I | KINST_A64_PSTATE_F)) != 0)
		fail("left the trampoline with interrupts masked", pc);
	tot.resume[(pc - tramp) / 8]++;
	regs_to(mc, &r);
}

static void
on_trap(int sig, siginfo_t *si, void *ctx)
{
	mcontext_t *mc = &((ucontext_t *)ctx)->uc_mcontext;
	uint32_t w;
	long i;

	(void)sig;
	(void)si;
	memcpy(&w, (const void *)mc->pc, 4);
	if (!KINST_A64_IS_BRK(w))
		fail("SIGTRAP not at a brk", mc->pc);
	if (KINST_A64_BRK_IMM(w) >= KINST_A64_BRK_RESUME &&
	    KINST_A64_BRK_IMM(w) < KINST_A64_BRK_RESUME + KINST_A64_TRAMP_VARIANTS &&
	    cur.mode == M_ENGINE) {
		on_resume(mc, w);
		return;
	}
	i = index_of(mc->pc);
	if (i < 0)
		fail("a brk outside the function under test", mc->pc);
	if (cur.mode == M_GT && KINST_A64_BRK_IMM(w) == GT_IMM)
		on_gt(mc, i);
	else if (cur.mode == M_ENGINE && KINST_A64_BRK_IMM(w) == KINST_A64_BRK_PROBE)
		on_probe(mc, i);
	else
		fail("an unexpected brk", mc->pc);
}

/* The functions kh64_* of this very program, from its symbol table. */
static void
load_functions(const char *path)
{
	struct stat st;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const uint8_t *img;
	int fd = open(path, O_RDONLY);
	size_t i, j;

	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(path);
		exit(2);
	}
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (img == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	eh = (const Elf64_Ehdr *)img;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
		str = (const char *)(img + sh[sh[i].sh_link].sh_offset);
		for (j = 0; j < sh[i].sh_size / sizeof(*sym); j++) {
			const char *nm = str + sym[j].st_name;
			struct fn *f;

			if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC ||
			    strncmp(nm, "kh64_", 5) != 0 ||
			    strcmp(nm, "kh64_invoke") == 0 ||
			    sym[j].st_size == 0 || sym[j].st_size % 4 != 0)
				continue;
			if (nfn == MAXFN || sym[j].st_size / 4 > MAXWORDS) {
				fprintf(stderr, "a64 harness: %s: too many or too "
				    "large functions\n", nm);
				exit(2);
			}
			f = &fns[nfn++];
			snprintf(f->name, sizeof(f->name), "%s", nm);
			f->start = sym[j].st_value;
			f->n = sym[j].st_size / 4;
		}
	}
	close(fd);
}

static bool
emulator_can(const struct kinst_a64_insn *d)
{
	if (d->treatment != KINST_T_EMULATE)
		return true;
	return d->emul != KINST_A64_EM_MRS_DAIF &&
	    !(d->emul == KINST_A64_EM_LDR_LIT && d->simd);
}

static void
classify(struct fn *f)
{
	size_t i;

	memcpy(f->orig, (const void *)f->start, 4 * f->n);
	for (i = 0; i < f->n; i++) {
		kinst_a64_decode(f->orig[i], &f->d[i]);
		if (f->d[i].treatment != KINST_T_REFUSE &&
		    kinst_a64_exclusive(f->orig, f->n, i)) {
			f->d[i].treatment = KINST_T_REFUSE;
			f->d[i].reason = KINST_R_EXCLUSIVE;
		}
		f->armed[i] = f->d[i].treatment != KINST_T_REFUSE &&
		    emulator_can(&f->d[i]);
		tot.boundaries++;
		tot.armed += f->armed[i];
		if (f->d[i].treatment == KINST_T_REFUSE)
			tot.refused[f->d[i].reason]++;
	}
}

static void
arm(struct fn *f, uint32_t brk)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->armed[i])
			put_word(f->start + 4 * i, brk);
}

static void
disarm(struct fn *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		put_word(f->start + 4 * i, f->orig[i]);
}

static bool
build_tramps(struct fn *f, uint8_t *area, bool want_reach)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		uint8_t img[KINST_A64_TRAMP_SIZE];
		uint64_t t = (uint64_t)area + KINST_A64_TRAMP_SIZE * i;

		if (!f->armed[i] || f->d[i].treatment == KINST_T_EMULATE)
			continue;
		if (kinst_a64_tramp_build(f->orig[i], f->start + 4 * i, t, img) !=
		    want_reach)
			return false;
		memcpy((void *)t, img, sizeof(img));
		__builtin___clear_cache((char *)t, (char *)t + sizeof(img));
	}
	return true;
}

static void
one_run(struct fn *f, const uint64_t in[32], enum mode m, uint8_t *tramps,
    bool mask, struct run *r)
{
	uint64_t i;

	for (i = 0; i < 512; i++)
		kh64_scratch[i] = 0x0101010101010101ull * (i & 0xff) ^ i << 32;
	memset(stack, 0, sizeof(stack));
	cur.mode = m;
	cur.f = f;
	cur.r = r;
	cur.tramps = tramps;
	cur.mask = mask;
	cur.prev = -1;
	r->nrec = 0;
	r->overflow = false;
	if (m == M_GT)
		arm(f, KINST_A64_BRK(GT_IMM));
	else if (m == M_ENGINE)
		arm(f, KINST_A64_BRK(KINST_A64_BRK_PROBE));
	kh64_invoke(f->start, in, r->out, (uint64_t)(stack + sizeof(stack)));
	disarm(f);
	/* kh64_invoke writes below its sp: past the stack if unbalanced. */
	if (r->out[31] != (uint64_t)(stack + sizeof(stack)))
		fail("the function returned with another sp", r->out[31]);
	cur.mode = M_NATIVE;
	memcpy(r->scratch, kh64_scratch, sizeof(r->scratch));
	memcpy(r->stack, stack, sizeof(stack));
	tot.runs++;
}

static const char *const outname[33] = {
	"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10",
	"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20",
	"x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30",
	"sp", "nzcv",
};

/* Print the first difference of b from a (the ground truth); true if any. */
static bool
differ(const struct fn *f, const char *what, const struct run *a,
    const struct run *b)
{
	size_t i, k;

	if (a->overflow || b->overflow) {
		printf("  %s %s: more than %d hits\n", f->name, what, MAXREC);
		return true;
	}
	for (i = 0; i < a->nrec && i < b->nrec; i++) {
		const uint64_t *x = (const uint64_t *)&a->rec[i];
		const uint64_t *y = (const uint64_t *)&b->rec[i];

		for (k = 0; k < 34; k++)
			if (x[k] != y[k]) {
				printf("  %s %s: hit %zu at %s+%#lx: %s %#lx, ground "
				    "truth %#lx\n", f->name, what, i, f->name,
				    (unsigned long)(a->rec[i].pc - f->start),
				    k < 31 ? outname[k] : k == 31 ? "sp" :
				    k == 32 ? "pc" : "nzcv", (unsigned long)y[k],
				    (unsigned long)x[k]);
				return true;
			}
	}
	if (a->nrec != b->nrec) {
		printf("  %s %s: %zu hits, ground truth %zu\n", f->name, what,
		    b->nrec, a->nrec);
		return true;
	}
	for (k = 0; k < 33; k++)
		if (a->out[k] != b->out[k]) {
			printf("  %s %s: at return %s %#lx, ground truth %#lx\n",
			    f->name, what, outname[k], (unsigned long)b->out[k],
			    (unsigned long)a->out[k]);
			return true;
		}
	if (memcmp(a->scratch, b->scratch, sizeof(a->scratch)) != 0) {
		printf("  %s %s: scratch differs\n", f->name, what);
		return true;
	}
	if (memcmp(a->stack, b->stack, sizeof(a->stack)) != 0) {
		printf("  %s %s: stack differs\n", f->name, what);
		return true;
	}
	return false;
}

static const uint64_t args[][2] = {
	{ 0, 1 }, { 5, 3 }, { 17, 7 }, { 1ull << 32, 2 }, { 0xfffffffffffffff7ull, 100 },
	{ 0x0000210000000008ull, 12 }, { 9, 0 },
};

static void
one_function(struct fn *f)
{
	static const struct {
		const char	*name;
		bool		near, mask;
	} eng[] = {
		{ "near", true, false }, { "near+masks", true, true },
		{ "far", false, false }, { "far+masks", false, true },
	};
	size_t a, e;
	uint64_t in[32];

	if (!build_tramps(f, tramp_near, true) || !build_tramps(f, tramp_far, false))
		fail("a trampoline area is not where it must be", f->start);
	for (a = 0; a < sizeof(args) / sizeof(args[0]); a++) {
		for (e = 0; e < 31; e++)
			in[e] = 0x1000000000000000ull * (e % 16) + 0x1111 * e;
		in[0] = args[a][0];
		in[1] = args[a][1];
		in[29] = 0;
		in[31] = 0x60000000ull * (a & 1);	/* NZCV: Z and C, or none */
		one_run(f, in, M_NATIVE, NULL, false, &runs[1]);
		one_run(f, in, M_GT, NULL, false, &runs[0]);
		/* The ground truth against the untraced run: its end only. */
		runs[1].nrec = runs[0].nrec;
		memcpy(runs[1].rec, runs[0].rec, runs[0].nrec * sizeof(struct rec));
		if (differ(f, "ground truth vs untraced", &runs[1], &runs[0]))
			tot.errors++;
		tot.records += (long)runs[0].nrec;
		for (e = 0; e < sizeof(eng) / sizeof(eng[0]); e++) {
			char what[64];

			one_run(f, in, M_ENGINE, eng[e].near ? tramp_near : tramp_far,
			    eng[e].mask, &runs[1]);
			snprintf(what, sizeof(what), "args %zu, %s", a, eng[e].name);
			if (differ(f, what, &runs[0], &runs[1]))
				tot.mismatches++;
		}
	}
}

static uint8_t *
map_tramps(uint64_t hint)
{
	void *p = mmap((void *)hint, KINST_A64_TRAMP_SIZE * MAXWORDS,
	    PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

int
main(int argc, char **argv)
{
	static uint8_t altstack[65536];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	uint64_t lo = ~0ull, hi = 0;
	size_t i, k;
	int bad_kinds = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(60);			/* a livelock ends the test (a run: 4 s) */
	load_functions(argv[0]);
	if (nfn < 20) {
		fprintf(stderr, "a64 harness: only %zu corpus functions\n", nfn);
		return 2;
	}
	for (i = 0; i < nfn; i++) {
		if (fns[i].start < lo)
			lo = fns[i].start;
		if (fns[i].start + 4 * fns[i].n > hi)
			hi = fns[i].start + 4 * fns[i].n;
	}
	lo &= ~(uint64_t)0xfff;
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
		perror("mprotect");
		return 2;
	}
	/* Past the bss (the runs are large), within 128 MiB of the text. */
	tramp_near = map_tramps(((uint64_t)_end + (16 << 20)) & ~(uint64_t)0xffff);
	tramp_far = map_tramps(hi + (4ull << 30));
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGTRAP, &sa, NULL);

	for (i = 0; i < nfn; i++) {
		long m = tot.mismatches, e = tot.errors, h = tot.hits;

		if (argc > 1 && strcmp(argv[1], fns[i].name) != 0)
			continue;

		classify(&fns[i]);
		one_function(&fns[i]);
		printf("  %-28s %4zu words, %5ld hits%s\n", fns[i].name, fns[i].n,
		    tot.hits - h, tot.mismatches != m || tot.errors != e ?
		    "  DIFFERS" : "");
	}
	printf("a64 harness: %zu functions, %ld boundaries, %ld armed, %ld runs, "
	    "%ld ground-truth records, %ld engine hits, %ld mismatches, "
	    "%ld harness errors\n", nfn, tot.boundaries, tot.armed, tot.runs,
	    tot.records, tot.hits, tot.mismatches, tot.errors);
	printf("a64 harness: out of line %ld (branched back %ld), resumed by "
	    "variant %ld %ld %ld %ld\n", tot.ool, tot.branch_back,
	    tot.resume[0], tot.resume[1], tot.resume[2], tot.resume[3]);
	printf("a64 harness: emulated:");
	for (k = 1; k < KINST_A64_EM_COUNT; k++)
		printf(" %s %ld", kinst_a64_emul_name((int)k), tot.emul[k]);
	printf("\na64 harness: refused:");
	for (k = 1; k < KINST_R_COUNT; k++)
		if (tot.refused[k] != 0)
			printf(" %s %ld", kinst_reason_name((int)k), tot.refused[k]);
	printf("\n");
	/* Every kind user mode can run was done by the emulator. */
	for (k = 1; k < KINST_A64_EM_COUNT; k++) {
		if (k == KINST_A64_EM_MRS_DAIF)
			continue;
		if (tot.emul[k] == 0) {
			printf("a64 harness: FAIL: no %s was emulated\n",
			    kinst_a64_emul_name((int)k));
			bad_kinds++;
		}
	}
	if (tot.refused[KINST_R_EXCLUSIVE] == 0 || tot.branch_back == 0 ||
	    tot.resume[0] == 0 || tot.resume[3] == 0 || tot.records == 0) {
		printf("a64 harness: FAIL: a path was never taken (exclusive "
		    "refusals, branch back, resume 0 or 3, records)\n");
		bad_kinds++;
	}
	k = (size_t)pac_selftest();
	printf("a64 harness: PAC self-test: %zu wrong\n", k);
	if (tot.mismatches != 0 || tot.errors != 0 || bad_kinds != 0 || k != 0) {
		printf("a64 harness: FAIL\n");
		return 1;
	}
	printf("a64 harness: OK\n");
	return 0;
}
