/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hand-written A64 corpus for a64_harness: every kind the engine
 * emulates (b, bl, b.cond, cbz/cbnz W and X and on the zero register,
 * tbz/tbnz below and above bit 32, br, blr (also blr x30), ret, adr, adrp,
 * ldr/ldrsw/prfm literal, the PAC branches) and out-of-line
 * instructions that read or write the flags, the stack and x30 (paciasp,
 * autiasp), and an exclusive loop the classifier must refuse.  Every
 * function is uint64_t f(uint64_t x0, uint64_t x1); memory effects go to
 * kh64_scratch.  Literal pools lie outside every function (after .size):
 * a word inside one would be armed as an instruction.
 */
	.text
	.p2align 2

	.globl	kh64_a_helper
	.type	kh64_a_helper, %function
kh64_a_helper:
	add	x0, x0, #5
	eor	x0, x0, x1
	ret
	.size	kh64_a_helper, . - kh64_a_helper

	.globl	kh64_a_branches
	.type	kh64_a_branches, %function
kh64_a_branches:
	mov	x2, #0
	and	x1, x1, #15
1:	add	x2, x2, #3
	subs	x1, x1, #1
	b.gt	1b
	cbz	w0, 2f			/* W: x0 = 1 << 32 takes it */
	add	x2, x2, #100
2:	cbnz	x0, 3f
	add	x2, x2, #1000
3:	tbz	x0, #40, 4f
	add	x2, x2, #7
4:	tbnz	w0, #3, 5f
	eor	x2, x2, #0xff
5:	tbnz	x0, #63, 6f
	cbnz	w0, 6f
	add	x2, x2, #0x30
6:	cmp	x0, x2
	b.lo	7f
	b	8f
7:	add	x2, x2, #0x55
8:	cbnz	xzr, 9f		/* xzr reads as zero: never taken */
	tbnz	wzr, #2, 9f
	b.eq	9f
	cbz	x2, 9f
	csel	x0, x2, x1, ne
9:	ret
	.size	kh64_a_branches, . - kh64_a_branches

	.globl	kh64_a_calls
	.type	kh64_a_calls, %function
kh64_a_calls:
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	str	x19, [sp, #16]
	mov	x19, x0
	bl	kh64_a_helper
	adr	x9, kh64_a_helper
	blr	x9
	adr	x30, kh64_a_helper	/* blr reads x30 before it writes it */
	blr	x30
	and	x10, x19, #3
	adr	x11, 1f
	add	x11, x11, x10, lsl #3
	br	x11
1:	add	x0, x0, #1
	b	2f
	add	x0, x0, #2
	b	2f
	add	x0, x0, #3
	b	2f
	add	x0, x0, #4
	b	2f
2:	ldr	x19, [sp, #16]
	ldp	x29, x30, [sp], #32
	ret
	.size	kh64_a_calls, . - kh64_a_calls

	.globl	kh64_a_literals
	.type	kh64_a_literals, %function
kh64_a_literals:
	ldr	x2, kh64_lit_q
	ldr	w3, kh64_lit_w
	ldrsw	x4, kh64_lit_w
	prfm	pldl1keep, kh64_lit_q
	adrp	x5, kh64_scratch
	add	x5, x5, :lo12:kh64_scratch
	str	x2, [x5, #8]
	adrp	x6, kh64_lit_q
	ldr	x6, [x6, :lo12:kh64_lit_q]
	adr	x7, .
	sub	x7, x7, x5
	str	x7, [x5, #16]
	add	x0, x0, x2
	add	x0, x0, x3
	eor	x0, x0, x4
	add	x0, x0, x6
	ldr	xzr, kh64_lit_q
	ret
	.size	kh64_a_literals, . - kh64_a_literals
	.p2align 3
kh64_lit_q:
	.quad	0x8877665544332211
kh64_lit_w:
	.word	0x80000001
	.word	0

	.globl	kh64_a_flags
	.type	kh64_a_flags, %function
kh64_a_flags:
	adds	x2, x0, x1
	adcs	x3, x0, x1
	ccmp	x0, x1, #4, ne
	cset	w4, eq
	mrs	x5, nzcv
	eor	x5, x5, #0x20000000
	msr	nzcv, x5
	csinc	x0, x2, x3, cs
	add	x0, x0, x4
	ret
	.size	kh64_a_flags, . - kh64_a_flags

	.globl	kh64_a_stack
	.type	kh64_a_stack, %function
kh64_a_stack:
	sub	sp, sp, #64
	stp	x0, x1, [sp]
	stp	x0, x0, [sp, #16]!
	mov	x9, sp
	str	x9, [sp, #8]
	ldp	x2, x3, [sp], #16
	add	x0, x2, x3
	ldr	x4, [sp, #8]
	add	x0, x0, x4
	add	sp, sp, #32		/* 64, less the two writebacks */
	ret
	.size	kh64_a_stack, . - kh64_a_stack

	.globl	kh64_a_pac
	.type	kh64_a_pac, %function
kh64_a_pac:
	hint	#34			/* bti c */
	hint	#25			/* paciasp */
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	bl	kh64_a_helper
	ldp	x29, x30, [sp], #16
	hint	#29			/* autiasp */
	ret
	.size	kh64_a_pac, . - kh64_a_pac

	/* The PAC branches (ARMv8.3): keys A and B, modifiers x, sp and zero. */
	.arch	armv8.3-a
	.globl	kh64_a_pacbr
	.type	kh64_a_pacbr, %function
kh64_a_pacbr:
	pacibsp
	stp	x29, x30, [sp, #-16]!
	mov	x29, sp
	adr	x9, kh64_a_helper
	mov	x10, sp
	pacia	x9, x10
	blraa	x9, x10
	adr	x11, 1f
	paciza	x11
	braaz	x11
1:	adr	x12, 2f
	pacib	x12, sp
	brab	x12, sp
2:	adr	x13, kh64_a_helper
	pacizb	x13
	blrabz	x13
	ldp	x29, x30, [sp], #16
	retab
	.size	kh64_a_pacbr, . - kh64_a_pacbr

	.globl	kh64_a_retaa
	.type	kh64_a_retaa, %function
kh64_a_retaa:
	paciasp
	add	x0, x0, x1
	retaa
	.size	kh64_a_retaa, . - kh64_a_retaa

	.globl	kh64_a_exclusive
	.type	kh64_a_exclusive, %function
kh64_a_exclusive:
	adrp	x2, kh64_scratch
	add	x2, x2, :lo12:kh64_scratch
	add	x2, x2, #64
1:	ldxr	x3, [x2]
	add	x3, x3, x0
	stxr	w4, x3, [x2]
	cbnz	w4, 1b
	add	x0, x3, x1
	ret
	.size	kh64_a_exclusive, . - kh64_a_exclusive

	.section .note.GNU-stack, "", %progbits
