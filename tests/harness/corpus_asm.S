/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hand-written corpus: every emulated form and every RIP-relative form the
 * engine must handle, with explicit encodings where the assembler could
 * pick another one.  Conventions: System V arguments, 64-bit result in rax,
 * memory effects only in kh_scratch (see kh.h for its layout) and on the
 * stack.  Flags pushed by pushf are masked IN MEMORY before they reach a
 * register (the ground-truth run has TF set).  Linked into a non-PIE
 * executable: absolute disp32/moffs forms are used on purpose.
 */
#define	FUNC(n)	.globl n; .type n, @function; .balign 16; n:
#define	END(n)	.size n, . - n
#define	SQ(k)	kh_scratch + 8 * (k)
#define	SBIG	kh_scratch + 0xa00
#define	ARITH	0x8d5

	.text

/* Accumulate one bit per condition: rax = rax * 2 + (cc ? 0 : 1). */
.macro	JCC8 cc
	leaq	(%rax,%rax), %rax
	.byte	0x70 + \cc
	.byte	88f - 89f
89:
	leaq	1(%rax), %rax
88:
.endm

.macro	JCC32 cc
	leaq	(%rax,%rax), %rax
	.byte	0x0f, 0x80 + \cc
	.long	88f - 89f
89:
	leaq	1(%rax), %rax
88:
.endm

/* popf, then wipe the dead slot (its TF bit differs in the single-step run). */
.macro	POPF
	popfq
	movq	$0, -8(%rsp)
.endm

/* Load the arithmetic flags from %rdi, keeping every other flag (TF). */
.macro	SETFLAGS
	andq	$ARITH, %rdi
	pushfq
	andq	$~ARITH, (%rsp)
	orq	%rdi, (%rsp)
	POPF
.endm

/* jcc rel8, all 16 conditions, on the flags given in rdi. */
FUNC(asm_jcc8)
	movl	$0, %eax
	SETFLAGS
	JCC8 0
	JCC8 1
	JCC8 2
	JCC8 3
	JCC8 4
	JCC8 5
	JCC8 6
	JCC8 7
	JCC8 8
	JCC8 9
	JCC8 10
	JCC8 11
	JCC8 12
	JCC8 13
	JCC8 14
	JCC8 15
	ret
END(asm_jcc8)

/* jcc rel32 (0f 8x), all 16 conditions. */
FUNC(asm_jcc32)
	movl	$0, %eax
	SETFLAGS
	JCC32 0
	JCC32 1
	JCC32 2
	JCC32 3
	JCC32 4
	JCC32 5
	JCC32 6
	JCC32 7
	JCC32 8
	JCC32 9
	JCC32 10
	JCC32 11
	JCC32 12
	JCC32 13
	JCC32 14
	JCC32 15
	ret
END(asm_jcc32)

/* jmp rel8 forward/backward, jmp rel32 forward/backward. */
FUNC(asm_jmp)
	movq	%rdi, %rax
	andq	$7, %rsi
	incq	%rsi
	.byte	0xeb, 1f - 0f		/* jmp rel8 forward */
0:	addq	$1000, %rax
1:	addq	$2, %rax
	.byte	0xe9			/* jmp rel32 forward */
	.long	3f - 2f
2:	addq	$4000, %rax
3:	addq	$1, %rax
	decq	%rsi
	jz	5f
	.byte	0xeb, 3b - 4f		/* jmp rel8 backward */
4:
5:	movq	%rdx, %rcx
	andq	$3, %rcx
	incq	%rcx
6:	addq	$7, %rax
	decq	%rcx
	jz	8f
	.byte	0xe9			/* jmp rel32 backward */
	.long	6b - 7f
7:
8:	movq	%rdx, %rcx
	andq	$3, %rcx
9:	addq	$11, %rax
	decq	%rcx
	.byte	0x0f, 0x89			/* jns rel32 backward */
	.long	9b - 10f
10:	movq	%rsi, %rcx
11:	addq	$13, %rax
	subq	$1, %rcx
	.byte	0x77, 11b - 12f			/* ja rel8 backward */
12:	ret
END(asm_jmp)

/* Subroutines reached through the call forms (act on rax). */
FUNC(asm_sub0)
	leaq	1(%rax,%rax), %rax
	ret
END(asm_sub0)
FUNC(asm_sub1)
	imulq	$3, %rax, %rax
	ret
END(asm_sub1)
FUNC(asm_sub2)
	xorq	$0x55, %rax
	ret
END(asm_sub2)
FUNC(asm_sub3)
	rolq	$7, %rax
	ret
END(asm_sub3)

/* call rel32 (global and local target), call *%reg (with and without REX.B). */
FUNC(asm_call)
	pushq	%rbx
	movq	%rdi, %rbx
	movq	%rdi, %rax
	call	asm_sub1
	call	10f
	leaq	asm_sub0(%rip), %r11
	call	*%r11
	leaq	10f(%rip), %rdx
	call	*%rdx
	movq	%rsi, %rcx
	andq	$3, %rcx
	leaq	asm_fptab(%rip), %r8
	movq	(%r8,%rcx,8), %r9
	call	*%r9
	popq	%rbx
	ret
10:	/* local subroutine: rax = rax * 3 + rbx */
	leaq	(%rax,%rax,2), %rax
	addq	%rbx, %rax
	ret
END(asm_call)

/* call *mem: SIB forms, RSP base, RBP/R12/R13 bases, RIP-relative, 32-bit addressing. */
FUNC(asm_call_mem)
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%rbp
	movq	%rdi, %rax
	leaq	asm_fptab(%rip), %rbx
	andq	$3, %rsi
	call	*8(%rbx,%rsi,8)		/* base + index*8 + disp8 */
	call	*(%rbx,%rsi,8)		/* base + index*8 */
	call	*asm_fptab(,%rsi,8)	/* index*8 + disp32, no base */
	call	*0x100(%rbx)		/* base + disp32 */
	call	*(%rbx)			/* base */
	movq	%rbx, %r12
	call	*16(%r12)		/* r12 base (needs SIB) */
	movq	%rbx, %r13
	call	*(%r13)			/* r13 base (needs disp8 0) */
	movq	%rbx, %rbp
	call	*24(%rbp)
	movq	%rsi, %r13
	call	*asm_fptab+8(,%r13,8)	/* REX.X index */
	call	*asm_fp(%rip)		/* RIP-relative */
	pushq	asm_fptab+16(%rip)
	call	*(%rsp)			/* RSP base: address before the push */
	pushq	asm_fptab+24(%rip)
	call	*8(%rsp)		/* RSP base + disp8 */
	movq	$1, %rcx
	call	*-8(%rsp,%rcx,8)	/* RSP base + index */
	addq	$16, %rsp
	leaq	asm_fptab(%rip), %rdx
	.byte	0x67, 0xff, 0x12	/* addr32 call *(%edx) */
	popq	%rbp
	popq	%r13
	popq	%r12
	popq	%rbx
	ret
END(asm_call_mem)

/* jmp *%reg, jmp *mem: jump tables (absolute and based), RIP-relative, RSP base. */
FUNC(asm_jmp_ind)
	pushq	%rbx
	movq	%rdi, %rax
	leaq	1f(%rip), %r11
	jmp	*%r11
	addq	$1000, %rax
1:	leaq	2f(%rip), %rcx
	jmp	*%rcx
	addq	$1000, %rax
2:	andq	$3, %rsi
	jmp	*.Ljt_abs(,%rsi,8)
.Lj0:	addq	$1, %rax
	jmp	3f
.Lj1:	addq	$20, %rax
	jmp	3f
.Lj2:	addq	$300, %rax
	jmp	3f
.Lj3:	addq	$4000, %rax
3:	leaq	.Ljt_rel(%rip), %rbx
	movq	%rdx, %rcx
	andq	$3, %rcx
	jmp	*8(%rbx,%rcx,8)
.Lk0:	imulq	$3, %rax, %rax
.Lk1:	imulq	$5, %rax, %rax
.Lk2:	imulq	$7, %rax, %rax
.Lk3:	imulq	$11, %rax, %rax
.Lk4:	jmp	*.Ljfp(%rip)
	addq	$1000, %rax
.Lk5:	leaq	4f(%rip), %rcx
	pushq	%rcx
	jmp	*(%rsp)
	addq	$1000, %rax
4:	popq	%rcx
	leaq	.Ljt_end(%rip), %r10
	movq	%rsi, %r9
	jmp	*(%r10,%r9,8)
.Le0:	addq	$5, %rax
.Le1:	addq	$6, %rax
.Le2:	addq	$7, %rax
.Le3:	popq	%rbx
	ret
END(asm_jmp_ind)

/* loop/loope/loopne/jrcxz, 64- and 32-bit (0x67) address size, both ways. */
FUNC(asm_loop)
	xorl	%eax, %eax
	movl	%edi, %ecx
	andl	$15, %ecx
	jrcxz	1f			/* taken when rdi & 15 == 0 */
0:	addq	$3, %rax
	loop	0b
1:	movq	%rsi, %rcx
	andq	$15, %rcx
	jrcxz	3f
2:	incq	%rax
	cmpq	$7, %rax
	loopne	2b			/* ends on ZF or rcx == 0 */
3:	addq	%rcx, %rax
	movq	%rsi, %rcx
	andq	$15, %rcx
	jrcxz	5f
4:	leaq	16(%rax), %rax
	testb	$1, %cl
	loope	4b			/* continues while rcx even */
5:	addq	%rcx, %rax
	/* 32-bit forms: rdx may have bits above 31 set */
	movq	%rdx, %rcx
	andl	$7, %ecx		/* clears the upper half... */
	movq	%rdx, %r8
	shrq	$32, %r8
	shlq	$32, %r8
	orq	%r8, %rcx		/* ...then restores it */
	.byte	0x67, 0xe3, 7f - 6f	/* jecxz */
6:	addq	$5, %rax
	.byte	0x67, 0xe2, 6b - 7f	/* addr32 loop */
7:	addq	%rcx, %rax
	movq	%rdx, %rcx
	andl	$3, %ecx
	orq	%r8, %rcx
	.byte	0x67, 0xe3, 9f - 8f
8:	addq	$9, %rax
	cmpq	%rax, %rax
	.byte	0x67, 0xe1, 8b - 9f	/* addr32 loope */
9:	addq	%rcx, %rax
	movq	%rdx, %rcx
	andl	$3, %ecx
	orq	%r8, %rcx
	.byte	0x67, 0xe3, 11f - 10f
10:	addq	$13, %rax
	testq	%rax, %rax
	.byte	0x67, 0xe0, 10b - 11f	/* addr32 loopne */
11:	addq	%rcx, %rax
	movq	%rdx, %rcx
	.byte	0x67, 0xe3, 13f - 12f	/* jecxz with bits above 31 */
	addq	$17, %rax
12:
13:	ret
END(asm_loop)

/* ret, ret $imm16, ret $0, rep ret. */
FUNC(asm_ret)
	pushq	%rbx
	movq	%rdi, %rax
	call	1f
	pushq	$7
	pushq	%rsi
	call	2f
	call	3f
	call	4f
	subq	$0x8000, %rsp		/* a 32 KiB argument area... */
	call	5f			/* ...popped by ret $0x8000 */
	popq	%rbx
	ret
1:	addq	$11, %rax
	ret
2:	addq	8(%rsp), %rax
	imulq	16(%rsp), %rax
	ret	$16
3:	xorq	$0x1234, %rax
	ret	$0
4:	addq	$1, %rax
	.byte	0xf3, 0xc3		/* rep ret */
5:	addq	$0x8000, %rax
	ret	$0x8000			/* imm16 above 0x7fff: unsigned */
END(asm_ret)

/*
 * Returns as Linux leaves them once apply_returns() has rewritten a
 * `jmp __x86_return_thunk` (no return-thunk mitigation): ret, then four
 * int3 that never run -- a window a jump probe may take whole (issue 42).
 * An early return, a local subroutine returning so, a conditional one.
 */
#define	PADRET	.byte 0xc3, 0xcc, 0xcc, 0xcc, 0xcc

FUNC(asm_ret_pad)
	movq	%rdi, %rax
	testq	%rsi, %rsi
	jnz	1f
	addq	$3, %rax
	PADRET
1:	pushq	%rbx
	movq	%rsi, %rbx
	call	2f
	addq	%rbx, %rax
	popq	%rbx
	cmpq	$2, %rsi
	je	3f
	PADRET
2:	imulq	$7, %rax
	PADRET
3:	xorq	$0x55, %rax
	PADRET
END(asm_ret_pad)

/* pushf (64 and 16 bit), popf changing CF and DF, std/cld. */
FUNC(asm_pushf)
	movq	%rdi, %rax
	addq	%rsi, %rax
	pushfq
	andq	$ARITH, (%rsp)
	popq	%rdx
	addq	%rdx, %rax
	pushfq
	orq	$1, (%rsp)		/* set CF */
	POPF
	adcq	$0, %rax
	pushfq
	andq	$~1, (%rsp)		/* clear CF */
	POPF
	adcq	$0x10, %rax
	pushfq
	orq	$0x400, (%rsp)		/* set DF */
	POPF
	leaq	kh_scratch+0x300+15(%rip), %rsi
	leaq	SBIG + 15(%rip), %rdi
	movl	$8, %ecx
	rep movsb			/* backward */
	cld
	std
	lodsb
	cld
	movq	%rax, SQ(20)(%rip)
	cmpq	%rsi, %rax
	.byte	0x66, 0x9c		/* pushfw */
	andw	$ARITH, (%rsp)
	popw	%dx
	movzwl	%dx, %edx
	addq	%rdx, %rax
	ret
END(asm_pushf)

/* RIP-relative forms: loads, stores, lea, immediates after the displacement. */
FUNC(asm_riprel)
	pushq	%rbx
	movq	asm_rodata(%rip), %rax		/* load */
	movq	%rdi, SQ(1)(%rip)		/* store */
	leaq	asm_rodata+16(%rip), %rdx	/* lea */
	addq	(%rdx), %rax
	cmpl	$0x12345678, asm_rodata+4(%rip)	/* imm32 after disp */
	setae	%cl
	cmpb	$5, asm_rodata(%rip)		/* imm8 after disp */
	adcq	$0, %rax
	cmpq	$-3, SQ(1)(%rip)		/* 48 83 3d disp imm8 */
	sbbq	%rcx, %rax
	addq	$0x11, SQ(2)(%rip)
	movl	$0xdeadbeef, SQ(3)(%rip)	/* c7 05 disp imm32 */
	movw	$0x1234, SQ(4)(%rip)		/* 66 c7 05 disp imm16 */
	movb	$0x5a, SQ(4)+2(%rip)		/* c6 05 disp imm8 */
	testb	$0x80, asm_rodata+7(%rip)
	setnz	%bl
	testl	$0x80000000, asm_rodata+4(%rip)
	setnz	%bh
	shlq	$3, SQ(5)(%rip)			/* c1 /4 ib */
	imulq	$1000, asm_rodata+8(%rip), %rsi	/* 69 disp imm32 */
	imulq	$7, asm_rodata+8(%rip), %r9	/* 6b disp imm8 */
	addq	%rsi, %rax
	addq	%r9, %rax
	btq	$5, asm_rodata(%rip)		/* 0f ba /4 ib */
	adcq	$0, %rax
	btsq	$3, SQ(6)(%rip)
	lock addq %rdi, SQ(7)(%rip)
	xchgq	%r10, SQ(8)(%rip)
	pushq	asm_rodata+8(%rip)		/* ff 35 */
	popq	SQ(9)(%rip)			/* 8f 05 */
	movzbl	asm_rodata+3(%rip), %r11d
	movsbq	asm_rodata+7(%rip), %r8
	addq	%r11, %rax
	addq	%r8, %rax
	incl	SQ(10)(%rip)
	notq	SQ(11)(%rip)
	cmpq	%rdi, %rax
	cmovzq	asm_rodata(%rip), %rax
	setne	SQ(12)(%rip)			/* 0f 95 05 */
	shldq	$4, %rdi, SQ(13)(%rip)		/* 0f a4 disp imm8 */
	movaps	asm_xconst(%rip), %xmm0		/* 0f 28 */
	movdqa	asm_xconst+16(%rip), %xmm1	/* 66 0f 6f */
	paddq	%xmm1, %xmm0
	pshufd	$0x1b, asm_xconst(%rip), %xmm2	/* 66 0f 70 disp imm8 */
	palignr	$4, asm_xconst+16(%rip), %xmm2	/* 66 0f 3a 0f disp imm8 */
	pshufb	asm_xconst(%rip), %xmm1		/* 66 0f 38 00 */
	roundsd	$1, asm_dconst(%rip), %xmm3	/* 66 0f 3a 0b disp imm8 */
	addsd	asm_dconst+8(%rip), %xmm3
	movdqu	%xmm0, SBIG(%rip)
	movups	%xmm2, SBIG+16(%rip)
	movdqu	%xmm1, SBIG+32(%rip)
	movsd	%xmm3, SBIG+48(%rip)
	cvttsd2si asm_dconst(%rip), %rcx
	addq	%rcx, %rax
	movdqa	asm_xconst(%rip), %xmm8			/* REX.R */
	pxor	asm_xconst+16(%rip), %xmm8
	movdqu	%xmm8, SBIG+64(%rip)
	.byte	0x67, 0xa1				/* addr32 mov moffs32, %eax */
	.long	asm_rodata + 8
	addq	%rcx, %rax
	movq	%rax, SQ(14)(%rip)
	movabsq	SQ(14), %rax			/* a1 moffs64 (not RIP-relative) */
	movabsq	%rax, SQ(15)			/* a3 moffs64 */
	movabsb	SQ(4), %al			/* a0 moffs64 */
	movabsq	$0x1122334455667788, %r8
	xorq	%r8, %rax
	movq	SQ(15)(%rip), %rdx
	addq	%rdx, %rax
	movzbl	%bl, %ecx
	addq	%rcx, %rax
	movzbl	%bh, %ecx
	addq	%rcx, %rax
	popq	%rbx
	ret
END(asm_riprel)

/* VEX-encoded RIP-relative forms (AVX2). */
FUNC(asm_avx_riprel)
	vmovdqu	asm_xconst(%rip), %ymm0			/* c5 fe 6f 05 */
	vpaddd	asm_xconst+32(%rip), %ymm0, %ymm1	/* c5 fd fe 0d */
	vpermq	$0x1b, asm_xconst(%rip), %ymm2		/* c4 e3 fd 00 15 disp imm8 */
	vpshufd	$0x39, asm_xconst(%rip), %ymm3
	vpblendd $0xaa, asm_xconst+32(%rip), %ymm1, %ymm4
	vbroadcastss asm_fconst(%rip), %ymm5		/* c4 e2 7d 18 */
	vpaddd	%ymm2, %ymm4, %ymm4
	vpxor	%ymm3, %ymm4, %ymm4
	vmulps	%ymm5, %ymm5, %ymm5
	vmovdqu	%ymm4, SBIG+64(%rip)
	vmovups	%ymm5, SBIG+96(%rip)
	vmovdqu	asm_xconst(%rip), %ymm12		/* VEX3, ~R */
	vpaddq	asm_xconst+32(%rip), %ymm12, %ymm13
	vmovdqu	%ymm13, SBIG+192(%rip)
	vmovq	%xmm4, %rax
	vpextrq	$1, %xmm1, %rdx
	vzeroupper
	addq	%rdi, %rax
	xorq	%rdx, %rax
	ret
END(asm_avx_riprel)

/* EVEX-encoded RIP-relative forms (AVX-512F). */
FUNC(asm_avx512_riprel)
	vmovdqu64 asm_zconst(%rip), %zmm0
	vpaddq	asm_zconst+64(%rip), %zmm0, %zmm1
	vpaddq	asm_zconst(%rip){1to8}, %zmm1, %zmm2		/* broadcast */
	vpternlogd $0x96, asm_zconst(%rip), %zmm1, %zmm2	/* imm8 after disp */
	movl	$0x5a, %ecx
	kmovw	%ecx, %k1
	vmovdqu64 asm_zconst+64(%rip), %zmm3{%k1}{z}
	vpaddq	%zmm3, %zmm2, %zmm2
	vmovdqu64 %zmm2, SBIG+128(%rip)
	vmovdqu64 asm_zconst+64(%rip), %zmm17		/* EVEX R' */
	vpaddq	asm_zconst(%rip), %zmm17, %zmm30
	vmovdqu64 %zmm30, SBIG+256(%rip)
	vmovq	%xmm2, %rax
	vzeroupper
	addq	%rdi, %rax
	ret
END(asm_avx512_riprel)

/* String instructions: rep movs/stos, repne scas, repe cmps, single movs/lods/stos. */
FUNC(asm_string)
	movq	%rdi, %r8
	movabsq	$0x0068676665646362, %rax
	movq	%rax, SBIG+256(%rip)
	movabsq	$0x6e6d6c6b6a696867, %rax
	movq	%rax, SBIG+248(%rip)
	leaq	SBIG+248(%rip), %rdi
	xorl	%eax, %eax
	movq	$-1, %rcx
	repne scasb				/* strlen */
	notq	%rcx
	movq	%rcx, %r9
	leaq	SBIG+248(%rip), %rsi
	leaq	SBIG+300(%rip), %rdi
	movq	%r8, %rcx
	andq	$15, %rcx
	rep movsb
	leaq	SBIG+320(%rip), %rdi
	movq	%r8, %rcx
	andq	$7, %rcx
	movq	%rsi, %rax
	rep stosq
	leaq	SBIG+248(%rip), %rsi
	leaq	SBIG+300(%rip), %rdi
	movq	%r8, %rcx
	andq	$15, %rcx
	repe cmpsb
	setz	%dl
	movsq
	lodsb
	stosb
	movzbl	%dl, %edx
	leaq	(%r9,%rdx), %rax
	addq	%rcx, %rax
	ret
END(asm_string)

/* Atomics and barriers. */
FUNC(asm_atomic)
	movq	%rdi, %rax
	lock xaddq %rax, SQ(30)(%rip)
	leaq	SQ(31)(%rip), %rdx
	movq	%rsi, %rcx
	lock cmpxchgq %rcx, (%rdx)
	setz	%r8b
	xchgl	%eax, 4(%rdx)
	lock incq SQ(32)(%rip)
	lock btsq $7, SQ(33)(%rip)
	adcq	$0, %rax
	mfence
	lfence
	sfence
	pause
	movq	SQ(34)(%rip), %rax
	movq	SQ(35)(%rip), %rdx
	movq	%rdi, %rbx
	movq	%rsi, %rcx
	lock cmpxchg16b SQ(34)(%rip)		/* RIP-relative, 16-byte aligned */
	movzbl	%r8b, %r8d
	addq	%r8, %rax
	ret
END(asm_atomic)

/* Miscellany: enter/leave, push imm, xlat, bswap, cqo/idiv, lahf/sahf, long nops. */
FUNC(asm_misc)
	enter	$32, $0
	pushq	$-5
	pushq	$0x12345678
	movq	%rdi, %rax
	bswapq	%rax
	leaq	asm_rodata(%rip), %rbx
	movq	%rsi, %rax
	andl	$15, %eax
	xlatb
	movzbl	%al, %eax
	addq	(%rsp), %rax
	addq	8(%rsp), %rax
	cqto
	movq	$7, %rcx
	idivq	%rcx
	addq	%rdx, %rax
	lahf
	orb	$1, %ah
	sahf
	adcq	$0, %rax
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00	/* nopl 0(%rax,%rax) */
	.byte	0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00
	.byte	0x66, 0x90
	endbr64
	xchgq	%rax, %rdx
	xchgq	%rax, %rdx
	/*
	 * No cpuid: under a hypervisor that emulates it (this machine's PVM)
	 * the single-step trap after it is lost, so ground truth would miss
	 * the next instruction.
	 */
	leave
	ret
END(asm_misc)

/*
 * Prefixed control flow: branch hints (2e/3e), bnd (f2), notrack (3e),
 * ignored REX.W, 16-bit pushf/popf, 66+REX.W pushf (REX.W wins: 8 bytes),
 * 32-bit (0x67) EIP-relative operands, absolute disp32 without base.
 */
FUNC(asm_prefixes)
	pushq	%rbx
	movq	%rdi, %rax
	movq	%rsi, %rbx
	testq	$1, %rbx
	.byte	0x2e, 0x74, 1f - 0f		/* "not taken" hint je */
0:	addq	$3, %rax
1:	testq	$2, %rbx
	.byte	0x3e, 0x75, 3f - 2f		/* "taken" hint jne */
2:	addq	$5, %rax
3:	testq	$4, %rbx
	.byte	0xf2, 0x0f, 0x84		/* bnd je rel32 */
	.long	5f - 4f
4:	addq	$7, %rax
5:	.byte	0xf2, 0xe8			/* bnd call rel32 */
	.long	asm_sub1 - 6f
6:	.byte	0x48, 0xe8			/* rex.W call rel32 */
	.long	asm_sub2 - 7f
7:	leaq	asm_sub3(%rip), %rcx
	.byte	0x3e, 0xff, 0xd1		/* notrack call *%rcx */
	.byte	0xf2, 0xff, 0xd1		/* bnd call *%rcx */
	.byte	0x3e, 0xff, 0x15		/* notrack call *asm_fp(%rip) */
	.long	asm_fp - 8f
8:	call	*asm_fp				/* ff 14 25 disp32: absolute */
	.byte	0x67, 0xff, 0x15		/* addr32 call *asm_fp(%eip) */
	.long	asm_fp - 9f
9:	.byte	0x67, 0x48, 0x03, 0x05		/* addr32 add asm_rodata(%eip), %rax */
	.long	asm_rodata - 10f
10:	leaq	12f(%rip), %rdx
	.byte	0x48, 0xff, 0xe2		/* rex.W jmp *%rdx */
11:	addq	$1000, %rax
12:	leaq	14f(%rip), %rdx
	.byte	0x3e, 0xff, 0xe2		/* notrack jmp *%rdx */
13:	addq	$1000, %rax
14:	.byte	0xf2, 0xe9			/* bnd jmp rel32 */
	.long	16f - 15f
15:	addq	$1000, %rax
16:	jmp	*.Ljpfx				/* ff 24 25 disp32: absolute */
	addq	$1000, %rax
.Lpfx1:	movl	$3, %ecx
17:	addq	$1, %rax
	.byte	0x48, 0xe2, 17b - 18f		/* rex.W loop */
18:	call	20f
	pushfw
	orw	$1, (%rsp)
	popfw					/* 66 9d: CF set */
	movw	$0, -2(%rsp)
	adcq	$0, %rax
	.byte	0x66, 0x48, 0x9c		/* pushfq: REX.W overrides 66 */
	andq	$ARITH, (%rsp)
	popq	%rdx
	addq	%rdx, %rax
	popq	%rbx
	.byte	0xf2, 0xc3			/* bnd ret */
20:	addq	$9, %rax
	.byte	0x40, 0xc3			/* rex ret */
END(asm_prefixes)

/*
 * Instructions the engine must refuse, jumped over (never executed): the
 * harness only checks that they are classified as refused and not armed.
 */
FUNC(asm_refusals)
	movq	%rdi, %rax
	jmp	1f
	ud2
	.byte	0x0f, 0xb9, 0xc0		/* ud1 %eax, %eax */
	int3
	int	$0x80
	.byte	0xf1				/* int1 */
	hlt
	syscall
	sysretq
	sysenter
	.byte	0x0f, 0x35			/* sysexit */
	iretq
	lretq
	lcall	*(%rax)
	ljmp	*(%rax)
	swapgs
	.byte	0xc7, 0xf8, 0, 0, 0, 0		/* xbegin */
	movl	%eax, %ss
	.byte	0x66, 0xff, 0xd0		/* call *%ax: operand size */
	.byte	0x66, 0xc3			/* retw */
	.byte	0x64, 0xff, 0x10		/* call *%fs:(%rax) */
	.byte	0x65, 0xff, 0x20		/* jmp *%gs:(%rax) */
	mwait
	vmlaunch
	sti
	hlt
1:	addq	$1, %rax
	ret
END(asm_refusals)

	.data
	.balign	64
	.globl	asm_fptab
asm_fptab:
	.rept	10
	.quad	asm_sub0, asm_sub1, asm_sub2, asm_sub3
	.endr
asm_fp:	.quad	asm_sub2
.Ljt_abs:
	.quad	.Lj0, .Lj1, .Lj2, .Lj3
.Ljt_rel:
	.quad	.Lk0, .Lk1, .Lk2, .Lk3, .Lk4
.Ljfp:	.quad	.Lk5
.Ljpfx:	.quad	.Lpfx1
.Ljt_end:
	.quad	.Le0, .Le1, .Le2, .Le3

	.section .rodata
	.balign	64
asm_rodata:
	.quad	0x8123456789abcdef, 0x0102030405060708, 0x1111222233334444, 3
asm_xconst:
	.quad	0x0f0e0d0c0b0a0908, 0x0706050403020100
	.quad	0x1112131415161718, 0x191a1b1c1d1e1f10
	.quad	0x2122232425262728, 0x292a2b2c2d2e2f20
	.quad	0x3132333435363738, 0x393a3b3c3d3e3f30
asm_zconst:
	.rept	16
	.quad	0x0123456789abcdef
	.endr
asm_dconst:
	.double	2.75, -1.5
asm_fconst:
	.float	1.25

	.section .note.GNU-stack, "", @progbits
