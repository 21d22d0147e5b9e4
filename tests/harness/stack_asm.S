/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A known call chain for stack_test.c, alone on its own page (the test makes
 * it writable to patch int3s in): st_base -> st_top -> st_mid -> st_leaf,
 * each with a %rbp frame.  The return address after each call is a global
 * label, so the test knows the exact chain a stack must show.
 */
	.section .text.kinst_stack, "ax", @progbits
	.balign 4096
	.globl	st_page
st_page:
	.globl	st_leaf
	.type	st_leaf, @function
st_leaf:
	pushq	%rbp			/* probed at entry (offset 0) */
	movq	%rsp, %rbp
	.globl	st_leaf_body
st_leaf_body:
	movq	%rdi, %rax		/* probed inside the frame (offset 4) */
	popq	%rbp
	ret
	.size	st_leaf, . - st_leaf

	.balign 16
	.globl	st_mid
	.type	st_mid, @function
st_mid:
	pushq	%rbp
	movq	%rsp, %rbp
	call	st_leaf
	.globl	st_mid_ret
st_mid_ret:
	popq	%rbp
	ret
	.size	st_mid, . - st_mid

	.balign 16
	.globl	st_top
	.type	st_top, @function
st_top:
	pushq	%rbp
	movq	%rsp, %rbp
	call	st_mid
	.globl	st_top_ret
st_top_ret:
	popq	%rbp
	ret
	.size	st_top, . - st_top

	.balign 16
	.globl	st_base
	.type	st_base, @function
st_base:
	pushq	%rbp
	movq	%rsp, %rbp
	call	st_top
	.globl	st_base_ret
st_base_ret:
	popq	%rbp
	ret
	.size	st_base, . - st_base
	.balign 4096
	.section .note.GNU-stack, "", @progbits
