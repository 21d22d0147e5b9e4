/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for FreeBSD/amd64: the #BP hook, installed as dtrace_invop_jump_addr.
 *
 * How control arrives (amd64/amd64/exception.S, KDTRACE_HOOKS; derivation
 * in docs/freebsd.md): a kernel-mode int3 enters IDTVEC(bpt) (an interrupt
 * gate: IF is clear), which reserves the software part of struct trapframe,
 * saves every general register into it (alltraps_noen -> ..._pushregs),
 * executes cld, sees T_BPTFLT from kernel mode and a non-zero
 * dtrace_invop_jump_addr, stores the address of calltrap in
 * dtrace_invop_calltrap_addr and jumps here with %rsp pointing at the
 * struct trapframe.  The frame sits directly below the interrupted stack
 * (no IST for #BP, no stack switch from kernel mode), 16-byte aligned.
 *
 * What this does:
 *
 * 1. Moves the whole frame KINST_FBSD_FRAME_SHIFT bytes down, so that the
 *    KINST_FBSD_STACK_ROOM bytes below the interrupted %rsp are free for an
 *    emulated call or pushf (kinst_stack_write_ok() bounds the engine to
 *    them).  The copy runs upwards: the destination is below the source,
 *    so no word is overwritten before it is read.  Only %rax and %rcx are
 *    used; their interrupted values are in the frame.
 * 2. Calls kinst_fbsd_trap(frame).  It returns 0 when the int3 is not
 *    kinst's (the frame untouched), non-zero when it has rewritten the
 *    frame (redirected to a trampoline, or emulated).
 * 3. Not ours: continues at the normal trap path, *dtrace_invop_calltrap_addr
 *    (calltrap), with %rsp at the (moved, identical) frame.
 *    Ours: returns through doreti, the kernel's interrupt return path, which
 *    for a kernel-mode frame restores the registers from the frame and
 *    executes iretq; iretq loads %rsp from tf_rsp, so the frame's new
 *    position does not matter.
 *
 * The file includes no FreeBSD header, so tests/freebsd can assemble it and
 * run it against a synthetic frame on the build host.
 */

#include "kinst_freebsd.h"

	.text

	.globl	kinst_hook
	.type	kinst_hook,@function
	.p2align 4
kinst_hook:
	subq	$KINST_FBSD_FRAME_SHIFT, %rsp
	xorl	%ecx, %ecx
1:	movq	KINST_FBSD_FRAME_SHIFT(%rsp,%rcx,1), %rax
	movq	%rax, (%rsp,%rcx,1)
	addq	$8, %rcx
	cmpq	$KINST_FBSD_TF_SIZE, %rcx
	jb	1b
	movq	%rsp, %rdi
	call	kinst_fbsd_trap
	testl	%eax, %eax
	jz	2f
	jmp	doreti
2:	jmpq	*dtrace_invop_calltrap_addr(%rip)
	.size	kinst_hook, . - kinst_hook

/*
 * int kinst_hook_install(void): atomically set dtrace_invop_jump_addr to
 * kinst_hook if it is free: NULL, or calltrap (what kinst_hook_remove
 * leaves).  Returns 0, or 1 if someone else owns the hook.
 */
	.globl	kinst_hook_install
	.type	kinst_hook_install,@function
	.p2align 4
kinst_hook_install:
	leaq	kinst_hook(%rip), %rdx
	xorl	%eax, %eax
	lock cmpxchgq %rdx, dtrace_invop_jump_addr(%rip)
	je	1f
	leaq	calltrap(%rip), %rax
	lock cmpxchgq %rdx, dtrace_invop_jump_addr(%rip)
1:	setne	%al
	movzbl	%al, %eax
	ret
	.size	kinst_hook_install, . - kinst_hook_install

/*
 * int kinst_hook_remove(void): atomically set dtrace_invop_jump_addr from
 * kinst_hook to calltrap, never to NULL.  The #BP entry reads the hook
 * twice with interrupts off (cmpq $0 ... je calltrap; then jmpq *hook): a
 * CPU between the two reads when NULL is stored would jump to 0, and no
 * rendezvous helps, the store coming first (issue 22, defect 6).  calltrap
 * is kernel text, and jumping there with %rsp at the frame is exactly
 * what the entry does when the hook is NULL, so the pointer left behind
 * is always valid.  Returns 0, or 1 if the hook was not kinst's.
 */
	.globl	kinst_hook_remove
	.type	kinst_hook_remove,@function
	.p2align 4
kinst_hook_remove:
	leaq	kinst_hook(%rip), %rax
	leaq	calltrap(%rip), %rdx
	lock cmpxchgq %rdx, dtrace_invop_jump_addr(%rip)
	setne	%al
	movzbl	%al, %eax
	ret
	.size	kinst_hook_remove, . - kinst_hook_remove

/* int kinst_hook_free(void): 1 if dtrace_invop_jump_addr is NULL or calltrap. */
	.globl	kinst_hook_free
	.type	kinst_hook_free,@function
	.p2align 4
kinst_hook_free:
	movq	dtrace_invop_jump_addr(%rip), %rdx
	leaq	calltrap(%rip), %rcx
	xorl	%eax, %eax
	testq	%rdx, %rdx
	sete	%al
	cmpq	%rcx, %rdx
	sete	%dl
	orb	%dl, %al
	ret
	.size	kinst_hook_free, . - kinst_hook_free

/* void *kinst_hook_owner(void): the current dtrace_invop_jump_addr. */
	.globl	kinst_hook_owner
	.type	kinst_hook_owner,@function
	.p2align 4
kinst_hook_owner:
	movq	dtrace_invop_jump_addr(%rip), %rax
	ret
	.size	kinst_hook_owner, . - kinst_hook_owner

	.section .note.GNU-stack,"",@progbits
