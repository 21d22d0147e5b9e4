/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64 (64-bit mode only) instruction decoder: length and structure.
 *
 * kinst_decode() never reads bytes at or beyond buf[avail]; an instruction
 * that would need more bytes than are available is KINST_DEC_TRUNCATED, not a
 * guess.  An encoding that is invalid in 64-bit mode (e.g. 0x06 push %es,
 * 0xd6, 0xc4/0xc5 LES/LDS forms, undefined 0F-map opcodes, a VEX prefix after
 * a REX or legacy 66/F2/F3/F0 prefix, more than 15 bytes) is
 * KINST_DEC_INVALID.  The decoder knows lengths and operand structure, not
 * semantics; the classifier (kinst_classify.h) decides what may be traced.
 */
#ifndef KINST_DECODE_H
#define KINST_DECODE_H

#include "kinst_types.h"

#define	KINST_MAX_INSN_LEN	15

enum kinst_dec_status {
	KINST_DEC_OK = 0,
	KINST_DEC_TRUNCATED = 1,	/* ran into the caller's limit */
	KINST_DEC_INVALID = 2,		/* not a valid 64-bit-mode encoding */
};

/* Opcode maps.  For VEX/EVEX the map comes from the mmmmm/mm field. */
enum kinst_map {
	KINST_MAP_1BYTE = 0,	/* primary map */
	KINST_MAP_0F = 1,
	KINST_MAP_0F38 = 2,
	KINST_MAP_0F3A = 3,
	KINST_MAP_XOP8 = 8,	/* AMD XOP maps 8, 9, 0xA */
	KINST_MAP_XOP9 = 9,
	KINST_MAP_XOPA = 10,
	KINST_MAP_EVEX5 = 5,	/* AVX512-FP16 maps */
	KINST_MAP_EVEX6 = 6,
};

/* Encoding family of the opcode escape. */
enum kinst_enc {
	KINST_ENC_LEGACY = 0,
	KINST_ENC_VEX2 = 1,
	KINST_ENC_VEX3 = 2,
	KINST_ENC_EVEX = 3,
	KINST_ENC_XOP = 4,
};

/* Legacy prefixes seen (bit set if present anywhere in the prefix run). */
#define	KINST_PFX_66	0x0001u		/* operand size */
#define	KINST_PFX_67	0x0002u		/* address size */
#define	KINST_PFX_F0	0x0004u		/* lock */
#define	KINST_PFX_F2	0x0008u		/* repne / bnd / xacquire */
#define	KINST_PFX_F3	0x0010u		/* rep / xrelease */
#define	KINST_PFX_CS	0x0020u		/* 0x2e (also "not taken" hint) */
#define	KINST_PFX_SS	0x0040u		/* 0x36 */
#define	KINST_PFX_DS	0x0080u		/* 0x3e (also "taken" hint, notrack) */
#define	KINST_PFX_ES	0x0100u		/* 0x26 */
#define	KINST_PFX_FS	0x0200u		/* 0x64 */
#define	KINST_PFX_GS	0x0400u		/* 0x65 */

/*
 * Operand-size / immediate conventions follow the SDM.  Offsets are byte
 * offsets from the first byte of the instruction; a size of 0 means the field
 * is absent.  An instruction has at most two immediates (ENTER iw,ib;
 * EXTRQ/INSERTQ ib,ib); imm2 is the second.
 */
struct kinst_insn {
	uint8_t		len;		/* total length, 1..15 */
	uint8_t		enc;		/* enum kinst_enc */
	uint8_t		map;		/* enum kinst_map */
	uint8_t		opcode;		/* the opcode byte within its map */
	uint16_t	prefixes;	/* KINST_PFX_* */
	uint8_t		nprefixes;	/* count of legacy prefix bytes */
	uint8_t		rex;		/* REX byte (0x40..0x4f) or 0 */
	uint8_t		rex_w, rex_r, rex_x, rex_b; /* REX or VEX/EVEX equivalents, 0/1 */
	uint8_t		vex_l;		/* VEX.L / EVEX.L'L (0..3) */
	uint8_t		vex_pp;		/* VEX/EVEX pp (0: none, 1: 66, 2: F3, 3: F2) */
	uint8_t		opcode_off;	/* offset of the opcode byte */
	uint8_t		has_modrm;
	uint8_t		modrm;
	uint8_t		modrm_off;
	uint8_t		mod, reg, rm;	/* ModRM fields, reg/rm WITHOUT REX extension */
	uint8_t		has_sib;
	uint8_t		sib;
	uint8_t		disp_off, disp_size;	/* disp size 0, 1, 2 (never in 64-bit), 4 or 8 (moffs) */
	uint8_t		imm_off, imm_size;	/* first immediate */
	uint8_t		imm2_off, imm2_size;	/* second immediate */
	uint8_t		opsize;		/* effective operand size: 2, 4 or 8 */
	uint8_t		addrsize;	/* effective address size: 4 or 8 */
	uint8_t		rip_relative;	/* mod == 0, rm == 5, no SIB: disp32 is RIP-relative */
	int64_t		disp;		/* sign-extended displacement (moffs: zero-extended) */
	int64_t		imm;		/* first immediate, sign-extended from imm_size */
	int64_t		imm2;		/* second immediate */
	/* Added after the original layout: */
	uint8_t		seg;		/* effective segment override byte (last of 26/2e/36/3e/64/65 wins) or 0 */
};

/*
 * Vendor differences (docs/decoder.md): a 66-prefixed near branch (66 E8,
 * 66 E9, 66 0F 8x, 66 C7 F8) decodes as rel16 with opsize 2, as on AMD and
 * in Capstone and objdump; Intel CPUs ignore the 66 and take a rel32, so the
 * length differs by vendor and such an instruction must not be traced.
 * imm is sign-extended even where the operand is unsigned (ret/enter iw).
 */

/*
 * Decode one instruction at buf, which has avail readable bytes (a limit of
 * more than KINST_MAX_INSN_LEN is fine; no more than 15 are ever read).
 * On KINST_DEC_OK *out is fully filled; otherwise out->len is 0.
 */
int	kinst_decode(const uint8_t *buf, size_t avail, struct kinst_insn *out);

/* Convenience: length only (0 when not OK). */
uint8_t	kinst_insn_length(const uint8_t *buf, size_t avail);

#endif /* !KINST_DECODE_H */
