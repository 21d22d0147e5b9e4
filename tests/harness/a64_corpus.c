/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C corpus for a64_harness, compiled twice for arm64 (-O0 with frame
 * pointers and a stack protector, -O2; -mno-outline-atomics, so the
 * atomics are load/store-exclusive loops the classifier must refuse),
 * each build with its own name prefix (KH_PFX: kh64_o0_, kh64_o2_).
 * Every function is uint64_t f(uint64_t, uint64_t); no system calls, no
 * libc: every memory effect goes to kh64_scratch.
 */
#include <stdint.h>

#define	KH_CAT2(a, b)	a##b
#define	KH_CAT(a, b)	KH_CAT2(a, b)
#define	FN(n)		KH_CAT(KH_PFX, n)

extern uint64_t kh64_scratch[512];
#define	S	kh64_scratch

uint64_t FN(loop_sum)(uint64_t n, uint64_t stride);
uint64_t FN(switch_dense)(uint64_t x, uint64_t y);
uint64_t FN(fib_rec)(uint64_t n, uint64_t unused);
uint64_t FN(fnptr_apply)(uint64_t x, uint64_t which);
uint64_t FN(globals_rw)(uint64_t x, uint64_t y);
uint64_t FN(bubble_sort)(uint64_t seed, uint64_t n);
uint64_t FN(collatz)(uint64_t n, uint64_t limit);
uint64_t FN(atomics)(uint64_t x, uint64_t y);
uint64_t FN(float_math)(uint64_t x, uint64_t y);
uint64_t FN(bits)(uint64_t x, uint64_t y);

uint64_t
FN(loop_sum)(uint64_t n, uint64_t stride)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < (n & 63); i++)
		s += S[(i * stride) & 63] ^ i;
	S[0] = s;
	return s;
}

__attribute__((noinline)) uint64_t
FN(switch_dense)(uint64_t x, uint64_t y)
{
	uint64_t r;

	switch (x & 15) {
	case 0: r = y + 1; break;
	case 1: r = y * 3; break;
	case 2: r = y ^ 0x55; break;
	case 3: r = y << 5; break;
	case 4: r = y >> 3; break;
	case 5: r = y - 77; break;
	case 6: r = ~y; break;
	case 7: r = y * y; break;
	case 8: r = y | 0x1000; break;
	case 9: r = y & 0xff00; break;
	case 10: r = y + x; break;
	case 11: r = y - x; break;
	default: r = 42; break;
	}
	S[1] = r;
	return r;
}

__attribute__((noinline)) uint64_t
FN(fib_rec)(uint64_t n, uint64_t unused)
{
	(void)unused;
	n &= 15;
	if (n < 2)
		return n;
	return FN(fib_rec)(n - 1, 0) + FN(fib_rec)(n - 2, 0);
}

static __attribute__((noinline)) uint64_t
twice(uint64_t v)
{
	return v * 2 + 1;
}

static __attribute__((noinline)) uint64_t
square(uint64_t v)
{
	return v * v;
}

uint64_t
FN(fnptr_apply)(uint64_t x, uint64_t which)
{
	static uint64_t (*const fns[2])(uint64_t) = { twice, square };
	uint64_t (*volatile f)(uint64_t) = fns[which & 1];

	return f(x) + f(x + 1);
}

uint64_t
FN(globals_rw)(uint64_t x, uint64_t y)
{
	S[5] += x;
	S[2] = S[5] ^ y;
	S[3] = (uint32_t)(x * y);
	return S[5] + S[2];
}

uint64_t
FN(bubble_sort)(uint64_t seed, uint64_t n)
{
	uint32_t *a = (uint32_t *)&S[64];
	uint64_t i, j, sum = 0;

	n = (n & 15) + 2;
	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		a[i] = (uint32_t)(seed >> 33);
	}
	for (i = 0; i < n; i++)
		for (j = 0; j + 1 < n - i; j++)
			if (a[j] > a[j + 1]) {
				uint32_t t = a[j];
				a[j] = a[j + 1];
				a[j + 1] = t;
			}
	for (i = 0; i < n; i++)
		sum = sum * 31 + a[i];
	return sum;
}

uint64_t
FN(collatz)(uint64_t n, uint64_t limit)
{
	uint64_t steps = 0;

	n = (n & 1023) + 1;
	limit = (limit & 255) + 16;
	while (n != 1 && steps < limit) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return steps;
}

uint64_t
FN(atomics)(uint64_t x, uint64_t y)
{
	uint64_t old = __atomic_fetch_add(&S[8], x, __ATOMIC_SEQ_CST);
	uint64_t expect = S[9];

	__atomic_compare_exchange_n(&S[9], &expect, expect ^ y, 0,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old + __atomic_exchange_n(&S[10], x + y, __ATOMIC_ACQ_REL);
}

uint64_t
FN(float_math)(uint64_t x, uint64_t y)
{
	double a = (double)(x & 0xffff), b = (double)(y & 0xff) + 0.5;
	float c = (float)a / (float)b;

	S[4] = (uint64_t)(a * b);
	return (uint64_t)(a / b) + (uint64_t)c;
}

uint64_t
FN(bits)(uint64_t x, uint64_t y)
{
	uint64_t r = __builtin_popcountll(x) + __builtin_clzll(y | 1) +
	    __builtin_ctzll(x | 0x8000);

	if (x & (1ull << 45))
		r += 7;
	if (!(y & 4))
		r ^= 0x1234;
	return r + ((x >> (y & 63)) | (x << (64 - (y & 63) - 1)));
}
