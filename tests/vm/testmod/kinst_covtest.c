// SPDX-License-Identifier: BSD-2-Clause
/*
 * kinst_covtest.ko: a test module for the guest (tests/vm/testmod), never
 * part of kinst: control flow with counts a test can predict, for
 * kinstctl cover (tests/vm/scenarios/cover_counts.sh).
 * kinst_covtest_body(trips, dir) is assembly, so that the compiler cannot
 * reshape it:
 *
 *	xor %eax,%eax
 *	test %rdi,%rdi
 *	je 3f			taken when trips == 0
 *   1:	add %rdi,%rax		loop body: trips times per call
 *	dec %rdi
 *	jne 1b			taken trips - 1 times, not taken once
 *   3:	test %rsi,%rsi		target of the je AND fall-through of the jne
 *	jne 4f			taken when dir != 0
 *	add $1,%rax		only when dir == 0
 *   4:	cmp $0xdead,%rsi	target and fall-through
 *	jne 5f			the test never passes dir 0xdead: always taken
 *	xor %eax,%eax		never executed
 *   5:	mov %rax,kinst_covtest_result(%rip)
 *	jmp __x86_return_thunk
 *
 * Writing "TRIPS DIR" to /sys/module/kinst_covtest/parameters/run calls it
 * once (TRIPS <= 1000); reading the parameter gives "runs=N result=R".
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

u64 kinst_covtest_result;

void kinst_covtest_body(u64 trips, u64 dir);

asm(
"	.pushsection .text\n"
"	.globl kinst_covtest_body\n"
"	.type kinst_covtest_body, @function\n"
"kinst_covtest_body:\n"
"	xorl %eax, %eax\n"
"	testq %rdi, %rdi\n"
"	je 3f\n"
"1:	addq %rdi, %rax\n"
"	decq %rdi\n"
"	jne 1b\n"
"3:	testq %rsi, %rsi\n"
"	jne 4f\n"
"	addq $1, %rax\n"
"4:	cmpq $0xdead, %rsi\n"
"	jne 5f\n"
"	xorl %eax, %eax\n"
"5:	movq %rax, kinst_covtest_result(%rip)\n"
"	jmp __x86_return_thunk\n"
"	int3\n"
"	.size kinst_covtest_body, .-kinst_covtest_body\n"
"	.popsection\n"
);

static unsigned long ct_runs;

static int
ct_set(const char *val, const struct kernel_param *kp)
{
	unsigned long long trips, dir;

	if (sscanf(val, "%llu %llu", &trips, &dir) != 2 || trips > 1000)
		return (-EINVAL);
	kinst_covtest_body(trips, dir);
	ct_runs++;
	return (0);
}

static int
ct_get(char *buf, const struct kernel_param *kp)
{
	return (scnprintf(buf, PAGE_SIZE, "runs=%lu result=%llu\n", ct_runs,
	    (unsigned long long)kinst_covtest_result));
}

static const struct kernel_param_ops ct_ops = {
	.set = ct_set,
	.get = ct_get,
};
module_param_cb(run, &ct_ops, NULL, 0600);
MODULE_PARM_DESC(run, "write \"TRIPS DIR\": run the covered function once; read: runs and result");

MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("kinst tests: known control flow for kinstctl cover");
