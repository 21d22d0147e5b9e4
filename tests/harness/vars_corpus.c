/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The variables corpus (vars_test.cc), compiled -g -O2: functions whose C
 * variables live in registers, stack slots, pieces of a split struct,
 * computed expressions and entry values, each with inputs whose values the
 * test knows.  No libc calls; memory effects go to kh_scratch.
 */
#include <stddef.h>
#include <stdint.h>

#include "kh.h"

#define	NI	__attribute__((noinline))
#define	S	kh_scratch

struct kv_pair {
	int32_t	lo;
	int32_t	hi;
};

/* A call that clobbers the argument registers, as any other function's. */
NI uint64_t
kv_mix(uint64_t x, uint64_t y)
{
	__asm__ volatile("" : "+r"(x), "+r"(y));
	return (x * 7 + y);
}

/* A loop: its counter and running sum, a pointer into kh_scratch. */
NI uint64_t
kv_loop(uint64_t off, int n)
{
	const uint32_t *a = S.d + (off & 15);
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += (uint64_t)a[i] * (uint64_t)(i + 1);
	return (sum);
}

/* A struct local split over two registers (DW_OP_piece). */
NI int64_t
kv_split(int64_t x, int64_t y)
{
	struct kv_pair p = { (int32_t)(x + 1), (int32_t)(y - 1) };
	int64_t r;

	r = (int64_t)kv_mix((uint64_t)(int64_t)p.lo, (uint64_t)(int64_t)p.hi);
	r = (int64_t)kv_mix((uint64_t)r, (uint64_t)(int64_t)p.lo);
	return (r + (int64_t)p.lo * p.hi);
}

/*
 * A 16-byte struct in pieces (issue 43): a computed first half, a register,
 * a computed last word; GCC leaves pieces of it optimized out in places.
 */
struct kv_big {
	int64_t	a;
	int32_t	b;
	int32_t	c;
};

NI int64_t
kv_big(int64_t x, int64_t y)
{
	struct kv_big s = { x * 3, (int32_t)(y + 2), (int32_t)(x ^ y) };
	int64_t r;

	r = (int64_t)kv_mix((uint64_t)s.a, (uint64_t)(int64_t)s.b);
	r = (int64_t)kv_mix((uint64_t)r, (uint64_t)s.a);
	return (r + s.b);
}

/* A nested struct in pieces: two 2-byte members of the inner one. */
struct kv_in {
	int16_t	u;
	int16_t	v;
};

struct kv_nest {
	struct kv_in in;
	int32_t	w;
	int64_t	z;
};

NI int64_t
kv_nest(int64_t x, int64_t y)
{
	struct kv_nest s = { { (int16_t)(x + 1), (int16_t)(y - 1) },
	    (int32_t)(x * y), x - y };
	int64_t r;

	r = (int64_t)kv_mix((uint64_t)(int64_t)s.in.u, (uint64_t)(int64_t)s.in.v);
	r = (int64_t)kv_mix((uint64_t)r, (uint64_t)s.z);
	r = (int64_t)kv_mix((uint64_t)r, (uint64_t)(int64_t)s.w);
	return (r + s.in.u + s.in.v + s.z);
}

/*
 * Bitfields in bit pieces: lo and mid (signed) straddle byte boundaries,
 * each in its own register; hi a byte of a third.
 */
struct kv_bits {
	uint32_t	lo : 12;
	int32_t		mid : 12;
	uint32_t	hi : 8;
	uint32_t	top;
};

NI int64_t
kv_bits(int64_t x, int64_t y)
{
	struct kv_bits s;
	int64_t r;

	s.lo = (uint32_t)x;
	s.mid = (int32_t)y;
	s.hi = (uint32_t)(x + y);
	s.top = (uint32_t)(x * 5);
	r = (int64_t)kv_mix(s.lo, (uint64_t)(int64_t)s.mid);
	r = (int64_t)kv_mix((uint64_t)r, s.hi);
	r = (int64_t)kv_mix((uint64_t)r, s.top);
	return (r + s.lo + s.mid + s.hi + s.top);
}

/* Parameters that die early: after the calls only their entry values are left. */
NI uint64_t
kv_early(uint64_t p, uint64_t q)
{
	uint64_t r;

	r = kv_mix(p, 3);
	r = kv_mix(r, q);
	return (r + 1);
}

/* An inlined helper with locals of its own, inlined twice. */
static inline __attribute__((always_inline)) uint64_t
kv_scale(uint64_t v, uint64_t k)
{
	uint64_t t = v * k;
	uint64_t u = t ^ (t >> 7);

	return (kv_mix(u, t));
}

NI uint64_t
kv_inl(uint64_t a, uint64_t b)
{
	uint64_t x = kv_scale(a, 3);
	uint64_t y = kv_scale(b + x, 5);

	return (x + y);
}

/*
 * Recursion: several activations on one thread, each with its own
 * parameters, which after the recursive call are only entry values.
 */
NI uint64_t
kv_rec(uint64_t n, uint64_t acc)
{
	uint64_t r;

	if (n == 0)
		return (acc);
	r = kv_rec(n - 1, acc * 2 + n);
	return (kv_mix(r, 1) + 1);
}

/* Locals in memory (DW_OP_fbreg through the CFA): an array whose address
 * escapes, a volatile counter. */
NI void
kv_fill(uint64_t *v, int n, uint64_t k)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = k * (uint64_t)(i + 3);
}

NI uint64_t
kv_stack(uint64_t seed)
{
	uint64_t buf[4];
	volatile uint32_t cnt = 0;
	int j;

	kv_fill(buf, 4, seed ^ 0x55);
	for (j = 0; j < 4; j++)
		cnt += (uint32_t)buf[j];
	return (buf[0] + buf[3] + cnt);
}

#define	E(n, ni, ...)	{ #n, (void *)n, 0, ni, { __VA_ARGS__ } }

const struct kh_fn kh_corpus_vars[] = {
	E(kv_loop, 4, { 0, 0 }, { 3, 5 }, { 7, 9 }, { 2, (uint64_t)-3 }),
	E(kv_split, 3, { 0, 0 }, { 5, 9 }, { (uint64_t)-7, 0x7fffffff }),
	E(kv_big, 3, { 0, 0 }, { 5, 9 }, { (uint64_t)-7, 0x123456789ull }),
	E(kv_bits, 3, { 0, 0 }, { 0xabc, (uint64_t)-5 }, { 0x12345, 0x7ff }),
	E(kv_nest, 3, { 0, 0 }, { 0x7fff, 3 }, { (uint64_t)-9, 0x10002 }),
	E(kv_early, 2, { 11, 22 }, { 0x123456789abcull, 0xfedcba987654ull }),
	E(kv_inl, 2, { 1, 2 }, { 1000, 77 }),
	E(kv_rec, 3, { 0, 5 }, { 1, 3 }, { 4, 1 }),
	E(kv_stack, 2, { 1 }, { 0xabcdef12345ull }),
	{ NULL, NULL, 0, 0, { { 0 } } },
};
