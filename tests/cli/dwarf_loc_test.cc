// SPDX-License-Identifier: BSD-2-Clause
// The DWARF location compiler (cli/debuginfo/dwarf_loc.cc) against this test's own
// DWARF evaluator: an expression is compiled into a tree, the tree into
// probe bytecode, and the bytecode verified and run by common/kinst_prog.c
// on a register file and memory the test sets up; the value must equal
// what the test's concrete stack machine computes from the same
// operations, and what kinstctl's record-side evaluator (eval_node)
// computes.  Random expressions (thousands), the register mapping, pieces,
// the frame base through the CFA, refusals, and random garbage (never a
// crash, never a program the verifier refuses).
#include <atf-c++.hpp>

#include "dwarf_arith.h"

#include <dwarf.h>

#include <cstring>
#include <string>
#include <vector>

#include <bpf/btf.h>

#include "debuginfo/btf_types.h"
#include "base/regfile.h"
#include "debuginfo/dwarf_loc.h"
#include "plan/prog_compile.h"
#include "base/error.h"

extern "C" {
#include "kinst_prog.h"
#include "kinst_tstate.h"
#include "os_mem_window.h"	// kinst_os_read: kmem at kbase
#include "os_stack_none.h"
}

using kinst::LocExpr;
using kinst::LocOp;

namespace {

uint64_t
rnd(uint64_t &s)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

LocOp
op(uint8_t atom, uint64_t n1 = 0, uint64_t n2 = 0)
{
	LocOp o;
	o.atom = atom;
	o.n1 = n1;
	o.n2 = n2;
	return o;
}

// The System V psABI's DWARF register numbers, as this test reads the
// table: DWARF number -> enum kinst_gpr.
const int psabi[16] = {
	KINST_RAX, KINST_RDX, KINST_RCX, KINST_RBX, KINST_RSI, KINST_RDI,
	KINST_RBP, KINST_RSP, KINST_R8, KINST_R9, KINST_R10, KINST_R11,
	KINST_R12, KINST_R13, KINST_R14, KINST_R15,
};

struct kinst_regs
make_regs(uint64_t seed)
{
	struct kinst_regs r;
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < KINST_NGPR; i++)
		r.gpr[i] = rnd(seed);
	// rsp and rbp point into the kernel window, so that loads through
	// them read the test's memory.
	r.gpr[KINST_RSP] = kbase + 2048;
	r.gpr[KINST_RBP] = kbase + 1024;
	return r;
}

void
fill_kmem(uint64_t seed)
{
	for (size_t i = 0; i < sizeof(kmem); i++)
		kmem[i] = (uint8_t)rnd(seed);
}

// The test's own DWARF stack machine, on concrete values.  false: the
// expression is malformed or reads outside the window.
bool
reference(const LocExpr &e, const struct kinst_regs &r, uint64_t cfa, uint64_t *out)
{
	std::vector<uint64_t> st;
	auto pop = [&](uint64_t &v) {
		if (st.empty())
			return false;
		v = st.back();
		st.pop_back();
		return true;
	};
	for (const LocOp &o : e) {
		uint64_t a, b, c;
		uint8_t at = o.atom;
		if (at >= DW_OP_lit0 && at <= DW_OP_lit31) {
			st.push_back(at - DW_OP_lit0);
		} else if (at >= DW_OP_breg0 && at <= DW_OP_breg15) {
			st.push_back(r.gpr[psabi[at - DW_OP_breg0]] + o.n1);
		} else {
			switch (at) {
			case DW_OP_constu: case DW_OP_consts: case DW_OP_const1u:
			case DW_OP_const8u:
				st.push_back(o.n1);
				break;
			case DW_OP_call_frame_cfa:
				st.push_back(cfa);
				break;
			case DW_OP_dup:
				if (!pop(a))
					return false;
				st.push_back(a);
				st.push_back(a);
				break;
			case DW_OP_drop:
				if (!pop(a))
					return false;
				break;
			case DW_OP_over:
				if (st.size() < 2)
					return false;
				st.push_back(st[st.size() - 2]);
				break;
			case DW_OP_pick:
				if (o.n1 >= st.size())
					return false;
				st.push_back(st[st.size() - 1 - o.n1]);
				break;
			case DW_OP_swap:
				if (!pop(b) || !pop(a))
					return false;
				st.push_back(b);
				st.push_back(a);
				break;
			case DW_OP_rot:
				if (!pop(c) || !pop(b) || !pop(a))
					return false;
				st.push_back(c);
				st.push_back(a);
				st.push_back(b);
				break;
			case DW_OP_deref:
			case DW_OP_deref_size: {
				unsigned n = at == DW_OP_deref ? 8 : (unsigned)o.n1;
				if (!pop(a) || a < kbase || a + n > kbase + sizeof(kmem))
					return false;
				uint64_t v = 0;
				memcpy(&v, kmem + (a - kbase), n);
				st.push_back(v);
				break;
			}
			case DW_OP_plus_uconst:
				if (!pop(a))
					return false;
				st.push_back(a + o.n1);
				break;
			case DW_OP_neg:
				if (!pop(a))
					return false;
				st.push_back(-a);
				break;
			case DW_OP_not:
				if (!pop(a))
					return false;
				st.push_back(~a);
				break;
			default: {
				uint64_t r;
				if (!pop(b) || !pop(a) || !dwarf_binop(at, a, b, &r))
					return false;
				st.push_back(r);
			}
			}
		}
	}
	if (st.empty())
		return false;
	*out = st.back();
	return true;
}

// The location's value through bytecode: verified and run by the engine.
// false: the compiler refused it (why in *why), or the run faulted.
bool
run_prog(const kinst::Location &l, uint32_t size, const struct kinst_regs &r,
    uint64_t *v, std::string *why)
{
	std::vector<struct kinst_pinsn> code;
	try {
		kinst::emit_location_value(l, size, code);
	} catch (const kinst::Error &e) {
		*why = e.what();
		return false;
	}
	code.push_back(kinst::make_pinsn(KINST_OP_RET));
	static struct kinst_prog p;
	uint32_t bad;
	int vd = kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad);
	if (vd != KINST_PV_OK) {
		// Over the program's limits is a refusal the CLI reports; any
		// other verdict is a compiler bug.
		if (vd != KINST_PV_TOO_MANY_LOADS && vd != KINST_PV_TOO_LONG &&
		    vd != KINST_PV_OVERFLOW)
			ATF_FAIL(std::string("verifier refused the compiled location: ") +
			    kinst_prog_verdict_name(vd) + " at " + std::to_string(bad));
		*why = kinst_prog_verdict_name(vd);
		return false;
	}
	struct kinst_prog_ctx c;
	memset(&c, 0, sizeof(c));
	c.regs = &r;
	c.comm = "test";
	int res = kinst_prog_run(&p, &c, v);
	if (res == KINST_PROG_FAULT) {
		*why = "fault";
		return false;
	}
	return true;
}

uint64_t
gpr_value(const struct kinst_regs &r, uint64_t dwreg)
{
	return r.gpr[psabi[dwreg]];
}

kinst::LocState
state_of(const struct kinst_regs &r)
{
	kinst::LocState s;
	s.gpr = r.gpr;
	s.read = [](uint64_t a, uint32_t n, uint8_t *out) {
		return kinst_os_read(a, out, n) == 0;
	};
	return s;
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(register_numbers);
ATF_TEST_CASE_BODY(register_numbers)
{
	struct kinst_regs r = make_regs(7);
	for (uint8_t n = 0; n < 16; n++) {
		kinst::LocEnv env;
		kinst::Location l = kinst::compile_location(LocExpr{op(DW_OP_reg0 + n)}, env);
		ATF_REQUIRE_EQ(l.why, std::string());
		ATF_REQUIRE_EQ(l.kind(), std::string("register"));
		uint64_t v;
		std::string why;
		ATF_REQUIRE(run_prog(l, 8, r, &v, &why));
		ATF_REQUIRE_EQ(v, gpr_value(r, n));
		// breg: the same register's value plus the offset.
		l = kinst::compile_location(LocExpr{op(DW_OP_breg0 + n, (uint64_t)-3),
		    op(DW_OP_stack_value)}, env);
		ATF_REQUIRE(run_prog(l, 8, r, &v, &why));
		ATF_REQUIRE_EQ(v, gpr_value(r, n) - 3);
	}
	// xmm0 (17) is not recorded: a reason, never a value.
	kinst::LocEnv env;
	kinst::Location l = kinst::compile_location(LocExpr{op(DW_OP_reg17)}, env);
	ATF_REQUIRE(l.why.find("xmm0") != std::string::npos);
	ATF_REQUIRE_EQ(kinst::dwarf_reg(16), -1);
}

ATF_TEST_CASE_WITHOUT_HEAD(pieces);
ATF_TEST_CASE_BODY(pieces)
{
	struct kinst_regs r = make_regs(11);
	kinst::LocEnv env;
	// A struct of two ints: lo in rax (DWARF 0), hi in rdx (DWARF 1).
	kinst::Location l = kinst::compile_location(LocExpr{op(DW_OP_reg0),
	    op(DW_OP_piece, 4), op(DW_OP_reg1), op(DW_OP_piece, 4)}, env);
	ATF_REQUIRE_EQ(l.kind(), std::string("pieces"));
	ATF_REQUIRE_EQ(l.pieces.size(), 2u);
	uint64_t v;
	std::string why;
	ATF_REQUIRE(run_prog(l, 8, r, &v, &why));
	ATF_REQUIRE_EQ(v, (r.gpr[KINST_RAX] & 0xffffffffu) | (r.gpr[KINST_RDX] << 32));
	// A piece in memory and a constant piece.
	fill_kmem(3);
	l = kinst::compile_location(LocExpr{op(DW_OP_breg7, 16), op(DW_OP_piece, 2),
	    op(DW_OP_lit5), op(DW_OP_stack_value), op(DW_OP_piece, 2)}, env);
	ATF_REQUIRE(run_prog(l, 4, r, &v, &why));
	uint16_t lo;
	memcpy(&lo, kmem + 2048 + 16, 2);
	ATF_REQUIRE_EQ(v, (uint64_t)lo | (5u << 16));
	// Bit pieces (a struct with bitfields): 3 bits of rax, then 5 bits of
	// rdx from its bit 2, then a byte in memory.
	l = kinst::compile_location(LocExpr{op(DW_OP_reg0), op(DW_OP_bit_piece, 3, 0),
	    op(DW_OP_reg1), op(DW_OP_bit_piece, 5, 2), op(DW_OP_breg7, 8), op(DW_OP_piece, 1)}, env);
	ATF_REQUIRE_EQ(l.why, std::string());
	ATF_REQUIRE(run_prog(l, 2, r, &v, &why));
	uint8_t mem8 = kmem[2048 + 8];
	ATF_REQUIRE_EQ(v, (r.gpr[KINST_RAX] & 7) | (((r.gpr[KINST_RDX] >> 2) & 31) << 3) |
	    ((uint64_t)mem8 << 8));
	// A piece optimized out: no value, and the reason says so.
	l = kinst::compile_location(LocExpr{op(DW_OP_reg0), op(DW_OP_piece, 4),
	    op(DW_OP_piece, 4)}, env);
	ATF_REQUIRE(!run_prog(l, 8, r, &v, &why));
	ATF_REQUIRE(why.find("optimized out") != std::string::npos);
}

ATF_TEST_CASE_WITHOUT_HEAD(frame_base);
ATF_TEST_CASE_BODY(frame_base)
{
	struct kinst_regs r = make_regs(13);
	fill_kmem(5);
	LocExpr fb{op(DW_OP_call_frame_cfa)};
	LocExpr cfa{op(DW_OP_breg7, 24)};	// CFA = rsp + 24 here
	kinst::LocEnv env;
	env.frame_base = &fb;
	env.cfa = &cfa;
	kinst::Location l = kinst::compile_location(LocExpr{op(DW_OP_fbreg, (uint64_t)-40)}, env);
	ATF_REQUIRE_EQ(l.why, std::string());
	ATF_REQUIRE(l.cfa);
	ATF_REQUIRE_EQ(l.kind(), std::string("memory"));
	uint64_t v, want;
	std::string why;
	ATF_REQUIRE(run_prog(l, 8, r, &v, &why));
	memcpy(&want, kmem + 2048 + 24 - 40, 8);
	ATF_REQUIRE_EQ(v, want);
	// Without call frame information: a reason naming it.
	kinst::LocEnv none;
	none.frame_base = &fb;
	l = kinst::compile_location(LocExpr{op(DW_OP_fbreg, 8)}, none);
	ATF_REQUIRE(l.why.find("call frame") != std::string::npos);
	// A frame base in a register (rbp, DWARF 6): its contents.
	LocExpr fb6{op(DW_OP_reg6)};
	kinst::LocEnv e6;
	e6.frame_base = &fb6;
	l = kinst::compile_location(LocExpr{op(DW_OP_fbreg, 8)}, e6);
	ATF_REQUIRE(run_prog(l, 8, r, &v, &why));
	memcpy(&want, kmem + 1024 + 8, 8);
	ATF_REQUIRE_EQ(v, want);
}

ATF_TEST_CASE_WITHOUT_HEAD(refusals);
ATF_TEST_CASE_BODY(refusals)
{
	kinst::LocEnv env;
	struct { LocExpr e; const char *want; } cases[] = {
		{{op(DW_OP_lit1), op(DW_OP_lit2), op(DW_OP_div), op(DW_OP_stack_value)}, "DW_OP_div"},
		{{op(DW_OP_lit1), op(DW_OP_plus)}, "malformed"},
		{{op(DW_OP_breg7, 0), op(DW_OP_deref_size, 3)}, "DW_OP_deref_size 3"},
		{{op(DW_OP_reg0), op(DW_OP_lit1)}, "malformed"},
		{{op(DW_OP_lit1), op(DW_OP_skip, 2)}, "control flow"},
		{{op(DW_OP_fbreg, 8)}, "DW_AT_frame_base"},
		{{op(DW_OP_GNU_parameter_ref, 4)}, "parameter_ref"},
		{{op(DW_OP_breg0, 0), op(DW_OP_lit3), op(DW_OP_shl), op(DW_OP_breg1, 0), op(DW_OP_shra)},
		    "arithmetic shift"},
	};
	for (const auto &c : cases) {
		kinst::Location l = kinst::compile_location(c.e, env);
		if (l.why.find(c.want) == std::string::npos)
			ATF_FAIL(kinst::loc_text(c.e) + ": \"" + l.why + "\" does not name " + c.want);
	}
	// An entry value compiles to a tree that needs the entry's registers:
	// without an entry context the bytecode refuses it; it is never the
	// register's current value.
	LocOp ev = op(DW_OP_entry_value);
	ev.sub = LocExpr{op(DW_OP_reg5)};
	kinst::Location l = kinst::compile_location(LocExpr{ev, op(DW_OP_stack_value)}, env);
	ATF_REQUIRE(l.entry);
	ATF_REQUIRE_EQ(l.kind(), std::string("entry_value"));
	struct kinst_regs r = make_regs(1);
	uint64_t v;
	std::string why;
	ATF_REQUIRE(!run_prog(l, 8, r, &v, &why));
	ATF_REQUIRE(why.find("entry") != std::string::npos);
	ATF_REQUIRE(!kinst::eval_node(*l.pieces[0].expr, state_of(r), &v, &why));
	// With an entry context: the activation framed by the entry's rsp (here
	// rsp + 8 as the frame code computes it) of the tag, word 0 for rdi.
	{
		static struct kinst_ts_slot slots[2];
		static struct kinst_ts_cpu tst[2];
		static struct kinst_tstate ts;
		ts.nslots = 2;
		ts.ncpus = 2;
		ts.idle_ns = 1000;
		ts.epoch = 1;
		ts.slots = slots;
		ts.stats = tst;
		kinst::EntryCtx ec;
		ec.tag = 0x1234;
		ec.frame = {kinst::make_pinsn(KINST_OP_REG, KINST_RSP),
		    kinst::make_pinsn(KINST_OP_IMM, 0, 8), kinst::make_pinsn(KINST_OP_ADD)};
		ec.slot[KINST_RDI] = 0;
		std::vector<struct kinst_pinsn> code;
		kinst::emit_location_value(l, 8, code, &ec);
		code.push_back(kinst::make_pinsn(KINST_OP_RET));
		static struct kinst_prog p;
		uint32_t bad;
		ATF_REQUIRE_EQ(kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad),
		    KINST_PV_OK);
		uint64_t saved = 0xabcdef, key[2] = {fake_key[0], fake_key[1]};
		ATF_REQUIRE_EQ(kinst_ts_push(&ts, 0, key, 5, 0x1234, r.gpr[KINST_RSP] + 8, &saved,
		    1), 0);
		struct kinst_prog_ctx c;
		memset(&c, 0, sizeof(c));
		c.regs = &r;
		c.comm = "test";
		c.ts = &ts;
		ATF_REQUIRE_EQ(kinst_prog_run(&p, &c, &v), KINST_PROG_TRUE);
		ATF_REQUIRE_EQ(v, 0xabcdefu);
		// Another call's frame: no value, never the wrong one.
		struct kinst_regs r2 = r;
		r2.gpr[KINST_RSP] += 0x100;
		c.regs = &r2;
		ATF_REQUIRE_EQ(kinst_prog_run(&p, &c, &v), KINST_PROG_NOSTATE);
		// A register the entry did not save: refused.
		ec.slot[KINST_RDI] = -1;
		code.clear();
		ATF_REQUIRE_THROW(kinst::Error, kinst::emit_location_value(l, 8, code, &ec));
	}
	// llvm-dwarfdump's spelling.
	ATF_REQUIRE_EQ(kinst::loc_text(LocExpr{ev, op(DW_OP_stack_value)}),
	    std::string("DW_OP_entry_value(DW_OP_reg5 RDI), DW_OP_stack_value"));
	ATF_REQUIRE_EQ(kinst::loc_text(LocExpr{op(DW_OP_breg7, 8), op(DW_OP_fbreg, (uint64_t)-144)}),
	    std::string("DW_OP_breg7 RSP+8, DW_OP_fbreg -144"));
}

ATF_TEST_CASE_WITHOUT_HEAD(random_expressions);
ATF_TEST_CASE_BODY(random_expressions)
{
	static const uint8_t binops[] = {DW_OP_plus, DW_OP_minus, DW_OP_mul, DW_OP_and,
	    DW_OP_or, DW_OP_xor, DW_OP_eq, DW_OP_ne, DW_OP_lt, DW_OP_le, DW_OP_gt, DW_OP_ge};
	uint64_t s = 0x9e3779b97f4a7c15ull;
	unsigned agreed = 0, refused = 0;
	LocExpr cfa{op(DW_OP_breg7, 8)};
	for (int iter = 0; iter < 20000; iter++) {
		struct kinst_regs r = make_regs(rnd(s));
		fill_kmem(rnd(s));
		LocExpr e;
		int depth = 0;
		int n = 1 + (int)(rnd(s) % 12);
		for (int i = 0; i < n; i++) {
			unsigned k = (unsigned)(rnd(s) % 14);
			if (depth == 0 || k < 3) {
				unsigned w = (unsigned)(rnd(s) % 4);
				if (w == 0)
					e.push_back(op(DW_OP_lit0 + (uint8_t)(rnd(s) % 32)));
				else if (w == 1)
					e.push_back(op(DW_OP_constu, rnd(s)));
				else if (w == 2)
					e.push_back(op(DW_OP_breg0 + (uint8_t)(rnd(s) % 16), rnd(s) % 64));
				else
					e.push_back(op(DW_OP_call_frame_cfa));
				depth++;
			} else if (k < 6 && depth >= 2) {
				e.push_back(op(binops[rnd(s) % (sizeof(binops))]));
				depth--;
			} else if (k == 6) {
				// A load from the stack window: rsp (DWARF 7) + small.
				e.push_back(op(DW_OP_drop));
				e.push_back(op(DW_OP_breg7, (rnd(s) % 64) * 8));
				e.push_back(op((rnd(s) & 1) ? DW_OP_deref : DW_OP_deref_size,
				    1u << (rnd(s) % 4)));
				if (e.back().atom == DW_OP_deref)
					e.back().n1 = 0;
			} else if (k == 7) {
				e.push_back(op(DW_OP_dup));
				depth++;
			} else if (k == 8 && depth >= 2) {
				e.push_back(op(DW_OP_swap));
			} else if (k == 9 && depth >= 2) {
				e.push_back(op(DW_OP_over));
				depth++;
			} else if (k == 10 && depth >= 3) {
				e.push_back(op(DW_OP_rot));
			} else if (k == 11) {
				e.push_back(op((rnd(s) & 1) ? DW_OP_neg : DW_OP_not));
			} else if (k == 12) {
				e.push_back(op(DW_OP_pick, rnd(s) % depth));
				depth++;
			} else {
				e.push_back(op(DW_OP_lit0 + (uint8_t)(rnd(s) % 64 % 32)));
				e.push_back(op((rnd(s) & 1) ? DW_OP_shra : ((rnd(s) & 1) ? DW_OP_shl : DW_OP_shr)));
			}
			if (depth > 12)
				break;
		}
		uint64_t cfa_value = r.gpr[KINST_RSP] + 8;
		uint64_t want;
		bool ok = reference(e, r, cfa_value, &want);
		e.push_back(op(DW_OP_stack_value));
		kinst::LocEnv env;
		env.cfa = &cfa;
		kinst::Location l = kinst::compile_location(e, env);
		if (!ok) {
			// Malformed for the reference: the compiler must not give a
			// value either (a reason, or a fault at run time).
			uint64_t v;
			std::string why;
			if (l.why.empty() && run_prog(l, 8, r, &v, &why))
				ATF_FAIL(kinst::loc_text(e) + ": the reference refuses it, kinst gives " +
				    std::to_string(v));
			refused++;
			continue;
		}
		if (!l.why.empty())
			ATF_FAIL(kinst::loc_text(e) + ": refused: " + l.why);
		uint64_t v, w;
		std::string why;
		if (!run_prog(l, 8, r, &v, &why)) {
			if (why.find("instructions") != std::string::npos || why.find("loads") != std::string::npos ||
			    why.find("too") != std::string::npos) {
				refused++;
				continue;	// over the program's limits (dup chains)
			}
			ATF_FAIL(kinst::loc_text(e) + ": no value: " + why);
		}
		if (v != want)
			ATF_FAIL(kinst::loc_text(e) + ": bytecode " + std::to_string(v) +
			    ", reference " + std::to_string(want));
		ATF_REQUIRE(kinst::eval_node(*l.pieces[0].expr, state_of(r), &w, &why));
		ATF_REQUIRE_EQ(w, want);
		agreed++;
	}
	std::printf("random_expressions: %u agreed, %u refused by both (informational)\n",
	    agreed, refused);
	ATF_REQUIRE(agreed > 10000);
}

ATF_TEST_CASE_WITHOUT_HEAD(garbage);
ATF_TEST_CASE_BODY(garbage)
{
	// Any operation, any operands: a Location or a reason, never a crash,
	// and whatever compiles verifies.
	uint64_t s = 12345;
	LocExpr fb{op(DW_OP_call_frame_cfa)};
	LocExpr cfa{op(DW_OP_breg7, 8)};
	struct kinst_regs r = make_regs(2);
	for (int iter = 0; iter < 50000; iter++) {
		LocExpr e;
		int n = (int)(rnd(s) % 20);
		for (int i = 0; i < n; i++) {
			LocOp o = op((uint8_t)rnd(s), rnd(s) % 4 ? rnd(s) % 70 : rnd(s), rnd(s) % 70);
			if (rnd(s) % 8 == 0) {
				o.atom = DW_OP_entry_value;
				o.sub = LocExpr{op((uint8_t)rnd(s), rnd(s) % 40)};
			}
			if (rnd(s) % 16 == 0) {
				o.atom = DW_OP_implicit_value;
				o.block.assign(rnd(s) % 12, 'x');
			}
			e.push_back(o);
		}
		kinst::LocEnv env;
		env.frame_base = &fb;
		env.cfa = &cfa;
		kinst::Location l = kinst::compile_location(e, env);
		(void)l.describe();
		(void)kinst::loc_text(e);
		if (l.why.empty()) {
			uint64_t v;
			std::string why;
			(void)run_prog(l, 1 + (uint32_t)(rnd(s) % 8), r, &v, &why);
		}
	}
}

// A struct of 32 bytes held in pieces, one of them optimized out (issue
// 43): every member whose bytes are known reads as the test computes it
// from the registers and memory (a value piece, memory through rsp,
// constants, a bit piece, a bitfield crossing a byte, a signed bitfield,
// a nested struct, an array element, a member spread over two pieces); a
// member touching the optimized-out bytes, the struct itself, a computed
// index and '&' are refused.
//   struct hv { long a; int b; int c:5; unsigned d:9; short e;
//               char arr[4]; int z; struct inner { int x, y; } in; };
ATF_TEST_CASE_WITHOUT_HEAD(struct_in_pieces);
ATF_TEST_CASE_BODY(struct_in_pieces)
{
	struct btf *b = btf__new_empty();
	ATF_REQUIRE(b != nullptr);
	int t_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int t_uint = btf__add_int(b, "unsigned int", 4, 0);
	int t_long = btf__add_int(b, "long", 8, BTF_INT_SIGNED);
	int t_short = btf__add_int(b, "short", 2, BTF_INT_SIGNED);
	int t_char = btf__add_int(b, "char", 1, BTF_INT_SIGNED);
	int t_arr = btf__add_array(b, t_int, t_char, 4);
	int t_in = btf__add_struct(b, "inner", 8);
	btf__add_field(b, "x", t_int, 0, 0);
	btf__add_field(b, "y", t_int, 32, 0);
	int t_hv = btf__add_struct(b, "hv", 32);
	const struct { const char *name; int type; uint32_t bit, bits; } hv[] = {
		{ "a", t_long, 0, 0 }, { "b", t_int, 64, 0 }, { "c", t_int, 96, 5 },
		{ "d", t_uint, 101, 9 }, { "e", t_short, 112, 0 }, { "arr", t_arr, 128, 0 },
		{ "z", t_int, 160, 0 }, { "in", t_in, 192, 0 },
	};
	for (const auto &m : hv)
		ATF_REQUIRE_EQ(btf__add_field(b, m.name, m.type, m.bit, m.bits), 0);
	// The same bytes seen as struct span { long a; long bc; long fg; }:
	// bc's 8 bytes lie in two pieces (the value and memory), fg's in the
	// constants and the optimized-out ones.
	int t_span = btf__add_struct(b, "span", 24);
	ATF_REQUIRE_EQ(btf__add_field(b, "a", t_long, 0, 0), 0);
	ATF_REQUIRE_EQ(btf__add_field(b, "bc", t_long, 64, 0), 0);
	ATF_REQUIRE_EQ(btf__add_field(b, "fg", t_long, 128, 0), 0);
	kinst::Btf types(b);

	// [0..8) rax; [8..12) rcx - 1; [12..16) memory at rsp+16;
	// [16..20) the bytes 01 fe 03 04; [20..24) optimized out;
	// [24..28) rdx's bits 8..40; [28..32) r8.
	LocOp imp = op(DW_OP_implicit_value, 4);
	imp.block = std::string("\x01\xfe\x03\x04", 4);
	kinst::LocEnv lenv;
	kinst::Location loc = kinst::compile_location(LocExpr{op(DW_OP_reg0), op(DW_OP_piece, 8),
	    op(DW_OP_breg2, (uint64_t)-1), op(DW_OP_stack_value), op(DW_OP_piece, 4),
	    op(DW_OP_breg7, 16), op(DW_OP_piece, 4), imp, op(DW_OP_piece, 4),
	    op(DW_OP_piece, 4), op(DW_OP_reg1), op(DW_OP_bit_piece, 32, 8), op(DW_OP_reg8),
	    op(DW_OP_piece, 4)}, lenv);
	ATF_REQUIRE_EQ(loc.why, std::string());
	ATF_REQUIRE_EQ(loc.pieces.size(), 7u);

	kinst::TypeEnv env;
	env.var_types = &types;
	env.var = [&](const std::string &n, kinst::VarRef &r) {
		if (n != "s" && n != "w")
			throw kinst::Error(kinst::Exit::usage, "not in scope");
		r.type = (uint32_t)(n == "s" ? t_hv : t_span);
		r.bits = [&loc](uint32_t off, uint32_t nb, std::vector<struct kinst_pinsn> &code) {
			kinst::emit_location_bits(loc, 32, off, nb, code);
		};
	};
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct kinst_regs r = make_regs(seed);
		fill_kmem(seed * 7);
		auto eval = [&](const std::string &e) {
			std::vector<struct kinst_pinsn> code = kinst::compile_expr(e, "--if", &env);
			static struct kinst_prog p;
			uint32_t bad;
			int vd = kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad);
			if (vd != KINST_PV_OK)
				ATF_FAIL(e + ": verifier: " + kinst_prog_verdict_name(vd));
			struct kinst_prog_ctx c;
			memset(&c, 0, sizeof(c));
			c.regs = &r;
			c.comm = "test";
			uint64_t v = 0;
			ATF_REQUIRE(kinst_prog_run(&p, &c, &v) != KINST_PROG_FAULT);
			return v;
		};
		uint8_t m[4];
		memcpy(m, kmem + 2048 + 16, 4);
		uint32_t w = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 |
		    (uint32_t)m[3] << 24;
		int64_t c5 = (int64_t)(w & 31);
		if (c5 & 16)
			c5 -= 32;
		ATF_REQUIRE_EQ(eval("$s.a"), r.gpr[KINST_RAX]);
		ATF_REQUIRE_EQ(eval("$s.b"), (uint64_t)(int64_t)(int32_t)(r.gpr[KINST_RCX] - 1));
		ATF_REQUIRE_EQ(eval("$s.c"), (uint64_t)c5);
		ATF_REQUIRE_EQ(eval("$s.c < 0"), c5 < 0 ? 1u : 0u);
		ATF_REQUIRE_EQ(eval("$s.d"), (uint64_t)((w >> 5) & 511));
		ATF_REQUIRE_EQ(eval("$s.e"), (uint64_t)(int64_t)(int16_t)(w >> 16));
		ATF_REQUIRE_EQ(eval("$s.arr[0]"), 1u);
		ATF_REQUIRE_EQ(eval("$s.arr[1]"), (uint64_t)-2);
		ATF_REQUIRE_EQ(eval("$s.arr[0x3]"), 4u);
		ATF_REQUIRE_EQ(eval("$s.in.x"),
		    (uint64_t)(int64_t)(int32_t)(uint32_t)(r.gpr[KINST_RDX] >> 8));
		ATF_REQUIRE_EQ(eval("$s.in.y"), (uint64_t)(int64_t)(int32_t)r.gpr[KINST_R8]);
		// Across two pieces: the value's 4 bytes, then memory's.
		ATF_REQUIRE_EQ(eval("$w.bc"), (uint64_t)(uint32_t)(r.gpr[KINST_RCX] - 1) |
		    (uint64_t)w << 32);
		ATF_REQUIRE_EQ(eval("$s.in.y + $s.b == " +
		    std::to_string((int64_t)(int32_t)r.gpr[KINST_R8] +
		    (int64_t)(int32_t)(r.gpr[KINST_RCX] - 1))), 1u);
	}
	auto error = [&](const std::string &e) {
		try {
			(void)kinst::compile_expr(e, "--if", &env);
		} catch (const kinst::Error &x) {
			return std::string(x.what());
		}
		return std::string();
	};
	auto has = [](const std::string &got, const char *want) {
		if (got.find(want) == std::string::npos)
			ATF_FAIL("expected \"" + std::string(want) + "\" in \"" + got + "\"");
	};
	has(error("$s.z"), "bytes [20..24) of it were optimized out");
	has(error("$w.fg"), "bytes [20..24) of it were optimized out");
	has(error("$s == 1"), "name one of its members");
	has(error("$s.arr == 1"), "name one of its members");
	has(error("$s.arr[$s.b]"), "constant index");
	has(error("$s.arr[1e]"), "constant index");
	has(error("$s.arr[0x]"), "constant index");
	has(error("$s.arr[99999999999999999999]"), "constant index");
	has(error("$s.arr[4]"), "past the end");
	has(error("$s.in == 1"), "name one of its members");
	has(error("&$s.b"), "'&' needs an object in memory");
	has(error("$s.nope"), "no member 'nope'");
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, register_numbers);
	ATF_ADD_TEST_CASE(tcs, pieces);
	ATF_ADD_TEST_CASE(tcs, struct_in_pieces);
	ATF_ADD_TEST_CASE(tcs, frame_base);
	ATF_ADD_TEST_CASE(tcs, refusals);
	ATF_ADD_TEST_CASE(tcs, random_expressions);
	ATF_ADD_TEST_CASE(tcs, garbage);
}
