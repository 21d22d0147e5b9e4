/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for kinst_decode().  Every decode runs on a heap copy
 * of exactly `avail' bytes, so ASan reports any read at or beyond the
 * limit; the structural invariants of a decode are checked with abort().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "x86/kinst_decode.h"

#define	CHECK(c) do {							\
	if (!(c)) {							\
		fprintf(stderr, "fuzz_decode: invariant failed: %s "	\
		    "(line %d)\n", #c, __LINE__);			\
		abort();						\
	}								\
} while (0)

static void
check(const uint8_t *buf, size_t avail, const struct kinst_insn *in, int st)
{
	unsigned len;

	CHECK(st == KINST_DEC_OK || st == KINST_DEC_TRUNCATED ||
	    st == KINST_DEC_INVALID);
	if (st != KINST_DEC_OK) {
		CHECK(in->len == 0);
		CHECK(kinst_insn_length(buf, avail) == 0);
		/* 15 bytes are enough to decide. */
		CHECK(st != KINST_DEC_TRUNCATED || avail < KINST_MAX_INSN_LEN);
		return;
	}
	len = in->len;
	CHECK(len >= 1 && len <= KINST_MAX_INSN_LEN && len <= avail);
	CHECK(kinst_insn_length(buf, avail) == len);
	CHECK(in->opcode_off < len && in->nprefixes <= in->opcode_off);
	if (in->has_modrm) {
		CHECK(in->modrm_off > in->opcode_off && in->modrm_off < len);
		CHECK(buf[in->modrm_off] == in->modrm);
		CHECK(in->mod == in->modrm >> 6);
		CHECK(in->reg == ((in->modrm >> 3) & 7));
		CHECK(in->rm == (in->modrm & 7));
	} else {
		CHECK(!in->has_sib && in->mod == 0 && in->reg == 0 &&
		    in->rm == 0);
	}
	if (in->has_sib)
		CHECK(in->modrm_off + 1u < len &&
		    buf[in->modrm_off + 1] == in->sib);
	CHECK(in->disp_size == 0 || in->disp_size == 1 ||
	    in->disp_size == 4 || in->disp_size == 8);
	if (in->disp_size)
		CHECK(in->disp_off > in->opcode_off &&
		    in->disp_off + in->disp_size <= len);
	CHECK(in->imm_size == 0 || in->imm_size == 1 || in->imm_size == 2 ||
	    in->imm_size == 4 || in->imm_size == 8);
	if (in->imm_size)
		CHECK(in->imm_off > in->opcode_off &&
		    in->imm_off + in->imm_size <= len);
	CHECK(in->imm2_size == 0 || (in->imm2_size == 1 &&
	    in->imm2_off == in->imm_off + in->imm_size));
	CHECK((in->imm2_size ? in->imm2_off + in->imm2_size :
	    in->imm_size ? in->imm_off + in->imm_size :
	    in->disp_size ? in->disp_off + in->disp_size : len) == len);
	if (in->rip_relative)
		CHECK(in->disp_size == 4 && in->mod == 0 && in->rm == 5 &&
		    !in->has_sib);
	CHECK(in->opsize == 2 || in->opsize == 4 || in->opsize == 8);
	CHECK(in->addrsize == 4 || in->addrsize == 8);
	CHECK(in->rex == 0 || (in->rex & 0xf0) == 0x40);
	CHECK(in->vex_l <= 3 && in->vex_pp <= 3);
}

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kinst_insn full, in;
	uint8_t *buf;
	size_t avail, off, n;
	int fst, st;

	/* Every limit 0..min(size, 16) on the start of the input. */
	n = size < KINST_MAX_INSN_LEN + 1 ? size : KINST_MAX_INSN_LEN + 1;
	buf = malloc(n ? n : 1);
	if (buf == NULL)
		return (0);
	memcpy(buf, data, n);
	fst = kinst_decode(buf, n, &full);
	check(buf, n, &full, fst);
	free(buf);
	for (avail = 0; avail <= n; avail++) {
		buf = malloc(avail ? avail : 1);
		if (buf == NULL)
			return (0);
		memcpy(buf, data, avail);
		/* Exactly `avail' bytes: the copy ends the allocation. */
		st = kinst_decode(avail ? buf : buf + 1, avail, &in);
		check(buf, avail, &in, st);
		if (fst == KINST_DEC_OK) {
			CHECK(avail >= full.len ? (st == KINST_DEC_OK &&
			    in.len == full.len && in.disp == full.disp &&
			    in.imm == full.imm) : st == KINST_DEC_TRUNCATED);
		} else if (fst == KINST_DEC_INVALID) {
			CHECK(st != KINST_DEC_OK);
		}
		free(buf);
	}

	/* A linear sweep over the whole input, as over a function. */
	buf = malloc(size ? size : 1);
	if (buf == NULL)
		return (0);
	memcpy(buf, data, size);
	for (off = 0; off < size;) {
		st = kinst_decode(buf + off, size - off, &in);
		check(buf + off, size - off, &in, st);
		off += st == KINST_DEC_OK ? in.len : 1;
	}
	free(buf);
	return (0);
}
