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
#include "x86/kinst_decode.h"

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
 * Decoder state, passed from step to step by kinst_decode().  The steps
 * fill in `out' as they go; kinst_decode() clears it again on any failure.
 */
struct dec {
	const uint8_t	*buf;
	size_t		avail;
	struct kinst_insn *out;
	unsigned	lim;		/* min(avail, 15) */
	unsigned	pos;		/* offset of the next byte */
	unsigned	pfx;		/* KINST_PFX_* */
	unsigned	nprefixes;	/* legacy prefix bytes */
	unsigned	rep_last;	/* last of F2/F3, or 0 */
	unsigned	seg_last;	/* last segment override, or 0 */
	unsigned	rex;		/* the REX byte that counts, or 0 */
	unsigned	enc, map;	/* KINST_ENC_*, KINST_MAP_* */
	unsigned	opcode;		/* first byte after the prefixes, then
					   the opcode within its map */
	unsigned	op_off;		/* offset of the opcode */
	unsigned	attr;		/* attribute word of the opcode */
	unsigned	vvvv, evex_b;	/* VEX/EVEX/XOP only */
	unsigned	modrm, mod, reg, rm;
	unsigned	disp_size, imm_size, imm2_size;
	unsigned	opsize, addrsize;
};

/*
 * Fetch byte `i' of the instruction into `dst', or return from the calling
 * step.  Bytes are fetched in order, so the first index that reaches `lim'
 * is either 15 (the instruction is too long: invalid) or `avail'
 * (truncated).
 */
#define	FETCH(d, dst, i) do {						\
	if (__builtin_expect((i) >= (d)->lim, 0))			\
		return ((d)->avail >= KINST_MAX_INSN_LEN ?		\
		    KINST_DEC_INVALID : KINST_DEC_TRUNCATED);		\
	(dst) = (d)->buf[(i)];						\
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

/*
 * Step 1: legacy prefixes.  A REX byte only counts when the opcode (or
 * VEX/EVEX/XOP escape) follows it directly; one followed by another prefix
 * is ignored, as the hardware does.  Leaves the first other byte in
 * d->opcode, at d->pos.
 */
static inline int
decode_prefixes(struct dec *d)
{
	unsigned b, pc;

	for (;;) {
		FETCH(d, b, d->pos);
		pc = pfx_class[b];
		if (pc == 0)
			break;
		if (pc == PC_REX) {
			d->rex = b;
		} else {
			d->rex = 0;
			d->pfx |= pc;
			d->nprefixes++;
			if (pc & PFX_SEG)
				d->seg_last = b;
			else if (b == 0xf2 || b == 0xf3)
				d->rep_last = b;
		}
		d->pos++;
	}
	d->opcode = b;
	d->addrsize = (d->pfx & KINST_PFX_67) ? 4 : 8;
	return (KINST_DEC_OK);
}

/* Step 2a: the legacy escape 0F, then 0F 38 / 0F 3A. */
static inline int
decode_escape_0f(struct dec *d)
{
	unsigned b;

	FETCH(d, b, d->pos + 1);
	if (b == 0x38 || b == 0x3a) {
		d->map = b == 0x38 ? KINST_MAP_0F38 : KINST_MAP_0F3A;
		d->op_off = d->pos + 2;
		FETCH(d, d->opcode, d->op_off);
		if (!(d->map == KINST_MAP_0F38 ? ok_0f38 : ok_0f3a)[d->opcode])
			return (KINST_DEC_INVALID);
		d->attr = d->map == KINST_MAP_0F38 ? M : MB;
	} else {
		d->map = KINST_MAP_0F;
		d->op_off = d->pos + 1;
		d->opcode = b;
		d->attr = map0f[d->opcode];
	}
	return (KINST_DEC_OK);
}

/* decode_vex(): the payload of a two-byte VEX (C5) prefix, `p0'. */
static inline void
decode_vex2_payload(struct dec *d, unsigned p0)
{
	struct kinst_insn *out = d->out;

	d->enc = KINST_ENC_VEX2;
	d->map = KINST_MAP_0F;
	out->rex_r = !(p0 & 0x80);
	out->vex_l = (p0 >> 2) & 1;
	out->vex_pp = p0 & 3;
	d->vvvv = (~p0 >> 3) & 0xf;
	d->op_off = d->pos + 2;
}

/*
 * decode_vex(): R, X, B (inverted) of the first payload byte of VEX3, XOP
 * and EVEX; W and pp of the second.
 */
static inline void
vex_payload_rxbwpp(struct kinst_insn *out, unsigned p0, unsigned p1)
{

	out->rex_r = !(p0 & 0x80);
	out->rex_x = !(p0 & 0x40);
	out->rex_b = !(p0 & 0x20);
	out->rex_w = p1 >> 7;
	out->vex_pp = p1 & 3;
}

/* decode_vex(): the payload of a three-byte VEX (C4) or XOP (8F) prefix. */
static inline int
decode_vex3_payload(struct dec *d, unsigned esc, unsigned p0)
{
	struct kinst_insn *out = d->out;
	unsigned p1;

	FETCH(d, p1, d->pos + 2);
	d->map = p0 & 0x1f;
	if (esc == 0xc4) {
		d->enc = KINST_ENC_VEX3;
		if (d->map < 1 || d->map > 3)
			return (KINST_DEC_INVALID);
	} else {
		d->enc = KINST_ENC_XOP;
		if (d->map > 0xa)
			return (KINST_DEC_INVALID);
	}
	vex_payload_rxbwpp(out, p0, p1);
	out->vex_l = (p1 >> 2) & 1;
	d->vvvv = (~p1 >> 3) & 0xf;
	d->op_off = d->pos + 3;
	return (KINST_DEC_OK);
}

/* decode_vex(): the payload of an EVEX (62) prefix. */
static inline int
decode_evex_payload(struct dec *d, unsigned p0)
{
	struct kinst_insn *out = d->out;
	unsigned p1, p2;

	d->enc = KINST_ENC_EVEX;
	FETCH(d, p1, d->pos + 2);
	FETCH(d, p2, d->pos + 3);
	d->map = p0 & 0x7;
	/* P0 bit 3 must be 0, P1 bit 2 must be 1. */
	if ((p0 & 0x08) != 0 || (p1 & 0x04) == 0 ||
	    d->map == 0 || d->map == 4 || d->map == 7)
		return (KINST_DEC_INVALID);
	vex_payload_rxbwpp(out, p0, p1);
	out->vex_l = (p2 >> 5) & 3;
	d->evex_b = (p2 >> 4) & 1;
	/* vvvv with EVEX.V' as its fifth bit. */
	d->vvvv = ((~p1 >> 3) & 0xf) | (~p2 & 0x08) << 1;
	d->op_off = d->pos + 4;
	return (KINST_DEC_OK);
}

/*
 * decode_vex(): is the VEX/EVEX/XOP opcode defined with this pp, vvvv, L and W
 * (vex_ops, evex_ops, ok_xop)?
 */
static inline int
check_vex_opcode(const struct dec *d)
{
	const struct kinst_insn *out = d->out;
	unsigned vop;

	if (d->enc == KINST_ENC_VEX2 || d->enc == KINST_ENC_VEX3) {
		vop = vex_ops[d->map - 1][d->opcode];
		if (!((vop >> out->vex_pp) & 1) ||
		    ((vop & NOV) && d->vvvv != 0) ||
		    ((vop & L0) && out->vex_l != 0) ||
		    ((vop & L1) && out->vex_l != 1))
			return (KINST_DEC_INVALID);
	} else if (d->enc == KINST_ENC_EVEX) {
		vop = evex_ops[d->map <= 3 ? d->map - 1 : d->map - 2]
		    [d->opcode];
		if (!((vop >> out->vex_pp) & 1) ||
		    ((vop & NOV) && d->vvvv != 0))
			return (KINST_DEC_INVALID);
	} else {
		vop = ok_xop[d->map - KINST_MAP_XOP8][d->opcode];
		if (!(vop & XOK) || out->vex_pp != 0 ||
		    (out->rex_w && !(vop & XW)) ||
		    (out->vex_l && !(vop & XL)))
			return (KINST_DEC_INVALID);
	}
	return (KINST_DEC_OK);
}

/* decode_vex(): attribute word of a VEX/EVEX/XOP opcode, by map. */
static inline unsigned
vex_attr(const struct dec *d)
{

	switch (d->map) {
	case KINST_MAP_0F:
		if (d->opcode == 0x77 && d->enc != KINST_ENC_EVEX)
			return (__);
		if ((d->opcode >= 0x70 && d->opcode <= 0x73) ||
		    d->opcode == 0xc2 ||
		    (d->opcode >= 0xc4 && d->opcode <= 0xc6))
			return (MB);
		return (M);
	case KINST_MAP_0F3A:
	case KINST_MAP_XOP8:
		return (MB);
	case KINST_MAP_XOPA:
		return (M | I_D);
	default:	/* 0F38, XOP map 9, EVEX maps 5 and 6 */
		return (M);
	}
}

/*
 * Step 2b: C4 (VEX3), C5 (VEX2), 62 (EVEX), 8F (XOP, or pop Ev when the map
 * field is below 8).
 */
static inline int
decode_vex(struct dec *d)
{
	unsigned esc, p0;
	int error;

	esc = d->opcode;
	FETCH(d, p0, d->pos + 1);
	if (esc == 0x8f && (p0 & 0x1f) < 8) {
		/* pop Ev (group 1a), not XOP. */
		d->op_off = d->pos;
		d->attr = M | D64 | SP;
		return (KINST_DEC_OK);
	}
	/* VEX/EVEX/XOP: no 66/F2/F3/F0 and no REX before it. */
	if (d->rex != 0 || (d->pfx & (KINST_PFX_66 | KINST_PFX_F0 |
	    KINST_PFX_F2 | KINST_PFX_F3)))
		return (KINST_DEC_INVALID);
	if (esc == 0xc5) {
		decode_vex2_payload(d, p0);
		error = KINST_DEC_OK;
	} else if (esc == 0xc4 || esc == 0x8f)
		error = decode_vex3_payload(d, esc, p0);
	else
		error = decode_evex_payload(d, p0);
	if (error != KINST_DEC_OK)
		return (error);
	FETCH(d, d->opcode, d->op_off);
	if ((error = check_vex_opcode(d)) != KINST_DEC_OK)
		return (error);
	d->attr = vex_attr(d);
	/* REX.W selects a 64-bit GPR operand (andn, bextr, ...). */
	d->opsize = d->out->rex_w ? 8 : 4;
	return (KINST_DEC_OK);
}

/*
 * Step 2: the escape or opcode map (1-byte, 0F, 0F 38, 0F 3A, VEX/EVEX/XOP),
 * the opcode and its attribute word; then the legacy operand size.
 */
static inline int
decode_opcode(struct dec *d)
{
	int error;

	d->enc = KINST_ENC_LEGACY;
	d->map = KINST_MAP_1BYTE;
	switch (d->opcode) {
	case 0x0f:
		error = decode_escape_0f(d);
		break;
	case 0xc4:
	case 0xc5:
	case 0x62:
	case 0x8f:
		error = decode_vex(d);
		break;
	default:
		d->op_off = d->pos;
		d->attr = map1[d->opcode];
		error = KINST_DEC_OK;
		break;
	}
	/* VEX/EVEX/XOP have their operand size already. */
	if (error != KINST_DEC_OK || d->enc != KINST_ENC_LEGACY)
		return (error);

	if (d->attr & X)
		return (KINST_DEC_INVALID);

	/* Operand size: REX.W beats 66; default-64 ops ignore a plain 32. */
	if (d->rex & 0x08)
		d->opsize = 8;
	else if (d->pfx & KINST_PFX_66)
		d->opsize = 2;
	else if (d->attr & D64)
		d->opsize = 8;
	else
		d->opsize = 4;
	return (KINST_DEC_OK);
}

/*
 * Step 3: ModRM, SIB and the displacement's size (RIP-relative location).
 * Leaves d->pos after the SIB.
 */
static inline int
decode_modrm(struct dec *d)
{
	struct kinst_insn *out = d->out;
	unsigned sib;

	d->pos = d->op_off + 1;
	if (!(d->attr & M))
		return (KINST_DEC_OK);
	FETCH(d, d->modrm, d->pos);
	out->has_modrm = 1;
	out->modrm = (uint8_t)d->modrm;
	out->modrm_off = (uint8_t)d->pos;
	d->mod = d->modrm >> 6;
	d->reg = (d->modrm >> 3) & 7;
	d->rm = d->modrm & 7;
	d->pos++;
	if (d->mod == 3 || (d->attr & RO))
		return (KINST_DEC_OK);
	/* mod 1: disp8; mod 2: disp32; mod 0: none ... */
	d->disp_size = (0x040100u >> (d->mod << 3)) & 0xff;
	if (d->rm == 4) {
		FETCH(d, sib, d->pos);
		out->has_sib = 1;
		out->sib = (uint8_t)sib;
		d->pos++;
		/* ... or disp32 without base (SIB base 5) */
		if (d->mod == 0 && (sib & 7) == 5)
			d->disp_size = 4;
	} else if (d->mod == 0 && d->rm == 5) {
		/* ... or disp32 RIP-relative */
		d->disp_size = 4;
		out->rip_relative = 1;
	}
	return (KINST_DEC_OK);
}

/* Step 4: VEX/EVEX constraints that depend on the ModRM byte. */
static inline int
check_vex_modrm(const struct dec *d)
{

	/*
	 * VEX/EVEX 0F 10/11 (vmovups .. vmovsd): only the register form of
	 * the scalar moves has a vvvv operand.
	 */
	if (d->enc != KINST_ENC_LEGACY && d->map == KINST_MAP_0F &&
	    (d->opcode == 0x10 || d->opcode == 0x11) && d->vvvv != 0 &&
	    (d->mod != 3 || d->out->vex_pp < 2))
		return (KINST_DEC_INVALID);

	/* EVEX.L'L = 3 only encodes rounding control (EVEX.b, register). */
	if (d->enc == KINST_ENC_EVEX && d->out->vex_l == 3 &&
	    !(d->evex_b && d->mod == 3))
		return (KINST_DEC_INVALID);
	return (KINST_DEC_OK);
}

/*
 * Step 5: immediate sizes from the attribute word (a table lookup by kind
 * and operand size); moffs is a displacement.  decode_special() may still
 * change them.
 */
static inline void
decode_immediates(struct dec *d)
{
	unsigned kind;

	kind = d->attr & I_MASK;
	d->imm_size = imm_sizes[kind][d->opsize >> 2];
	if (kind == I_MOFFS)
		d->disp_size = d->addrsize;
	else if (kind == I_ENTER)
		d->imm2_size = 1;
}

/* x87 (D8-DF): the undefined memory /reg values and register forms. */
static inline int
check_x87(const struct dec *d)
{
	unsigned i;

	i = d->opcode - 0xd8;
	if (d->mod != 3 ? (x87_mem_bad[i] >> d->reg) & 1 :
	    !((x87_reg_ok[i] >> (d->modrm - 0xc0)) & 1))
		return (KINST_DEC_INVALID);
	return (KINST_DEC_OK);
}

/* SP opcodes of the 1-byte map: groups, x87, mov Sreg, lea, pop Ev. */
static int
special_1byte(struct dec *d)
{

	switch (d->opcode) {
	case 0x8c:	/* mov Sreg: es cs ss ds fs gs */
		if (d->reg > 5)
			return (KINST_DEC_INVALID);
		break;
	case 0x8d:	/* lea: memory operand only */
		if (d->mod == 3)
			return (KINST_DEC_INVALID);
		break;
	case 0x8e:	/* mov to Sreg (%cs is #UD, but decoded) */
		if (d->reg > 5)
			return (KINST_DEC_INVALID);
		break;
	case 0xd8: case 0xd9: case 0xda: case 0xdb:
	case 0xdc: case 0xdd: case 0xde: case 0xdf:
		return (check_x87(d));
	case 0x8f:	/* pop Ev: /0 only */
		if (d->reg != 0)
			return (KINST_DEC_INVALID);
		break;
	case 0xc6:	/* mov Eb,Ib /0; xabort ib (C6 F8) */
		if (d->reg != 0 && d->modrm != 0xf8)
			return (KINST_DEC_INVALID);
		break;
	case 0xc7:	/* mov Ev,Iz /0; xbegin relz (C7 F8) */
		if (d->reg != 0 && d->modrm != 0xf8)
			return (KINST_DEC_INVALID);
		break;
	case 0xf6:	/* test Eb,Ib /0 /1; others no imm */
		d->imm_size = d->reg < 2 ? 1 : 0;
		break;
	case 0xf7:
		d->imm_size = d->reg < 2 ? (d->opsize == 2 ? 2 : 4) : 0;
		break;
	case 0xfe:	/* inc/dec Eb */
		if (d->reg > 1)
			return (KINST_DEC_INVALID);
		break;
	case 0xff:
		if (d->reg == 7)
			return (KINST_DEC_INVALID);
		/* Far call/jmp take a memory operand. */
		if ((d->reg == 3 || d->reg == 5) && d->mod == 3)
			return (KINST_DEC_INVALID);
		/* Near call/jmp and push default to 64. */
		if ((d->reg == 2 || d->reg == 4 || d->reg == 6) &&
		    !(d->rex & 0x08) && !(d->pfx & KINST_PFX_66))
			d->opsize = 8;
		break;
	}
	return (KINST_DEC_OK);
}

/*
 * 0F 78 / 0F 79: vmread / vmwrite; with 66 SSE4a extrq, with F2 insertq
 * (the /0 ib ib and ib ib forms of 0F 78 have two immediates).
 */
static inline int
special_0f_78_79(struct dec *d)
{

	if (d->opcode == 0x78) {
		if (d->rep_last == 0xf2) {
			if (d->mod != 3)
				return (KINST_DEC_INVALID);
			d->imm_size = 1;
			d->imm2_size = 1;
		} else if (d->rep_last == 0xf3) {
			return (KINST_DEC_INVALID);
		} else if (d->pfx & KINST_PFX_66) {
			if (d->mod != 3 || d->reg != 0)
				return (KINST_DEC_INVALID);
			d->imm_size = 1;
			d->imm2_size = 1;
		}
		return (KINST_DEC_OK);
	}
	if (d->rep_last == 0xf3)
		return (KINST_DEC_INVALID);
	if ((d->rep_last == 0xf2 || (d->pfx & KINST_PFX_66)) && d->mod != 3)
		return (KINST_DEC_INVALID);
	return (KINST_DEC_OK);
}

/* SP opcodes of the 0F map: groups and mandatory-prefix forms. */
static int
special_0f(struct dec *d)
{

	switch (d->opcode) {
	case 0x00:	/* group 6: /0-/5 */
		if (d->reg > 5)
			return (KINST_DEC_INVALID);
		break;
	case 0x0f:	/* 3DNow!: the imm8 is the opcode (check_3dnow()) */
		break;
	case 0x6c:	/* punpck[lh]qdq: 66 only */
	case 0x6d:
		if (!(d->pfx & KINST_PFX_66) || d->rep_last != 0)
			return (KINST_DEC_INVALID);
		break;
	case 0x71:	/* groups 12, 13: psrl/psra/psll ib */
	case 0x72:
		if (d->mod != 3 || (d->reg != 2 && d->reg != 4 &&
		    d->reg != 6))
			return (KINST_DEC_INVALID);
		break;
	case 0x73:	/* group 14; /3 and /7 are 66 only */
		if (d->mod != 3 || (d->reg != 2 && d->reg != 3 &&
		    d->reg != 6 && d->reg != 7) || ((d->reg == 3 ||
		    d->reg == 7) && !(d->pfx & KINST_PFX_66)))
			return (KINST_DEC_INVALID);
		break;
	case 0xf0:	/* lddqu: F2, memory only */
		if (d->rep_last != 0xf2 || d->mod == 3)
			return (KINST_DEC_INVALID);
		break;
	case 0x78:
	case 0x79:
		return (special_0f_78_79(d));
	case 0xae:	/* group 15: register forms /0-/4 need F3 */
		if (d->mod == 3 && d->reg < 5 && d->rep_last != 0xf3)
			return (KINST_DEC_INVALID);
		break;
	case 0xa6:	/* VIA PadLock: montmul, xsha1, xsha256 */
		if (d->modrm != 0xc0 && d->modrm != 0xc8 &&
		    d->modrm != 0xd0)
			return (KINST_DEC_INVALID);
		break;
	case 0xa7:	/* VIA PadLock: xstore, xcrypt* */
		if (d->mod != 3 || d->rm != 0 || d->reg > 5)
			return (KINST_DEC_INVALID);
		break;
	case 0xb8:	/* popcnt needs F3 (else JMPE) */
		if (d->rep_last != 0xf3)
			return (KINST_DEC_INVALID);
		break;
	case 0xba:	/* group 8: bt* /4-/7 */
		if (d->reg < 4)
			return (KINST_DEC_INVALID);
		break;
	case 0xc7:	/* group 9: /0 undefined */
		if (d->reg == 0)
			return (KINST_DEC_INVALID);
		break;
	}
	return (KINST_DEC_OK);
}

/*
 * Step 6: the ModRM- or prefix-dependent forms of the SP opcodes (only in
 * the 1-byte and 0F maps): validity, and the immediates and operand size
 * that differ from the table's.
 */
static inline int
decode_special(struct dec *d)
{

	if (!(d->attr & SP))
		return (KINST_DEC_OK);
	if (d->map == KINST_MAP_1BYTE)
		return (special_1byte(d));
	return (special_0f(d));
}

/* Step 7: LOCK only on read-modify-write instructions with a memory operand. */
static inline int
check_lock(const struct dec *d)
{
	const uint8_t *lk;

	if (!(d->pfx & KINST_PFX_F0))
		return (KINST_DEC_OK);
	if (d->map == KINST_MAP_1BYTE)
		lk = lockable_1byte;
	else if (d->map == KINST_MAP_0F)
		lk = lockable_0f;
	else
		return (KINST_DEC_INVALID);
	if (d->mod == 3 || !(d->attr & M) || !((lk[d->opcode] >> d->reg) & 1))
		return (KINST_DEC_INVALID);
	return (KINST_DEC_OK);
}

/*
 * Step 8: place the displacement and immediates, then the length: more than
 * 15 is invalid, more than `avail' truncated.
 */
static inline int
decode_layout(struct dec *d)
{
	struct kinst_insn *out = d->out;

	out->disp_size = (uint8_t)d->disp_size;
	if (d->disp_size != 0)
		out->disp_off = (uint8_t)d->pos;
	d->pos += d->disp_size;
	if (d->imm_size != 0)
		out->imm_off = (uint8_t)d->pos;
	d->pos += d->imm_size;
	if (d->imm2_size != 0)
		out->imm2_off = (uint8_t)d->pos;
	d->pos += d->imm2_size;
	if (d->pos > KINST_MAX_INSN_LEN)
		return (KINST_DEC_INVALID);
	if (d->pos > d->avail)
		return (KINST_DEC_TRUNCATED);
	return (KINST_DEC_OK);
}

/* Step 9: 3DNow!: validate the suffix opcode now that it is in range. */
static inline int
check_3dnow(const struct dec *d)
{

	if (d->map == KINST_MAP_0F && d->opcode == 0x0f &&
	    !ok_3dnow[d->buf[d->out->imm_off]])
		return (KINST_DEC_INVALID);
	return (KINST_DEC_OK);
}

/* Step 10: read the displacement and immediates; fill in the rest. */
static inline void
decode_finish(const struct dec *d)
{
	struct kinst_insn *out = d->out;
	unsigned rex = d->rex;

	if (d->disp_size != 0) {
		if ((d->attr & I_MASK) == I_MOFFS && d->disp_size == 4)
			out->disp = (int64_t)(uint32_t)read_le(d->buf +
			    out->disp_off, 4);
		else
			out->disp = read_le(d->buf + out->disp_off,
			    d->disp_size);
	}
	out->imm_size = (uint8_t)d->imm_size;
	if (d->imm_size != 0)
		out->imm = read_le(d->buf + out->imm_off, d->imm_size);
	out->imm2_size = (uint8_t)d->imm2_size;
	if (d->imm2_size != 0)
		out->imm2 = read_le(d->buf + out->imm2_off, d->imm2_size);

	out->len = (uint8_t)d->pos;
	out->enc = (uint8_t)d->enc;
	out->map = (uint8_t)d->map;
	out->opcode = (uint8_t)d->opcode;
	out->prefixes = (uint16_t)d->pfx;
	out->nprefixes = (uint8_t)d->nprefixes;
	out->seg = (uint8_t)d->seg_last;
	out->opcode_off = (uint8_t)d->op_off;
	if (d->enc == KINST_ENC_LEGACY) {
		out->rex = (uint8_t)rex;
		out->rex_w = (rex >> 3) & 1;
		out->rex_r = (rex >> 2) & 1;
		out->rex_x = (rex >> 1) & 1;
		out->rex_b = rex & 1;
	}
	out->mod = (uint8_t)d->mod;
	out->reg = (uint8_t)d->reg;
	out->rm = (uint8_t)d->rm;
	out->opsize = (uint8_t)d->opsize;
	out->addrsize = (uint8_t)d->addrsize;
}

/*
 * One pass, no backtracking: prefixes, escape and opcode (legacy 0F, 0F 38,
 * 0F 3A, or VEX/EVEX/XOP), ModRM/SIB/displacement, immediates, the
 * ModRM- and prefix-dependent special cases, LOCK, length.
 */
int
kinst_decode(const uint8_t *buf, size_t avail, struct kinst_insn *out)
{
	struct dec d = {
		.buf = buf,
		.avail = avail,
		.out = out,
		.lim = avail < KINST_MAX_INSN_LEN ? (unsigned)avail :
		    KINST_MAX_INSN_LEN,
	};
	int error;

	insn_clear(out);
	if ((error = decode_prefixes(&d)) != KINST_DEC_OK ||
	    (error = decode_opcode(&d)) != KINST_DEC_OK ||
	    (error = decode_modrm(&d)) != KINST_DEC_OK ||
	    (error = check_vex_modrm(&d)) != KINST_DEC_OK)
		goto fail;
	decode_immediates(&d);
	if ((error = decode_special(&d)) != KINST_DEC_OK ||
	    (error = check_lock(&d)) != KINST_DEC_OK ||
	    (error = decode_layout(&d)) != KINST_DEC_OK ||
	    (error = check_3dnow(&d)) != KINST_DEC_OK)
		goto fail;
	decode_finish(&d);
	return (KINST_DEC_OK);
fail:
	insn_clear(out);
	return (error);
}

uint8_t
kinst_insn_length(const uint8_t *buf, size_t avail)
{
	struct kinst_insn insn;

	if (kinst_decode(buf, avail, &insn) != KINST_DEC_OK)
		return (0);
	return (insn.len);
}
