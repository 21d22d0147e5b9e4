/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A64 encoders for the tests (a64_test on the host, a64_emu_check under
 * qemu-aarch64), written from the Arm ARM's field layouts, one per form;
 * off is the byte offset from the instruction (from its page for adrp,
 * in pages there).
 */
#ifndef KINST_A64_ENC_H
#define KINST_A64_ENC_H

#include <stdint.h>

static inline uint32_t
enc_b(int bl, int64_t off)
{
	return (bl ? 0x94000000u : 0x14000000u) | ((uint32_t)(off / 4) & 0x3ffffffu);
}

static inline uint32_t
enc_bcond(unsigned cond, int64_t off)
{
	return 0x54000000u | (((uint32_t)(off / 4) & 0x7ffffu) << 5) | cond;
}

static inline uint32_t
enc_cb(unsigned sf, unsigned nz, unsigned rt, int64_t off)
{
	return (sf << 31) | 0x34000000u | (nz << 24) |
	    (((uint32_t)(off / 4) & 0x7ffffu) << 5) | rt;
}

static inline uint32_t
enc_tb(unsigned bit, unsigned nz, unsigned rt, int64_t off)
{
	return ((bit >> 5) << 31) | 0x36000000u | (nz << 24) | ((bit & 31) << 19) |
	    (((uint32_t)(off / 4) & 0x3fffu) << 5) | rt;
}

static inline uint32_t
enc_adr(unsigned page, unsigned rd, int64_t imm)
{
	uint32_t v = (uint32_t)imm & 0x1fffffu;

	return (page << 31) | ((v & 3) << 29) | 0x10000000u | ((v >> 2) << 5) | rd;
}

/* opc: 0 ldr Wt/St, 1 ldr Xt/Dt, 2 ldrsw/ldr Qt, 3 prfm */
static inline uint32_t
enc_lit(unsigned opc, unsigned v, unsigned rt, int64_t off)
{
	return (opc << 30) | 0x18000000u | (v << 26) |
	    (((uint32_t)(off / 4) & 0x7ffffu) << 5) | rt;
}

/* xorshift64: the tests' random numbers, the same run after run. */
static inline uint64_t
a64_rnd(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif /* !KINST_A64_ENC_H */
