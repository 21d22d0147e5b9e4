// SPDX-License-Identifier: BSD-2-Clause
// kinstctl count/hist internals (cli/commands/agg.cc): the program built from
// --by/--value/--if, run by common/kinst_prog.c's verifier and interpreter
// (keys, value and result against values computed here); --linear parsing;
// bucket labels and bounds; the per-CPU merge (by stack: stacks joined by
// each CPU's hashes, merged across CPUs by their frames); the ASCII histogram.
#include <atf-c++.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands/agg.h"
#include "base/error.h"
#include "commands/latency.h"
#include "symbols/returns.h"
#include "device/session.h"

extern "C" {
#include "kinst_agg.h"
#include "kinst_prog.h"
#include "kinst_control.h"
#include "kinst_tstate.h"

int
kinst_os_read(uint64_t a, void *b, size_t n)
{
	(void)a;
	(void)b;
	(void)n;
	return -1;
}

int
kinst_os_read_user(uint64_t a, void *b, size_t n)
{
	(void)a;
	(void)b;
	(void)n;
	return -1;
}

// The thread and the clock the latency programs see: set by the test (a
// fake clock, advanced by known amounts).
uint64_t g_thread = 1, g_now = 0;

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = g_thread;
	key[1] = 1;
}

uint64_t
kinst_os_now_ns(void)
{
	return g_now;
}

uint64_t
kinst_os_local_ns(void)
{
	return g_now;
}

void *
kinst_os_alloc(size_t size)
{
	return calloc(1, size ? size : 1);
}

void
kinst_os_free(void *p, size_t size)
{
	(void)size;
	free(p);
}

// kinst_tstatectl.c (linked with kinst_ts_create) takes the control lock;
// this test never calls it.
void kinst_os_ctl_lock(void) {}
void kinst_os_ctl_unlock(void) {}

#include "os_stack_none.h"	// kinst_agghit.c's stack keys: no unwinder here
}

namespace {

struct Run {
	int result;
	struct kinst_agg_val v;
};

Run
run_prog(const kinst::AggOptions &o, const struct kinst_regs &r, int32_t pid, const char *comm)
{
	static struct kinst_prog p;
	std::vector<struct kinst_pinsn> code = kinst::agg_program(o);
	uint32_t bad;
	int verdict = kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad);
	if (verdict != KINST_PV_OK)
		ATF_FAIL(std::string("refused: ") + kinst_prog_verdict_name(verdict));
	Run out;
	memset(&out.v, 0, sizeof(out.v));
	struct kinst_prog_ctx c;
	c.regs = &r;
	c.pid = pid;
	c.tid = pid;
	c.cpu = 0;
	c.comm = comm;
	c.out = &out.v;
	uint64_t res;
	out.result = kinst_prog_run(&p, &c, &res);
	return out;
}

// A latency program run on the fake clock and thread, with the table t.
Run
run_lat(const std::vector<struct kinst_pinsn> &code, struct kinst_regs r,
    struct kinst_tstate *t)
{
	static struct kinst_prog p;
	uint32_t bad;
	int verdict = kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad);
	if (verdict != KINST_PV_OK)
		ATF_FAIL(std::string("refused: ") + kinst_prog_verdict_name(verdict) +
		    " at " + std::to_string(bad));
	Run out;
	memset(&out.v, 0, sizeof(out.v));
	struct kinst_prog_ctx c;
	memset(&c, 0, sizeof(c));
	c.regs = &r;
	c.comm = "x\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
	c.out = &out.v;
	c.ts = t;
	uint64_t res;
	out.result = kinst_prog_run(&p, &c, &res);
	return out;
}

} // namespace

// kinstctl latency's programs (latency.h) on the engine's interpreter and
// per-thread state, with a fake clock: each sample is the time the test
// let pass between its start and its end; a recursive call is its own
// sample; another thread's end, an end whose start was not seen, a second
// end of one start miss; a conditional return point that is not taken
// neither samples nor closes; --if false closes without a sample.
// --slots' maximum (session.cc agg_slot_limit): the largest power of two
// the module's own geometry accepts, twice it refused; its cost per slot
// times the slots within the module's bytes, twice them beyond.
#define SLOT_REQUIRE(c, m) do { if (!(c)) ATF_FAIL(std::string(m) + ": " #c); } while (0)
ATF_TEST_CASE_WITHOUT_HEAD(slot_limit);
ATF_TEST_CASE_BODY(slot_limit)
{
	const uint32_t cpus[] = { 1, 2, 3, 8, 64, 256, 1024 };
	for (int kind = 0; kind < 5; kind++)
		for (uint32_t n : cpus) {
			struct kinst_agg_setup su;
			memset(&su, 0, sizeof(su));
			su.kind = kind == 0 ? KINST_AGG_COUNT : kind == 4 ?
			    KINST_AGG_LINEAR : KINST_AGG_LOG2;
			su.flags = kind == 0 ? KINST_AGGF_PROBE : kind == 2 ||
			    kind == 3 ? KINST_AGGF_STACK : 0;
			if (kind == 4) {
				su.lin_min = 0;
				su.lin_max = 1000;
				su.lin_step = 1;
			}
			uint64_t b;
			uint32_t max = kinst::agg_slot_limit(su, n, &b);
			std::string what = "kind " + std::to_string(kind) + " on " +
			    std::to_string(n) + " CPUs: max " + std::to_string(max);
			struct kinst_agg a;
			if (max == 0) {
				su.nslots = 1;
				if (su.flags & KINST_AGGF_STACK)
					su.nstacks = 1;
				SLOT_REQUIRE(kinst_agg_geometry(&su, n, &a) != 0, what);
				continue;
			}
			SLOT_REQUIRE((max & (max - 1)) == 0, what);
			su.nslots = max;
			if (su.flags & KINST_AGGF_STACK)
				su.nstacks = std::min<uint32_t>(max, KINST_AGG_MAX_STACKS);
			SLOT_REQUIRE(kinst_agg_geometry(&su, n, &a) == 0, what);
			SLOT_REQUIRE(b * max <= KINST_AGG_MAX_BYTES, what + " bytes " +
			    std::to_string(b));
			if (max < KINST_AGG_MAX_SLOTS) {
				su.nslots = 2 * max;
				if (su.flags & KINST_AGGF_STACK)
					su.nstacks = std::min<uint32_t>(2 * max,
					    KINST_AGG_MAX_STACKS);
				SLOT_REQUIRE(kinst_agg_geometry(&su, n, &a) != 0, what);
				SLOT_REQUIRE(b * 2 * max > KINST_AGG_MAX_BYTES, what);
			}
		}
	// Figures the help prints on a 2-CPU machine: count 224 bytes a slot,
	// hist 2304 (log2 buckets).
	struct kinst_agg_setup c, h;
	memset(&c, 0, sizeof(c));
	memset(&h, 0, sizeof(h));
	c.kind = KINST_AGG_COUNT;
	c.flags = KINST_AGGF_PROBE;
	h.kind = KINST_AGG_LOG2;
	uint64_t b;
	ATF_REQUIRE_EQ(kinst::agg_slot_limit(c, 2, &b), 65536u);
	ATF_REQUIRE_EQ(b, 2u * 2 * sizeof(struct kinst_agg_slot));
	ATF_REQUIRE_EQ(kinst::agg_slot_limit(h, 2, &b), 16384u);
	ATF_REQUIRE_EQ(b, 2u * 2 * (sizeof(struct kinst_agg_slot) +
	    KINST_AGG_LOG2_BUCKETS * sizeof(uint64_t)));
}

ATF_TEST_CASE_WITHOUT_HEAD(latency_programs);
ATF_TEST_CASE_BODY(latency_programs)
{
	struct kinst_ts_setup su;
	memset(&su, 0, sizeof(su));
	su.nthreads = 4;
	struct kinst_tstate *t;
	ATF_REQUIRE_EQ(kinst_ts_create(&su, 1, &t), KINST_E_OK);
	const uint64_t tag = 77;
	std::vector<struct kinst_pinsn> start = kinst::latency_start_program(true, {}, tag);
	std::vector<struct kinst_pinsn> end = kinst::latency_end_program(true, tag, "", {});
	struct kinst_regs r;
	memset(&r, 0, sizeof(r));
	auto at = [&](uint64_t rsp, uint64_t now, const std::vector<struct kinst_pinsn> &c) {
		r.gpr[KINST_RSP] = rsp;
		g_now = now;
		return run_lat(c, r, t);
	};
	// One call: the start aggregates nothing; the end the elapsed time.
	ATF_REQUIRE_EQ(at(0x8000, 1000, start).result, KINST_PROG_FALSE);
	Run e = at(0x8000, 1250, end);
	ATF_REQUIRE_EQ(e.result, KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(e.v.value, 250u);
	ATF_REQUIRE_EQ(at(0x8000, 1300, end).result, KINST_PROG_NOSTATE);	// closed
	// Recursion: three activations, each closed by its own return.
	at(0x8000, 0, start);
	at(0x7f00, 10, start);
	at(0x7e00, 30, start);
	ATF_REQUIRE_EQ(at(0x7e00, 100, end).v.value, 70u);
	ATF_REQUIRE_EQ(at(0x7f00, 150, end).v.value, 140u);
	ATF_REQUIRE_EQ(at(0x8000, 1000, end).v.value, 1000u);
	// Another thread's end finds nothing; its own start's end does.
	at(0x8000, 0, start);
	g_thread = 2;
	ATF_REQUIRE_EQ(at(0x8000, 5, end).result, KINST_PROG_NOSTATE);
	g_thread = 1;
	ATF_REQUIRE_EQ(at(0x8000, 9, end).v.value, 9u);
	// A jne to the return thunk: not taken (ZF set) is no end at all.
	std::vector<struct kinst_pinsn> jne = kinst::latency_end_program(true, tag, kinst::return_condition(5), {});
	at(0x8000, 0, start);
	r.rflags = 1u << 6;
	ATF_REQUIRE_EQ(at(0x8000, 40, jne).result, KINST_PROG_FALSE);
	r.rflags = 0;
	Run j = at(0x8000, 60, jne);
	ATF_REQUIRE_EQ(j.result, KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(j.v.value, 60u);
	// --if false: the call ended (closed), no sample; true: keyed.
	kinst::AggOptions o;
	o.hist = true;
	o.if_expr = "rax != 0 && rdi > 2";
	o.by = "rax";
	std::vector<struct kinst_pinsn> cond =
	    kinst::latency_end_program(true, tag, "", kinst::agg_program(o));
	r.gpr[KINST_RAX] = 0;
	at(0x8000, 0, start);
	ATF_REQUIRE_EQ(at(0x8000, 7, cond).result, KINST_PROG_FALSE);
	ATF_REQUIRE_EQ(at(0x8000, 8, end).result, KINST_PROG_NOSTATE);
	r.gpr[KINST_RAX] = 5;
	r.gpr[KINST_RDI] = 3;
	at(0x8000, 0, start);
	Run k = at(0x8000, 11, cond);
	ATF_REQUIRE_EQ(k.result, KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(k.v.key[0], 5u);
	ATF_REQUIRE_EQ(k.v.value, 11u);
	// FROM/TO (unframed): the next FROM replaces one never closed.
	std::vector<struct kinst_pinsn> from = kinst::latency_start_program(false, {}, tag);
	std::vector<struct kinst_pinsn> to = kinst::latency_end_program(false, tag, "", {});
	at(0x1000, 100, from);
	at(0x2000, 200, from);
	ATF_REQUIRE_EQ(at(0x3000, 260, to).v.value, 60u);
	ATF_REQUIRE_EQ(at(0x3000, 300, to).result, KINST_PROG_NOSTATE);
	kinst_ts_free(t);
}

// Every jCC's condition (returns.h) against the flags that take it.
ATF_TEST_CASE_WITHOUT_HEAD(return_conditions);
ATF_TEST_CASE_BODY(return_conditions)
{
	const uint64_t CF = 1, PF = 4, ZF = 64, SF = 128, OF = 2048;
	for (int cc = 0; cc < 16; cc++) {
		kinst::AggOptions o;
		o.if_expr = kinst::return_condition(cc);
		o.by = "1";
		for (uint64_t f = 0; f < 32; f++) {
			uint64_t fl = ((f & 1) ? CF : 0) | ((f & 2) ? PF : 0) | ((f & 4) ? ZF : 0) |
			    ((f & 8) ? SF : 0) | ((f & 16) ? OF : 0);
			bool c = fl & CF, p = fl & PF, z = fl & ZF, s = fl & SF, of = fl & OF;
			bool want;
			switch (cc >> 1) {
			case 0: want = of; break;
			case 1: want = c; break;
			case 2: want = z; break;
			case 3: want = c || z; break;
			case 4: want = s; break;
			case 5: want = p; break;
			case 6: want = s != of; break;
			default: want = z || s != of; break;
			}
			if (cc & 1)
				want = !want;
			struct kinst_regs r;
			memset(&r, 0, sizeof(r));
			r.rflags = fl | 0x202;
			Run x = run_prog(o, r, 1, "x\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
			if (x.result != (want ? KINST_PROG_TRUE : KINST_PROG_FALSE))
				ATF_FAIL("cc " + std::to_string(cc) + " flags " + std::to_string(fl) +
				    ": result " + std::to_string(x.result));
		}
	}
}

ATF_TEST_CASE_WITHOUT_HEAD(quantiles);
ATF_TEST_CASE_BODY(quantiles)
{
	// 100 samples: 10 in [1K, 2K), 80 in [2K, 4K), 10 in [4K, 8K).
	std::vector<kinst::Bucket> b;
	for (uint32_t i = 0; i < 20; i++)
		b.push_back(kinst::log2_bucket(i));
	kinst::AggVal v;
	v.count = 100;
	v.min = 1100;
	v.max = 5000;
	v.buckets.assign(20, 0);
	v.buckets[12] = 10;	// [1024, 2048)
	v.buckets[13] = 80;	// [2048, 4096)
	v.buckets[14] = 10;	// [4096, 8192)
	double p50 = kinst::hist_quantile(b, v, 0.5);
	ATF_REQUIRE(p50 >= 2048 && p50 < 4096);
	ATF_REQUIRE_EQ((int64_t)p50, (int64_t)(2048 + 39.5 * 2048 / 80));
	double p99 = kinst::hist_quantile(b, v, 0.99);
	ATF_REQUIRE(p99 >= 4096 && p99 <= 5000);	// clamped to max
	ATF_REQUIRE_EQ(kinst::hist_quantile(b, v, 0.05) >= 1100, true);	// clamped to min
	ATF_REQUIRE(kinst::hist_quantile(b, v, 0.10) < 2048);
	ATF_REQUIRE(kinst::hist_quantile(b, v, 0.11) >= 2048);
	kinst::AggVal none;
	ATF_REQUIRE_EQ(kinst::hist_quantile(b, none, 0.5), 0.0);
}

ATF_TEST_CASE_WITHOUT_HEAD(program);
ATF_TEST_CASE_BODY(program)
{
	kinst::AggOptions o;
	struct kinst_regs r;
	memset(&r, 0, sizeof(r));
	ATF_REQUIRE(kinst::agg_program(o).empty());	// count per probe: none

	o.by = "rdi & 0xff";
	o.value_expr = "rdx * 2";
	o.if_expr = "rdx != 3";
	for (uint64_t rdx = 0; rdx < 6; rdx++) {
		r.gpr[KINST_RDI] = 0x1234 + rdx;
		r.gpr[KINST_RDX] = rdx;
		Run x = run_prog(o, r, 7, "dd\0\0\0\0\0\0\0\0\0\0\0\0\0");
		ATF_REQUIRE_EQ(x.result, rdx == 3 ? KINST_PROG_FALSE : KINST_PROG_TRUE);
		ATF_REQUIRE_EQ(x.v.key[0], (0x1234 + rdx) & 0xff);
		ATF_REQUIRE_EQ(x.v.key[1], 0u);
		ATF_REQUIRE_EQ(x.v.value, rdx * 2);
	}
	// Short-circuit operators: their jumps to the end land on KEY/VALUE.
	o.by = "rdi && rsi";
	o.value_expr = "rsi || rdi";
	o.if_expr = "";
	const uint64_t pairs[][2] = {{0, 0}, {0, 5}, {5, 0}, {5, 5}};
	for (const auto &pr : pairs) {
		r.gpr[KINST_RDI] = pr[0];
		r.gpr[KINST_RSI] = pr[1];
		Run x = run_prog(o, r, 7, "x\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
		ATF_REQUIRE_EQ(x.result, KINST_PROG_TRUE);
		ATF_REQUIRE_EQ(x.v.key[0], (uint64_t)(pr[0] && pr[1]));
		ATF_REQUIRE_EQ(x.v.value, (uint64_t)(pr[0] || pr[1]));
	}
	o = kinst::AggOptions();
	o.by = "comm";
	Run c = run_prog(o, r, 7, "kworker/0:1H\0\0\0");
	char name[17];
	memcpy(name, &c.v.key[0], 8);
	memcpy(name + 8, &c.v.key[1], 8);
	name[16] = 0;
	ATF_REQUIRE_EQ(std::string(name), "kworker/0:1H");
	ATF_REQUIRE_EQ(kinst::key_text("comm", kinst::AggKey{0, c.v.key[0], c.v.key[1]}),
	    "kworker/0:1H");
	o.by = "pid";
	ATF_REQUIRE_EQ(run_prog(o, r, 4321, "a\0\0\0\0\0\0\0\0\0\0\0\0\0\0").v.key[0], 4321u);
	// Too long together: a usage error, not a refusal by the module.
	o.by = "rdi";
	for (int i = 0; i < 130; i++)
		o.by += "+1";
	ATF_REQUIRE_THROW(kinst::Error, kinst::agg_program(o));
}

ATF_TEST_CASE_WITHOUT_HEAD(linear);
ATF_TEST_CASE_BODY(linear)
{
	kinst::Linear l = kinst::parse_linear("-10,0x10,4");
	ATF_REQUIRE_EQ(l.min, -10);
	ATF_REQUIRE_EQ(l.max, 16);
	ATF_REQUIRE_EQ(l.step, 4);
	l = kinst::parse_linear("-9223372036854775808,9223372036854775807,9223372036854775807");
	ATF_REQUIRE_EQ(l.min, INT64_MIN);
	const char *bad[] = {"", "1", "1,2", "1,2,3,4", "2,1,1", "1,1,1", "0,10,0",
	    "0,10,-2", "a,10,1", "0,1025,1", "-9223372036854775809,0,1", "0,10,1x"};
	for (const char *b : bad)
		ATF_REQUIRE_THROW(kinst::Error, kinst::parse_linear(b));
	ATF_REQUIRE_EQ(kinst::parse_linear("0,1024,1").max, 1024);
}

ATF_TEST_CASE_WITHOUT_HEAD(buckets);
ATF_TEST_CASE_BODY(buckets)
{
	ATF_REQUIRE_EQ(kinst::log2_bucket(0).label, "(..., 0)");
	ATF_REQUIRE_EQ(kinst::log2_bucket(1).label, "[0]");
	ATF_REQUIRE_EQ(kinst::log2_bucket(2).label, "[1]");
	ATF_REQUIRE_EQ(kinst::log2_bucket(3).label, "[2, 4)");
	ATF_REQUIRE_EQ(kinst::log2_bucket(12).label, "[1K, 2K)");
	ATF_REQUIRE_EQ(kinst::log2_bucket(22).label, "[1M, 2M)");
	ATF_REQUIRE_EQ(kinst::log2_bucket(64).label, "[4E, ...)");
	ATF_REQUIRE(!kinst::log2_bucket(64).has_high);
	// Every log2 bucket's bounds agree with the kernel's bucket function.
	struct kinst_agg a;
	memset(&a, 0, sizeof(a));
	a.kind = KINST_AGG_LOG2;
	for (uint32_t i = 1; i < KINST_AGG_LOG2_BUCKETS; i++) {
		kinst::Bucket b = kinst::log2_bucket(i);
		ATF_REQUIRE_EQ(kinst_agg_bucket(&a, b.low), i);
		if (b.has_high)
			ATF_REQUIRE_EQ(kinst_agg_bucket(&a, b.high - 1), i);
	}
	kinst::Linear l = kinst::parse_linear("0,25,10");
	ATF_REQUIRE_EQ(kinst::linear_bucket(l, 3, 0).label, "(..., 0)");
	ATF_REQUIRE_EQ(kinst::linear_bucket(l, 3, 1).label, "[0, 10)");
	ATF_REQUIRE_EQ(kinst::linear_bucket(l, 3, 3).label, "[20, 25)");
	ATF_REQUIRE_EQ(kinst::linear_bucket(l, 3, 4).label, "[25, ...)");
	a.kind = KINST_AGG_LINEAR;
	a.lin_min = 0;
	a.lin_max = 25;
	a.lin_step = 10;
	a.nlinear = 3;
	for (uint32_t i = 1; i <= 4; i++) {
		kinst::Bucket b = kinst::linear_bucket(l, 3, i);
		ATF_REQUIRE_EQ(kinst_agg_bucket(&a, b.low), i);
		if (b.has_high)
			ATF_REQUIRE_EQ(kinst_agg_bucket(&a, b.high - 1), i);
	}
}

ATF_TEST_CASE_WITHOUT_HEAD(merge_and_render);
ATF_TEST_CASE_BODY(merge_and_render)
{
	const uint32_t nb = 3, esize = sizeof(struct kinst_agg_entry) + nb * 8;
	std::vector<uint8_t> cpu0(2 * esize), cpu1(esize);
	auto put = [&](std::vector<uint8_t> &buf, int i, uint32_t probe, uint64_t k,
	    uint64_t count, int64_t mn, int64_t mx, std::vector<uint64_t> b) {
		struct kinst_agg_entry e;
		memset(&e, 0, sizeof(e));
		e.probe_id = probe;
		e.key[0] = k;
		e.count = count;
		e.sum = count * 10;
		e.min = mn;
		e.max = mx;
		memcpy(buf.data() + i * esize, &e, sizeof(e));
		memcpy(buf.data() + i * esize + sizeof(e), b.data(), nb * 8);
	};
	put(cpu0, 0, 1, 5, 4, -3, 7, {1, 2, 1});
	put(cpu0, 1, 2, 5, 1, 0, 0, {0, 1, 0});
	put(cpu1, 0, 1, 5, 6, -1, 9, {0, 6, 0});
	kinst::AggMap m;
	kinst::agg_merge(m, cpu0.data(), 2, esize, nb);
	kinst::agg_merge(m, cpu1.data(), 1, esize, nb);
	ATF_REQUIRE_EQ(m.size(), 2u);
	const kinst::AggVal &v = m[kinst::AggKey{1, 5, 0}];
	ATF_REQUIRE_EQ(v.count, 10u);
	ATF_REQUIRE_EQ(v.sum, 100u);
	ATF_REQUIRE_EQ(v.min, -3);
	ATF_REQUIRE_EQ(v.max, 9);
	ATF_REQUIRE(v.buckets == std::vector<uint64_t>({1, 8, 1}));
	std::vector<kinst::Bucket> b = {kinst::log2_bucket(0), kinst::log2_bucket(1),
	    kinst::log2_bucket(2), kinst::log2_bucket(3)};
	std::string h = kinst::render_hist(b, {0, 8, 0, 2});
	// From the first to the last non-zero bucket; the largest gets 52 '@'.
	ATF_REQUIRE_EQ(h,
	    "[0]                         8 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
	    "[1]                         0 |                                                    |\n"
	    "[2, 4)                      2 |@@@@@@@@@@@@@                                       |\n");
}

// hist --html: a bar per bucket from the first to the last non-empty one,
// with its bounds (none at an open end) and count, lengths relative to the
// panel's largest (a non-empty bucket at least 1), keys and labels escaped,
// no script.
ATF_TEST_CASE_WITHOUT_HEAD(hist_html);
ATF_TEST_CASE_BODY(hist_html)
{
	std::vector<kinst::Bucket> b = {kinst::log2_bucket(0), kinst::log2_bucket(1),
	    kinst::log2_bucket(2), kinst::log2_bucket(3), kinst::log2_bucket(4)};
	// b[0] is (..., 0): open below.
	std::vector<kinst::HistPanel> ps = {
		{"a<b", {2, 0, 1000, 0, 0}, "count 1002"},
		{"", {0, 0, 0, 0, 3}, "count 3"},
	};
	std::string h = kinst::hist_html("kinst hist f", "value rdx", b, ps);
	auto count = [&](const std::string &what) {
		size_t n = 0;
		for (size_t i = h.find(what); i != std::string::npos; i = h.find(what, i + 1))
			n++;
		return n;
	};
	ATF_REQUIRE(h.rfind("<!DOCTYPE html>", 0) == 0);
	ATF_REQUIRE_EQ(count("<script"), 0u);
	ATF_REQUIRE_EQ(count("<section class=\"hist\""), 2u);
	ATF_REQUIRE_EQ(count("<g class=\"bucket\""), 4u);	// 3 + 1: trailing zeros cut
	ATF_REQUIRE(h.find("data-key=\"a&lt;b\"") != std::string::npos);
	ATF_REQUIRE(h.find("<g class=\"bucket\" data-high=\"0\" data-count=\"2\"") !=
	    std::string::npos);
	// 2 of 1000 is 1.04 px: rounded to 1; 1000 is the full 520.
	ATF_REQUIRE(h.find("data-count=\"2\"") < h.find("width=\"1\" height"));
	ATF_REQUIRE(h.find("width=\"520\" height") != std::string::npos);
	ATF_REQUIRE(h.find("data-low=\"0\" data-high=\"1\" data-count=\"0\"") !=
	    std::string::npos);
	ATF_REQUIRE(h.find("<p class=\"summary\">count 1002</p>") != std::string::npos);
	ATF_REQUIRE(kinst::hist_html("t", "", b, {}).find("(no samples)") != std::string::npos);
}

// --by stack: each CPU's entries name its own stacks by hash; the same
// frames merge across CPUs whatever their hashes, different frames never
// do even when two CPUs used the same hash; a hash naming no stack read
// goes to the empty stack.
ATF_TEST_CASE_WITHOUT_HEAD(merge_stacks);
ATF_TEST_CASE_BODY(merge_stacks)
{
	const uint32_t esize = sizeof(struct kinst_agg_entry);
	auto entry = [&](std::vector<uint8_t> &buf, uint64_t hash, uint64_t count) {
		struct kinst_agg_entry e;
		memset(&e, 0, sizeof(e));
		e.key[1] = hash;
		e.count = count;
		size_t at = buf.size();
		buf.resize(at + esize);
		memcpy(buf.data() + at, &e, sizeof(e));
	};
	auto stack = [](uint64_t hash, std::vector<uint64_t> f, uint32_t flags) {
		struct kinst_agg_stack s;
		memset(&s, 0, sizeof(s));
		s.hash = hash;
		s.nframes = (uint32_t)f.size();
		s.flags = flags;
		for (size_t i = 0; i < f.size(); i++)
			s.frames[i] = f[i];
		return s;
	};
	std::vector<uint64_t> fa = {0x10, 0x20, 0x30}, fb = {0x10, 0x20, 0x31};
	std::vector<uint8_t> e0, e1;
	entry(e0, 0xaaa, 5);	// fa on CPU 0
	entry(e0, 0xbbb, 2);	// fb on CPU 0
	entry(e1, 0xbbb, 7);	// fa on CPU 1, under CPU 0's hash of fb
	entry(e1, 0xccc, 1);	// no such stack on CPU 1
	struct kinst_agg_stack s0[2] = {stack(0xaaa, fa, 0), stack(0xbbb, fb, 0)};
	struct kinst_agg_stack s1[1] = {stack(0xbbb, fa, KINST_SECF_TRUNCATED)};
	kinst::AggMap m;
	kinst::StackSet ss;
	kinst::agg_merge_stacks(m, ss, e0.data(), 2, esize, 0, s0, 2);
	kinst::agg_merge_stacks(m, ss, e1.data(), 2, esize, 0, s1, 1);
	ATF_REQUIRE_EQ(ss.frames.size(), 3u);
	ATF_REQUIRE_EQ(m.size(), 3u);
	uint64_t total = 0;
	for (const auto &r : m) {
		ATF_REQUIRE(r.first.k1 < ss.frames.size());
		const std::vector<uint64_t> &f = ss.frames[r.first.k1];
		if (f == fa) {
			ATF_REQUIRE_EQ(r.second.count, 12u);
			ATF_REQUIRE(ss.truncated[r.first.k1]);
		} else if (f == fb) {
			ATF_REQUIRE_EQ(r.second.count, 2u);
			ATF_REQUIRE(!ss.truncated[r.first.k1]);
		} else {
			ATF_REQUIRE(f.empty());
			ATF_REQUIRE_EQ(r.second.count, 1u);
		}
		total += r.second.count;
	}
	ATF_REQUIRE_EQ(total, 15u);
	// No stacks at all: every count is kept, under the empty stack.
	kinst::AggMap m2;
	kinst::StackSet ss2;
	kinst::agg_merge_stacks(m2, ss2, e0.data(), 2, esize, 0, nullptr, 0);
	ATF_REQUIRE_EQ(m2.size(), 1u);
	ATF_REQUIRE_EQ(m2.begin()->second.count, 7u);
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, slot_limit);
	ATF_ADD_TEST_CASE(tcs, merge_stacks);
	ATF_ADD_TEST_CASE(tcs, program);
	ATF_ADD_TEST_CASE(tcs, latency_programs);
	ATF_ADD_TEST_CASE(tcs, return_conditions);
	ATF_ADD_TEST_CASE(tcs, quantiles);
	ATF_ADD_TEST_CASE(tcs, linear);
	ATF_ADD_TEST_CASE(tcs, buckets);
	ATF_ADD_TEST_CASE(tcs, merge_and_render);
	ATF_ADD_TEST_CASE(tcs, hist_html);
}
