/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Decoder unit tests: hand-picked encodings with every field asserted,
 * invalid and truncated encodings, the 15-byte limit, a robustness sweep
 * over random and systematically mutated byte strings that end right
 * before a PROT_NONE guard page, and replay of the fuzzer's regressions.
 */
#include <sys/mman.h>

#include <atf-c.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "x86/kinst_decode.h"

/*
 * The expected decode of one encoding.  Every field of struct kinst_insn is
 * compared; fields not named in an initializer are expected to be 0, except
 * opsize/addrsize, which default to 4/8 when left 0 here.
 */
struct expect {
	const char	*name;
	const char	*hex;
	struct kinst_insn want;
};

static size_t
parse_hex(const char *hex, uint8_t *buf, size_t cap)
{
	size_t n;
	unsigned v;

	n = 0;
	while (*hex != '\0') {
		if (*hex == ' ') {
			hex++;
			continue;
		}
		ATF_REQUIRE_MSG(sscanf(hex, "%2x", &v) == 1, "bad hex %s", hex);
		ATF_REQUIRE(n < cap);
		buf[n++] = (uint8_t)v;
		hex += 2;
	}
	return (n);
}

#define	CMP(f)								\
	if ((int64_t)got->f != (int64_t)want->f) {			\
		ATF_CHECK_MSG(0, "%s [%s]: " #f " = %lld, want %lld",	\
		    name, hex, (long long)got->f, (long long)want->f);	\
		bad = 1;						\
	}

/* Every field of struct kinst_insn. */
#define	INSN_FIELDS(F)							\
	F(len) F(enc) F(map) F(opcode) F(prefixes) F(nprefixes) F(rex)	\
	F(rex_w) F(rex_r) F(rex_x) F(rex_b) F(vex_l) F(vex_pp)		\
	F(opcode_off) F(has_modrm) F(modrm) F(modrm_off) F(mod) F(reg)	\
	F(rm) F(has_sib) F(sib) F(disp_off) F(disp_size) F(imm_off)	\
	F(imm_size) F(imm2_off) F(imm2_size) F(opsize) F(addrsize)	\
	F(rip_relative) F(disp) F(imm) F(imm2) F(seg)

static int
compare(const char *name, const char *hex, const struct kinst_insn *got,
    const struct kinst_insn *want)
{
	int bad = 0;

	INSN_FIELDS(CMP)
	return (bad);
}

#define	NE(f)	|| a->f != b->f
static int
insn_equal(const struct kinst_insn *a, const struct kinst_insn *b)
{

	return (!(0 INSN_FIELDS(NE)));
}

/*
 * Decode `hex' with every limit from 0 to its length + 3 and check: the
 * exact result at and above its length, TRUNCATED below it.
 */
static void
check_one(const struct expect *e)
{
	uint8_t buf[32];
	struct kinst_insn got, want;
	size_t n, avail;
	int st;

	n = parse_hex(e->hex, buf, sizeof(buf));
	want = e->want;
	if (want.opsize == 0)
		want.opsize = 4;
	if (want.addrsize == 0)
		want.addrsize = 8;
	ATF_REQUIRE_MSG(want.len == n, "%s: test table: len %u but %zu bytes",
	    e->name, want.len, n);
	for (avail = 0; avail <= n + 3 && avail <= sizeof(buf); avail++) {
		memset(&got, 0xa5, sizeof(got));
		st = kinst_decode(buf, avail, &got);
		if (avail < n) {
			ATF_CHECK_MSG(st == KINST_DEC_TRUNCATED,
			    "%s: avail %zu: status %d, want TRUNCATED",
			    e->name, avail, st);
			ATF_CHECK_MSG(got.len == 0, "%s: avail %zu: len %u",
			    e->name, avail, got.len);
			continue;
		}
		ATF_CHECK_MSG(st == KINST_DEC_OK, "%s: avail %zu: status %d",
		    e->name, avail, st);
		if (st == KINST_DEC_OK && compare(e->name, e->hex, &got, &want))
			return;
		ATF_CHECK_EQ(kinst_insn_length(buf, avail), n);
	}
}

static void
check_status(const char *hex, size_t avail, int want)
{
	uint8_t buf[32];
	struct kinst_insn got;
	size_t n;
	int st;

	memset(buf, 0, sizeof(buf));
	n = parse_hex(hex, buf, sizeof(buf));
	(void)n;
	st = kinst_decode(buf, avail, &got);
	ATF_CHECK_MSG(st == want, "[%s] avail %zu: status %d, want %d", hex,
	    avail, st, want);
	ATF_CHECK_MSG(got.len == 0 || st == KINST_DEC_OK, "[%s]: len %u on "
	    "failure", hex, got.len);
	if (want != KINST_DEC_OK)
		ATF_CHECK_EQ(kinst_insn_length(buf, avail), 0);
}

#define	RUN(tab) do {							\
	size_t i_;							\
	for (i_ = 0; i_ < sizeof(tab) / sizeof((tab)[0]); i_++)		\
		check_one(&(tab)[i_]);					\
} while (0)

/* Shorthands for the expectation tables. */
#define	MODRM(off, m, md, r, rmv)	.has_modrm = 1, .modrm_off = (off), \
	.modrm = (m), .mod = (md), .reg = (r), .rm = (rmv)
#define	DISP(off, sz, v)	.disp_off = (off), .disp_size = (sz), .disp = (v)
#define	IMM(off, sz, v)		.imm_off = (off), .imm_size = (sz), .imm = (v)
#define	IMM2(off, sz, v)	.imm2_off = (off), .imm2_size = (sz), .imm2 = (v)
#define	OP(o, off)		.opcode = (o), .opcode_off = (off)
#define	MAP0F			.map = KINST_MAP_0F

ATF_TC_WITHOUT_HEAD(rip_relative);
ATF_TC_BODY(rip_relative, tc)
{
	static const struct expect t[] = {
	{ "cmpl $imm32, disp(%rip)", "81 3d 78 56 34 12 ef be ad de",
	  { .len = 10, OP(0x81, 0), MODRM(1, 0x3d, 0, 7, 5),
	    DISP(2, 4, 0x12345678), IMM(6, 4, (int32_t)0xdeadbeef),
	    .rip_relative = 1 } },
	{ "cmpq $imm8, disp(%rip)", "48 83 3d f0 ff ff ff 05",
	  { .len = 8, OP(0x83, 1), .rex = 0x48, .rex_w = 1,
	    MODRM(2, 0x3d, 0, 7, 5), DISP(3, 4, -16), IMM(7, 1, 5),
	    .rip_relative = 1, .opsize = 8 } },
	{ "cmpw $imm16, disp(%rip)", "66 81 3d 00 01 00 00 34 12",
	  { .len = 9, OP(0x81, 1), .prefixes = KINST_PFX_66, .nprefixes = 1,
	    MODRM(2, 0x3d, 0, 7, 5), DISP(3, 4, 0x100), IMM(7, 2, 0x1234),
	    .rip_relative = 1, .opsize = 2 } },
	{ "movl $imm32, disp(%rip)", "c7 05 10 00 00 00 01 00 00 00",
	  { .len = 10, OP(0xc7, 0), MODRM(1, 0x05, 0, 0, 5),
	    DISP(2, 4, 16), IMM(6, 4, 1), .rip_relative = 1 } },
	{ "movb $imm8, %fs:disp(%rip)", "64 c6 05 10 00 00 00 ff",
	  { .len = 8, OP(0xc6, 1), .prefixes = KINST_PFX_FS, .nprefixes = 1,
	    .seg = 0x64, MODRM(2, 0x05, 0, 0, 5), DISP(3, 4, 16),
	    IMM(7, 1, -1), .rip_relative = 1 } },
	{ "mov disp(%rip), %r13 (REX.B does not change rm=5)",
	  "4c 8b 2d 00 00 00 80",
	  { .len = 7, OP(0x8b, 1), .rex = 0x4c, .rex_w = 1, .rex_r = 1,
	    MODRM(2, 0x2d, 0, 5, 5), DISP(3, 4, (int32_t)0x80000000),
	    .rip_relative = 1, .opsize = 8 } },
	{ "lea disp(%eip), %eax (67)", "67 8d 05 04 00 00 00",
	  { .len = 7, OP(0x8d, 1), .prefixes = KINST_PFX_67, .nprefixes = 1,
	    MODRM(2, 0x05, 0, 0, 5), DISP(3, 4, 4), .rip_relative = 1,
	    .addrsize = 4 } },
	{ "call *disp(%rip)", "ff 15 f8 ff ff ff",
	  { .len = 6, OP(0xff, 0), MODRM(1, 0x15, 0, 2, 5), DISP(2, 4, -8),
	    .rip_relative = 1, .opsize = 8 } },
	{ "jmp *disp(%rip) with notrack", "3e ff 25 00 00 00 00",
	  { .len = 7, OP(0xff, 1), .prefixes = KINST_PFX_DS, .nprefixes = 1,
	    .seg = 0x3e, MODRM(2, 0x25, 0, 4, 5), DISP(3, 4, 0),
	    .rip_relative = 1, .opsize = 8 } },
	{ "3DNow! pfadd disp(%rip): suffix after the disp32",
	  "0f 0f 05 00 10 00 00 9e",
	  { .len = 8, MAP0F, OP(0x0f, 1), MODRM(2, 0x05, 0, 0, 5),
	    DISP(3, 4, 0x1000), IMM(7, 1, (int8_t)0x9e),
	    .rip_relative = 1 } },
	{ "pcmpistri $imm8, disp(%rip)", "66 0f 3a 63 05 00 00 00 00 0c",
	  { .len = 10, .map = KINST_MAP_0F3A, OP(0x63, 3),
	    .prefixes = KINST_PFX_66, .nprefixes = 1,
	    MODRM(4, 0x05, 0, 0, 5), DISP(5, 4, 0), IMM(9, 1, 12),
	    .rip_relative = 1, .opsize = 2 } },
	{ "vbroadcastss disp(%rip), %ymm8 (VEX3)",
	  "c4 62 7d 18 05 10 00 00 00",
	  { .len = 9, .enc = KINST_ENC_VEX3, .map = KINST_MAP_0F38,
	    OP(0x18, 3), .rex_r = 1, .vex_l = 1, .vex_pp = 1,
	    MODRM(4, 0x05, 0, 0, 5), DISP(5, 4, 16), .rip_relative = 1 } },
	{ "vaddpd disp(%rip), %zmm0, %zmm0 (EVEX)",
	  "62 f1 fd 48 58 05 00 01 00 00",
	  { .len = 10, .enc = KINST_ENC_EVEX, MAP0F, OP(0x58, 4),
	    .rex_w = 1, .vex_l = 2, .vex_pp = 1, MODRM(5, 0x05, 0, 0, 5),
	    DISP(6, 4, 0x100), .rip_relative = 1, .opsize = 8 } },
	};

	RUN(t);
}

ATF_TC_WITHOUT_HEAD(modrm_sib);
ATF_TC_BODY(modrm_sib, tc)
{
	static const struct expect t[] = {
	{ "mov 8(%rsp), %rax", "48 8b 44 24 08",
	  { .len = 5, OP(0x8b, 1), .rex = 0x48, .rex_w = 1,
	    MODRM(2, 0x44, 1, 0, 4), .has_sib = 1, .sib = 0x24,
	    DISP(4, 1, 8), .opsize = 8 } },
	{ "call *0x10(%rsp)", "ff 54 24 10",
	  { .len = 4, OP(0xff, 0), MODRM(1, 0x54, 1, 2, 4), .has_sib = 1,
	    .sib = 0x24, DISP(3, 1, 16), .opsize = 8 } },
	{ "mov (%rsp), %eax", "8b 04 24",
	  { .len = 3, OP(0x8b, 0), MODRM(1, 0x04, 0, 0, 4), .has_sib = 1,
	    .sib = 0x24 } },
	{ "mov 0x11223344 (SIB, no base, no index)", "8b 04 25 44 33 22 11",
	  { .len = 7, OP(0x8b, 0), MODRM(1, 0x04, 0, 0, 4), .has_sib = 1,
	    .sib = 0x25, DISP(3, 4, 0x11223344) } },
	{ "mov -0x80(,%r13,8) (SIB base 5, mod 0)",
	  "42 8b 04 ed 80 ff ff ff",
	  { .len = 8, OP(0x8b, 1), .rex = 0x42, .rex_x = 1,
	    MODRM(2, 0x04, 0, 0, 4), .has_sib = 1, .sib = 0xed,
	    DISP(4, 4, -128) } },
	{ "mov 0(%r13) needs a disp8", "41 8b 45 00",
	  { .len = 4, OP(0x8b, 1), .rex = 0x41, .rex_b = 1,
	    MODRM(2, 0x45, 1, 0, 5), DISP(3, 1, 0) } },
	{ "mov (%r12) needs a SIB", "41 8b 04 24",
	  { .len = 4, OP(0x8b, 1), .rex = 0x41, .rex_b = 1,
	    MODRM(2, 0x04, 0, 0, 4), .has_sib = 1, .sib = 0x24 } },
	{ "lea 0x12345678(%rax,%rbx,2), %rcx", "48 8d 8c 58 78 56 34 12",
	  { .len = 8, OP(0x8d, 1), .rex = 0x48, .rex_w = 1,
	    MODRM(2, 0x8c, 2, 1, 4), .has_sib = 1, .sib = 0x58,
	    DISP(4, 4, 0x12345678), .opsize = 8 } },
	{ "mov %cr0, %rbp: mod ignored", "0f 20 05",
	  { .len = 3, MAP0F, OP(0x20, 1), MODRM(2, 0x05, 0, 0, 5) } },
	{ "add %eax, %ecx (register form)", "01 c1",
	  { .len = 2, OP(0x01, 0), MODRM(1, 0xc1, 3, 0, 1) } },
	{ "nopw %cs:0(%rax,%rax,1) with 66 2e", "66 2e 0f 1f 84 00 00 00 00 00",
	  { .len = 10, MAP0F, OP(0x1f, 3),
	    .prefixes = KINST_PFX_66 | KINST_PFX_CS, .nprefixes = 2,
	    .seg = 0x2e, MODRM(4, 0x84, 2, 0, 4), .has_sib = 1, .sib = 0x00,
	    DISP(6, 4, 0), .opsize = 2 } },
	};

	RUN(t);
}

ATF_TC_WITHOUT_HEAD(immediates);
ATF_TC_BODY(immediates, tc)
{
	static const struct expect t[] = {
	{ "movabs $imm64, %rax", "48 b8 88 77 66 55 44 33 22 11",
	  { .len = 10, OP(0xb8, 1), .rex = 0x48, .rex_w = 1,
	    IMM(2, 8, 0x1122334455667788), .opsize = 8 } },
	{ "mov $imm32, %r9d", "41 b9 ff ff ff ff",
	  { .len = 6, OP(0xb9, 1), .rex = 0x41, .rex_b = 1,
	    IMM(2, 4, -1) } },
	{ "mov $imm16, %ax", "66 b8 34 12",
	  { .len = 4, OP(0xb8, 1), .prefixes = KINST_PFX_66, .nprefixes = 1,
	    IMM(2, 2, 0x1234), .opsize = 2 } },
	{ "mov $imm8, %r8b", "41 b0 80",
	  { .len = 3, OP(0xb0, 1), .rex = 0x41, .rex_b = 1,
	    IMM(2, 1, -128) } },
	{ "movabs 0x1122334455667788, %rax (moffs64)",
	  "48 a1 88 77 66 55 44 33 22 11",
	  { .len = 10, OP(0xa1, 1), .rex = 0x48, .rex_w = 1,
	    DISP(2, 8, 0x1122334455667788), .opsize = 8 } },
	{ "movabs %al, 0xffffffffffffff00 (moffs64)",
	  "a2 00 ff ff ff ff ff ff ff",
	  { .len = 9, OP(0xa2, 0), DISP(1, 8, (int64_t)0xffffffffffffff00) } },
	{ "mov 0x80000000, %al (67: moffs32, zero-extended)",
	  "67 a0 00 00 00 80",
	  { .len = 6, OP(0xa0, 1), .prefixes = KINST_PFX_67, .nprefixes = 1,
	    DISP(2, 4, 0x80000000), .addrsize = 4 } },
	{ "enter $0x1000, $1", "c8 00 10 01",
	  { .len = 4, OP(0xc8, 0), IMM(1, 2, 0x1000), IMM2(3, 1, 1),
	    .opsize = 8 } },
	{ "ret $8", "c2 08 00",
	  { .len = 3, OP(0xc2, 0), IMM(1, 2, 8), .opsize = 8 } },
	{ "test $1, %al (F6 /0 has ib)", "f6 c0 01",
	  { .len = 3, OP(0xf6, 0), MODRM(1, 0xc0, 3, 0, 0), IMM(2, 1, 1) } },
	{ "test $1, (%rax) (F6 /1 alias has ib)", "f6 08 01",
	  { .len = 3, OP(0xf6, 0), MODRM(1, 0x08, 0, 1, 0), IMM(2, 1, 1) } },
	{ "not %al (F6 /2 has no imm)", "f6 d0",
	  { .len = 2, OP(0xf6, 0), MODRM(1, 0xd0, 3, 2, 0) } },
	{ "testl $imm32, 4(%rdi)", "f7 47 04 00 00 00 80",
	  { .len = 7, OP(0xf7, 0), MODRM(1, 0x47, 1, 0, 7), DISP(2, 1, 4),
	    IMM(3, 4, (int32_t)0x80000000) } },
	{ "testw $imm16, %ax", "66 f7 c0 34 12",
	  { .len = 5, OP(0xf7, 1), .prefixes = KINST_PFX_66, .nprefixes = 1,
	    MODRM(2, 0xc0, 3, 0, 0), IMM(3, 2, 0x1234), .opsize = 2 } },
	{ "neg %rax (F7 /3)", "48 f7 d8",
	  { .len = 3, OP(0xf7, 1), .rex = 0x48, .rex_w = 1,
	    MODRM(2, 0xd8, 3, 3, 0), .opsize = 8 } },
	{ "idivl 8(%rsp) (F7 /7)", "f7 7c 24 08",
	  { .len = 4, OP(0xf7, 0), MODRM(1, 0x7c, 1, 7, 4), .has_sib = 1,
	    .sib = 0x24, DISP(3, 1, 8) } },
	{ "push $imm32", "68 00 00 00 80",
	  { .len = 5, OP(0x68, 0), IMM(1, 4, (int32_t)0x80000000),
	    .opsize = 8 } },
	{ "push $imm8", "6a ff",
	  { .len = 2, OP(0x6a, 0), IMM(1, 1, -1), .opsize = 8 } },
	{ "imul $imm8, %ecx, %eax", "6b c1 07",
	  { .len = 3, OP(0x6b, 0), MODRM(1, 0xc1, 3, 0, 1), IMM(2, 1, 7) } },
	{ "shl $3, %rax", "48 c1 e0 03",
	  { .len = 4, OP(0xc1, 1), .rex = 0x48, .rex_w = 1,
	    MODRM(2, 0xe0, 3, 4, 0), IMM(3, 1, 3), .opsize = 8 } },
	{ "int $0x80", "cd 80",
	  { .len = 2, OP(0xcd, 0), IMM(1, 1, (int8_t)0x80) } },
	{ "xbegin rel32", "c7 f8 00 01 00 00",
	  { .len = 6, OP(0xc7, 0), MODRM(1, 0xf8, 3, 7, 0),
	    IMM(2, 4, 0x100) } },
	{ "xabort $0xff", "c6 f8 ff",
	  { .len = 3, OP(0xc6, 0), MODRM(1, 0xf8, 3, 7, 0),
	    IMM(2, 1, -1) } },
	{ "palignr $8, %xmm1, %xmm0", "66 0f 3a 0f c1 08",
	  { .len = 6, .map = KINST_MAP_0F3A, OP(0x0f, 3),
	    .prefixes = KINST_PFX_66, .nprefixes = 1,
	    MODRM(4, 0xc1, 3, 0, 1), IMM(5, 1, 8), .opsize = 2 } },
	{ "pshufd $0x1b, %xmm1, %xmm0", "66 0f 70 c1 1b",
	  { .len = 5, MAP0F, OP(0x70, 2), .prefixes = KINST_PFX_66,
	    .nprefixes = 1, MODRM(3, 0xc1, 3, 0, 1), IMM(4, 1, 0x1b),
	    .opsize = 2 } },
	{ "extrq $2, $1, %xmm0", "66 0f 78 c0 01 02",
	  { .len = 6, MAP0F, OP(0x78, 2), .prefixes = KINST_PFX_66,
	    .nprefixes = 1, MODRM(3, 0xc0, 3, 0, 0), IMM(4, 1, 1),
	    IMM2(5, 1, 2), .opsize = 2 } },
	{ "insertq $2, $1, %xmm1, %xmm0", "f2 0f 78 c1 01 02",
	  { .len = 6, MAP0F, OP(0x78, 2), .prefixes = KINST_PFX_F2,
	    .nprefixes = 1, MODRM(3, 0xc1, 3, 0, 1), IMM(4, 1, 1),
	    IMM2(5, 1, 2) } },
	{ "insertq %xmm1, %xmm0 (no imm)", "f2 0f 79 c1",
	  { .len = 4, MAP0F, OP(0x79, 2), .prefixes = KINST_PFX_F2,
	    .nprefixes = 1, MODRM(3, 0xc1, 3, 0, 1) } },
	{ "vmread %rax, (%rax) (0F 78, no prefix)", "0f 78 00",
	  { .len = 3, MAP0F, OP(0x78, 1), MODRM(2, 0x00, 0, 0, 0) } },
	{ "bt $5, %eax (0F BA /4 ib)", "0f ba e0 05",
	  { .len = 4, MAP0F, OP(0xba, 1), MODRM(2, 0xe0, 3, 4, 0),
	    IMM(3, 1, 5) } },
	{ "3DNow! pfadd %mm1, %mm0", "0f 0f c1 9e",
	  { .len = 4, MAP0F, OP(0x0f, 1), MODRM(2, 0xc1, 3, 0, 1),
	    IMM(3, 1, (int8_t)0x9e) } },
	};

	RUN(t);
}

ATF_TC_WITHOUT_HEAD(branches);
ATF_TC_BODY(branches, tc)
{
	static const struct expect t[] = {
	{ "call rel32", "e8 fb ff ff ff",
	  { .len = 5, OP(0xe8, 0), IMM(1, 4, -5), .opsize = 8 } },
	{ "jmp rel32", "e9 00 00 00 80",
	  { .len = 5, OP(0xe9, 0), IMM(1, 4, (int32_t)0x80000000),
	    .opsize = 8 } },
	{ "jmp rel8", "eb fe",
	  { .len = 2, OP(0xeb, 0), IMM(1, 1, -2), .opsize = 8 } },
	{ "je rel8", "74 10",
	  { .len = 2, OP(0x74, 0), IMM(1, 1, 16), .opsize = 8 } },
	{ "jg rel32", "0f 8f 00 10 00 00",
	  { .len = 6, MAP0F, OP(0x8f, 1), IMM(2, 4, 0x1000), .opsize = 8 } },
	{ "loop rel8", "e2 f0",
	  { .len = 2, OP(0xe2, 0), IMM(1, 1, -16), .opsize = 8 } },
	{ "jecxz rel8 (67)", "67 e3 05",
	  { .len = 3, OP(0xe3, 1), .prefixes = KINST_PFX_67, .nprefixes = 1,
	    IMM(2, 1, 5), .opsize = 8, .addrsize = 4 } },
	{ "bnd jmp rel32 (F2)", "f2 e9 00 00 00 00",
	  { .len = 6, OP(0xe9, 1), .prefixes = KINST_PFX_F2, .nprefixes = 1,
	    IMM(2, 4, 0), .opsize = 8 } },
	{ "ds-prefixed (taken hint) jne rel8", "3e 75 02",
	  { .len = 3, OP(0x75, 1), .prefixes = KINST_PFX_DS, .nprefixes = 1,
	    .seg = 0x3e, IMM(2, 1, 2), .opsize = 8 } },
	/* 66-prefixed near branches: rel16, as Capstone and objdump do. */
	{ "callw rel16 (66 E8)", "66 e8 00 01",
	  { .len = 4, OP(0xe8, 1), .prefixes = KINST_PFX_66, .nprefixes = 1,
	    IMM(2, 2, 0x100), .opsize = 2 } },
	{ "je rel16 (66 0F 84)", "66 0f 84 00 01",
	  { .len = 5, MAP0F, OP(0x84, 2), .prefixes = KINST_PFX_66,
	    .nprefixes = 1, IMM(3, 2, 0x100), .opsize = 2 } },
	{ "REX.W beats 66: jmp rel32", "66 48 e9 00 00 00 00",
	  { .len = 7, OP(0xe9, 2), .prefixes = KINST_PFX_66, .nprefixes = 1,
	    .rex = 0x48, .rex_w = 1, IMM(3, 4, 0), .opsize = 8 } },
	{ "ret", "c3", { .len = 1, OP(0xc3, 0), .opsize = 8 } },
	{ "push %rax", "50", { .len = 1, OP(0x50, 0), .opsize = 8 } },
	{ "push %ax", "66 50",
	  { .len = 2, OP(0x50, 1), .prefixes = KINST_PFX_66, .nprefixes = 1,
	    .opsize = 2 } },
	{ "pop %r15", "41 5f",
	  { .len = 2, OP(0x5f, 1), .rex = 0x41, .rex_b = 1, .opsize = 8 } },
	{ "pop (%rax) (8F /0)", "8f 00",
	  { .len = 2, OP(0x8f, 0), MODRM(1, 0x00, 0, 0, 0), .opsize = 8 } },
	{ "push 8(%rbp) (FF /6)", "ff 75 08",
	  { .len = 3, OP(0xff, 0), MODRM(1, 0x75, 1, 6, 5), DISP(2, 1, 8),
	    .opsize = 8 } },
	{ "incl (%rax) (FF /0 is not default-64)", "ff 00",
	  { .len = 2, OP(0xff, 0), MODRM(1, 0x00, 0, 0, 0) } },
	{ "jmp *%rax", "ff e0",
	  { .len = 2, OP(0xff, 0), MODRM(1, 0xe0, 3, 4, 0), .opsize = 8 } },
	{ "pushf", "9c", { .len = 1, OP(0x9c, 0), .opsize = 8 } },
	};

	RUN(t);
}

ATF_TC_WITHOUT_HEAD(prefixes);
ATF_TC_BODY(prefixes, tc)
{
	static const struct expect t[] = {
	{ "rep movsq", "f3 48 a5",
	  { .len = 3, OP(0xa5, 2), .prefixes = KINST_PFX_F3, .nprefixes = 1,
	    .rex = 0x48, .rex_w = 1, .opsize = 8 } },
	{ "REX then 66: REX ignored", "48 66 90",
	  { .len = 3, OP(0x90, 2), .prefixes = KINST_PFX_66, .nprefixes = 1,
	    .opsize = 2 } },
	{ "two REX: the last counts", "48 41 58",
	  { .len = 3, OP(0x58, 2), .rex = 0x41, .rex_b = 1, .opsize = 8 } },
	{ "last segment wins", "2e 3e 64 8b 00",
	  { .len = 5, OP(0x8b, 3),
	    .prefixes = KINST_PFX_CS | KINST_PFX_DS | KINST_PFX_FS,
	    .nprefixes = 3, .seg = 0x64, MODRM(4, 0x00, 0, 0, 0) } },
	{ "lock cmpxchg %rcx, %gs:(%rdx)", "65 f0 48 0f b1 0a",
	  { .len = 6, MAP0F, OP(0xb1, 4),
	    .prefixes = KINST_PFX_GS | KINST_PFX_F0, .nprefixes = 2,
	    .seg = 0x65, .rex = 0x48, .rex_w = 1, MODRM(5, 0x0a, 0, 1, 2),
	    .opsize = 8 } },
	{ "popcnt: F3 mandatory, last of F2/F3 wins", "f2 f3 0f b8 c0",
	  { .len = 5, MAP0F, OP(0xb8, 3),
	    .prefixes = KINST_PFX_F2 | KINST_PFX_F3, .nprefixes = 2,
	    MODRM(4, 0xc0, 3, 0, 0) } },
	{ "endbr64", "f3 0f 1e fa",
	  { .len = 4, MAP0F, OP(0x1e, 2), .prefixes = KINST_PFX_F3,
	    .nprefixes = 1, MODRM(3, 0xfa, 3, 7, 2) } },
	{ "crc32q (F2 0F 38 F1)", "f2 48 0f 38 f1 c1",
	  { .len = 6, .map = KINST_MAP_0F38, OP(0xf1, 4),
	    .prefixes = KINST_PFX_F2, .nprefixes = 1, .rex = 0x48,
	    .rex_w = 1, MODRM(5, 0xc1, 3, 0, 1), .opsize = 8 } },
	{ "14 prefixes + nop = 15 bytes",
	  "66 66 66 66 66 66 66 66 66 66 66 66 66 66 90",
	  { .len = 15, OP(0x90, 14), .prefixes = KINST_PFX_66,
	    .nprefixes = 14, .opsize = 2 } },
	{ "ud0 has a ModRM", "0f ff 00",
	  { .len = 3, MAP0F, OP(0xff, 1), MODRM(2, 0x00, 0, 0, 0) } },
	{ "ud1 has a ModRM", "0f b9 cc",
	  { .len = 3, MAP0F, OP(0xb9, 1), MODRM(2, 0xcc, 3, 1, 4) } },
	{ "ud2", "0f 0b", { .len = 2, MAP0F, OP(0x0b, 1) } },
	{ "prefetch (0F 0D /0)", "0f 0d 00",
	  { .len = 3, MAP0F, OP(0x0d, 1), MODRM(2, 0x00, 0, 0, 0) } },
	};

	RUN(t);
}

ATF_TC_WITHOUT_HEAD(vex_evex_xop);
ATF_TC_BODY(vex_evex_xop, tc)
{
	static const struct expect t[] = {
	{ "vzeroupper (VEX2, no ModRM)", "c5 f8 77",
	  { .len = 3, .enc = KINST_ENC_VEX2, MAP0F, OP(0x77, 2) } },
	{ "vmovdqu %ymm1, 0x20(%rdi) (VEX2)", "c5 fe 7f 4f 20",
	  { .len = 5, .enc = KINST_ENC_VEX2, MAP0F, OP(0x7f, 2),
	    .vex_l = 1, .vex_pp = 2, MODRM(3, 0x4f, 1, 1, 7),
	    DISP(4, 1, 0x20) } },
	{ "vpxor %xmm9, %xmm9, %xmm9 (VEX2 with R)", "c4 41 31 ef c9",
	  { .len = 5, .enc = KINST_ENC_VEX3, MAP0F, OP(0xef, 3),
	    .rex_r = 1, .rex_b = 1, .vex_pp = 1,
	    MODRM(4, 0xc9, 3, 1, 1) } },
	{ "vinsertf128 $1 (VEX3 map 3)", "c4 e3 7d 18 c1 01",
	  { .len = 6, .enc = KINST_ENC_VEX3, .map = KINST_MAP_0F3A,
	    OP(0x18, 3), .vex_l = 1, .vex_pp = 1, MODRM(4, 0xc1, 3, 0, 1),
	    IMM(5, 1, 1) } },
	{ "vpshufd $0x1b (VEX map 1 with imm)", "c5 f9 70 c1 1b",
	  { .len = 5, .enc = KINST_ENC_VEX2, MAP0F, OP(0x70, 2),
	    .vex_pp = 1, MODRM(3, 0xc1, 3, 0, 1), IMM(4, 1, 0x1b) } },
	{ "mulx %rcx, %rax, %rdx (VEX.W1)", "c4 e2 fb f6 d1",
	  { .len = 5, .enc = KINST_ENC_VEX3, .map = KINST_MAP_0F38,
	    OP(0xf6, 3), .rex_w = 1, .vex_pp = 3, MODRM(4, 0xd1, 3, 2, 1),
	    .opsize = 8 } },
	{ "vpaddd (%rax,%rbx,4), %zmm1, %zmm2{%k1} (EVEX)",
	  "62 f1 75 49 fe 14 98",
	  { .len = 7, .enc = KINST_ENC_EVEX, MAP0F, OP(0xfe, 4),
	    .vex_l = 2, .vex_pp = 1, MODRM(5, 0x14, 0, 2, 4), .has_sib = 1,
	    .sib = 0x98 } },
	{ "vpternlogd $0x96 (EVEX map 3, disp8*N)",
	  "62 f3 75 48 25 41 01 96",
	  { .len = 8, .enc = KINST_ENC_EVEX, .map = KINST_MAP_0F3A,
	    OP(0x25, 4), .vex_l = 2, .vex_pp = 1, MODRM(5, 0x41, 1, 0, 1),
	    DISP(6, 1, 1), IMM(7, 1, (int8_t)0x96) } },
	{ "vaddph %zmm1, %zmm2, %zmm3 (EVEX map 5)", "62 f5 6c 48 58 d9",
	  { .len = 6, .enc = KINST_ENC_EVEX, .map = KINST_MAP_EVEX5,
	    OP(0x58, 4), .vex_l = 2, MODRM(5, 0xd9, 3, 3, 1) } },
	{ "vprotd $1 (XOP map 8)", "8f e8 78 c2 c1 01",
	  { .len = 6, .enc = KINST_ENC_XOP, .map = KINST_MAP_XOP8,
	    OP(0xc2, 3), MODRM(4, 0xc1, 3, 0, 1), IMM(5, 1, 1) } },
	{ "vfrczpd (XOP map 9)", "8f e9 78 81 c1",
	  { .len = 5, .enc = KINST_ENC_XOP, .map = KINST_MAP_XOP9,
	    OP(0x81, 3), MODRM(4, 0xc1, 3, 0, 1) } },
	{ "bextr $imm32 (XOP map A)", "8f ea 78 10 c0 01 02 03 04",
	  { .len = 9, .enc = KINST_ENC_XOP, .map = KINST_MAP_XOPA,
	    OP(0x10, 3), MODRM(4, 0xc0, 3, 0, 0), IMM(5, 4, 0x04030201) } },
	{ "pop %rax (8F /0, not XOP)", "8f c0",
	  { .len = 2, OP(0x8f, 0), MODRM(1, 0xc0, 3, 0, 0), .opsize = 8 } },
	{ "VEX after a segment prefix is fine", "2e c5 f8 77",
	  { .len = 4, .enc = KINST_ENC_VEX2, MAP0F, OP(0x77, 3),
	    .prefixes = KINST_PFX_CS, .nprefixes = 1, .seg = 0x2e } },
	};

	RUN(t);
}

ATF_TC_WITHOUT_HEAD(invalid);
ATF_TC_BODY(invalid, tc)
{
	static const char *const inval[] = {
		/* one-byte opcodes invalid in 64-bit mode */
		"06", "07", "0e", "16", "17", "1e", "1f", "27", "2f", "37",
		"3f", "60", "61", "82 c0 01", "9a 00 00 00 00 00 00", "ce",
		"d4 0a", "d5 0a", "d6", "ea 00 00 00 00 00 00",
		/* undefined 0F-map opcodes */
		"0f 04", "0f 0a", "0f 0c", "0f 24 c0", "0f 25 c0", "0f 26 c0",
		"0f 27 c0", "0f 36", "0f 39", "0f 3b", "0f 3c", "0f 3d", "0f 3e",
		"0f 3f", "0f 7a c0", "0f 7b c0", "0f b8 c0", "0f a6 00",
		"0f a7 00", "0f 38 50 c0", "0f 38 ff c0", "0f 3a 00 c0 00",
		"0f 3a ff c0 00", "0f 0f c1 00",
		/* groups: undefined /reg */
		"0f 00 30", "0f 00 38", "0f ba 18 01", "0f c7 00", "8f 20",
		"c6 08 00", "c7 08 00 00 00 00", "c6 f9 00", "fe 10", "fe 38",
		"ff 38", "ff d8", "ff e8", "f3 0f 78 c0 01 02", "66 0f 78 00 01 02",
		"66 0f 78 c8 01 02",
		/* VEX/EVEX/XOP after 66/F2/F3/F0/REX, bad maps */
		"66 c5 f8 77", "f2 c5 f8 77", "f3 c5 f8 77", "f0 c5 f8 77",
		"48 c5 f8 77", "41 c4 e2 7d 18 c1", "66 62 f1 7c 48 58 c1",
		"66 8f e8 78 c2 c1 01", "c4 e0 7d 18 c1", "c4 e4 7d 18 c1",
		"c5 f8 00 c0", "c4 e2 7d ff c1",
		"62 f0 7c 48 58 c1", "62 f4 7c 48 58 c1", "62 f7 7c 48 58 c1",
		"62 f9 7c 48 58 c1", "62 f1 78 48 58 c1", "8f eb 78 10 c0",
		/* more than 15 bytes */
		"66 66 66 66 66 66 66 66 66 66 66 66 66 66 66 90",
		"66 66 66 66 66 66 66 66 66 66 48 81 c0 01 00 00 00",
		"2e 2e 2e 2e 2e 2e 2e 2e 81 84 24 00 01 00 00 01 00 00 00",
	};
	size_t i;

	for (i = 0; i < sizeof(inval) / sizeof(inval[0]); i++)
		check_status(inval[i], 32, KINST_DEC_INVALID);
	/* Too long is known from the header: invalid even when truncated. */
	check_status("66 66 66 66 66 66 66 66 66 66 48 81 c0", 13,
	    KINST_DEC_INVALID);
	/* ... but 14 prefixes and nothing more may still become valid. */
	check_status("66 66 66 66 66 66 66 66 66 66 66 66 66 66", 14,
	    KINST_DEC_TRUNCATED);
	check_status("", 0, KINST_DEC_TRUNCATED);
	check_status("0f", 1, KINST_DEC_TRUNCATED);
	check_status("c4 e2", 2, KINST_DEC_TRUNCATED);
	check_status("62 f1 7c", 3, KINST_DEC_TRUNCATED);
	check_status("8f", 1, KINST_DEC_TRUNCATED);
	/* A limit larger than 15 is fine. */
	check_status("90", 4096, KINST_DEC_OK);
}

/*
 * Robustness: decode strings that end exactly at a PROT_NONE guard page
 * with every limit from 0 to 15 and check the invariants.  A read past the
 * limit faults.
 */
static uint8_t *guard_end;	/* first byte of the PROT_NONE page */
static unsigned long n_ok, n_trunc, n_inval;

static void
guard_setup(void)
{
	long pg;
	uint8_t *p;

	pg = sysconf(_SC_PAGESIZE);
	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ATF_REQUIRE(p != MAP_FAILED);
	ATF_REQUIRE(mprotect(p + pg, pg, PROT_NONE) == 0);
	guard_end = p + pg;
}

static int
invariants(const uint8_t *buf, size_t avail, const struct kinst_insn *in,
    int st)
{
	unsigned len;

	if (st != KINST_DEC_OK)
		return (in->len == 0 && kinst_insn_length(buf, avail) == 0 &&
		    (st == KINST_DEC_TRUNCATED || st == KINST_DEC_INVALID));
	len = in->len;
	if (len < 1 || len > KINST_MAX_INSN_LEN || len > avail)
		return (0);
	if (kinst_insn_length(buf, avail) != len)
		return (0);
	if (in->opcode_off >= len || in->nprefixes > in->opcode_off)
		return (0);
	if (in->has_modrm && (in->modrm_off <= in->opcode_off ||
	    in->modrm_off >= len || buf[in->modrm_off] != in->modrm ||
	    in->mod != in->modrm >> 6 || in->reg != ((in->modrm >> 3) & 7) ||
	    in->rm != (in->modrm & 7)))
		return (0);
	if (in->has_sib && (!in->has_modrm || in->modrm_off + 1u >= len ||
	    buf[in->modrm_off + 1] != in->sib))
		return (0);
	if (in->disp_size != 0 && in->disp_size != 1 && in->disp_size != 4 &&
	    in->disp_size != 8)
		return (0);
	if (in->disp_size && in->disp_off + in->disp_size > len)
		return (0);
	if (in->imm_size != 0 && in->imm_size != 1 && in->imm_size != 2 &&
	    in->imm_size != 4 && in->imm_size != 8)
		return (0);
	if (in->imm_size && in->imm_off + in->imm_size > len)
		return (0);
	if (in->imm2_size && (in->imm2_size != 1 ||
	    in->imm2_off != in->imm_off + in->imm_size ||
	    in->imm2_off + 1u > len))
		return (0);
	/* The fields tile the instruction's tail. */
	if (in->imm2_size) {
		if (in->imm2_off + in->imm2_size != len)
			return (0);
	} else if (in->imm_size) {
		if (in->imm_off + in->imm_size != len)
			return (0);
	} else if (in->disp_size) {
		if (in->disp_off + in->disp_size != len)
			return (0);
	}
	if (in->rip_relative && (in->disp_size != 4 || in->mod != 0 ||
	    in->rm != 5 || in->has_sib))
		return (0);
	if (in->opsize != 2 && in->opsize != 4 && in->opsize != 8)
		return (0);
	if (in->addrsize != 4 && in->addrsize != 8)
		return (0);
	if (in->vex_l > 3 || in->vex_pp > 3 || in->rex_w > 1 || in->rex_r > 1 ||
	    in->rex_x > 1 || in->rex_b > 1)
		return (0);
	if (in->rex != 0 && (in->rex & 0xf0) != 0x40)
		return (0);
	return (1);
}

/*
 * Decode the 15-byte string s with every limit 0..15, each copy placed right
 * before the guard page, and check the invariants and the consistency of
 * the results across limits.
 */
static void
robust_one(const uint8_t *s)
{
	struct kinst_insn full, in;
	uint8_t *buf;
	size_t avail;
	int fst, st;
	char hex[64];
	int i;

	buf = guard_end - KINST_MAX_INSN_LEN;
	memcpy(buf, s, KINST_MAX_INSN_LEN);
	fst = kinst_decode(buf, KINST_MAX_INSN_LEN, &full);
	for (avail = 0; avail <= KINST_MAX_INSN_LEN; avail++) {
		buf = guard_end - avail;
		memmove(buf, s, avail);
		memset(&in, 0x5a, sizeof(in));
		st = kinst_decode(buf, avail, &in);
		if (!invariants(buf, avail, &in, st) ||
		    (fst == KINST_DEC_TRUNCATED) ||
		    (fst == KINST_DEC_OK && avail < full.len &&
		    st != KINST_DEC_TRUNCATED) ||
		    (fst == KINST_DEC_OK && avail >= full.len &&
		    (st != KINST_DEC_OK ||
		    !insn_equal(&in, &full))) ||
		    (fst == KINST_DEC_INVALID && st == KINST_DEC_OK)) {
			for (i = 0; i < KINST_MAX_INSN_LEN; i++)
				sprintf(hex + 3 * i, "%02x ", s[i]);
			atf_tc_fail("invariant broken: [%s] avail %zu: status "
			    "%d len %u (full decode: status %d len %u)", hex,
			    avail, st, in.len, fst, full.len);
		}
		if (st == KINST_DEC_OK)
			n_ok++;
		else if (st == KINST_DEC_TRUNCATED)
			n_trunc++;
		else
			n_inval++;
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rng(void)
{

	/* xorshift64*: deterministic, so a failure is reproducible. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (rng_state * 0x2545f4914f6cdd1dull);
}

static void
rand_fill(uint8_t *s, size_t from)
{
	size_t i;

	for (i = from; i < KINST_MAX_INSN_LEN; i++)
		s[i] = (uint8_t)rng();
}

ATF_TC(robustness);
ATF_TC_HEAD(robustness, tc)
{
	atf_tc_set_md_var(tc, "descr", "Random and systematically mutated "
	    "byte strings at the end of a mapping followed by a guard page");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(robustness, tc)
{
	/* Escapes whose next two bytes are enumerated exhaustively. */
	static const uint8_t heads[][4] = {
		{ 0 }, { 1, 0x0f }, { 2, 0x0f, 0x38 }, { 2, 0x0f, 0x3a },
		{ 1, 0xc5 }, { 1, 0xc4 }, { 1, 0x62 }, { 1, 0x8f },
		{ 2, 0x66, 0x0f }, { 2, 0xf2, 0x0f }, { 2, 0xf3, 0x0f },
		{ 2, 0x48, 0x0f }, { 1, 0x67 }, { 1, 0x66 }, { 1, 0x48 },
	};
	static const uint8_t pfx[] = { 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e,
	    0x3e, 0x26, 0x64, 0x65, 0x36, 0x40, 0x48, 0x4f };
	uint8_t s[KINST_MAX_INSN_LEN];
	size_t h, i, j, k, n;

	guard_setup();
	/* Every head followed by every pair of bytes, random tail. */
	for (h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
		n = heads[h][0];
		for (i = 0; i < 65536; i++) {
			memcpy(s, heads[h] + 1, n);
			s[n] = (uint8_t)(i >> 8);
			s[n + 1] = (uint8_t)i;
			rand_fill(s, n + 2);
			robust_one(s);
		}
	}
	/* VEX/EVEX/XOP with fixed payloads: every opcode and ModRM. */
	for (i = 0; i < 65536; i++) {
		static const uint8_t esc[][5] = {
			{ 2, 0xc5, 0xf8 }, { 3, 0xc4, 0xe2, 0x7d },
			{ 3, 0xc4, 0xe3, 0xfd }, { 4, 0x62, 0xf1, 0x7c, 0x48 },
			{ 4, 0x62, 0xf2, 0xfd, 0x48 },
			{ 4, 0x62, 0xf3, 0x7d, 0x48 },
			{ 4, 0x62, 0xf5, 0x7c, 0x48 },
			{ 3, 0x8f, 0xe8, 0x78 }, { 3, 0x8f, 0xea, 0x78 },
		};
		for (k = 0; k < sizeof(esc) / sizeof(esc[0]); k++) {
			n = esc[k][0];
			memcpy(s, esc[k] + 1, n);
			s[n] = (uint8_t)(i >> 8);
			s[n + 1] = (uint8_t)i;
			rand_fill(s, n + 2);
			robust_one(s);
		}
	}
	/* Random prefix runs (0..15 prefixes) before random bytes. */
	for (i = 0; i < 200000; i++) {
		n = rng() % 16;
		for (j = 0; j < n; j++)
			s[j] = pfx[rng() % sizeof(pfx)];
		rand_fill(s, n);
		robust_one(s);
	}
	/* Plain random strings. */
	for (i = 0; i < 200000; i++) {
		rand_fill(s, 0);
		robust_one(s);
	}
	printf("robustness: %lu decodes: %lu ok, %lu truncated, %lu invalid\n",
	    n_ok + n_trunc + n_inval, n_ok, n_trunc, n_inval);
	ATF_CHECK(n_ok > 0 && n_trunc > 0 && n_inval > 0);
}

/* Replay every input the fuzzer ever crashed on (tests/fuzz/regress/decode). */
ATF_TC_WITHOUT_HEAD(fuzz_regressions);
ATF_TC_BODY(fuzz_regressions, tc)
{
	char dirpath[4096], path[4200];
	uint8_t data[256], s[KINST_MAX_INSN_LEN];
	struct dirent *de;
	struct kinst_insn in;
	DIR *d;
	FILE *f;
	size_t n, off, nfiles;
	int st;

	snprintf(dirpath, sizeof(dirpath), "%s/tests/fuzz/regress/decode",
	    KINST_SRCDIR);
	d = opendir(dirpath);
	if (d == NULL)
		atf_tc_skip("%s: %s", dirpath, strerror(errno));
	guard_setup();
	nfiles = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, de->d_name);
		f = fopen(path, "rb");
		ATF_REQUIRE_MSG(f != NULL, "%s: %s", path, strerror(errno));
		n = fread(data, 1, sizeof(data), f);
		fclose(f);
		nfiles++;
		/* The input itself, at the guard page, then each window. */
		memcpy(guard_end - n, data, n);
		st = kinst_decode(guard_end - n, n, &in);
		ATF_CHECK_MSG(invariants(guard_end - n, n, &in, st),
		    "%s: invariant broken", path);
		for (off = 0; off < n; off++) {
			memset(s, 0, sizeof(s));
			memcpy(s, data + off, n - off < sizeof(s) ? n - off :
			    sizeof(s));
			robust_one(s);
		}
	}
	closedir(d);
	printf("fuzz_regressions: %zu inputs replayed\n", nfiles);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, rip_relative);
	ATF_TP_ADD_TC(tp, modrm_sib);
	ATF_TP_ADD_TC(tp, immediates);
	ATF_TP_ADD_TC(tp, branches);
	ATF_TP_ADD_TC(tp, prefixes);
	ATF_TP_ADD_TC(tp, vex_evex_xop);
	ATF_TP_ADD_TC(tp, invalid);
	ATF_TP_ADD_TC(tp, robustness);
	ATF_TP_ADD_TC(tp, fuzz_regressions);
	return (atf_no_error());
}
