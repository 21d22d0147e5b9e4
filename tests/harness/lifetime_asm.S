/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Functions for lifetime_test.c, alone on their own page (the test makes
 * it writable to patch int3s in).  lt_load: the probed mov reads *%rdi
 * (out of line, so it can fault inside a trampoline).  lt_other: a second
 * out-of-line instruction whose trampoline would overwrite a reused block.
 */
	.section .text.kinst_lifetime, "ax", @progbits
	.balign 4096
	.globl	lt_page
lt_page:
	.globl	lt_load
	.type	lt_load, @function
lt_load:
	movq	(%rdi), %rax		/* 48 8b 07: probed */
	ret
	.size	lt_load, . - lt_load

	.balign 16
	.globl	lt_other
	.type	lt_other, @function
lt_other:
	movq	%rdi, %rax		/* 48 89 f8: probed */
	addq	$0x5a5a, %rax
	ret
	.size	lt_other, . - lt_other
	.balign 4096
	.section .note.GNU-stack, "", @progbits
