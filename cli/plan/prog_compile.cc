// SPDX-License-Identifier: BSD-2-Clause
// The --if expression compiler (prog_compile.h): a recursive-descent
// parser that emits stack-machine code as it goes.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "debuginfo/btf_types.h"
#include "base/error.h"
#include "base/regfile.h"
#include "base/spec.h"
#include "plan/prog_compile.h"

extern "C" {
#include "kinst_prog.h"
}

namespace kinst {

namespace {

// A register a program reads (regfile.h: not x86-64's cs and ss), or -1.
int
program_reg(const std::string &id)
{
	int r = reg_lookup(id);
	return r < KINST_PREG_COUNT ? r : -1;
}

const std::map<std::string, uint8_t> context = {
	{"pid", KINST_PCTX_PID}, {"tid", KINST_PCTX_TID},
	{"cpu", KINST_PCTX_CPU},
};

const std::map<std::string, uint8_t> load_sizes = {
	{"u8", 1}, {"u16", 2}, {"u32", 4}, {"u64", 8},
};

// Binary operators: precedence (higher binds tighter) and opcode.
struct BinOp {
	const char *tok;
	int prec;
	uint8_t op;	// 0: && or ||, compiled with jumps
};
const BinOp binops[] = {	// longest tokens first
	{"||", 1, 0}, {"&&", 2, 0}, {"==", 6, KINST_OP_EQ},
	{"!=", 6, KINST_OP_NE}, {"<=", 7, KINST_OP_LEU}, {">=", 7, KINST_OP_GEU},
	{"<<", 8, KINST_OP_SHL}, {">>", 8, KINST_OP_SHR}, {"|", 3, KINST_OP_OR},
	{"^", 4, KINST_OP_XOR}, {"&", 5, KINST_OP_AND}, {"<", 7, KINST_OP_LTU},
	{">", 7, KINST_OP_GTU}, {"+", 9, KINST_OP_ADD}, {"-", 9, KINST_OP_SUB},
	{"*", 10, KINST_OP_MUL},
};

// A C type: BTF type id, then ptrs more '*'s (a cast can name a pointer
// type the BTF does not hold).
struct CType {
	uint32_t id = 0;
	unsigned ptrs = 0;
};

// What an expression left on the stack.  Untyped: a register, a number,
// an untyped load (a u64).  lval: the address of a struct, union or array
// (its members are read from there).
struct Val {
	bool typed = false;
	CType t;
	bool lval = false;
	bool sgn = false;	// compare signed
	// lval's struct, union or array lies in pieces (VarRef::bits) from
	// bit bit_off; nothing is on the stack for it yet.
	std::shared_ptr<const std::function<void(uint32_t, uint32_t,
	    std::vector<struct kinst_pinsn> &)>> pieces;
	uint32_t bit_off = 0;
};

class Compiler {
public:
	// capture: an address for --mem/--str: reads are LOADC (a fault
	// is the capture's, not the hit's), and no RET.
	Compiler(const std::string &s, const std::string &what, bool capture = false,
	    const TypeEnv *env = nullptr)
	    : s_(s), what_(what), capture_(capture), env_(env) {}

	std::vector<struct kinst_pinsn> run()
	{
		skip_ws();
		if (pos_ == s_.size())
			fail("empty expression");
		Val top = expr(1);
		rvalue(top, 0);
		result_signed_ = top.sgn;
		skip_ws();
		if (pos_ != s_.size())
			fail("unexpected '" + s_.substr(pos_, 1) + "'");
		if (!capture_)
			emit(KINST_OP_RET);
		if (code_.size() > KINST_PROG_MAX_INSNS)
			fail_at(0, "expression too long (more than " +
			    std::to_string(KINST_PROG_MAX_INSNS) + " instructions)");
		return code_;
	}
	bool result_signed() const { return result_signed_; }

private:
	bool result_signed_ = false;
	const std::string &s_;
	const std::string &what_;
	bool capture_;
	const TypeEnv *env_;
	std::unique_ptr<Types::Func> proto_;	// env_->func's, once read
	size_t pos_ = 0;
	int depth_ = 0;
	unsigned loads_ = 0;
	std::vector<struct kinst_pinsn> code_;
	// The last read of an object in memory, for '&': its instructions
	// are code_[begin, end) (the load and any sign extension; none for a
	// struct, union or array), typed or not.
	struct Object {
		bool valid = false;
		size_t begin = 0, end = 0;
		bool loaded = false;
		bool typed = false;
		CType t;
	} last_;

	[[noreturn]] void fail_at(size_t at, const std::string &why)
	{
		throw Error(Exit::usage, what_ + ": column " +
		    std::to_string(at + 1) + ": " + why);
	}
	[[noreturn]] void fail(const std::string &why) { fail_at(pos_, why); }

	void skip_ws()
	{
		while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t'))
			pos_++;
	}

	bool eat(const char *tok)
	{
		skip_ws();
		size_t n = strlen(tok);
		if (s_.compare(pos_, n, tok) != 0)
			return false;
		pos_ += n;
		return true;
	}

	void expect(const char *tok)
	{
		if (!eat(tok))
			fail(std::string("expected '") + tok + "'");
	}

	size_t emit(uint8_t op, uint8_t arg = 0, uint64_t imm = 0)
	{
		struct kinst_pinsn in;
		memset(&in, 0, sizeof(in));
		in.op = op;
		in.arg = arg;
		in.imm = imm;
		code_.push_back(in);
		if (op == KINST_OP_IMM || op == KINST_OP_REG || op == KINST_OP_CTX)
			push();
		else if (op >= KINST_OP_ADD && op <= KINST_OP_GES)
			depth_--;
		else if (op == KINST_OP_JZ || op == KINST_OP_JNZ || op == KINST_OP_RET)
			depth_--;
		return code_.size() - 1;
	}

	void push()
	{
		if (++depth_ > KINST_PROG_STACK)
			fail("expression too deep (more than " +
			    std::to_string(KINST_PROG_STACK) + " values pending)");
	}

	// A forward jump from instruction at to the next one emitted.
	void patch(size_t at)
	{
		size_t off = code_.size() - at - 1;
		if (off > 0x7fff)
			fail("expression too long");
		code_[at].off = (int16_t)off;
	}

	// a && b / a || b, with a already on the stack: 0/1 left.
	void logical(bool is_and, int prec)
	{
		size_t j = emit(is_and ? KINST_OP_JZ : KINST_OP_JNZ);
		size_t at = pos_;
		rvalue(expr(prec + 1), at);
		emit(KINST_OP_LNOT);
		emit(KINST_OP_LNOT);
		size_t end = emit(KINST_OP_JA);
		depth_--;	// the short-circuit path pushes its own value
		patch(j);
		emit(KINST_OP_IMM, 0, is_and ? 0 : 1);
		patch(end);
	}

	// Precedence climbing over binops[].  A comparison is signed when
	// an operand has a signed type (an int argument, a long member).
	Val expr(int min_prec)
	{
		size_t at0 = pos_;
		Val v = unary();
		for (;;) {
			skip_ws();
			const BinOp *b = nullptr;
			for (const auto &cand : binops)
				if (s_.compare(pos_, strlen(cand.tok), cand.tok) == 0) {
					b = &cand;
					break;
				}
			if (b == nullptr || b->prec < min_prec)
				return v;
			rvalue(v, at0);
			pos_ += strlen(b->tok);
			if (b->op == 0) {
				logical(b->prec == 2, b->prec);
				v = Val();
				continue;
			}
			size_t at = pos_;
			Val r = rvalue(expr(b->prec + 1), at);
			bool sgn = v.sgn || r.sgn;
			uint8_t op = b->op;
			if (sgn && op >= KINST_OP_LTU && op <= KINST_OP_GEU)
				op = (uint8_t)(op - KINST_OP_LTU + KINST_OP_LTS);
			emit(op);
			v = Val();
			v.sgn = sgn && (op == KINST_OP_ADD || op == KINST_OP_SUB ||
			    op == KINST_OP_MUL);
		}
	}

	Val unary()
	{
		skip_ws();
		size_t at = pos_;
		Val v;
		if (eat("!")) {
			rvalue(unary(), at + 1);
			emit(KINST_OP_LNOT);
		} else if (eat("~")) {
			rvalue(unary(), at + 1);
			emit(KINST_OP_BNOT);
		} else if (s_.compare(pos_, 2, "->") != 0 && eat("-")) {
			v.sgn = rvalue(unary(), at + 1).sgn;
			emit(KINST_OP_NEG);
		} else if (eat("*")) {
			uint8_t size = cast();
			size_t oat = pos_;
			Val p = rvalue(unary(), oat);
			if (size == 0 && p.typed && is_ptr(p.t))
				return postfix(access(pointee(p.t), at));
			size_t b = code_.size();
			load(size ? size : 8, at);
			last_ = Object{true, b, code_.size(), true, false, CType{}};
		} else if (s_.compare(pos_, 2, "&&") != 0 && eat("&")) {
			return address_of(at);
		} else
			return postfix(primary());
		return v;
	}

	// After '*': an optional "(u8)".."(u64)"; 0 without one.
	uint8_t cast()
	{
		skip_ws();
		size_t save = pos_;
		if (!eat("("))
			return 0;
		std::string id = ident();
		if (load_sizes.count(id) && eat(")"))
			return load_sizes.at(id);
		pos_ = save;
		return 0;
	}

	std::string ident()
	{
		skip_ws();
		size_t b = pos_;
		while (pos_ < s_.size() && (isalnum((unsigned char)s_[pos_]) ||
		    s_[pos_] == '_'))
			pos_++;
		return s_.substr(b, pos_ - b);
	}

	Val primary()
	{
		skip_ws();
		if (pos_ >= s_.size())
			fail("expression ends early");
		size_t at = pos_;
		Val v;
		if (s_[pos_] == '(') {
			CType ct;
			if (type_cast(&ct))
				return cast_to(ct, at);
			pos_++;
			v = expr(1);
			expect(")");
			return v;
		}
		if (isdigit((unsigned char)s_[pos_])) {
			number();
			return v;
		}
		if (s_[pos_] == '$') {
			pos_++;
			return variable(at);
		}
		std::string id = ident();
		if (id.empty())
			fail("unexpected '" + s_.substr(pos_, 1) + "'");
		int reg = program_reg(id);
		if (reg >= 0)
			emit(KINST_OP_REG, (uint8_t)reg);
		else if (context.count(id))
			emit(KINST_OP_CTX, context.at(id));
		else if (id == "comm")
			comm();
		else if (id == "args") {
			if (!eat("."))
				fail("expected '.NAME' after args (an argument of the function)");
			size_t nat = (skip_ws(), pos_);
			std::string n = ident();
			if (n.empty())
				fail("expected an argument name after 'args.'");
			return argument(n, nat, true);
		} else if (enumerator(id, v))
			return v;
		else
			return argument(id, at, false);
		return v;
	}

	// An enumerator of the kernel's types (PIDTYPE_TGID), unless an
	// argument has that name (it hides it, as in C).  False when there
	// are no types: the name is then reported as unknown.
	bool enumerator(const std::string &n, Val &v)
	{
		if (env_ == nullptr || (env_->types == nullptr && !dwarf_typed()))
			return false;
		try {
			if (arg_index(n) >= 0)
				return false;
		} catch (const Error &) {
		}
		const Types *types;
		try {
			types = &btf();
		} catch (const Error &) {
			return false;
		}
		int64_t val;
		uint32_t type;
		if (!types->enumerator(n, val, type))
			return false;
		emit(KINST_OP_IMM, 0, (uint64_t)val);
		v.typed = true;
		v.t = CType{type, 0};
		v.sgn = types->is_signed(type);
		return true;
	}

	// $NAME: a variable at the probe's instruction (DWARF).
	Val variable(size_t at)
	{
		std::string n = ident();
		if (n.empty())
			fail_at(at, "expected a variable name after '$'");
		if (n == "retval")
			return retval(at);
		if (n == "entry" && (skip_ws(), pos_ < s_.size() && s_[pos_] == '('))
			return entry_value(at);
		if (env_ == nullptr || !env_->var || env_->var_types == nullptr)
			fail_at(at, "$" + n + ": C variables by name need the probe's DWARF "
			    "(trace, at instructions of a module with debug info)");
		VarRef r;
		try {
			env_->var(n, r);
		} catch (const Error &e) {
			fail_at(at, "$" + n + ": " + e.what());
		}
		append_var_code(r.code, at);
		Val v;
		v.typed = true;
		v.t = CType{r.type, 0};
		if (r.bits) {
			v.lval = true;
			v.pieces = std::make_shared<const std::function<void(uint32_t, uint32_t,
			    std::vector<struct kinst_pinsn> &)>>(r.bits);
			return v;
		}
		v.lval = r.lval;
		if (!v.lval) {
			v.sgn = btf().is_signed(r.type);
			narrow(btf().size(r.type), v.sgn);
		}
		return v;
	}

	// A variable's instructions, its reads counted (and LOADC in a
	// capture).
	void append_var_code(const std::vector<struct kinst_pinsn> &code, size_t at)
	{
		for (auto in : code) {
			if (in.op == KINST_OP_LOAD || in.op == KINST_OP_LOADC) {
				if (++loads_ > KINST_PROG_MAX_LOADS)
					fail_at(at, "too many memory reads (at most " +
					    std::to_string(KINST_PROG_MAX_LOADS) + ")");
				in.op = capture_ ? KINST_OP_LOADC : KINST_OP_LOAD;
			}
			code_.push_back(in);
		}
	}

	// $retval: rax at a return point of env_->ret_func, as its return
	// type says (an int returning -5 is -5).
	Val retval(size_t at)
	{
		if (env_ == nullptr || env_->ret_func.empty())
			fail_at(at, "$retval: " + (env_ && !env_->no_ret_why.empty() ? env_->no_ret_why :
			    std::string("only at a function's return points (FUNC:return, latency FUNC)")));
		const Types *ty = nullptr;
		Types::Func f;
		std::string why;
		try {
			if (dwarf_typed())
				ty = env_->var_types;
			else if (env_->types != nullptr)
				ty = &env_->types->get(what_);
			if (ty != nullptr)
				f = ty->func(env_->ret_func);
		} catch (const Error &e) {
			why = e.what();
			ty = nullptr;
		}
		bool typed = ty != nullptr;
		if (!typed && env_->ret_types != nullptr) {
			try {
				f = env_->ret_types->func(env_->ret_func);
				ty = env_->ret_types;
			} catch (const Error &e) {
				why += std::string("; ") + e.what();
			}
		}
		if (ty == nullptr)
			fail_at(at, "$retval: the return type of " + env_->ret_func +
			    " is not known (" + why + "): it needs BTF, CTF or DWARF (--debug-file)");
		if (f.ret == 0)
			fail_at(at, "$retval: " + env_->ret_func + " returns void");
		Types::Kind k = ty->kind(f.ret);
		int64_t size = ty->size(f.ret);
		if ((k != Types::Kind::integer && k != Types::Kind::enumeration &&
		    k != Types::Kind::pointer) || size < 1 || size > 8)
			fail_at(at, "$retval: " + env_->ret_func + " returns " + art(ty->name(f.ret)) +
			    ": only integers and pointers are in " + reg_name(regfile.retval));
		emit(KINST_OP_REG, (uint8_t)regfile.retval);
		Val v;
		v.typed = typed;	// the fallback's ids are not btf()'s
		v.t = CType{f.ret, 0};
		v.sgn = ty->is_signed(f.ret);
		narrow(size, v.sgn);
		return v;
	}

	// $entry(EXPR): EXPR's value at the start point (latency), saved in
	// this thread's activation there and read back here.
	Val entry_value(size_t at)
	{
		expect("(");
		int d = 1;
		size_t b = pos_;
		while (pos_ < s_.size() && d > 0) {
			if (s_[pos_] == '(')
				d++;
			else if (s_[pos_] == ')')
				d--;
			pos_++;
		}
		if (d != 0)
			fail_at(at, "$entry(: expected ')'");
		std::string inner = s_.substr(b, pos_ - 1 - b);
		if (env_ == nullptr || !env_->entry)
			fail_at(at, "$entry(" + inner + "): only in latency, where a start point "
			    "can save it");
		bool sgn = false;
		int slot;
		try {
			slot = env_->entry(inner, &sgn);
		} catch (const Error &e) {
			fail_at(at, "$entry(" + inner + "): " + e.what());
		}
		for (const auto &in : env_->entry_frame)
			code_.push_back(in);
		emit(KINST_OP_TS_GET, (uint8_t)slot, env_->entry_tag);
		Val v;
		v.sgn = sgn;
		return v;
	}

	// ---- types (btf_types.h) ----

	// An expression that names a $variable is typed by its DWARF.
	bool dwarf_typed() const
	{
		return env_ != nullptr && env_->var_types != nullptr && names_dwarf_variable(s_);
	}

	const Types &btf()
	{
		if (dwarf_typed())
			return *env_->var_types;
		if (env_ == nullptr || env_->types == nullptr)
			fail("kernel types are not available to " + what_);
		return env_->types->get(what_);
	}

	void load(uint8_t size, size_t at)
	{
		if (++loads_ > KINST_PROG_MAX_LOADS)
			fail_at(at, "too many memory reads (at most " +
			    std::to_string(KINST_PROG_MAX_LOADS) + ")");
		emit(capture_ ? KINST_OP_LOADC : KINST_OP_LOAD, size);
	}

	// The value on the stack, bits wide, sign-extended to 64 bits:
	// (v ^ m) - m with m the sign bit (the loads zero-extend).
	void sign_extend(unsigned bits)
	{
		uint64_t m = 1ull << (bits - 1);
		emit(KINST_OP_IMM, 0, m);
		emit(KINST_OP_XOR);
		emit(KINST_OP_IMM, 0, m);
		emit(KINST_OP_SUB);
	}

	// The value on the stack as an integer of size bytes.
	void narrow(int64_t size, bool sgn)
	{
		if (size <= 0 || size >= 8)
			return;
		emit(KINST_OP_IMM, 0, (1ull << (8 * size)) - 1);
		emit(KINST_OP_AND);
		if (sgn)
			sign_extend((unsigned)(8 * size));
	}

	bool is_ptr(const CType &t)
	{
		if (t.ptrs > 0)
			return true;
		Types::Kind k = btf().kind(t.id);
		return k == Types::Kind::pointer || k == Types::Kind::array;
	}
	CType pointee(const CType &t)
	{
		if (t.ptrs > 0)
			return CType{t.id, t.ptrs - 1};
		return CType{btf().pointee(t.id), 0};
	}
	Types::Kind kind(const CType &t)
	{
		return t.ptrs > 0 ? Types::Kind::pointer : btf().kind(t.id);
	}
	// "a struct file", "an int".
	static std::string art(const std::string &n)
	{
		return (std::string("aeiou").find(n[0]) != std::string::npos ?
		    "an " : "a ") + n;
	}
	std::string tname(const CType &t)
	{
		std::string n = btf().name(t.id);
		if (t.ptrs > 0)
			n += n.back() == '*' ? "" : " ";
		return n + std::string(t.ptrs, '*');
	}

	// Reads an object of type t whose address is on the stack: a number
	// (integer, enum, pointer: a load of its size, signed ones extended),
	// or, for a struct, union or array, the address stays (an lvalue).
	Val access(const CType &t, size_t at)
	{
		Val v;
		v.typed = true;
		v.t = t;
		switch (kind(t)) {
		case Types::Kind::integer:
		case Types::Kind::enumeration:
		case Types::Kind::pointer: {
			int64_t size = t.ptrs > 0 ? 8 : btf().size(t.id);
			if (size != 1 && size != 2 && size != 4 && size != 8)
				fail_at(at, "cannot read " + art(tname(t)) + " (" +
				    std::to_string(size) + " bytes): only 1, 2, 4 or 8");
			size_t b = code_.size();
			load((uint8_t)size, at);
			v.sgn = t.ptrs == 0 && btf().is_signed(t.id);
			if (v.sgn && size < 8)
				sign_extend((unsigned)(8 * size));
			last_ = Object{true, b, code_.size(), true, true, t};
			return v;
		}
		case Types::Kind::structure:
		case Types::Kind::union_:
		case Types::Kind::array:
			v.lval = true;
			last_ = Object{true, code_.size(), code_.size(), false, true, t};
			return v;
		case Types::Kind::void_:
			fail_at(at, "cannot read through a void pointer: cast it first, "
			    "e.g. *(u32)ADDR or ((struct NAME *)ADDR)->member");
		default:
			fail_at(at, "cannot read " + art(tname(t)) + ": not an integer or a pointer");
		}
	}

	// &OBJECT: the address of what OBJECT reads, i.e. its instructions
	// without the final read.  Typed: a pointer to the object's type.
	Val address_of(size_t at)
	{
		last_ = Object{};
		(void)unary();
		if (!last_.valid || last_.end != code_.size())
			fail_at(at, "'&' needs an object in memory: a member (->NAME, .NAME), "
			    "an element ([I]) or *ADDR");
		code_.resize(last_.begin);
		if (last_.loaded)
			loads_--;
		Val v;
		v.typed = last_.typed;
		v.t = CType{last_.t.id, last_.t.ptrs + 1};
		last_ = Object{};
		return v;
	}

	// A value where a number is needed: a struct is not one; an array
	// is its first element's address.
	Val rvalue(Val v, size_t at)
	{
		if (!v.lval)
			return v;
		if (v.pieces)
			fail_at(at, art(tname(v.t)) + " held in registers (pieces) is not a number "
			    "and has no address: name one of its members (.NAME" +
			    std::string(kind(v.t) == Types::Kind::array ? ", [N])" : ")"));
		if (kind(v.t) == Types::Kind::array) {
			v.lval = false;
			return v;
		}
		fail_at(at, art(tname(v.t)) + " is not a number: name one of its "
		    "members (->NAME or .NAME)");
	}

	// ->NAME, .NAME and [INDEX] after a primary.
	Val postfix(Val v)
	{
		for (;;) {
			skip_ws();
			size_t at = pos_;
			if (eat("->")) {
				if (!v.typed || v.lval || !is_ptr(v.t))
					fail_at(at, "'->' needs a pointer to a struct or union" +
					    std::string(v.typed ? " (this is " + art(tname(v.t)) + ")" :
					    ": cast the address, e.g. ((struct file *)rdi)->f_pos"));
				v = member(pointee(v.t), at);
			} else if (s_.compare(pos_, 1, ".") == 0) {
				pos_++;
				if (!v.typed || !v.lval)
					fail_at(at, "'.' needs a struct or union" +
					    std::string(v.typed ? " (this is " + art(tname(v.t)) +
					    (is_ptr(v.t) ? ": use '->')" : ")") : ""));
				v = v.pieces ? pieces_member(v, at) : member(v.t, at);
			} else if (eat("[")) {
				if (v.pieces) {
					v = pieces_element(v, at);
					continue;
				}
				v = rvalue(v, at);
				if (!v.typed || !is_ptr(v.t))
					fail_at(at, "'[' needs a pointer or an array" +
					    std::string(v.typed ? " (this is " + art(tname(v.t)) + ")" : ""));
				CType e = pointee(v.t);
				int64_t size = e.ptrs > 0 ? 8 : btf().size(e.id);
				if (size <= 0)
					fail_at(at, "cannot index " + art(tname(v.t)) + ": its elements have no size");
				size_t iat = pos_;
				rvalue(expr(1), iat);
				expect("]");
				emit(KINST_OP_IMM, 0, (uint64_t)size);
				emit(KINST_OP_MUL);
				emit(KINST_OP_ADD);
				v = access(e, at);
			} else
				return v;
		}
	}

	// The member named next of the struct/union t: its name n at *nat.
	Types::Member member_named(const CType &t, size_t at, size_t *nat, std::string *n)
	{
		Types::Kind k = kind(t);
		if (k != Types::Kind::structure && k != Types::Kind::union_)
			fail_at(at, art(tname(t)) + " has no members");
		skip_ws();
		*nat = pos_;
		*n = ident();
		if (n->empty())
			fail("expected a member name");
		Types::Member m = btf().member(t.id, *n);
		if (!m.found) {
			std::string dym = did_you_mean(*n, btf().member_names(t.id));
			fail_at(*nat, "no member '" + *n + "' in " + tname(t) +
			    (dym.empty() ? "" : "; did you mean " + dym + "?"));
		}
		return m;
	}

	// The member named next of the struct/union t, whose address is on
	// the stack.
	Val member(const CType &t, size_t at)
	{
		size_t nat;
		std::string n;
		Types::Member m = member_named(t, at, &nat, &n);
		if (m.bitfield != 0 || m.bit_offset % 8 != 0)
			fail_at(nat, "member '" + n + "' of " + tname(t) +
			    " is a bitfield: not supported (read its word with *(u32)... and mask it)");
		if (m.bit_offset != 0) {
			emit(KINST_OP_IMM, 0, m.bit_offset / 8);
			emit(KINST_OP_ADD);
		}
		return access(CType{m.type, 0}, nat);
	}

	// A struct, union or array in pieces (Val::pieces) from bit off, as
	// type t: a scalar is emitted now (its bits from the pieces, narrowed;
	// a bitfield of nbits); an aggregate stays in pieces.
	Val pieces_value(const Val &from, const CType &t, uint32_t off, uint32_t bitfield,
	    size_t at, const std::string &what)
	{
		last_ = Object{};
		Val v;
		v.typed = true;
		v.t = t;
		switch (kind(t)) {
		case Types::Kind::integer:
		case Types::Kind::enumeration:
		case Types::Kind::pointer: {
			int64_t size = btf().size(t.id);
			if (size < 1 || size > 8)
				fail_at(at, what + ": " + art(tname(t)) + " of " +
				    std::to_string(size) + " bytes is not a value an expression can use");
			uint32_t n = bitfield ? bitfield : 8 * (uint32_t)size;
			std::vector<struct kinst_pinsn> c;
			try {
				(*from.pieces)(off, n, c);
			} catch (const Error &e) {
				fail_at(at, what + ": " + e.what());
			}
			append_var_code(c, at);
			v.sgn = kind(t) != Types::Kind::pointer && btf().is_signed(t.id);
			if (bitfield && v.sgn && bitfield < 64) {
				// Sign-extend from the field's top bit: (x ^ m) - m.
				emit(KINST_OP_IMM, 0, 1ull << (bitfield - 1));
				emit(KINST_OP_XOR);
				emit(KINST_OP_IMM, 0, 1ull << (bitfield - 1));
				emit(KINST_OP_SUB);
			} else {
				narrow(size, v.sgn);
			}
			return v;
		}
		case Types::Kind::structure:
		case Types::Kind::union_:
		case Types::Kind::array:
			if (bitfield)
				fail_at(at, what + ": a bitfield of " + art(tname(t)));
			v.lval = true;
			v.pieces = from.pieces;
			v.bit_off = off;
			return v;
		default:
			fail_at(at, what + ": " + art(tname(t)) + " held in registers cannot be "
			    "read here");
		}
	}

	// .NAME of a struct or union in pieces.
	Val pieces_member(const Val &v, size_t at)
	{
		size_t nat;
		std::string n;
		Types::Member m = member_named(v.t, at, &nat, &n);
		return pieces_value(v, CType{m.type, 0}, v.bit_off + (uint32_t)m.bit_offset,
		    m.bitfield, nat, "member '" + n + "'");
	}

	// [N] of an array in pieces: a constant index only (there is no
	// address to add a computed one to).
	Val pieces_element(const Val &v, size_t at)
	{
		if (kind(v.t) != Types::Kind::array)
			fail_at(at, "'[' on " + art(tname(v.t)) + " held in registers: it has no "
			    "address here");
		skip_ws();
		size_t iat = pos_;
		uint64_t idx = 0;
		std::string tok;
		bool ok = literal(&idx, &tok);
		skip_ws();
		if (!ok || !eat("]"))
			fail_at(iat, "an array held in registers takes a constant index only "
			    "(it has no address to add a computed one to)");
		CType e = pointee(v.t);
		int64_t size = e.ptrs > 0 ? 8 : btf().size(e.id);
		uint32_t len = btf().array_len(v.t.id);
		if (size <= 0)
			fail_at(at, "cannot index " + art(tname(v.t)) + ": its elements have no size");
		if (idx >= len)
			fail_at(iat, "index " + std::to_string(idx) + " is past the end of " +
			    art(tname(v.t)) + " (" + std::to_string(len) + " elements)");
		return pieces_value(v, e, v.bit_off + (uint32_t)(idx * (uint64_t)size * 8), 0, iat,
		    "element " + std::to_string(idx));
	}

	// A cast "(TYPE)" at pos_ (not consumed when it is not one): struct
	// NAME, union NAME, a type name of the kernel's (loff_t, u32), or a C
	// integer type, each with any number of '*'.
	bool type_cast(CType *ct)
	{
		size_t save = pos_;
		pos_++;	// '('
		std::string w = ident();
		skip_ws();
		bool ptr_or_close = pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == ')');
		static const char *const cwords[] = {"struct", "union", "unsigned",
		    "signed", "int", "long", "short", "char", "_Bool", "void", nullptr};
		bool cword = false;
		for (int i = 0; cwords[i]; i++)
			cword |= w == cwords[i];
		if (w.empty() || isdigit((unsigned char)w[0]) ||
		    (!cword && (!ptr_or_close || program_reg(w) >= 0 || context.count(w) ||
		    w == "comm" || w == "args" || arg_index(w) >= 0))) {
			pos_ = save;
			return false;
		}
		size_t tat = save + 1;
		while (tat < s_.size() && s_[tat] == ' ')
			tat++;
		if (w == "struct" || w == "union") {
			std::string tag = ident();
			if (tag.empty())
				fail("expected a " + w + " name");
			ct->id = btf().find_tagged(tag, w == "union");
			if (ct->id == 0)
				fail_at(tat, "no " + w + " " + tag + " in the kernel's types");
		} else {
			// C spellings as BTF names them: "unsigned long" is
			// "long unsigned int".
			std::vector<std::string> words{w};
			for (;;) {
				size_t p = pos_;
				std::string x = ident();
				if (x.empty()) {
					pos_ = p;
					break;
				}
				words.push_back(x);
			}
			std::string n = c_type_name(words);
			ct->id = n == "void" ? 0 : btf().find_named(n);
			if (ct->id == 0 && n != "void")
				fail_at(tat, "no type '" + n + "' in the kernel's types");
		}
		ct->ptrs = 0;
		while (eat("*"))
			ct->ptrs++;
		expect(")");
		return true;
	}

	static std::string c_type_name(const std::vector<std::string> &w)
	{
		bool uns = false, sgn = false;
		int longs = 0;
		std::string base;
		for (const auto &x : w) {
			if (x == "unsigned")
				uns = true;
			else if (x == "signed")
				sgn = true;
			else if (x == "long")
				longs++;
			else if (base.empty())
				base = x;
			else
				return "";
		}
		if (base == "short")
			return uns ? "short unsigned int" : "short int";
		if (!uns && !sgn && longs == 0)
			return base;
		if (base == "char")
			return uns ? "unsigned char" : "signed char";
		if (!base.empty() && base != "int")
			return "";
		if (longs == 0)
			return uns ? "unsigned int" : "int";
		std::string l = longs == 1 ? "long" : "long long";
		return l + (uns ? " unsigned int" : " int");
	}

	// (TYPE)operand: a pointer type only names what the address points
	// to; an integer type truncates and extends the value.
	Val cast_to(const CType &t, size_t at)
	{
		size_t oat = pos_;
		Val v = rvalue(unary(), oat);
		(void)v;
		Types::Kind k = kind(t);
		Val r;
		r.typed = true;
		r.t = t;
		if (k == Types::Kind::pointer)
			return r;
		if (k == Types::Kind::integer || k == Types::Kind::enumeration) {
			r.sgn = btf().is_signed(t.id);
			narrow(btf().size(t.id), r.sgn);
			return r;
		}
		fail_at(at, "cannot cast to " + tname(t) + ": cast an address to a "
		    "pointer instead, e.g. (" + tname(t) + " *)rdi");
	}

	// ---- arguments at a function's entry ----

	const Types::Func *proto()
	{
		if (env_ == nullptr || env_->func.empty())
			return nullptr;
		if (!proto_)
			proto_ = std::make_unique<Types::Func>(btf().func(env_->func));
		return proto_.get();
	}

	// The index of argument n, or -1 (no such argument, or not at an
	// entry: nothing is loaded then).
	int arg_index(const std::string &n)
	{
		if (env_ == nullptr || env_->func.empty() || env_->types == nullptr)
			return -1;
		const Types::Func *f = proto();
		for (size_t i = 0; i < f->params.size(); i++)
			if (f->params[i].name == n)
				return (int)i;
		return -1;
	}

	Val argument(const std::string &n, size_t at, bool explicit_args)
	{
		if (env_ == nullptr || env_->func.empty()) {
			std::string why = env_ && !env_->no_args_why.empty() ? env_->no_args_why :
			    "argument names are known only at a function's entry";
			if (explicit_args)
				fail_at(at, "args." + n + ": " + why);
			fail_at(at, "unknown name '" + n + "'" + (env_ ? " (" + why + ")" : ""));
		}
		const Types::Func *f;
		try {
			f = proto();
		} catch (const Error &e) {
			if (explicit_args)
				throw;
			// A typo on a kernel without types is still a typo.
			fail_at(at, "unknown name '" + n + "' (and no argument names: " +
			    e.what() + ")");
		}
		int i = arg_index(n);
		if (i < 0) {
			std::vector<std::string> names;
			for (const auto &p : f->params)
				names.push_back(p.name);
			std::string dym = did_you_mean(n, names);
			std::string list;
			for (const auto &x : names)
				list += (list.empty() ? "" : ", ") + x;
			fail_at(at, std::string(explicit_args ? "" : "unknown name '" + n + "': ") +
			    f->name + " has no argument '" + n + "'" +
			    (dym.empty() ? "" : "; did you mean " + dym + "?") +
			    " (its arguments: " + (list.empty() ? "none" : list) + ")");
		}
		int reg = arg_register((size_t)i);
		if (reg < 0)
			fail_at(at, "argument '" + n + "' is the " + std::to_string(i + 1) +
			    "th: only the first " + std::string(regfile.nargs == 8 ? "eight" : "six") +
			    " (passed in registers) can be read");
		CType t{f->params[(size_t)i].type, 0};
		Types::Kind k = kind(t);
		int64_t size = btf().size(t.id);
		if ((k != Types::Kind::integer && k != Types::Kind::enumeration &&
		    k != Types::Kind::pointer) || size < 1 || size > 8)
			fail_at(at, "argument '" + n + "' is " + art(tname(t)) +
			    ": only integers and pointers can be read");
		env_->used_args = true;
		emit(KINST_OP_REG, (uint8_t)reg);
		Val v;
		v.typed = true;
		v.t = t;
		v.sgn = btf().is_signed(t.id);
		narrow(size, v.sgn);
		return v;
	}

	// The number at pos_ (the whole alphanumeric token: decimal, 0x hex,
	// a leading 0 octal), consumed into *v; false, pos_ where it was,
	// when the token (*tok) is none or out of range.
	bool literal(uint64_t *v, std::string *tok)
	{
		size_t end = pos_;
		while (end < s_.size() && isalnum((unsigned char)s_[end]))
			end++;
		*tok = s_.substr(pos_, end - pos_);
		errno = 0;
		char *e = nullptr;
		unsigned long long x = strtoull(tok->c_str(), &e, 0);
		if (tok->empty() || !isdigit((unsigned char)(*tok)[0]) || e == nullptr ||
		    *e != '\0' || errno == ERANGE)
			return false;
		pos_ = end;
		*v = x;
		return true;
	}

	void number()
	{
		size_t at = pos_;
		uint64_t v;
		std::string t;
		if (!literal(&v, &t))
			fail_at(at, "bad number '" + t + "'");
		emit(KINST_OP_IMM, 0, v);
	}

	// comm == "STR" / comm != "STR": the bytes up to and with the NUL,
	// compared as one or two masked 8-byte words.
	void comm()
	{
		bool eq;
		if (eat("=="))
			eq = true;
		else if (eat("!="))
			eq = false;
		else
			fail("comm can only be compared: comm == \"NAME\" or comm != \"NAME\"");
		std::string name = string_lit();
		if (name.size() >= KINST_COMM_LEN)
			fail("a command name has at most " +
			    std::to_string(KINST_COMM_LEN - 1) + " characters");
		uint8_t bytes[KINST_COMM_LEN] = {};
		memcpy(bytes, name.data(), name.size());
		size_t n = name.size() + 1;	// with the NUL
		for (int w = 0; w < 2; w++) {
			size_t lo = 8 * w;
			if (n <= lo)
				break;
			uint64_t mask = 0, val = 0;
			for (size_t i = lo; i < lo + 8 && i < n; i++) {
				mask |= 0xffull << (8 * (i - lo));
				val |= (uint64_t)bytes[i] << (8 * (i - lo));
			}
			emit(KINST_OP_CTX, w == 0 ? KINST_PCTX_COMM0 : KINST_PCTX_COMM8);
			emit(KINST_OP_IMM, 0, mask);
			emit(KINST_OP_AND);
			emit(KINST_OP_IMM, 0, val);
			emit(KINST_OP_EQ);
			if (w == 1)
				emit(KINST_OP_AND);
		}
		if (!eq)
			emit(KINST_OP_LNOT);
	}

	std::string string_lit()
	{
		skip_ws();
		if (pos_ >= s_.size() || s_[pos_] != '"')
			fail("expected a quoted name");
		size_t end = s_.find('"', pos_ + 1);
		if (end == std::string::npos)
			fail("unterminated string");
		std::string v = s_.substr(pos_ + 1, end - pos_ - 1);
		pos_ = end + 1;
		return v;
	}
};

} // namespace

std::vector<struct kinst_pinsn>
compile_expr(const std::string &expr, const std::string &what, const TypeEnv *env,
    bool *result_signed)
{
	Compiler c(expr, what, false, env);
	std::vector<struct kinst_pinsn> code = c.run();
	if (result_signed != nullptr)
		*result_signed = c.result_signed();
	return code;
}

bool
names_dwarf_variable(const std::string &e)
{
	for (size_t i = e.find('$'); i != std::string::npos; i = e.find('$', i + 1)) {
		size_t j = i + 1;
		while (j < e.size() && (isalnum((unsigned char)e[j]) || e[j] == '_'))
			j++;
		std::string n = e.substr(i + 1, j - i - 1);
		if (n == "retval")
			continue;
		if (n == "entry") {
			size_t k = j;
			while (k < e.size() && e[k] == ' ')
				k++;
			if (k < e.size() && e[k] == '(')
				continue;
		}
		return true;
	}
	return false;
}

Capture
parse_capture(const std::string &arg, bool str, const TypeEnv *env)
{
	Capture c;
	c.str = str;
	c.arg = arg;
	const char *opt = str ? "--str" : "--mem";
	uint32_t max = str ? KINST_CAP_STR_MAX : KINST_CAP_MEM_MAX;
	size_t colon = arg.rfind(':');
	if (colon == std::string::npos) {
		if (!str)
			throw Error(Exit::usage, std::string(opt) + " " + arg + ": column " +
			    std::to_string(arg.size() + 1) + ": expected ':LEN' after the address");
		c.expr = arg;
		c.len = KINST_CAP_STR_MAX;
	} else {
		c.expr = arg.substr(0, colon);
		std::string n = arg.substr(colon + 1);
		size_t i = 0;
		while (i < n.size() && n[i] == ' ')
			i++;
		size_t b = i;
		uint64_t v = 0;
		for (; i < n.size() && n[i] >= '0' && n[i] <= '9'; i++)
			if (v <= max)	// past max it stays past max
				v = v * 10 + (uint64_t)(n[i] - '0');
		size_t e = i;
		while (i < n.size() && n[i] == ' ')
			i++;
		std::string where = std::string(opt) + " " + arg + ": column " +
		    std::to_string(colon + 2 + b) + ": ";
		if (e == b || i != n.size())
			throw Error(Exit::usage, where + "expected a decimal " +
			    (str ? "MAX" : "LEN") + " after ':'");
		if (v < 1 || v > max)
			throw Error(Exit::usage, where + (str ? "MAX" : "LEN") +
			    " must be 1 to " + std::to_string(max));
		c.len = (uint32_t)v;
	}
	// Parsed now, so that a malformed address is a usage error early
	// (one that names $variables at each instruction, later).
	if (!names_dwarf_variable(c.expr) || (env && env->var))
		(void)Compiler(c.expr, std::string(opt) + " " + arg, true, env).run();
	return c;
}

std::vector<struct kinst_pinsn>
compile_trace_prog(const std::string &if_expr, const std::vector<Capture> &caps,
    const TypeEnv *env, const std::vector<RawCapture> *raw)
{
	std::vector<struct kinst_pinsn> code;
	size_t nraw = raw ? raw->size() : 0;
	if (caps.empty() && nraw == 0)
		return if_expr.empty() ? code : compile_expr(if_expr, "--if", env);
	auto emit = [&code](uint8_t op, uint8_t arg, uint64_t imm) {
		struct kinst_pinsn in;
		memset(&in, 0, sizeof(in));
		in.op = op;
		in.arg = arg;
		in.imm = imm;
		code.push_back(in);
		return code.size() - 1;
	};
	// predicate; JZ false; captures...; IMM 1; RET; false: IMM 0; RET
	size_t jz = 0;
	if (!if_expr.empty()) {
		code = compile_expr(if_expr, "--if", env);
		code.pop_back();	// its RET: the value decides the JZ
		jz = emit(KINST_OP_JZ, 0, 0);
	}
	uint32_t total = 0;
	for (const Capture &c : caps) {
		std::vector<struct kinst_pinsn> a = Compiler(c.expr,
		    std::string(c.str ? "--str " : "--mem ") + c.arg, true, env).run();
		code.insert(code.end(), a.begin(), a.end());
		emit(c.str ? KINST_OP_STR : KINST_OP_MEM, 0, c.len);
		total += c.len;
	}
	for (size_t i = 0; i < nraw; i++) {
		const RawCapture &c = (*raw)[i];
		code.insert(code.end(), c.addr.begin(), c.addr.end());
		if (c.value)
			emit(KINST_OP_VAL, 0, 0);
		else
			emit(KINST_OP_MEM, 0, c.len);
		total += c.len;
	}
	emit(KINST_OP_IMM, 0, 1);
	emit(KINST_OP_RET, 0, 0);
	if (!if_expr.empty()) {
		code[jz].off = (int16_t)(code.size() - jz - 1);
		emit(KINST_OP_IMM, 0, 0);
		emit(KINST_OP_RET, 0, 0);
	}
	if (caps.size() + nraw > KINST_CAP_MAX)
		throw Error(Exit::usage, "--mem/--str: at most " +
		    std::to_string(KINST_CAP_MAX) + " captures, " +
		    std::to_string(caps.size() + nraw) + " given");
	if (total > KINST_CAP_MAX_BYTES)
		throw Error(Exit::usage, "--mem/--str: " + std::to_string(total) +
		    " bytes of captures, at most " + std::to_string(KINST_CAP_MAX_BYTES));
	unsigned loads = 0;
	for (const auto &in : code)
		loads += in.op == KINST_OP_LOAD || in.op == KINST_OP_LOADC;
	if (loads > KINST_PROG_MAX_LOADS)
		throw Error(Exit::usage, "--if/--mem/--str: " + std::to_string(loads) +
		    " memory reads in all, at most " + std::to_string(KINST_PROG_MAX_LOADS));
	if (code.size() > KINST_PROG_MAX_INSNS)
		throw Error(Exit::usage, "--if/--mem/--str: expressions too long (more than " +
		    std::to_string(KINST_PROG_MAX_INSNS) + " instructions in all)");
	return code;
}

void
make_type_env(TypeEnv &env, TypeSource &src, const std::vector<Spec> &specs)
{
	env.types = &src;
	env.func.clear();
	src.hint_function("");
	env.ret_func.clear();
	for (const auto &sp : specs) {
		if (!sp.at_return) {
			env.ret_func.clear();
			env.no_ret_why = sp.text + " is not a return point: $retval only at FUNC:return";
			break;
		}
		if (!env.ret_func.empty() && env.ret_func != sp.function) {
			env.ret_func.clear();
			env.no_ret_why = "$retval needs the return points of one function; these "
			    "specs name more than one";
			break;
		}
		env.ret_func = sp.function;
	}
	for (const auto &sp : specs) {
		if (sp.function.empty() || (!env.func.empty() && sp.function != env.func)) {
			env.func.clear();
			env.no_args_why = "argument names need the probes at one function's "
			    "entry; these specs name more than one function";
			return;
		}
		env.func = sp.function;
	}
	src.hint_function(env.func);
}

} // namespace kinst
