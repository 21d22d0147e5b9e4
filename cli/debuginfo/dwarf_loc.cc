// SPDX-License-Identifier: BSD-2-Clause
// DWARF location expressions to expression trees (dwarf_loc.h).
#include "debuginfo/dwarf_loc.h"

#include <algorithm>

#include <dwarf.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"

extern "C" {
#include "kinst_prog.h"
}

namespace kinst {

namespace {

// The operations' names, as DWARF 5 (7.7.1) and GNU spell them.
const char *
op_name(uint8_t a)
{
	static const struct { uint8_t atom; const char *name; } names[] = {
		{DW_OP_addr, "DW_OP_addr"}, {DW_OP_deref, "DW_OP_deref"},
		{DW_OP_const1u, "DW_OP_const1u"}, {DW_OP_const1s, "DW_OP_const1s"},
		{DW_OP_const2u, "DW_OP_const2u"}, {DW_OP_const2s, "DW_OP_const2s"},
		{DW_OP_const4u, "DW_OP_const4u"}, {DW_OP_const4s, "DW_OP_const4s"},
		{DW_OP_const8u, "DW_OP_const8u"}, {DW_OP_const8s, "DW_OP_const8s"},
		{DW_OP_constu, "DW_OP_constu"}, {DW_OP_consts, "DW_OP_consts"},
		{DW_OP_dup, "DW_OP_dup"}, {DW_OP_drop, "DW_OP_drop"},
		{DW_OP_over, "DW_OP_over"}, {DW_OP_pick, "DW_OP_pick"},
		{DW_OP_swap, "DW_OP_swap"}, {DW_OP_rot, "DW_OP_rot"},
		{DW_OP_xderef, "DW_OP_xderef"}, {DW_OP_abs, "DW_OP_abs"},
		{DW_OP_and, "DW_OP_and"}, {DW_OP_div, "DW_OP_div"},
		{DW_OP_minus, "DW_OP_minus"}, {DW_OP_mod, "DW_OP_mod"},
		{DW_OP_mul, "DW_OP_mul"}, {DW_OP_neg, "DW_OP_neg"},
		{DW_OP_not, "DW_OP_not"}, {DW_OP_or, "DW_OP_or"},
		{DW_OP_plus, "DW_OP_plus"}, {DW_OP_plus_uconst, "DW_OP_plus_uconst"},
		{DW_OP_shl, "DW_OP_shl"}, {DW_OP_shr, "DW_OP_shr"},
		{DW_OP_shra, "DW_OP_shra"}, {DW_OP_xor, "DW_OP_xor"},
		{DW_OP_bra, "DW_OP_bra"}, {DW_OP_eq, "DW_OP_eq"},
		{DW_OP_ge, "DW_OP_ge"}, {DW_OP_gt, "DW_OP_gt"},
		{DW_OP_le, "DW_OP_le"}, {DW_OP_lt, "DW_OP_lt"},
		{DW_OP_ne, "DW_OP_ne"}, {DW_OP_skip, "DW_OP_skip"},
		{DW_OP_regx, "DW_OP_regx"}, {DW_OP_fbreg, "DW_OP_fbreg"},
		{DW_OP_bregx, "DW_OP_bregx"}, {DW_OP_piece, "DW_OP_piece"},
		{DW_OP_deref_size, "DW_OP_deref_size"},
		{DW_OP_xderef_size, "DW_OP_xderef_size"}, {DW_OP_nop, "DW_OP_nop"},
		{DW_OP_push_object_address, "DW_OP_push_object_address"},
		{DW_OP_call2, "DW_OP_call2"}, {DW_OP_call4, "DW_OP_call4"},
		{DW_OP_call_ref, "DW_OP_call_ref"},
		{DW_OP_form_tls_address, "DW_OP_form_tls_address"},
		{DW_OP_call_frame_cfa, "DW_OP_call_frame_cfa"},
		{DW_OP_bit_piece, "DW_OP_bit_piece"},
		{DW_OP_implicit_value, "DW_OP_implicit_value"},
		{DW_OP_stack_value, "DW_OP_stack_value"},
		{DW_OP_implicit_pointer, "DW_OP_implicit_pointer"},
		{DW_OP_addrx, "DW_OP_addrx"}, {DW_OP_constx, "DW_OP_constx"},
		{DW_OP_entry_value, "DW_OP_entry_value"},
		{DW_OP_const_type, "DW_OP_const_type"},
		{DW_OP_regval_type, "DW_OP_regval_type"},
		{DW_OP_deref_type, "DW_OP_deref_type"},
		{DW_OP_xderef_type, "DW_OP_xderef_type"},
		{DW_OP_convert, "DW_OP_convert"},
		{DW_OP_reinterpret, "DW_OP_reinterpret"},
		{DW_OP_GNU_push_tls_address, "DW_OP_GNU_push_tls_address"},
		{DW_OP_GNU_uninit, "DW_OP_GNU_uninit"},
		{DW_OP_GNU_encoded_addr, "DW_OP_GNU_encoded_addr"},
		{DW_OP_GNU_implicit_pointer, "DW_OP_GNU_implicit_pointer"},
		{DW_OP_GNU_entry_value, "DW_OP_GNU_entry_value"},
		{DW_OP_GNU_const_type, "DW_OP_GNU_const_type"},
		{DW_OP_GNU_regval_type, "DW_OP_GNU_regval_type"},
		{DW_OP_GNU_deref_type, "DW_OP_GNU_deref_type"},
		{DW_OP_GNU_convert, "DW_OP_GNU_convert"},
		{DW_OP_GNU_reinterpret, "DW_OP_GNU_reinterpret"},
		{DW_OP_GNU_parameter_ref, "DW_OP_GNU_parameter_ref"},
		{DW_OP_GNU_addr_index, "DW_OP_GNU_addr_index"},
		{DW_OP_GNU_const_index, "DW_OP_GNU_const_index"},
		{0xfd, "DW_OP_GNU_variable_value"},	// not in FreeBSD's dwarf.h
	};
	static char buf[8][32];
	static unsigned next;
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
		char *b = buf[next++ % 8];
		snprintf(b, 32, "DW_OP_lit%u", a - DW_OP_lit0);
		return b;
	}
	if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
		char *b = buf[next++ % 8];
		snprintf(b, 32, "DW_OP_reg%u", a - DW_OP_reg0);
		return b;
	}
	if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
		char *b = buf[next++ % 8];
		snprintf(b, 32, "DW_OP_breg%u", a - DW_OP_breg0);
		return b;
	}
	for (const auto &n : names)
		if (n.atom == a)
			return n.name;
	char *b = buf[next++ % 8];
	snprintf(b, 32, "DW_OP_<0x%02x>", a);
	return b;
}

std::string
hex0x(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return b;
}

std::string
sdec(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "%" PRId64, (int64_t)v);
	return b;
}

std::string
soff(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "%+" PRId64, (int64_t)v);
	return b;
}

bool
is_signed_operand(uint8_t a)
{
	return a == DW_OP_const1s || a == DW_OP_const2s || a == DW_OP_const4s ||
	    a == DW_OP_const8s || a == DW_OP_consts || a == DW_OP_fbreg ||
	    a == DW_OP_skip || a == DW_OP_bra;
}

std::string
op_text(const LocOp &o)
{
	std::string s = op_name(o.atom);
	uint8_t a = o.atom;
	if (a >= DW_OP_reg0 && a <= DW_OP_reg31)
		return s + " " + dwarf_reg_llvm_name(a - DW_OP_reg0);
	if (a >= DW_OP_breg0 && a <= DW_OP_breg31)
		return s + " " + dwarf_reg_llvm_name(a - DW_OP_breg0) + soff(o.n1);
	if (a == DW_OP_regx)
		return s + " " + dwarf_reg_llvm_name(o.n1);
	if (a == DW_OP_bregx)
		return s + " " + dwarf_reg_llvm_name(o.n1) + soff(o.n2);
	if (a == DW_OP_entry_value || a == DW_OP_GNU_entry_value)
		return s + "(" + loc_text(o.sub) + ")";
	if (a == DW_OP_implicit_value) {
		s += " " + hex0x(o.block.size());
		for (unsigned char c : o.block) {
			char b[8];
			snprintf(b, sizeof(b), " 0x%02x", c);
			s += b;
		}
		return s;
	}
	switch (a) {
	case DW_OP_addr: case DW_OP_const1u: case DW_OP_const2u:
	case DW_OP_const4u: case DW_OP_const8u: case DW_OP_constu:
	case DW_OP_pick: case DW_OP_plus_uconst: case DW_OP_piece:
	case DW_OP_deref_size: case DW_OP_xderef_size: case DW_OP_addrx:
	case DW_OP_constx: case DW_OP_call2: case DW_OP_call4:
	case DW_OP_call_ref: case DW_OP_convert: case DW_OP_reinterpret:
	case DW_OP_GNU_convert: case DW_OP_GNU_reinterpret:
	case DW_OP_GNU_parameter_ref:
		return s + " " + hex0x(o.n1);
	case DW_OP_bit_piece:
		return s + " " + hex0x(o.n1) + " " + hex0x(o.n2);
	case DW_OP_implicit_pointer: case DW_OP_GNU_implicit_pointer:
		return s + " " + hex0x(o.n1) + " " + sdec(o.n2);
	default:
		break;
	}
	if (a == DW_OP_fbreg || a == DW_OP_skip || a == DW_OP_bra)
		return s + " " + soff(o.n1);
	if (is_signed_operand(a))
		return s + " " + sdec(o.n1);
	return s;
}

// ---- the symbolic stack machine ----

constexpr size_t max_weight = 4096;	// tree size, counting shared parts again
constexpr size_t max_stack = 64;

struct Weighted {
	LocNodeP n;
	size_t w;
};

class Machine {
public:
	Machine(const LocEnv &env, int depth) : env_(env), depth_(depth) {}
	Location run(const LocExpr &e);
	// Runs e and gives the top of its stack as a value (a CFA rule, a
	// frame base): false with why.
	bool value_of(const LocExpr &e, Weighted *out, std::string *why);

private:
	const LocEnv &env_;
	int depth_;
	std::vector<Weighted> st_;
	Location loc_;
	// The simple location being built (until DW_OP_piece or the end).
	enum { none, in_reg, stack_val, implicit } state_ = none;
	uint64_t reg_ = 0;
	std::string bytes_;
	bool failed_ = false;
	size_t weight_of_last_ = 1;	// of the value run() ended with

	void fail(const std::string &why)
	{
		if (!failed_) {
			failed_ = true;
			loc_.why = why;
		}
	}
	void push(LocNodeP n, size_t w)
	{
		if (st_.size() >= max_stack) {
			fail("the DWARF expression's stack is deeper than " +
			    std::to_string(max_stack));
			return;
		}
		if (w > max_weight) {
			fail("the DWARF expression is too large for a probe program");
			return;
		}
		st_.push_back(Weighted{std::move(n), w});
	}
	void konst(uint64_t v)
	{
		auto n = std::make_shared<LocNode>();
		n->kind = LocNode::konst;
		n->value = v;
		push(n, 1);
	}
	bool need(size_t k, const LocOp &o)
	{
		if (st_.size() < k) {
			fail(std::string(op_name(o.atom)) + ": the DWARF stack has " +
			    std::to_string(st_.size()) + " entries, it needs " +
			    std::to_string(k) + " (malformed expression)");
			return false;
		}
		return true;
	}
	Weighted pop()
	{
		Weighted w = st_.back();
		st_.pop_back();
		return w;
	}
	void binary(uint8_t op)
	{
		Weighted b = pop(), a = pop();
		auto n = std::make_shared<LocNode>();
		n->kind = LocNode::binary;
		n->op = op;
		n->a = a.n;
		n->b = b.n;
		push(n, a.w + b.w + 1);
	}
	void unary(uint8_t op)
	{
		Weighted a = pop();
		auto n = std::make_shared<LocNode>();
		n->kind = LocNode::unary;
		n->op = op;
		n->a = a.n;
		push(n, a.w + 1);
	}
	void reg_plus(uint64_t dwreg, uint64_t off, const LocOp &o)
	{
		int g = dwarf_reg(dwreg);
		if (g < 0) {
			fail(std::string(op_name(o.atom)) + ": " + dwarf_reg_name(dwreg) +
			    " is not a register kinst records");
			return;
		}
		auto r = std::make_shared<LocNode>();
		r->kind = LocNode::reg;
		r->gpr = g;
		plus_const(r, 1, off);
	}
	void plus_const(LocNodeP base, size_t w, uint64_t off)
	{
		if (off == 0) {
			push(base, w);
			return;
		}
		auto c = std::make_shared<LocNode>();
		c->kind = LocNode::konst;
		c->value = off;
		auto n = std::make_shared<LocNode>();
		n->kind = LocNode::binary;
		n->op = KINST_OP_ADD;
		n->a = base;
		n->b = c;
		push(n, w + 2);
	}
	bool is_const(const Weighted &w, uint64_t *v) const
	{
		if (w.n->kind != LocNode::konst)
			return false;
		*v = w.n->value;
		return true;
	}
	void finish_piece(uint32_t bits, uint32_t bit_offset, const LocOp *o);
	void step(const LocOp &o);
	// step's families of operations: each runs o and returns true if o is
	// one of its own, else returns false having done nothing.
	bool constant(const LocOp &o);
	bool stack_op(const LocOp &o);
	bool arithmetic(const LocOp &o);
	bool register_or_memory(const LocOp &o);
	bool piece_or_value(const LocOp &o);
	void refuse(uint8_t a);
	void frame_base_plus(uint64_t off);
	void push_cfa();
	void push_entry_value(const LocOp &o);
};

void
Machine::finish_piece(uint32_t bits, uint32_t bit_offset, const LocOp *o)
{
	LocPiece p;
	p.bits = bits;
	p.bit_offset = bit_offset;
	switch (state_) {
	case in_reg:
		p.kind = LocPiece::reg;
		p.dwreg = reg_;
		if (dwarf_reg(reg_) < 0)
			fail("lives in " + dwarf_reg_name(reg_) + ", which kinst does not record");
		break;
	case implicit:
		p.kind = LocPiece::implicit;
		p.bytes = bytes_;
		break;
	case stack_val:
		if (st_.empty()) {
			fail("DW_OP_stack_value on an empty stack (malformed expression)");
			return;
		}
		p.kind = LocPiece::value;
		p.expr = st_.back().n;
		break;
	case none:
		if (st_.empty()) {
			p.kind = LocPiece::empty;	// optimized out
			break;
		}
		p.kind = LocPiece::memory;
		p.expr = st_.back().n;
		break;
	}
	if (o == nullptr && !loc_.pieces.empty() && (state_ != none || !st_.empty()))
		fail("operations after the last DW_OP_piece (malformed expression)");
	if (o == nullptr && !loc_.pieces.empty())
		return;
	loc_.pieces.push_back(p);
	st_.clear();
	state_ = none;
	bytes_.clear();
}

// One operation.  The families below each run theirs and say whether o
// was one; what none of them knows is refused.
void
Machine::step(const LocOp &o)
{
	uint8_t a = o.atom;
	if (state_ != none && a != DW_OP_piece && a != DW_OP_bit_piece) {
		fail(std::string(op_name(a)) + " after a register, DW_OP_stack_value or "
		    "DW_OP_implicit_value that does not end its piece (malformed expression)");
		return;
	}
	if (constant(o) || stack_op(o) || arithmetic(o) || register_or_memory(o) ||
	    piece_or_value(o))
		return;
	refuse(a);
}

// DW_OP_lit*, DW_OP_addr and DW_OP_const*: push a constant.
bool
Machine::constant(const LocOp &o)
{
	uint8_t a = o.atom;
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
		konst(a - DW_OP_lit0);
		return true;
	}
	switch (a) {
	case DW_OP_addr: {
		uint64_t v = o.n1;
		std::string why;
		if (env_.addr && !env_.addr(o.n1, &v, &why)) {
			fail("DW_OP_addr " + hex0x(o.n1) + ": " + why);
			return true;
		}
		konst(v);
		return true;
	}
	case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
	case DW_OP_const8u: case DW_OP_constu: case DW_OP_const1s:
	case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
	case DW_OP_consts:
		konst(o.n1);	// libdw sign-extends the signed forms
		return true;
	default:
		return false;
	}
}

// DW_OP_dup, drop, over, pick, swap, rot and nop: rearrange the stack.
bool
Machine::stack_op(const LocOp &o)
{
	Weighted x, z;
	switch (o.atom) {
	case DW_OP_dup:
		if (need(1, o))
			push(st_.back().n, st_.back().w);
		return true;
	case DW_OP_drop:
		if (need(1, o))
			st_.pop_back();
		return true;
	case DW_OP_over:
		if (need(2, o)) {
			x = st_[st_.size() - 2];
			push(x.n, x.w);
		}
		return true;
	case DW_OP_pick:
		if (o.n1 >= st_.size()) {
			fail("DW_OP_pick " + std::to_string(o.n1) + ": the DWARF stack has " +
			    std::to_string(st_.size()) + " entries (malformed expression)");
			return true;
		}
		x = st_[st_.size() - 1 - o.n1];
		push(x.n, x.w);
		return true;
	case DW_OP_swap:
		if (need(2, o))
			std::swap(st_[st_.size() - 1], st_[st_.size() - 2]);
		return true;
	case DW_OP_rot:
		if (need(3, o)) {
			// (..., a, b, c) -> (..., c, a, b)
			size_t n = st_.size();
			z = st_[n - 1];
			st_[n - 1] = st_[n - 2];
			st_[n - 2] = st_[n - 3];
			st_[n - 3] = z;
		}
		return true;
	case DW_OP_nop:
		return true;
	default:
		return false;
	}
}

// DW_OP_plus_uconst, the binary operations, neg, not and shra: a tree
// over the top entries.
bool
Machine::arithmetic(const LocOp &o)
{
	uint8_t a = o.atom;
	uint64_t c;
	switch (a) {
	case DW_OP_plus_uconst:
		if (need(1, o)) {
			Weighted x = pop();
			plus_const(x.n, x.w, o.n1);
		}
		return true;
	case DW_OP_and: case DW_OP_or: case DW_OP_xor: case DW_OP_plus:
	case DW_OP_minus: case DW_OP_mul: case DW_OP_shl: case DW_OP_shr:
	case DW_OP_eq: case DW_OP_ne: case DW_OP_lt: case DW_OP_le:
	case DW_OP_gt: case DW_OP_ge: {
		static const struct { uint8_t dw, op; } map[] = {
			{DW_OP_and, KINST_OP_AND}, {DW_OP_or, KINST_OP_OR},
			{DW_OP_xor, KINST_OP_XOR}, {DW_OP_plus, KINST_OP_ADD},
			{DW_OP_minus, KINST_OP_SUB}, {DW_OP_mul, KINST_OP_MUL},
			{DW_OP_shl, KINST_OP_SHL}, {DW_OP_shr, KINST_OP_SHR},
			// DWARF's comparisons are signed (DWARF 5, 2.5.1.5)
			{DW_OP_eq, KINST_OP_EQ}, {DW_OP_ne, KINST_OP_NE},
			{DW_OP_lt, KINST_OP_LTS}, {DW_OP_le, KINST_OP_LES},
			{DW_OP_gt, KINST_OP_GTS}, {DW_OP_ge, KINST_OP_GES},
		};
		if (!need(2, o))
			return true;
		for (const auto &m : map)
			if (m.dw == a) {
				binary(m.op);
				return true;
			}
		return true;
	}
	case DW_OP_neg:
		if (need(1, o))
			unary(KINST_OP_NEG);
		return true;
	case DW_OP_not:
		if (need(1, o))
			unary(KINST_OP_BNOT);
		return true;
	case DW_OP_shra:
		// a >> n, arithmetic: ((a >> n) ^ m) - m with m = 1 << (63 - n),
		// for a constant n (what compilers emit).
		if (!need(2, o))
			return true;
		if (!is_const(st_.back(), &c)) {
			fail("DW_OP_shra by a computed count: a probe program has no "
			    "arithmetic shift");
			return true;
		}
		st_.pop_back();
		c &= 63;
		konst(c);
		binary(KINST_OP_SHR);
		konst(1ull << (63 - c));
		binary(KINST_OP_XOR);
		konst(1ull << (63 - c));
		binary(KINST_OP_SUB);
		return true;
	default:
		return false;
	}
}

// DW_OP_reg*, DW_OP_breg*, DW_OP_deref*, DW_OP_fbreg and
// DW_OP_call_frame_cfa: a register, or an address and what it holds.
bool
Machine::register_or_memory(const LocOp &o)
{
	uint8_t a = o.atom;
	if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
		state_ = in_reg;
		reg_ = a - DW_OP_reg0;
		return true;
	}
	if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
		reg_plus(a - DW_OP_breg0, o.n1, o);
		return true;
	}
	switch (a) {
	case DW_OP_regx:
		state_ = in_reg;
		reg_ = o.n1;
		return true;
	case DW_OP_bregx:
		reg_plus(o.n1, o.n2, o);
		return true;
	case DW_OP_deref:
	case DW_OP_deref_size: {
		unsigned size = a == DW_OP_deref ? 8 : (unsigned)o.n1;
		if (size != 1 && size != 2 && size != 4 && size != 8) {
			fail("DW_OP_deref_size " + std::to_string(o.n1) +
			    ": a probe reads 1, 2, 4 or 8 bytes");
			return true;
		}
		if (!need(1, o))
			return true;
		Weighted x = pop();
		auto n = std::make_shared<LocNode>();
		n->kind = LocNode::load;
		n->size = size;
		n->a = x.n;
		push(n, x.w + 1);
		return true;
	}
	case DW_OP_fbreg:
		frame_base_plus(o.n1);
		return true;
	case DW_OP_call_frame_cfa:
		push_cfa();
		return true;
	default:
		return false;
	}
}

// DW_OP_fbreg: the frame base (run in a machine of its own) plus off.
void
Machine::frame_base_plus(uint64_t off)
{
	if (env_.frame_base == nullptr || depth_ > 0) {
		fail("DW_OP_fbreg: " + (depth_ > 0 ? std::string("inside a frame base") :
		    env_.frame_base_why));
		return;
	}
	Machine m(env_, depth_ + 1);
	Location fb = m.run(*env_.frame_base);
	if (!fb.why.empty()) {
		fail("DW_OP_fbreg: the frame base (" + loc_text(*env_.frame_base) +
		    "): " + fb.why);
		return;
	}
	if (fb.pieces.size() != 1) {
		fail("DW_OP_fbreg: a frame base in pieces");
		return;
	}
	const LocPiece &p = fb.pieces[0];
	LocNodeP base;
	if (p.kind == LocPiece::reg) {
		auto r = std::make_shared<LocNode>();
		r->kind = LocNode::reg;
		r->gpr = dwarf_reg(p.dwreg);
		base = r;
	} else if (p.kind == LocPiece::memory) {
		base = p.expr;
	} else {
		fail("DW_OP_fbreg: the frame base is not a register or an address");
		return;
	}
	loc_.cfa = true;
	plus_const(base, m.weight_of_last_, off);
}

// DW_OP_call_frame_cfa: the CFA rule's value (run in a machine of its own).
void
Machine::push_cfa()
{
	if (env_.cfa == nullptr) {
		fail("DW_OP_call_frame_cfa: " + env_.cfa_why);
		return;
	}
	if (depth_ > 1) {
		fail("DW_OP_call_frame_cfa inside the CFA rule (malformed)");
		return;
	}
	Machine m(env_, 2);
	Weighted v;
	std::string why;
	if (!m.value_of(*env_.cfa, &v, &why)) {
		fail("DW_OP_call_frame_cfa: the CFA rule (" + loc_text(*env_.cfa) +
		    "): " + why);
		return;
	}
	loc_.cfa = true;
	push(v.n, v.w);
}

// What a piece is when not an address (DW_OP_stack_value,
// DW_OP_implicit_value), where it ends (DW_OP_piece, DW_OP_bit_piece), and
// the entry values.
bool
Machine::piece_or_value(const LocOp &o)
{
	switch (o.atom) {
	case DW_OP_stack_value:
		if (!need(1, o))
			return true;
		state_ = stack_val;
		return true;
	case DW_OP_implicit_value:
		state_ = implicit;
		bytes_ = o.block;
		return true;
	case DW_OP_piece:
		if (o.n1 == 0 || o.n1 > 65536) {
			fail("DW_OP_piece " + std::to_string(o.n1) + ": a piece of 1 to 65536 bytes");
			return true;
		}
		finish_piece((uint32_t)o.n1 * 8, 0, &o);
		return true;
	case DW_OP_bit_piece:
		if (o.n1 == 0 || o.n1 > 65536 * 8 || o.n2 > 64) {
			fail("DW_OP_bit_piece " + std::to_string(o.n1) + " " + std::to_string(o.n2) +
			    ": a piece of 1 to 524288 bits at an offset of at most 64");
			return true;
		}
		finish_piece((uint32_t)o.n1, (uint32_t)o.n2, &o);
		return true;
	case DW_OP_entry_value:
	case DW_OP_GNU_entry_value:
		push_entry_value(o);
		return true;
	default:
		return false;
	}
}

// DW_OP_entry_value, DW_OP_GNU_entry_value: a register's value at the
// function's entry (the only entry value supported).
void
Machine::push_entry_value(const LocOp &o)
{
	uint8_t a = o.atom;
	uint64_t r;
	if (o.sub.size() == 1 && o.sub[0].atom >= DW_OP_reg0 && o.sub[0].atom <= DW_OP_reg31)
		r = o.sub[0].atom - DW_OP_reg0;
	else if (o.sub.size() == 1 && o.sub[0].atom == DW_OP_regx)
		r = o.sub[0].n1;
	else {
		fail(std::string(op_name(a)) + "(" + loc_text(o.sub) +
		    "): only a register's entry value is supported");
		return;
	}
	int g = dwarf_reg(r);
	if (g < 0) {
		fail(std::string(op_name(a)) + ": " + dwarf_reg_name(r) +
		    " is not a register kinst records");
		return;
	}
	auto n = std::make_shared<LocNode>();
	n->kind = LocNode::entry_reg;
	n->gpr = g;
	loc_.entry = true;
	push(n, 1);
}

// What no family runs: division, control flow, implicit pointers, TLS and
// the rest, each with why.
void
Machine::refuse(uint8_t a)
{
	switch (a) {
	case DW_OP_div: case DW_OP_mod:
		fail(std::string(op_name(a)) + ": a probe program has no division");
		return;
	case DW_OP_abs:
		fail("DW_OP_abs: not supported in probe programs");
		return;
	case DW_OP_skip: case DW_OP_bra:
		fail(std::string(op_name(a)) + ": control flow in a location expression is "
		    "not supported");
		return;
	case DW_OP_implicit_pointer: case DW_OP_GNU_implicit_pointer:
		fail("a pointer to an object that was optimized out (" + std::string(op_name(a)) + ")");
		return;
	case DW_OP_GNU_parameter_ref:
		fail("DW_OP_GNU_parameter_ref: a caller's parameter, not supported");
		return;
	case DW_OP_form_tls_address: case DW_OP_GNU_push_tls_address:
		fail(std::string(op_name(a)) + ": thread-local storage is not supported");
		return;
	default:
		fail(std::string(op_name(a)) + ": not supported in probe programs");
		return;
	}
}

// Machine::run needs the weight of the last value for fbreg's sum.
Location
Machine::run(const LocExpr &e)
{
	for (const LocOp &o : e) {
		step(o);
		if (failed_)
			return loc_;
	}
	if (e.empty()) {
		LocPiece p;
		loc_.pieces.push_back(p);	// an empty location: optimized out
		return loc_;
	}
	if (!st_.empty())
		weight_of_last_ = st_.back().w;
	finish_piece(0, 0, nullptr);
	return loc_;
}

bool
Machine::value_of(const LocExpr &e, Weighted *out, std::string *why)
{
	for (const LocOp &o : e) {
		if (o.atom == DW_OP_fbreg || o.atom == DW_OP_call_frame_cfa ||
		    (o.atom >= DW_OP_reg0 && o.atom <= DW_OP_reg31) || o.atom == DW_OP_regx ||
		    o.atom == DW_OP_piece || o.atom == DW_OP_bit_piece ||
		    o.atom == DW_OP_stack_value || o.atom == DW_OP_implicit_value) {
			*why = std::string(op_name(o.atom)) + " in a value expression";
			return false;
		}
		step(o);
		if (failed_) {
			*why = loc_.why;
			return false;
		}
	}
	if (st_.empty()) {
		*why = "an empty expression";
		return false;
	}
	*out = st_.back();
	return true;
}

} // namespace

std::string
loc_kind(const LocExpr &e)
{
	if (e.empty())
		return "empty";
	for (const auto &o : e)
		if (o.atom == DW_OP_piece || o.atom == DW_OP_bit_piece)
			return "pieces";
	for (const auto &o : e)
		if (o.atom == DW_OP_entry_value || o.atom == DW_OP_GNU_entry_value)
			return "entry_value";
	uint8_t a = e[0].atom;
	if (e.size() == 1 && ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx))
		return "register";
	if (e.back().atom == DW_OP_implicit_value)
		return "implicit";
	if (e.back().atom == DW_OP_stack_value)
		return "value";
	return "memory";
}

std::string
loc_text(const LocExpr &e)
{
	std::string s;
	for (size_t i = 0; i < e.size(); i++)
		s += (i ? ", " : "") + op_text(e[i]);
	return s;
}

Location
compile_location(const LocExpr &e, const LocEnv &env)
{
	Machine m(env, 0);
	return m.run(e);
}

std::string
Location::kind() const
{
	if (pieces.size() > 1)
		return "pieces";
	if (pieces.empty() || pieces[0].kind == LocPiece::empty)
		return "empty";
	if (entry)
		return "entry_value";
	switch (pieces[0].kind) {
	case LocPiece::reg: return "register";
	case LocPiece::memory: return "memory";
	case LocPiece::value: return "value";
	case LocPiece::implicit: return "implicit";
	default: return "empty";
	}
}

namespace {

const char *
op_sym(uint8_t op)
{
	switch (op) {
	case KINST_OP_ADD: return "+";
	case KINST_OP_SUB: return "-";
	case KINST_OP_MUL: return "*";
	case KINST_OP_AND: return "&";
	case KINST_OP_OR: return "|";
	case KINST_OP_XOR: return "^";
	case KINST_OP_SHL: return "<<";
	case KINST_OP_SHR: return ">>";
	case KINST_OP_EQ: return "==";
	case KINST_OP_NE: return "!=";
	case KINST_OP_LTS: return "<";
	case KINST_OP_LES: return "<=";
	case KINST_OP_GTS: return ">";
	case KINST_OP_GES: return ">=";
	case KINST_OP_NEG: return "-";
	case KINST_OP_BNOT: return "~";
	default: return "?";
	}
}


std::string
node_text(const LocNode &n, int depth)
{
	if (depth > 32)
		return "...";
	switch (n.kind) {
	case LocNode::konst:
		return (int64_t)n.value < 0 && (int64_t)n.value > -65536 ?
		    "-" + hex0x(-n.value) : hex0x(n.value);
	case LocNode::reg:
		return reg_name(n.gpr);
	case LocNode::entry_reg:
		return std::string(reg_name(n.gpr)) + "@entry";
	case LocNode::load:
		return "*(u" + std::to_string(n.size * 8) + " *)(" + node_text(*n.a, depth + 1) + ")";
	case LocNode::unary:
		return std::string(op_sym(n.op)) + "(" + node_text(*n.a, depth + 1) + ")";
	case LocNode::binary:
		if (n.op == KINST_OP_ADD && n.b->kind == LocNode::konst) {
			int64_t v = (int64_t)n.b->value;
			std::string a = node_text(*n.a, depth + 1);
			return v < 0 ? a + "-" + hex0x(-(uint64_t)v) : a + "+" + hex0x(v);
		}
		return "(" + node_text(*n.a, depth + 1) + " " + op_sym(n.op) + " " +
		    node_text(*n.b, depth + 1) + ")";
	}
	return "?";
}

std::string
piece_text(const LocPiece &p)
{
	switch (p.kind) {
	case LocPiece::reg: return dwarf_reg_name(p.dwreg);
	case LocPiece::memory: return "[" + node_text(*p.expr, 0) + "]";
	case LocPiece::value: return "value " + node_text(*p.expr, 0);
	case LocPiece::implicit: {
		std::string s = "constant bytes";
		for (unsigned char c : p.bytes) {
			char b[4];
			snprintf(b, sizeof(b), " %02x", c);
			s += b;
		}
		return s;
	}
	default: return "optimized out";
	}
}

} // namespace

std::string
Location::describe() const
{
	if (pieces.size() == 1)
		return piece_text(pieces[0]);
	bool bytes = true;
	for (const auto &p : pieces)
		bytes = bytes && p.bits % 8 == 0 && p.bit_offset == 0;
	std::string s = bytes ? "pieces:" : "pieces (bits):";
	uint32_t off = 0;
	for (size_t i = 0; i < pieces.size(); i++) {
		uint32_t n = bytes ? pieces[i].bits / 8 : pieces[i].bits;
		s += (i ? ", [" : " [") + std::to_string(off) + ".." +
		    std::to_string(off + n) + ") " + piece_text(pieces[i]);
		if (pieces[i].bit_offset)
			s += " from bit " + std::to_string(pieces[i].bit_offset);
		off += n;
	}
	return s;
}

void
emit_node(const LocNode &n, std::vector<struct kinst_pinsn> &code, bool loadc,
    const EntryCtx *entry)
{
	if (code.size() > KINST_PROG_MAX_INSNS)
		throw Error(Exit::usage, "the variable's location needs more than " +
		    std::to_string(KINST_PROG_MAX_INSNS) + " probe instructions");
	switch (n.kind) {
	case LocNode::konst:
		code.push_back(make_pinsn(KINST_OP_IMM, 0, n.value));
		return;
	case LocNode::reg:
		code.push_back(make_pinsn(KINST_OP_REG, (uint8_t)n.gpr));
		return;
	case LocNode::entry_reg:
		if (entry == nullptr || entry->slot[n.gpr] < 0)
			throw Error(Exit::usage, std::string("it needs ") + reg_name(n.gpr) +
			    "'s value at the function's entry, which kinst cannot read here");
		code.insert(code.end(), entry->frame.begin(), entry->frame.end());
		code.push_back(make_pinsn(KINST_OP_TS_GET, (uint8_t)(entry->slot[n.gpr] |
		    (loadc ? KINST_TSF_SOFT : 0)), entry->tag));
		return;
	case LocNode::load:
		emit_node(*n.a, code, loadc, entry);
		code.push_back(make_pinsn(loadc ? KINST_OP_LOADC : KINST_OP_LOAD,
		    (uint8_t)n.size));
		return;
	case LocNode::unary:
		emit_node(*n.a, code, loadc, entry);
		code.push_back(make_pinsn(n.op));
		return;
	case LocNode::binary:
		emit_node(*n.a, code, loadc, entry);
		emit_node(*n.b, code, loadc, entry);
		code.push_back(make_pinsn(n.op));
		return;
	}
}

void
emit_location_value(const Location &l, uint32_t size, std::vector<struct kinst_pinsn> &code,
    const EntryCtx *entry)
{
	if (!l.why.empty())
		throw Error(Exit::usage, l.why);
	if (size == 0 || size > 8)
		throw Error(Exit::usage, "a " + std::to_string(size) +
		    "-byte object is not a value an expression can use");
	// The whole value's refusals, said as before; the pieces are then
	// read as every part of an object is (emit_location_bits).
	uint64_t want = 8ull * size, off = 0;
	for (const LocPiece &p : l.pieces) {
		if (off >= want)
			break;
		uint64_t pbits = std::min<uint64_t>(p.bits ? p.bits : want, want - off);
		if (p.kind == LocPiece::empty)
			throw Error(Exit::usage, l.pieces.size() > 1 ?
			    "part of it was optimized out" : "it was optimized out");
		uint32_t n = p.bits ? p.src_bytes() : size;
		if (p.kind == LocPiece::memory && n > 8)
			throw Error(Exit::usage, "a " + std::to_string(n) +
			    "-byte piece in memory cannot be read in one load");
		off += pbits;
	}
	if (off < want)
		throw Error(Exit::usage, "its pieces cover " + std::to_string(off) + " of its " +
		    std::to_string(want) + " bits");
	emit_location_bits(l, size, 0, (uint32_t)want, code, entry);
}

void
emit_location_bits(const Location &l, uint32_t obj_bytes, uint32_t bit_off, uint32_t nbits,
    std::vector<struct kinst_pinsn> &code, const EntryCtx *entry)
{
	if (!l.why.empty())
		throw Error(Exit::usage, l.why);
	if (nbits == 0 || nbits > 64 || (uint64_t)bit_off + nbits > 8ull * obj_bytes)
		throw Error(Exit::usage, "bits " + std::to_string(bit_off) + "+" +
		    std::to_string(nbits) + " lie outside the " + std::to_string(obj_bytes) +
		    "-byte object");
	const uint32_t want_end = bit_off + nbits;
	auto bytes_of = [](uint32_t a, uint32_t b) {
		return "[" + std::to_string(a / 8) + ".." + std::to_string((b + 7) / 8) + ")";
	};
	// 64-bit: piece sizes come from the DWARF (a corrupt one must not
	// wrap the sums).
	uint64_t pos = 0;	// the object's bit where the piece starts
	bool first = true;
	for (const LocPiece &p : l.pieces) {
		uint64_t pbits = p.bits ? p.bits : 8ull * obj_bytes;
		uint64_t start = pos;
		pos += pbits;
		if (start >= want_end)
			break;
		uint32_t a = (uint32_t)std::max<uint64_t>(start, bit_off);
		uint32_t b = (uint32_t)std::min<uint64_t>(pos, want_end);
		if (a >= b)
			continue;
		// The piece's source bit where [a, b) starts.
		uint64_t src64 = (uint64_t)p.bit_offset + (a - start);
		if (src64 > UINT32_MAX)
			throw Error(Exit::usage, "bytes " + bytes_of(a, b) + " of it lie past "
			    "the piece that holds them");
		uint32_t src = (uint32_t)src64, n = b - a;
		switch (p.kind) {
		case LocPiece::empty:
			throw Error(Exit::usage, "bytes " + bytes_of(a, b) + " of it were optimized out");
		case LocPiece::reg:
			if (src + n > 64)
				throw Error(Exit::usage, "bytes " + bytes_of(a, b) + " of it lie past "
				    "the register that holds them");
			code.push_back(make_pinsn(KINST_OP_REG, (uint8_t)dwarf_reg(p.dwreg)));
			break;
		case LocPiece::memory: {
			uint32_t skip = src / 8, need = (src % 8 + n + 7) / 8;
			if (need > 8)
				throw Error(Exit::usage, "bytes " + bytes_of(a, b) + " of it cannot be "
				    "read in one load");
			uint32_t ld = need <= 1 ? 1 : need <= 2 ? 2 : need <= 4 ? 4 : 8;
			emit_node(*p.expr, code, false, entry);
			if (skip) {
				code.push_back(make_pinsn(KINST_OP_IMM, 0, skip));
				code.push_back(make_pinsn(KINST_OP_ADD));
			}
			code.push_back(make_pinsn(KINST_OP_LOAD, (uint8_t)ld));
			src %= 8;
			break;
		}
		case LocPiece::value:
			if (src + n > 64)
				throw Error(Exit::usage, "bytes " + bytes_of(a, b) + " of it lie past "
				    "the value that gives them");
			emit_node(*p.expr, code, false, entry);
			break;
		case LocPiece::implicit: {
			uint64_t v = 0;
			for (uint32_t i = 0; i < n; i++) {
				uint32_t bit = src + i;
				if (bit / 8 < p.bytes.size() &&
				    (((unsigned char)p.bytes[bit / 8] >> (bit % 8)) & 1))
					v |= 1ull << i;
			}
			code.push_back(make_pinsn(KINST_OP_IMM, 0, v));
			src = 0;
			break;
		}
		}
		if (src) {
			code.push_back(make_pinsn(KINST_OP_IMM, 0, src));
			code.push_back(make_pinsn(KINST_OP_SHR));
		}
		if (n < 64) {
			code.push_back(make_pinsn(KINST_OP_IMM, 0, (1ull << n) - 1));
			code.push_back(make_pinsn(KINST_OP_AND));
		}
		if (a != bit_off) {
			code.push_back(make_pinsn(KINST_OP_IMM, 0, a - bit_off));
			code.push_back(make_pinsn(KINST_OP_SHL));
		}
		if (!first)
			code.push_back(make_pinsn(KINST_OP_OR));
		first = false;
	}
	if (pos < want_end)
		throw Error(Exit::usage, "bytes " + bytes_of((uint32_t)std::max<uint64_t>(pos,
		    bit_off), want_end) + " of it are in no piece (optimized out)");
	if (code.size() > KINST_PROG_MAX_INSNS)
		throw Error(Exit::usage, "the variable's location needs more than " +
		    std::to_string(KINST_PROG_MAX_INSNS) + " probe instructions");
}

namespace {

bool
eval_rec(const LocNode &n, const LocState &s, uint64_t *v, std::string *why, long &budget)
{
	if (--budget < 0) {
		*why = "the location is too large to evaluate";
		return false;
	}
	uint64_t a = 0, b = 0;
	switch (n.kind) {
	case LocNode::konst:
		*v = n.value;
		return true;
	case LocNode::reg:
		*v = s.gpr[n.gpr];
		return true;
	case LocNode::entry_reg:
		if (s.entry)
			return s.entry(n.gpr, v, why);
		*why = std::string("needs ") + reg_name(n.gpr) + " at the function's entry";
		return false;
	case LocNode::load: {
		if (!eval_rec(*n.a, s, &a, why, budget))
			return false;
		uint8_t buf[8] = {0};
		if (!s.read || !s.read(a, n.size, buf)) {
			*why = "could not read " + std::to_string(n.size) + " bytes at " + hex0x(a);
			return false;
		}
		uint64_t x = 0;
		for (unsigned i = 0; i < n.size; i++)
			x |= (uint64_t)buf[i] << (8 * i);
		*v = x;
		return true;
	}
	case LocNode::unary:
		if (!eval_rec(*n.a, s, &a, why, budget))
			return false;
		*v = n.op == KINST_OP_NEG ? -a : n.op == KINST_OP_BNOT ? ~a : !a;
		return true;
	case LocNode::binary:
		if (!eval_rec(*n.a, s, &a, why, budget) || !eval_rec(*n.b, s, &b, why, budget))
			return false;
		switch (n.op) {
		case KINST_OP_ADD: *v = a + b; break;
		case KINST_OP_SUB: *v = a - b; break;
		case KINST_OP_MUL: *v = a * b; break;
		case KINST_OP_AND: *v = a & b; break;
		case KINST_OP_OR: *v = a | b; break;
		case KINST_OP_XOR: *v = a ^ b; break;
		case KINST_OP_SHL: *v = a << (b & 63); break;
		case KINST_OP_SHR: *v = a >> (b & 63); break;
		case KINST_OP_EQ: *v = a == b; break;
		case KINST_OP_NE: *v = a != b; break;
		case KINST_OP_LTS: *v = (int64_t)a < (int64_t)b; break;
		case KINST_OP_LES: *v = (int64_t)a <= (int64_t)b; break;
		case KINST_OP_GTS: *v = (int64_t)a > (int64_t)b; break;
		case KINST_OP_GES: *v = (int64_t)a >= (int64_t)b; break;
		default:
			*why = "an unknown operation";
			return false;
		}
		return true;
	}
	*why = "an unknown node";
	return false;
}

} // namespace

bool
eval_node(const LocNode &n, const LocState &s, uint64_t *v, std::string *why)
{
	long budget = 1 << 16;
	return eval_rec(n, s, v, why, budget);
}

void
node_loads(const LocNodeP &n, std::vector<LocNodeP> &out)
{
	if (!n || out.size() > 64)
		return;
	node_loads(n->a, out);
	node_loads(n->b, out);
	if (n->kind == LocNode::load)
		out.push_back(n);
}

} // namespace kinst
