/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * decode_bench [DIR]: decoder throughput, kinst_decode() vs Capstone.
 *
 * Loads the executable sections of every .ko under DIR (default: the
 * kernel modules of Debian's kernel package in the kinst cache) into memory
 * once, then times a linear sweep over all of them with kinst_decode() and
 * with Capstone (cs_disasm_iter, detail off), best of several rounds each,
 * in the same run.  A byte a decoder cannot decode is skipped.  Prints
 * instructions, CPU seconds and instructions/s for each and the ratio.
 */
#include <sys/stat.h>

#include <capstone/capstone.h>
#include <err.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "x86/kinst_decode.h"

#define	ROUNDS	5

struct text {
	uint8_t		*p;
	size_t		size;
	uint64_t	addr;
};

static struct text *texts;
static size_t ntexts, texts_cap, total_bytes, nfiles;

static void
load(const char *path)
{
	Elf *e;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e == NULL || elf_kind(e) != ELF_K_ELF) {
		if (e != NULL)
			elf_end(e);
		close(fd);
		return;
	}
	nfiles++;
	for (scn = NULL; (scn = elf_nextscn(e, scn)) != NULL;) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_size == 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (d == NULL || d->d_buf == NULL)
			continue;
		if (ntexts == texts_cap) {
			texts_cap = texts_cap ? 2 * texts_cap : 4096;
			texts = realloc(texts, texts_cap * sizeof(*texts));
			if (texts == NULL)
				err(1, "realloc");
		}
		texts[ntexts].p = malloc(d->d_size);
		if (texts[ntexts].p == NULL)
			err(1, "malloc");
		memcpy(texts[ntexts].p, d->d_buf, d->d_size);
		texts[ntexts].size = d->d_size;
		texts[ntexts].addr = sh.sh_addr;
		total_bytes += d->d_size;
		ntexts++;
	}
	elf_end(e);
	close(fd);
}

static int
visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t n;

	(void)st;
	(void)ftw;
	n = strlen(path);
	if (flag == FTW_F && n > 3 && strcmp(path + n - 3, ".ko") == 0)
		load(path);
	return (0);
}

/*
 * CPU time of this (single-threaded) process: the machine may be shared,
 * and wall-clock time would charge other processes' load to whichever
 * decoder happened to run at the time.
 */
static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (ts.tv_sec + ts.tv_nsec * 1e-9);
}

static unsigned long
sweep_kinst(void)
{
	struct kinst_insn in;
	unsigned long n;
	size_t i, off;

	n = 0;
	for (i = 0; i < ntexts; i++) {
		for (off = 0; off < texts[i].size;) {
			if (kinst_decode(texts[i].p + off, texts[i].size - off,
			    &in) == KINST_DEC_OK) {
				off += in.len;
				n++;
			} else {
				off++;
			}
		}
	}
	return (n);
}

static unsigned long
sweep_capstone(csh h)
{
	cs_insn *ci;
	const uint8_t *code;
	unsigned long n;
	uint64_t addr;
	size_t i, size;

	n = 0;
	ci = cs_malloc(h);
	if (ci == NULL)
		errx(1, "cs_malloc failed");
	for (i = 0; i < ntexts; i++) {
		code = texts[i].p;
		size = texts[i].size;
		addr = texts[i].addr;
		while (size > 0) {
			if (cs_disasm_iter(h, &code, &size, &addr, ci)) {
				n++;
			} else {
				code++;
				size--;
				addr++;
			}
		}
	}
	cs_free(ci, 1);
	return (n);
}

int
main(int argc, char **argv)
{
	char def[4096];
	const char *dir, *cache;
	double t0, tk, tc, best_k, best_c;
	unsigned long nk, nc;
	csh h;
	int r;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: decode_bench [DIR]\n");
		return (2);
	}
	if (argc == 2) {
		dir = argv[1];
	} else {
		cache = getenv("KINST_CACHE");
		if (cache != NULL)
			snprintf(def, sizeof(def), "%s/kernel/root/lib/modules",
			    cache);
		else
			snprintf(def, sizeof(def), "%s/.cache/kinst/kernel/root/"
			    "lib/modules", getenv("HOME") ? getenv("HOME") : "");
		dir = def;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		errx(1, "libelf: %s", elf_errmsg(-1));
	if (nftw(dir, visit, 32, FTW_PHYS) != 0)
		err(1, "%s", dir);
	if (total_bytes == 0)
		errx(1, "%s: no executable sections in any .ko file", dir);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		errx(1, "cs_open failed");
	cs_option(h, CS_OPT_DETAIL, CS_OPT_OFF);
	printf("corpus: %s: %zu .ko files, %zu executable sections, %zu bytes\n",
	    dir, nfiles, ntexts, total_bytes);

	best_k = best_c = 1e30;
	nk = nc = 0;
	for (r = 0; r < ROUNDS; r++) {
		t0 = now();
		nk = sweep_kinst();
		tk = now() - t0;
		t0 = now();
		nc = sweep_capstone(h);
		tc = now() - t0;
		if (tk < best_k)
			best_k = tk;
		if (tc < best_c)
			best_c = tc;
	}
	cs_close(&h);
	printf("kinst_decode: %lu instructions, %.3f CPU s, "
	    "%.1f M instructions/s\n", nk, best_k, nk / best_k / 1e6);
	printf("capstone:     %lu instructions, %.3f CPU s, "
	    "%.1f M instructions/s\n", nc, best_c, nc / best_c / 1e6);
	printf("ratio: kinst_decode is %.1fx Capstone's throughput "
	    "(best of %d rounds each)\n", (nk / best_k) / (nc / best_c),
	    ROUNDS);
	return (0);
}
