/* SPDX-License-Identifier: BSD-2-Clause */
/* The harness driver: setup, ground truth, per-boundary and whole-function runs. */
#ifndef KH_CORE_H
#define KH_CORE_H

#include <stdbool.h>
#include <stdint.h>

#include "kh.h"
#include "kinst_abi.h"
#include "x86/kinst_classify.h"

struct kh_stats {
	uint64_t	functions;
	uint64_t	skipped;		/* functions the CPU cannot run */
	uint64_t	boundaries;		/* instruction boundaries tried */
	uint64_t	reached;		/* boundaries executed by some input */
	uint64_t	ool;			/* traceable out of line, verbatim */
	uint64_t	ool_riprel;		/* out of line, displacement rewritten */
	uint64_t	emul[KINST_EM_COUNT];	/* emulated, by kind */
	uint64_t	refused[KINST_R_COUNT + 8];	/* refused, by reason */
	uint64_t	runs;			/* traced runs */
	uint64_t	records;		/* hit records compared */
	uint64_t	traced;			/* boundaries with a hit record compared */
	uint64_t	sti_redirects;		/* hits sent to the sti trampoline variant */
	uint64_t	sti_emulated;		/* its sti executed by the SIGSEGV stand-in */
	uint64_t	class_changes;		/* classification differs from kh_expected.c */
	uint64_t	divergences;
	uint64_t	harness_errors;		/* the harness itself could not decide */
};

/* One-time setup (signals, stacks, trampoline area, engine).  0 or -1 (with a message). */
int	kh_setup(char *err, size_t errlen);

/* CPU support for a function's needs: NULL if runnable, else why not. */
const char *kh_unsupported(const struct kh_fn *f);

/*
 * Check every function of a NULL-terminated table: each boundary in turn
 * (whole == false) or every boundary at once (whole == true).  Prints one
 * line per function and the first divergences in detail to stdout.
 */
void	kh_check_table(const struct kh_fn *tab, bool whole, struct kh_stats *st);

/* Ground truth only: single-step run == untraced run, boundaries agree. */
void	kh_check_ground_truth(const struct kh_fn *tab, struct kh_stats *st);
void	kh_print_env(void);

/* Probe programs (predicate and captures) against the ground truth. */
struct kh_prog_stats {
	uint64_t	runs;
	uint64_t	records, expected;		/* hits recorded / predicate true */
	uint64_t	filtered, expected_filtered;	/* counted / predicate false */
	uint64_t	mem_checked, str_checked;	/* captures compared */
	uint64_t	mismatches;
	uint64_t	tf_tolerated;	/* bytes differing only by a stepped pushf's TF */
};
void	kh_check_programs(const struct kh_fn *tab, struct kh_prog_stats *ps,
	    struct kh_stats *st);

/* Two sessions on every instruction, one leaving mid-run (kh_core.c). */
struct kh_shared_stats {
	uint64_t	runs;
	uint64_t	records_a;	/* session A (records every hit) */
	uint64_t	records_b;	/* session B (predicate, first half) */
	uint64_t	filtered_b;	/* B's hits its predicate refused */
	uint64_t	unsubscribed;	/* hits after B left */
};
void	kh_check_shared(const struct kh_fn *tab, struct kh_shared_stats *ss,
	    struct kh_stats *st);

/* Jump-optimized probes (detours) against the ground truth (kh_core.c). */
struct kh_jump_stats {
	uint64_t	qualified;	/* instructions kinst_jopt_qualify accepts */
	uint64_t	probes;		/* jump probes installed and run */
	uint64_t	not_armed;	/* qualified, but kinst_probe_prepare refused */
	uint64_t	records;	/* records compared, jump installed */
	uint64_t	resume_records;	/* ... int3 in, resumed in the detour */
	uint64_t	window_bytes;	/* relocated window bytes, summed */
};
void	kh_check_jump(const struct kh_fn *tab, struct kh_jump_stats *js,
	    struct kh_stats *st);

/* Jump-optimization qualification against the ground truth (kh_core.c). */
struct kh_jopt_stats {
	uint64_t	insns;			/* instruction starts */
	uint64_t	yes;			/* jump-optimizable */
	uint64_t	target;			/* refused: branch target in window */
	uint64_t	functions_with_target;
	uint64_t	landings;		/* non-fall-through arrivals seen */
	uint64_t	violations;		/* ... inside a jump-optimizable window */
};
void	kh_check_jopt(const struct kh_fn *tab, struct kh_jopt_stats *js,
	    struct kh_stats *st);	/* trampoline/text addresses, folded traps */

/*
 * Harness self-test: make the SIGTRAP handler corrupt what the engine hands
 * back, to prove that such a bug is detected (0 turns it off).
 */
#define	KH_INJ_NONE	0
#define	KH_INJ_REG	1	/* flip a bit of rdx after a redirect */
#define	KH_INJ_FLAGS	2	/* flip CF and ZF after an emulation */
#define	KH_INJ_RIP	3	/* redirect into the trampoline's int3 filler */
#define	KH_INJ_STACK	4	/* rsp off by 8 after an emulation */
void	kh_set_inject(int mode);

/*
 * Trampoline variant: false, the engine's manage_if off (every hit runs the
 * no-sti variant); true, manage_if on as in the kernels: the engine clears
 * IF and enters the variant that ends in sti.  User mode cannot run sti (it
 * raises #GP, SIGSEGV): the SIGSEGV handler stands in for it when it finds
 * an sti byte at the expected place of a sti variant (the relocated
 * instruction and the jump back run natively from the very image the engine
 * built), and every run checks that each sti-variant redirect executed
 * exactly one such sti.
 */
void	kh_set_manage_if(bool on);
/* kinst_os_read refuses all but the corpus's fixed stack (kh_read_lo/hi). */
void	kh_reads_only_stack(bool on);
/* Emulations that failed and ran the probe's native image (the engine's count). */
uint64_t kh_native_runs(void);

/*
 * nthreads threads call fn (input in) directly, calls times each, with
 * every boundary armed: each thread's own ring ("CPU" = thread) must hold
 * the ground-truth sequence of addresses for every call, and every call
 * must return the untraced value.
 */
#define	KH_MT_THREADS	4
void	kh_check_concurrent(const struct kh_fn *fn, int in, uint32_t nthreads,
	    uint32_t calls, struct kh_stats *st);

/* Drops: a hit nested inside the handler; a ring too small for the run. */
void	kh_check_nested(struct kh_stats *st);
void	kh_check_ring_full(struct kh_stats *st);

void	kh_print_stats(const char *title, const struct kh_stats *st);

/*
 * Variables by name (vars_test.cc).  kh_vars_load: fn's boundaries (byte
 * offsets, by linear sweep) and address; 0, or -1 (said, counted).
 * kh_vars_run: input in's single-step ground truth, calling hook for each
 * state in the function as it is reached (in the SIGTRAP handler: the
 * machine is in that state), then one traced run with a probe at each
 * boundary i where arm[i].arm (program arm[i].prog, NULL: none; armed
 * set when the engine took it), over a fresh per-thread state table.  0 with vr
 * filled (valid until the next run), or -1 (a divergence or harness error,
 * said and counted).
 */
struct kinst_regs;
struct kinst_prog;
struct kh_varm {
	const struct kinst_prog	*prog;
	int		arm;
	int		armed;
};
typedef void (*kh_vstep_fn)(void *ctx, uint32_t index,
    const struct kinst_regs *state);
struct kh_vrun {
	const struct kinst_regs	*gt;	/* ground truth states */
	uint32_t	ngt;
	uint32_t	armed;		/* boundaries armed */
	const uint8_t	*recs;		/* the ring's records, in order */
	size_t		nbytes;
	uint64_t	filtered, faults;	/* the programs' counts */
	struct kinst_ts_stats ts;	/* the table's counters */
};
int	kh_vars_load(const struct kh_fn *fn, const uint32_t **offs,
	    uint32_t *nb, uint64_t *start, struct kh_stats *st);
int	kh_vars_run(const struct kh_fn *fn, int in, struct kh_varm *arm,
	    kh_vstep_fn hook, void *ctx, struct kh_vrun *vr,
	    struct kh_stats *st);

/*
 * kh_expected.c: the classification of every corpus function (one line per
 * function, see kh_class_signature), and the compiler the C corpus lines
 * were recorded with.  Changing the classification means changing this
 * table on purpose.
 */
struct kh_expect {
	const char	*fn;
	const char	*sig;
};
extern const struct kh_expect kh_expected[];
extern const char kh_expected_cc[];

#endif /* !KH_CORE_H */
