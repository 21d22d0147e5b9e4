// SPDX-License-Identifier: BSD-2-Clause
// kinstctl's --if compiler (cli/plan/prog_compile.cc): every expression is
// compiled, verified by common/kinst_prog.c's verifier and run by its
// interpreter on register files and memory this test sets up; the result
// must equal the value this test computes in C++.  Malformed expressions:
// Error(Exit::usage) naming the column.
#include <atf-c++.hpp>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "plan/prog_compile.h"

extern "C" {
#include "kinst_prog.h"

#include "os_mem_window.h"	// kinst_os_read, kinst_os_read_user: umem, kmem

#include "os_stack_none.h"	// kinst_agghit.c's stack keys: no unwinder here
}

namespace {

struct Hit {
	struct kinst_regs regs;
	int32_t pid = 0, tid = 0;
	uint32_t cpu = 0;
	char comm[KINST_COMM_LEN] = {};
};

// Compile, verify, run: the predicate's result (-1 for a fault).
int64_t
eval(const std::string &expr, const Hit &h, uint64_t *value = nullptr)
{
	auto code = kinst::compile_expr(expr, "--if");
	static struct kinst_prog p;
	uint32_t bad;
	int vd = kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad);
	if (vd != KINST_PV_OK)
		ATF_FAIL(expr + ": verifier refused: " + kinst_prog_verdict_name(vd) +
		    " at " + std::to_string(bad));
	struct kinst_prog_ctx c;
	c.regs = &h.regs;
	c.pid = h.pid;
	c.tid = h.tid;
	c.cpu = h.cpu;
	c.comm = h.comm;
	c.out = nullptr;
	uint64_t v;
	int r = kinst_prog_run(&p, &c, &v);
	if (value)
		*value = v;
	return r == KINST_PROG_FAULT ? -1 : r == KINST_PROG_TRUE ? 1 : 0;
}

Hit
make_hit(uint64_t seed)
{
	Hit h;
	memset(&h.regs, 0, sizeof(h.regs));
	for (int i = 0; i < KINST_NGPR; i++)
		h.regs.gpr[i] = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 3 + (seed % 7);
	h.regs.gpr[KINST_RDX] = seed % 10;
	h.regs.gpr[KINST_RSI] = ubase + 8 * (seed % 16);
	h.regs.gpr[KINST_RDI] = kbase + 16 * (seed % 8);
	h.regs.rip = kbase + seed;
	h.regs.rflags = 0x202 | (seed & 0x40);
	h.pid = (int32_t)(seed % 5);
	h.tid = (int32_t)(seed % 9);
	h.cpu = (uint32_t)(seed % 2);
	strncpy(h.comm, seed % 3 == 0 ? "dd" : seed % 3 == 1 ? "ddx" :
	    "syscall_loop_12", sizeof(h.comm) - 1);
	return h;
}

uint64_t
u(const uint8_t *m, uint64_t off, int n)
{
	uint64_t v = 0;
	memcpy(&v, m + off, n);	// little-endian host
	return v;
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(values);
ATF_TEST_CASE_BODY(values)
{
	for (size_t i = 0; i < sizeof(umem); i++) {
		umem[i] = (uint8_t)(i * 31 + 7);
		kmem[i] = (uint8_t)(i * 17 + 3);
	}
	// kmem[0..8) holds a user pointer: *(*(rdi)+8) style chains.
	uint64_t up = ubase + 24;
	memcpy(kmem, &up, 8);

	struct Case {
		const char *expr;
		std::function<uint64_t(const Hit &)> want;
	};
	const std::vector<Case> cases = {
		{"rdx == 7", [](const Hit &h) { return h.regs.gpr[KINST_RDX] == 7; }},
		{"rdx != 7", [](const Hit &h) { return h.regs.gpr[KINST_RDX] != 7; }},
		{"rdi & 1", [](const Hit &h) { return h.regs.gpr[KINST_RDI] & 1; }},
		{"rdx < 5 && rdx >= 2", [](const Hit &h) {
			return h.regs.gpr[KINST_RDX] < 5 && h.regs.gpr[KINST_RDX] >= 2; }},
		{"rdx == 1 || rdx == 8 || pid == 3", [](const Hit &h) {
			return h.regs.gpr[KINST_RDX] == 1 || h.regs.gpr[KINST_RDX] == 8 || h.pid == 3; }},
		{"!(rdx > 4) && cpu == 1", [](const Hit &h) {
			return !(h.regs.gpr[KINST_RDX] > 4) && h.cpu == 1; }},
		{"rdx + 3 * 2 == 9", [](const Hit &h) { return h.regs.gpr[KINST_RDX] + 6 == 9; }},
		{"(rdx - 1) << 2 == 12", [](const Hit &h) { return ((h.regs.gpr[KINST_RDX] - 1) << 2) == 12; }},
		{"rdx ^ 5 | 8", [](const Hit &h) { return (h.regs.gpr[KINST_RDX] ^ 5) | 8; }},
		{"~rdx & 0xf", [](const Hit &h) { return ~h.regs.gpr[KINST_RDX] & 0xf; }},
		{"-rdx == 0 - rdx", [](const Hit &) { return 1; }},
		{"rflags & 0x40", [](const Hit &h) { return h.regs.rflags & 0x40; }},
		{"rip - 0xffffffff82000000 > 3", [](const Hit &h) { return h.regs.rip - kbase > 3; }},
		{"comm == \"dd\"", [](const Hit &h) { return strcmp(h.comm, "dd") == 0; }},
		{"comm != \"dd\"", [](const Hit &h) { return strcmp(h.comm, "dd") != 0; }},
		{"comm == \"syscall_loop_12\"", [](const Hit &h) { return strcmp(h.comm, "syscall_loop_12") == 0; }},
		{"pid != 1 && comm == \"dd\"", [](const Hit &h) { return h.pid != 1 && strcmp(h.comm, "dd") == 0; }},
		{"*(u32)(rsi+4) > 100", [](const Hit &h) {
			return u(umem, h.regs.gpr[KINST_RSI] + 4 - ubase, 4) > 100; }},
		{"*(u8)rsi == *(u8)(rsi)", [](const Hit &) { return 1; }},
		{"*(u16)(rdi+2) & 0xff00", [](const Hit &h) {
			return u(kmem, h.regs.gpr[KINST_RDI] + 2 - kbase, 2) & 0xff00; }},
		{"*(rsi) == *(u64)rsi && *(u64)(rsi+8) != 0", [](const Hit &h) {
			return u(umem, h.regs.gpr[KINST_RSI] + 8 - ubase, 8) != 0; }},
		{"*(*(0xffffffff82000000)+8) == *(u64)(0x7f0000000000+32)", [](const Hit &) { return 1; }},
		{"tid >= 4", [](const Hit &h) { return h.tid >= 4; }},
	};
	for (uint64_t seed = 0; seed < 60; seed++) {
		Hit h = make_hit(seed);
		for (const auto &c : cases) {
			uint64_t want = c.want(h) != 0;
			int64_t got = eval(c.expr, h);
			if (got != (int64_t)want)
				ATF_FAIL(std::string(c.expr) + " seed " + std::to_string(seed) +
				    ": got " + std::to_string(got) + ", want " + std::to_string(want));
		}
	}
	// The value itself, not only its truth.
	Hit h = make_hit(5);
	uint64_t v;
	eval("rdx * 3 + 1", h, &v);
	ATF_REQUIRE_EQ(v, h.regs.gpr[KINST_RDX] * 3 + 1);
}

ATF_TEST_CASE_WITHOUT_HEAD(short_circuit_and_faults);
ATF_TEST_CASE_BODY(short_circuit_and_faults)
{
	Hit h = make_hit(1);
	h.regs.gpr[KINST_RAX] = 0;
	// A load through NULL faults; && / || must not reach it.
	ATF_REQUIRE_EQ(eval("rax != 0 && *(rax) == 1", h), 0);
	ATF_REQUIRE_EQ(eval("rax == 0 || *(rax) == 1", h), 1);
	ATF_REQUIRE_EQ(eval("*(rax) == 1", h), -1);
	ATF_REQUIRE_EQ(eval("*(u8)(0xffff800000000000 - 1)", h), -1);
	ATF_REQUIRE_EQ(eval("*(0x7f0000000000 + 4093)", h), -1);	// runs off the page
	// kinstctl(8)'s rule: a read that faults ends the predicate there (the
	// hit does not match), whatever follows; one never evaluated does not.
	ATF_REQUIRE_EQ(eval("*(u64)0x8000000000000000 == 0 || 1", h), -1);
	ATF_REQUIRE_EQ(eval("1 || *(u64)0x8000000000000000 == 0", h), 1);
	ATF_REQUIRE_EQ(eval("!(*(u64)0x8000000000000000 == 0)", h), -1);
}

ATF_TEST_CASE_WITHOUT_HEAD(errors);
ATF_TEST_CASE_BODY(errors)
{
	struct Bad {
		const char *expr;
		const char *column;
	};
	const Bad bad[] = {
		{"", "column 1:"}, {"rdx ==", "column 7:"}, {"rdx == 7 &&", "column 12:"},
		{"foo", "column 1:"}, {"rdx == 7)", "column 9:"}, {"(rdx", "column 5:"},
		{"comm", "column 5:"}, {"comm == dd", "column 9:"}, {"comm == \"dd", "column 9:"},
		{"0x", "column 1:"}, {"99999999999999999999", "column 1:"},
		{"rdx @ 1", "column 5:"}, {"*(u32)", "column 7:"},
	};
	for (const auto &b : bad) {
		try {
			kinst::compile_expr(b.expr, "--if");
			ATF_FAIL(std::string("accepted: ") + b.expr);
		} catch (const kinst::Error &e) {
			ATF_REQUIRE(e.code() == kinst::Exit::usage);
			std::string w = e.what();
			if (w.find(b.column) == std::string::npos ||
			    w.find('\n') != std::string::npos)
				ATF_FAIL(b.expr + std::string(" -> ") + w);
		}
	}
	// Over the module's limits: the compiler says so before the module would.
	// Left-nested parentheses keep one value pending per level.
	std::string rdeep;
	for (int i = 0; i < KINST_PROG_STACK + 1; i++)
		rdeep += "1+(";
	rdeep += "1";
	for (int i = 0; i < KINST_PROG_STACK + 1; i++)
		rdeep += ")";
	ATF_REQUIRE_THROW(kinst::Error, kinst::compile_expr(rdeep, "--if"));
	std::string loads = "1";
	for (int i = 0; i < KINST_PROG_MAX_LOADS + 1; i++)
		loads += " + *(u8)0x7f0000000000";
	ATF_REQUIRE_THROW(kinst::Error, kinst::compile_expr(loads, "--if"));
	std::string longe = "rdx";
	for (int i = 0; i < 200; i++)
		longe += " + 1";
	ATF_REQUIRE_THROW(kinst::Error, kinst::compile_expr(longe, "--if"));
}

// --mem/--str: the trace program (predicate, then captures) verified and
// run: the capture addresses equal what this test computes, a faulting
// read inside an address marks only that capture (DEREF), a false
// predicate captures nothing; the sections hold the bytes; bad arguments
// are usage errors naming the column.
ATF_TEST_CASE_WITHOUT_HEAD(captures);
ATF_TEST_CASE_BODY(captures)
{
	using kinst::Capture;
	std::vector<Capture> caps = {
		kinst::parse_capture("rsi+8:16", false),
		kinst::parse_capture("*(rdi+8)", true),
		kinst::parse_capture("*(u32)(rdi) + 0x7f0000000000:3", true),
	};
	ATF_REQUIRE_EQ(caps[0].len, 16u);
	ATF_REQUIRE_EQ(caps[1].len, (uint32_t)KINST_CAP_STR_MAX);
	ATF_REQUIRE_EQ(caps[2].expr, "*(u32)(rdi) + 0x7f0000000000");
	auto code = kinst::compile_trace_prog("rdx == 7", caps);
	static struct kinst_prog p;
	uint32_t bad;
	ATF_REQUIRE_EQ(kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad),
	    KINST_PV_OK);
	ATF_REQUIRE_EQ(p.ncaps, 3u);
	for (size_t i = 0; i < sizeof(umem); i++) {
		umem[i] = (uint8_t)('A' + i % 26);
		kmem[i] = (uint8_t)i;
	}
	umem[100] = 0;
	uint64_t up = ubase + 90, k32 = 50;
	memcpy(kmem + 8, &up, 8);	// *(rdi+8) = user + 90
	memcpy(kmem, &k32, 4);		// *(u32)(rdi) = 50
	Hit h = make_hit(7);
	h.regs.gpr[KINST_RDX] = 7;
	h.regs.gpr[KINST_RDI] = kbase;
	h.regs.gpr[KINST_RSI] = ubase + 40;
	struct kinst_prog_ctx c;
	memset(&c, 0, sizeof(c));
	c.regs = &h.regs;
	c.comm = h.comm;
	struct kinst_cap_set cs;
	uint64_t v;
	ATF_REQUIRE_EQ(kinst_prog_run_caps(&p, &c, &v, &cs), KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(cs.n, 3u);
	ATF_REQUIRE_EQ(cs.req[0].addr, ubase + 48);
	ATF_REQUIRE_EQ(cs.req[0].op, KINST_OP_MEM);
	ATF_REQUIRE_EQ(cs.req[1].addr, ubase + 90);
	ATF_REQUIRE_EQ(cs.req[1].op, KINST_OP_STR);
	ATF_REQUIRE_EQ(cs.req[2].addr, ubase + 50);
	ATF_REQUIRE_EQ(cs.req[2].len, 3u);
	for (uint32_t i = 0; i < 3; i++) {
		ATF_REQUIRE_EQ(cs.req[i].index, i);
		ATF_REQUIRE_EQ(cs.req[i].flags, 0);
	}
	uint8_t sec[KINST_CAP_SEC_BYTES(KINST_CAP_STR_MAX)];
	struct kinst_rec_cap rc;
	kinst_cap_section(&cs.req[1], sec);
	memcpy(&rc, sec + 8, sizeof(rc));
	ATF_REQUIRE_EQ(rc.size, 10u);
	ATF_REQUIRE(memcmp(sec + 24, umem + 90, 10) == 0);
	kinst_cap_section(&cs.req[0], sec);
	ATF_REQUIRE(memcmp(sec + 24, umem + 48, 16) == 0);

	// *(rdi+8) faults: that capture only; the predicate's result stands.
	h.regs.gpr[KINST_RDI] = kbase + 4096 - 4;
	ATF_REQUIRE_EQ(kinst_prog_run_caps(&p, &c, &v, &cs), KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(cs.n, 3u);
	ATF_REQUIRE_EQ(cs.req[0].flags, 0);
	ATF_REQUIRE_EQ(cs.req[1].flags, KINST_SECF_DEREF);
	ATF_REQUIRE_EQ(cs.req[2].flags, 0);
	// The predicate false: nothing captured.
	h.regs.gpr[KINST_RDX] = 8;
	ATF_REQUIRE_EQ(kinst_prog_run_caps(&p, &c, &v, &cs), KINST_PROG_FALSE);
	ATF_REQUIRE_EQ(cs.n, 0u);
	// Without --if: always true.
	code = kinst::compile_trace_prog("", caps);
	ATF_REQUIRE_EQ(kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad),
	    KINST_PV_OK);
	ATF_REQUIRE_EQ(kinst_prog_run_caps(&p, &c, &v, &cs), KINST_PROG_TRUE);
	ATF_REQUIRE_EQ(cs.n, 3u);
	ATF_REQUIRE(kinst::compile_trace_prog("", {}).empty());

	struct Bad {
		const char *arg;
		bool str;
		const char *want;
	};
	const Bad badargs[] = {
		{"rdi", false, "--mem rdi: column 4: expected ':LEN'"},
		{"rdi:0", false, "column 5: LEN must be 1 to 512"},
		{"rdi:513", false, "column 5: LEN must be 1 to 512"},
		{"rdi:99999999999999999999", false, "column 5: LEN must be 1 to 512"},
		{"rdi:-1", false, "column 5: expected a decimal LEN"},
		{"rdi:257", true, "--str rdi:257: column 5: MAX must be 1 to 256"},
		{"rdi:0", true, "column 5: MAX must be 1 to 256"},
		{"rdi+:8", false, "column 5:"},
		{":8", false, "column 1: empty expression"},
		{"(rsi", true, "column 5:"},
	};
	for (const auto &b : badargs) {
		try {
			kinst::parse_capture(b.arg, b.str);
			ATF_FAIL(std::string("accepted: ") + b.arg);
		} catch (const kinst::Error &e) {
			ATF_REQUIRE(e.code() == kinst::Exit::usage);
			std::string w = e.what();
			if (w.find(b.want) == std::string::npos || w.find('\n') != std::string::npos)
				ATF_FAIL(b.arg + std::string(" -> ") + w);
		}
	}
	ATF_REQUIRE_EQ(kinst::parse_capture("rsi:256", true).len, 256u);
	ATF_REQUIRE_EQ(kinst::parse_capture("rsi:512", false).len, 512u);
	// Over the limits together: usage errors before the module sees them.
	std::vector<Capture> many(KINST_CAP_MAX + 1, kinst::parse_capture("rsi", true));
	ATF_REQUIRE_THROW(kinst::Error, kinst::compile_trace_prog("", many));
	std::vector<Capture> big(5, kinst::parse_capture("rsi:512", false));
	ATF_REQUIRE_THROW(kinst::Error, kinst::compile_trace_prog("", big));
	big.pop_back();
	(void)kinst::compile_trace_prog("", big);
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, values);
	ATF_ADD_TEST_CASE(tcs, short_circuit_and_faults);
	ATF_ADD_TEST_CASE(tcs, errors);
	ATF_ADD_TEST_CASE(tcs, captures);
}
