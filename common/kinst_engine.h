/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trap-time entry point and the per-open-file session.
 *
 * kinst_engine_hit() is called by the shim's #BP hook with the interrupted
 * register file, rip normalized to the address of the int3 byte.  It looks
 * the address up, records a snapshot (regs as the instruction would have seen
 * them) into the owning session's ring for this CPU, then either points rip
 * at the probe's trampoline (KINST_HIT_REDIRECT) or emulates the instruction
 * (KINST_HIT_EMULATED).  On KINST_HIT_NOT_OURS regs are untouched and the
 * shim passes the trap on.
 */
#ifndef KINST_ENGINE_H
#define KINST_ENGINE_H

#include "kinst_abi.h"
#include "kinst_agg.h"
#include "kinst_isa.h"
#include "kinst_probe.h"
#include "kinst_ring.h"

#define	KINST_MAXCPU	1024

/*
 * What one CPU writes at every hit (kinst_engine.cpu[]), alone on its
 * cache line (kinst_types.h): in arrays indexed by CPU, sixteen CPUs'
 * depths shared one line.
 */
struct kinst_engine_cpu {
	uint32_t	depth;		/* in-record depth */
	uint32_t	hdepth;		/* in-handler depth (nesting guard) */
	uint64_t	jhits;		/* hits through a jump (kinst_engine_jhit) */
} KINST_CACHE_ALIGNED;

enum kinst_hit_result {
	KINST_HIT_NOT_OURS = 0,
	KINST_HIT_REDIRECT = 1,
	KINST_HIT_EMULATED = 2,
	KINST_HIT_ERROR = 3,	/* ours, but emulation faulted: regs untouched */
	KINST_HIT_JUMP = 4,	/* kinst_engine_jhit(): recorded, the detour runs the window */
};

/* One CPU's program counters (ABI kinst_prog_cpu_stats), alone on its lines. */
struct kinst_prog_cpu {
	struct kinst_prog_cpu_stats st;
} KINST_CACHE_ALIGNED;

/* One per open device file: its rings (one per CPU) and its filters. */
struct kinst_session {
	struct kinst_ring *rings;	/* [ncpus], set up by the shim */
	struct kinst_pcpu_count *hits;	/* [ncpus] hits of this session's probes, per CPU */
	uint32_t	ncpus;
	int32_t		filter_pid;	/* record only this pid (-1: all) */
	int32_t		filter_cpu;	/* record only this CPU (-1: all) */
	int32_t		exclude_pid;	/* never record this pid (-1: none) */
	/*
	 * Wake a waiting reader once the ring written holds this many bytes
	 * (KINST_IOC_WAKE; at most half the ring counts; 0: every record).
	 */
	uint32_t	wake_bytes;
	void		*os_priv;	/* the shim's */
	/*
	 * [ncpus], allocated at the first KINST_IOC_PROG_LOAD
	 * (kinst_progctl.c); each CPU's on lines of its own
	 */
	struct kinst_prog_cpu *pstats;
	/* set up by KINST_IOC_AGG_SETUP (kinst_aggctl.c), or NULL */
	struct kinst_agg *agg;
	/*
	 * [ncpus * KINST_CAP_REC_MAX / 8]: where a hit with captures builds
	 * its record, used only at record depth 1 on its CPU; allocated at
	 * the first KINST_IOC_PROG_LOAD of a program with captures.
	 */
	uint64_t	*capbuf;
	/* set up by KINST_IOC_TS_SETUP (kinst_tstate.h), or NULL */
	struct kinst_tstate *ts;
};

/*
 * The fixed hit record of a hit of p on cpu, but comm: header (size: the
 * fixed record alone), ids, the timestamp, the thread, the registers (their
 * padding zeroed: never the caller's stack).  Trap context.
 */
static inline void
kinst_hit_fill(struct kinst_hit_record *rec, const struct kinst_probe *p,
    uint32_t cpu, uint64_t timestamp_ns, int32_t pid, int32_t tid,
    const struct kinst_regs *regs)
{

	rec->hdr.size = sizeof(*rec);
	rec->hdr.type = KINST_REC_HIT;
	rec->hdr.flags = 0;
	rec->cpu = cpu;
	rec->probe_id = p->id;
	rec->timestamp_ns = timestamp_ns;
	rec->addr = p->addr;
	rec->pid = pid;
	rec->tid = tid;
	kinst_regs_record(&rec->regs, regs);
}

/*
 * After a record: is the ring at the session's watermark?  Measured after
 * the put, so the record that reaches it wakes the reader.
 */
static inline bool
kinst_session_wake_due(const struct kinst_ring *ring,
    const struct kinst_session *s)
{

	return (kinst_ring_reached(ring, KINST_LOAD_RELAXED(&s->wake_bytes)));
}

struct kinst_engine {
	struct kinst_ptable table;
	uint32_t	ncpus;
	uint32_t	manage_if;	/* kernels: 1 (run trampolines with IF clear); user harness: 0 */
	uint64_t	tripped;	/* hits beyond KINST_NEST_MAX, all probes */
	uint64_t	native_runs;	/* emulations that failed and ran the
					   probe's native image instead */
	struct kinst_engine_cpu cpu[KINST_MAXCPU];	/* this CPU's only */
};

/*
 * Nesting guard.  A hit while this CPU is already KINST_NEST_MAX hits deep
 * in the handler (a probe on something the handler calls that the
 * exclusions missed, re-entering it) is executed quietly: no record, no
 * call out of the engine but the emulator's memory access, the probe
 * marked tripped (p->tripped) and counted (e->tripped); the control path
 * disarms tripped probes later (kinst_ctl_reap_tripped).  Each nested level
 * then returns, so the recursion is bounded.  A probe on a function the #BP
 * path runs BEFORE the handler (the notifier chain's rcu_read_lock) recurses
 * without ever reaching it: only exclusion prevents that.
 */
#define	KINST_NEST_MAX	3

void	kinst_engine_init(struct kinst_engine *e, uint32_t ncpus, bool manage_if);
void	kinst_session_init(struct kinst_session *s, struct kinst_ring *rings,
	    struct kinst_pcpu_count *hits, uint32_t ncpus);

/*
 * Arm time: decode and classify the instruction at addr (bytes, avail
 * readable), fill p, and, for an out-of-line instruction, build its
 * trampoline image for address tramp into img (for an emulated indirect
 * call or jump through memory, its native image: p->native); the
 * instruction set's part is kinst_isa_prepare (kinst_isa.h).  Returns
 * KINST_R_NONE when traceable, or the reason it is not (p->cls says so
 * too).
 */
int	kinst_probe_prepare(struct kinst_probe *p, const uint8_t *bytes,
	    size_t avail, uint64_t addr, uint64_t tramp,
	    uint8_t img[KINST_TRAMP_SIZE]);

/*
 * Trap time.  osctx is the shim's own view of the trap (Linux: struct
 * pt_regs *, FreeBSD: struct trapframe *), handed to kinst_os_stack() for
 * KINST_ARM_STACK probes; kinst_engine_hit() passes NULL.
 */
int	kinst_engine_hit(struct kinst_engine *e, struct kinst_regs *regs);
int	kinst_engine_hit_ctx(struct kinst_engine *e, struct kinst_regs *regs,
	    void *osctx);

/*
 * The trap hook's core, the same for every shim: *trap_sp (the shim's
 * per-CPU record of the interrupted stack pointer, which its
 * kinst_os_write_stack() bounds emulated pushes by) holds regs' %rsp while
 * the engine runs and its old value again afterwards (a nested trap on the
 * same CPU saves and restores it too); a hit whose emulation faulted is
 * counted in *faults.  True when the trap was kinst's and handled: the
 * shim writes regs back into its frame and resumes.  False: not kinst's,
 * or a fault (the shim hands the trap on with its frame unchanged).
 */
bool	kinst_engine_trap(struct kinst_engine *e, struct kinst_regs *regs,
	    void *osctx, uint64_t *trap_sp, uint64_t *faults);

/*
 * A jump-optimized probe's hit, from its detour's handler
 * (kinst_detour_build, kinst_isa.h): the same counting, nesting guard and
 * record as a trap at regs' pc, nothing executed (the detour runs the
 * window); regs is not changed.  KINST_HIT_JUMP, or KINST_HIT_NOT_OURS.
 * Same context rules as trap time: the shim's handler provides them.
 */
int	kinst_engine_jhit(struct kinst_engine *e, struct kinst_regs *regs,
	    void *osctx);

#endif /* !KINST_ENGINE_H */
