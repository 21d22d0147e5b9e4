/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Probe programs: verifier and interpreter (kinst_prog.h).
 *
 * What each opcode takes from the stack, gives back and which instruction
 * fields it uses is one table (op_info); the verifier reads it and never
 * special-cases an arithmetic opcode.
 */

#include "kinst_agg.h"
#include "kinst_engine.h"
#include "kinst_isa.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_tstate.h"

#define	F_ARG	0x01	/* uses arg */
#define	F_IMM	0x02	/* uses imm */
#define	F_OFF	0x04	/* uses off: a jump */
#define	F_NOFALL 0x08	/* never continues at the next instruction */

struct op_info {
	uint8_t		pops;
	uint8_t		pushes;
	uint8_t		flags;
	uint8_t		arg_max;	/* with F_ARG: arg < arg_max (loads: sizes) */
};

/*
 * A test's hook into the interpreter loop (tests/unit/prog_test.c compiles
 * this file with it to count steps and watch the stack); nothing otherwise.
 */
#ifndef KINST_PROG_STEP
#define	KINST_PROG_STEP(p, pc, sp)	do { } while (0)
#endif

#define	BINOP	{ 2, 1, 0, 0 }
#define	UNOP	{ 1, 1, 0, 0 }

static const struct op_info op_info[KINST_OP_COUNT_] = {
	[KINST_OP_IMM] =	{ 0, 1, F_IMM, 0 },
	[KINST_OP_REG] =	{ 0, 1, F_ARG, KINST_PREG_COUNT },
	[KINST_OP_CTX] =	{ 0, 1, F_ARG, KINST_PCTX_COUNT },
	[KINST_OP_LOAD] =	{ 1, 1, F_ARG, 9 },
	[KINST_OP_ADD] = BINOP, [KINST_OP_SUB] = BINOP,
	[KINST_OP_MUL] = BINOP, [KINST_OP_AND] = BINOP,
	[KINST_OP_OR] = BINOP, [KINST_OP_XOR] = BINOP,
	[KINST_OP_SHL] = BINOP, [KINST_OP_SHR] = BINOP,
	[KINST_OP_EQ] = BINOP, [KINST_OP_NE] = BINOP,
	[KINST_OP_LTU] = BINOP, [KINST_OP_LEU] = BINOP,
	[KINST_OP_GTU] = BINOP, [KINST_OP_GEU] = BINOP,
	[KINST_OP_LTS] = BINOP, [KINST_OP_LES] = BINOP,
	[KINST_OP_GTS] = BINOP, [KINST_OP_GES] = BINOP,
	[KINST_OP_LNOT] = UNOP, [KINST_OP_NEG] = UNOP, [KINST_OP_BNOT] = UNOP,
	[KINST_OP_JA] =		{ 0, 0, F_OFF | F_NOFALL, 0 },
	[KINST_OP_JZ] =		{ 1, 0, F_OFF, 0 },
	[KINST_OP_JNZ] =	{ 1, 0, F_OFF, 0 },
	[KINST_OP_RET] =	{ 1, 0, F_NOFALL, 0 },
	[KINST_OP_KEY] =	{ 1, 0, F_ARG, 2 },	/* kinst_agg.c */
	[KINST_OP_VALUE] =	{ 1, 0, 0, 0 },
	[KINST_OP_MEM] =	{ 1, 0, F_IMM, 0 },	/* captures */
	[KINST_OP_STR] =	{ 1, 0, F_IMM, 0 },
	[KINST_OP_LOADC] =	{ 1, 1, F_ARG, 9 },
	/* TS_PUSH pops arg + 1: op_pops() */
	[KINST_OP_TS_PUSH] =	{ 1, 0, F_ARG | F_IMM, KINST_TS_VALS + 1 },
	[KINST_OP_TS_GET] =	{ 1, 1, F_ARG | F_IMM,
	    (KINST_TSF_ITEM | KINST_TSF_CLOSE | KINST_TSF_SOFT) + 1 },
	[KINST_OP_VAL] =	{ 1, 0, 0, 0 },
};

/* What in takes from the stack. */
static uint32_t
op_pops(const struct kinst_pinsn *in)
{
	if (in->op == KINST_OP_TS_PUSH)
		return (1u + in->arg);
	return (op_info[in->op].pops);
}

/* A capture instruction: its rank is in capidx, its bytes in cap_bytes. */
static bool
op_is_cap(uint8_t op)
{
	return (op == KINST_OP_MEM || op == KINST_OP_STR || op == KINST_OP_VAL);
}

/* Opcode known, arg in range, unused fields zero. */
static int
verify_fields(const struct kinst_pinsn *in)
{
	const struct op_info *oi;

	if (in->op == 0 || in->op >= KINST_OP_COUNT_)
		return (KINST_PV_BAD_OP);
	oi = &op_info[in->op];
	if (in->_pad != 0 || ((oi->flags & F_IMM) == 0 && in->imm != 0) ||
	    ((oi->flags & F_OFF) == 0 && in->off != 0) ||
	    ((oi->flags & F_ARG) == 0 && in->arg != 0))
		return (KINST_PV_NONZERO);
	if ((oi->flags & F_ARG) != 0 && in->arg >= oi->arg_max)
		return (KINST_PV_BAD_ARG);
	if ((in->op == KINST_OP_LOAD || in->op == KINST_OP_LOADC) &&
	    in->arg != 1 && in->arg != 2 && in->arg != 4 && in->arg != 8)
		return (KINST_PV_BAD_ARG);
	if ((in->op == KINST_OP_MEM && (in->imm == 0 ||
	    in->imm > KINST_CAP_MEM_MAX)) || (in->op == KINST_OP_STR &&
	    (in->imm == 0 || in->imm > KINST_CAP_STR_MAX)))
		return (KINST_PV_CAP_LEN);
	if ((in->op == KINST_OP_TS_PUSH || in->op == KINST_OP_TS_GET) &&
	    in->imm == 0)
		return (KINST_PV_BAD_ARG);	/* tag 0 is no tag */
	if (in->op == KINST_OP_TS_GET &&
	    (in->arg & KINST_TSF_ITEM) > KINST_TS_START)
		return (KINST_PV_BAD_ARG);
	return (KINST_PV_OK);
}

/* Record the stack depth on one more path into pc. */
static int
verify_merge(int16_t *depth, uint32_t pc, int16_t d)
{
	if (depth[pc] < 0)
		depth[pc] = d;
	else if (depth[pc] != d)
		return (KINST_PV_MISMATCH);
	return (KINST_PV_OK);
}

/*
 * The stack effect of instruction pc entered with depth[pc], and the paths
 * out of it.  Jumps go forward only, so every path into pc was seen before
 * pc is checked.
 */
static int
verify_flow(const struct kinst_pinsn *in, uint32_t pc, uint32_t n,
    int16_t *depth)
{
	const struct op_info *oi = &op_info[in->op];
	int32_t target;
	int16_t d;
	int r;

	if (depth[pc] < 0)
		return (KINST_PV_UNREACHABLE);
	if ((uint32_t)depth[pc] < op_pops(in))
		return (KINST_PV_UNDERFLOW);
	d = (int16_t)(depth[pc] - (int16_t)op_pops(in) + oi->pushes);
	if (d > KINST_PROG_STACK)
		return (KINST_PV_OVERFLOW);
	if (in->op == KINST_OP_RET && d != 0)
		return (KINST_PV_RET_DEPTH);
	if ((oi->flags & F_OFF) != 0) {
		if (in->off < 0)
			return (KINST_PV_JUMP_BACK);
		target = (int32_t)pc + 1 + in->off;
		if ((uint32_t)target >= n)
			return (KINST_PV_JUMP_OUT);
		if ((r = verify_merge(depth, (uint32_t)target, d)) != 0)
			return (r);
	}
	if ((oi->flags & F_NOFALL) == 0) {
		if (pc + 1 >= n)
			return (KINST_PV_FALL_OFF);
		return (verify_merge(depth, pc + 1, d));
	}
	return (KINST_PV_OK);
}

int
kinst_prog_verify(const struct kinst_pinsn *code, uint32_t n,
    struct kinst_prog *p, uint32_t *bad_pc)
{
	int16_t depth[KINST_PROG_MAX_INSNS];
	uint32_t pc, nloads, maxd, d, ncaps, capsum, capbytes, flags, len;
	int r;

	*bad_pc = n;
	flags = 0;
	if (n == 0)
		return (KINST_PV_EMPTY);
	if (n > KINST_PROG_MAX_INSNS)
		return (KINST_PV_TOO_LONG);
	for (pc = 0; pc < n; pc++)
		depth[pc] = -1;
	depth[0] = 0;
	nloads = 0;
	maxd = 0;
	ncaps = 0;
	capsum = 0;
	capbytes = 0;
	for (pc = 0; pc < n; pc++) {
		*bad_pc = pc;
		if ((r = verify_fields(&code[pc])) != KINST_PV_OK)
			return (r);
		if ((r = verify_flow(&code[pc], pc, n, depth)) != KINST_PV_OK)
			return (r);
		d = depth[pc] - op_pops(&code[pc]) +
		    op_info[code[pc].op].pushes;
		if (d > maxd)
			maxd = d;
		if ((code[pc].op == KINST_OP_LOAD ||
		    code[pc].op == KINST_OP_LOADC) && ++nloads >
		    KINST_PROG_MAX_LOADS)
			return (KINST_PV_TOO_MANY_LOADS);
		p->capidx[pc] = 0;
		if (code[pc].op == KINST_OP_TS_PUSH)
			flags |= KINST_PROGF_PUSH;
		if (op_is_cap(code[pc].op)) {
			if (ncaps == KINST_CAP_MAX)
				return (KINST_PV_TOO_MANY_CAPS);
			/* imm <= KINST_CAP_MEM_MAX: verify_fields; VAL: 8 */
			len = code[pc].op == KINST_OP_VAL ? 8u :
			    (uint32_t)code[pc].imm;
			capsum += len;
			if (capsum > KINST_CAP_MAX_BYTES)
				return (KINST_PV_CAP_BYTES);
			capbytes += KINST_CAP_SEC_BYTES(len);
			p->capidx[pc] = (uint8_t)ncaps++;
		}
	}
	*bad_pc = 0;
	p->ninsns = n;
	p->nloads = nloads;
	p->max_depth = maxd;
	p->id = 0;
	p->ncaps = ncaps;
	p->cap_bytes = capbytes;
	p->flags = flags;
	p->_pad = 0;
	for (pc = 0; pc < n; pc++)
		p->code[pc] = code[pc];
	return (KINST_PV_OK);
}

int
kinst_prog_read(uint64_t addr, void *buf, uint32_t len)
{
	uint64_t last;

	if (len == 0)
		return (-1);
	last = addr + len - 1;
	if (last < addr)
		return (-1);
	if (last < KINST_USER_END)
		return (kinst_os_read_user(addr, buf, len));
	if (addr >= KINST_KERNEL_START)
		return (kinst_os_read(addr, buf, len));
	return (-1);		/* non-canonical, or straddles a half */
}

int
kinst_prog_load_mem(uint64_t addr, uint32_t size, uint64_t *v)
{
	uint8_t b[8];
	uint32_t i;

	*v = 0;
	if (size == 0 || size > 8)
		return (-1);
	if (kinst_prog_read(addr, b, size) != 0)
		return (-1);
	for (i = 0; i < size; i++)
		*v |= (uint64_t)b[i] << (8 * i);
	return (0);
}

static uint64_t
ctx_item(const struct kinst_prog_ctx *c, uint8_t item)
{
	uint64_t v;
	int i, base;

	switch (item) {
	case KINST_PCTX_PID:
		return ((uint64_t)(int64_t)c->pid);
	case KINST_PCTX_TID:
		return ((uint64_t)(int64_t)c->tid);
	case KINST_PCTX_CPU:
		return (c->cpu);
	default:
		base = item == KINST_PCTX_COMM0 ? 0 : 8;
		v = 0;
		for (i = 0; i < 8; i++)
			v |= (uint64_t)(uint8_t)c->comm[base + i] << (8 * i);
		return (v);
	}
}

static uint64_t
binop(uint8_t op, uint64_t a, uint64_t b)
{
	switch (op) {
	case KINST_OP_ADD:	return (a + b);
	case KINST_OP_SUB:	return (a - b);
	case KINST_OP_MUL:	return (a * b);
	case KINST_OP_AND:	return (a & b);
	case KINST_OP_OR:	return (a | b);
	case KINST_OP_XOR:	return (a ^ b);
	case KINST_OP_SHL:	return (a << (b & 63));
	case KINST_OP_SHR:	return (a >> (b & 63));
	case KINST_OP_EQ:	return (a == b);
	case KINST_OP_NE:	return (a != b);
	case KINST_OP_LTU:	return (a < b);
	case KINST_OP_LEU:	return (a <= b);
	case KINST_OP_GTU:	return (a > b);
	case KINST_OP_GEU:	return (a >= b);
	case KINST_OP_LTS:	return ((int64_t)a < (int64_t)b);
	case KINST_OP_LES:	return ((int64_t)a <= (int64_t)b);
	case KINST_OP_GTS:	return ((int64_t)a > (int64_t)b);
	default:		return ((int64_t)a >= (int64_t)b);
	}
}

int
kinst_prog_run(const struct kinst_prog *p, const struct kinst_prog_ctx *c,
    uint64_t *value)
{

	return (kinst_prog_run_caps(p, c, value, NULL));
}

/*
 * What one run carries from instruction to instruction besides its stack:
 * the thread's key and clock (read at the first TS op) and the next
 * capture's flag (0: none).
 */
struct prog_run {
	uint64_t key[2];
	uint64_t now;
	uint16_t poison;
	bool keyed;
};

/*
 * A TS op's thread key and the table's clock (c->ts set), read once per run
 * at the first TS op; the clock is also told to the aggregation.  Inlined
 * into both TS ops: no call per op on the probe path.
 */
static inline __attribute__((__always_inline__)) void
run_thread(const struct kinst_prog_ctx *c, struct prog_run *r)
{
	if (!r->keyed) {
		kinst_os_thread_key(r->key);
		r->now = (c->ts->flags & KINST_TS_LOCAL_CLOCK) != 0 ?
		    kinst_os_local_ns() : kinst_os_now_ns();
		r->keyed = true;
	}
	kinst_agg_clock(c->out, r->now);
}

/*
 * MEM, STR or VAL at pc with its address popped: a request in caps (at
 * most ncaps <= KINST_CAP_MAX: each runs once), flagged and with no
 * address when an earlier read of its operands failed.
 */
static void
run_capture(const struct kinst_prog *p, uint32_t pc, uint64_t addr,
    struct prog_run *r, struct kinst_cap_set *caps)
{
	const struct kinst_pinsn *in = &p->code[pc];
	struct kinst_cap_req *q;

	if (caps != NULL) {
		q = &caps->req[caps->n++];
		q->addr = r->poison != 0 ? 0 : addr;
		q->len = in->op == KINST_OP_VAL ? 8u : (uint32_t)in->imm;
		q->op = in->op;
		q->index = p->capidx[pc];
		q->flags = r->poison;
	}
	r->poison = 0;
}

/* TS_PUSH of the frame at st[0] and the arg words after it. */
static void
run_ts_push(const struct kinst_prog_ctx *c, const struct kinst_pinsn *in,
    const uint64_t *st, struct prog_run *r)
{
	if (c->ts == NULL)
		return;
	run_thread(c, r);
	(void)kinst_ts_push(c->ts, c->cpu, r->key, r->now, in->imm, st[0],
	    &st[1], in->arg);
}

/*
 * TS_GET of the frame at *top, the item in its place.  A missing item
 * reads as 0 and flags the next capture under KINST_TSF_SOFT; else it
 * ends the run (false).
 */
static bool
run_ts_get(const struct kinst_prog_ctx *c, const struct kinst_pinsn *in,
    uint64_t *top, struct prog_run *r)
{
	if (c->ts != NULL)
		run_thread(c, r);
	if (c->ts == NULL || kinst_ts_get(c->ts, c->cpu, r->key, r->now,
	    in->imm, *top, in->arg & KINST_TSF_ITEM,
	    (in->arg & KINST_TSF_CLOSE) != 0, top) != 0) {
		if ((in->arg & KINST_TSF_SOFT) == 0)
			return (false);
		*top = 0;
		if (r->poison == 0)
			r->poison = KINST_SECF_NOSTATE;
	}
	return (true);
}

int
kinst_prog_run_caps(const struct kinst_prog *p, const struct kinst_prog_ctx *c,
    uint64_t *value, struct kinst_cap_set *caps)
{
	uint64_t st[KINST_PROG_STACK] KINST_NOINIT;	/* read only once pushed */
	const struct kinst_pinsn *in;
	struct prog_run r;
	uint32_t pc, sp;

	sp = 0;
	r.poison = 0;
	r.keyed = false;
	r.key[0] = r.key[1] = r.now = 0;
	if (caps != NULL)
		caps->n = 0;
	*value = 0;
	for (pc = 0; pc < p->ninsns; pc++) {
		in = &p->code[pc];
		KINST_PROG_STEP(p, pc, sp);
		switch (in->op) {
		case KINST_OP_IMM:
			st[sp++] = in->imm;
			break;
		case KINST_OP_REG:
			st[sp++] = kinst_regs_prog(c->regs, in->arg);
			break;
		case KINST_OP_CTX:
			st[sp++] = ctx_item(c, in->arg);
			break;
		case KINST_OP_LOAD:
			if (kinst_prog_load_mem(st[sp - 1], in->arg,
			    &st[sp - 1]) != 0)
				return (KINST_PROG_FAULT);
			break;
		case KINST_OP_LOADC:
			if (r.poison != 0 || kinst_prog_load_mem(st[sp - 1],
			    in->arg, &st[sp - 1]) != 0) {
				st[sp - 1] = 0;
				if (r.poison == 0)
					r.poison = KINST_SECF_DEREF;
			}
			break;
		case KINST_OP_MEM:
		case KINST_OP_STR:
		case KINST_OP_VAL:
			sp--;
			run_capture(p, pc, st[sp], &r, caps);
			break;
		case KINST_OP_TS_PUSH:
			sp -= 1u + in->arg;	/* frame, then the words */
			run_ts_push(c, in, &st[sp], &r);
			break;
		case KINST_OP_TS_GET:
			if (!run_ts_get(c, in, &st[sp - 1], &r))
				return (KINST_PROG_NOSTATE);
			break;
		case KINST_OP_LNOT:
			st[sp - 1] = st[sp - 1] == 0;
			break;
		case KINST_OP_NEG:
			st[sp - 1] = -st[sp - 1];
			break;
		case KINST_OP_BNOT:
			st[sp - 1] = ~st[sp - 1];
			break;
		case KINST_OP_JA:
			pc += in->off;
			break;
		case KINST_OP_JZ:
			if (st[--sp] == 0)
				pc += in->off;
			break;
		case KINST_OP_JNZ:
			if (st[--sp] != 0)
				pc += in->off;
			break;
		case KINST_OP_KEY:
		case KINST_OP_VALUE:
			sp--;
			kinst_agg_op(c->out, in->op, in->arg, st[sp]);
			break;
		case KINST_OP_RET:
			*value = st[--sp];
			return (*value != 0 ? KINST_PROG_TRUE :
			    KINST_PROG_FALSE);
		default:	/* the binary operators */
			sp--;
			st[sp - 1] = binop(in->op, st[sp - 1], st[sp]);
			break;
		}
	}
	return (KINST_PROG_FALSE);	/* not reached: the verifier ends paths in RET */
}

/* Read a string at addr, page by page, up to a NUL or max bytes. */
static int
cap_read_str(uint64_t addr, uint8_t *buf, uint32_t max, uint32_t *n,
    bool *truncated)
{
	uint32_t got, chunk, i;
	uint64_t a;

	*n = 0;
	*truncated = false;
	for (got = 0; got < max; got += chunk) {
		a = addr + got;
		chunk = KINST_CAP_PAGE - (uint32_t)(a & (KINST_CAP_PAGE - 1));
		if (chunk > max - got)
			chunk = max - got;
		if (kinst_prog_read(a, buf + got, chunk) != 0)
			return (-1);
		for (i = 0; i < chunk; i++)
			if (buf[got + i] == 0) {
				*n = got + i;
				return (0);
			}
	}
	*n = max;
	*truncated = true;
	return (0);
}

/* Read len bytes at addr, page by page. */
static int
cap_read_mem(uint64_t addr, uint8_t *buf, uint32_t len)
{
	uint32_t got, chunk;
	uint64_t a;

	for (got = 0; got < len; got += chunk) {
		a = addr + got;
		chunk = KINST_CAP_PAGE - (uint32_t)(a & (KINST_CAP_PAGE - 1));
		if (chunk > len - got)
			chunk = len - got;
		if (kinst_prog_read(a, buf + got, chunk) != 0)
			return (-1);
	}
	return (0);
}

uint32_t
kinst_cap_section(const struct kinst_cap_req *q, void *sec)
{
	struct kinst_rec_sec *h = sec;
	struct kinst_rec_cap *cap = (struct kinst_rec_cap *)(h + 1);
	uint8_t *bytes = (uint8_t *)(cap + 1);
	uint32_t n, padded, i;
	uint16_t flags;
	bool truncated;

	flags = q->flags & (KINST_SECF_DEREF | KINST_SECF_NOSTATE);
	n = 0;
	if (flags == 0) {
		if (q->op == KINST_OP_VAL) {
			for (i = 0; i < 8; i++)
				bytes[i] = (uint8_t)(q->addr >> (8 * i));
			n = 8;
		} else if (q->op == KINST_OP_STR) {
			if (cap_read_str(q->addr, bytes, q->len, &n,
			    &truncated) != 0) {
				flags = KINST_SECF_FAULT;
				n = 0;
			} else if (truncated)
				flags = KINST_SECF_TRUNCATED;
		} else if (cap_read_mem(q->addr, bytes, q->len) != 0)
			flags = KINST_SECF_FAULT;
		else
			n = q->len;
	}
	padded = (n + 7u) & ~7u;
	for (i = n; i < padded; i++)
		bytes[i] = 0;	/* never leak an earlier record's bytes */
	h->type = q->op == KINST_OP_STR ? KINST_SEC_STR :
	    q->op == KINST_OP_VAL ? KINST_SEC_VAL : KINST_SEC_MEM;
	h->flags = flags;
	h->len = (uint32_t)sizeof(*cap) + n;
	cap->addr = (flags & (KINST_SECF_DEREF | KINST_SECF_NOSTATE)) != 0 ||
	    q->op == KINST_OP_VAL ? 0 : q->addr;
	cap->index = q->index;
	cap->size = n;
	return ((uint32_t)(sizeof(*h) + sizeof(*cap)) + padded);
}

bool
kinst_prog_pass(const struct kinst_prog *p, struct kinst_session *s,
    uint32_t cpu, int32_t pid, int32_t tid, const char *comm,
    const struct kinst_regs *regs, struct kinst_cap_set *caps,
    struct kinst_tstate *ts)
{
	struct kinst_prog_ctx c KINST_NOINIT;	/* every member set below */
	struct kinst_prog_cpu_stats *ps;
	uint64_t v;
	int r;

	c.regs = regs;
	c.pid = pid;
	c.tid = tid;
	c.cpu = cpu;
	c.comm = comm;
	c.out = NULL;
	c.ts = ts;
	r = kinst_prog_run_caps(p, &c, &v, caps);
	if (r == KINST_PROG_TRUE)
		return (true);
	/* Set before any probe with a program was armed (kinst_progctl.c). */
	ps = &KINST_LOAD_ACQUIRE(&s->pstats)[cpu].st;
	__atomic_fetch_add(&ps->filtered, 1, __ATOMIC_RELAXED);
	if (r == KINST_PROG_FAULT)
		__atomic_fetch_add(&ps->faults, 1, __ATOMIC_RELAXED);
	return (false);
}
