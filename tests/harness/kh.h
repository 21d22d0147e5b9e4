/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The user-space breakpoint harness: shared declarations.
 *
 * The harness arms real int3 breakpoints in its own text and lets the
 * portable engine (common/) handle them from a SIGTRAP handler, exactly the
 * code path the kernel modules use.  Ground truth comes from single-stepping
 * the same function on the same register file (RFLAGS.TF).
 */
#ifndef KH_H
#define KH_H

#include <stdint.h>

#define	KH_NARGS	6
#define	KH_MAXIN	16

/* Corpus function needs (kh_fn.flags). */
#define	KH_NEED_AVX2	0x01u
#define	KH_NEED_AVX512	0x02u

/*
 * Every memory effect of a corpus function goes here (or to its own stack).
 * The harness refills it with a fixed pattern before every run and compares
 * it after.  Offsets are used by corpus_asm.S: keep in sync (KH_S_*).
 */
struct kh_scratch {
	uint64_t	q[64];		/* 0x000 */
	uint32_t	d[64];		/* 0x200 */
	uint8_t		b[512];		/* 0x300 */
	double		f[32];		/* 0x500 */
	float		v[64];		/* 0x600 */
	float		w[64];		/* 0x700 */
	char		s[256];		/* 0x800 */
	uint64_t	(*fp)(uint64_t, uint64_t);	/* 0x900 */
	uint64_t	pad[31];
	uint8_t		big[2048];	/* 0xa00: asm string and vector stores */
} __attribute__((aligned(64)));

extern struct kh_scratch kh_scratch;

/* One corpus function and its input vectors. */
struct kh_fn {
	const char	*name;		/* symbol name (also the bounds lookup key) */
	void		*fn;
	uint32_t	flags;		/* KH_NEED_* */
	uint32_t	ninputs;
	uint64_t	in[KH_MAXIN][KH_NARGS];
};

/* Corpus tables, NULL-name terminated. */
extern const struct kh_fn kh_corpus_o0[];
extern const struct kh_fn kh_corpus_o2[];
extern const struct kh_fn kh_corpus_o2np[];
extern const struct kh_fn kh_corpus_avx[];
extern const struct kh_fn kh_corpus_asm[];

/* kh_call.S: call the function in kh_in_fn with the register file in kh_in_regs. */
extern uint64_t	kh_in_regs[16];		/* x86 encoding order; [4] (rsp) unused */
extern uint64_t	kh_in_flags;		/* RFLAGS loaded by popf before the call */
extern uint64_t	kh_in_rsp;		/* stack pointer at the call instruction */
extern uint64_t	kh_in_fn;
extern uint64_t	kh_out_regs[16];	/* register file right after the return */
extern uint64_t	kh_out_flags;
void	kh_invoke(void);
extern char	kh_invoke_ret[];	/* the return address of that call */

/*
 * A fake clock (latency_test): while kh_fake_clock is set, kinst_os_now_ns()
 * returns kh_fake_now, which the SIGTRAP handler advances by
 * kh_clock_weight(rip) at every traced hit, before the engine runs: the
 * time between two hits is the sum of the weights of the hits after the
 * first up to the second, which the test computes from the single-step run.
 */
extern int	kh_fake_clock;
extern uint64_t	kh_fake_now;
static inline uint64_t
kh_clock_weight(uint64_t rip)
{
	return (1 + (rip * 0x9e3779b97f4a7c15ull >> 54));
}

/* User-space OS interface (kh_os.c): cache pid/tid/comm once. */
void	kh_os_init(void);
extern __thread uint32_t kh_os_cpu_index;	/* kinst_os_cpu() of this thread */
extern uint64_t	kh_read_lo, kh_read_hi;	/* hi != 0: kinst_os_read only in [lo, hi) */

#endif /* !KH_H */
