/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64 (64-bit mode) instruction decoder: length and operand structure.
 *
 * Table driven: every opcode map has a 256-entry table of attribute words
 * (has ModRM, immediate kind, default-64 operand size, invalid, needs a
 * ModRM-dependent check).  Prefixes are classified by a 256-entry table too.
 * The decoder reads at most KINST_MAX_INSN_LEN bytes and never reads at or
 * beyond buf[avail].  See docs/decoder.md for the design and for the places
 * where Intel and AMD (and the reference disassemblers) differ.
 */
#include "kinst_decode.h"

/* Attribute word of an opcode. */
#define	I_NONE	0x0000u		/* no immediate */
#define	I_B	0x0001u		/* ib */
#define	I_W	0x0002u		/* iw */
#define	I_Z	0x0003u		/* iz: 2 with a 16-bit operand size, else 4 */
#define	I_V	0x0004u		/* iv: 2, 4 or 8 (mov r, imm64) */
#define	I_MOFFS	0x0005u		/* moffs: address size (8, or 4 with 67) */
#define	I_ENTER	0x0006u		/* iw, ib */
#define	I_D	0x0007u		/* id: always 4 (XOP map 0xA) */
#define	I_MASK	0x000fu
#define	M	0x0010u		/* has a ModRM byte */
#define	D64	0x0020u		/* operand size defaults to 64 bits */
#define	X	0x0040u		/* invalid in 64-bit mode / undefined */
#define	SP	0x0080u		/* ModRM- or prefix-dependent: see decode_special() */
#define	RO	0x0100u		/* ModRM.mod ignored: always a register operand */
#define	ESC	0x0200u		/* handled before the table lookup */

/* Immediate size by kind (I_*) and operand size 2, 4, 8 (index opsize/4). */
static const uint8_t imm_sizes[8][3] = {
	[I_NONE] = { 0, 0, 0 },	[I_B] = { 1, 1, 1 },	[I_W] = { 2, 2, 2 },
	[I_Z] = { 2, 4, 4 },	[I_V] = { 2, 4, 8 },	[I_MOFFS] = { 0, 0, 0 },
	[I_ENTER] = { 2, 2, 2 }, [I_D] = { 4, 4, 4 },
};

#define	B	I_B
#define	W	I_W
#define	Z	I_Z
#define	MB	(M | I_B)
#define	MZ	(M | I_Z)
#define	BR	(I_B | D64)		/* rel8 branch */
#define	ZR	(I_Z | D64)		/* rel16/32 branch */
#define	__	0x0000u			/* valid, no ModRM, no immediate */

/* Primary (one-byte) opcode map. */
static const uint16_t map1[256] = {
/*	 0    1    2    3    4    5    6    7    8    9    a    b    c    d    e    f */
/*0*/	 M,   M,   M,   M,   B,   Z,   X,   X,   M,   M,   M,   M,   B,   Z,   X,   ESC,
/*1*/	 M,   M,   M,   M,   B,   Z,   X,   X,   M,   M,   M,   M,   B,   Z,   X,   X,
/*2*/	 M,   M,   M,   M,   B,   Z,   ESC, X,   M,   M,   M,   M,   B,   Z,   ESC, X,
/*3*/	 M,   M,   M,   M,   B,   Z,   ESC, X,   M,   M,   M,   M,   B,   Z,   ESC, X,
/*4*/	 ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC,
/*5*/	 D64, D64, D64, D64, D64, D64, D64, D64, D64, D64, D64, D64, D64, D64, D64, D64,
/*6*/	 X,   X,   ESC, M,   ESC, ESC, ESC, ESC, Z|D64, MZ, B|D64, MB, __, __,  __,  __,
/*7*/	 BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,  BR,
/*8*/	 MB,  MZ,  X,   MB,  M,   M,   M,   M,   M,   M,   M,   M,   M|SP, M|SP, M|SP, ESC,
/*9*/	 __,  __,  __,  __,  __,  __,  __,  __,  __,  __,  X,   __,  D64, D64, __,  __,
/*a*/	 I_MOFFS, I_MOFFS, I_MOFFS, I_MOFFS, __, __, __, __, B, Z, __, __, __, __, __, __,
/*b*/	 B,   B,   B,   B,   B,   B,   B,   B,   I_V, I_V, I_V, I_V, I_V, I_V, I_V, I_V,
/*c*/	 MB,  MB,  W|D64, D64, ESC, ESC, MB|SP, MZ|SP, I_ENTER|D64, D64, W, __, __, B, X, __,
/*d*/	 M,   M,   M,   M,   X,   X,   X,   __,  M|SP, M|SP, M|SP, M|SP, M|SP, M|SP, M|SP, M|SP,
/*e*/	 BR,  BR,  BR,  BR,  B,   B,   B,   B,   ZR,  ZR,  X,   BR,  __,  __,  __,  __,
/*f*/	 ESC, __,  ESC, ESC, __,  __,  M|SP, M|SP, __, __,  __,  __,  __,  __,  M|SP, M|SP,
};

/* Two-byte map, 0F xx. */
static const uint16_t map0f[256] = {
/*	 0    1    2    3    4    5    6    7    8    9    a    b    c    d    e    f */
/*0*/	 M|SP, M,  M,   M,   X,   __,  __,  __,  __,  __,  X,   __,  X,   M,   __,  MB|SP,
/*1*/	 M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,
/*2*/	 M|RO, M|RO, M|RO, M|RO, X, X,   X,   X,   M,   M,   M,   M,   M,   M,   M,   M,
/*3*/	 __,  __,  __,  __,  __,  __,  X,   __,  ESC, X,   ESC, X,   X,   X,   X,   X,
/*4*/	 M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,
/*5*/	 M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,
/*6*/	 M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M|SP, M|SP, M, M,
/*7*/	 MB,  MB|SP, MB|SP, MB|SP,  M,   M,   M,   __,  M|SP, M|SP, X,  X,   M,   M,   M,   M,
/*8*/	 ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,  ZR,
/*9*/	 M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,
/*a*/	 D64, D64, __,  M,   MB,  M,   M|SP, M|SP, D64, D64, __,  M,   MB,  M,   M|SP, M,
/*b*/	 M,   M,   M,   M,   M,   M,   M,   M,   M|SP, M,  MB|SP, M,  M,   M,   M,   M,
/*c*/	 M,   M,   MB,  M,   MB,  MB,  MB,  M|SP, __, __,  __,  __,  __,  __,  __,  __,
/*d*/	 M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,
/*e*/	 M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,
/*f*/	 M|SP, M,  M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,   M,
};

/*
 * Defined opcodes of the legacy 0F 38 and 0F 3A maps (1 = defined).  Every
 * 0F 38 opcode has a ModRM and no immediate; every 0F 3A opcode has a ModRM
 * and an imm8.
 */
static const uint8_t ok_0f38[256] = {
	[0x00 ... 0x0b] = 1,	/* pshufb .. pmulhrsw */
	[0x10] = 1, [0x14 ... 0x15] = 1, [0x17] = 1, /* blendv*, ptest */
	[0x1c ... 0x1e] = 1,	/* pabs* */
	[0x20 ... 0x25] = 1,	/* pmovsx* */
	[0x28 ... 0x2b] = 1,	/* pmuldq .. packusdw */
	[0x30 ... 0x35] = 1,	/* pmovzx* */
	[0x37 ... 0x41] = 1,	/* pcmpgtq, pmin*, pmax*, pmulld, phminposuw */
	[0x80 ... 0x82] = 1,	/* invept, invvpid, invpcid */
	[0xc8 ... 0xcd] = 1,	/* sha* */
	[0xcf] = 1,		/* gf2p8mulb */
	[0xd8 ... 0xdf] = 1,	/* aes*, Key Locker */
	[0xf0 ... 0xf1] = 1,	/* movbe, crc32 */
	[0xf5 ... 0xf6] = 1,	/* wrss*, adcx/adox */
	[0xf8 ... 0xfc] = 1,	/* movdir64b, enqcmd*, movdiri, Key Locker */
};
static const uint8_t ok_0f3a[256] = {
	[0x08 ... 0x0f] = 1,	/* round*, blend*, palignr */
	[0x14 ... 0x17] = 1,	/* pextr*, extractps */
	[0x20 ... 0x22] = 1,	/* pinsr*, insertps */
	[0x40 ... 0x42] = 1,	/* dpps, dppd, mpsadbw */
	[0x44] = 1,		/* pclmulqdq */
	[0x60 ... 0x63] = 1,	/* pcmp[ei]str[im] */
	[0xcc] = 1,		/* sha1rnds4 */
	[0xce ... 0xcf] = 1,	/* gf2p8affine* */
	[0xdf] = 1,		/* aeskeygenassist */
	[0xf0] = 1,		/* hreset */
};

/*
 * VEX and EVEX opcode tables: for each opcode, the set of VEX.pp / EVEX.pp
 * values it is defined with (bit n: pp == n, i.e. 1: none, 2: 66, 4: F3,
 * 8: F2; 0: undefined) and operand constraints that make an encoding #UD.
 */
#define	PN	0x01u		/* no SIMD prefix */
#define	P66	0x02u
#define	PF3	0x04u
#define	PF2	0x08u
#define	PALL	0x0fu
#define	NOV	0x10u		/* VEX.vvvv unused: must be 1111b */
#define	L0	0x20u		/* VEX.L must be 0 */
#define	L1	0x40u		/* VEX.L must be 1 */

static const uint8_t vex_ops[3][256] = {
	{	/* VEX map 1 (0F) */
		[0x10 ... 0x12] = PALL, [0x13] = PN | P66 | NOV | L0,
		[0x14 ... 0x15] = PN | P66, [0x16] = PN | P66 | PF3,
		[0x17] = PN | P66 | NOV | L0,
		[0x28 ... 0x29] = PN | P66 | NOV, [0x2a] = PF3 | PF2,
		[0x2b] = PN | P66 | NOV, [0x2c ... 0x2d] = PF3 | PF2 | NOV,
		[0x2e ... 0x2f] = PN | P66 | NOV,
		/* k-mask instructions (AVX-512 in VEX form) */
		[0x41 ... 0x42] = PN | P66 | L1, [0x44] = PN | P66 | NOV | L0,
		[0x45 ... 0x47] = PN | P66 | L1, [0x4a] = PN | P66 | L1,
		[0x4b] = PN | P66 | L1,
		[0x50] = PN | P66 | NOV, [0x51] = PALL, [0x52 ... 0x53] = PN | PF3,
		[0x54 ... 0x57] = PN | P66, [0x58 ... 0x5a] = PALL,
		[0x5b] = PN | P66 | PF3 | NOV, [0x5c ... 0x5f] = PALL,
		[0x60 ... 0x6d] = P66, [0x6e] = P66 | NOV | L0,
		[0x6f] = P66 | PF3 | NOV, [0x70] = P66 | PF3 | PF2 | NOV,
		[0x71 ... 0x76] = P66, [0x77] = PN | NOV,
		[0x7c ... 0x7d] = P66 | PF2, [0x7e] = P66 | PF3 | NOV | L0,
		[0x7f] = P66 | PF3 | NOV,
		[0x90 ... 0x91] = PN | P66 | NOV | L0,
		[0x92 ... 0x93] = PN | P66 | PF2 | NOV | L0,
		[0x98 ... 0x99] = PN | P66 | NOV | L0,
		[0xae] = PN | NOV | L0,
		[0xc2] = PALL, [0xc4] = P66 | L0, [0xc5] = P66 | NOV | L0,
		[0xc6] = PN | P66,
		[0xd0] = P66 | PF2, [0xd1 ... 0xd5] = P66,
		[0xd6] = P66 | NOV | L0, [0xd7] = P66 | NOV,
		[0xd8 ... 0xe5] = P66, [0xe6] = P66 | PF3 | PF2 | NOV,
		[0xe7] = P66 | NOV, [0xe8 ... 0xef] = P66,
		[0xf0] = PF2 | NOV, [0xf1 ... 0xf6] = P66, [0xf7] = P66 | NOV,
		[0xf8 ... 0xfe] = P66,
	},
	{	/* VEX map 2 (0F38): 66 unless noted */
		[0x00 ... 0x0f] = P66, [0x13] = P66 | NOV,
		[0x16] = P66, [0x17] = P66 | NOV, [0x18 ... 0x1a] = P66 | NOV,
		[0x1c ... 0x1e] = P66 | NOV,
		[0x20 ... 0x25] = P66 | NOV, [0x28 ... 0x29] = P66,
		[0x2a] = P66 | NOV, [0x2b ... 0x2f] = P66,
		[0x30 ... 0x35] = P66 | NOV, [0x36 ... 0x40] = P66,
		[0x41] = P66 | NOV, [0x45 ... 0x47] = P66,
		[0x49] = PALL, [0x4b] = P66 | PF3 | PF2,	/* AMX */
		[0x5c] = PF3, [0x5e] = PALL,
		[0x50 ... 0x51] = PALL, [0x52 ... 0x53] = P66, /* VNNI */
		[0x58 ... 0x5a] = P66 | NOV,
		[0x72] = PF3,
		[0x78 ... 0x79] = P66 | NOV,
		[0x8c] = P66, [0x8e] = P66, [0x90 ... 0x93] = P66,
		[0x96 ... 0x9f] = P66, [0xa6 ... 0xaf] = P66,
		[0xb0] = PALL, [0xb1] = P66 | PF3, [0xb4 ... 0xbf] = P66,
		[0xcb ... 0xcd] = PF2, [0xcf] = P66,
		[0xd2 ... 0xd3] = PALL, [0xda] = PALL, [0xdb] = P66 | NOV,
		[0xdc ... 0xdf] = P66,
		[0xe0 ... 0xef] = P66,				/* cmpccxadd */
		[0xf2] = PN, [0xf3] = PN, [0xf5] = PN | PF3 | PF2,	/* BMI */
		[0xf6] = PF2, [0xf7] = PALL,
	},
	{	/* VEX map 3 (0F3A): 66 unless noted; all take an imm8 */
		[0x00 ... 0x01] = P66 | NOV, [0x02] = P66,
		[0x04 ... 0x05] = P66 | NOV, [0x06] = P66,
		[0x08 ... 0x09] = P66 | NOV, [0x0a ... 0x0f] = P66,
		[0x14 ... 0x17] = P66 | NOV, [0x18] = P66, [0x19] = P66 | NOV,
		[0x1d] = P66 | NOV,
		[0x20 ... 0x22] = P66, [0x30 ... 0x33] = P66 | NOV | L0,
		[0x38] = P66, [0x39] = P66 | NOV,
		[0x40 ... 0x42] = P66, [0x44] = P66, [0x46] = P66,
		[0x48 ... 0x4c] = P66, [0x5c ... 0x5f] = P66,
		[0x60 ... 0x63] = P66 | NOV, [0x68 ... 0x6f] = P66,
		[0x78 ... 0x7f] = P66,
		[0xce ... 0xcf] = P66, [0xde] = P66, [0xdf] = P66 | NOV,
		[0xf0] = PF2 | NOV,				/* rorx */
	},
};

/* EVEX maps 1, 2, 3, 5, 6 (index 0..4): defined pp values. */
static const uint8_t evex_ops[5][256] = {
	{	/* map 1 (0F) */
		[0x10 ... 0x12] = PALL, [0x13] = PN | P66,
		[0x14 ... 0x15] = PN | P66, [0x16] = PN | P66 | PF3,
		[0x17] = PN | P66,
		[0x28 ... 0x29] = PN | P66 | NOV, [0x2a] = PF3 | PF2,
		[0x2b] = PN | P66 | NOV, [0x2c ... 0x2d] = PF3 | PF2 | NOV,
		[0x2e ... 0x2f] = PN | P66 | NOV,
		[0x51] = PALL, [0x54 ... 0x57] = PN | P66,
		[0x58 ... 0x5a] = PALL, [0x5b] = PN | P66 | PF3 | NOV,
		[0x5c ... 0x5f] = PALL,
		[0x60 ... 0x6d] = P66, [0x6e] = P66 | NOV,
		[0x6f] = P66 | PF3 | PF2 | NOV,
		[0x70] = P66 | PF3 | PF2 | NOV, [0x71 ... 0x76] = P66,
		[0x78 ... 0x79] = PALL, [0x7a ... 0x7b] = P66 | PF3 | PF2,
		[0x7e] = P66 | PF3 | NOV, [0x7f] = P66 | PF3 | PF2 | NOV,
		[0xc2] = PALL, [0xc4 ... 0xc5] = P66, [0xc6] = PN | P66,
		[0xd1 ... 0xd6] = P66, [0xd8 ... 0xe5] = P66,
		[0xe6] = P66 | PF3 | PF2 | NOV, [0xe7] = P66 | NOV,
		[0xe8 ... 0xef] = P66, [0xf1 ... 0xf6] = P66,
		[0xf8 ... 0xfe] = P66,
	},
	{	/* map 2 (0F38): 66 unless noted */
		[0x00] = P66, [0x04] = P66, [0x0b ... 0x0d] = P66,
		[0x10 ... 0x15] = P66 | PF3, [0x16] = P66,
		[0x18 ... 0x1b] = P66, [0x1c ... 0x1f] = P66,
		[0x20 ... 0x2a] = P66 | PF3, [0x2b ... 0x2d] = P66,
		[0x30 ... 0x35] = P66 | PF3, [0x36 ... 0x37] = P66,
		[0x38 ... 0x3a] = P66 | PF3, [0x3b ... 0x40] = P66,
		[0x42 ... 0x47] = P66, [0x4c ... 0x4f] = P66,
		[0x50 ... 0x51] = P66, [0x52] = P66 | PF3 | PF2,
		[0x53] = P66 | PF2, [0x54 ... 0x55] = P66,
		[0x58 ... 0x5b] = P66, [0x62 ... 0x66] = P66, [0x68] = PF2,
		[0x70 ... 0x71] = P66, [0x72] = P66 | PF3 | PF2,
		[0x73] = P66, [0x75 ... 0x7f] = P66, [0x83] = P66,
		[0x88 ... 0x8b] = P66, [0x8d] = P66, [0x8f] = P66,
		[0x90 ... 0x93] = P66, [0x96 ... 0x99] = P66,
		[0x9a ... 0x9b] = P66 | PF2, [0x9c ... 0x9f] = P66,
		[0xa0 ... 0xa3] = P66, [0xa6 ... 0xa9] = P66,
		[0xaa ... 0xab] = P66 | PF2, [0xac ... 0xaf] = P66,
		[0xb4 ... 0xbf] = P66, [0xc4] = P66, [0xc6 ... 0xc8] = P66,
		[0xca ... 0xcd] = P66, [0xcf] = P66, [0xdc ... 0xdf] = P66,
	},
	{	/* map 3 (0F3A): 66 unless noted (FP16 forms have none) */
		[0x00 ... 0x01] = P66, [0x03 ... 0x05] = P66,
		[0x08] = P66 | PN, [0x09] = P66, [0x0a] = P66 | PN,
		[0x0b] = P66, [0x0f] = P66, [0x14 ... 0x1b] = P66,
		[0x1d ... 0x23] = P66, [0x25] = P66, [0x26 ... 0x27] = P66 | PN,
		[0x38 ... 0x3b] = P66, [0x3e ... 0x3f] = P66,
		[0x42 ... 0x44] = P66, [0x50 ... 0x51] = P66,
		[0x54 ... 0x55] = P66, [0x56 ... 0x57] = P66 | PN,
		[0x66 ... 0x67] = P66 | PN, [0x70 ... 0x73] = P66,
		[0xc2] = PN, [0xce ... 0xcf] = P66,
	},
	{	/* map 5 (AVX512-FP16) */
		[0x10 ... 0x11] = PF3, [0x1d] = PN | P66, [0x2a] = PF3,
		[0x2c ... 0x2d] = PF3, [0x2e ... 0x2f] = PN,
		[0x51] = PN | PF3, [0x58 ... 0x59] = PN | PF3, [0x5a] = PALL,
		[0x5b] = PN | P66 | PF3, [0x5c ... 0x5f] = PN | PF3,
		[0x6e] = P66, [0x78 ... 0x79] = PN | P66 | PF3,
		[0x7a] = P66 | PF3 | PF2, [0x7b] = P66 | PF3,
		[0x7c] = PN | P66, [0x7d] = PALL, [0x7e] = P66,
	},
	{	/* map 6 (AVX512-FP16) */
		[0x13] = PN | P66, [0x2c ... 0x2d] = P66, [0x42 ... 0x43] = P66,
		[0x4c ... 0x4f] = P66, [0x56 ... 0x57] = PF3 | PF2,
		[0x96 ... 0x9f] = P66, [0xa6 ... 0xaf] = P66,
		[0xb6 ... 0xbf] = P66, [0xd6 ... 0xd7] = PF3 | PF2,
	},
};

/*
 * Defined XOP opcodes of maps 8, 9 and 0xA (XOP.pp must be 0).  XW: XOP.W
 * may be 1; XL: XOP.L may be 1.  Otherwise both must be 0.
 */
#define	XOK	0x01u
#define	XW	0x02u
#define	XL	0x04u
static const uint8_t ok_xop[3][256] = {
	{	/* map 8: all take an imm8 */
		[0x85 ... 0x87] = XOK, [0x8e ... 0x8f] = XOK,
		[0x95 ... 0x97] = XOK, [0x9e ... 0x9f] = XOK,
		[0xa2] = XOK | XW | XL, [0xa3] = XOK | XW, [0xa6] = XOK,
		[0xb6] = XOK, [0xc0 ... 0xc3] = XOK, [0xcc ... 0xcf] = XOK,
		[0xec ... 0xef] = XOK,
	},
	{	/* map 9 */
		[0x01 ... 0x02] = XOK | XW, [0x12] = XOK | XW,
		[0x80 ... 0x81] = XOK | XL, [0x82 ... 0x83] = XOK,
		[0x90 ... 0x9b] = XOK | XW, [0xc1 ... 0xc3] = XOK,
		[0xc6 ... 0xc7] = XOK, [0xcb] = XOK, [0xd1 ... 0xd3] = XOK,
		[0xd6 ... 0xd7] = XOK, [0xdb] = XOK, [0xe1 ... 0xe3] = XOK,
	},
	{	/* map 0xA: bextr, lwpins/lwpval; imm32 */
		[0x10] = XOK | XW, [0x12] = XOK | XW,
	},
};

/*
 * x87 (D8-DF).  Memory forms: the /reg values that are undefined, one bit
 * per reg.  Register forms (ModRM C0-FF): one bit per ModRM - 0xC0 that is
 * defined.  The undocumented register aliases (fstp1, fcom2, fxch4, ...)
 * are treated as undefined, as objdump does.
 */
static const uint8_t x87_mem_bad[8] = {
	0, 1u << 1, 0, 1u << 4 | 1u << 6, 0, 1u << 5, 0, 0,
};
static const uint64_t x87_reg_ok[8] = {
	0xffffffffffffffffull,	/* D8 */
	0xffff7f330001ffffull,	/* D9 */
	0x00000200ffffffffull,	/* DA */
	0x00ffff3fffffffffull,	/* DB */
	0xffffffff0000ffffull,	/* DC */
	0x0000ffffffff00ffull,	/* DD */
	0xffffffff0200ffffull,	/* DE */
	0x00ffff01000000ffull,	/* DF */
};

/*
 * LOCK is only valid on these read-modify-write instructions, with a memory
 * destination: bit n of the entry set when ModRM.reg n is lockable.
 */
static const uint8_t lockable_1byte[256] = {
	/*
	 * The ALU ops.  The load forms (02/03, 0A/0B, ...) #UD with LOCK on
	 * hardware, but Capstone and objdump both accept them; we follow them
	 * (the length is the same either way; see docs/decoder.md).
	 */
	[0x00 ... 0x03] = 0xff, [0x08 ... 0x0b] = 0xff,
	[0x10 ... 0x13] = 0xff, [0x18 ... 0x1b] = 0xff,
	[0x20 ... 0x23] = 0xff, [0x28 ... 0x2b] = 0xff,
	[0x30 ... 0x33] = 0xff,
	[0x80 ... 0x81] = 0x7f, [0x83] = 0x7f,	/* not /7 (cmp) */
	[0x86 ... 0x87] = 0xff,			/* xchg */
	[0xf6 ... 0xf7] = 0x0c,			/* not, neg */
	[0xfe ... 0xff] = 0x03,			/* inc, dec */
};
static const uint8_t lockable_0f[256] = {
	[0xab] = 0xff, [0xb3] = 0xff, [0xbb] = 0xff,	/* bts, btr, btc */
	[0xba] = 0xe0,					/* bts/btr/btc imm */
	[0xb0 ... 0xb1] = 0xff,				/* cmpxchg */
	[0xc0 ... 0xc1] = 0xff,				/* xadd */
	[0xc7] = 0x02,					/* cmpxchg8b/16b */
};

/* Valid 3DNow! suffix bytes (0F 0F /r suffix). */
static const uint8_t ok_3dnow[256] = {
	[0x0c] = 1, [0x0d] = 1, [0x1c] = 1, [0x1d] = 1,
	[0x86] = 1, [0x87] = 1, [0x8a] = 1, [0x8e] = 1, [0x90] = 1,
	[0x94] = 1, [0x96] = 1, [0x97] = 1, [0x9a] = 1, [0x9e] = 1,
	[0xa0] = 1, [0xa4] = 1, [0xa6] = 1, [0xa7] = 1, [0xaa] = 1,
	[0xae] = 1, [0xb0] = 1, [0xb4] = 1, [0xb6] = 1, [0xb7] = 1,
	[0xbb] = 1, [0xbf] = 1,
};

/*
 * Legacy prefix classes.  Bits 0-10 are the KINST_PFX_* flag of the prefix;
 * PC_REX marks 40-4F; 0 means "not a prefix".
 */
#define	PC_REX		0x8000u
static const uint16_t pfx_class[256] = {
	[0x26] = KINST_PFX_ES, [0x2e] = KINST_PFX_CS,
	[0x36] = KINST_PFX_SS, [0x3e] = KINST_PFX_DS,
	[0x64] = KINST_PFX_FS, [0x65] = KINST_PFX_GS,
	[0x66] = KINST_PFX_66, [0x67] = KINST_PFX_67,
	[0xf0] = KINST_PFX_F0, [0xf2] = KINST_PFX_F2, [0xf3] = KINST_PFX_F3,
	[0x40] = PC_REX, [0x41] = PC_REX, [0x42] = PC_REX, [0x43] = PC_REX,
	[0x44] = PC_REX, [0x45] = PC_REX, [0x46] = PC_REX, [0x47] = PC_REX,
	[0x48] = PC_REX, [0x49] = PC_REX, [0x4a] = PC_REX, [0x4b] = PC_REX,
	[0x4c] = PC_REX, [0x4d] = PC_REX, [0x4e] = PC_REX, [0x4f] = PC_REX,
};
#define	PFX_SEG		(KINST_PFX_CS | KINST_PFX_SS | KINST_PFX_DS | \
			    KINST_PFX_ES | KINST_PFX_FS | KINST_PFX_GS)

/*
 * Fetch byte `i' of the instruction; `lim' is min(avail, 15).  Bytes are
 * fetched in order, so the first index that reaches `lim' is either 15 (the
 * instruction is too long: invalid) or `avail' (truncated).
 */
#define	FETCH(dst, i) do {						\
	if (__builtin_expect((i) >= lim, 0))				\
		goto past_limit;					\
	(dst) = buf[(i)];						\
} while (0)

static inline int64_t
read_le(const uint8_t *p, unsigned size)
{
	uint64_t v;

	/* disp8/imm8 and disp32/imm32 are by far the most common. */
	if (size == 1)
		return ((int8_t)p[0]);
	v = (uint64_t)p[0] | (uint64_t)p[1] << 8;
	if (size == 2)
		return ((int16_t)(uint16_t)v);
	v |= (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
	if (size == 4)
		return ((int32_t)(uint32_t)v);
	v |= (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
	    (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
	return ((int64_t)v);
}

static inline void
insn_clear(struct kinst_insn *out)
{

	*out = (struct kinst_insn){ .len = 0 };
}

int
kinst_decode(const uint8_t *buf, size_t avail, struct kinst_insn *out)
{
	unsigned pos, attr, imm_size, imm2_size, disp_size, len, b;
	unsigned rep_last, seg_last, pc, map, enc, opcode, op_off;
	unsigned rex, mod, reg, rm;
	uint16_t pfx;
	uint8_t opsize, addrsize, modrm, sib, vb1, vb2, vb3;
	uint8_t nprefixes;
	const uint8_t *lk;
	unsigned vvvv, vop, evex_b, lim;

	insn_clear(out);
	lim = avail < KINST_MAX_INSN_LEN ? (unsigned)avail : KINST_MAX_INSN_LEN;
	pos = 0;
	pfx = 0;
	rex = 0;
	rep_last = 0;
	seg_last = 0;
	nprefixes = 0;
	imm2_size = 0;
	sib = 0;
	vvvv = 0;
	evex_b = 0;

	/*
	 * Prefixes.  A REX byte only counts when the opcode (or VEX/EVEX/XOP
	 * escape) follows it directly; one followed by another prefix is
	 * ignored, as the hardware does.
	 */
	for (;;) {
		FETCH(b, pos);
		pc = pfx_class[b];
		if (pc == 0)
			break;
		if (pc == PC_REX) {
			rex = b;
		} else {
			rex = 0;
			pfx |= (uint16_t)pc;
			nprefixes++;
			if (pc & PFX_SEG)
				seg_last = b;
			else if (b == 0xf2 || b == 0xf3)
				rep_last = b;
		}
		pos++;
	}

	opsize = 4;
	addrsize = (pfx & KINST_PFX_67) ? 4 : 8;
	enc = KINST_ENC_LEGACY;
	map = KINST_MAP_1BYTE;

	/* b is the first byte after the prefixes, at pos. */
	switch (b) {
	case 0x0f:
		FETCH(b, pos + 1);
		if (b == 0x38 || b == 0x3a) {
			map = b == 0x38 ? KINST_MAP_0F38 : KINST_MAP_0F3A;
			op_off = pos + 2;
			FETCH(opcode, op_off);
			if (!(map == KINST_MAP_0F38 ? ok_0f38 :
			    ok_0f3a)[opcode])
				goto invalid;
			attr = map == KINST_MAP_0F38 ? M : MB;
		} else {
			map = KINST_MAP_0F;
			op_off = pos + 1;
			opcode = b;
			attr = map0f[opcode];
		}
		break;
	case 0xc4:
	case 0xc5:
	case 0x62:
	case 0x8f:
		FETCH(vb1, pos + 1);
		if (b == 0x8f && (vb1 & 0x1f) < 8) {
			/* pop Ev (group 1a), not XOP. */
			op_off = pos;
			opcode = b;
			attr = M | D64 | SP;
			break;
		}
		/* VEX/EVEX/XOP: no 66/F2/F3/F0 and no REX before it. */
		if (rex != 0 || (pfx & (KINST_PFX_66 | KINST_PFX_F0 |
		    KINST_PFX_F2 | KINST_PFX_F3)))
			goto invalid;
		if (b == 0xc5) {
			enc = KINST_ENC_VEX2;
			map = KINST_MAP_0F;
			out->rex_r = !(vb1 & 0x80);
			out->vex_l = (vb1 >> 2) & 1;
			out->vex_pp = vb1 & 3;
			vvvv = (~vb1 >> 3) & 0xf;
			op_off = pos + 2;
		} else if (b == 0xc4 || b == 0x8f) {
			FETCH(vb2, pos + 2);
			map = vb1 & 0x1f;
			if (b == 0xc4) {
				enc = KINST_ENC_VEX3;
				if (map < 1 || map > 3)
					goto invalid;
			} else {
				enc = KINST_ENC_XOP;
				if (map > 0xa)
					goto invalid;
			}
			out->rex_r = !(vb1 & 0x80);
			out->rex_x = !(vb1 & 0x40);
			out->rex_b = !(vb1 & 0x20);
			out->rex_w = vb2 >> 7;
			out->vex_l = (vb2 >> 2) & 1;
			out->vex_pp = vb2 & 3;
			vvvv = (~vb2 >> 3) & 0xf;
			op_off = pos + 3;
		} else {
			enc = KINST_ENC_EVEX;
			FETCH(vb2, pos + 2);
			FETCH(vb3, pos + 3);
			map = vb1 & 0x7;
			/* P0 bit 3 must be 0, P1 bit 2 must be 1. */
			if ((vb1 & 0x08) != 0 || (vb2 & 0x04) == 0 ||
			    map == 0 || map == 4 || map == 7)
				goto invalid;
			out->rex_r = !(vb1 & 0x80);
			out->rex_x = !(vb1 & 0x40);
			out->rex_b = !(vb1 & 0x20);
			out->rex_w = vb2 >> 7;
			out->vex_l = (vb3 >> 5) & 3;
			out->vex_pp = vb2 & 3;
			evex_b = (vb3 >> 4) & 1;
			/* vvvv with EVEX.V' as its fifth bit. */
			vvvv = ((~vb2 >> 3) & 0xf) | (~vb3 & 0x08) << 1;
			op_off = pos + 4;
		}
		FETCH(opcode, op_off);
		if (enc == KINST_ENC_VEX2 || enc == KINST_ENC_VEX3) {
			vop = vex_ops[map - 1][opcode];
			if (!((vop >> out->vex_pp) & 1) ||
			    ((vop & NOV) && vvvv != 0) ||
			    ((vop & L0) && out->vex_l != 0) ||
			    ((vop & L1) && out->vex_l != 1))
				goto invalid;
		} else if (enc == KINST_ENC_EVEX) {
			vop = evex_ops[map <= 3 ? map - 1 : map - 2][opcode];
			if (!((vop >> out->vex_pp) & 1) ||
			    ((vop & NOV) && vvvv != 0))
				goto invalid;
		} else {
			vop = ok_xop[map - KINST_MAP_XOP8][opcode];
			if (!(vop & XOK) || out->vex_pp != 0 ||
			    (out->rex_w && !(vop & XW)) ||
			    (out->vex_l && !(vop & XL)))
				goto invalid;
		}
		switch (map) {
		case KINST_MAP_0F:
			if (opcode == 0x77 && enc != KINST_ENC_EVEX)
				attr = __;
			else if ((opcode >= 0x70 && opcode <= 0x73) ||
			    opcode == 0xc2 || (opcode >= 0xc4 && opcode <= 0xc6))
				attr = MB;
			else
				attr = M;
			break;
		case KINST_MAP_0F3A:
		case KINST_MAP_XOP8:
			attr = MB;
			break;
		case KINST_MAP_XOPA:
			attr = M | I_D;
			break;
		default:	/* 0F38, XOP map 9, EVEX maps 5 and 6 */
			attr = M;
			break;
		}
		/* REX.W selects a 64-bit GPR operand (andn, bextr, ...). */
		opsize = out->rex_w ? 8 : 4;
		goto modrm;
	default:
		op_off = pos;
		opcode = b;
		attr = map1[opcode];
		break;
	}

	if (attr & X)
		goto invalid;

	/* Operand size: REX.W beats 66; default-64 ops ignore a plain 32. */
	if (rex & 0x08)
		opsize = 8;
	else if (pfx & KINST_PFX_66)
		opsize = 2;
	else if (attr & D64)
		opsize = 8;
	else
		opsize = 4;

modrm:
	pos = op_off + 1;
	mod = reg = rm = 0;
	modrm = 0;
	disp_size = 0;
	if (attr & M) {
		FETCH(modrm, pos);
		out->has_modrm = 1;
		out->modrm = modrm;
		out->modrm_off = (uint8_t)pos;
		mod = modrm >> 6;
		reg = (modrm >> 3) & 7;
		rm = modrm & 7;
		pos++;
		if (mod != 3 && !(attr & RO)) {
			/* mod 1: disp8; mod 2: disp32; mod 0: none ... */
			disp_size = (0x040100u >> (mod << 3)) & 0xff;
			if (rm == 4) {
				FETCH(sib, pos);
				out->has_sib = 1;
				out->sib = sib;
				pos++;
				/* ... or disp32 without base (SIB base 5) */
				if (mod == 0 && (sib & 7) == 5)
					disp_size = 4;
			} else if (mod == 0 && rm == 5) {
				/* ... or disp32 RIP-relative */
				disp_size = 4;
				out->rip_relative = 1;
			}
		}
	}

	/*
	 * VEX/EVEX 0F 10/11 (vmovups .. vmovsd): only the register form of
	 * the scalar moves has a vvvv operand.
	 */
	if (enc != KINST_ENC_LEGACY && map == KINST_MAP_0F &&
	    (opcode == 0x10 || opcode == 0x11) && vvvv != 0 &&
	    (mod != 3 || out->vex_pp < 2))
		goto invalid;

	/* EVEX.L'L = 3 only encodes rounding control (EVEX.b, register form). */
	if (enc == KINST_ENC_EVEX && out->vex_l == 3 && !(evex_b && mod == 3))
		goto invalid;

	/* Immediate size: a table lookup by kind and operand size. */
	imm_size = imm_sizes[attr & I_MASK][opsize >> 2];
	if ((attr & I_MASK) >= I_MOFFS) {
		if ((attr & I_MASK) == I_MOFFS)
			disp_size = addrsize;
		else if ((attr & I_MASK) == I_ENTER)
			imm2_size = 1;
	}

	if (attr & SP) {
		/* ModRM- or prefix-dependent forms of a few opcodes. */
		if (map == KINST_MAP_1BYTE) {
			switch (opcode) {
			case 0x8c:	/* mov Sreg: es cs ss ds fs gs */
				if (reg > 5)
					goto invalid;
				break;
			case 0x8d:	/* lea: memory operand only */
				if (mod == 3)
					goto invalid;
				break;
			case 0x8e:	/* mov to Sreg (%cs is #UD, but decoded) */
				if (reg > 5)
					goto invalid;
				break;
			case 0xd8: case 0xd9: case 0xda: case 0xdb:
			case 0xdc: case 0xdd: case 0xde: case 0xdf:
				if (mod != 3 ? (x87_mem_bad[opcode - 0xd8] >>
				    reg) & 1 : !((x87_reg_ok[opcode - 0xd8] >>
				    (modrm - 0xc0)) & 1))
					goto invalid;
				break;
			case 0x8f:	/* pop Ev: /0 only */
				if (reg != 0)
					goto invalid;
				break;
			case 0xc6:	/* mov Eb,Ib /0; xabort ib (C6 F8) */
				if (reg != 0 && modrm != 0xf8)
					goto invalid;
				break;
			case 0xc7:	/* mov Ev,Iz /0; xbegin relz (C7 F8) */
				if (reg != 0 && modrm != 0xf8)
					goto invalid;
				break;
			case 0xf6:	/* test Eb,Ib /0 /1; others no imm */
				imm_size = reg < 2 ? 1 : 0;
				break;
			case 0xf7:
				imm_size = reg < 2 ? (opsize == 2 ? 2 : 4) : 0;
				break;
			case 0xfe:	/* inc/dec Eb */
				if (reg > 1)
					goto invalid;
				break;
			case 0xff:
				if (reg == 7)
					goto invalid;
				/* Far call/jmp take a memory operand. */
				if ((reg == 3 || reg == 5) && mod == 3)
					goto invalid;
				/* Near call/jmp and push default to 64. */
				if ((reg == 2 || reg == 4 || reg == 6) &&
				    !(rex & 0x08) && !(pfx & KINST_PFX_66))
					opsize = 8;
				break;
			}
		} else {	/* KINST_MAP_0F */
			switch (opcode) {
			case 0x00:	/* group 6: /0-/5 */
				if (reg > 5)
					goto invalid;
				break;
			case 0x0f:	/* 3DNow!: the imm8 is the opcode */
				break;
			case 0x6c:	/* punpck[lh]qdq: 66 only */
			case 0x6d:
				if (!(pfx & KINST_PFX_66) || rep_last != 0)
					goto invalid;
				break;
			case 0x71:	/* groups 12, 13: psrl/psra/psll ib */
			case 0x72:
				if (mod != 3 || (reg != 2 && reg != 4 &&
				    reg != 6))
					goto invalid;
				break;
			case 0x73:	/* group 14; /3 and /7 are 66 only */
				if (mod != 3 || (reg != 2 && reg != 3 &&
				    reg != 6 && reg != 7) || ((reg == 3 ||
				    reg == 7) && !(pfx & KINST_PFX_66)))
					goto invalid;
				break;
			case 0xf0:	/* lddqu: F2, memory only */
				if (rep_last != 0xf2 || mod == 3)
					goto invalid;
				break;
			case 0x78:
				/* vmread; 66: extrq /0 ib ib; F2: insertq ib ib */
				if (rep_last == 0xf2) {
					if (mod != 3)
						goto invalid;
					imm_size = 1;
					imm2_size = 1;
				} else if (rep_last == 0xf3) {
					goto invalid;
				} else if (pfx & KINST_PFX_66) {
					if (mod != 3 || reg != 0)
						goto invalid;
					imm_size = 1;
					imm2_size = 1;
				}
				break;
			case 0x79:
				/* vmwrite; 66: extrq xmm, xmm; F2: insertq */
				if (rep_last == 0xf3)
					goto invalid;
				if ((rep_last == 0xf2 || (pfx & KINST_PFX_66))
				    && mod != 3)
					goto invalid;
				break;
			case 0xae:	/* group 15: register forms /0-/4 need F3 */
				if (mod == 3 && reg < 5 && rep_last != 0xf3)
					goto invalid;
				break;
			case 0xa6:	/* VIA PadLock: montmul, xsha1, xsha256 */
				if (modrm != 0xc0 && modrm != 0xc8 &&
				    modrm != 0xd0)
					goto invalid;
				break;
			case 0xa7:	/* VIA PadLock: xstore, xcrypt* */
				if (mod != 3 || rm != 0 || reg > 5)
					goto invalid;
				break;
			case 0xb8:	/* popcnt needs F3 (else JMPE) */
				if (rep_last != 0xf3)
					goto invalid;
				break;
			case 0xba:	/* group 8: bt* /4-/7 */
				if (reg < 4)
					goto invalid;
				break;
			case 0xc7:	/* group 9: /0 undefined */
				if (reg == 0)
					goto invalid;
				break;
			}
		}
	}

	/* LOCK: only read-modify-write instructions with a memory operand. */
	if (pfx & KINST_PFX_F0) {
		if (map == KINST_MAP_1BYTE)
			lk = lockable_1byte;
		else if (map == KINST_MAP_0F)
			lk = lockable_0f;
		else
			goto invalid;
		if (mod == 3 || !(attr & M) || !((lk[opcode] >> reg) & 1))
			goto invalid;
	}

	out->disp_size = (uint8_t)disp_size;
	if (disp_size != 0)
		out->disp_off = (uint8_t)pos;
	pos += disp_size;
	if (imm_size != 0)
		out->imm_off = (uint8_t)pos;
	pos += imm_size;
	if (imm2_size != 0)
		out->imm2_off = (uint8_t)pos;
	pos += imm2_size;
	len = pos;
	if (len > KINST_MAX_INSN_LEN)
		goto invalid;
	if (len > avail)
		goto truncated;

	/* 3DNow!: validate the suffix opcode now that it is in range. */
	if (map == KINST_MAP_0F && opcode == 0x0f &&
	    !ok_3dnow[buf[out->imm_off]])
		goto invalid;

	if (disp_size != 0) {
		if ((attr & I_MASK) == I_MOFFS && disp_size == 4)
			out->disp = (int64_t)(uint32_t)read_le(buf +
			    out->disp_off, 4);
		else
			out->disp = read_le(buf + out->disp_off, disp_size);
	}
	out->imm_size = (uint8_t)imm_size;
	if (imm_size != 0)
		out->imm = read_le(buf + out->imm_off, imm_size);
	out->imm2_size = (uint8_t)imm2_size;
	if (imm2_size != 0)
		out->imm2 = read_le(buf + out->imm2_off, imm2_size);

	out->len = (uint8_t)len;
	out->enc = (uint8_t)enc;
	out->map = (uint8_t)map;
	out->opcode = (uint8_t)opcode;
	out->prefixes = pfx;
	out->nprefixes = nprefixes;
	out->seg = (uint8_t)seg_last;
	out->opcode_off = (uint8_t)op_off;
	if (enc == KINST_ENC_LEGACY) {
		out->rex = (uint8_t)rex;
		out->rex_w = (rex >> 3) & 1;
		out->rex_r = (rex >> 2) & 1;
		out->rex_x = (rex >> 1) & 1;
		out->rex_b = rex & 1;
	}
	out->mod = (uint8_t)mod;
	out->reg = (uint8_t)reg;
	out->rm = (uint8_t)rm;
	out->opsize = opsize;
	out->addrsize = addrsize;
	return (KINST_DEC_OK);

past_limit:
	if (avail >= KINST_MAX_INSN_LEN)
		goto invalid;
	goto truncated;
invalid:
	insn_clear(out);
	return (KINST_DEC_INVALID);
truncated:
	insn_clear(out);
	return (KINST_DEC_TRUNCATED);
}

uint8_t
kinst_insn_length(const uint8_t *buf, size_t avail)
{
	struct kinst_insn insn;

	if (kinst_decode(buf, avail, &insn) != KINST_DEC_OK)
		return (0);
	return (insn.len);
}
