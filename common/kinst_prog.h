/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Probe programs: the verifier (attach time, thread context) and the
 * interpreter (trap context).  The bytecode is defined in kinst_abi.h
 * (struct kinst_pinsn, KINST_OP_*).
 *
 * The verifier proves, without running it, that a program
 *  - has 1 .. KINST_PROG_MAX_INSNS instructions, each with a known opcode,
 *    an in-range register / context item / load size, and zeros in every
 *    field its opcode does not use;
 *  - jumps only forward and inside itself, so each instruction runs at most
 *    once per hit (the work is bounded by the length);
 *  - never pops an empty stack nor pushes past KINST_PROG_STACK, with the
 *    same depth on every path into an instruction;
 *  - reaches every instruction, ends every path in RET with exactly one
 *    value, and has at most KINST_PROG_MAX_LOADS loads.
 * The interpreter relies on these facts and checks nothing again.
 */
#ifndef KINST_PROG_H
#define KINST_PROG_H

#include "kinst_abi.h"

struct kinst_agg_val;

/* A verified program, as the engine keeps it. */
struct kinst_prog {
	uint32_t	ninsns;
	uint32_t	nloads;		/* load instructions */
	uint32_t	max_depth;	/* deepest stack on any path */
	uint32_t	id;
	struct kinst_pinsn code[KINST_PROG_MAX_INSNS];
};

/* What a program sees of a hit. */
struct kinst_prog_ctx {
	const struct kinst_regs *regs;
	int32_t		pid;
	int32_t		tid;
	uint32_t	cpu;
	const char	*comm;		/* KINST_COMM_LEN bytes */
	struct kinst_agg_val *out;	/* KEY/VALUE results (kinst_agg.h), or NULL */
};

/*
 * Verify code[0 .. n-1]; on success (KINST_PV_OK) fill p with a copy.  On
 * refusal, *bad_pc is the instruction refused (n when the program as a
 * whole is).
 */
int	kinst_prog_verify(const struct kinst_pinsn *code, uint32_t n,
	    struct kinst_prog *p, uint32_t *bad_pc);

/* The verdict's name, for logs and the CLI ("jump backward", ...). */
const char *kinst_prog_verdict_name(uint32_t verdict);

enum kinst_prog_res {
	KINST_PROG_FALSE = 0,	/* ran to RET with 0 */
	KINST_PROG_TRUE = 1,	/* ran to RET with anything else */
	KINST_PROG_FAULT = 2,	/* a load faulted */
};

/*
 * Run a verified program (trap context: no lock, no sleep; memory only
 * through kinst_os_read() and kinst_os_read_user()).  *value gets the
 * RET value (0 after a fault).
 */
int	kinst_prog_run(const struct kinst_prog *p,
	    const struct kinst_prog_ctx *c, uint64_t *value);

/*
 * A fault-safe load as a program does it: addr's canonical half chooses
 * kernel (kinst_os_read) or the current process's user memory
 * (kinst_os_read_user); a range that leaves its half faults.  Little-endian
 * into *v, zero-extended.  0, or non-zero on a fault.
 */
int	kinst_prog_load_mem(uint64_t addr, uint32_t size, uint64_t *v);

struct kinst_session;

/*
 * The engine's predicate step (kinst_engine.c, trap context): run p on the
 * hit; true to record it.  A false result or a fault is counted in
 * s->pstats[cpu] (filtered, and faults).
 */
bool	kinst_prog_pass(const struct kinst_prog *p, struct kinst_session *s,
	    uint32_t cpu, int32_t pid, int32_t tid, const char *comm,
	    const struct kinst_regs *regs);

/* The lowest kernel (upper canonical half) and first non-user address. */
#define	KINST_USER_END		0x0000800000000000ull
#define	KINST_KERNEL_START	0xffff800000000000ull

#endif /* !KINST_PROG_H */
