/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AVX2 corpus: compiled with -O2 -mavx2 (CMakeLists.txt).  The harness runs
 * these only when the CPU and OS support AVX2 and says so when it skips.
 */
#include <stddef.h>
#include <stdint.h>

#include "kh.h"

#define	S	kh_scratch

/* Vectorized float multiply-add over two arrays. */
uint64_t
avx2_saxpy(uint64_t a, uint64_t b)
{
	float k = (float)(a & 31) * 0.5f;
	union { float f; uint32_t u; } u;
	float sum = 0.0f;

	for (int i = 0; i < 64; i++) {
		S.w[i] = (float)((i * (b | 1)) & 255);
		S.v[i] = k * (float)i + S.w[i];
	}
	for (int i = 0; i < 64; i++)
		sum += S.v[i];
	u.f = sum;
	return (u.u);
}

/* Vectorized integer reduction with shuffles and extracts. */
uint64_t
avx2_isum(uint64_t a, uint64_t b)
{
	uint32_t *d = &S.d[0];
	uint32_t s = 0, m = 0;

	for (int i = 0; i < 64; i++)
		d[i] = (uint32_t)(i * a + b);
	for (int i = 0; i < 64; i++) {
		s += d[i] ^ (uint32_t)b;
		m = d[i] > m ? d[i] : m;
	}
	return (((uint64_t)m << 32) | s);
}

const struct kh_fn kh_corpus_avx[] = {
	{ "avx2_saxpy", (void *)avx2_saxpy, KH_NEED_AVX2, 2,
	    { { 3, 5 }, { 17, 2 } } },
	{ "avx2_isum", (void *)avx2_isum, KH_NEED_AVX2, 2,
	    { { 3, 5 }, { 0x10001, 0xfffffff0 } } },
	{ NULL, NULL, 0, 0, { { 0 } } },
};
