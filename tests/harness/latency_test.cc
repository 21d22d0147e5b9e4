// SPDX-License-Identifier: BSD-2-Clause
// Return points and latency (issue 27) on the breakpoint harness: kinstctl's
// own planning (returns.h: return_points(), offline on this very
// executable; latency.h: the start and end programs) run through the engine
// at real breakpoints, against the single-step ground truth.
//
// return_points: every corpus function, every input: each instruction by
// which an activation leaves the function in the stepped run (the next
// stepped state is above the activation's entry stack pointer, or there is
// none) is one of kinstctl's return points, and at every return point
// kinstctl names the activation does leave (a conditional one: or falls
// through).  Exits through the function's own .cold/.part code are the one
// allowed exception, counted.
//
// func_latency / from_to: every boundary armed (so every executed
// instruction is a hit), a fake clock that the SIGTRAP handler advances by
// a weight per instruction (kh_clock_weight), and latency's programs at the
// start and end points, their VALUE turned into a VAL capture so that the
// record carries what the kernel would aggregate: each sample must equal
// the sum of the weights of the hits after its start up to its end, which
// the test computes from the stepped run (recursive activations included);
// an end with no open start, or a conditional return point not taken, makes
// no record.
#include <atf-c++.hpp>

#include "kh_self.h"

#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "debuginfo/btf_types.h"
#include "symbols/disasm.h"
#include "base/text.h"
#include "base/error.h"
#include "commands/latency.h"
#include "plan/prog_compile.h"
#include "base/record.h"
#include "symbols/resolver.h"
#include "symbols/returns.h"
#include "symbols/sources.h"
#include "base/spec.h"
#include "symbols/symbols.h"

extern "C" {
#include "kh.h"
#include "kh_core.h"
#include "kinst_prog.h"
#include "x86/kinst_decode.h"
extern const struct kh_fn kh_corpus_vars[];
uint64_t lt_leaf(uint64_t), lt_thunk(uint64_t), lt_cond(uint64_t), lt_rec(uint64_t),
    lt_retimm(uint64_t);
}

namespace {

#define	E(n, ni, ...)	{ #n, (void *)n, 0, ni, { __VA_ARGS__ } }
const struct kh_fn kh_corpus_lat[] = {
	E(lt_leaf, 2, { 0 }, { 5 }),
	E(lt_thunk, 2, { 1 }, { 7 }),
	E(lt_cond, 7, { 0 }, { 1 }, { 2 }, { 3 }, { 4 }, { 5 }, { 6 }),
	E(lt_rec, 4, { 0 }, { 1 }, { 3 }, { 5 }),
	E(lt_retimm, 2, { 0 }, { 9 }),
	{ nullptr, nullptr, 0, 0, { { 0 } } },
};
#undef E

constexpr uint64_t tag = 0x6c6174;

// This executable's symbols and code, as kinstctl reads a kernel file.
struct Image {
	kinst::SymbolTable syms;
	kinst::Disassembler dis{kinst::Syntax::att};
	Image()
	{
		kinst::SourceOptions so;
		so.kernel = kh_self_path();
		kinst::load_symbols(so, syms);
	}
	// kinstctl's return points of fn, by offset; its entry (after endbr64).
	std::map<uint32_t, kinst::ReturnPoint> returns(const char *fn, uint32_t *entry)
	{
		kinst::Target t = kinst::resolve_target(kinst::parse_spec(fn), syms);
		kinst::Module &m = syms.module(t.module);
		kinst::Bytes b = m.bytes(*t.fn);
		std::vector<kinst::Insn> insns = kinst::walk_function(b, t.fn->addr, dis);
		std::map<uint32_t, kinst::ReturnPoint> out;
		for (const auto &r : kinst::return_points(syms, m, *t.fn, insns))
			out[r.offset] = r;
		*entry = kinst::entry_offset(b.data, b.size, [](uint32_t) { return false; });
		return out;
	}
};

Image &
image()
{
	static Image im;
	return im;
}

// A loaded corpus function: its boundaries.
struct Loaded {
	const uint32_t *offs = nullptr;
	uint32_t nb = 0;
	uint64_t start = 0;
	struct kh_stats st;
	std::map<uint32_t, uint32_t> bi_of;
	explicit Loaded(const struct kh_fn *fn)
	{
		memset(&st, 0, sizeof(st));
		ATF_REQUIRE_EQ(kh_vars_load(fn, &offs, &nb, &start, &st), 0);
		for (uint32_t b = 0; b < nb; b++)
			bi_of[offs[b]] = b;
	}
};

// The stepped run's activations: for each state, the index of the
// activation it belongs to, and whether the activation leaves there.
struct Walk {
	std::vector<uint32_t> act;	// state -> activation
	std::vector<bool> exits;	// state: the activation leaves after it
	std::vector<uint64_t> frame;	// activation -> rsp at offset 0
	std::vector<uint32_t> first;	// activation -> its first state
};

Walk
walk(const struct kh_vrun &vr, uint64_t start)
{
	Walk w;
	std::vector<uint32_t> open;
	w.act.resize(vr.ngt);
	w.exits.assign(vr.ngt, false);
	for (uint32_t i = 0; i < vr.ngt; i++) {
		uint64_t rsp = vr.gt[i].gpr[KINST_RSP];
		while (!open.empty() && w.frame[open.back()] < rsp)
			open.pop_back();	// returned: this state is an outer one's
		if (vr.gt[i].rip == start &&
		    (open.empty() || rsp < w.frame[open.back()])) {
			open.push_back((uint32_t)w.frame.size());
			w.frame.push_back(rsp);
			w.first.push_back(i);
		}
		if (open.empty())
			ATF_FAIL("a stepped state outside every activation");
		w.act[i] = open.back();
		w.exits[i] = i + 1 == vr.ngt || vr.gt[i + 1].gpr[KINST_RSP] > w.frame[open.back()];
	}
	return w;
}

// The records of a run, in order.
std::vector<kinst::HitRecord>
records(const struct kh_vrun &vr)
{
	std::vector<kinst::HitRecord> out;
	for (size_t off = 0; off + sizeof(struct kinst_rec_hdr) <= vr.nbytes;) {
		const auto *h = (const struct kinst_rec_hdr *)(vr.recs + off);
		out.push_back(kinst::parse_hit_record(vr.recs + off, h->size));
		off += h->size;
	}
	return out;
}

// Programs verified once (kinst_prog), by their code.
struct Progs {
	std::map<std::string, std::unique_ptr<struct kinst_prog>> m;
	const struct kinst_prog *get(std::vector<struct kinst_pinsn> code, bool value_as_capture)
	{
		if (value_as_capture)
			for (auto &in : code)
				if (in.op == KINST_OP_VALUE)
					in.op = KINST_OP_VAL;
		std::string key((const char *)code.data(), code.size() * sizeof(code[0]));
		auto it = m.find(key);
		if (it != m.end())
			return it->second.get();
		auto p = std::make_unique<struct kinst_prog>();
		uint32_t bad = 0;
		int v = kinst_prog_verify(code.data(), (uint32_t)code.size(), p.get(), &bad);
		if (v != KINST_PV_OK)
			ATF_FAIL("a latency program is refused at " + std::to_string(bad) +
			    ": verdict " + std::to_string(v));
		return (m[key] = std::move(p)).get();
	}
};

const struct kh_fn *const tables[] = { kh_corpus_o0, kh_corpus_o2, kh_corpus_o2np,
	kh_corpus_asm, kh_corpus_vars, kh_corpus_lat, nullptr };

struct Totals {
	uint64_t functions = 0, exits = 0, points_hit = 0, not_taken = 0, own_part = 0;
	uint64_t kinds[5] = {};
	uint64_t samples = 0, nested = 0, misses = 0, mismatches = 0;
};

template <typename F>
void
each_function(F f)
{
	char err[256];
	if (kh_setup(err, sizeof(err)) != 0)
		ATF_FAIL(std::string("harness setup: ") + err);
	for (const struct kh_fn *const *t = tables; *t != nullptr; t++)
		for (const struct kh_fn *fn = *t; fn->name != nullptr; fn++)
			if (kh_unsupported(fn) == nullptr)
				f(fn);
}

// The value a record's VAL capture carries.
bool
value_of(const kinst::HitRecord &r, uint64_t *v)
{
	for (const auto &c : r.caps)
		if (c.value && c.bytes.size() == 8 && (c.flags & KINST_SECF_NOSTATE) == 0) {
			memcpy(v, c.bytes.data(), 8);
			return true;
		}
	return false;
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(return_points);
ATF_TEST_CASE_BODY(return_points)
{
	Totals t;
	each_function([&](const struct kh_fn *fn) {
		Loaded L(fn);
		uint32_t entry;
		std::map<uint32_t, kinst::ReturnPoint> rp = image().returns(fn->name, &entry);
		std::vector<struct kh_varm> arm(L.nb, {nullptr, 0, 0});
		t.functions++;
		for (const auto &r : rp)
			t.kinds[(int)r.second.kind]++;
		for (uint32_t in = 0; in < fn->ninputs; in++) {
			struct kh_vrun vr;
			if (kh_vars_run(fn, (int)in, arm.data(), nullptr, nullptr, &vr, &L.st) != 0)
				ATF_FAIL(std::string(fn->name) + ": the run failed (see stdout)");
			Walk w = walk(vr, L.start);
			for (uint32_t i = 0; i < vr.ngt; i++) {
				uint32_t o = (uint32_t)(vr.gt[i].rip - L.start);
				std::string where = std::string(fn->name) + "+" + std::to_string(o) +
				    " input " + std::to_string(in) + " state " + std::to_string(i);
				auto it = rp.find(o);
				if (w.exits[i]) {
					t.exits++;
					if (it != rp.end())
						continue;
					// A jump to the function's own cold part leaves
					// its symbol's range but not the call.
					kinst::Target tg = kinst::resolve_target(
					    kinst::parse_spec(fn->name), image().syms);
					kinst::Module &m = image().syms.module(tg.module);
					kinst::Bytes b = m.bytes(*tg.fn);
					std::vector<kinst::Insn> ins = kinst::walk_function(b, tg.fn->addr,
					    image().dis);
					bool own = false;
					for (const auto &x : ins) {
						struct kinst_insn d;
						if (x.offset != o || x.bytes == nullptr ||
						    kinst_decode(x.bytes, x.len, &d) != KINST_DEC_OK)
							continue;
						uint64_t to = x.addr + x.len + (uint64_t)d.imm;
						for (const auto &ref : image().syms.containing(to))
							own = own || image().syms.function(ref).name.rfind(
							    std::string(fn->name) + ".", 0) == 0;
					}
					if (!own)
						ATF_FAIL(where + ": the activation leaves here, and kinstctl "
						    "names no return point");
					t.own_part++;
					continue;
				}
				if (it == rp.end())
					continue;
				t.points_hit++;
				if (it->second.leaves_if.empty())
					ATF_FAIL(where + ": kinstctl's return point (" +
					    kinst::return_text(it->second) + ") does not leave");
				// Conditional, not taken: it goes on in the function
				// (a jCC falls through; a jump table's jump lands).
				bool on = i + 1 < vr.ngt && vr.gt[i + 1].gpr[KINST_RSP] ==
				    vr.gt[i].gpr[KINST_RSP];
				if (on && it->second.cc >= 0)
					for (uint32_t b = 0; b + 1 < L.nb; b++)
						if (L.offs[b] == o)
							on = vr.gt[i + 1].rip == L.start + L.offs[b + 1];
				if (!on)
					ATF_FAIL(where + ": a conditional return point (" +
					    kinst::return_text(it->second) + ") neither left nor went on");
				t.not_taken++;
			}
		}
	});
	printf("return_points: %ju functions; exits %ju (through their own part %ju); "
	    "conditional return points not taken %ju (of %ju hits that did not leave); kinds: ret %ju, "
	    "ret-imm %ju, rethunk %ju, tail-call %ju, tail-call-indirect %ju\n",
	    (uintmax_t)t.functions, (uintmax_t)t.exits, (uintmax_t)t.own_part,
	    (uintmax_t)t.not_taken, (uintmax_t)t.points_hit, (uintmax_t)t.kinds[0],
	    (uintmax_t)t.kinds[1], (uintmax_t)t.kinds[2], (uintmax_t)t.kinds[3],
	    (uintmax_t)t.kinds[4]);
	// The corpus exercises every kind.
	for (int k = 0; k < 5; k++)
		ATF_REQUIRE(t.kinds[k] > 0);
	ATF_REQUIRE(t.exits > 100);
	ATF_REQUIRE(t.not_taken > 0);
}

ATF_TEST_CASE_WITHOUT_HEAD(func_latency);
ATF_TEST_CASE_BODY(func_latency)
{
	Totals t;
	Progs progs;
	const struct kinst_prog *start = progs.get(kinst::latency_start_program(true, {}, tag), false);
	kh_fake_clock = 1;
	each_function([&](const struct kh_fn *fn) {
		Loaded L(fn);
		uint32_t entry;
		std::map<uint32_t, kinst::ReturnPoint> rp = image().returns(fn->name, &entry);
		if (rp.empty() || rp.count(entry) || !L.bi_of.count(entry))
			return;		// latency refuses these
		std::vector<struct kh_varm> arm(L.nb, {nullptr, 1, 0});
		uint32_t eb = L.bi_of.at(entry);
		arm[eb].prog = start;
		for (const auto &r : rp)
			arm[L.bi_of.at(r.first)].prog = progs.get(
			    kinst::latency_end_program(true, tag, r.second.leaves_if, {}), true);
		t.functions++;
		for (uint32_t in = 0; in < fn->ninputs; in++) {
			struct kh_vrun vr;
			if (kh_vars_run(fn, (int)in, arm.data(), nullptr, nullptr, &vr, &L.st) != 0)
				ATF_FAIL(std::string(fn->name) + ": the run failed (see stdout)");
			if (!arm[eb].armed)
				return;
			Walk w = walk(vr, L.start);
			std::vector<kinst::HitRecord> recs = records(vr);
			// Each activation's start: its state at the entry probe,
			// and the fake clock summed over armed states.
			std::vector<int64_t> started(w.frame.size(), -1);
			std::vector<uint64_t> clock(vr.ngt + 1, 0);
			size_t ri = 0;
			for (uint32_t i = 0; i < vr.ngt; i++) {
				uint64_t rip = vr.gt[i].rip;
				uint32_t o = (uint32_t)(rip - L.start);
				uint32_t b = L.bi_of.at(o);
				clock[i + 1] = clock[i] + (arm[b].armed ? kh_clock_weight(rip) : 0);
				std::string where = std::string(fn->name) + "+" + std::to_string(o) +
				    " input " + std::to_string(in) + " state " + std::to_string(i);
				if (!arm[b].armed)
					continue;
				if (b == eb) {
					started[w.act[i]] = i;
					continue;	// no record: the start aggregates nothing
				}
				auto it = rp.find(o);
				bool sample = it != rp.end() && w.exits[i] && started[w.act[i]] >= 0;
				bool record = it == rp.end() || sample;
				if (it != rp.end() && !sample && started[w.act[i]] < 0 && w.exits[i])
					t.misses++;
				if (!record)
					continue;
				if (ri >= recs.size())
					ATF_FAIL(where + ": no record");
				const kinst::HitRecord &r = recs[ri++];
				if (r.hit.addr != rip)
					ATF_FAIL(where + ": the record is of another instruction");
				if (!sample)
					continue;
				uint64_t got, want = clock[i + 1] - clock[started[w.act[i]] + 1];
				if (!value_of(r, &got))
					ATF_FAIL(where + ": the end's record has no value");
				if (got != want) {
					printf("MISMATCH %s: %ju, want %ju\n", where.c_str(),
					    (uintmax_t)got, (uintmax_t)want);
					t.mismatches++;
				}
				t.samples++;
				if (w.act[i] > 0)
					t.nested++;
				started[w.act[i]] = -1;
			}
			if (ri != recs.size())
				ATF_FAIL(std::string(fn->name) + ": more records than expected");
		}
	});
	kh_fake_clock = 0;
	printf("func_latency: %ju functions, %ju samples (%ju of inner activations), "
	    "%ju mismatches\n", (uintmax_t)t.functions, (uintmax_t)t.samples,
	    (uintmax_t)t.nested, (uintmax_t)t.mismatches);
	ATF_REQUIRE_EQ(t.mismatches, 0u);
	ATF_REQUIRE(t.samples > 200);
	ATF_REQUIRE(t.nested > 10);	// recursion: fib_rec, lt_rec
}

ATF_TEST_CASE_WITHOUT_HEAD(from_to);
ATF_TEST_CASE_BODY(from_to)
{
	Totals t;
	Progs progs;
	const struct kinst_prog *from = progs.get(kinst::latency_start_program(false, {}, tag), false);
	const struct kinst_prog *to = progs.get(kinst::latency_end_program(false, tag, "", {}), true);
	kh_fake_clock = 1;
	each_function([&](const struct kh_fn *fn) {
		Loaded L(fn);
		if (L.nb < 3)
			return;
		t.functions++;
		// Pairs: the first boundary to a few others, a middle one to the
		// last, and back (TO before FROM in the code: loops).
		std::vector<std::pair<uint32_t, uint32_t>> pairs;
		for (uint32_t k = 1; k <= 4 && k < L.nb; k++)
			pairs.push_back({0, k * (L.nb - 1) / 4});
		pairs.push_back({L.nb / 2, L.nb - 1});
		pairs.push_back({L.nb - 1, L.nb / 2});
		pairs.push_back({L.nb / 3, 1});
		for (const auto &pr : pairs) {
			if (pr.first == pr.second)
				continue;
			std::vector<struct kh_varm> arm(L.nb, {nullptr, 1, 0});
			arm[pr.first].prog = from;
			arm[pr.second].prog = to;
			for (uint32_t in = 0; in < fn->ninputs; in++) {
				struct kh_vrun vr;
				if (kh_vars_run(fn, (int)in, arm.data(), nullptr, nullptr, &vr,
				    &L.st) != 0)
					ATF_FAIL(std::string(fn->name) + ": the run failed (see stdout)");
				if (!arm[pr.first].armed || !arm[pr.second].armed)
					break;
				std::vector<kinst::HitRecord> recs = records(vr);
				size_t ri = 0;
				uint64_t clock = 0;
				int64_t opened = -1;	// the clock at the open FROM
				for (uint32_t i = 0; i < vr.ngt; i++) {
					uint64_t rip = vr.gt[i].rip;
					uint32_t b = L.bi_of.at((uint32_t)(rip - L.start));
					if (!arm[b].armed)
						continue;
					clock += kh_clock_weight(rip);
					std::string where = std::string(fn->name) + " boundary " +
					    std::to_string(b) + " input " + std::to_string(in) +
					    " state " + std::to_string(i);
					if (b == pr.first) {
						opened = (int64_t)clock;	// replaces an open one
						continue;
					}
					if (b == pr.second && opened < 0) {
						t.misses++;
						continue;	// no start: no record
					}
					if (ri >= recs.size())
						ATF_FAIL(where + ": no record");
					const kinst::HitRecord &r = recs[ri++];
					if (r.hit.addr != rip)
						ATF_FAIL(where + ": the record is of another instruction");
					if (b != pr.second)
						continue;
					uint64_t got, want = clock - (uint64_t)opened;
					if (!value_of(r, &got))
						ATF_FAIL(where + ": TO's record has no value");
					if (got != want) {
						printf("MISMATCH %s: %ju, want %ju\n", where.c_str(),
						    (uintmax_t)got, (uintmax_t)want);
						t.mismatches++;
					}
					t.samples++;
					opened = -1;
				}
				if (ri != recs.size())
					ATF_FAIL(std::string(fn->name) + ": more records than expected");
			}
		}
	});
	kh_fake_clock = 0;
	printf("from_to: %ju functions, %ju samples, %ju TO hits with no FROM open, "
	    "%ju mismatches\n", (uintmax_t)t.functions, (uintmax_t)t.samples,
	    (uintmax_t)t.misses, (uintmax_t)t.mismatches);
	ATF_REQUIRE_EQ(t.mismatches, 0u);
	ATF_REQUIRE(t.samples > 500);
	ATF_REQUIRE(t.misses > 0);
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, return_points);
	ATF_ADD_TEST_CASE(tcs, func_latency);
	ATF_ADD_TEST_CASE(tcs, from_to);
}
