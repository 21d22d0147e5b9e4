// SPDX-License-Identifier: BSD-2-Clause
/*
 * kinst_gprtest.ko: a test module for the guest (tests/vm/testmod), never
 * part of kinst.  kinst_gprtest_body (assembly, below) saves the
 * callee-saved registers, records %rsp, sets chosen arithmetic flags, loads
 * a distinct known value into each of the 15 other GPRs, then runs three
 * instructions a scenario traces:
 *
 *	add %r13,%r14		out of line (a trampoline)
 *	jae 1f			emulated (taken: the add does not carry)
 *	sub %r9,%r10		out of line
 *
 * and stores all 16 GPRs and the flags to memory before restoring.
 * Writing to /sys/module/kinst_gprtest/parameters/run runs it once and
 * checks that every stored register holds exactly what those instructions
 * compute from the loaded values; reading the parameter gives the verdict
 * of the last run: "ok runs=N rsp=0x... addflags=0x..." (the %rsp the
 * snapshots must show, the arithmetic flags the add leaves) or
 * "bad runs=N: ..." naming the first wrong register.  A register swapped
 * on the way into or out of the trap handler shows up here (and in the
 * snapshots, which the scenario compares with the loaded values).
 *
 * kinst_gprtest_uaccess (assembly) is a user-access region, as
 * user_access_begin() opens one: stac, then
 *
 *	movl $0x5a5a5a5a, %eax	a window of one instruction (a jump probe)
 *
 * then the flags stored, and clac.  Writing to .../parameters/ac runs it
 * once (-EOPNOTSUPP without SMAP); reading gives "ok runs=N" when every
 * run had AC set after the window (a detour that cleared AC for its
 * handler gave it back), else "bad ...".  With SMAP, kinst's handler must
 * run with AC clear there (debugfs kinst/jump, ac_set).
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <asm/cpufeature.h>

#define	GT_NREGS	16
#define	GT_RSP		4
#define	GT_R9		9
#define	GT_R10		10
#define	GT_R13		13
#define	GT_R14		14
#define	GT_ARITH	0x8d5ul		/* CF PF AF ZF SF OF */

u64 kinst_gprtest_out[GT_NREGS];
u64 kinst_gprtest_rsp;
u64 kinst_gprtest_flags;
u64 kinst_gprtest_wrong;		/* the jae fell through */

void kinst_gprtest_body(void);

asm(
"	.pushsection .text\n"
"	.globl kinst_gprtest_body\n"
"	.type kinst_gprtest_body, @function\n"
"kinst_gprtest_body:\n"
"	pushq %rbp\n"
"	pushq %rbx\n"
"	pushq %r12\n"
"	pushq %r13\n"
"	pushq %r14\n"
"	pushq %r15\n"
"	pushfq\n"
"	movq %rsp, kinst_gprtest_rsp(%rip)\n"
"	movb $0x7f, %al\n"
"	addb $1, %al\n"			/* OF SF AF set; CF ZF PF clear */
"	movabsq $0x101010101010224, %rax\n"
"	movabsq $0x202020202020325, %rcx\n"
"	movabsq $0x303030303030426, %rdx\n"
"	movabsq $0x404040404040527, %rbx\n"
"	movabsq $0x606060606060729, %rbp\n"
"	movabsq $0x70707070707082a, %rsi\n"
"	movabsq $0x80808080808092b, %rdi\n"
"	movabsq $0x909090909090a2c, %r8\n"
"	movabsq $0xa0a0a0a0a0a0b2d, %r9\n"
"	movabsq $0xb0b0b0b0b0b0c2e, %r10\n"
"	movabsq $0xc0c0c0c0c0c0d2f, %r11\n"
"	movabsq $0xd0d0d0d0d0d0e30, %r12\n"
"	movabsq $0xe0e0e0e0e0e0f31, %r13\n"
"	movabsq $0xf0f0f0f0f0f1032, %r14\n"
"	movabsq $0x1010101010101133, %r15\n"
"	addq %r13, %r14\n"
"	jae 1f\n"
"	movq $1, kinst_gprtest_wrong(%rip)\n"
"1:	subq %r9, %r10\n"
"	movq %rax, kinst_gprtest_out+0(%rip)\n"
"	movq %rcx, kinst_gprtest_out+8(%rip)\n"
"	movq %rdx, kinst_gprtest_out+16(%rip)\n"
"	movq %rbx, kinst_gprtest_out+24(%rip)\n"
"	movq %rsp, kinst_gprtest_out+32(%rip)\n"
"	movq %rbp, kinst_gprtest_out+40(%rip)\n"
"	movq %rsi, kinst_gprtest_out+48(%rip)\n"
"	movq %rdi, kinst_gprtest_out+56(%rip)\n"
"	movq %r8, kinst_gprtest_out+64(%rip)\n"
"	movq %r9, kinst_gprtest_out+72(%rip)\n"
"	movq %r10, kinst_gprtest_out+80(%rip)\n"
"	movq %r11, kinst_gprtest_out+88(%rip)\n"
"	movq %r12, kinst_gprtest_out+96(%rip)\n"
"	movq %r13, kinst_gprtest_out+104(%rip)\n"
"	movq %r14, kinst_gprtest_out+112(%rip)\n"
"	movq %r15, kinst_gprtest_out+120(%rip)\n"
"	pushfq\n"
"	popq kinst_gprtest_flags(%rip)\n"
"	popfq\n"
"	popq %r15\n"
"	popq %r14\n"
"	popq %r13\n"
"	popq %r12\n"
"	popq %rbx\n"
"	popq %rbp\n"
"	jmp __x86_return_thunk\n"
"	int3\n"
"	.size kinst_gprtest_body, .-kinst_gprtest_body\n"
"	.popsection\n"
);

u64 kinst_gprtest_acflags;

void kinst_gprtest_uaccess(void);

asm(
"	.pushsection .text\n"
"	.globl kinst_gprtest_uaccess\n"
"	.type kinst_gprtest_uaccess, @function\n"
"kinst_gprtest_uaccess:\n"
"	stac\n"
"	movl $0x5a5a5a5a, %eax\n"
"	pushfq\n"
"	popq kinst_gprtest_acflags(%rip)\n"
"	clac\n"
"	jmp __x86_return_thunk\n"
"	int3\n"
"	.size kinst_gprtest_uaccess, .-kinst_gprtest_uaccess\n"
"	.popsection\n"
);

static const char *const gt_names[GT_NREGS] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

static char gt_result[256] = "none: not run yet";
static unsigned long gt_runs;

/* The value loaded into register i (the same formula as the asm above). */
static u64
gt_value(int i)
{
	return (0x0101010101010101ull * (u64)(i + 1) + 0x123);
}

/* The arithmetic flags a native add/sub of these operands leaves. */
static u64
gt_add_flags(u64 a, u64 b)
{
	unsigned long fl;

	asm volatile("addq %2, %0\n\tpushfq\n\tpopq %1" : "+r" (a), "=r" (fl)
	    : "r" (b) : "cc");
	return (fl & GT_ARITH);
}

static u64
gt_sub_flags(u64 a, u64 b)
{
	unsigned long fl;

	asm volatile("subq %2, %0\n\tpushfq\n\tpopq %1" : "+r" (a), "=r" (fl)
	    : "r" (b) : "cc");
	return (fl & GT_ARITH);
}

static void
gt_run(void)
{
	u64 want;
	int i;

	kinst_gprtest_wrong = 0;
	kinst_gprtest_body();
	gt_runs++;
	for (i = 0; i < GT_NREGS; i++) {
		if (i == GT_RSP)
			want = kinst_gprtest_rsp;
		else if (i == GT_R14)
			want = gt_value(GT_R13) + gt_value(GT_R14);
		else if (i == GT_R10)
			want = gt_value(GT_R10) - gt_value(GT_R9);
		else
			want = gt_value(i);
		if (kinst_gprtest_out[i] != want) {
			snprintf(gt_result, sizeof(gt_result), "bad runs=%lu: "
			    "%s = %#llx after the traced instructions, expected "
			    "%#llx", gt_runs, gt_names[i],
			    (unsigned long long)kinst_gprtest_out[i],
			    (unsigned long long)want);
			return;
		}
	}
	want = gt_sub_flags(gt_value(GT_R10), gt_value(GT_R9));
	if ((kinst_gprtest_flags & GT_ARITH) != want) {
		snprintf(gt_result, sizeof(gt_result), "bad runs=%lu: flags "
		    "%#llx after the sub, expected %#llx", gt_runs,
		    (unsigned long long)(kinst_gprtest_flags & GT_ARITH),
		    (unsigned long long)want);
		return;
	}
	if (kinst_gprtest_wrong != 0) {
		snprintf(gt_result, sizeof(gt_result), "bad runs=%lu: jae not "
		    "taken after an add without carry", gt_runs);
		return;
	}
	snprintf(gt_result, sizeof(gt_result), "ok runs=%lu rsp=%#llx "
	    "addflags=%#llx", gt_runs, (unsigned long long)kinst_gprtest_rsp,
	    (unsigned long long)gt_add_flags(gt_value(GT_R13),
	    gt_value(GT_R14)));
}

static int
gt_set(const char *val, const struct kernel_param *kp)
{
	gt_run();
	return (0);
}

static int
gt_get(char *buf, const struct kernel_param *kp)
{
	return (scnprintf(buf, PAGE_SIZE, "%s\n", gt_result));
}

static const struct kernel_param_ops gt_ops = {
	.set = gt_set,
	.get = gt_get,
};
module_param_cb(run, &gt_ops, NULL, 0600);
MODULE_PARM_DESC(run, "write: run the register test once; read: its verdict");

static char gt_ac_result[128] = "none: not run yet";
static unsigned long gt_ac_runs;

static int
gt_ac_set(const char *val, const struct kernel_param *kp)
{
	if (!boot_cpu_has(X86_FEATURE_SMAP))
		return (-EOPNOTSUPP);
	kinst_gprtest_acflags = 0;
	kinst_gprtest_uaccess();
	gt_ac_runs++;
	if ((kinst_gprtest_acflags & X86_EFLAGS_AC) == 0)
		snprintf(gt_ac_result, sizeof(gt_ac_result), "bad runs=%lu: "
		    "AC clear after the window (flags %#llx)", gt_ac_runs,
		    (unsigned long long)kinst_gprtest_acflags);
	else if (strncmp(gt_ac_result, "bad", 3) != 0)
		snprintf(gt_ac_result, sizeof(gt_ac_result), "ok runs=%lu",
		    gt_ac_runs);
	return (0);
}

static int
gt_ac_get(char *buf, const struct kernel_param *kp)
{
	return (scnprintf(buf, PAGE_SIZE, "%s\n", gt_ac_result));
}

static const struct kernel_param_ops gt_ac_ops = {
	.set = gt_ac_set,
	.get = gt_ac_get,
};
module_param_cb(ac, &gt_ac_ops, NULL, 0600);
MODULE_PARM_DESC(ac, "write: run the user-access region once; read: its verdict");

MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("kinst tests: all 16 GPRs around traced instructions");
