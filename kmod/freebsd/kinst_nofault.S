/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst for FreeBSD/amd64: the no-fault kernel read (docs/freebsd.md 1.5).
 *
 * kinst_nofault_copy(dst, src, len) copies byte by byte; every instruction
 * that may fault lies in [kinst_nofault_start, kinst_nofault_end).  A page
 * or protection fault there, while this CPU's no-fault count is non-zero,
 * is caught by kinst_fbsd_trap_nofault() through dtrace_trap_func, which
 * trap_check() calls before trap() (amd64/amd64/trap.c): trap() would
 * re-enable interrupts and call vm_fault(), which may sleep.  The handler
 * resumes at kinst_nofault_fail, which returns -1.  Returns 0 when all of
 * len bytes were copied.
 *
 * kinst_nofault_copy_user(dst, src, len) is the same copy from the current
 * process's user memory (kinst_os_read_user has range-checked src and
 * refused a thread without a user address space): when kinst_nofault_smap
 * is non-zero (set at load from cpu_stdext_feature & CPUID_STDEXT_SMAP, as
 * FreeBSD's own copyin ifuncs decide) the loop runs between stac and clac,
 * on both exits.  Only the loop, [kinst_nofault_ustart, kinst_nofault_uend),
 * may fault; only a page fault at a user address there is fixed up, to
 * kinst_nofault_ufail (-1).  stac/clac are never executed when the flag is
 * 0: on a CPU without SMAP they are #UD.
 *
 * kinst_nofault_install(fn)/remove(fn): compare-and-swap of
 * dtrace_trap_func, from 0 to fn and back (1: someone else's); fn is the
 * trap gate (kinst_fbsd_trapgate_build) in memory never freed, whose
 * handler word names kinst_fbsd_trap_nofault while kinst is loaded.
 * kinst_nofault_ours: 1 while dtrace_trap_func is kinst_nofault_gate
 * (non-zero: the gate installed; dtrace.ko's load stores its own without
 * looking: the copies must not run then, their faults would no longer be
 * absorbed), else 0.  No FreeBSD header is included (tests/freebsd
 * assembles this file for the build host).
 */

	.text

	.globl	kinst_nofault_copy
	.type	kinst_nofault_copy,@function
	.p2align 4
kinst_nofault_copy:
	xorl	%eax, %eax
	testq	%rdx, %rdx
	jz	2f
	.globl	kinst_nofault_start
kinst_nofault_start:
1:	movb	(%rsi), %cl
	movb	%cl, (%rdi)
	incq	%rsi
	incq	%rdi
	decq	%rdx
	jnz	1b
	.globl	kinst_nofault_end
kinst_nofault_end:
2:	ret
	.globl	kinst_nofault_fail
kinst_nofault_fail:
	movl	$-1, %eax
	ret
	.size	kinst_nofault_copy, . - kinst_nofault_copy

	.globl	kinst_nofault_copy_user
	.type	kinst_nofault_copy_user,@function
	.p2align 4
kinst_nofault_copy_user:
	xorl	%eax, %eax
	testq	%rdx, %rdx
	jz	4f
	cmpl	$0, kinst_nofault_smap(%rip)
	je	1f
	stac
1:
	.globl	kinst_nofault_ustart
kinst_nofault_ustart:
2:	movb	(%rsi), %cl
	movb	%cl, (%rdi)
	incq	%rsi
	incq	%rdi
	decq	%rdx
	jnz	2b
	.globl	kinst_nofault_uend
kinst_nofault_uend:
3:	cmpl	$0, kinst_nofault_smap(%rip)
	je	4f
	clac
4:	ret
	.globl	kinst_nofault_ufail
kinst_nofault_ufail:
	movl	$-1, %eax
	jmp	3b
	.size	kinst_nofault_copy_user, . - kinst_nofault_copy_user

	.bss
	.globl	kinst_nofault_smap
	.type	kinst_nofault_smap,@object
	.p2align 2
kinst_nofault_smap:
	.zero	4
	.size	kinst_nofault_smap, 4

	.text
	.globl	kinst_nofault_install
	.type	kinst_nofault_install,@function
	.p2align 4
kinst_nofault_install:
	xorl	%eax, %eax
	lock cmpxchgq %rdi, dtrace_trap_func(%rip)
	setne	%al
	movzbl	%al, %eax
	ret
	.size	kinst_nofault_install, . - kinst_nofault_install

	.globl	kinst_nofault_remove
	.type	kinst_nofault_remove,@function
	.p2align 4
kinst_nofault_remove:
	movq	%rdi, %rax
	xorl	%edx, %edx
	lock cmpxchgq %rdx, dtrace_trap_func(%rip)
	setne	%al
	movzbl	%al, %eax
	ret
	.size	kinst_nofault_remove, . - kinst_nofault_remove

	.globl	kinst_nofault_ours
	.type	kinst_nofault_ours,@function
	.p2align 4
kinst_nofault_ours:
	movq	kinst_nofault_gate(%rip), %rdx
	xorl	%eax, %eax
	testq	%rdx, %rdx
	jz	1f
	cmpq	%rdx, dtrace_trap_func(%rip)
	sete	%al
1:	ret
	.size	kinst_nofault_ours, . - kinst_nofault_ours

	.data
	.p2align 3
	.globl	kinst_nofault_gate
kinst_nofault_gate:
	.quad	0

	.section .note.GNU-stack,"",@progbits
