/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * C corpus for the out-of-line equivalence harness.  Compiled several times
 * (CMakeLists.txt) with different optimization flags and a different name
 * prefix KH_PFX (o0_, o2_, o2np_), each build exporting its own table
 * KH_TABLE.  No system calls, no libc calls: every memory effect goes to
 * kh_scratch.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kh.h"

#define	KH_CAT2(a, b)	a##b
#define	KH_CAT(a, b)	KH_CAT2(a, b)
#define	FN(n)		KH_CAT(KH_PFX, n)
#define	KH_STR2(x)	#x
#define	KH_STR(x)	KH_STR2(x)
#define	S		kh_scratch

/* Plain loop over a global array, RIP-relative reads and a store. */
uint64_t
FN(loop_sum)(uint64_t n, uint64_t stride)
{
	uint64_t s = 0;

	for (uint64_t i = 0; i < (n & 63); i++)
		s += S.q[(i * stride) & 63] ^ i;
	S.q[0] = s;
	return (s);
}

/* Dense switch: a jump table at -O2. */
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
	case 10: r = (y << 7) | (y >> 57); break;
	case 11: r = y + S.q[3]; break;
	case 12: r = y / 7; break;
	case 13: r = y % 13; break;
	default: r = 0; S.q[2] = y; break;
	}
	S.q[1] = r;
	return (r);
}

/* Recursion. */
uint64_t
FN(fib_rec)(uint64_t n)
{
	if (n < 2)
		return (n);
	return (FN(fib_rec)(n - 1) + FN(fib_rec)(n - 2));
}

static uint64_t op_add(uint64_t a, uint64_t b) { return (a + b); }
static uint64_t op_sub(uint64_t a, uint64_t b) { return (a - b); }
static uint64_t op_mul(uint64_t a, uint64_t b) { return (a * b); }
static uint64_t op_xor(uint64_t a, uint64_t b) { return (a ^ (b << 3)); }

typedef uint64_t (*kh_op_t)(uint64_t, uint64_t);
static kh_op_t const kh_ops[4] = { op_add, op_sub, op_mul, op_xor };

/* Calls through function pointers (a const table and one in scratch). */
uint64_t
FN(fnptr_apply)(uint64_t a, uint64_t b, uint64_t sel)
{
	uint64_t r = 0;

	for (uint64_t i = 0; i < 4; i++)
		r += kh_ops[(sel + i) & 3](a + r, b + i);
	S.fp = kh_ops[(sel + 1) & 3];
	__asm__ __volatile__("" ::: "memory");
	r ^= S.fp(r, a);
	S.q[5] = r;
	return (r);
}

static const uint64_t kh_tab[8] = {
	0x0123456789abcdefull, 0xfedcba9876543210ull, 17, 4242,
	0x8000000000000000ull, 1, 0xdeadbeefull, 99,
};

/* RIP-relative globals: read, write, read-modify-write. */
uint64_t
FN(globals_rw)(uint64_t a, uint64_t b)
{
	S.q[2] += a;
	S.d[3] = (uint32_t)b * 7;
	S.b[5] ^= (uint8_t)a;
	if (S.q[2] > 1000)
		S.q[4]++;
	S.d[9] += kh_tab[b & 7] >> 3;
	return (S.q[2] + S.d[3] + kh_tab[a & 7] + S.b[5]);
}

/* SSE scalar and (at -O2) vectorized float math. */
uint64_t
FN(sse_math)(uint64_t a, uint64_t b)
{
	double x = (double)(int64_t)a / 3.0;
	double y = __builtin_sqrt((double)(b & 0xffff) + 0.5);
	float k = (float)(a & 15) * 0.25f;
	union { double d; uint64_t u; } u;

	S.f[0] = x * x + y;
	S.f[1] = x > y ? x - y : y - x;
	for (int i = 0; i < 32; i++)
		S.v[i] = (float)(i + 1) * k + (float)(b & 7);
	u.d = S.f[0] + S.f[1] + (double)S.v[7];
	return (u.u ^ (uint64_t)(int64_t)(x * 1000.0));
}

/* String operations: an inline strlen loop, rep movsb, rep stosq, a byte loop. */
uint64_t
FN(string_ops)(uint64_t n, uint64_t c)
{
	size_t len = 0, cnt;
	void *dst, *src;
	uint64_t val;

	n &= 63;
	for (size_t i = 0; i < 40; i++)
		S.s[i] = (char)('a' + (i + c) % 26);
	S.s[n < 40 ? n : 39] = 0;
	while (S.s[len] != 0)
		len++;
	dst = &S.b[64];
	src = &S.s[0];
	cnt = n;
	__asm__ __volatile__("rep movsb" : "+D"(dst), "+S"(src), "+c"(cnt) :
	    : "memory");
	dst = &S.q[40];
	cnt = n & 7;
	val = c * 0x0101010101010101ull;
	__asm__ __volatile__("rep stosq" : "+D"(dst), "+c"(cnt) : "a"(val)
	    : "memory");
	for (size_t i = 0; i < n; i++)
		S.b[256 + i] = S.b[i] ^ (uint8_t)c;
	return (len * 1000 + n);
}

/* Atomics: lock xadd, lock cmpxchg, xchg, lock or. */
uint64_t
FN(atomics)(uint64_t a, uint64_t b)
{
	uint64_t old, exp;
	bool ok;

	old = __atomic_fetch_add(&S.q[10], a, __ATOMIC_SEQ_CST);
	exp = b;
	ok = __atomic_compare_exchange_n(&S.q[11], &exp, a, false,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	old ^= __atomic_exchange_n(&S.q[12], b, __ATOMIC_SEQ_CST);
	__atomic_or_fetch(&S.d[20], (uint32_t)a, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&S.d[21], 1, __ATOMIC_SEQ_CST);
	old += __atomic_fetch_sub(&S.q[13], b, __ATOMIC_RELAXED);
	return (old + exp + ok);
}

/* Nested loops, data-dependent branches. */
uint64_t
FN(bubble_sort)(uint64_t n)
{
	uint32_t *a = &S.d[32];

	n &= 31;
	for (uint64_t i = 0; i < n; i++)
		a[i] = (uint32_t)((i * 2654435761u) >> 7) & 0xfff;
	for (uint64_t i = 0; i + 1 < n; i++)
		for (uint64_t j = 0; j + 1 < n - i; j++)
			if (a[j] > a[j + 1]) {
				uint32_t t = a[j];
				a[j] = a[j + 1];
				a[j + 1] = t;
			}
	return (n ? a[0] + ((uint64_t)a[n - 1] << 32) : 0);
}

__attribute__((noinline)) static uint64_t
kh_mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f)
{
	return ((a * 31 + b) ^ (c * 17 + d) ^ ((e << 9) | (f >> 3)));
}

/* Six arguments, division, a call with all six registers live. */
uint64_t
FN(six_args)(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e,
    uint64_t f)
{
	uint64_t r = kh_mix(a, b, c, d, e, f);

	if (c > 2)
		r += a / (c | 1);
	r += (int64_t)d % 5 < 0 ? 1 : 2;
	S.q[6] = r;
	return (r + kh_mix(f, e, d, c, b, a));
}

/* Collatz steps: a data-dependent loop with a shift/multiply mix. */
uint64_t
FN(collatz)(uint64_t n)
{
	uint64_t steps = 0;

	n = (n & 0xff) + 1;
	while (n != 1 && steps < 200) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return (steps);
}

#define	E(n, ni, ...)	{ KH_STR(FN(n)), (void *)FN(n), 0, ni, { __VA_ARGS__ } }

const struct kh_fn KH_TABLE[] = {
	E(loop_sum, 3, { 0, 1 }, { 5, 3 }, { 17, 7 }),
	E(switch_dense, 16, { 0, 11 }, { 1, 12 }, { 2, 13 }, { 3, 14 },
	    { 4, 15 }, { 5, 16 }, { 6, 17 }, { 7, 18 }, { 8, 19 }, { 9, 20 },
	    { 10, 21 }, { 11, 22 }, { 12, 23 }, { 13, 24 }, { 14, 25 },
	    { 15, 26 }),
	E(fib_rec, 3, { 0 }, { 1 }, { 8 }),
	E(fnptr_apply, 3, { 1, 2, 0 }, { 100, 7, 1 }, { 5, 9, 2 }),
	E(globals_rw, 3, { 1, 2 }, { 2000, 5 }, { 7, 0xffffffff }),
	E(sse_math, 3, { 0, 0 }, { 12345, 99 }, { (uint64_t)-77, 65535 }),
	E(string_ops, 3, { 0, 1 }, { 5, 2 }, { 45, 25 }),
	E(atomics, 2, { 1, 2 }, { 7, 0x5555555555555555ull }),
	E(bubble_sort, 3, { 0 }, { 2 }, { 9 }),
	E(six_args, 2, { 1, 2, 3, 4, 5, 6 },
	    { (uint64_t)-1, 99, 0, (uint64_t)-7, 1ull << 40, 3 }),
	E(collatz, 2, { 6 }, { 26 }),
	{ NULL, NULL, 0, 0, { { 0 } } },
};
