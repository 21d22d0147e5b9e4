/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runs kmod/freebsd/kinst_hook.S on a synthetic trap frame in user space.
 *
 * int kh_run_hook(void *frame): switches %rsp to frame (as exception.S
 * leaves it when it jumps to dtrace_invop_jump_addr) and jumps to
 * kinst_hook.  The hook leaves through one of two exits this file
 * provides in place of the kernel's: "doreti" (returns 1) or the address
 * in dtrace_invop_calltrap_addr (returns 2).  Both record the %rsp they
 * were entered with in kh_exit_rsp and return to kh_run_hook's caller.
 */
	.text
	.globl	kh_run_hook
	.type	kh_run_hook,@function
kh_run_hook:
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, kh_saved_rsp(%rip)
	movq	%rdi, %rsp
	jmp	kinst_hook
	.size	kh_run_hook, . - kh_run_hook

	.globl	doreti
	.type	doreti,@function
doreti:
	movq	%rsp, kh_exit_rsp(%rip)
	movl	$1, %eax
	jmp	1f
	.size	doreti, . - doreti

	.globl	calltrap
	.type	kh_calltrap,@function
kh_calltrap:
calltrap:
	movq	%rsp, kh_exit_rsp(%rip)
	movl	$2, %eax
1:	movq	kh_saved_rsp(%rip), %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret
	.size	kh_calltrap, . - kh_calltrap

	.data
	.p2align 3
	.globl	dtrace_invop_calltrap_addr
dtrace_invop_calltrap_addr:
	.quad	kh_calltrap
	.globl	dtrace_invop_jump_addr
dtrace_invop_jump_addr:
	.quad	0
	.globl	kh_exit_rsp
kh_exit_rsp:
	.quad	0
kh_saved_rsp:
	.quad	0

	.section .note.GNU-stack,"",@progbits
