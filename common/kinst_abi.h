/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst ABI: what crosses the boundary between the kernel module and
 * kinstctl.  The register file, the hit record read(2) returns, and the ioctl
 * argument structures.  Shared verbatim by kmod/linux, kmod/freebsd, cli/ and
 * the tests.  All structures have explicit padding and fixed sizes that are
 * checked at compile time (see the _Static_asserts at the end).
 *
 * Versioning: KINST_ABI_VERSION is bumped on any incompatible change; the
 * CLI asks KINST_IOC_VERSION first and refuses to talk to a module with a
 * different major.
 */
#ifndef KINST_ABI_H
#define KINST_ABI_H

#include "kinst_types.h"

#define	KINST_ABI_VERSION_MAJOR	1
#define	KINST_ABI_VERSION_MINOR	15	/* 1.1: KINST_IOC_FILTER; 1.2: KINST_ARM_CHECK;
					   1.3: refuse reasons trap path, cpu bring-up;
					   1.4: KINST_ARM_STACK, record sections;
					   1.5: probe programs (KINST_IOC_PROG_LOAD,
					   KINST_ARM_PROG, KINST_IOC_PROG_STATS);
					   1.6: aggregation (KINST_IOC_AGG_*,
					   KINST_ARM_AGG, KINST_OP_KEY/VALUE);
					   1.7: memory and string captures
					   (KINST_OP_MEM/STR/LOADC, MEM and
					   STR sections);
					   1.8: KINST_AGGF_STACK, KINST_IOC_AGG_STACKS;
					   1.9: jump-optimized probes
					   (KINST_ARM_NOOPT, KINST_PI_JUMP);
					   1.10: per-thread state
					   (KINST_IOC_TS_*, KINST_OP_TS_PUSH/
					   TS_GET), value captures (KINST_OP_VAL,
					   KINST_SEC_VAL, KINST_SECF_NOSTATE);
					   1.11: a file's ring size
					   (KINST_IOC_RING);
					   1.12: mapped rings (mmap,
					   struct kinst_ring_ctl), wake-up
					   watermark (KINST_IOC_WAKE);
					   1.13: probes shared by sessions
					   (KINST_PI_SESSIONS in kinst_probe_info.
					   treatment, kinst_arm.narmed with
					   KINST_ARM_CHECK), refuse reason
					   shared-by-too-many and the classes of
					   excluded-function (no structure
					   changed size);
					   1.14: sample records of an
					   aggregation (KINST_AGGF_RECORD,
					   KINST_SEC_AGG, KINST_SECF_OVERFLOW);
					   1.15: the per-thread state's clock
					   (KINST_TS_LOCAL_CLOCK) */
#define	KINST_ABI_VERSION	((KINST_ABI_VERSION_MAJOR << 16) | KINST_ABI_VERSION_MINOR)

/*
 * The register file of a hit (struct kinst_regs, in every hit record) and
 * the registers a probe program names (KINST_PREG_*): the instruction
 * set's (kinst_isa.h).  For x86-64 it is the layout kinst has always had.
 */
#if defined(__x86_64__) || defined(__amd64__)
#include "x86/kinst_regs.h"
#elif defined(__aarch64__)
#include "arm64/kinst_regs.h"
#else
#error "kinst: no register file for this instruction set (common/kinst_isa.h)"
#endif

/* ---- records: what read(2) on the device returns ---- */

/* Every record starts with this header; size includes the header and is a multiple of 8. */
struct kinst_rec_hdr {
	uint32_t	size;
	uint16_t	type;		/* KINST_REC_* */
	uint16_t	flags;
};

#define	KINST_REC_PAD	0	/* ring-internal filler; never returned by read(2) */
#define	KINST_REC_HIT	1	/* struct kinst_hit_record */

#define	KINST_COMM_LEN	16

struct kinst_hit_record {
	struct kinst_rec_hdr hdr;
	uint32_t	cpu;
	uint32_t	probe_id;
	uint64_t	timestamp_ns;	/* monotonic clock, ns */
	uint64_t	addr;		/* probe address (== regs.rip on x86-64) */
	int32_t		pid;		/* process id (Linux: tgid) */
	int32_t		tid;		/* thread id */
	char		comm[KINST_COMM_LEN];	/* NUL-terminated */
	struct kinst_regs regs;
};

/*
 * Sections (since ABI 1.4): extra data that follows the fixed hit record
 * inside the same record; hdr.size covers the fixed record and every
 * section.  len is the payload size in bytes, excluding this header; the
 * payload is padded with zeros to a multiple of 8.  Readers skip section
 * types they do not know.
 */
struct kinst_rec_sec {
	uint16_t	type;		/* KINST_SEC_* */
	uint16_t	flags;
	uint32_t	len;
};

#define	KINST_SEC_STACK	1	/* uint64_t return addresses, innermost first:
				   [0] is the probed instruction itself */
#define	KINST_SEC_MEM	2	/* a memory capture (since ABI 1.7): struct
				   kinst_rec_cap, then size bytes */
#define	KINST_SEC_STR	3	/* a string capture (1.7): struct kinst_rec_cap,
				   then size bytes, the string without its NUL */
#define	KINST_SEC_VAL	4	/* a value capture (1.10): struct kinst_rec_cap
				   (addr 0), then size (8, or 0 with a flag)
				   bytes: the value, little-endian */
#define	KINST_SEC_AGG	5	/* a sample (1.14): struct kinst_rec_agg, the
				   key and value a KINST_AGGF_RECORD
				   aggregation took from this hit */
#define	KINST_SECF_TRUNCATED	0x0001u	/* STACK: more frames than KINST_STACK_MAX;
					   STR: no NUL within the capture's MAX
					   bytes (cut there) */
#define	KINST_SECF_FAULT	0x0002u	/* MEM, STR: reading the bytes at address
					   faulted (size 0) */
#define	KINST_SECF_DEREF	0x0004u	/* MEM, STR: computing the address faulted
					   (a KINST_OP_LOADC read): no address,
					   size 0; VAL: a load of its value
					   faulted */
#define	KINST_SECF_NOSTATE	0x0008u	/* MEM, STR, VAL (1.10): its address or
					   value needed this thread's state
					   (a soft KINST_OP_TS_GET) and there
					   was none: size 0 */
#define	KINST_SECF_OVERFLOW	0x0010u	/* AGG (1.14): the key found no slot (or its
					   stack none) and the hit was counted as
					   overflow: not in the tables */

/*
 * The payload of a MEM or STR section: which capture of the probe's
 * program (index: the capture instruction's rank among the program's
 * KINST_OP_MEM/STR instructions, 0 first), the address, and how many bytes
 * follow (section len = sizeof(struct kinst_rec_cap) + size).  A capture
 * instruction a hit's program did not reach has no section.
 */
struct kinst_rec_cap {
	uint64_t	addr;
	uint32_t	index;
	uint32_t	size;
};

/*
 * The payload of an AGG section (1.14): the key the hit was added to, as
 * KINST_IOC_AGG_READ's entries name it (with KINST_AGGF_STACK, key[1] is
 * the hash of a stack in this CPU's stack table, KINST_IOC_AGG_STACKS;
 * the probe id, with KINST_AGGF_PROBE, is the record's), and the value.
 */
struct kinst_rec_agg {
	uint64_t	key[2];
	uint64_t	value;
};

#define	KINST_STACK_MAX	64	/* frames in a STACK section, at most */

/* ---- ioctl arguments ---- */

#define	KINST_NAME_MAX		128	/* function name, including NUL */
#define	KINST_MODNAME_MAX	64	/* module name, including NUL; "" or "kernel" = the kernel */
#define	KINST_MAX_PROBES	8192	/* probes armed at once, all files together */

struct kinst_version {
	uint32_t	abi_version;	/* out: KINST_ABI_VERSION */
	uint32_t	max_probes;	/* out */
	uint32_t	ncpus;		/* out: number of per-CPU rings */
	uint32_t	record_size;	/* out: sizeof(struct kinst_hit_record) */
};

#define	KINST_ARM_ALL	0x0001u	/* arm every traceable instruction of the function */
#define	KINST_ARM_CHECK	0x0002u	/* with an offset, not ALL: arm nothing, return
				   the verdict in refuse_reason (0: traceable);
				   refusals are then not errors (since ABI 1.2) */
#define	KINST_ARM_STACK	0x0004u	/* hits of these probes carry a KINST_SEC_STACK
				   section (since ABI 1.4) */
#define	KINST_ARM_PROG	0x0010u	/* attach program prog_id to the probes armed
				   (since ABI 1.5) */
#define	KINST_ARM_AGG	0x0020u	/* hits add to the session's aggregation
				   (KINST_IOC_AGG_SETUP) instead of making a
				   record (since ABI 1.6) */
#define	KINST_ARM_NOOPT	0x0040u	/* never jump-optimize these probes: every
				   hit is an int3 trap (since ABI 1.9;
				   without it the module optimizes, in the
				   background, the probes that qualify) */

struct kinst_arm {
	char		module[KINST_MODNAME_MAX];	/* in */
	char		function[KINST_NAME_MAX];	/* in */
	uint32_t	offset;		/* in: ignored with KINST_ARM_ALL */
	uint32_t	flags;		/* in: KINST_ARM_* */
	uint32_t	probe_id;	/* out: id of the (first) probe armed */
	uint32_t	narmed;		/* out: probes armed; with
					   KINST_ARM_CHECK (ABI 1.13), the files
					   tracing the instruction now (0: none) */
	uint32_t	nrefused;	/* out: instructions refused (ARM_ALL) */
	uint32_t	refuse_reason;	/* out: reason when a single offset was refused */
	uint64_t	addr;		/* out: address of the (first) probe */
	uint8_t		insn[16];	/* out: the instruction bytes decoded there */
	uint32_t	insn_len;	/* out */
	uint32_t	prog_id;	/* in: with KINST_ARM_PROG, a program of
					   this file (KINST_IOC_PROG_LOAD); else 0 */
};

struct kinst_disarm {
	uint32_t	probe_id;	/* in: id, or KINST_ALL_PROBES */
	uint32_t	ndisarmed;	/* out */
};
#define	KINST_ALL_PROBES	0xffffffffu

struct kinst_probe_info {
	uint32_t	probe_id;
	uint32_t	offset;
	uint64_t	addr;
	uint64_t	hits;
	char		module[KINST_MODNAME_MAX];
	char		function[KINST_NAME_MAX];
	uint8_t		insn[16];
	uint32_t	insn_len;
	uint32_t	treatment;	/* enum kinst_treatment in the low 16 bits;
					   KINST_PI_* flags and counts above */
};
#define	KINST_PI_TREATMENT	0xffffu
#define	KINST_PI_JUMP	0x10000u	/* jump-optimized now: its hits take
					   the jmp to its detour, no trap
					   (since ABI 1.9) */
/*
 * Since ABI 1.13, in bits 20-25 the files tracing the probe's instruction
 * now (this one included), in bits 26-31 the most that did at once while
 * the probe was armed (0 from an older module).
 */
#define	KINST_PI_SESSIONS(t)	(((t) >> 20) & 0x3fu)
#define	KINST_PI_SESSIONS_MAX(t)	(((t) >> 26) & 0x3fu)
#define	KINST_PI_MK_SESSIONS(now, max)	\
	((((uint32_t)(now) & 0x3fu) << 20) | (((uint32_t)(max) & 0x3fu) << 26))

struct kinst_list {
	uint64_t	buf;		/* in: user pointer to struct kinst_probe_info[cap] */
	uint32_t	cap;		/* in */
	uint32_t	count;		/* out: probes of this file (may exceed cap) */
};

#define	KINST_STATS_MAXCPU	256

struct kinst_cpu_stats {
	uint64_t	hits;		/* probe hits on this CPU (this file's probes) */
	uint64_t	delivered;	/* records written to the ring */
	uint64_t	dropped;	/* records dropped: ring full or nested hit */
};

struct kinst_stats {
	uint64_t	buf;		/* in: user pointer to struct kinst_cpu_stats[cap] */
	uint32_t	cap;		/* in */
	uint32_t	ncpus;		/* out */
	uint64_t	refusals;	/* out: arm requests refused */
	uint64_t	nprobes;	/* out: probes armed by this file */
};

struct kinst_text {
	char		module[KINST_MODNAME_MAX];	/* in */
	char		function[KINST_NAME_MAX];	/* in */
	uint64_t	buf;		/* in: user buffer */
	uint32_t	cap;		/* in: its size */
	uint32_t	size;		/* out: function size (bytes copied = min(cap, size)) */
	uint64_t	addr;		/* out: function address */
};

/*
 * Which hits a session records (KINST_IOC_FILTER).  Hits filtered out are
 * not recorded and not counted in STATS.  At open, exclude_pid is the
 * opening process, so a tracer never records (and feeds back on) its own
 * reads of the device; -1 lifts that.
 */
struct kinst_filter {
	int32_t		pid;		/* in: only this process (-1: any) */
	int32_t		cpu;		/* in: only this CPU (-1: any) */
	int32_t		exclude_pid;	/* in: never this process (-1: none) */
	uint32_t	flags;		/* in: must be 0 */
};

/*
 * ---- probe programs (since ABI 1.5) ----
 *
 * A program is bytecode for a small stack machine, run in trap context
 * for every hit of the probes it is attached to, before any record is
 * built.  kinstctl compiles expressions into it; the module verifies it
 * when it is loaded (common/kinst_prog.c, docs/engine.md) and never trusts
 * the compiler.  Its result decides whether the hit is recorded: zero (or
 * a faulting load) filters the hit out, and it is counted in
 * KINST_IOC_PROG_STATS instead, so that per CPU
 * hits == delivered + dropped + filtered.
 *
 * Every instruction is 16 bytes; fields an opcode does not use must be 0.
 */
struct kinst_pinsn {
	uint8_t		op;		/* KINST_OP_* */
	uint8_t		arg;		/* register, context item or load size */
	int16_t		off;		/* jumps: target = this + 1 + off, off >= 0 */
	uint32_t	_pad;		/* must be 0 */
	uint64_t	imm;		/* KINST_OP_IMM's constant */
};

enum kinst_op {
	KINST_OP_IMM = 1,	/* push imm */
	KINST_OP_REG,		/* push register arg: KINST_PREG_* */
	KINST_OP_CTX,		/* push context item arg: KINST_PCTX_* */
	KINST_OP_LOAD,		/* pop address, push the arg (1, 2, 4, 8) bytes
				   there, zero-extended (little-endian); lower
				   canonical half: the current process's user
				   memory; a fault ends the program */
	KINST_OP_ADD,		/* binary: pop b, pop a, push a OP b */
	KINST_OP_SUB,
	KINST_OP_MUL,
	KINST_OP_AND,
	KINST_OP_OR,
	KINST_OP_XOR,
	KINST_OP_SHL,		/* shift count taken modulo 64 */
	KINST_OP_SHR,
	KINST_OP_EQ,		/* comparisons push 1 or 0 */
	KINST_OP_NE,
	KINST_OP_LTU,
	KINST_OP_LEU,
	KINST_OP_GTU,
	KINST_OP_GEU,
	KINST_OP_LTS,
	KINST_OP_LES,
	KINST_OP_GTS,
	KINST_OP_GES,
	KINST_OP_LNOT,		/* unary: pop a, push !a */
	KINST_OP_NEG,		/* -a */
	KINST_OP_BNOT,		/* ~a */
	KINST_OP_JA,		/* jump */
	KINST_OP_JZ,		/* pop a, jump if a == 0 */
	KINST_OP_JNZ,		/* pop a, jump if a != 0 */
	KINST_OP_RET,		/* pop the result; the stack must then be empty */
	KINST_OP_KEY,		/* pop a: aggregation key word arg (0, 1) = a
				   (since ABI 1.6; a no-op outside KINST_ARM_AGG) */
	KINST_OP_VALUE,		/* pop a: the aggregated value = a (1.6) */
	KINST_OP_MEM,		/* pop an address: capture imm (1 ..
				   KINST_CAP_MEM_MAX) bytes there into the
				   record, if the program returns true (1.7) */
	KINST_OP_STR,		/* pop an address: capture the NUL-terminated
				   string there, at most imm (1 ..
				   KINST_CAP_STR_MAX) bytes (1.7) */
	KINST_OP_LOADC,		/* LOAD for a capture's address (1.7): a fault
				   does not end the program: it pushes 0 and
				   the next MEM/STR is recorded as
				   KINST_SECF_DEREF; until then further LOADCs
				   read nothing and push 0 */
	KINST_OP_TS_PUSH,	/* pop arg (0 .. KINST_TS_VALS) words, then a
				   frame: open an activation of tag imm (not
				   0) for this thread (1.10, "per-thread
				   state") */
	KINST_OP_TS_GET,	/* pop a frame, push item (arg &
				   KINST_TSF_ITEM) of this thread's
				   activation (imm, frame); arg &
				   KINST_TSF_CLOSE: and close it.  None: the
				   program ends, filtered, unless arg &
				   KINST_TSF_SOFT: push 0, and the next
				   capture is KINST_SECF_NOSTATE (1.10) */
	KINST_OP_VAL,		/* pop a value: capture it (8 bytes, a
				   KINST_SEC_VAL section; counts as a
				   capture of 8 bytes) (1.10) */
	KINST_OP_COUNT_		/* first invalid opcode */
};

enum kinst_pctx {
	KINST_PCTX_PID = 0,	/* process id (sign-extended) */
	KINST_PCTX_TID,		/* thread id (sign-extended) */
	KINST_PCTX_CPU,
	KINST_PCTX_COMM0,	/* comm bytes 0-7 as a little-endian u64 */
	KINST_PCTX_COMM8,	/* comm bytes 8-15 */
	KINST_PCTX_COUNT
};

#define	KINST_PROG_MAX_INSNS	256	/* instructions per program */
#define	KINST_PROG_STACK	16	/* stack depth */
#define	KINST_PROG_MAX_LOADS	32	/* KINST_OP_LOAD instructions per program */
#define	KINST_PROG_MAX		16	/* programs per open file */
#define	KINST_CAP_MAX		8	/* MEM/STR/VAL instructions per program */
#define	KINST_CAP_MEM_MAX	512	/* bytes of one MEM capture */
#define	KINST_CAP_STR_MAX	256	/* bytes of one STR capture */
#define	KINST_CAP_MAX_BYTES	2048	/* sum of a program's MEM/STR imm
					   (and 8 per VAL) */

/* Why the verifier refused a program (kinst_prog_load.verdict). */
enum kinst_pv {
	KINST_PV_OK = 0,
	KINST_PV_EMPTY,		/* no instruction */
	KINST_PV_TOO_LONG,	/* more than KINST_PROG_MAX_INSNS */
	KINST_PV_BAD_OP,	/* unknown opcode */
	KINST_PV_BAD_ARG,	/* register, context item or load size out of range */
	KINST_PV_NONZERO,	/* a field the opcode does not use is not 0 */
	KINST_PV_JUMP_BACK,	/* jump offset < 0 */
	KINST_PV_JUMP_OUT,	/* jump target past the last instruction */
	KINST_PV_UNDERFLOW,	/* pops more than the stack holds */
	KINST_PV_OVERFLOW,	/* stack deeper than KINST_PROG_STACK */
	KINST_PV_MISMATCH,	/* paths join with different stack depths */
	KINST_PV_UNREACHABLE,	/* an instruction no path reaches */
	KINST_PV_FALL_OFF,	/* the last instruction is not RET */
	KINST_PV_RET_DEPTH,	/* RET with other than one value on the stack */
	KINST_PV_TOO_MANY_LOADS,	/* more than KINST_PROG_MAX_LOADS loads */
	KINST_PV_CAP_LEN,	/* a MEM/STR length out of range (1.7) */
	KINST_PV_TOO_MANY_CAPS,	/* more than KINST_CAP_MAX captures (1.7) */
	KINST_PV_CAP_BYTES,	/* captures over KINST_CAP_MAX_BYTES (1.7) */
	KINST_PV_COUNT_
};

struct kinst_prog_load {
	uint64_t	insns;		/* in: user pointer to struct kinst_pinsn[ninsns] */
	uint32_t	ninsns;		/* in: 1 .. KINST_PROG_MAX_INSNS */
	uint32_t	flags;		/* in: must be 0 */
	uint32_t	prog_id;	/* out: 1 .. KINST_PROG_MAX, for kinst_arm.prog_id */
	uint32_t	verdict;	/* out: KINST_PV_* (EINVAL when not OK) */
	uint32_t	error_pc;	/* out: the instruction refused */
	uint32_t	_pad;		/* must be 0 */
};

/* Per-CPU program counters of a file (KINST_IOC_PROG_STATS). */
struct kinst_prog_cpu_stats {
	uint64_t	filtered;	/* hits a program filtered out (faults included) */
	uint64_t	faults;		/* of which a load faulted */
};

struct kinst_prog_stats {
	uint64_t	buf;		/* in: user pointer to struct kinst_prog_cpu_stats[cap] */
	uint32_t	cap;		/* in */
	uint32_t	ncpus;		/* out */
};

/*
 * ---- aggregation (since ABI 1.6) ----
 *
 * A session may set up one aggregation (KINST_IOC_AGG_SETUP, before arming
 * probes with KINST_ARM_AGG).  A hit of such a probe makes no record: after
 * the filters and the program (whose false result filters it out as
 * usual), it adds to the entry of its key in this CPU's table, preallocated
 * at setup: count + 1, sum/min/max of the value, one histogram bucket.  The
 * key is the two words the program's KINST_OP_KEY set (0 otherwise) and,
 * with KINST_AGGF_PROBE, the probe id; the value is what KINST_OP_VALUE set
 * (0 otherwise).  A key that finds no free slot within KINST_AGG_PROBES
 * slots is counted as overflow; a hit nested in another on the same CPU as
 * nested.  So, per CPU, hits == delivered + dropped + filtered +
 * aggregated + overflow + nested (KINST_IOC_AGG_STATS).
 *
 * Sample records (since ABI 1.14): with KINST_AGGF_RECORD, every hit that
 * reaches the tables (aggregated, or overflow) also makes a record in the
 * CPU's ring, as a hit does without aggregation (the fixed hit record, its
 * timestamp the clock reading the program's per-thread state ops used, so
 * that a latency sample ends at its timestamp and starts its value earlier,
 * or, if they read none, taken after the program ran), with a KINST_SEC_AGG
 * section: the key and the value it added, KINST_SECF_OVERFLOW when it was
 * not added.
 * A full ring drops it (counted in dropped: the tables have the hit all the
 * same).  Per CPU then, hits == filtered + aggregated + overflow + nested
 * and delivered + dropped == aggregated + overflow.
 *
 * Stacks as keys (since ABI 1.8): with KINST_AGGF_STACK, the session also
 * preallocates, per CPU, a table of nstacks stacks.  A hit takes the kernel
 * stack (as KINST_ARM_STACK: frame 0 the probed instruction, then return
 * addresses, innermost first), finds it in this CPU's stack table, adding
 * it if new, and its 64-bit hash replaces key word 1.  Within one CPU's
 * table a hash names one stack: a different stack with the same hash, or
 * a new stack when the table has no free slot within KINST_AGG_PROBES, is
 * counted as overflow (never merged with another).  KINST_IOC_AGG_STACKS
 * reads one CPU's stacks; an entry's key[1] is the hash of a stack of the
 * same CPU (read the entries first: a stack is in its table before any
 * entry names it).  KINST_IOC_AGG_CLEAR empties the stacks too.
 */
enum kinst_agg_kind {
	KINST_AGG_COUNT = 1,	/* count, sum, min, max per key */
	KINST_AGG_LOG2,		/* and a log2 histogram of the value */
	KINST_AGG_LINEAR,	/* and a linear histogram of the value */
	KINST_AGG_KIND_COUNT_
};

#define	KINST_AGGF_PROBE	0x0001u	/* the probe id is part of the key */
#define	KINST_AGGF_STACK	0x0002u	/* key word 1 is the stack's hash (1.8) */
#define	KINST_AGGF_RECORD	0x0004u	/* every hit the tables take (not nested)
					   also makes a record, its key and value
					   in a KINST_SEC_AGG section (1.14) */

#define	KINST_AGG_MAX_SLOTS	65536	/* keys per CPU */
#define	KINST_AGG_MAX_LINEAR	1024	/* linear buckets (+ 2 outside the range) */
#define	KINST_AGG_MAX_BYTES	(64u << 20)	/* all tables of a session */
#define	KINST_AGG_PROBES	32	/* slots a key's lookup visits */
#define	KINST_AGG_LOG2_BUCKETS	65	/* < 0, 0, then [2^k, 2^(k+1)) k = 0..62 */
#define	KINST_AGG_MAX_STACKS	16384	/* stacks per CPU (KINST_AGGF_STACK) */

struct kinst_agg_setup {
	uint32_t	kind;		/* in: KINST_AGG_* */
	uint32_t	flags;		/* in: KINST_AGGF_* */
	uint32_t	nslots;		/* in: 1 .. KINST_AGG_MAX_SLOTS; out:
					   rounded up to a power of two */
	uint32_t	nbuckets;	/* out: histogram buckets per entry */
	int64_t		lin_min;	/* in, LINEAR: buckets [min, max) of */
	int64_t		lin_max;	/* step each, plus (.., min) and */
	int64_t		lin_step;	/* [max, ..); all 0 otherwise */
	uint32_t	entry_size;	/* out: bytes per entry in AGG_READ */
	uint32_t	nstacks;	/* in, KINST_AGGF_STACK: stacks per CPU,
					   1 .. KINST_AGG_MAX_STACKS (out: rounded
					   up to a power of two); else must be 0
					   (before 1.8: _pad) */
};

/* One key of one CPU, as KINST_IOC_AGG_READ returns it. */
struct kinst_agg_entry {
	uint64_t	key[2];
	uint32_t	probe_id;	/* with KINST_AGGF_PROBE; else 0 */
	uint32_t	_pad;
	uint64_t	count;
	uint64_t	sum;		/* of the values, modulo 2^64 */
	int64_t		min;		/* of the values, signed */
	int64_t		max;
	/* then uint64_t buckets[nbuckets] */
};

struct kinst_agg_read {
	uint64_t	buf;		/* in: user pointer, cap entries of
					   entry_size bytes */
	uint32_t	cap;		/* in: entries */
	uint32_t	cpu;		/* in: whose table */
	uint32_t	count;		/* out: entries copied */
	uint32_t	flags;		/* in: must be 0 */
};

/*
 * One stack of one CPU, as KINST_IOC_AGG_STACKS returns it (cap entries of
 * this size at buf, struct kinst_agg_read as the argument, flags 0).
 */
struct kinst_agg_stack {
	uint64_t	hash;		/* key[1] of the entries it counts */
	uint32_t	nframes;	/* 1 .. KINST_STACK_MAX */
	uint32_t	flags;		/* KINST_SECF_TRUNCATED */
	uint64_t	frames[KINST_STACK_MAX];	/* [0]: the probed instruction */
};

struct kinst_agg_cpu_stats {
	uint64_t	aggregated;	/* hits added to an entry */
	uint64_t	overflow;	/* hits whose key found no slot */
	uint64_t	nested;		/* hits nested in another hit: not added */
	uint64_t	used;		/* entries in use now */
};

struct kinst_agg_stats {
	uint64_t	buf;		/* in: user pointer to struct kinst_agg_cpu_stats[cap] */
	uint32_t	cap;		/* in */
	uint32_t	ncpus;		/* out */
	uint32_t	nslots;		/* out: per CPU */
	uint32_t	flags;		/* in: must be 0 */
};

/*
 * ---- per-thread state (since ABI 1.10) ----
 *
 * A session may set up one table of threads (KINST_IOC_TS_SETUP, before
 * arming probes whose programs use KINST_OP_TS_*), preallocated: nthreads
 * slots, each a stack of KINST_TS_DEPTH activations of KINST_TS_VALS saved
 * words.  KINST_OP_TS_PUSH opens an activation (tag, frame, the clock,
 * the words); KINST_OP_TS_GET finds the current thread's activation with
 * exactly that tag and frame and reads a word or the time since the push.
 * A framed activation (frame != 0: the stack pointer at a function's
 * entry) is closed unseen by a push of the same thread at a frame as high
 * or higher (the function returned; counted as superseded), an unframed
 * one (frame 0) by the next push of its tag.  A thread's lookup visits
 * KINST_TS_PROBES slots; a thread that finds neither its slot nor a free
 * one there takes the least recently used slot that has been idle
 * idle_ns (reclaimed), else its operation is counted as nothread.  No
 * operation ever matches an activation whose push it did not see: a miss
 * instead (docs/engine.md, "per-thread state").  Programs of nested hits,
 * and of a session without the table, push nothing and miss.
 */
#define	KINST_TS_DEPTH		8	/* activations per thread */
#define	KINST_TS_VALS		6	/* saved words per activation */
#define	KINST_TS_MAX_THREADS	16384	/* slots per session */
#define	KINST_TS_PROBES		8	/* slots a thread's lookup visits */
#define	KINST_TS_ELAPSED	6	/* TS_GET item: ns since the push */
#define	KINST_TS_START		7	/* TS_GET item: the push's clock */
#define	KINST_TSF_ITEM		0x0fu	/* TS_GET arg: the item */
#define	KINST_TSF_CLOSE		0x10u	/* TS_GET arg: close the activation */
#define	KINST_TSF_SOFT		0x20u	/* TS_GET arg: a miss pushes 0 */
#define	KINST_TS_IDLE_NS	1000000000ull	/* idle_ns 0 means this */
/*
 * kinst_ts_setup.flags (ABI 1.15): the clock that the programs' TS_PUSH and
 * TS_GET read (start and elapsed times, and the time of a sample record)
 * is the OS's per-CPU scheduler clock (Linux local_clock(); FreeBSD: the
 * same as without the flag), not the global monotonic one.  Cheaper where
 * the clocksource is not the TSC; there a duration is only right to about
 * a tick (docs/engine.md, "Which clock").
 */
#define	KINST_TS_LOCAL_CLOCK	0x1u
#define	KINST_TS_FLAGS		KINST_TS_LOCAL_CLOCK	/* every flag known */

struct kinst_ts_setup {
	uint32_t	nthreads;	/* in: 1 .. KINST_TS_MAX_THREADS; out:
					   rounded up to a power of two */
	uint32_t	flags;		/* in: KINST_TS_FLAGS or 0 (ABI 1.15;
					   before: must be 0); out: in force */
	uint64_t	idle_ns;	/* in: 0: KINST_TS_IDLE_NS; out: used */
};

/* The session's counters (KINST_IOC_TS_STATS), all CPUs; all 0 without a table. */
struct kinst_ts_stats {
	uint64_t	pushed;		/* activations opened */
	uint64_t	superseded;	/* closed unseen by a later push */
	uint64_t	evicted;	/* oldest dropped: KINST_TS_DEPTH open */
	uint64_t	flushed;	/* dropped by a flush (see kinst_tstate.h) */
	uint64_t	matched;	/* TS_GETs that found their activation */
	uint64_t	missed;		/* TS_GETs that did not */
	uint64_t	closed;		/* activations closed by a TS_GET */
	uint64_t	nothread;	/* operations that found no slot */
	uint64_t	reclaimed;	/* idle slots taken by another thread */
	uint64_t	busy;		/* operations skipped: slot locked */
	uint64_t	used;		/* slots owned now (read racily) */
	uint64_t	nslots;		/* the table's; 0: none set up */
};

/*
 * The size of a file's rings (KINST_IOC_RING), bytes per CPU.  A file's
 * rings are allocated when it first arms a probe, at the size in effect
 * then (the module's ring_size unless set here); once allocated the size is
 * fixed (EBUSY for any other).  size 0 only asks.
 */
struct kinst_ring_size {
	uint32_t	size;		/* in: a power of two in [min, max], or 0;
					   out: the size in effect */
	uint32_t	flags;		/* in: must be 0 */
	uint32_t	min;		/* out: the smallest size */
	uint32_t	max;		/* out: the largest size */
	uint32_t	ncpus;		/* out: rings per file */
	uint32_t	allocated;	/* out: 1 once the rings exist */
};

/*
 * Mapped rings (ABI 1.12).  Once a file's rings exist (its first ARM), the
 * reader may map each CPU's ring with two MAP_SHARED mappings of the file:
 *
 *   KINST_MAP_CTL(cpu), KINST_MAP_PAGE bytes, read-write: a struct
 *   kinst_ring_ctl at its start;
 *   KINST_MAP_DATA(cpu), the ring size bytes (KINST_IOC_RING), read-only:
 *   the records.
 *
 * Any other offset, length, protection or a private mapping is refused
 * (EINVAL or EACCES; ENXIO before the rings exist).  On FreeBSD a later
 * mprotect(2) can still make a mapping of a file opened read-write
 * writable or executable (d_mmap_single cannot lower the maximum
 * protection): that spoils only the reader's own records.  The records are laid out as
 * read(2) returns them, plus fillers: head and tail are free-running byte
 * positions, the byte at position x is data[x % size], every record starts
 * at a multiple of 8 and never wraps (a KINST_REC_PAD record fills the end
 * of the buffer instead; skip it).  The consumer loads head with acquire
 * semantics, reads the records before it, then stores the new tail with
 * release semantics: the producer overwrites nothing before that store.  A
 * tail the consumer corrupts loses its own records (the producer drops
 * while head - tail is not within the ring), nothing else.  read(2) and a
 * mapping consume the same rings: use one of them.
 */
#define	KINST_MAP_PAGE		4096u
#define	KINST_MAP_STRIDE	(1ull << 27)
#define	KINST_MAP_CTL(cpu)	((uint64_t)(cpu) * KINST_MAP_STRIDE)
#define	KINST_MAP_DATA(cpu)	(KINST_MAP_CTL(cpu) + KINST_MAP_PAGE)

struct kinst_ring_ctl {
	uint64_t	head;		/* producer: published position */
	uint32_t	size;		/* data bytes (a power of two) */
	uint32_t	cpu;
	uint64_t	_pad0[6];	/* head and tail on separate lines */
	uint64_t	tail;		/* consumer: position read up to */
	uint64_t	_pad1[7];
};

/*
 * Wake-up watermark (KINST_IOC_WAKE): a reader waiting in poll(2) or
 * read(2) is woken once one ring of the file holds at least bytes bytes
 * (0, the default: at the first record).  poll(2) reports readable from
 * the same threshold; a blocking read(2) returns what there is after one
 * wait (the module looks again at least every 100 ms), so records below
 * the watermark are delivered by the reader's own timeout.  At most half
 * a ring counts.
 */
struct kinst_wake {
	uint32_t	bytes;		/* in: at most 32 MiB */
	uint32_t	flags;		/* in: must be 0 */
};

/* Empty every table (entries, not the counters of AGG_STATS). */
struct kinst_agg_clear {
	uint32_t	flags;		/* in: must be 0 */
	uint32_t	_pad;		/* must be 0 */
};

/*
 * ioctl commands.  The structures are shared; the command encoding is each
 * OS's own _IO* macros, so the includer must include <sys/ioctl.h>
 * (Linux user), <linux/ioctl.h> (Linux kernel) or <sys/ioccom.h> (FreeBSD)
 * first.
 */
#ifdef _IOWR
#define	KINST_IOC_VERSION	_IOR('K', 1, struct kinst_version)
#define	KINST_IOC_ARM		_IOWR('K', 2, struct kinst_arm)
#define	KINST_IOC_DISARM	_IOWR('K', 3, struct kinst_disarm)
#define	KINST_IOC_LIST		_IOWR('K', 4, struct kinst_list)
#define	KINST_IOC_STATS		_IOWR('K', 5, struct kinst_stats)
#define	KINST_IOC_TEXT		_IOWR('K', 6, struct kinst_text)
#define	KINST_IOC_FILTER	_IOW('K', 7, struct kinst_filter)
#define	KINST_IOC_PROG_LOAD	_IOWR('K', 16, struct kinst_prog_load)
#define	KINST_IOC_PROG_STATS	_IOWR('K', 17, struct kinst_prog_stats)
#define	KINST_IOC_AGG_SETUP	_IOWR('K', 18, struct kinst_agg_setup)
#define	KINST_IOC_AGG_READ	_IOWR('K', 19, struct kinst_agg_read)
#define	KINST_IOC_AGG_CLEAR	_IOWR('K', 20, struct kinst_agg_clear)
#define	KINST_IOC_AGG_STATS	_IOWR('K', 21, struct kinst_agg_stats)
#define	KINST_IOC_AGG_STACKS	_IOWR('K', 22, struct kinst_agg_read)
#define	KINST_IOC_TS_SETUP	_IOWR('K', 23, struct kinst_ts_setup)
#define	KINST_IOC_TS_STATS	_IOR('K', 24, struct kinst_ts_stats)
#define	KINST_IOC_RING		_IOWR('K', 25, struct kinst_ring_size)
#define	KINST_IOC_WAKE		_IOWR('K', 26, struct kinst_wake)
#endif

#ifdef __cplusplus
#define	KINST_ABI_ASSERT(c, m)	static_assert(c, m)
#else
#define	KINST_ABI_ASSERT(c, m)	_Static_assert(c, m)
#endif
KINST_ABI_ASSERT(sizeof(struct kinst_regs) == KINST_REGS_SIZE, "kinst_regs layout");
KINST_ABI_ASSERT(sizeof(struct kinst_rec_hdr) == 8, "rec_hdr layout");
KINST_ABI_ASSERT(sizeof(struct kinst_rec_sec) == 8, "rec_sec layout");
KINST_ABI_ASSERT(sizeof(struct kinst_hit_record) % 8 == 0, "hit record alignment");
KINST_ABI_ASSERT(sizeof(struct kinst_arm) % 8 == 0, "kinst_arm layout");
KINST_ABI_ASSERT(sizeof(struct kinst_probe_info) % 8 == 0, "probe_info layout");
KINST_ABI_ASSERT(sizeof(struct kinst_pinsn) == 16, "pinsn layout");
KINST_ABI_ASSERT(sizeof(struct kinst_rec_cap) == 16, "rec_cap layout");
KINST_ABI_ASSERT(sizeof(struct kinst_rec_agg) == 24, "rec_agg layout");
KINST_ABI_ASSERT(sizeof(struct kinst_prog_load) == 32, "prog_load layout");
KINST_ABI_ASSERT(sizeof(struct kinst_prog_stats) == 16, "prog_stats layout");
KINST_ABI_ASSERT(sizeof(struct kinst_agg_setup) == 48, "agg_setup layout");
KINST_ABI_ASSERT(sizeof(struct kinst_agg_entry) == 56, "agg_entry layout");
KINST_ABI_ASSERT(sizeof(struct kinst_agg_read) == 24, "agg_read layout");
KINST_ABI_ASSERT(sizeof(struct kinst_agg_stats) == 24, "agg_stats layout");
KINST_ABI_ASSERT(sizeof(struct kinst_agg_clear) == 8, "agg_clear layout");
KINST_ABI_ASSERT(sizeof(struct kinst_agg_stack) == 528, "agg_stack layout");
KINST_ABI_ASSERT(sizeof(struct kinst_ts_setup) == 16, "ts_setup layout");
KINST_ABI_ASSERT(sizeof(struct kinst_ts_stats) == 96, "ts_stats layout");
KINST_ABI_ASSERT(sizeof(struct kinst_ring_size) == 24, "ring_size layout");
KINST_ABI_ASSERT(sizeof(struct kinst_ring_ctl) == 128, "ring_ctl layout");
KINST_ABI_ASSERT(sizeof(struct kinst_wake) == 8, "wake layout");

#endif /* !KINST_ABI_H */
