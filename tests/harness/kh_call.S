/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kh_invoke: call kh_in_fn with a fully defined register file.
 *
 * Saves the C caller's callee-saved registers and stack pointer, switches to
 * the fixed stack kh_in_rsp, loads every general register from kh_in_regs
 * and RFLAGS from kh_in_flags (with TF set there, the first single-step trap
 * arrives at the function's first instruction), calls the function, and
 * stores the register file it returns with into kh_out_regs/kh_out_flags.
 * Every run therefore starts from an identical register file and rsp.
 */
	.data
	.balign	64
	.globl	kh_in_regs, kh_in_flags, kh_in_rsp, kh_in_fn
	.globl	kh_out_regs, kh_out_flags
kh_in_regs:	.zero	128
kh_out_regs:	.zero	128
kh_in_flags:	.quad	0
kh_out_flags:	.quad	0
kh_in_rsp:	.quad	0
kh_in_fn:	.quad	0
kh_saved_rsp:	.quad	0

	.text
	.globl	kh_invoke
	.type	kh_invoke, @function
	.balign	16
kh_invoke:
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, kh_saved_rsp(%rip)
	movq	kh_in_rsp(%rip), %rsp
	pushq	kh_in_flags(%rip)
	movq	kh_in_regs+0*8(%rip), %rax
	movq	kh_in_regs+1*8(%rip), %rcx
	movq	kh_in_regs+2*8(%rip), %rdx
	movq	kh_in_regs+3*8(%rip), %rbx
	movq	kh_in_regs+5*8(%rip), %rbp
	movq	kh_in_regs+6*8(%rip), %rsi
	movq	kh_in_regs+7*8(%rip), %rdi
	movq	kh_in_regs+8*8(%rip), %r8
	movq	kh_in_regs+9*8(%rip), %r9
	movq	kh_in_regs+10*8(%rip), %r10
	movq	kh_in_regs+11*8(%rip), %r11
	movq	kh_in_regs+12*8(%rip), %r12
	movq	kh_in_regs+13*8(%rip), %r13
	movq	kh_in_regs+14*8(%rip), %r14
	movq	kh_in_regs+15*8(%rip), %r15
	popfq
	call	*kh_in_fn(%rip)
	.globl	kh_invoke_ret
kh_invoke_ret:
	movq	%rax, kh_out_regs+0*8(%rip)
	movq	%rcx, kh_out_regs+1*8(%rip)
	movq	%rdx, kh_out_regs+2*8(%rip)
	movq	%rbx, kh_out_regs+3*8(%rip)
	movq	%rsp, kh_out_regs+4*8(%rip)
	movq	%rbp, kh_out_regs+5*8(%rip)
	movq	%rsi, kh_out_regs+6*8(%rip)
	movq	%rdi, kh_out_regs+7*8(%rip)
	movq	%r8, kh_out_regs+8*8(%rip)
	movq	%r9, kh_out_regs+9*8(%rip)
	movq	%r10, kh_out_regs+10*8(%rip)
	movq	%r11, kh_out_regs+11*8(%rip)
	movq	%r12, kh_out_regs+12*8(%rip)
	movq	%r13, kh_out_regs+13*8(%rip)
	movq	%r14, kh_out_regs+14*8(%rip)
	movq	%r15, kh_out_regs+15*8(%rip)
	pushfq
	popq	kh_out_flags(%rip)
	/* Never leave TF behind (the step handler normally clears it above). */
	pushfq
	andq	$~0x100, (%rsp)
	popfq
	cld
	movq	kh_saved_rsp(%rip), %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret
	.size	kh_invoke, . - kh_invoke

	.section .note.GNU-stack, "", @progbits
