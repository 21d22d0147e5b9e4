/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Out-of-line execution equivalence: real int3 breakpoints on every
 * instruction boundary of a corpus of our own functions, handled by the
 * portable engine from a SIGTRAP handler, compared with single-step ground
 * truth (see kh_core.c).  Every test case prints one line per function and
 * its totals; any divergence fails it.
 */
#include <atf-c.h>
#include <cpuid.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kh_core.h"

static void
setup_or_fail(void)
{
	char err[256];

	if (kh_setup(err, sizeof(err)) != 0)
		atf_tc_fail("harness setup: %s", err);
}

/*
 * Minimum number of boundaries traced (armed, reached, and at least one hit
 * record there compared with ground truth) per corpus table, both
 * trampoline variants.  The C tables' minimums are ~80% of what gcc 12
 * gives, so that another compiler still passes; the hand-written table's
 * counts are exact in kh_expected.c, its minimum leaves out the AVX-512
 * functions (not every CPU runs them).
 */
#define	KH_MIN_ASM	400
#define	KH_MIN_C_O0	550
#define	KH_MIN_C_O2	420
#define	KH_MIN_C_O2NP	420
#define	KH_MIN_C_AVX2	60
#define	KH_MIN_WHOLE	1900

static void
finish(const char *title, const struct kh_stats *st, uint64_t min_traced,
    bool manage_if)
{
	kh_print_stats(title, st);
	if (st->functions == 0)
		atf_tc_skip("no corpus function of this set can run here "
		    "(%ju skipped, see the output)", (uintmax_t)st->skipped);
	ATF_CHECK_EQ_MSG(st->harness_errors, 0,
	    "%s: %ju harness errors (see the output)", title,
	    (uintmax_t)st->harness_errors);
	ATF_CHECK_EQ_MSG(st->divergences, 0,
	    "%s: %ju divergences from ground truth (see the output)", title,
	    (uintmax_t)st->divergences);
	ATF_CHECK_EQ_MSG(st->class_changes, 0,
	    "%s: %ju functions classified differently from "
	    "tests/harness/kh_expected.c (see the output)", title,
	    (uintmax_t)st->class_changes);
	ATF_CHECK_MSG(st->records > 0, "%s: nothing was traced (0 hit "
	    "records compared)", title);
	ATF_CHECK_MSG(st->traced >= min_traced, "%s: %ju boundaries traced, "
	    "at least %ju expected", title, (uintmax_t)st->traced,
	    (uintmax_t)min_traced);
	if (manage_if) {
		ATF_CHECK_MSG(st->sti_redirects > 0, "%s: the sti trampoline "
		    "variant never ran", title);
		ATF_CHECK_EQ_MSG(st->sti_redirects, st->sti_emulated,
		    "%s: %ju sti-variant redirects, %ju sti executed", title,
		    (uintmax_t)st->sti_redirects,
		    (uintmax_t)st->sti_emulated);
	} else
		ATF_CHECK_EQ_MSG(st->sti_redirects, 0, "%s: the sti variant "
		    "ran with manage_if off", title);
}

static const struct { bool on; const char *label; } variants[] = {
	{ false, "no-sti variant (manage_if off)" },
	{ true, "sti variant (manage_if on, sti stood in for)" },
};

/* Run check over both trampoline variants, each with its own totals. */
#define	FOR_EACH_VARIANT(v, title)					\
	for ((v) = 0; (v) < 2 && (printf("---- %s: %s ----\n", (title),	\
	    variants[(v)].label), kh_set_manage_if(variants[(v)].on), 1);	\
	    (v)++)

#define	TABLE_TC(tcname, table, min, descr)				\
ATF_TC(tcname);								\
ATF_TC_HEAD(tcname, tc)							\
{									\
	atf_tc_set_md_var(tc, "descr", descr);				\
	atf_tc_set_md_var(tc, "timeout", "900");			\
}									\
ATF_TC_BODY(tcname, tc)							\
{									\
	struct kh_stats st;						\
	char title[128];						\
	int v;								\
									\
	setup_or_fail();						\
	FOR_EACH_VARIANT(v, #tcname) {					\
		memset(&st, 0, sizeof(st));				\
		kh_check_table(table, false, &st);			\
		snprintf(title, sizeof(title), "%s, %s", #tcname,	\
		    variants[v].label);					\
		finish(title, &st, min, variants[v].on);		\
	}								\
	kh_set_manage_if(false);					\
}

TABLE_TC(each_asm, kh_corpus_asm, KH_MIN_ASM,
    "Each boundary of the hand-written corpus in turn equals single-step ground truth, both trampoline variants")
TABLE_TC(each_c_o0, kh_corpus_o0, KH_MIN_C_O0,
    "Each boundary of the C corpus at -O0 in turn equals ground truth, both trampoline variants")
TABLE_TC(each_c_o2, kh_corpus_o2, KH_MIN_C_O2,
    "Each boundary of the C corpus at -O2 -fPIE -fcf-protection in turn equals ground truth, both trampoline variants")
TABLE_TC(each_c_o2np, kh_corpus_o2np, KH_MIN_C_O2NP,
    "Each boundary of the C corpus at -O2 -fno-pie in turn equals ground truth, both trampoline variants")
TABLE_TC(each_c_avx2, kh_corpus_avx, KH_MIN_C_AVX2,
    "Each boundary of the AVX2 C corpus in turn equals ground truth, both trampoline variants")

ATF_TC(whole_function);
ATF_TC_HEAD(whole_function, tc)
{
	atf_tc_set_md_var(tc, "descr", "Every boundary of a function armed "
	    "at once: the combined trace equals ground truth in order, both "
	    "trampoline variants");
	atf_tc_set_md_var(tc, "timeout", "900");
}
ATF_TC_BODY(whole_function, tc)
{
	struct kh_stats st;
	char title[128];
	int v;

	setup_or_fail();
	FOR_EACH_VARIANT(v, "whole_function") {
		memset(&st, 0, sizeof(st));
		kh_check_table(kh_corpus_asm, true, &st);
		kh_check_table(kh_corpus_o0, true, &st);
		kh_check_table(kh_corpus_o2, true, &st);
		kh_check_table(kh_corpus_o2np, true, &st);
		kh_check_table(kh_corpus_avx, true, &st);
		snprintf(title, sizeof(title), "whole_function, %s",
		    variants[v].label);
		finish(title, &st, KH_MIN_WHOLE, variants[v].on);
	}
	kh_set_manage_if(false);
}

ATF_TC(native_fallback);
ATF_TC_HEAD(native_fallback, tc)
{
	atf_tc_set_md_var(tc, "descr", "Each boundary of the hand-written "
	    "and -O2 corpora with the no-fault read refusing all but the "
	    "stack: indirect calls and jumps through memory run their native "
	    "images and still equal ground truth, both trampoline variants");
	atf_tc_set_md_var(tc, "timeout", "900");
}
ATF_TC_BODY(native_fallback, tc)
{
	struct kh_stats st;
	char title[128];
	uint64_t n0;
	int v;

	setup_or_fail();
	kh_reads_only_stack(true);
	FOR_EACH_VARIANT(v, "native_fallback") {
		memset(&st, 0, sizeof(st));
		n0 = kh_native_runs();
		kh_check_table(kh_corpus_asm, false, &st);
		kh_check_table(kh_corpus_o2np, false, &st);
		snprintf(title, sizeof(title), "native_fallback, %s",
		    variants[v].label);
		printf("native_fallback: %ju emulations ran natively\n",
		    (uintmax_t)(kh_native_runs() - n0));
		finish(title, &st, KH_MIN_ASM, variants[v].on);
		ATF_CHECK_MSG(kh_native_runs() > n0, "%s: no emulation ran "
		    "its native image", title);
	}
	kh_reads_only_stack(false);
	kh_set_manage_if(false);
}

ATF_TC(ground_truth);
ATF_TC_HEAD(ground_truth, tc)
{
	atf_tc_set_md_var(tc, "descr", "The harness itself: single-step runs "
	    "behave like untraced runs, start at the entry with the given "
	    "register file, and only visit decoder boundaries");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(ground_truth, tc)
{
	struct kh_stats st = { 0 };

	setup_or_fail();
	kh_check_ground_truth(kh_corpus_asm, &st);
	kh_check_ground_truth(kh_corpus_o0, &st);
	kh_check_ground_truth(kh_corpus_o2, &st);
	kh_check_ground_truth(kh_corpus_o2np, &st);
	kh_check_ground_truth(kh_corpus_avx, &st);
	kh_print_env();
	kh_print_stats("ground_truth", &st);
	ATF_CHECK_EQ(st.harness_errors, 0);
	ATF_CHECK_EQ(st.divergences, 0);
	ATF_CHECK(st.functions > 0);
}

ATF_TC(programs);
ATF_TC_HEAD(programs, tc)
{
	atf_tc_set_md_var(tc, "descr", "Probe programs on the corpus: every "
	    "boundary armed with a predicate on rax and MEM and STR captures "
	    "at rsp; records are exactly the ground-truth states where the "
	    "predicate holds, with the bytes the single-step run saw; the "
	    "others are counted as filtered");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(programs, tc)
{
	struct kh_prog_stats ps = { 0 };
	struct kh_stats st = { 0 };

	setup_or_fail();
	kh_check_programs(kh_corpus_asm, &ps, &st);
	kh_check_programs(kh_corpus_o0, &ps, &st);
	kh_check_programs(kh_corpus_o2, &ps, &st);
	kh_check_programs(kh_corpus_o2np, &ps, &st);
	kh_check_programs(kh_corpus_avx, &ps, &st);
	printf("programs: %ju functions, %ju runs; %ju records (ground truth: "
	    "%ju true), %ju filtered (ground truth: %ju false); %ju MEM and "
	    "%ju STR captures compared (%ju bytes differ only by the TF a "
	    "single-stepped pushf pushed: informational)\n",
	    (uintmax_t)st.functions,
	    (uintmax_t)ps.runs, (uintmax_t)ps.records, (uintmax_t)ps.expected,
	    (uintmax_t)ps.filtered, (uintmax_t)ps.expected_filtered,
	    (uintmax_t)ps.mem_checked, (uintmax_t)ps.str_checked,
	    (uintmax_t)ps.tf_tolerated);
	ATF_CHECK_EQ(st.harness_errors, 0);
	ATF_CHECK_EQ(st.divergences, 0);
	ATF_CHECK_EQ(ps.records, ps.expected);
	ATF_CHECK_EQ(ps.filtered, ps.expected_filtered);
	ATF_CHECK(ps.records > 1000);
	ATF_CHECK(ps.filtered > 1000);
	ATF_CHECK_EQ(ps.mem_checked, ps.records);
	ATF_CHECK_EQ(ps.str_checked, ps.records);
}

ATF_TC(shared_subscribers);
ATF_TC_HEAD(shared_subscribers, tc)
{
	atf_tc_set_md_var(tc, "descr", "Two sessions on every instruction of "
	    "each function (issue 25): one site, two subscribers, one "
	    "recording every hit, one with a predicate on rax that leaves "
	    "after the middle hit; each session's records, ids and counts "
	    "equal the single-step ground truth for its own program");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(shared_subscribers, tc)
{
	struct kh_shared_stats ss = { 0 };
	struct kh_stats st = { 0 };

	setup_or_fail();
	kh_check_shared(kh_corpus_asm, &ss, &st);
	kh_check_shared(kh_corpus_o0, &ss, &st);
	kh_check_shared(kh_corpus_o2, &ss, &st);
	kh_check_shared(kh_corpus_o2np, &ss, &st);
	kh_check_shared(kh_corpus_avx, &ss, &st);
	printf("shared: %ju functions, %ju runs; session A %ju records; "
	    "session B %ju records, %ju not matching, then unsubscribed for "
	    "%ju hits\n", (uintmax_t)st.functions, (uintmax_t)ss.runs,
	    (uintmax_t)ss.records_a, (uintmax_t)ss.records_b,
	    (uintmax_t)ss.filtered_b, (uintmax_t)ss.unsubscribed);
	ATF_CHECK_EQ(st.harness_errors, 0);
	ATF_CHECK_EQ(st.divergences, 0);
	ATF_CHECK(ss.records_a > 1000);
	ATF_CHECK(ss.records_b > 500);
	ATF_CHECK(ss.filtered_b > 500);
	ATF_CHECK(ss.unsubscribed > 1000);
	ATF_CHECK_EQ(ss.records_a, ss.records_b + ss.filtered_b +
	    ss.unsubscribed);
}

ATF_TC(jump_probes);
ATF_TC_HEAD(jump_probes, tc)
{
	atf_tc_set_md_var(tc, "descr", "Jump-optimized probes: every "
	    "instruction that qualifies is probed in turn with a jmp to a "
	    "detour built by the engine (first in the installer's "
	    "intermediate state: int3 in, hits resumed in the detour); "
	    "records, results, memory and text equal the single-step ground "
	    "truth");
	atf_tc_set_md_var(tc, "timeout", "900");
}
ATF_TC_BODY(jump_probes, tc)
{
	struct kh_jump_stats js = { 0 };
	struct kh_stats st = { 0 };
	unsigned int a, b, c, d;

	/* The handler saves the vector state with xsave (kh_core.c). */
	if (!__get_cpuid(1, &a, &b, &c, &d) || (c & (1u << 27)) == 0)
		atf_tc_skip("SKIPPED: no OSXSAVE on this CPU: the jump-probe "
		    "handler cannot save the vector registers");
	setup_or_fail();
	kh_check_jump(kh_corpus_asm, &js, &st);
	kh_check_jump(kh_corpus_o0, &js, &st);
	kh_check_jump(kh_corpus_o2, &js, &st);
	kh_check_jump(kh_corpus_o2np, &js, &st);
	kh_check_jump(kh_corpus_avx, &js, &st);
	printf("jump probes: %ju functions, %ju instructions qualify, %ju "
	    "probes run (%ju not armed), %ju records compared with the jump "
	    "in and %ju with the int3 resuming in the detour, %ju runs, "
	    "%ju window bytes relocated; %ju divergences\n",
	    (uintmax_t)st.functions, (uintmax_t)js.qualified,
	    (uintmax_t)js.probes, (uintmax_t)js.not_armed,
	    (uintmax_t)js.records, (uintmax_t)js.resume_records,
	    (uintmax_t)st.runs,
	    (uintmax_t)js.window_bytes, (uintmax_t)st.divergences);
	ATF_CHECK_EQ(st.harness_errors, 0);
	ATF_CHECK_EQ(st.divergences, 0);
	ATF_CHECK(js.probes > 1000);
	ATF_CHECK(js.records > 10000);
	ATF_CHECK_EQ(js.resume_records, js.records);
}

ATF_TC(jopt_windows);
ATF_TC_HEAD(jopt_windows, tc)
{
	atf_tc_set_md_var(tc, "descr", "Jump-optimization qualification on "
	    "the corpus: no branch or return seen by the single-step ground "
	    "truth lands inside a window declared jump-optimizable, and the "
	    "corpus has windows refused for a branch target (listed)");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(jopt_windows, tc)
{
	struct kh_jopt_stats js = { 0 };
	struct kh_stats st = { 0 };

	setup_or_fail();
	kh_check_jopt(kh_corpus_asm, &js, &st);
	kh_check_jopt(kh_corpus_o0, &js, &st);
	kh_check_jopt(kh_corpus_o2, &js, &st);
	kh_check_jopt(kh_corpus_o2np, &js, &st);
	kh_check_jopt(kh_corpus_avx, &js, &st);
	printf("jopt: %ju functions, %ju instructions, %ju jump-optimizable, "
	    "%ju refused for a branch target in %ju functions; %ju landings "
	    "checked, %ju inside a window\n", (uintmax_t)st.functions,
	    (uintmax_t)js.insns, (uintmax_t)js.yes, (uintmax_t)js.target,
	    (uintmax_t)js.functions_with_target, (uintmax_t)js.landings,
	    (uintmax_t)js.violations);
	ATF_CHECK_EQ(st.harness_errors, 0);
	ATF_CHECK_EQ(js.violations, 0);
	ATF_CHECK(js.yes > 0);
	ATF_CHECK(js.functions_with_target > 0);
	ATF_CHECK(js.landings > 100);
}

ATF_TC(selftest_detects);
ATF_TC_HEAD(selftest_detects, tc)
{
	atf_tc_set_md_var(tc, "descr", "The harness catches an engine that "
	    "corrupts a register, the flags, the resume address or the stack "
	    "pointer (injected in the SIGTRAP handler), without crashing");
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(selftest_detects, tc)
{
	static const struct { int mode; const char *name; } inj[] = {
		{ KH_INJ_REG, "register" },
		{ KH_INJ_FLAGS, "flags" },
		{ KH_INJ_RIP, "resume address" },
		{ KH_INJ_STACK, "stack pointer" },
	};
	struct kh_stats st;
	size_t i;

	setup_or_fail();
	for (i = 0; i < sizeof(inj) / sizeof(inj[0]); i++) {
		memset(&st, 0, sizeof(st));
		printf("---- injecting a %s fault: divergences expected ----\n",
		    inj[i].name);
		kh_set_inject(inj[i].mode);
		kh_check_table(kh_corpus_asm, false, &st);
		kh_set_inject(KH_INJ_NONE);
		kh_print_stats(inj[i].name, &st);
		ATF_CHECK_MSG(st.divergences > 0,
		    "an injected %s fault went unnoticed", inj[i].name);
	}
	/* And the harness still works afterwards. */
	memset(&st, 0, sizeof(st));
	kh_check_table(kh_corpus_asm, false, &st);
	kh_print_stats("after injection", &st);
	ATF_CHECK_EQ(st.divergences, 0);
	ATF_CHECK_EQ(st.harness_errors, 0);
}

static const struct kh_fn *
find_fn(const struct kh_fn *tab, const char *name)
{
	for (; tab->name != NULL; tab++)
		if (strcmp(tab->name, name) == 0)
			return (tab);
	atf_tc_fail("corpus function %s missing", name);
	return (NULL);
}

ATF_TC(concurrent_threads);
ATF_TC_HEAD(concurrent_threads, tc)
{
	atf_tc_set_md_var(tc, "descr", "Threads run the same traced "
	    "functions at once (shared trampolines, concurrent lookups and "
	    "emulation): every call returns the untraced value and every "
	    "thread's ring holds the ground-truth hit sequence, both trampoline "
	    "variants");
	atf_tc_set_md_var(tc, "timeout", "600");
}
ATF_TC_BODY(concurrent_threads, tc)
{
	static const struct { const struct kh_fn *tab; const char *name;
	    int in; } sel[] = {
		{ kh_corpus_o2, "o2_collatz", 1 },
		{ kh_corpus_o0, "o0_fib_rec", 2 },
		{ kh_corpus_o2np, "o2np_switch_dense", 11 },
		{ kh_corpus_o2, "o2_fnptr_apply", 1 },
		{ kh_corpus_asm, "asm_call_mem", 2 },
		{ kh_corpus_asm, "asm_jcc32", 1 },
		{ kh_corpus_asm, "asm_loop", 2 },
		{ kh_corpus_asm, "asm_ret", 1 },
	};
	struct kh_stats st;
	size_t i;
	int v;

	setup_or_fail();
	FOR_EACH_VARIANT(v, "concurrent_threads") {
		memset(&st, 0, sizeof(st));
		for (i = 0; i < sizeof(sel) / sizeof(sel[0]); i++)
			kh_check_concurrent(find_fn(sel[i].tab, sel[i].name),
			    sel[i].in, KH_MT_THREADS, 100, &st);
		kh_print_stats(variants[v].label, &st);
		ATF_CHECK_EQ(st.harness_errors, 0);
		ATF_CHECK_EQ(st.divergences, 0);
		ATF_CHECK(st.records > 0);
		if (variants[v].on)
			ATF_CHECK(st.sti_redirects > 0 &&
			    st.sti_redirects == st.sti_emulated);
	}
	kh_set_manage_if(false);
}

ATF_TC(drops);
ATF_TC_HEAD(drops, tc)
{
	atf_tc_set_md_var(tc, "descr", "A hit nested inside the handler "
	    "(probe on kinst_os_now_ns, SIGTRAP allowed to nest) runs "
	    "correctly and is counted as a drop; a full ring drops records "
	    "without changing execution, hits == records + drops");
	atf_tc_set_md_var(tc, "timeout", "120");
}
ATF_TC_BODY(drops, tc)
{
	struct kh_stats st = { 0 };

	setup_or_fail();
	kh_check_nested(&st);
	kh_check_ring_full(&st);
	kh_print_stats("drops", &st);
	ATF_CHECK_EQ(st.harness_errors, 0);
	ATF_CHECK_EQ(st.divergences, 0);
	ATF_CHECK(st.records > 0);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, ground_truth);
	ATF_TP_ADD_TC(tp, each_asm);
	ATF_TP_ADD_TC(tp, native_fallback);
	ATF_TP_ADD_TC(tp, each_c_o0);
	ATF_TP_ADD_TC(tp, each_c_o2);
	ATF_TP_ADD_TC(tp, each_c_o2np);
	ATF_TP_ADD_TC(tp, each_c_avx2);
	ATF_TP_ADD_TC(tp, whole_function);
	ATF_TP_ADD_TC(tp, selftest_detects);
	ATF_TP_ADD_TC(tp, jopt_windows);
	ATF_TP_ADD_TC(tp, jump_probes);
	ATF_TP_ADD_TC(tp, programs);
	ATF_TP_ADD_TC(tp, shared_subscribers);
	ATF_TP_ADD_TC(tp, concurrent_threads);
	ATF_TP_ADD_TC(tp, drops);
	return (atf_no_error());
}
