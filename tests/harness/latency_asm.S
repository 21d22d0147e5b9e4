/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Functions that leave the way a kernel built with CONFIG_RETHUNK does
 * (latency_test): through a jump to __x86_return_thunk, through
 * conditional and unconditional tail calls, with ret imm16, and
 * recursively.  Registers
 * and their own stack only.
 */
	.text

	.globl	__x86_return_thunk
	.type	__x86_return_thunk, @function
__x86_return_thunk:
	ret
	int3
	.size	__x86_return_thunk, . - __x86_return_thunk

/* lt_leaf(x) = x + 1 */
	.globl	lt_leaf
	.type	lt_leaf, @function
lt_leaf:
	leaq	1(%rdi), %rax
	ret
	.size	lt_leaf, . - lt_leaf

/* lt_thunk(x) = x + 3, returning through the thunk */
	.globl	lt_thunk
	.type	lt_thunk, @function
lt_thunk:
	movq	%rdi, %rax
	addq	$3, %rax
	jmp	__x86_return_thunk
	.size	lt_thunk, . - lt_thunk

/* lt_cond(x): odd x: lt_leaf(x) (a jne tail call); x < 4: x (thunk); else lt_leaf(x) */
	.globl	lt_cond
	.type	lt_cond, @function
lt_cond:
	testq	$1, %rdi
	jne	lt_leaf
	cmpq	$4, %rdi
	jae	1f
	movq	%rdi, %rax
	jmp	__x86_return_thunk
1:
	addq	$2, %rdi
	jmp	lt_leaf
	.size	lt_cond, . - lt_cond

/* lt_rec(n) = n + (n - 1) + ... + 1, recursively, returning through the thunk */
	.globl	lt_rec
	.type	lt_rec, @function
lt_rec:
	pushq	%rbx
	movq	%rdi, %rbx
	testq	%rdi, %rdi
	je	1f
	leaq	-1(%rdi), %rdi
	call	lt_rec
	addq	%rbx, %rax
	popq	%rbx
	jmp	__x86_return_thunk
1:
	xorl	%eax, %eax
	popq	%rbx
	ret
	.size	lt_rec, . - lt_rec

/* lt_retimm(x) = x + 2, popping 8 more bytes (the harness restores rsp) */
	.globl	lt_retimm
	.type	lt_retimm, @function
lt_retimm:
	leaq	2(%rdi), %rax
	ret	$8
	.size	lt_retimm, . - lt_retimm

	.section .note.GNU-stack, "", @progbits
