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
 *    value, and has at most KINST_PROG_MAX_LOADS loads (LOAD and LOADC);
 *  - has at most KINST_CAP_MAX captures (MEM, STR), each of 1 ..
 *    KINST_CAP_MEM_MAX / KINST_CAP_STR_MAX bytes, KINST_CAP_MAX_BYTES in
 *    all, so that the record a hit makes has a size known at load time
 *    (cap_bytes).
 * The interpreter relies on these facts and checks nothing again.
 */
#ifndef KINST_PROG_H
#define KINST_PROG_H

#include "kinst_abi.h"

struct kinst_agg_val;
struct kinst_tstate;

/* A verified program, as the engine keeps it. */
struct kinst_prog {
	uint32_t	ninsns;
	uint32_t	nloads;		/* load instructions */
	uint32_t	max_depth;	/* deepest stack on any path */
	uint32_t	id;
	uint32_t	ncaps;		/* MEM/STR/VAL instructions */
	uint32_t	cap_bytes;	/* their sections' bytes at most, headers
					   and padding included */
	uint32_t	flags;		/* KINST_PROGF_* */
	uint32_t	_pad;
	uint8_t		capidx[KINST_PROG_MAX_INSNS];	/* MEM/STR/VAL: rank */
	struct kinst_pinsn code[KINST_PROG_MAX_INSNS];
};

#define	KINST_PROGF_PUSH	0x0001u	/* has a TS_PUSH (kinst_tstate.h, epoch) */

/* A capture a run declared (MEM/STR/VAL reached): read after the run. */
struct kinst_cap_req {
	uint64_t	addr;		/* VAL: the value */
	uint32_t	len;		/* MEM: bytes; STR: at most */
	uint8_t		op;		/* KINST_OP_MEM, STR or VAL */
	uint8_t		index;		/* rank of the instruction */
	uint16_t	flags;		/* KINST_SECF_DEREF, KINST_SECF_NOSTATE */
};

struct kinst_cap_set {
	uint32_t	n;
	struct kinst_cap_req req[KINST_CAP_MAX];
};

/* The bytes of one capture's section, at most: header, payload, padding. */
#define	KINST_CAP_SEC_BYTES(len)	\
	((uint32_t)(sizeof(struct kinst_rec_sec) + \
	sizeof(struct kinst_rec_cap)) + (((uint32_t)(len) + 7u) & ~7u))
/* The largest hit record a program with captures makes (stack included). */
#define	KINST_CAP_REC_MAX	\
	(sizeof(struct kinst_hit_record) + sizeof(struct kinst_rec_sec) + \
	KINST_STACK_MAX * sizeof(uint64_t) + \
	KINST_CAP_MAX * (sizeof(struct kinst_rec_sec) + \
	sizeof(struct kinst_rec_cap) + 8) + KINST_CAP_MAX_BYTES)

/* What a program sees of a hit. */
struct kinst_prog_ctx {
	const struct kinst_regs *regs;
	int32_t		pid;
	int32_t		tid;
	uint32_t	cpu;
	const char	*comm;		/* KINST_COMM_LEN bytes */
	struct kinst_agg_val *out;	/* KEY/VALUE results (kinst_agg.h), or NULL */
	/*
	 * The session's per-thread state (kinst_tstate.h), or NULL: none
	 * set up, or a nested hit (TS_PUSH does nothing, TS_GET misses).
	 */
	struct kinst_tstate *ts;
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
	KINST_PROG_NOSTATE = 3,	/* a TS_GET (not soft) found no activation */
};

/*
 * Run a verified program (trap context: no lock, no sleep; memory only
 * through kinst_os_read() and kinst_os_read_user()).  *value gets the
 * RET value (0 after a fault).
 */
int	kinst_prog_run(const struct kinst_prog *p,
	    const struct kinst_prog_ctx *c, uint64_t *value);

/*
 * The same, collecting the captures the run reaches into caps (NULL:
 * ignored, as aggregation does).  LOADC faults are never KINST_PROG_FAULT.
 */
int	kinst_prog_run_caps(const struct kinst_prog *p,
	    const struct kinst_prog_ctx *c, uint64_t *value,
	    struct kinst_cap_set *caps);

/*
 * Read a capture and write its section at sec (room for
 * KINST_CAP_SEC_BYTES(q->len)): the bytes are read page by page
 * (KINST_CAP_PAGE), through the hook the address's half chooses, so a
 * string that ends before an unmapped page is still captured.  Returns
 * the section's size, header and padding included.
 */
uint32_t kinst_cap_section(const struct kinst_cap_req *q, void *sec);

#define	KINST_CAP_PAGE	4096u

/*
 * Read len bytes at addr from the half its range lies in (kernel:
 * kinst_os_read; user: kinst_os_read_user); a range that leaves its half
 * or wraps fails.  0, or non-zero on failure.
 */
int	kinst_prog_read(uint64_t addr, void *buf, uint32_t len);

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
 * s->pstats[cpu] (filtered, and faults).  ts: the session's per-thread
 * state when this hit may use it (not nested), else NULL.
 */
bool	kinst_prog_pass(const struct kinst_prog *p, struct kinst_session *s,
	    uint32_t cpu, int32_t pid, int32_t tid, const char *comm,
	    const struct kinst_regs *regs, struct kinst_cap_set *caps,
	    struct kinst_tstate *ts);

/* The lowest kernel (upper canonical half) and first non-user address. */
#define	KINST_USER_END		0x0000800000000000ull
#define	KINST_KERNEL_START	0xffff800000000000ull

#endif /* !KINST_PROG_H */
