// SPDX-License-Identifier: BSD-2-Clause
// kinstctl cover internals (cli/plan/cover.cc) on synthetic counts: the jcc
// condition table against the engine's, basic blocks, exact taken /
// not-taken counts from flag-keyed counts (including a jcc whose
// fall-through is also a branch target, where successor counts would give
// the wrong answer), the loop family, refused instructions, and the JSON
// and HTML renderings holding the same counts.
#include <atf-c++.hpp>

#include <map>
#include <string>
#include <vector>

#include "plan/cover.h"
#include "symbols/resolver.h"

extern "C" {
#include "x86/kinst_emulate.h"
}

using namespace kinst;

namespace {

// The covtest body (tests/vm/testmod/kinst_covtest.c) with a plain ret:
//   0 xor; 2 test rdi; 5 je 0xf; 7 add; a dec; d jne 0x7; f test rsi;
//  12 jne 0x18; 14 add $1; 18 cmp $0xdead; 1f jne 0x23; 21 xor; 23 ret
const uint8_t covbody[] = {
	0x31, 0xc0, 0x48, 0x85, 0xff, 0x74, 0x08, 0x48, 0x01, 0xf8, 0x48, 0xff,
	0xcf, 0x75, 0xf8, 0x48, 0x85, 0xf6, 0x75, 0x04, 0x48, 0x83, 0xc0, 0x01,
	0x48, 0x81, 0xfe, 0xad, 0xde, 0x00, 0x00, 0x75, 0x02, 0x31, 0xc0, 0xc3,
};
const uint64_t base = 0xffffffffc0001000ull;
const uint64_t ZF = 0x40, PF = 0x4, CF = 0x1, SF = 0x80;

// 3 calls with trips 7, dir 1 and 2 with trips 0, dir 0, as keyed counts:
// every instruction one key, the jccs split by the flags they saw.
std::map<uint32_t, std::vector<CoverKeyCount>>
body_keys()
{
	std::map<uint32_t, std::vector<CoverKeyCount>> k;
	auto one = [&](uint32_t off, uint64_t n) { k[off] = {{0, 0, n}}; };
	one(0x0, 5);
	one(0x2, 5);
	k[0x5] = {{PF, 0, 3}, {ZF | PF, 0, 2}};		// je: trips 0 twice
	one(0x7, 21);
	one(0xa, 21);
	k[0xd] = {{0, 0, 10}, {PF, 0, 8}, {ZF | PF, 0, 3}};	// jne 1b: 18 taken
	one(0xf, 5);
	k[0x12] = {{0, 0, 3}, {ZF | PF, 0, 2}};		// jne 4f: dir 1 thrice
	one(0x14, 2);
	one(0x18, 5);
	k[0x1f] = {{CF, 0, 2}, {SF, 0, 3}};		// jne 5f: never equal
	one(0x21, 0);
	one(0x23, 5);
	return k;
}

struct Fixture {
	Disassembler dis{Syntax::att};
	std::vector<Insn> insns;
	std::vector<CoverInput> in;

	Fixture(const uint8_t *b, size_t n, uint64_t addr,
	    const std::map<uint32_t, std::vector<CoverKeyCount>> &keys)
	{
		insns = walk_function(Bytes{b, n}, addr, dis);
		for (const auto &i : insns) {
			CoverInput x;
			x.insn = &i;
			Disassembler::Text t = dis.one(i.bytes, i.len, i.addr);
			x.text = t.mnemonic + " " + t.operands;
			auto it = keys.find(i.offset);
			x.armed = it != keys.end();
			if (x.armed)
				x.keys = it->second;
			in.push_back(x);
		}
	}
};

const CoverInsn &
at(const CoverFunction &f, uint32_t off)
{
	for (const auto &c : f.insns)
		if (c.offset == off)
			return c;
	ATF_FAIL("no instruction at +" + std::to_string(off));
	return f.insns[0];
}

CoverFunction
build_body()
{
	static Fixture fx(covbody, sizeof(covbody), base, body_keys());
	return cover_build("kinst_covtest", "kinst_covtest_body", base, sizeof(covbody),
	    fx.in, false);
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(cond_matches_engine);
ATF_TEST_CASE_BODY(cond_matches_engine)
{
	// Every condition, every combination of the six arithmetic flags.
	for (unsigned cc = 0; cc < 16; cc++)
		for (unsigned m = 0; m < 64; m++) {
			static const uint64_t bit[6] = {0x1, 0x4, 0x10, 0x40, 0x80, 0x800};
			uint64_t fl = 0x2;
			for (int b = 0; b < 6; b++)
				if (m & (1u << b))
					fl |= bit[b];
			if (cover_cond(cc, fl) != kinst_cond(cc, fl))
				ATF_FAIL("cc " + std::to_string(cc) + " flags " +
				    std::to_string(fl) + ": cover_cond differs from kinst_cond");
		}
}

ATF_TEST_CASE_WITHOUT_HEAD(flow_of_instructions);
ATF_TEST_CASE_BODY(flow_of_instructions)
{
	FlowInfo f = cover_flow(covbody + 5, 2, base + 5);
	ATF_REQUIRE(f.flow == Flow::jcc);
	ATF_REQUIRE_EQ(f.cc, 4u);
	ATF_REQUIRE_EQ(f.target, base + 0xf);
	f = cover_flow(covbody + 0xd, 2, base + 0xd);
	ATF_REQUIRE(f.flow == Flow::jcc);
	ATF_REQUIRE_EQ(f.target, base + 7);
	static const uint8_t jcc32[] = {0x0f, 0x85, 0x10, 0x00, 0x00, 0x00};
	f = cover_flow(jcc32, sizeof(jcc32), 0x1000);
	ATF_REQUIRE(f.flow == Flow::jcc && f.cc == 5 && f.target == 0x1016);
	static const uint8_t jmpind[] = {0xff, 0xe0}, callind[] = {0xff, 0xd0};
	static const uint8_t ud2[] = {0x0f, 0x0b}, ret[] = {0xc3}, jmp[] = {0xeb, 0xfe};
	static const uint8_t call[] = {0xe8, 0, 0, 0, 0};
	ATF_REQUIRE(cover_flow(jmpind, 2, 0).flow == Flow::jmp_ind);
	ATF_REQUIRE(cover_flow(callind, 2, 0).flow == Flow::next);
	ATF_REQUIRE(cover_flow(call, 5, 0).flow == Flow::next);
	ATF_REQUIRE(cover_flow(ud2, 2, 0).flow == Flow::stop);
	ATF_REQUIRE(cover_flow(ret, 1, 0).flow == Flow::ret);
	f = cover_flow(jmp, 2, 0x40);
	ATF_REQUIRE(f.flow == Flow::jmp && f.target == 0x40);
}

ATF_TEST_CASE_WITHOUT_HEAD(blocks_and_counts);
ATF_TEST_CASE_BODY(blocks_and_counts)
{
	CoverFunction f = build_body();
	ATF_REQUIRE_EQ(f.insns.size(), 13u);
	// Leaders: the entry, targets (7, f, 18, 23), after branches (7, f, 14, 21).
	std::vector<uint32_t> leaders;
	for (const auto &c : f.insns)
		if (c.leader)
			leaders.push_back(c.offset);
	ATF_REQUIRE(leaders == (std::vector<uint32_t>{0x0, 0x7, 0xf, 0x14, 0x18, 0x21, 0x23}));
	std::vector<uint64_t> bc;
	for (const auto &b : f.blocks)
		bc.push_back(b.count);
	ATF_REQUIRE(bc == (std::vector<uint64_t>{5, 21, 5, 2, 5, 0, 5}));
	ATF_REQUIRE_EQ(at(f, 0xa).block, 1u);
	ATF_REQUIRE_EQ(at(f, 0x1f).block, 4u);
	ATF_REQUIRE_EQ(at(f, 0x7).count, 21u);
	ATF_REQUIRE_EQ(f.executed, 12u);
	ATF_REQUIRE_EQ(f.blocks_executed, 6u);
	ATF_REQUIRE_EQ(at(f, 0xd).target_offset, 0x7u);
	ATF_REQUIRE(!at(f, 0x23).target_inside);
}

ATF_TEST_CASE_WITHOUT_HEAD(branch_counts_exact);
ATF_TEST_CASE_BODY(branch_counts_exact)
{
	CoverFunction f = build_body();
	const CoverInsn &je = at(f, 0x5);
	ATF_REQUIRE(je.conditional && je.branch_known);
	ATF_REQUIRE_EQ(je.taken, 2u);
	ATF_REQUIRE_EQ(je.not_taken, 3u);
	// The loop's jne falls through to +0xf, which the je also jumps to:
	// count(+0xf) = 5, but the jne fell through only 3 times.
	const CoverInsn &back = at(f, 0xd);
	ATF_REQUIRE_EQ(back.taken, 18u);
	ATF_REQUIRE_EQ(back.not_taken, 3u);
	ATF_REQUIRE_EQ(at(f, 0xf).count, 5u);
	ATF_REQUIRE(at(f, 0xf).leader);
	const CoverInsn &dir = at(f, 0x12);
	ATF_REQUIRE_EQ(dir.taken, 3u);
	ATF_REQUIRE_EQ(dir.not_taken, 2u);
	const CoverInsn &dead = at(f, 0x1f);
	ATF_REQUIRE_EQ(dead.taken, 5u);
	ATF_REQUIRE_EQ(dead.not_taken, 0u);
	// taken + not taken = the branch's own count, every time.
	for (const auto &c : f.insns)
		if (c.conditional)
			ATF_REQUIRE_EQ(c.taken + c.not_taken, c.count);
}

ATF_TEST_CASE_WITHOUT_HEAD(loop_family);
ATF_TEST_CASE_BODY(loop_family)
{
	// 0 loop 0x0 (itself); 2 jrcxz 0x4; 4 ret
	static const uint8_t code[] = {0xe2, 0xfe, 0xe3, 0x00, 0xc3};
	std::map<uint32_t, std::vector<CoverKeyCount>> k;
	// loop: rcx 1 once (falls through), other 4 times, zero once (wraps: taken).
	k[0] = {{0, COVER_RCX_OTHER, 4}, {ZF, COVER_RCX_ONE, 1}, {0, COVER_RCX_ZERO, 1}};
	k[2] = {{0, COVER_RCX_ZERO, 2}, {0, COVER_RCX_OTHER, 3}};
	k[4] = {{0, 0, 5}};
	Fixture fx(code, sizeof(code), 0x2000, k);
	CoverFunction f = cover_build("m", "f", 0x2000, sizeof(code), fx.in, true);
	ATF_REQUIRE(at(f, 0).branch_known);
	ATF_REQUIRE_EQ(at(f, 0).taken, 5u);
	ATF_REQUIRE_EQ(at(f, 0).not_taken, 1u);
	ATF_REQUIRE_EQ(at(f, 2).taken, 2u);
	ATF_REQUIRE_EQ(at(f, 2).not_taken, 3u);
	// Without %rcx in the key, unknown ("?"), never guessed.
	CoverFunction g = cover_build("m", "f", 0x2000, sizeof(code), fx.in, false);
	ATF_REQUIRE(!at(g, 0).branch_known);
	ATF_REQUIRE(!at(g, 2).branch_known);
	ATF_REQUIRE(cover_text(g, Style()).find("taken ?, not taken ?") != std::string::npos);
}

ATF_TEST_CASE_WITHOUT_HEAD(refused_not_zero);
ATF_TEST_CASE_BODY(refused_not_zero)
{
	std::map<uint32_t, std::vector<CoverKeyCount>> k = body_keys();
	k.erase(0x0);
	k.erase(0x2);
	Fixture fx(covbody, sizeof(covbody), base, k);
	fx.insns[0].cls.treatment = KINST_T_REFUSE;
	fx.insns[0].cls.reason = KINST_R_INT3;
	CoverFunction f = cover_build("m", "f", base, sizeof(covbody), fx.in, false);
	ATF_REQUIRE(at(f, 0).state == CovState::refused);
	ATF_REQUIRE(at(f, 2).state == CovState::not_armed);
	ATF_REQUIRE_EQ(f.refused, 1u);
	ATF_REQUIRE_EQ(f.not_armed, 1u);
	// Block 0's count is its first counted instruction's (the je).
	ATF_REQUIRE(f.blocks[0].known);
	ATF_REQUIRE_EQ(f.blocks[0].count, 5u);
	CoverRun r;
	for (const auto &j : cover_json(f, r))
		if (j["type"] == "cover_insn" && j["offset"] == 0) {
			ATF_REQUIRE(j["count"].is_null());
			ATF_REQUIRE_EQ(j["state"].get<std::string>(), "refused");
			ATF_REQUIRE(!j["reason"].get<std::string>().empty());
		}
	std::string t = cover_text(f, Style());
	ATF_REQUIRE(t.find("refused  xor") != std::string::npos);
}

ATF_TEST_CASE_WITHOUT_HEAD(json_and_html_agree);
ATF_TEST_CASE_BODY(json_and_html_agree)
{
	CoverFunction f = build_body();
	f.insns[3].text = "a<b & \"c\"";	// escaping
	CoverRun r;
	r.source_note = cover_line_info_missing();
	std::vector<nlohmann::json> js = cover_json(f, r);
	ATF_REQUIRE_EQ(js.size(), 1 + f.insns.size());
	ATF_REQUIRE_EQ(js[0]["type"].get<std::string>(), "cover_function");
	ATF_REQUIRE_EQ(js[0]["blocks"].size(), 7u);
	ATF_REQUIRE_EQ(js[0]["blocks"][5]["count"].get<uint64_t>(), 0u);
	ATF_REQUIRE_EQ(js[0]["never_executed"].get<uint64_t>(), 1u);
	std::string h = cover_html({f}, r);
	ATF_REQUIRE(h.find("<!DOCTYPE html>") == 0);
	ATF_REQUIRE(h.find("http") == std::string::npos);
	ATF_REQUIRE(h.find(" src=") == std::string::npos);
	ATF_REQUIRE(h.find("a&lt;b &amp; &quot;c&quot;") != std::string::npos);
	ATF_REQUIRE(h.find("a<b") == std::string::npos);
	ATF_REQUIRE(h.find("cover nosrc") != std::string::npos);
	for (size_t i = 1; i < js.size(); i++) {
		const nlohmann::json &j = js[i];
		std::string row = "data-offset=\"" + std::to_string(j["offset"].get<uint32_t>()) +
		    "\" data-count=\"" + std::to_string(j["count"].get<uint64_t>()) + "\"";
		if (j.contains("taken"))
			row += " data-taken=\"" + std::to_string(j["taken"].get<uint64_t>()) +
			    "\" data-not-taken=\"" + std::to_string(j["not_taken"].get<uint64_t>()) + "\"";
		if (h.find(row) == std::string::npos)
			ATF_FAIL("no row " + row + " in the HTML");
	}
	ATF_REQUIRE(h.find("<tr class=\"never leader\" data-offset=\"33\"") != std::string::npos);
	ATF_REQUIRE_EQ(js[6]["offset"].get<uint32_t>(), 0xdu);
	ATF_REQUIRE_EQ(js[6]["taken"].get<uint64_t>(), 18u);
	ATF_REQUIRE_EQ(js[6]["not_taken"].get<uint64_t>(), 3u);
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, cond_matches_engine);
	ATF_ADD_TEST_CASE(tcs, flow_of_instructions);
	ATF_ADD_TEST_CASE(tcs, blocks_and_counts);
	ATF_ADD_TEST_CASE(tcs, branch_counts_exact);
	ATF_ADD_TEST_CASE(tcs, loop_family);
	ATF_ADD_TEST_CASE(tcs, refused_not_zero);
	ATF_ADD_TEST_CASE(tcs, json_and_html_agree);
}
