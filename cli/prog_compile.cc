// SPDX-License-Identifier: BSD-2-Clause
// The --if expression compiler (prog_compile.h): a recursive-descent
// parser that emits stack-machine code as it goes.
#include <cerrno>
#include <cstring>
#include <map>

#include <sys/ioctl.h>

#include "error.h"
#include "prog_compile.h"

extern "C" {
#include "kinst_prog.h"
}

namespace kinst {

namespace {

const std::map<std::string, uint8_t> registers = {
	{"rax", KINST_RAX}, {"rcx", KINST_RCX}, {"rdx", KINST_RDX},
	{"rbx", KINST_RBX}, {"rsp", KINST_RSP}, {"rbp", KINST_RBP},
	{"rsi", KINST_RSI}, {"rdi", KINST_RDI}, {"r8", KINST_R8},
	{"r9", KINST_R9}, {"r10", KINST_R10}, {"r11", KINST_R11},
	{"r12", KINST_R12}, {"r13", KINST_R13}, {"r14", KINST_R14},
	{"r15", KINST_R15}, {"rip", KINST_PREG_RIP},
	{"rflags", KINST_PREG_RFLAGS},
};

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

class Compiler {
public:
	// capture: an address for --mem/--str: reads are LOADC (a fault
	// is the capture's, not the hit's), and no RET.
	Compiler(const std::string &s, const std::string &what, bool capture = false)
	    : s_(s), what_(what), capture_(capture) {}

	std::vector<struct kinst_pinsn> run()
	{
		skip_ws();
		if (pos_ == s_.size())
			fail("empty expression");
		expr(1);
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

private:
	const std::string &s_;
	const std::string &what_;
	bool capture_;
	size_t pos_ = 0;
	int depth_ = 0;
	unsigned loads_ = 0;
	std::vector<struct kinst_pinsn> code_;

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
		expr(prec + 1);
		emit(KINST_OP_LNOT);
		emit(KINST_OP_LNOT);
		size_t end = emit(KINST_OP_JA);
		depth_--;	// the short-circuit path pushes its own value
		patch(j);
		emit(KINST_OP_IMM, 0, is_and ? 0 : 1);
		patch(end);
	}

	// Precedence climbing over binops[].
	void expr(int min_prec)
	{
		unary();
		for (;;) {
			skip_ws();
			const BinOp *b = nullptr;
			for (const auto &cand : binops)
				if (s_.compare(pos_, strlen(cand.tok), cand.tok) == 0) {
					b = &cand;
					break;
				}
			if (b == nullptr || b->prec < min_prec)
				return;
			pos_ += strlen(b->tok);
			if (b->op == 0) {
				logical(b->prec == 2, b->prec);
				continue;
			}
			expr(b->prec + 1);
			emit(b->op);
		}
	}

	void unary()
	{
		skip_ws();
		size_t at = pos_;
		if (eat("!")) {
			unary();
			emit(KINST_OP_LNOT);
		} else if (eat("~")) {
			unary();
			emit(KINST_OP_BNOT);
		} else if (eat("-")) {
			unary();
			emit(KINST_OP_NEG);
		} else if (eat("*")) {
			uint8_t size = cast();
			unary();
			if (++loads_ > KINST_PROG_MAX_LOADS)
				fail_at(at, "too many memory reads (at most " +
				    std::to_string(KINST_PROG_MAX_LOADS) + ")");
			emit(capture_ ? KINST_OP_LOADC : KINST_OP_LOAD, size);
		} else
			primary();
	}

	// After '*': an optional "(u8)".."(u64)"; 8 without one.
	uint8_t cast()
	{
		skip_ws();
		size_t save = pos_;
		if (!eat("("))
			return 8;
		std::string id = ident();
		if (load_sizes.count(id) && eat(")"))
			return load_sizes.at(id);
		pos_ = save;
		return 8;
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

	void primary()
	{
		skip_ws();
		if (pos_ >= s_.size())
			fail("expression ends early");
		size_t at = pos_;
		if (eat("(")) {
			expr(1);
			expect(")");
			return;
		}
		if (isdigit((unsigned char)s_[pos_])) {
			number();
			return;
		}
		std::string id = ident();
		if (id.empty())
			fail("unexpected '" + s_.substr(pos_, 1) + "'");
		if (registers.count(id))
			emit(KINST_OP_REG, registers.at(id));
		else if (context.count(id))
			emit(KINST_OP_CTX, context.at(id));
		else if (id == "comm")
			comm();
		else
			fail_at(at, "unknown name '" + id + "'");
	}

	void number()
	{
		size_t at = pos_;
		size_t end = pos_;
		while (end < s_.size() && isalnum((unsigned char)s_[end]))
			end++;
		std::string t = s_.substr(pos_, end - pos_);
		errno = 0;
		char *e = nullptr;
		unsigned long long v = strtoull(t.c_str(), &e, 0);
		if (e == nullptr || *e != '\0' || errno == ERANGE)
			fail_at(at, "bad number '" + t + "'");
		pos_ = end;
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
compile_expr(const std::string &expr, const std::string &what)
{
	return Compiler(expr, what).run();
}

Capture
parse_capture(const std::string &arg, bool str)
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
	// Parsed now, so that a malformed address is a usage error early.
	(void)Compiler(c.expr, std::string(opt) + " " + arg, true).run();
	return c;
}

std::vector<struct kinst_pinsn>
compile_trace_prog(const std::string &if_expr, const std::vector<Capture> &caps)
{
	std::vector<struct kinst_pinsn> code;
	if (caps.empty())
		return if_expr.empty() ? code : compile_expr(if_expr, "--if");
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
		code = compile_expr(if_expr, "--if");
		code.pop_back();	// its RET: the value decides the JZ
		jz = emit(KINST_OP_JZ, 0, 0);
	}
	uint32_t total = 0;
	for (const Capture &c : caps) {
		std::vector<struct kinst_pinsn> a = Compiler(c.expr,
		    std::string(c.str ? "--str " : "--mem ") + c.arg, true).run();
		code.insert(code.end(), a.begin(), a.end());
		emit(c.str ? KINST_OP_STR : KINST_OP_MEM, 0, c.len);
		total += c.len;
	}
	emit(KINST_OP_IMM, 0, 1);
	emit(KINST_OP_RET, 0, 0);
	if (!if_expr.empty()) {
		code[jz].off = (int16_t)(code.size() - jz - 1);
		emit(KINST_OP_IMM, 0, 0);
		emit(KINST_OP_RET, 0, 0);
	}
	if (caps.size() > KINST_CAP_MAX)
		throw Error(Exit::usage, "--mem/--str: at most " +
		    std::to_string(KINST_CAP_MAX) + " captures, " +
		    std::to_string(caps.size()) + " given");
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

uint32_t
load_prog(int fd, const std::vector<struct kinst_pinsn> &code,
    const std::string &what)
{
	struct kinst_prog_load pl;
	memset(&pl, 0, sizeof(pl));
	pl.insns = (uint64_t)(uintptr_t)code.data();
	pl.ninsns = (uint32_t)code.size();
	if (ioctl(fd, KINST_IOC_PROG_LOAD, &pl) != 0) {
		int e = errno;
		if (e == ENOTTY)
			throw Error(Exit::live, what + ": the loaded kinst module "
			    "predates probe programs (ABI 1.5): load this version's module");
		if (e == EINVAL && pl.verdict == KINST_PV_BAD_OP)
			throw Error(Exit::live, what + ": the loaded kinst module does not "
			    "know an instruction of the program (captures need ABI 1.7): "
			    "load this version's module");
		if (e == EINVAL && pl.verdict != KINST_PV_OK)
			throw Error(Exit::internal, what + ": the module refused the "
			    "compiled program: " + kinst_prog_verdict_name(pl.verdict) +
			    " at instruction " + std::to_string(pl.error_pc));
		throw Error(Exit::live, what + ": loading the program: " + strerror(e));
	}
	return pl.prog_id;
}

std::vector<struct kinst_prog_cpu_stats>
prog_stats(int fd)
{
	std::vector<struct kinst_prog_cpu_stats> v(KINST_STATS_MAXCPU);
	struct kinst_prog_stats ps;
	memset(&ps, 0, sizeof(ps));
	ps.buf = (uint64_t)(uintptr_t)v.data();
	ps.cap = (uint32_t)v.size();
	if (ioctl(fd, KINST_IOC_PROG_STATS, &ps) != 0)
		throw Error(Exit::live, std::string("program stats: ") + strerror(errno));
	v.resize(ps.ncpus < ps.cap ? ps.ncpus : ps.cap);
	return v;
}

} // namespace kinst
