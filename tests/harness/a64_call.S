/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kh64_invoke(fn, in, out, stack_top): call fn with x0-x28 and NZCV from
 * in[0..28] and in[31], on the fixed stack that ends at stack_top, and
 * store x0-x30, sp and NZCV at its return into out[0..32].  Every run of
 * a corpus function starts from the same registers, flags and stack
 * pointer, so a run's hits and its end can be compared with another's.
 * The callee-saved registers are the caller's again on return.
 */
	.text
	.p2align 2
	.globl	kh64_invoke
	.type	kh64_invoke, %function
kh64_invoke:
	stp	x29, x30, [sp, #-112]!
	mov	x29, sp
	stp	x19, x20, [sp, #16]
	stp	x21, x22, [sp, #32]
	stp	x23, x24, [sp, #48]
	stp	x25, x26, [sp, #64]
	stp	x27, x28, [sp, #80]
	adrp	x9, kh64_saved
	add	x9, x9, :lo12:kh64_saved
	mov	x10, sp
	stp	x10, x2, [x9]		/* the real sp, out */
	mov	sp, x3
	mov	x17, x0			/* fn: x17 (ip1) is not an input */
	mov	x16, x1
	ldr	x9, [x16, #248]
	msr	nzcv, x9
	ldp	x0, x1, [x16, #0]
	ldp	x2, x3, [x16, #16]
	ldp	x4, x5, [x16, #32]
	ldp	x6, x7, [x16, #48]
	ldp	x8, x9, [x16, #64]
	ldp	x10, x11, [x16, #80]
	ldp	x12, x13, [x16, #96]
	ldp	x14, x15, [x16, #112]
	ldp	x18, x19, [x16, #144]
	ldp	x20, x21, [x16, #160]
	ldp	x22, x23, [x16, #176]
	ldp	x24, x25, [x16, #192]
	ldp	x26, x27, [x16, #208]
	ldp	x28, x29, [x16, #224]
	ldr	x16, [x16, #128]
	blr	x17
	/* Below the fixed stack's sp: the same bytes in every run. */
	stp	x16, x17, [sp, #-16]
	adrp	x16, kh64_saved
	add	x16, x16, :lo12:kh64_saved
	ldr	x16, [x16, #8]		/* out */
	stp	x0, x1, [x16, #0]
	stp	x2, x3, [x16, #16]
	stp	x4, x5, [x16, #32]
	stp	x6, x7, [x16, #48]
	stp	x8, x9, [x16, #64]
	stp	x10, x11, [x16, #80]
	stp	x12, x13, [x16, #96]
	stp	x14, x15, [x16, #112]
	stp	x18, x19, [x16, #144]
	stp	x20, x21, [x16, #160]
	stp	x22, x23, [x16, #176]
	stp	x24, x25, [x16, #192]
	stp	x26, x27, [x16, #208]
	stp	x28, x29, [x16, #224]
	str	x30, [x16, #240]
	mov	x9, sp
	str	x9, [x16, #248]
	mrs	x9, nzcv
	str	x9, [x16, #256]
	ldp	x9, x10, [sp, #-16]	/* x16, x17 */
	stp	x9, x10, [x16, #128]
	adrp	x9, kh64_saved
	add	x9, x9, :lo12:kh64_saved
	ldr	x10, [x9]
	mov	sp, x10
	ldp	x19, x20, [sp, #16]
	ldp	x21, x22, [sp, #32]
	ldp	x23, x24, [sp, #48]
	ldp	x25, x26, [sp, #64]
	ldp	x27, x28, [sp, #80]
	ldp	x29, x30, [sp], #112
	ret
	.size	kh64_invoke, . - kh64_invoke

	.bss
	.p2align 3
	.globl	kh64_saved
kh64_saved:
	.quad	0, 0

	.section .note.GNU-stack, "", %progbits
