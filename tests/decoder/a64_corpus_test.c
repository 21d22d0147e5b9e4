/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The A64 classifier on every instruction of every module of Debian's
 * arm64 kernel package (tests/lib/env.sh kinst_fetch_kernel_arm64):
 * against Capstone's AArch64 disassembler where it decodes the word (kind,
 * verdict, reason, target, width and bit: a64_cs.h), and against binutils'
 * aarch64-linux-gnu-objdump for the words Capstone 4 does not know
 * (ARMv8.1 and later: LSE atomics, PAC, BTI...).
 */

#include <atf-c.h>
#include <capstone/capstone.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a64_cs.h"

#define	OBJDUMP	"aarch64-linux-gnu-objdump"

static struct {
	csh		cs;
	cs_insn		*in;
	unsigned long	files, words, compared, bad;
	unsigned long	emul[KINST_A64_EM_COUNT], reason[KINST_R_COUNT];
	unsigned long	in_region;	/* refused inside an exclusive sequence */
	/*
	 * The words Capstone cannot decode, each as word << 1 | whether it
	 * was in a function (the rest of an executable section is data:
	 * the crypto modules' tables), made distinct at the end.
	 */
	uint64_t	*unknown;
	size_t		nunknown, cap;
} g;

static void
note_unknown(uint32_t w, bool infunc)
{
	if (g.nunknown == g.cap) {
		g.cap = g.cap ? 2 * g.cap : 4096;
		g.unknown = realloc(g.unknown, g.cap * sizeof(*g.unknown));
		ATF_REQUIRE(g.unknown != NULL);
	}
	g.unknown[g.nunknown++] = (uint64_t)w << 1 | infunc;
}

/*
 * One executable section: n words at address base, as bytes (for
 * Capstone) and as words; excl gets each word's exclusive kind.
 */
static void
do_section(const char *path, const uint8_t *p, const uint32_t *words,
    size_t n, uint64_t base, const uint8_t *infunc, uint8_t *excl)
{
	char why[512];
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t w = words[i];
		uint64_t pc = base + 4 * i, addr = pc;
		const uint8_t *q = p + 4 * i;
		size_t sz = 4;
		struct kinst_a64_insn d;

		g.words++;
		kinst_a64_decode(w, &d);
		excl[i] = d.excl;
		g.emul[d.emul]++;
		if (d.treatment == KINST_T_REFUSE)
			g.reason[d.reason]++;
		if (!cs_disasm_iter(g.cs, &q, &sz, &addr, g.in)) {
			note_unknown(w, infunc[i]);
			continue;
		}
		g.compared++;
		if (a64_mismatch(g.in, w, pc, &d, why, sizeof(why)) && g.bad++ < 20)
			ATF_CHECK_MSG(0, "%s: %s", path, why);
	}
}

struct range {
	size_t		first, count;
};

/* The functions in section textndx (n words), as ranges of words; marks infunc. */
static size_t
functions(Elf *e, size_t symndx, size_t textndx, size_t n, uint8_t *infunc,
    struct range **out)
{
	Elf_Scn *scn = elf_getscn(e, symndx);
	Elf_Data *sd = scn ? elf_getdata(scn, NULL) : NULL;
	struct range *r = NULL;
	size_t nr = 0, cap = 0;
	GElf_Sym s;

	for (int k = 0; sd != NULL && gelf_getsym(sd, k, &s) != NULL; k++) {
		size_t first, count;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx != textndx ||
		    s.st_value % 4 != 0 || s.st_value / 4 >= n)
			continue;
		first = s.st_value / 4;
		count = s.st_size / 4;
		if (count > n - first)
			count = n - first;
		memset(infunc + first, 1, count);
		if (nr == cap) {
			cap = cap ? 2 * cap : 64;
			r = realloc(r, cap * sizeof(*r));
			ATF_REQUIRE(r != NULL);
		}
		r[nr++] = (struct range){ first, count };
	}
	*out = r;
	return nr;
}

/* Exclusive sequences, by function (informational counts). */
static void
count_regions(const uint32_t *words, const uint8_t *excl,
    const struct range *r, size_t nr)
{
	for (size_t j = 0; j < nr; j++)
		for (size_t i = 0; i < r[j].count; i++)
			if (excl[r[j].first + i] == KINST_A64_EXCL_NONE &&
			    kinst_a64_exclusive(words + r[j].first, r[j].count, i))
				g.in_region++;
}

static void
do_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t symndx = 0;

	ATF_REQUIRE_MSG(fd >= 0, "%s", path);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e == NULL || gelf_getehdr(e, &eh) == NULL || eh.e_machine != EM_AARCH64) {
		ATF_CHECK_MSG(0, "%s: not an AArch64 ELF file", path);
		goto out;
	}
	g.files++;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == SHT_SYMTAB)
			symndx = elf_ndxscn(scn);
	}
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *dd;
		const uint8_t *p;
		uint8_t *infunc, *excl;
		uint32_t *words;
		struct range *r = NULL;
		size_t n, nr = 0;
		if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		dd = elf_getdata(scn, NULL);
		if (dd == NULL || dd->d_buf == NULL)
			continue;
		n = dd->d_size / 4;
		p = dd->d_buf;
		words = malloc((n ? n : 1) * sizeof(*words));
		infunc = calloc(n ? n : 1, 1);
		excl = malloc(n ? n : 1);
		ATF_REQUIRE(words != NULL && infunc != NULL && excl != NULL);
		for (size_t i = 0; i < n; i++)	/* little-endian words */
			words[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
			    (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
		if (symndx != 0)
			nr = functions(e, symndx, elf_ndxscn(scn), n, infunc, &r);
		/* Each section at its own 4 KiB-aligned kernel address. */
		do_section(path, p, words, n,
		    0xffff800010000000ull + ((uint64_t)elf_ndxscn(scn) << 24),
		    infunc, excl);
		count_regions(words, excl, r, nr);
		free(r);
		free(excl);
		free(infunc);
		free(words);
	}
out:
	if (e != NULL)
		elf_end(e);
	close(fd);
}

static int
visit(const char *path, const struct stat *st, int type, struct FTW *f)
{
	size_t n = strlen(path);

	(void)st;
	(void)f;
	if (type == FTW_F && n > 3 && strcmp(path + n - 3, ".ko") == 0)
		do_file(path);
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * What objdump's mnemonic (and operands, for msr) says the classifier
 * must answer, for the words Capstone 4 does not decode.
 */
static bool
objdump_agrees(const char *mn, const char *ops, const struct kinst_a64_insn *d)
{
	static const char *const allowed[] = { "nzcv,", "fpcr,", "fpsr,",
		"tpidr_el0,", "tpidrro_el0," };
	size_t i;

	if (strcmp(mn, ".inst") == 0)		/* objdump: undefined */
		return d->treatment == KINST_T_REFUSE;
	if (strcmp(mn, "udf") == 0)
		return d->reason == KINST_R_UD;
	if (strcmp(mn, "retaa") == 0 || strcmp(mn, "retab") == 0)
		return d->emul == KINST_A64_EM_RET_PAC;
	if (strncmp(mn, "blra", 4) == 0)
		return d->emul == KINST_A64_EM_BLR_PAC;
	if (strncmp(mn, "bra", 3) == 0)
		return d->emul == KINST_A64_EM_BR_PAC;
	if (strncmp(mn, "bc.", 3) == 0)
		return d->emul == KINST_A64_EM_BCOND;
	if (strncmp(mn, "ereta", 5) == 0)
		return d->reason == KINST_R_ERET;
	if (strcmp(mn, "wfet") == 0 || strcmp(mn, "wfit") == 0)
		return d->reason == KINST_R_HALT;
	if (strcmp(mn, "msr") == 0) {
		for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
			if (strncmp(ops, allowed[i], strlen(allowed[i])) == 0)
				return d->treatment == KINST_T_OOL;
		return d->reason == KINST_R_SYSREG_WRITE;
	}
	return d->treatment == KINST_T_OOL;
}

/* The words Capstone does not know, through objdump. */
static void
check_unknown(void)
{
	char tmpl[] = "/tmp/a64_corpus.XXXXXX", cmd[256], line[512];
	unsigned long distinct = 0, checked = 0, bad = 0, emulated = 0, data = 0;
	size_t i, j;
	FILE *f, *o;
	int fd;

	qsort(g.unknown, g.nunknown, sizeof(*g.unknown), cmp_u64);
	for (i = j = 0; i < g.nunknown; i++) {
		if (j > 0 && g.unknown[i] >> 1 == g.unknown[j - 1] >> 1)
			g.unknown[j - 1] |= g.unknown[i] & 1;
		else
			g.unknown[j++] = g.unknown[i];
	}
	distinct = j;
	fd = mkstemp(tmpl);
	ATF_REQUIRE(fd >= 0);
	f = fdopen(fd, "wb");
	for (i = 0; i < distinct; i++) {
		uint32_t w = (uint32_t)(g.unknown[i] >> 1);
		uint8_t b[4] = { (uint8_t)w, (uint8_t)(w >> 8), (uint8_t)(w >> 16),
		    (uint8_t)(w >> 24) };
		fwrite(b, 1, 4, f);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), OBJDUMP " -D -b binary -m aarch64 %s", tmpl);
	o = popen(cmd, "r");
	ATF_REQUIRE(o != NULL);
	while (fgets(line, sizeof(line), o) != NULL) {
		unsigned long off;
		unsigned word;
		char mn[64] = "", ops[256] = "";
		struct kinst_a64_insn d;
		if (sscanf(line, " %lx:\t%x \t%63s %255[^\n]", &off, &word, mn, ops) < 3 ||
		    off % 4 != 0 || off / 4 >= distinct ||
		    word != (uint32_t)(g.unknown[off / 4] >> 1))
			continue;
		checked++;
		kinst_a64_decode(word, &d);
		emulated += d.treatment == KINST_T_EMULATE;
		/*
		 * Data outside every function that objdump cannot decode:
		 * kinstctl lists functions only, so no probe goes there; the
		 * classifier does not look for unallocated loads, stores and
		 * data processing (docs/engine.md).  Never emulated, though.
		 */
		if (strcmp(mn, ".inst") == 0 && !(g.unknown[off / 4] & 1) &&
		    d.treatment != KINST_T_EMULATE) {
			data++;
			continue;
		}
		if (!objdump_agrees(mn, ops, &d) && bad++ < 20)
			ATF_CHECK_MSG(0, "%08x (objdump: %s %s): treatment %d reason "
			    "%d emul %d", word, mn, ops, d.treatment, d.reason, d.emul);
	}
	ATF_CHECK_EQ(pclose(o), 0);
	unlink(tmpl);
	printf("a64 corpus: %lu words Capstone 4 cannot decode, %lu distinct, "
	    "%lu of them checked against objdump (%lu emulated; %lu undefined "
	    "data outside functions, informational), %lu disagree\n",
	    (unsigned long)g.nunknown, distinct, checked, emulated, data, bad);
	ATF_CHECK_MSG(checked == distinct, "objdump listed %lu of %lu words",
	    checked, distinct);
	ATF_CHECK_EQ(bad, 0);
}

ATF_TC(arm64_modules);
ATF_TC_HEAD(arm64_modules, tc)
{
	atf_tc_set_md_var(tc, "timeout", "900");
}
ATF_TC_BODY(arm64_modules, tc)
{
	const char *root;
	char pat[4096];
	glob_t gl;
	size_t i;

	if (!atf_tc_has_config_var(tc, "kernel_root_arm64"))
		atf_tc_skip("SKIPPED: config variable kernel_root_arm64 is not set "
		    "(run through tests/run)");
	if (system("command -v " OBJDUMP " >/dev/null") != 0)
		atf_tc_skip("SKIPPED: " OBJDUMP " is not installed "
		    "(binutils-aarch64-linux-gnu)");
	root = atf_tc_get_config_var(tc, "kernel_root_arm64");
	snprintf(pat, sizeof(pat), "%s/lib/modules/*/kernel", root);
	if (glob(pat, 0, NULL, &gl) != 0 || gl.gl_pathc == 0)
		atf_tc_skip("SKIPPED: no arm64 kernel modules under %s "
		    "(kinst_fetch_kernel_arm64 in tests/lib/env.sh fetches them)", root);
	ATF_REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
	ATF_REQUIRE(cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &g.cs) == CS_ERR_OK);
	cs_option(g.cs, CS_OPT_DETAIL, CS_OPT_ON);
	g.in = cs_malloc(g.cs);
	for (i = 0; i < gl.gl_pathc; i++)
		ATF_REQUIRE(nftw(gl.gl_pathv[i], visit, 32, FTW_PHYS) == 0);
	globfree(&gl);
	printf("a64 corpus: %lu modules, %lu words, %lu compared with Capstone, "
	    "%lu disagree\n", g.files, g.words, g.compared, g.bad);
	printf("emulated (informational):");
	for (i = 1; i < KINST_A64_EM_COUNT; i++)
		printf(" %s %lu", kinst_a64_emul_name((int)i), g.emul[i]);
	printf("\nrefused (informational):");
	for (i = 1; i < KINST_R_COUNT; i++)
		if (g.reason[i] != 0)
			printf(" %s %lu", kinst_reason_name((int)i), g.reason[i]);
	printf("\ninside an exclusive sequence (informational): %lu\n", g.in_region);
	ATF_CHECK_MSG(g.files >= 1000, "only %lu modules", g.files);
	ATF_CHECK_EQ(g.bad, 0);
	check_unknown();
	cs_free(g.in, 1);
	cs_close(&g.cs);
	free(g.unknown);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, arm64_modules);
	return atf_no_error();
}
