// SPDX-License-Identifier: BSD-2-Clause
// kinstctl count/hist internals (cli/agg.cc): the program built from
// --by/--value/--if, run by common/kinst_prog.c's verifier and interpreter
// (keys, value and result against values computed here); --linear parsing;
// bucket labels and bounds; the per-CPU merge (by stack: stacks joined by
// each CPU's hashes, merged across CPUs by their frames); the ASCII histogram.
#include <atf-c++.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "agg.h"
#include "error.h"

extern "C" {
#include "kinst_agg.h"
#include "kinst_prog.h"

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

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = key[1] = 1;
}

uint64_t
kinst_os_now_ns(void)
{
	return 0;
}

#include "os_stack_none.h"	// kinst_agg.c's stack keys: no unwinder here
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

} // namespace

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
	ATF_ADD_TEST_CASE(tcs, merge_stacks);
	ATF_ADD_TEST_CASE(tcs, program);
	ATF_ADD_TEST_CASE(tcs, linear);
	ATF_ADD_TEST_CASE(tcs, buckets);
	ATF_ADD_TEST_CASE(tcs, merge_and_render);
}
