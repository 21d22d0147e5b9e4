/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The OS-independent control path: what every kernel shim does between an
 * ioctl and the trap handler.  Arming, disarming, per-file probe ownership,
 * probe ids, LIST, STATS and TEXT are decided here, once, and reach the
 * kernel only through the control-path hooks declared in kinst_os.h.
 *
 * Arm sequence (kinst_ctl_arm), all under the control lock:
 *
 *   resolve the function (kinst_os_func_resolve; a module reference is held
 *   while any probe of the request lives) -> function-level exclusions
 *   (kinst_os_func_check) -> take the text lock -> read the live text and
 *   put back the original bytes of kinst's own breakpoints -> decode from
 *   the first byte to find instruction boundaries (never trusting the
 *   caller) -> allocate ONE trampoline block for the whole request
 *   (KINST_TRAMP_SIZE bytes per candidate instruction) -> per instruction:
 *   address checks (kinst_os_insn_check), kinst_probe_prepare(), image
 *   written into the still-writable block -> seal the block read-only and
 *   executable -> insert every probe into the engine's table -> write every
 *   int3 -> kinst_os_text_sync() -> write every int3 again ->
 *   kinst_os_text_sync() -> drop the text lock.
 *
 *   kinst_control.c has one step per stage, in this order: ctl_arm_validate
 *   (before the lock), ctl_arm_resolve, ctl_arm_read, ctl_arm_candidates
 *   (a KINST_ARM_CHECK request ends there, in ctl_arm_check: the verdict,
 *   nothing armed), ctl_arm_group, ctl_arm_prepare (and the seal),
 *   ctl_arm_insert (new sites into the table), ctl_arm_publish (the
 *   int3s of new sites, the subscribers linked), ctl_arm_queue (the group
 *   joins the session and, without KINST_ARM_NOOPT, the optimizer's queue);
 *   ctl_arm_done drops the locks and frees what the request still holds.
 *
 * Disarm sequence (kinst_ctl_disarm, kinst_ctl_session_fini):
 *
 *   take the text lock -> write back the original first byte of every
 *   site the session's probes leave empty (none: no write, no sync) ->
 *   kinst_os_text_sync() -> write them back again -> kinst_os_text_sync() ->
 *   remove those sites from the table, unlink the session's subscribers
 *   from the sites others still hold -> drop the text lock ->
 *   kinst_os_quiesce() -> (a freed site had a detour: kinst_os_sync_tasks())
 *   -> free the empty sites (and the blocks they were the last of) and each
 *   request (group) whose last probe went: its module reference, itself.
 *
 *   The second store and synchronization (ctl_publish() in kinst_control.c
 *   says why) are for emulators that translate code: without them QEMU's
 *   multi-threaded TCG can keep executing a removed int3 forever.
 *
 *   Restoring the byte and synchronizing BEFORE removing from the table
 *   matters: a CPU that trapped on the old int3 is still inside the trap
 *   handler (interrupts off) and therefore holds up the synchronization, so
 *   it finds its probe in the table; no CPU can trap on the int3 after the
 *   synchronization.  The quiescence after the removal then proves that no
 *   CPU still looks at the probe or runs in its trampoline.
 *
 * Trampoline batching: one block per ARM request (a whole function with
 * KINST_ARM_ALL), the new site of probe i at block + i * KINST_TRAMP_SIZE
 * (a probe that shares another session's site uses no slot).  The block is
 * freed with the last site built in it (refcount = live sites), which may
 * outlive the request.
 *
 * Locking: kinst_os_ctl_lock() serializes every function here (a sleepable
 * mutex/sx lock); the text lock (kinst_os_text_lock) nests inside it.  None
 * of these functions may be called from trap context.
 */
#ifndef KINST_CONTROL_H
#define KINST_CONTROL_H

#include "kinst_abi.h"
#include "kinst_engine.h"

/* Control-path results; each shim maps them to its errno values. */
enum kinst_ctl_err {
	KINST_E_OK = 0,
	KINST_E_INVAL,		/* EINVAL: malformed request, offset not an instruction boundary / outside the function */
	KINST_E_NOENT,		/* ENOENT: no such function, module or probe id */
	KINST_E_REFUSED,	/* EOPNOTSUPP: refused, refuse_reason says why */
	KINST_E_EXIST,		/* EEXIST: this session already has a probe at that address */
	KINST_E_NOSPC,		/* ENOSPC: KINST_MAX_PROBES sites or KINST_MAX_SUBSCRIBERS probes reached */
	KINST_E_NOMEM,		/* ENOMEM */
	KINST_E_FAULT,		/* EFAULT: kernel text could not be read */
	KINST_E_TOOBIG,		/* EFBIG: function larger than KINST_FUNC_MAX */
};

/* Largest function kinst decodes (and TEXT returns). */
#define	KINST_FUNC_MAX		(1u << 20)

/* A resolved function (kinst_os_func_resolve). */
struct kinst_func {
	uint64_t	addr;			/* first byte */
	uint64_t	size;			/* bytes, up to the next symbol */
	char		module[KINST_MODNAME_MAX];	/* "kernel" or the module's name */
	void		*os_ref;		/* the shim's (e.g. a module reference) */
};

struct kinst_group;

/*
 * A trampoline or detour block (kinst_os_tramp_alloc), shared by the sites
 * built in it: freed when the last of them is.
 */
struct kinst_xblock {
	void		*mem;		/* writable, then sealed */
	uint64_t	addr;		/* its execution address */
	size_t		size;
	uint32_t	refs;		/* sites using it */
	uint32_t	_xpad;
};

/* Jump optimization of one site (docs/engine.md, "Installation"). */
enum kinst_jstate {
	KINST_JS_NONE = 0,	/* an int3 site */
	KINST_JS_BUILT,		/* detour built and sealed; int3 path unchanged */
	KINST_JS_RESUME,	/* int3 in; its hits resume in the detour (p.jresume) */
	KINST_JS_JUMP,		/* the jmp is in */
};

/*
 * Sharing.  One instruction is patched once, however many sessions trace
 * it: the site (struct kinst_csite) is what the engine's table holds and
 * what runs the instruction; each session's interest in it is a
 * subscriber (struct kinst_cprobe, in that session's group), chained on
 * the site's p.next and walked by the engine without a lock.  Arming an
 * instruction that has a site adds a subscriber (nothing is written to
 * the text); disarming removes only that session's subscriber (unlinked,
 * then freed after kinst_os_quiesce()); the last one restores the text
 * and frees the site, in the disarm sequence above.  At most
 * KINST_SITE_SUBS subscribers per site (KINST_R_SHARED_FULL past it); a
 * session has at most one per site (KINST_E_EXIST).
 *
 * Jump optimization is the site's: a site is optimized when a group of
 * one of its subscribers armed without KINST_ARM_NOOPT is, unless a
 * KINST_ARM_NOOPT subscriber holds it (nnoopt): such a subscriber turns a
 * jump site back into an int3 site when it joins, and the site may be
 * optimized again once the last of them has left and it never had a
 * detour (a site keeps its first detour until it is freed).
 */
#define	KINST_SITE_SUBS	16
/* Subscribers, all sessions together (sites: KINST_MAX_PROBES, the table). */
#define	KINST_MAX_SUBSCRIBERS	(4 * KINST_MAX_PROBES)

/* One patched instruction (see "Sharing"). */
struct kinst_csite {
	struct kinst_probe p;		/* first: what the table holds; session
					   NULL, subscribers chained on p.next */
	struct kinst_csite *next;	/* kinst_ctl's list of sites */
	struct kinst_csite **prevp;
	struct kinst_xblock *tblock;	/* its trampoline's block */
	struct kinst_xblock *dblock;	/* its detour's block, or NULL */
	uint32_t	nsubs;		/* subscribers (sessions) */
	uint32_t	nnoopt;		/* of them armed with KINST_ARM_NOOPT */
	uint8_t		mark;		/* selected by the operation under way */
	uint8_t		jstate;		/* KINST_JS_* */
	uint8_t		jlen;		/* the window's length (jstate != NONE) */
	uint8_t		jorig[5];	/* the window's first 5 original bytes */
	uint64_t	jdetour;	/* its detour's address (dblock != NULL) */
	uint64_t	jwindow;	/* ... of the relocated window in it */
};

/* One session's probe: a subscriber of a site. */
struct kinst_cprobe {
	struct kinst_probe p;		/* first: the subscriber the engine walks */
	struct kinst_group *group;
	struct kinst_csite *site;	/* while live */
	uint32_t	sessions_max;	/* most subscribers its site had while
					   this one was live */
	uint8_t		live;		/* subscribed */
	uint8_t		_cpad[3];
};

/* One ARM request: its function and its probes. */
struct kinst_group {
	struct kinst_group *next;	/* the session's list */
	struct kinst_func func;
	char		function[KINST_NAME_MAX];
	struct kinst_xblock *tblock;	/* while arming: the block new sites use */
	size_t		alloc_size;	/* of this structure */
	uint32_t	nprobes;	/* used entries of probes[] */
	uint32_t	nlive;		/* armed probes */
	struct kinst_group *opt_next;	/* kinst_ctl's list of groups to optimize */
	uint8_t		opt_queued;	/* on that list */
	uint8_t		noopt;		/* armed with KINST_ARM_NOOPT */
	uint8_t		_gpad[2];
	uint32_t	holder_row;	/* kinst_ctl_holders' scratch */
	struct kinst_cprobe probes[];
};

/* The control-side session: embeds the engine's one. */
struct kinst_csession {
	struct kinst_session s;		/* first */
	int32_t		pid;		/* the opener (-1: unknown) */
	char		comm[KINST_COMM_LEN];	/* its command name */
	struct kinst_group *groups;
	uint64_t	refusals;	/* instructions / requests refused */
	uint32_t	nprobes;	/* armed */
	uint32_t	nprogs;		/* programs loaded (kinst_progctl.c) */
	struct kinst_prog *progs[KINST_PROG_MAX];	/* id = index + 1 */
};

/*
 * Hit counters.  Every site and subscriber counts its hits per CPU
 * (kinst_probe.hitc) in a chunk of counters that kinst_hitctl.c hands
 * out: a probe that many CPUs hit at once writes no line that another
 * CPU writes.  A probe that gets no counter (no memory) counts in its
 * shared kinst_probe.hits instead; LIST and SITES sum both.
 */
#define	KINST_HITC_CHUNKS	\
	((KINST_MAX_PROBES + KINST_MAX_SUBSCRIBERS + KINST_HITC_PER - 1) / \
	KINST_HITC_PER)

struct kinst_hitc_chunk {
	uint64_t	*mem;		/* ncpus rows of KINST_HITC_PER words */
	uint32_t	used;		/* counters handed out */
	uint32_t	_pad;
	uint64_t	map[KINST_HITC_PER / 64];	/* which */
};

struct kinst_ctl {
	struct kinst_engine *engine;
	uint32_t	nprobes;	/* armed (subscribers), all sessions */
	uint32_t	nsites;		/* patched instructions (the table's) */
	struct kinst_csite *sites;	/* all of them */
	uint32_t	next_id;
	/*
	 * Jump optimization: the shim's detour handler, void (*)(void *arg,
	 * struct kinst_regs *), and its argument (0: the shim installs no
	 * jump probes); the groups armed without KINST_ARM_NOOPT that wait
	 * for kinst_ctl_optimize(); probes whose jump is in, all sessions.
	 */
	uint64_t	jhandler;
	uint64_t	jarg;
	struct kinst_group *opt_queue;
	uint32_t	njump;		/* sites whose jump is in */
	uint32_t	jsingle;	/* only windows of one instruction (FreeBSD) */
	uint32_t	jdflags;	/* the detours' KINST_DETOUR_* flags */
	struct kinst_hitc_chunk *hitc[KINST_HITC_CHUNKS];
};

/*
 * A zeroed per-CPU hit counter (the address of CPU 0's word), or NULL (no
 * memory: the probe counts in its hits); and back, once no CPU can reach
 * the probe that had it (NULL: nothing).  Control lock held.
 */
uint64_t *kinst_hitc_get(struct kinst_ctl *c);
void	kinst_hitc_put(struct kinst_ctl *c, uint64_t *h);

void	kinst_ctl_init(struct kinst_ctl *c, struct kinst_engine *e);
/*
 * Jump optimization (kinst_joptctl.c).  The shim enables it once, before the
 * first session, with its detour handler (which must run the engine's
 * kinst_engine_jhit() in its own per-CPU section).  kinst_ctl_arm() queues
 * the groups it arms without KINST_ARM_NOOPT and returns true from
 * kinst_ctl_opt_pending(); the shim then calls kinst_ctl_optimize() from a
 * context that may sleep for a long time (a worker), which installs the
 * jumps of every queued group's probes that qualify.  Returns the number
 * of jumps it installed.  With single_insn, only probes whose instruction
 * fills the window alone (5 bytes or more) are optimized: no thread can be
 * inside such a window, for a shim that cannot wait for tasks.
 * detour_flags: every detour's kinst_detour_spec flags (KINST_DETOUR_*,
 * what the CPU has).
 */
void	kinst_ctl_jump_enable(struct kinst_ctl *c, uint64_t handler,
	    uint64_t arg, bool single_insn, uint32_t detour_flags);
bool	kinst_ctl_opt_pending(struct kinst_ctl *c);
uint32_t kinst_ctl_optimize(struct kinst_ctl *c);

/* A new session; the caller has set up cs->s (kinst_session_init). */
void	kinst_ctl_session_init(struct kinst_ctl *c, struct kinst_csession *cs);

/*
 * Disarm the session's probes that the nesting guard tripped
 * (kinst_engine.h); returns how many.  LIST and STATS do it first.
 */
uint32_t kinst_ctl_reap_tripped(struct kinst_ctl *c, struct kinst_csession *cs);

/* Disarm and free every probe of the session (close of the file). */
void	kinst_ctl_session_fini(struct kinst_ctl *c, struct kinst_csession *cs);

/*
 * KINST_IOC_ARM.  a has been copied in; its out fields are filled (also
 * refuse_reason on KINST_E_REFUSED).  Input fields are validated here.
 */
int	kinst_ctl_arm(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_arm *a);

/* KINST_IOC_DISARM: one id of the session, or KINST_ALL_PROBES. */
int	kinst_ctl_disarm(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_disarm *d);

/*
 * KINST_IOC_LIST: fill out[0 .. cap-1] (kernel memory); returns the number
 * of probes the session has (may exceed cap).
 */
uint32_t kinst_ctl_list(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_probe_info *out, uint32_t cap);

/*
 * KINST_IOC_STATS: fill out[0 .. min(cap, ncpus)-1] and the scalar fields
 * of st (ncpus, refusals, nprobes).
 */
void	kinst_ctl_stats(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_cpu_stats *out, uint32_t cap, struct kinst_stats *st);

/*
 * KINST_IOC_TEXT: copy up to cap bytes of the function's live text into buf
 * (kernel memory) with kinst's own int3s replaced by the original bytes.
 * t->module/function are validated here; t->size and t->addr are set.
 */
/*
 * KINST_IOC_FILTER: validate (pid, cpu, exclude_pid >= -1; cpu below the
 * session's CPU count; flags 0) and apply.  KINST_E_INVAL otherwise.
 */
int	kinst_ctl_filter(struct kinst_ctl *c, struct kinst_csession *cs,
	    const struct kinst_filter *f);

int	kinst_ctl_text(struct kinst_ctl *c, struct kinst_text *t, uint8_t *buf,
	    uint32_t cap);

/* One patched instruction, for debugfs and tests (kinst_ctl_sites). */
struct kinst_site_info {
	uint64_t	addr;
	uint64_t	hits;		/* every hit of the instruction */
	uint32_t	offset;
	uint32_t	sessions;	/* subscribers (one per session) */
	uint32_t	jump;		/* 1: jump-optimized now */
	uint32_t	treatment;	/* enum kinst_treatment */
	char		module[KINST_MODNAME_MAX];
	char		function[KINST_NAME_MAX];	/* a subscriber's name for it */
};

/* Fill out[0 .. cap-1] (kernel memory); returns the number of sites. */
uint32_t kinst_ctl_sites(struct kinst_ctl *c, struct kinst_site_info *out,
	    uint32_t cap);

/*
 * A session that holds a module (not the kernel) through its probes: the
 * module cannot be unloaded until it disarms them (kinst_ctl_holders).
 */
struct kinst_holder_info {
	char		module[KINST_MODNAME_MAX];
	char		comm[KINST_COMM_LEN];
	int32_t		pid;
	uint32_t	probes;		/* its probes in the module */
};

/*
 * Fill out[0 .. cap-1] (kernel memory) with every (session, module) pair,
 * module NULL, or the sessions holding that module; returns how many
 * pairs there are (may exceed cap: the rows past it are counted, not
 * filled).
 */
uint32_t kinst_ctl_holders(struct kinst_ctl *c, const char *module,
	    struct kinst_holder_info *out, uint32_t cap);

/*
 * Per-thread state (kinst_tstate.c).  KINST_IOC_TS_SETUP: validate and
 * preallocate the session's table, once (KINST_E_EXIST after); before
 * any probe whose program uses it is armed.  KINST_IOC_TS_STATS: its
 * counters (all 0, nslots too, when none was set up).
 */
int	kinst_ctl_ts_setup(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_ts_setup *su);
int	kinst_ctl_ts_stats(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_ts_stats *st);

/*
 * Probe programs (kinst_progctl.c).  KINST_IOC_PROG_LOAD: the shim copies
 * in pl and, when 1 <= pl->ninsns <= KINST_PROG_MAX_INSNS, the
 * instructions (code; NULL otherwise); the program is verified and kept
 * until the session ends.  KINST_E_INVAL with pl->verdict when refused.
 */
int	kinst_ctl_prog_load(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_prog_load *pl, const struct kinst_pinsn *code);

/* KINST_IOC_PROG_STATS: fill out[0 .. min(cap, ncpus)-1], ps->ncpus. */
void	kinst_ctl_prog_stats(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_prog_cpu_stats *out, uint32_t cap,
	    struct kinst_prog_stats *ps);

/* Control lock held: the session's program id, or NULL. */
const struct kinst_prog *kinst_ctl_prog_get(struct kinst_csession *cs,
	    uint32_t id);

/* After every probe of the session is disarmed: free its programs. */
void	kinst_ctl_prog_fini(struct kinst_csession *cs);

/*
 * Aggregation (kinst_aggctl.c, kinst_agg.h).  KINST_IOC_AGG_SETUP: validate
 * every field, preallocate the tables; once per session (KINST_E_EXIST).
 */
int	kinst_ctl_agg_setup(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_agg_setup *su);

/* The session's entries per CPU and entry size, for the shim's buffer. */
int	kinst_ctl_agg_geom(struct kinst_csession *cs, uint32_t *nslots,
	    uint32_t *entry_size);

/* KINST_IOC_AGG_READ: up to cap entries of rd->cpu into out (kernel memory). */
int	kinst_ctl_agg_read(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_agg_read *rd, uint8_t *out, uint32_t cap);

/* KINST_AGGF_STACK: stacks per CPU, for the shim's buffer (else INVAL). */
int	kinst_ctl_agg_stack_geom(struct kinst_csession *cs, uint32_t *nstacks);

/* KINST_IOC_AGG_STACKS: up to cap stacks of rd->cpu into out (kernel memory). */
int	kinst_ctl_agg_stacks(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_agg_read *rd, struct kinst_agg_stack *out,
	    uint32_t cap);

/* KINST_IOC_AGG_CLEAR: empty every table, stacks too (waits for in-flight hits). */
int	kinst_ctl_agg_clear(struct kinst_ctl *c, struct kinst_csession *cs,
	    const struct kinst_agg_clear *cl);

/* KINST_IOC_AGG_STATS: fill out[0 .. min(cap, ncpus)-1], st->ncpus/nslots. */
int	kinst_ctl_agg_stats(struct kinst_ctl *c, struct kinst_csession *cs,
	    struct kinst_agg_cpu_stats *out, uint32_t cap,
	    struct kinst_agg_stats *st);

/* After every probe of the session is disarmed: free the aggregation. */
void	kinst_ctl_agg_fini(struct kinst_csession *cs);

/*
 * Is name on the list?  An entry matches the whole name, or, if it ends in
 * '*', any name with that prefix.  A compiler suffix (".isra.0",
 * ".constprop.0", ".part.0", ".cold") is ignored.
 */
bool	kinst_name_listed(const char *name, const char *const *list, size_t n);

/* Is the string NUL-terminated within its size-byte array? */
bool	kinst_str_ok(const char *s, size_t size);

/* Errno name for a result, for logs and the CLI ("EINVAL", ...). */
const char *kinst_ctl_err_name(int err);

#endif /* !KINST_CONTROL_H */
