/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Probe programs in user space: interpreter cost per bytecode instruction
 * (a straight-line arithmetic program, a predicate with short-circuit
 * jumps, and a load-heavy one reading this process's memory through the
 * harness's kinst_os_read_user) and verifier throughput.  Figures only,
 * never pass/fail.
 *
 * interp: ns per run and per bytecode instruction executed (counted by
 * prog_bench_steps.c, the same interpreter with a step hook: a taken jump
 * skips instructions); verify: ns per program, programs/s, and bytecode
 * instructions/s and bytes/s (sizeof(struct kinst_pinsn) bytes each).
 *
 * usage: prog_bench [iterations]   (default 200000 per case)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kinst_prog.h"

void	kh_os_init(void);
uint64_t prog_bench_steps(const struct kinst_prog *p,
	    const struct kinst_prog_ctx *c);

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

static struct kinst_pinsn code[KINST_PROG_MAX_INSNS];
static struct kinst_prog prog;
static uint64_t target[4] = { 7, 9, 11, 13 };

static uint32_t
build_arith(void)
{
	uint32_t n = 0;

	code[n++] = (struct kinst_pinsn){ .op = KINST_OP_REG, .arg = KINST_RDX };
	while (n < KINST_PROG_MAX_INSNS - 2) {
		code[n++] = (struct kinst_pinsn){ .op = KINST_OP_IMM, .imm = n };
		code[n++] = (struct kinst_pinsn){ .op = n % 3 == 0 ?
		    KINST_OP_ADD : n % 3 == 1 ? KINST_OP_XOR : KINST_OP_MUL };
	}
	code[n++] = (struct kinst_pinsn){ .op = KINST_OP_RET };
	return (n);
}

/* rdx == 7 && comm0 != 0 || pid == 1, jumps taken half the time. */
static uint32_t
build_pred(void)
{
	static const struct kinst_pinsn p[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDX },
		{ .op = KINST_OP_IMM, .imm = 7 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_JZ, .off = 4 },
		{ .op = KINST_OP_CTX, .arg = KINST_PCTX_COMM0 },
		{ .op = KINST_OP_IMM, .imm = 0 },
		{ .op = KINST_OP_NE },
		{ .op = KINST_OP_JNZ, .off = 4 },
		{ .op = KINST_OP_CTX, .arg = KINST_PCTX_PID },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_JA, .off = 1 },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};

	memcpy(code, p, sizeof(p));
	return (sizeof(p) / sizeof(p[0]));
}

/* Sum of four u64 loads at rsi+8k: each load one process_vm_readv(). */
static uint32_t
build_loads(void)
{
	uint32_t n = 0, k;

	code[n++] = (struct kinst_pinsn){ .op = KINST_OP_IMM, .imm = 0 };
	for (k = 0; k < 4; k++) {
		code[n++] = (struct kinst_pinsn){ .op = KINST_OP_REG,
		    .arg = KINST_RSI };
		code[n++] = (struct kinst_pinsn){ .op = KINST_OP_IMM,
		    .imm = 8 * k };
		code[n++] = (struct kinst_pinsn){ .op = KINST_OP_ADD };
		code[n++] = (struct kinst_pinsn){ .op = KINST_OP_LOAD, .arg = 8 };
		code[n++] = (struct kinst_pinsn){ .op = KINST_OP_ADD };
	}
	code[n++] = (struct kinst_pinsn){ .op = KINST_OP_RET };
	return (n);
}

static void
bench(const char *name, uint32_t n, uint32_t iters)
{
	struct kinst_regs regs;
	struct kinst_prog_ctx c;
	uint64_t t0, t1, v, sum, steps;
	double dt;
	uint32_t i, bad;
	int vd;

	vd = kinst_prog_verify(code, n, &prog, &bad);
	if (vd != KINST_PV_OK) {
		fprintf(stderr, "prog_bench: %s refused: %s at %u\n", name,
		    kinst_prog_verdict_name(vd), bad);
		exit(1);
	}
	memset(&regs, 0, sizeof(regs));
	regs.gpr[KINST_RSI] = (uint64_t)(uintptr_t)target;
	c.regs = &regs;
	c.pid = 100;
	c.tid = 100;
	c.cpu = 0;
	c.comm = "bench\0\0\0\0\0\0\0\0\0\0";
	c.out = NULL;
	/* The loop alternates rdx 6 and 7: the steps of both, averaged. */
	regs.gpr[KINST_RDX] = 6;
	steps = prog_bench_steps(&prog, &c);
	regs.gpr[KINST_RDX] = 7;
	steps += prog_bench_steps(&prog, &c);
	sum = 0;
	t0 = now_ns();
	for (i = 0; i < iters; i++) {
		regs.gpr[KINST_RDX] = 6 + (i & 1);
		(void)kinst_prog_run(&prog, &c, &v);
		sum += v;
	}
	t1 = now_ns();
	dt = (double)(t1 - t0);
	printf("interp %-8s %3u insns, %5.1f executed/run: %8.1f ns/run  "
	    "%6.2f ns/insn executed (sum %" PRIu64 ")\n", name, n,
	    (double)steps / 2, dt / iters, dt / iters / ((double)steps / 2),
	    sum);
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		(void)kinst_prog_verify(code, n, &prog, &bad);
	t1 = now_ns();
	dt = (double)(t1 - t0);
	printf("verify %-8s %3u insns (%5zu bytes): %8.1f ns/program  "
	    "%9.0f programs/s  %6.1f M insns/s  %7.1f MB/s\n", name, n,
	    n * sizeof(code[0]), dt / iters, iters / (dt / 1e9),
	    (double)n * iters / (dt / 1e9) / 1e6,
	    (double)n * sizeof(code[0]) * iters / (dt / 1e9) / 1e6);
}

int
main(int argc, char **argv)
{
	uint32_t iters;

	iters = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 200000;
	if (iters == 0)
		iters = 1;
	kh_os_init();
	bench("arith", build_arith(), iters);
	bench("pred", build_pred(), iters);
	bench("loads", build_loads(), iters / 10 + 1);
	return (0);
}
