// SPDX-License-Identifier: BSD-2-Clause
// Variables by name against the single-step ground truth (issue 23, proof
// 2).  The -g -O2 corpus (vars_corpus.c) is planned by kinstctl's own
// code, offline, on this very executable (TraceVars: DWARF locations
// compiled into probe programs, entry values through the per-thread state
// table); every instruction is armed with its plan's program at once and
// run through the portable engine from the harness's SIGTRAP handler.  At
// each hit, every variable kinstctl reads from the record (TraceVars::
// bytes_of) must equal what this test's own DWARF evaluator gives for the
// same variable at the same instruction in the single-step run: its own
// scope walk and location lookup (libdw, not kinstctl's dwarf_vars), its
// own stack machine over the stepped registers and memory, and entry
// values from the registers the stepped run had at each activation's
// first instruction (a shadow call stack, not the CFA).  Where the test
// knows the C program's values (parameters never assigned, each
// recursion level's arguments, the split struct, the loop counter's
// range), those must hold too.
//
// Two passes per function: the whole function (the entry instruction's
// own program pushes the entry registers), then every instruction but the
// entry, which gets kinstctl's hidden entry probe instead.

#include <atf-c++.hpp>

#include "kh_self.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "kh_core.h"
#include "kinst_prog.h"
extern const struct kh_fn kh_corpus_vars[];
}

#include "dwarf_arith.h"
#include "base/error.h"
#include "plan/prog_compile.h"
#include "base/record.h"
#include "symbols/sources.h"
#include "base/spec.h"
#include "plan/trace_vars.h"

namespace {

// ---- this test's own DWARF reading and evaluation ----

// DWARF register numbers (the x86-64 psABI) to struct kinst_regs' order.
const int dw_to_gpr[16] = {
	KINST_RAX, KINST_RDX, KINST_RCX, KINST_RBX, KINST_RSI, KINST_RDI, KINST_RBP, KINST_RSP,
	KINST_R8, KINST_R9, KINST_R10, KINST_R11, KINST_R12, KINST_R13, KINST_R14, KINST_R15,
};

struct Op {
	uint8_t atom = 0;
	uint64_t n1 = 0, n2 = 0;
	std::vector<Op> sub;	// DW_OP_entry_value's expression
	std::string block;	// DW_OP_implicit_value's bytes
};

struct VarAt {
	std::string name;
	uint64_t size = 0;
	bool located = false;	// has a location (or constant) at this address
	bool konst = false;	// DW_AT_const_value: bytes
	std::string bytes;
	std::vector<Op> expr;
	bool entry = false, pieces = false, memory = false, param = false;
	int scalar = 0;		// 0: not a scalar; 1: unsigned (pointers too); 2: signed
};

// A scalar type's signedness, by this test's own walk: 0 (not a scalar,
// or a kind the corpus does not have), 1 (unsigned, pointers), 2 (signed).
int
scalar_kind(Dwarf_Die *t)
{
	Dwarf_Die d = *t;
	for (int k = 0; k < 16; k++) {
		int tag = dwarf_tag(&d);
		if (tag == DW_TAG_pointer_type)
			return 1;
		if (tag == DW_TAG_base_type) {
			Dwarf_Attribute a;
			Dwarf_Word enc;
			if (dwarf_attr(&d, DW_AT_encoding, &a) == nullptr || dwarf_formudata(&a, &enc) != 0)
				return 0;
			return enc == DW_ATE_signed || enc == DW_ATE_signed_char ? 2 :
			    enc == DW_ATE_unsigned || enc == DW_ATE_unsigned_char ||
			    enc == DW_ATE_boolean ? 1 : 0;
		}
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
			return 0;
		Dwarf_Attribute a;
		if (dwarf_attr(&d, DW_AT_type, &a) == nullptr || dwarf_formref_die(&a, &d) == nullptr)
			return 0;
	}
	return 0;
}

bool
convert(Dwarf_Attribute *a, const Dwarf_Op *ops, size_t n, std::vector<Op> &out, std::string *why)
{
	for (size_t k = 0; k < n; k++) {
		Op o;
		o.atom = ops[k].atom;
		o.n1 = ops[k].number;
		o.n2 = ops[k].number2;
		if (o.atom == DW_OP_entry_value || o.atom == DW_OP_GNU_entry_value) {
			Dwarf_Attribute sub;
			Dwarf_Op *so;
			size_t sn;
			if (dwarf_getlocation_attr(a, &ops[k], &sub) != 0 ||
			    dwarf_getlocation(&sub, &so, &sn) != 0 ||
			    !convert(&sub, so, sn, o.sub, why))
				return *why = "entry_value's expression", false;
		} else if (o.atom == DW_OP_implicit_value) {
			Dwarf_Block b;
			if (dwarf_getlocation_implicit_value(a, &ops[k], &b) != 0)
				return *why = "implicit_value's block", false;
			o.block.assign((const char *)b.data, b.length);
		}
		out.push_back(o);
	}
	return true;
}

// The scopes that contain pc, outermost first (subprogram, lexical
// blocks, inlined copies), by this test's own walk of the DIE tree.
void
scopes_at(Dwarf_Die *parent, Dwarf_Addr pc, std::vector<Dwarf_Die> &chain)
{
	Dwarf_Die c;
	if (dwarf_child(parent, &c) != 0)
		return;
	do {
		int t = dwarf_tag(&c);
		if ((t == DW_TAG_subprogram || t == DW_TAG_lexical_block ||
		    t == DW_TAG_inlined_subroutine) && dwarf_haspc(&c, pc) == 1) {
			chain.push_back(c);
			scopes_at(&c, pc, chain);
			return;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

// Every variable and parameter in scope at pc, with its location there.
std::vector<VarAt>
vars_at(Dwarf *dbg, Dwarf_Addr pc)
{
	std::vector<VarAt> out;
	Dwarf_Die cu;
	if (dwarf_addrdie(dbg, pc, &cu) == nullptr)
		ATF_FAIL("no compilation unit at " + std::to_string(pc));
	std::vector<Dwarf_Die> chain;
	scopes_at(&cu, pc, chain);
	ATF_REQUIRE(!chain.empty());
	Dwarf_Attribute fb;
	Dwarf_Op *fbo;
	size_t fbn;
	// The corpus's frame base is the CFA (gcc's on x86-64); fbreg below
	// relies on it.
	ATF_REQUIRE(dwarf_attr(&chain[0], DW_AT_frame_base, &fb) != nullptr);
	ATF_REQUIRE(dwarf_getlocation(&fb, &fbo, &fbn) == 0 && fbn == 1 &&
	    fbo[0].atom == DW_OP_call_frame_cfa);
	for (Dwarf_Die &s : chain) {
		Dwarf_Die c;
		if (dwarf_child(&s, &c) != 0)
			continue;
		do {
			int t = dwarf_tag(&c);
			if (t != DW_TAG_variable && t != DW_TAG_formal_parameter)
				continue;
			VarAt v;
			const char *nm = dwarf_diename(&c);
			if (nm == nullptr)
				continue;
			v.name = nm;
			v.param = t == DW_TAG_formal_parameter;
			Dwarf_Attribute ta, la;
			Dwarf_Die td;
			Dwarf_Word sz;
			if (dwarf_attr_integrate(&c, DW_AT_type, &ta) == nullptr ||
			    dwarf_formref_die(&ta, &td) == nullptr || dwarf_aggregate_size(&td, &sz) != 0)
				ATF_FAIL("no type size for " + v.name);
			v.size = sz;
			v.scalar = scalar_kind(&td);
			if (dwarf_attr(&c, DW_AT_const_value, &la) != nullptr) {
				v.located = v.konst = true;
				Dwarf_Block b;
				Dwarf_Sword sv;
				if (dwarf_formblock(&la, &b) == 0)
					v.bytes.assign((const char *)b.data, b.length);
				else if (dwarf_formsdata(&la, &sv) == 0)
					v.bytes.assign((const char *)&sv, sizeof(sv));
				v.bytes.resize(v.size);
			} else if (dwarf_attr(&c, DW_AT_location, &la) != nullptr) {
				Dwarf_Op *ops;
				size_t n;
				std::string why;
				if (dwarf_getlocation_addr(&la, pc, &ops, &n, 1) == 1 && n > 0) {
					v.located = true;
					if (!convert(&la, ops, n, v.expr, &why))
						ATF_FAIL(v.name + ": " + why);
				}
			}
			for (const Op &o : v.expr) {
				v.entry |= o.atom == DW_OP_entry_value || o.atom == DW_OP_GNU_entry_value;
				v.pieces |= o.atom == DW_OP_piece || o.atom == DW_OP_bit_piece;
				v.memory |= o.atom == DW_OP_fbreg || o.atom == DW_OP_call_frame_cfa;
			}
			out.push_back(v);
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	return out;
}

struct Value {
	bool ok = false;
	std::string why;
	std::string bytes;
	std::vector<bool> known;
	std::vector<bool> kbits;	// known per bit (pieces only; else empty)
};

struct Machine {
	const struct kinst_regs *r = nullptr;
	uint64_t cfa = 0;
	const uint64_t *entry = nullptr;	// the activation's first state's registers
};

bool
readmem(uint64_t a, void *out, size_t n)
{
	struct iovec l = {out, n}, rm = {(void *)(uintptr_t)a, n};
	return process_vm_readv(getpid(), &l, 1, &rm, 1, 0) == (ssize_t)n;
}

// One DWARF expression on the stepped machine: the variable's bytes.
Value
evaluate(const VarAt &v, const Machine &m)
{
	Value out;
	out.bytes.assign(v.size, '\0');
	out.known.assign(v.size, false);
	if (v.konst) {
		out.bytes = v.bytes;
		out.known.assign(v.size, true);
		out.ok = true;
		return out;
	}
	std::vector<uint64_t> st;
	enum { mem, reg, val, imp, none } kind = mem;
	int gpr = -1;
	std::string imp_bytes;
	uint32_t at = 0;	// bits of the object placed so far
	bool any_piece = false;
	auto fail = [&](const std::string &w) { out.ok = false; out.why = w; return out; };
	auto pop = [&](uint64_t *x) {
		if (st.empty())
			return false;
		*x = st.back();
		st.pop_back();
		return true;
	};
	// Puts nbits bits of the current location, from its bit off on, at
	// the object's bit at (a byte piece: 8n bits from 0).  Known per bit
	// (kbits); a byte is known when its eight bits are.
	std::vector<bool> kbits(8 * v.size, false);
	auto place_bits = [&](uint32_t nbits, uint32_t off) -> bool {
		uint8_t buf[64];
		bool known = true;
		uint32_t nb = (off + nbits + 7) / 8;
		if (nb > sizeof(buf) || at + nbits > 8 * v.size)
			return false;
		memset(buf, 0, sizeof(buf));
		if (kind == none || (kind == mem && st.empty()))
			known = false;
		else if (kind == mem) {
			uint64_t a = st.back();
			st.pop_back();
			known = readmem(a, buf, nb);
		} else if (kind == reg) {
			uint64_t x = m.r->gpr[gpr];
			if (nb > 8)
				return false;
			memcpy(buf, &x, 8);
		} else if (kind == val) {
			uint64_t x = st.empty() ? 0 : st.back();
			if (st.empty() || nb > 8)
				return false;
			st.pop_back();
			memcpy(buf, &x, 8);
		} else {
			if (imp_bytes.size() < nb)
				return false;
			memcpy(buf, imp_bytes.data(), nb);
		}
		for (uint32_t i = 0; i < nbits; i++) {
			uint32_t from = off + i, to = at + i;
			uint8_t bit = (uint8_t)((buf[from / 8] >> (from % 8)) & 1);
			char &c = out.bytes[to / 8];
			c = (char)(((uint8_t)c & ~(1u << (to % 8))) | (bit << (to % 8)));
			kbits[to] = known;
		}
		for (uint32_t i = at / 8; i < (at + nbits + 7) / 8 && i < v.size; i++) {
			bool all = true;
			for (uint32_t b = 0; b < 8; b++)
				all = all && kbits[8 * i + b];
			out.known[i] = all;
		}
		at += nbits;
		kind = none;
		return true;
	};
	auto place = [&](uint32_t n) { return place_bits(8 * n, 0); };
	for (size_t k = 0; k < v.expr.size(); k++) {
		const Op &o = v.expr[k];
		uint64_t a, b;
		uint8_t t = o.atom;
		if (kind != mem && kind != none && t != DW_OP_piece &&
		    t != DW_OP_bit_piece)
			return fail("operation after a location");
		if (kind == none)
			kind = mem;
		if (t >= DW_OP_lit0 && t <= DW_OP_lit31)
			st.push_back(t - DW_OP_lit0);
		else if (t >= DW_OP_reg0 && t <= DW_OP_reg15) {
			kind = reg;
			gpr = dw_to_gpr[t - DW_OP_reg0];
		} else if (t >= DW_OP_breg0 && t <= DW_OP_breg15)
			st.push_back(m.r->gpr[dw_to_gpr[t - DW_OP_breg0]] + o.n1);
		else switch (t) {
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
		case DW_OP_const8u: case DW_OP_constu: case DW_OP_const1s: case DW_OP_const2s:
		case DW_OP_const4s: case DW_OP_const8s: case DW_OP_consts:
			st.push_back(o.n1);
			break;
		case DW_OP_fbreg:
			st.push_back(m.cfa + o.n1);
			break;
		case DW_OP_call_frame_cfa:
			st.push_back(m.cfa);
			break;
		case DW_OP_dup:
			if (st.empty())
				return fail("underflow");
			st.push_back(st.back());
			break;
		case DW_OP_drop:
			if (!pop(&a))
				return fail("underflow");
			break;
		case DW_OP_swap:
			if (!pop(&a) || !pop(&b))
				return fail("underflow");
			st.push_back(a);
			st.push_back(b);
			break;
		case DW_OP_over:
			if (st.size() < 2)
				return fail("underflow");
			st.push_back(st[st.size() - 2]);
			break;
		case DW_OP_deref:
		case DW_OP_deref_size: {
			unsigned n = t == DW_OP_deref ? 8 : (unsigned)o.n1;
			uint64_t x = 0;
			if (!pop(&a))
				return fail("underflow");
			if (n > 8 || !readmem(a, &x, n))
				return fail("deref");
			st.push_back(x);
			break;
		}
		case DW_OP_plus_uconst:
			if (!pop(&a))
				return fail("underflow");
			st.push_back(a + o.n1);
			break;
		case DW_OP_neg: case DW_OP_not:
			if (!pop(&a))
				return fail("underflow");
			st.push_back(t == DW_OP_neg ? -a : ~a);
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and:
		case DW_OP_or: case DW_OP_xor: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
		case DW_OP_eq: case DW_OP_ne: case DW_OP_lt: case DW_OP_le: case DW_OP_gt:
		case DW_OP_ge: {
			uint64_t r;
			if (!pop(&b) || !pop(&a))
				return fail("underflow");
			(void)dwarf_binop(t, a, b, &r);
			st.push_back(r);
			break;
		}
		case DW_OP_entry_value:
		case DW_OP_GNU_entry_value:
			if (o.sub.size() != 1 || o.sub[0].atom < DW_OP_reg0 ||
			    o.sub[0].atom > DW_OP_reg15)
				return fail("entry value of more than a register");
			if (m.entry == nullptr)
				return fail("no activation");
			st.push_back(m.entry[dw_to_gpr[o.sub[0].atom - DW_OP_reg0]]);
			break;
		case DW_OP_stack_value:
			kind = val;
			break;
		case DW_OP_implicit_value:
			kind = imp;
			imp_bytes = o.block;
			break;
		case DW_OP_piece:
		case DW_OP_bit_piece:
			any_piece = true;
			if (k == 0 || v.expr[k - 1].atom == DW_OP_piece ||
			    v.expr[k - 1].atom == DW_OP_bit_piece)
				kind = none;	// an empty piece: optimized out
			if (o.n1 > 512 || o.n2 > 512 ||
			    !(t == DW_OP_piece ? place((uint32_t)o.n1) :
			    place_bits((uint32_t)o.n1, (uint32_t)o.n2)))
				return fail("piece");
			kind = none;
			break;
		case DW_OP_nop:
			break;
		default:
			return fail("operation " + std::to_string(t));
		}
	}
	if (!any_piece) {
		if (kind == none)
			return fail("empty");
		if (kind == reg || kind == val) {
			if (v.size > 8)
				return fail("a value wider than a register");
		}
		if (!place((uint32_t)v.size))
			return fail("location");
	}
	if (any_piece)
		out.kbits = kbits;
	out.ok = true;
	return out;
}

// ---- the run ----

struct Activation {
	uint64_t cfa;
	uint64_t regs[16];
};

struct StateVals {
	uint32_t depth = 0;
	std::map<std::string, Value> vals;
};

struct Ctx {
	uint64_t start = 0;
	const std::map<uint32_t, std::vector<VarAt>> *vars = nullptr;
	std::vector<Activation> stack;
	std::vector<StateVals> states;	// per ground-truth index
};

// In the SIGTRAP handler, at each stepped state of the function: the code
// it interrupted is the corpus's (no libc), so allocating here is safe.
void
on_step(void *cp, uint32_t index, const struct kinst_regs *r)
{
	Ctx &c = *static_cast<Ctx *>(cp);
	while (!c.stack.empty() && r->gpr[KINST_RSP] >= c.stack.back().cfa)
		c.stack.pop_back();
	if (r->rip == c.start) {
		Activation a;
		a.cfa = r->gpr[KINST_RSP] + 8;
		memcpy(a.regs, r->gpr, sizeof(a.regs));
		c.stack.push_back(a);
	}
	if (c.states.size() <= index)
		c.states.resize(index + 1);
	StateVals &sv = c.states[index];
	sv.depth = c.stack.empty() ? 0 : (uint32_t)c.stack.size() - 1;
	auto it = c.vars->find((uint32_t)(r->rip - c.start));
	if (it == c.vars->end() || c.stack.empty())
		return;
	Machine m;
	m.r = r;
	m.cfa = c.stack.back().cfa;
	m.entry = c.stack.back().regs;
	for (const VarAt &v : it->second)
		if (v.located)
			sv.vals[v.name] = evaluate(v, m);
}

uint64_t
le(const std::string &b, size_t n)
{
	uint64_t x = 0;
	for (size_t k = 0; k < n && k < 8; k++)
		x |= (uint64_t)(uint8_t)b[k] << (8 * k);
	return x;
}

// Counters only (operator+= adds them all).
struct Totals {
	uint64_t records = 0, compared = 0, entry = 0, pieces = 0, memory = 0, konst = 0;
	uint64_t known = 0, deep_entry = 0, mismatches = 0, missed = 0, extra = 0;
	uint64_t scope_diff = 0, hidden_hits = 0;
	uint64_t expr_compared = 0, expr_entry = 0, expr_pieces = 0, expr_mismatches = 0;
	uint64_t expr_missed = 0;

	Totals &operator+=(const Totals &o)
	{
		uint64_t *d = &records;
		const uint64_t *x = &o.records;
		for (size_t k = 0; k < sizeof(*this) / sizeof(uint64_t); k++)
			d[k] += x[k];
		return *this;
	}
};

// What the test knows of the C program's values; false: wrong.  *checked
// counts the checks made.
bool
knows(const std::string &fn, const uint64_t *in, uint32_t depth, const std::string &name,
    const Value &v, uint64_t size, uint64_t *checked)
{
	bool whole = v.ok && size <= 8;
	for (bool k : v.known)
		whole = whole && k;
	uint64_t x = whole ? le(v.bytes, size) : 0;
	uint64_t mask = size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
	auto eq = [&](uint64_t want) { ++*checked; return x == (want & mask); };
	// The structs in pieces: each member where the test knows its bytes.
	auto member = [&](uint32_t off, uint32_t n, uint64_t want) {
		for (uint32_t k = 0; k < n; k++)
			if (!v.ok || off + k >= v.known.size() || !v.known[off + k])
				return true;
		++*checked;
		uint64_t m = n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
		return le(v.bytes.substr(off, n), n) == (want & m);
	};
	if (fn == "kv_big" && name == "s")
		return member(0, 8, in[0] * 3) && member(8, 4, in[1] + 2) &&
		    member(12, 4, in[0] ^ in[1]);
	if (fn == "kv_bits" && name == "s")
		return member(3, 1, in[0] + in[1]) && member(4, 4, in[0] * 5);
	if (fn == "kv_nest" && name == "s")
		return member(0, 2, in[0] + 1) && member(2, 2, in[1] - 1) &&
		    member(4, 4, in[0] * in[1]) && member(8, 8, in[0] - in[1]);
	if (fn == "kv_split" && name == "p" && size == 8)	// {x + 1, y - 1}
		return member(0, 4, in[0] + 1) && member(4, 4, in[1] - 1);
	if (!whole)
		return true;
	if (fn == "kv_rec") {
		uint64_t n = in[0], acc = in[1];
		for (uint32_t d = 0; d < depth; d++) {
			acc = acc * 2 + n;
			n--;
		}
		if (name == "n")
			return eq(n);
		if (name == "acc")
			return eq(acc);
		return true;
	}
	if (fn == "kv_loop") {
		if (name == "off")
			return eq(in[0]);
		if (name == "n")
			return eq(in[1]);
		if (name == "i") {
			++*checked;
			return (int32_t)x >= 0 && (int32_t)x <= ((int32_t)in[1] < 0 ? 0 : (int32_t)in[1]);
		}
		if (name == "a")
			return eq((uint64_t)(uintptr_t)(kh_scratch.d + (in[0] & 15)));
		return true;
	}
	if (fn == "kv_stack" && name == "seed")
		return eq(in[0]);
	if (fn == "kv_inl" && name == "k") {
		++*checked;
		return x == 3 || x == 5;
	}
	static const std::map<std::string, std::vector<std::string>> params = {
		{"kv_split", {"x", "y"}}, {"kv_big", {"x", "y"}}, {"kv_nest", {"x", "y"}},
		{"kv_bits", {"x", "y"}}, {"kv_early", {"p", "q"}}, {"kv_inl", {"a", "b"}},
	};
	auto p = params.find(fn);
	if (p != params.end())
		for (size_t k = 0; k < p->second.size(); k++)
			if (name == p->second[k])
				return eq(in[k]);
	return true;
}

std::string
hexs(const std::string &b, const std::vector<bool> &known)
{
	std::string s;
	char t[4];
	for (size_t k = 0; k < b.size(); k++) {
		if (k < known.size() && !known[k])
			s += "??";
		else {
			snprintf(t, sizeof(t), "%02x", (uint8_t)b[k]);
			s += t;
		}
	}
	return s;
}

// What a planned TraceVars arms in the harness: each planned instruction
// with its plan's program, and a hidden entry probe where arm() would put
// one (the first offset it may go to).
struct Arming {
	std::vector<struct kh_varm> arm;
	std::vector<bool> hidden;
	std::map<uint32_t, uint32_t> bi_of;
	std::map<std::string, std::unique_ptr<struct kinst_prog>> progs;
	unsigned nhidden = 0;

	const struct kinst_prog *verified(const char *fn, const std::vector<struct kinst_pinsn> &code)
	{
		std::string key((const char *)code.data(), code.size() * sizeof(code[0]));
		auto it = progs.find(key);
		if (it != progs.end())
			return it->second.get();
		auto p = std::make_unique<struct kinst_prog>();
		uint32_t bad = 0;
		int v = kinst_prog_verify(code.data(), (uint32_t)code.size(), p.get(), &bad);
		if (v != KINST_PV_OK)
			ATF_FAIL(std::string(fn) + ": a plan's program is refused at " +
			    std::to_string(bad) + ": verdict " + std::to_string(v));
		return (progs[key] = std::move(p)).get();
	}

	Arming(const char *fn, const uint32_t *offs, uint32_t nb, const kinst::TraceVars &tv)
	    : arm(nb), hidden(nb, false)
	{
		for (uint32_t b = 0; b < nb; b++) {
			bi_of[offs[b]] = b;
			arm[b] = {nullptr, 0, 0};
			const kinst::TraceVars::Plan *p = tv.plan(fn, offs[b]);
			if (p == nullptr)
				continue;
			arm[b].arm = 1;
			arm[b].prog = p->code.empty() ? nullptr : verified(fn, p->code);
		}
		for (const auto &e : tv.entry_probes()) {
			if (e.offsets.empty())
				continue;
			uint32_t b = bi_of.at(e.offsets[0]);
			ATF_REQUIRE(!arm[b].arm);
			arm[b].arm = 1;
			arm[b].prog = verified(fn, e.code);
			hidden[b] = true;
			nhidden++;
		}
	}
};

// A corpus function: its instructions (linear sweep) and the test's own
// variables at each.
struct Loaded {
	const uint32_t *offs = nullptr;
	uint32_t nb = 0;
	uint64_t start = 0;
	struct kh_stats st;
	std::map<uint32_t, std::vector<VarAt>> vars;

	Loaded(const struct kh_fn *fn, Dwarf *dbg)
	{
		memset(&st, 0, sizeof(st));
		ATF_REQUIRE_EQ(kh_vars_load(fn, &offs, &nb, &start, &st), 0);
		for (uint32_t b = 0; b < nb; b++)
			vars[offs[b]] = vars_at(dbg, start + offs[b]);
	}
};

// A stepped state: its index, offset, what the test evaluated there, and
// "fn+off input N state I" for messages.
struct State {
	uint32_t index, off;
	const StateVals &sv;
	const std::string &where;
};

// Input in run with am's probes: the ground truth and the records walked
// together.  hit: each state at a recording probe, with its record (its
// address and registers checked to be the stepped state's); unplanned:
// each state where nothing is armed.  A hidden entry probe's states have
// no record; the programs filter exactly those, and fault nowhere.
void
walk_run(const struct kh_fn *fn, uint32_t in, Loaded &L, Arming &am,
    const std::function<void(const State &, const kinst::HitRecord &)> &hit,
    const std::function<void(const State &)> &unplanned, struct kh_vrun *vr, uint64_t *nhidden)
{
	Ctx c;
	c.start = L.start;
	c.vars = &L.vars;
	c.states.reserve(1 << 14);
	if (kh_vars_run(fn, (int)in, am.arm.data(), on_step, &c, vr, &L.st) != 0)
		ATF_FAIL(std::string(fn->name) + ": the run failed (see stdout)");
	ATF_REQUIRE_EQ(vr->faults, 0u);
	size_t off = 0;
	uint64_t hidden_states = 0;
	for (uint32_t i = 0; i < vr->ngt; i++) {
		const struct kinst_regs &g = vr->gt[i];
		uint32_t o = (uint32_t)(g.rip - L.start);
		uint32_t b = am.bi_of.at(o);
		std::string where = std::string(fn->name) + "+" + std::to_string(o) +
		    " input " + std::to_string(in) + " state " + std::to_string(i);
		State s{i, o, c.states.at(i), where};
		if (!am.arm[b].armed) {
			unplanned(s);
			continue;
		}
		if (am.hidden[b]) {
			hidden_states++;
			continue;
		}
		if (off + sizeof(struct kinst_rec_hdr) > vr->nbytes)
			ATF_FAIL(where + ": no record");
		const auto *h = (const struct kinst_rec_hdr *)(vr->recs + off);
		kinst::HitRecord r = kinst::parse_hit_record(vr->recs + off, h->size);
		off += h->size;
		if (r.hit.addr != g.rip || memcmp(r.hit.regs.gpr, g.gpr, sizeof(g.gpr)) != 0)
			ATF_FAIL(where + ": the record's registers are not the stepped run's");
		hit(s, r);
	}
	if (off != vr->nbytes)
		ATF_FAIL(std::string(fn->name) + ": more records than armed states");
	ATF_REQUIRE_EQ(vr->filtered, hidden_states);
	*nhidden = hidden_states;
}

// One function, one pass: plan, arm, run every input, compare.
void
check_function(const struct kh_fn *fn, Dwarf *dbg, bool hidden_entry, Totals &t)
{
	Loaded L(fn, dbg);
	kinst::SourceOptions so;
	so.kernel = kh_self_path();
	kinst::TraceVars tv({}, true, {}, false, &so, 1u << 20);
	std::vector<kinst::Spec> specs;
	if (!hidden_entry)
		specs.push_back(kinst::parse_spec(fn->name));
	else
		for (uint32_t b = 1; b < L.nb; b++)
			specs.push_back(kinst::parse_spec(std::string(fn->name) + "+" +
			    std::to_string(L.offs[b])));
	try {
		tv.prepare(specs, "", {}, nullptr);
	} catch (const kinst::Error &e) {
		ATF_FAIL(std::string(fn->name) + ": planning: " + e.what());
	}
	Arming am(fn->name, L.offs, L.nb, tv);
	if (hidden_entry)
		ATF_REQUIRE_EQ(am.nhidden, 1u);	// every corpus function reads entry values

	Totals ft;
	for (uint32_t in = 0; in < fn->ninputs; in++) {
		auto hit = [&](const State &s, const kinst::HitRecord &r) {
			const std::string &where = s.where;
			const StateVals &sv = s.sv;
			const std::vector<VarAt> &here = L.vars.at(s.off);
			ft.records++;
			const kinst::TraceVars::Plan *p = tv.plan(fn->name, s.off);
			// The same names in scope.
			std::set<std::string> mine, theirs;
			for (const VarAt &v : here)
				mine.insert(v.name);
			for (const auto &it : p->items)
				theirs.insert(it.name);
			if (mine != theirs) {
				if (ft.scope_diff++ < 5)
					printf("SCOPE %s: kinstctl and the test see different "
					    "variables\n", where.c_str());
			}
			for (const auto &it : p->items) {
				auto ev = sv.vals.find(it.name);
				const VarAt *va = nullptr;
				for (const VarAt &v : here)
					if (v.name == it.name)
						va = &v;
				bool mine_ok = ev != sv.vals.end() && ev->second.ok;
				if (!it.why.empty()) {
					if (mine_ok) {
						ft.missed++;
						printf("MISSED %s: %s: kinstctl: %s; the test reads %s\n",
						    where.c_str(), it.name.c_str(), it.why.c_str(),
						    hexs(ev->second.bytes, ev->second.known).c_str());
					}
					continue;
				}
				kinst::VarBytes vb;
				std::string why;
				tv.bytes_of(it, r, vb, &why);
				if (!mine_ok) {
					ft.extra++;
					printf("EXTRA %s: %s: kinstctl reads %s; the test: %s\n",
					    where.c_str(), it.name.c_str(),
					    hexs(vb.bytes, vb.known).c_str(),
					    ev == sv.vals.end() ? "no location" : ev->second.why.c_str());
					continue;
				}
				const Value &e = ev->second;
				ft.compared++;
				ft.entry += va->entry;
				ft.deep_entry += va->entry && sv.depth > 0;
				ft.pieces += va->pieces;
				ft.memory += va->memory;
				ft.konst += va->konst;
				if (vb.bytes != e.bytes || vb.known != e.known) {
					if (ft.mismatches++ < 10)
						printf("MISMATCH %s: %s (%s): kinstctl %s, the test %s%s%s\n",
						    where.c_str(), it.name.c_str(), it.v.dwarf.c_str(),
						    hexs(vb.bytes, vb.known).c_str(),
						    hexs(e.bytes, e.known).c_str(),
						    why.empty() ? "" : ": ", why.c_str());
					continue;
				}
				if (!knows(fn->name, fn->in[in], sv.depth, it.name, e, va->size,
				    &ft.known) && ft.mismatches++ < 10)
					printf("WRONG %s: %s = %s at depth %u is not the program's "
					    "value\n", where.c_str(), it.name.c_str(),
					    hexs(e.bytes, e.known).c_str(), sv.depth);
			}
		};
		struct kh_vrun vr;
		uint64_t nhidden;
		walk_run(fn, in, L, am, hit, [](const State &) {}, &vr, &nhidden);
		ft.hidden_hits += nhidden;
		// Each activation pushed once and was matched.
		ATF_REQUIRE(vr.ts.pushed > 0);
		ATF_REQUIRE_EQ(vr.ts.nothread, 0u);
	}
	printf("%s%s: %ju records; %ju values compared (entry values %ju, in inner "
	    "activations %ju; pieces %ju; in memory %ju; constants %ju); %ju known "
	    "values checked; %ju mismatches, %ju missed, %ju extra, %ju scope "
	    "differences%s\n", fn->name, hidden_entry ? " (hidden entry probe)" : "",
	    (uintmax_t)ft.records, (uintmax_t)ft.compared, (uintmax_t)ft.entry,
	    (uintmax_t)ft.deep_entry, (uintmax_t)ft.pieces, (uintmax_t)ft.memory,
	    (uintmax_t)ft.konst, (uintmax_t)ft.known, (uintmax_t)ft.mismatches,
	    (uintmax_t)ft.missed, (uintmax_t)ft.extra, (uintmax_t)ft.scope_diff,
	    hidden_entry ? (", " + std::to_string(ft.hidden_hits) + " entry hits").c_str() : "");
	ATF_REQUIRE_EQ(L.st.divergences, 0u);
	ATF_REQUIRE_EQ(L.st.harness_errors, 0u);
	t += ft;
}

// $variables in expressions (--if, --by, --value): "$x" for each scalar,
// and the members of the struct split over registers ("$p.lo"), compiled by kinstctl's expression compiler through
// TraceVars' per-instruction environment (emit_location_value, entry
// values hard), each captured as a value (KINST_OP_VAL) on every
// instruction where it can be computed; equal to the test's own
// evaluation there, extended by the type's sign.
struct Expr {
	std::string text, var;
	uint32_t off, size;
	bool sign;
	// Bytes [0, whole) of the variable must be known too (0: only the
	// member's own: a member of a struct in pieces is read from the
	// pieces that hold it, whether or not the others are known, issue 43).
	uint32_t whole = 0;
	// A bitfield: bits [bitoff, bitoff + bits) of the variable (off and
	// size then unused); known only where each of its bits is.
	uint32_t bitoff = 0, bits = 0;
};

// Is bit b of a value known (per bit where pieces said, else per byte)?
bool
bit_known(const Value &v, uint32_t b)
{
	if (!v.kbits.empty())
		return b < v.kbits.size() && v.kbits[b];
	return b / 8 < v.known.size() && v.known[b / 8];
}

// An expression's value in the test's bytes, sign-extended by its type.
uint64_t
expr_value(const Expr &x, const Value &v)
{
	uint64_t want = 0;
	uint32_t n = x.bits != 0 ? x.bits : 8 * x.size;
	if (x.bits != 0) {
		for (uint32_t i = 0; i < x.bits; i++) {
			uint32_t b = x.bitoff + i;
			want |= (uint64_t)(((uint8_t)v.bytes[b / 8] >> (b % 8)) & 1) << i;
		}
	} else
		want = le(v.bytes.substr(x.off), x.size);
	if (n < 64 && x.sign && (want >> (n - 1)) & 1)
		want |= ~0ull << n;
	return want;
}

void
check_exprs(const struct kh_fn *fn, Dwarf *dbg, Totals &t)
{
	Loaded L(fn, dbg);
	std::map<std::string, const VarAt *> scalars;
	for (const auto &kv : L.vars)
		for (const VarAt &v : kv.second)
			if (v.scalar && v.size <= 8 && v.located)
				scalars[v.name] = &v;
	std::vector<Expr> exprs;
	for (const auto &kv : scalars)
		exprs.push_back({"$" + kv.first, kv.first, 0, (uint32_t)kv.second->size,
		    kv.second->scalar == 2});
	// The split struct's members, from the pieces that hold each: also
	// where the other member is optimized out.
	if (std::string(fn->name) == "kv_big") {	// 16 bytes (issue 43)
		exprs.push_back({"$s.a", "s", 0, 8, true, 0});
		exprs.push_back({"$s.b", "s", 8, 4, true, 0});
		exprs.push_back({"$s.c", "s", 12, 4, true, 0});
	}
	if (std::string(fn->name) == "kv_bits") {	// bitfields in bit pieces
		Expr lo{"$s.lo", "s", 0, 0, false, 0, 0, 12};
		Expr mid{"$s.mid", "s", 0, 0, true, 0, 12, 12};
		exprs.push_back(lo);
		exprs.push_back(mid);
		exprs.push_back({"$s.top", "s", 4, 4, false, 0});
	}
	if (std::string(fn->name) == "kv_nest") {	// a struct in a struct
		exprs.push_back({"$s.in.u", "s", 0, 2, true, 0});
		exprs.push_back({"$s.in.v", "s", 2, 2, true, 0});
		exprs.push_back({"$s.w", "s", 4, 4, true, 0});
		exprs.push_back({"$s.z", "s", 8, 8, true, 0});
	}
	if (std::string(fn->name) == "kv_split") {
		exprs.push_back({"$p.lo", "p", 0, 4, true, 0});
		exprs.push_back({"$p.hi", "p", 4, 4, true, 0});
	}
	kinst::SourceOptions so;
	so.kernel = kh_self_path();
	Totals ft;
	for (const Expr &x : exprs) {
		kinst::TraceVars tv({}, false, {}, true, &so, 1u << 20);
		std::vector<kinst::Spec> specs{kinst::parse_spec(fn->name)};
		kinst::TypeEnv env;
		auto prog = [&x](const kinst::TypeEnv *e) {
			std::vector<struct kinst_pinsn> c = kinst::compile_expr(x.text, "vars_test", e);
			ATF_REQUIRE(!c.empty() && c.back().op == KINST_OP_RET);
			c.back() = kinst::make_pinsn(KINST_OP_VAL);
			c.push_back(kinst::make_pinsn(KINST_OP_IMM, 0, 1));
			c.push_back(kinst::make_pinsn(KINST_OP_RET));
			return c;
		};
		try {
			tv.prepare(specs, "", {}, &env, prog);
		} catch (const kinst::Error &e) {
			ATF_FAIL(std::string(fn->name) + ": " + x.text + ": planning: " + e.what());
		}
		Arming am(fn->name, L.offs, L.nb, tv);
		// The test's value of x at a state, if it knows all of it.
		auto mine = [&x](const StateVals &sv, const Value **v) {
			auto ev = sv.vals.find(x.var);
			*v = ev == sv.vals.end() ? nullptr : &ev->second;
			bool ok = *v != nullptr && (*v)->ok;
			for (uint32_t k = 0; ok && x.bits == 0 && k < x.size; k++)
				ok = (*v)->known.at(x.off + k);
			for (uint32_t k = 0; ok && k < x.bits; k++)
				ok = bit_known(**v, x.bitoff + k);
			for (uint32_t k = 0; ok && k < x.whole; k++)
				ok = (*v)->known.at(k);
			return ok;
		};
		auto unplanned = [&](const State &s) {
			const Value *v;
			if (mine(s.sv, &v) && ft.expr_missed++ < 10)
				printf("MISSED %s: %s: not planned; the test reads %s\n",
				    s.where.c_str(), x.text.c_str(), hexs(v->bytes, v->known).c_str());
		};
		auto hit = [&](const State &s, const kinst::HitRecord &r) {
			const kinst::CaptureData *cd = nullptr;
			for (const auto &cc : r.caps)
				if (cc.value)
					cd = &cc;
			if (cd == nullptr || cd->bytes.size() != 8)
				ATF_FAIL(s.where + ": " + x.text + ": no value capture");
			uint64_t got = le(cd->bytes, 8);
			const Value *v;
			if (!mine(s.sv, &v)) {
				if (ft.expr_mismatches++ < 10)
					printf("EXTRA %s: %s: kinstctl computes %#jx; the test: %s\n",
					    s.where.c_str(), x.text.c_str(), (uintmax_t)got,
					    v == nullptr ? "no location" : v->ok ? "bytes unknown" :
					    v->why.c_str());
				return;
			}
			uint64_t want = expr_value(x, *v);
			const VarAt *va = nullptr;
			for (const VarAt &w : L.vars.at(s.off))
				if (w.name == x.var)
					va = &w;
			ft.expr_compared++;
			ft.expr_entry += va && va->entry;
			ft.expr_pieces += va && va->pieces;
			if (got != want && ft.expr_mismatches++ < 10)
				printf("MISMATCH %s: %s: kinstctl %#jx, the test %#jx\n", s.where.c_str(),
				    x.text.c_str(), (uintmax_t)got, (uintmax_t)want);
		};
		for (uint32_t in = 0; in < fn->ninputs; in++) {
			struct kh_vrun vr;
			uint64_t nhidden;
			walk_run(fn, in, L, am, hit, unplanned, &vr, &nhidden);
		}
	}
	// GCC leaves s.hi's byte of kv_bits optimized out everywhere (an
	// empty piece): refused, naming the byte.
	if (std::string(fn->name) == "kv_bits") {
		kinst::TraceVars tv({}, false, {}, true, &so, 1u << 20);
		std::vector<kinst::Spec> specs{kinst::parse_spec(fn->name)};
		kinst::TypeEnv env;
		try {
			tv.prepare(specs, "", {}, &env, [](const kinst::TypeEnv *te) {
				return kinst::compile_expr("$s.hi", "vars_test", te);
			});
			ATF_FAIL("$s.hi of kv_bits, optimized out, was accepted");
		} catch (const kinst::Error &err) {
			std::string w = err.what();
			printf("$s.hi: refused: %s\n", w.c_str());
			ATF_REQUIRE(w.find("member 'hi': bytes [3..4) of it were optimized out") !=
			    std::string::npos);
		}
	}
	// What a struct in registers cannot do: be addressed or indexed.
	// At an instruction where the whole of p is in registers.
	int64_t whole_at = -1;
	for (const auto &kv : L.vars)
		for (const VarAt &v : kv.second) {
			bool whole = v.name == "p" && v.located && v.pieces && v.expr.size() > 0 &&
			    v.expr[0].atom != DW_OP_piece;
			for (size_t k = 1; whole && k < v.expr.size(); k++)
				whole = !(v.expr[k].atom == DW_OP_piece && v.expr[k - 1].atom == DW_OP_piece);
			if (whole && whole_at < 0)
				whole_at = kv.first;
		}
	if (std::string(fn->name) == "kv_split") {
		ATF_REQUIRE(whole_at >= 0);
		for (const char *bad : {"&$p.lo", "$p[0]"}) {
			kinst::TraceVars tv({}, false, {}, true, &so, 1u << 20);
			std::vector<kinst::Spec> specs{kinst::parse_spec(std::string(fn->name) + "+" +
			    std::to_string(whole_at))};
			kinst::TypeEnv env;
			std::string e = bad;
			try {
				tv.prepare(specs, "", {}, &env, [&e](const kinst::TypeEnv *te) {
					return kinst::compile_expr(e, "vars_test", te);
				});
				ATF_FAIL(e + " on a struct in registers was accepted");
			} catch (const kinst::Error &err) {
				std::string w = err.what();
				printf("%s: refused: %s\n", bad, w.c_str());
				ATF_REQUIRE(w.find(e[0] == '&' ? "needs an object in memory" :
				    "has no address here") != std::string::npos);
			}
		}
	}
	printf("%s ($variables): %zu expressions, %ju values compared (entry values %ju, "
	    "pieces %ju); %ju mismatches, %ju missed\n", fn->name, exprs.size(),
	    (uintmax_t)ft.expr_compared, (uintmax_t)ft.expr_entry, (uintmax_t)ft.expr_pieces,
	    (uintmax_t)ft.expr_mismatches, (uintmax_t)ft.expr_missed);
	ATF_REQUIRE_EQ(L.st.divergences, 0u);
	ATF_REQUIRE_EQ(L.st.harness_errors, 0u);
	t += ft;
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(every_instruction);
ATF_TEST_CASE_BODY(every_instruction)
{
	char err[256];
	if (kh_setup(err, sizeof(err)) != 0)
		ATF_FAIL(std::string("harness setup: ") + err);
	int fd = open("/proc/self/exe", O_RDONLY);
	ATF_REQUIRE(fd >= 0);
	Dwarf *dbg = dwarf_begin(fd, DWARF_C_READ);
	ATF_REQUIRE(dbg != nullptr);
	Totals t;
	for (const struct kh_fn *fn = kh_corpus_vars; fn->name != nullptr; fn++) {
		for (bool hidden : {false, true})
			check_function(fn, dbg, hidden, t);
		check_exprs(fn, dbg, t);
	}
	dwarf_end(dbg);
	close(fd);
	printf("total: %ju records, %ju values compared (entry values %ju, in inner "
	    "activations %ju, pieces %ju, in memory %ju), %ju known values; %ju "
	    "mismatches, %ju missed, %ju extra, %ju scope differences\n",
	    (uintmax_t)t.records, (uintmax_t)t.compared, (uintmax_t)t.entry,
	    (uintmax_t)t.deep_entry, (uintmax_t)t.pieces, (uintmax_t)t.memory,
	    (uintmax_t)t.known, (uintmax_t)t.mismatches, (uintmax_t)t.missed,
	    (uintmax_t)t.extra, (uintmax_t)t.scope_diff);
	ATF_REQUIRE_EQ(t.mismatches, 0u);
	ATF_REQUIRE_EQ(t.missed, 0u);
	ATF_REQUIRE_EQ(t.extra, 0u);
	ATF_REQUIRE_EQ(t.scope_diff, 0u);
	// The corpus exercises what it is for (gcc 12's figures are far above).
	ATF_REQUIRE(t.compared > 500);
	ATF_REQUIRE(t.entry > 100);
	ATF_REQUIRE(t.deep_entry > 10);
	ATF_REQUIRE(t.pieces > 10);
	ATF_REQUIRE(t.memory > 10);
	ATF_REQUIRE(t.known > 300);
	ATF_REQUIRE(t.hidden_hits > 0);
	printf("total ($variables): %ju values compared (entry values %ju, pieces %ju); "
	    "%ju mismatches, %ju missed\n", (uintmax_t)t.expr_compared,
	    (uintmax_t)t.expr_entry, (uintmax_t)t.expr_pieces, (uintmax_t)t.expr_mismatches,
	    (uintmax_t)t.expr_missed);
	ATF_REQUIRE_EQ(t.expr_mismatches, 0u);
	ATF_REQUIRE_EQ(t.expr_missed, 0u);
	ATF_REQUIRE(t.expr_compared > 300);
	ATF_REQUIRE(t.expr_entry > 50);
	ATF_REQUIRE(t.expr_pieces > 10);
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, every_instruction);
}
