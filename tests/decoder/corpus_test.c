/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoder vs Capstone on real code.
 *
 * Linear sweep of every executable section of every ELF shared object under
 * /usr/lib/x86_64-linux-gnu and of every kernel module under
 * <kernel_root>/lib/modules/<version>/kernel/.  At each offset both decoders
 * decode one instruction: equal lengths advance together; "both invalid"
 * (data in text, truncated tail) skips one byte; anything else is a
 * disagreement.  Disagreements of a file are handed to objdump in one batch:
 * where objdump agrees with our decoder, Capstone is wrong and the
 * disagreement's category (encoding, map, opcode) must be listed in
 * docs/decoder.md; every other disagreement fails the test.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <capstone/capstone.h>
#include <atf-c.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "x86/kinst_decode.h"

#define	SLOT		32	/* bytes per sample in the objdump batch */
#define	MAX_REPORT	5	/* failures printed in full, per kind */

struct sample {
	uint64_t	addr;		/* section address + offset */
	char		section[32];
	uint8_t		bytes[KINST_MAX_INSN_LEN];
	unsigned	nbytes;
	unsigned	ours;		/* length, 0 = invalid/truncated */
	unsigned	cs;
	int		objdump;	/* length, 0 = (bad), -1 = unknown */
};

struct totals {
	unsigned long	files, files_noelf, sections;
	unsigned long	bytes, compared, both_invalid;
	unsigned long	dis_total, dis_csbug, dis_fail;
	char		**cats;		/* Capstone-bug categories seen */
	unsigned long	*catcount;
	size_t		ncats;
};

static csh cs_handle;
static struct totals tot;
static char *doc_text;			/* docs/decoder.md */
static struct sample *samples;
static size_t nsamples, samples_cap;
static char tmpbin[64];
/* Dedupe files by inode (e.g. Mesa's hard-linked drivers). */
static struct { dev_t dev; ino_t ino; } *seen;
static size_t nseen, seen_cap;

static void
die_oom(void)
{

	fprintf(stderr, "out of memory\n");
	abort();
}

static int
seen_before(const struct stat *st)
{
	size_t i;

	for (i = 0; i < nseen; i++)
		if (seen[i].dev == st->st_dev && seen[i].ino == st->st_ino)
			return (1);
	if (nseen == seen_cap) {
		seen_cap = seen_cap ? seen_cap * 2 : 1024;
		seen = realloc(seen, seen_cap * sizeof(*seen));
		if (seen == NULL)
			die_oom();
	}
	seen[nseen].dev = st->st_dev;
	seen[nseen].ino = st->st_ino;
	nseen++;
	return (0);
}

static void
add_sample(const char *sec, uint64_t addr, const uint8_t *p, size_t avail,
    unsigned ours, unsigned cs)
{
	struct sample *s;

	if (nsamples == samples_cap) {
		samples_cap = samples_cap ? samples_cap * 2 : 256;
		samples = realloc(samples, samples_cap * sizeof(*samples));
		if (samples == NULL)
			die_oom();
	}
	s = &samples[nsamples++];
	memset(s, 0, sizeof(*s));
	snprintf(s->section, sizeof(s->section), "%s", sec);
	s->addr = addr;
	s->nbytes = avail < KINST_MAX_INSN_LEN ? (unsigned)avail :
	    KINST_MAX_INSN_LEN;
	memcpy(s->bytes, p, s->nbytes);
	s->ours = ours;
	s->cs = cs;
	s->objdump = -1;
}

/* Length Capstone decodes at p, 0 when it does not. */
static unsigned
cs_length(const uint8_t *p, size_t avail, uint64_t addr, cs_insn *ci)
{
	const uint8_t *code;
	size_t size;

	code = p;
	size = avail;
	if (!cs_disasm_iter(cs_handle, &code, &size, &addr, ci))
		return (0);
	return (ci->size);
}

static void
sweep(const char *sec, const uint8_t *p, size_t size, uint64_t base,
    cs_insn *ci)
{
	size_t off, a, b;
	unsigned ours, cs, n;

	off = 0;
	while (off < size) {
		ours = kinst_insn_length(p + off, size - off);
		cs = cs_length(p + off, size - off, base + off, ci);
		if (ours == cs) {
			if (ours == 0) {
				tot.both_invalid++;
				off++;
			} else {
				tot.compared++;
				off += ours;
			}
			continue;
		}
		tot.dis_total++;
		add_sample(sec, base + off, p + off, size - off, ours, cs);
		/* Resynchronise: advance the one behind until both meet. */
		a = off + (ours ? ours : 1);
		b = off + (cs ? cs : 1);
		for (n = 0; a != b && n < 64; n++) {
			if (a < b) {
				if (a >= size)
					break;
				ours = kinst_insn_length(p + a, size - a);
				a += ours ? ours : 1;
			} else {
				if (b >= size)
					break;
				cs = cs_length(p + b, size - b, base + b, ci);
				b += cs ? cs : 1;
			}
		}
		off = a > b ? a : b;
	}
}

/* Ask objdump for the length of the first instruction of every sample. */
static void
objdump_batch(void)
{
	static const uint8_t nops[SLOT] = { [0 ... SLOT - 1] = 0x90 };
	char cmd[256], line[1024], *p, *tab1, *tab2;
	FILE *f;
	size_t i, rex_pending;
	unsigned long addr;
	int fd, nb;

	if (nsamples == 0)
		return;
	fd = open(tmpbin, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ATF_REQUIRE_MSG(fd >= 0, "%s: %s", tmpbin, strerror(errno));
	for (i = 0; i < nsamples; i++) {
		uint8_t slot[SLOT];

		memcpy(slot, nops, SLOT);
		memcpy(slot, samples[i].bytes, samples[i].nbytes);
		ATF_REQUIRE(write(fd, slot, SLOT) == SLOT);
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "objdump -D -b binary -m i386:x86-64 "
	    "--insn-width=16 -w %s", tmpbin);
	f = popen(cmd, "r");
	ATF_REQUIRE_MSG(f != NULL, "popen objdump: %s", strerror(errno));
	rex_pending = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* "   20:\t0f 0d 00 \tprefetch (%rax)" */
		p = line;
		while (*p == ' ')
			p++;
		addr = strtoul(p, &p, 16);
		if (*p != ':' || p[1] != '\t')
			continue;
		tab1 = p + 2;
		tab2 = strchr(tab1, '\t');
		if (tab2 == NULL)
			continue;
		nb = 0;
		for (p = tab1; p < tab2; p++)
			if (p[0] != ' ' && (p == tab1 || p[-1] == ' '))
				nb++;
		if (addr % SLOT != 0) {
			/*
			 * objdump prints a REX prefix that another prefix
			 * follows as an instruction of its own ("rex.W"); the
			 * CPU ignores it and so do we.  Count it in.
			 */
			i = addr / SLOT;
			if (i < nsamples && rex_pending == i + 1 &&
			    addr == i * SLOT + 1) {
				rex_pending = 0;
				samples[i].objdump = strstr(tab2, "(bad)") ?
				    0 : nb + 1;
			}
			continue;
		}
		i = addr / SLOT;
		if (i >= nsamples)
			continue;
		rex_pending = 0;
		if (strstr(tab2, "(bad)") != NULL)
			samples[i].objdump = 0;
		else
			samples[i].objdump = nb;
		if (nb == 1 && strncmp(tab2 + 1, "rex", 3) == 0 &&
		    strspn(tab2 + 4, ".WRXB") == strcspn(tab2 + 4, "\n"))
			rex_pending = i + 1;
	}
	pclose(f);
}

static int
is_prefix(uint8_t b)
{

	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return (1);
	default:
		return ((b & 0xf0) == 0x40);
	}
}

/*
 * The category of a Capstone bug: "<encoding> <map> <opcode>" of our
 * decode, or "invalid <first bytes>" when we (and objdump) reject it.
 */
static void
category(const struct sample *s, char *buf, size_t bufsz)
{
	static const char *encs[] = { "LEGACY", "VEX", "VEX", "EVEX", "XOP" };
	static const char *maps[] = { "1BYTE", "0F", "0F38", "0F3A", "MAP4",
	    "MAP5", "MAP6", "MAP7", "XOP8", "XOP9", "XOPA" };
	struct kinst_insn in;
	unsigned i;

	if (kinst_decode(s->bytes, s->nbytes, &in) == KINST_DEC_OK) {
		if (in.enc == KINST_ENC_EVEX)	/* Capstone 4: most of AVX-512 */
			snprintf(buf, bufsz, "%s %s", encs[in.enc],
			    maps[in.map]);
		else
			snprintf(buf, bufsz, "%s %s %02X", encs[in.enc],
			    maps[in.map], in.opcode);
	} else {
		/* The opcode byte(s) after any legacy prefix and REX. */
		for (i = 0; i + 1 < s->nbytes && is_prefix(s->bytes[i]); i++)
			;
		if (s->bytes[i] == 0x0f && i + 1 < s->nbytes)
			snprintf(buf, bufsz, "invalid 0F %02X", s->bytes[i + 1]);
		else
			snprintf(buf, bufsz, "invalid %02X", s->bytes[i]);
	}
}

static int
documented(const char *cat)
{
	char key[96];

	snprintf(key, sizeof(key), "`cs:%s`", cat);
	return (doc_text != NULL && strstr(doc_text, key) != NULL);
}

/* Count one more of category cat; returns the new count. */
static unsigned long
note_category(const char *cat)
{
	size_t i;

	for (i = 0; i < tot.ncats; i++)
		if (strcmp(tot.cats[i], cat) == 0)
			return (++tot.catcount[i]);
	tot.cats = realloc(tot.cats, (tot.ncats + 1) * sizeof(*tot.cats));
	tot.catcount = realloc(tot.catcount,
	    (tot.ncats + 1) * sizeof(*tot.catcount));
	if (tot.cats == NULL || tot.catcount == NULL)
		die_oom();
	tot.cats[tot.ncats] = strdup(cat);
	tot.catcount[tot.ncats] = 1;
	tot.ncats++;
	return (1);
}

static void
judge(const char *path)
{
	struct sample *s;
	char cat[64], fcat[160], hex[3 * KINST_MAX_INSN_LEN + 1];
	size_t i, j;

	objdump_batch();
	for (i = 0; i < nsamples; i++) {
		s = &samples[i];
		category(s, cat, sizeof(cat));
		if (s->objdump >= 0 && (unsigned)s->objdump == s->ours &&
		    documented(cat)) {
			tot.dis_csbug++;
			note_category(cat);
			continue;
		}
		tot.dis_fail++;
		snprintf(fcat, sizeof(fcat), "FAIL[%s] %s", s->objdump < 0 ?
		    "objdump unknown" : (unsigned)s->objdump == s->ours ?
		    "objdump=ours, undocumented" : (unsigned)s->objdump ==
		    s->cs ? "objdump=capstone" : "objdump differs from both",
		    cat);
		/* The first few of each kind, in full. */
		if (note_category(fcat) > MAX_REPORT)
			continue;
		for (j = 0; j < s->nbytes; j++)
			sprintf(hex + 3 * j, "%02x ", s->bytes[j]);
		fprintf(stderr, "DISAGREE %s %s+0x%lx: %s ours=%u capstone=%u "
		    "objdump=%d category=\"%s\"%s\n", path, s->section,
		    (unsigned long)s->addr, hex, s->ours, s->cs, s->objdump,
		    cat, (s->objdump >= 0 && (unsigned)s->objdump == s->ours) ?
		    " (Capstone wrong but category not in docs/decoder.md)" :
		    "");
	}
	nsamples = 0;
}

static void
do_file(const char *path, int want_type)
{
	struct stat st;
	Elf *e;
	Elf_Scn *scn;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	cs_insn *ci;
	size_t shstrndx;
	uint8_t *map;
	const char *name;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 64 ||
	    seen_before(&st)) {
		close(fd);
		return;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	if (memcmp(map, ELFMAG, SELFMAG) != 0) {
		tot.files_noelf++;
		munmap(map, st.st_size);
		return;
	}
	e = elf_memory((char *)map, st.st_size);
	if (e == NULL || gelf_getehdr(e, &eh) == NULL ||
	    eh.e_machine != EM_X86_64 || eh.e_type != want_type ||
	    elf_getshdrstrndx(e, &shstrndx) != 0) {
		tot.files_noelf++;
		if (e != NULL)
			elf_end(e);
		munmap(map, st.st_size);
		return;
	}
	tot.files++;
	ci = cs_malloc(cs_handle);
	ATF_REQUIRE(ci != NULL);
	for (scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		if (sh.sh_offset > (uint64_t)st.st_size ||
		    sh.sh_size > (uint64_t)st.st_size - sh.sh_offset)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		tot.sections++;
		tot.bytes += sh.sh_size;
		sweep(name ? name : "?", map + sh.sh_offset, sh.sh_size,
		    sh.sh_addr, ci);
	}
	cs_free(ci, 1);
	elf_end(e);
	munmap(map, st.st_size);
	judge(path);
}

static int want_type_nftw;

static int
visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t n;

	(void)st;
	(void)ftw;
	if (flag != FTW_F)
		return (0);
	if (want_type_nftw == ET_REL) {
		n = strlen(path);
		if (n < 3 || strcmp(path + n - 3, ".ko") != 0)
			return (0);
	}
	do_file(path, want_type_nftw);
	return (0);
}

static void
setup(const atf_tc_t *tc)
{
	const char *srcdir;
	char path[4096];
	FILE *f;
	long n;

	ATF_REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
	ATF_REQUIRE(cs_open(CS_ARCH_X86, CS_MODE_64, &cs_handle) == CS_ERR_OK);
	cs_option(cs_handle, CS_OPT_DETAIL, CS_OPT_OFF);
	snprintf(tmpbin, sizeof(tmpbin), "objdump-batch.bin");
	if (system("objdump --version >/dev/null 2>&1") != 0)
		atf_tc_skip("objdump (binutils) is not installed: cannot "
		    "arbitrate disagreements");
	/*
	 * ATF defines its own "srcdir" (the test program's directory), so
	 * fall back to the source tree this program was built from.
	 */
	srcdir = atf_tc_has_config_var(tc, "srcdir") ?
	    atf_tc_get_config_var(tc, "srcdir") : KINST_SRCDIR;
	snprintf(path, sizeof(path), "%s/docs/decoder.md", srcdir);
	if (access(path, R_OK) != 0)
		snprintf(path, sizeof(path), "%s/docs/decoder.md",
		    KINST_SRCDIR);
	f = fopen(path, "r");
	ATF_REQUIRE_MSG(f != NULL, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	doc_text = calloc(1, n + 1);
	ATF_REQUIRE(doc_text != NULL);
	ATF_REQUIRE(fread(doc_text, 1, n, f) == (size_t)n);
	fclose(f);
}

static int
cmp_str(const void *a, const void *b)
{

	return (strcmp(*(char *const *)a, *(char *const *)b));
}

static void
finish(const char *what)
{
	unsigned long *cnt;
	char **sorted;
	size_t i, j;

	printf("%s: %lu files (%lu skipped: not ELF of the wanted type), "
	    "%lu executable sections, %lu bytes\n", what, tot.files,
	    tot.files_noelf, tot.sections, tot.bytes);
	printf("%s: %lu instructions compared, %lu both-invalid bytes skipped, "
	    "%lu disagreements: %lu Capstone bugs (objdump agrees with us, "
	    "listed in docs/decoder.md), %lu failures\n", what, tot.compared,
	    tot.both_invalid, tot.dis_total, tot.dis_csbug, tot.dis_fail);
	/* Categories in name order (counts follow their names). */
	sorted = calloc(tot.ncats + 1, sizeof(*sorted));
	cnt = calloc(tot.ncats + 1, sizeof(*cnt));
	ATF_REQUIRE(sorted != NULL && cnt != NULL);
	memcpy(sorted, tot.cats, tot.ncats * sizeof(*sorted));
	qsort(sorted, tot.ncats, sizeof(*sorted), cmp_str);
	for (i = 0; i < tot.ncats; i++)
		for (j = 0; j < tot.ncats; j++)
			if (tot.cats[j] == sorted[i])
				cnt[i] = tot.catcount[j];
	for (i = 0; i < tot.ncats; i++)
		printf("%s:   %s%s%s: %lu\n", what,
		    strncmp(sorted[i], "FAIL", 4) == 0 ? "" :
		    "Capstone bug `cs:", sorted[i],
		    strncmp(sorted[i], "FAIL", 4) == 0 ? "" : "`", cnt[i]);
	free(sorted);
	free(cnt);
	fflush(stdout);
	fprintf(stderr, "%s: %lu instructions compared, %lu disagreements, "
	    "%lu failures\n", what, tot.compared, tot.dis_total, tot.dis_fail);
	cs_close(&cs_handle);
	ATF_CHECK_MSG(tot.compared > 0, "no instruction compared");
	ATF_CHECK_MSG(tot.dis_fail == 0, "%lu disagreements not explained "
	    "by a documented Capstone bug (see stderr)", tot.dis_fail);
}

ATF_TC(shared_objects);
ATF_TC_HEAD(shared_objects, tc)
{
	atf_tc_set_md_var(tc, "descr", "Lengths agree with Capstone on every "
	    "shared object in /usr/lib/x86_64-linux-gnu");
	atf_tc_set_md_var(tc, "timeout", "900");
}
ATF_TC_BODY(shared_objects, tc)
{
	const char *dir = "/usr/lib/x86_64-linux-gnu";

	setup(tc);
	if (access(dir, R_OK) != 0)
		atf_tc_skip("%s does not exist", dir);
	want_type_nftw = ET_DYN;
	ATF_REQUIRE(nftw(dir, visit, 32, FTW_PHYS) == 0);
	finish("shared_objects");
}

ATF_TC(kernel_modules);
ATF_TC_HEAD(kernel_modules, tc)
{
	atf_tc_set_md_var(tc, "descr", "Lengths agree with Capstone on every "
	    "kernel module of Debian's kernel package");
	atf_tc_set_md_var(tc, "timeout", "900");
}
ATF_TC_BODY(kernel_modules, tc)
{
	const char *root;
	char pat[4096];
	glob_t g;
	size_t i;

	setup(tc);
	if (!atf_tc_has_config_var(tc, "kernel_root"))
		atf_tc_skip("config variable kernel_root is not set "
		    "(run through tests/run)");
	root = atf_tc_get_config_var(tc, "kernel_root");
	snprintf(pat, sizeof(pat), "%s/lib/modules/*/kernel", root);
	if (glob(pat, 0, NULL, &g) != 0 || g.gl_pathc == 0)
		atf_tc_skip("no kernel modules under %s/lib/modules/*/kernel "
		    "(kinst_fetch_kernel in tests/lib/env.sh fetches them)",
		    root);
	want_type_nftw = ET_REL;
	for (i = 0; i < g.gl_pathc; i++)
		ATF_REQUIRE(nftw(g.gl_pathv[i], visit, 32, FTW_PHYS) == 0);
	globfree(&g);
	finish("kernel_modules");
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, kernel_modules);
	ATF_TP_ADD_TC(tp, shared_objects);
	return (atf_no_error());
}
