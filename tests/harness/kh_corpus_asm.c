/* SPDX-License-Identifier: BSD-2-Clause */
/* Input vectors for the hand-written corpus (corpus_asm.S) and the scratch area. */
#include <stddef.h>
#include <stdint.h>

#include "kh.h"

struct kh_scratch kh_scratch;

_Static_assert(offsetof(struct kh_scratch, d) == 0x200, "scratch layout");
_Static_assert(offsetof(struct kh_scratch, b) == 0x300, "scratch layout");
_Static_assert(offsetof(struct kh_scratch, s) == 0x800, "scratch layout");
_Static_assert(offsetof(struct kh_scratch, big) == 0xa00, "scratch layout");

uint64_t asm_jcc8(uint64_t), asm_jcc32(uint64_t), asm_jmp(uint64_t),
    asm_sub0(uint64_t), asm_call(uint64_t), asm_call_mem(uint64_t),
    asm_jmp_ind(uint64_t), asm_loop(uint64_t), asm_ret(uint64_t),
    asm_ret_pad(uint64_t),
    asm_pushf(uint64_t), asm_riprel(uint64_t), asm_avx_riprel(uint64_t),
    asm_avx512_riprel(uint64_t), asm_string(uint64_t), asm_atomic(uint64_t),
    asm_misc(uint64_t), asm_prefixes(uint64_t), asm_refusals(uint64_t);

#define	E(n, fl, ni, ...)	{ #n, (void *)n, fl, ni, { __VA_ARGS__ } }
/* Arithmetic flag combinations: every condition code both ways. */
#define	FLAGSETS	{ 0 }, { 0x8d5 }, { 0x001 }, { 0x040 }, { 0x080 }, \
	{ 0x800 }, { 0x880 }, { 0x004 }, { 0x041 }, { 0x840 }, { 0x0c0 }, \
	{ 0x010 }

const struct kh_fn kh_corpus_asm[] = {
	E(asm_jcc8, 0, 12, FLAGSETS),
	E(asm_jcc32, 0, 12, FLAGSETS),
	E(asm_jmp, 0, 3, { 1, 0, 0 }, { 5, 3, 2 }, { 9, 7, 3 }),
	E(asm_sub0, 0, 1, { 0 }),
	E(asm_call, 0, 4, { 1, 0 }, { 7, 1 }, { 3, 2 }, { 5, 3 }),
	E(asm_call_mem, 0, 4, { 1, 0 }, { 2, 1 }, { 3, 2 }, { 4, 3 }),
	E(asm_jmp_ind, 0, 4, { 1, 0, 0 }, { 2, 1, 1 }, { 3, 2, 2 },
	    { 4, 3, 3 }),
	E(asm_loop, 0, 6, { 0, 0, 0 }, { 1, 1, 1 }, { 3, 4, 0x100000003ull },
	    { 16, 5, 0x100000000ull }, { 5, 2, 2 }, { 7, 9, 0x200000007ull }),
	E(asm_ret, 0, 2, { 1, 2 }, { 5, 0xffff }),
	E(asm_ret_pad, 0, 3, { 5, 0 }, { 5, 1 }, { 9, 2 }),
	E(asm_pushf, 0, 4, { 1, 2 }, { (uint64_t)-1, 1 },
	    { 0x7fffffffffffffffull, 1 }, { 0, 0 }),
	E(asm_riprel, 0, 3, { 0 }, { (uint64_t)-3 }, { 12345 }),
	E(asm_avx_riprel, KH_NEED_AVX2, 2, { 1 }, { 99 }),
	E(asm_avx512_riprel, KH_NEED_AVX512, 1, { 1 }),
	E(asm_string, 0, 4, { 0 }, { 5 }, { 15 }, { 31 }),
	E(asm_atomic, 0, 2, { 1, 2 }, { 5, 0x0102030405060708ull }),
	E(asm_misc, 0, 2, { 0x0102030405060708ull, 3 }, { 1, 15 }),
	E(asm_prefixes, 0, 4, { 1, 0 }, { 2, 1 }, { 3, 2 }, { 4, 7 }),
	E(asm_refusals, 0, 1, { 1 }),
	{ NULL, NULL, 0, 0, { { 0 } } },
};
