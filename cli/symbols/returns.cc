// SPDX-License-Identifier: BSD-2-Clause
// Return points of a function (returns.h).
#include "symbols/returns.h"

#include <algorithm>

#include "base/text.h"

#include <cstring>
#include <map>
#include <set>

extern "C" {
#include "x86/kinst_decode.h"
}

namespace kinst {

namespace {

bool
starts_with(const std::string &s, const char *p)
{
	return s.compare(0, strlen(p), p) == 0;
}

// "sym+0x4, other" -> "sym"
std::string
reloc_symbol(const std::string &r)
{
	size_t e = r.find_first_of("+-, ");
	return r.substr(0, e);
}

// The function's own out-of-line parts, which gcc names FUNC.cold,
// FUNC.cold.N, FUNC.part.N: a jump there stays in the call.
bool
own_part(const std::string &fn, const std::string &target)
{
	if (target.size() <= fn.size() || target.compare(0, fn.size(), fn) != 0)
		return false;
	std::string rest = target.substr(fn.size());
	return starts_with(rest, ".cold") || starts_with(rest, ".part.");
}

bool
return_thunk(const std::string &n)
{
	return n == "__x86_return_thunk" || n == "srso_return_thunk" ||
	    n == "srso_alias_return_thunk" || n == "retbleed_return_thunk" ||
	    n == "__ret";
}

bool
indirect_thunk(const std::string &n)
{
	return starts_with(n, "__x86_indirect_thunk_") ||
	    starts_with(n, "__x86_indirect_jump_thunk_");
}

const char *const gpr_name[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };

// "(T - start) >= size": T (an expression) outside [start, start + size),
// evaluated once (unsigned wrap-around).
std::string
outside(const std::string &t, const Function &f)
{
	return "((" + t + ") - " + hex(f.addr) + " >= " + hex(f.size) + ")";
}

std::string
signed_term(int64_t v)
{
	return v < 0 ? " - " + hex((uint64_t)-v) : " + " + hex((uint64_t)v);
}

// The target of jmp *MODRM (d) at addr, as an expression.
std::string
indirect_target(const struct kinst_insn &d, uint64_t len)
{
	if (d.mod == 3)
		return gpr_name[d.rm + 8 * d.rex_b];
	std::string a;
	if (d.rip_relative) {
		a = "rip" + signed_term((int64_t)len + d.disp);
	} else {
		int base = d.rm + 8 * d.rex_b;
		bool has_base = true;
		if (d.has_sib) {
			base = (d.sib & 7) + 8 * d.rex_b;
			int index = ((d.sib >> 3) & 7) + 8 * d.rex_x;
			if ((d.sib & 7) == 5 && d.mod == 0)
				has_base = false;
			if (index != 4)
				a = std::string(gpr_name[index]) + " * " + std::to_string(1 << (d.sib >> 6));
		}
		if (has_base)
			a = a.empty() ? gpr_name[base] : std::string(gpr_name[base]) + " + " + a;
		if (d.disp != 0 || a.empty())
			a = (a.empty() ? "0" : a) + signed_term(d.disp);
	}
	return "*(u64)(" + a + ")";
}

// The register of __x86_indirect_thunk_REG, or "".
std::string
thunk_register(const std::string &n)
{
	std::string r = n.substr(n.rfind('_') + 1);
	for (const char *g : gpr_name)
		if (r == g)
			return r;
	return "";
}

// in's branch kind (KINST_EM_*, kinst_branch_kind), decoding it only when
// its class does not already say: an instruction that runs out of line is
// never a branch (the classifier emulates or refuses every one), an
// emulated one is the kind it is emulated as; a refused one (the kernel's
// refusals included) is decoded.  False when it does not decode.
bool
branch_kind(const Insn &in, int *kind, struct kinst_insn *d)
{
	if (in.cls.treatment == KINST_T_OOL || in.cls.treatment == KINST_T_OOL_RIPREL) {
		*kind = KINST_EM_NONE;
		return true;
	}
	if (!insn_decode(in, d))
		return false;
	*kind = in.cls.emul != KINST_EM_NONE ? in.cls.emul : kinst_branch_kind(d);
	return true;
}

// The rets of local subroutines: code that starts at the target of a call
// inside the function (a retpoline-style "call 1f", a helper the assembler
// keeps inside the symbol), where nothing falls or jumps in, and runs
// straight to a ret.  Such a ret returns to the function, not from it.
std::set<uint32_t>
local_subroutine_rets(const Function &f, const std::vector<Insn> &insns)
{
	std::vector<int> kind(insns.size(), KINST_EM_NONE);
	std::vector<uint64_t> jumped, called;	// sorted below
	for (size_t i = 0; i < insns.size(); i++) {
		const Insn &in = insns[i];
		struct kinst_insn d;
		if (in.bytes == nullptr || in.unreachable || !branch_kind(in, &kind[i], &d) ||
		    kind[i] == KINST_EM_NONE)
			continue;
		uint64_t to = in.addr + in.len + (uint64_t)d.imm;
		bool inside = to > f.addr && to < f.addr + f.size;
		switch (kind[i]) {
		case KINST_EM_CALL_REL:
			if (inside)
				called.push_back(to);
			break;
		case KINST_EM_JCC:
		case KINST_EM_JMP_REL:
		case KINST_EM_LOOP:
		case KINST_EM_LOOPE:
		case KINST_EM_LOOPNE:
		case KINST_EM_JRCXZ:
			if (inside)
				jumped.push_back(to);
			break;
		}
	}
	std::set<uint32_t> out;
	if (called.empty())
		return out;	// no call into the function itself
	std::sort(called.begin(), called.end());
	called.erase(std::unique(called.begin(), called.end()), called.end());
	std::sort(jumped.begin(), jumped.end());
	for (uint64_t t : called) {
		// insns are in address order.
		auto ii = std::lower_bound(insns.begin(), insns.end(), t,
		    [](const Insn &a, uint64_t v) { return a.addr < v; });
		if (ii == insns.end() || ii->addr != t || ii == insns.begin())
			continue;
		const size_t at = (size_t)(ii - insns.begin());
		// The code before it, past int3 padding (objtool's after a ret
		// or jmp, Linux's rewritten return-thunk jumps: ret; int3 x4).
		size_t pk = at - 1;
		while (pk > 0 && insns[pk].len == 1 && insns[pk].bytes != nullptr &&
		    insns[pk].bytes[0] == 0xcc)
			pk--;
		int prev = kind[pk];
		if (prev != KINST_EM_RET && prev != KINST_EM_RET_IMM && prev != KINST_EM_JMP_REL &&
		    prev != KINST_EM_JMP_IND)
			continue;	// falls in from the code before it
		for (size_t j = at; j < insns.size(); j++) {
			if (j > at && std::binary_search(jumped.begin(), jumped.end(), insns[j].addr))
				break;	// shared with code that jumps here
			if (kind[j] == KINST_EM_RET || kind[j] == KINST_EM_RET_IMM) {
				out.insert(insns[j].offset);
				break;
			}
			if (kind[j] == KINST_EM_JMP_REL || kind[j] == KINST_EM_JMP_IND)
				break;
		}
	}
	return out;
}

} // namespace

const char *
return_kind_name(ReturnPoint::Kind k)
{
	switch (k) {
	case ReturnPoint::Kind::ret: return "ret";
	case ReturnPoint::Kind::ret_imm: return "ret-imm";
	case ReturnPoint::Kind::rethunk: return "rethunk";
	case ReturnPoint::Kind::tail_call: return "tail-call";
	case ReturnPoint::Kind::tail_call_indirect: return "tail-call-indirect";
	}
	return "?";
}

std::string
return_text(const ReturnPoint &r)
{
	static const char *const cc[16] = { "jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
	    "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg" };
	std::string c = r.cc >= 0 && r.cc < 16 ? std::string(", when ") + cc[r.cc] + " is taken" : "";
	switch (r.kind) {
	case ReturnPoint::Kind::ret:
	case ReturnPoint::Kind::ret_imm:
		return "return" + c;
	case ReturnPoint::Kind::rethunk:
		return "return (through the return thunk" + c + ")";
	case ReturnPoint::Kind::tail_call:
		return "return (tail call to " + r.target + c + ")";
	case ReturnPoint::Kind::tail_call_indirect:
		return "return (indirect tail call" + c + ", when the target is outside the function)";
	}
	return "return";
}

namespace {

// The function a jump at in to target (as decoded: unlinked, the
// relocation wins) leaves f for: false when it stays inside f, goes
// nowhere known, or to a section symbol (.text.unlikely+N: a cold part or
// a static function, which cannot be told apart here).  *at_start: to
// that function's first byte.
bool
jump_target(const SymbolTable &syms, Module &m, const Function &f, const Insn &in,
    uint64_t target, std::string *name, bool *at_start)
{
	std::string rel = m.relocatable() ? m.relocation(f, in.addr, in.len) : "";
	name->clear();
	*at_start = false;
	if (!rel.empty()) {
		// An unlinked module: the relocation names the target (PLT32
		// or JUMP26 to a function is its start).
		*name = reloc_symbol(rel);
		*at_start = true;
		if (!name->empty() && (*name)[0] == '.')
			return false;
	} else {
		if (target >= f.addr && target < f.addr + f.size)
			return false;	// inside: a branch
		for (const auto &ref : syms.containing_from(f, target)) {
			const Function &g = syms.function(ref);
			*name = g.name;
			*at_start = g.addr == target;
			break;
		}
	}
	return !name->empty() && *name != f.name && !own_part(f.name, *name);
}

// AArch64: ret (and retaa/retab) returns; a b to another function's start
// is a tail call.  br is not called a return (a switch's jump table
// branches through a register too), nor a conditional branch out.
std::vector<ReturnPoint>
return_points_a64(const SymbolTable &syms, Module &m, const Function &f,
    const std::vector<Insn> &insns)
{
	std::vector<ReturnPoint> out;
	for (const auto &in : insns) {
		if (in.unreachable || in.len != 4)
			continue;
		ReturnPoint r;
		r.offset = in.offset;
		std::string name;
		bool at_start = false;
		if (in.a64d.emul == KINST_A64_EM_RET || in.a64d.emul == KINST_A64_EM_RET_PAC) {
			out.push_back(r);
		} else if (in.a64d.emul == KINST_A64_EM_B &&
		    jump_target(syms, m, f, in, kinst_a64_target(&in.a64d, in.addr), &name,
		    &at_start) && at_start) {
			r.kind = ReturnPoint::Kind::tail_call;
			r.target = name;
			out.push_back(r);
		}
	}
	return out;
}

} // namespace

std::vector<ReturnPoint>
return_points(const SymbolTable &syms, Module &m, const Function &f,
    const std::vector<Insn> &insns)
{
	if (m.a64())
		return return_points_a64(syms, m, f, insns);
	std::vector<ReturnPoint> out;
	std::set<uint32_t> local = local_subroutine_rets(f, insns);
	for (const auto &in : insns) {
		if (in.unreachable || in.dec_status != KINST_DEC_OK || in.bytes == nullptr ||
		    local.count(in.offset))
			continue;
		struct kinst_insn d;
		int em;
		if (!branch_kind(in, &em, &d) || em == KINST_EM_NONE)
			continue;
		ReturnPoint r;
		r.offset = in.offset;
		if (em == KINST_EM_RET || em == KINST_EM_RET_IMM) {
			r.kind = em == KINST_EM_RET ? ReturnPoint::Kind::ret : ReturnPoint::Kind::ret_imm;
			out.push_back(r);
			continue;
		}
		if (em == KINST_EM_JMP_IND) {
			// jmp *TABLE(,%reg,8) is a switch's jump table; a jump
			// through a register or a memory word leaves when its
			// target is outside the function.
			if (d.mod != 3 && d.has_sib && ((d.sib >> 3) & 7) + 8 * d.rex_x != 4)
				continue;
			r.kind = ReturnPoint::Kind::tail_call_indirect;
			r.leaves_if = outside(indirect_target(d, in.len), f);
			out.push_back(r);
			continue;
		}
		if (em != KINST_EM_JMP_REL && em != KINST_EM_JCC)
			continue;
		if (em == KINST_EM_JCC) {
			r.cc = d.opcode & 0xf;
			r.leaves_if = return_condition(r.cc);
		}
		std::string name;
		bool at_start = false;
		if (!jump_target(syms, m, f, in, in.addr + in.len + (uint64_t)d.imm, &name,
		    &at_start))
			continue;
		if (return_thunk(name)) {
			r.kind = ReturnPoint::Kind::rethunk;
		} else if (indirect_thunk(name)) {
			r.kind = ReturnPoint::Kind::tail_call_indirect;
			std::string reg = thunk_register(name);
			if (reg.empty())
				continue;	// a thunk of no register known here
			std::string c = outside(reg, f);
			r.leaves_if = r.leaves_if.empty() ? c : r.leaves_if + " && " + c;
		} else if (at_start) {
			r.kind = ReturnPoint::Kind::tail_call;
			r.target = name;
		} else {
			continue;	// into the middle of another function
		}
		out.push_back(r);
	}
	return out;
}

std::string
return_condition(int cc)
{
	// rflags: CF bit 0, PF 2, ZF 6, SF 7, OF 11.
	static const char *const t[8] = {
		"((rflags >> 11) & 1)",				// o
		"(rflags & 1)",					// b
		"((rflags >> 6) & 1)",				// e
		"((rflags | (rflags >> 6)) & 1)",		// be: CF | ZF
		"((rflags >> 7) & 1)",				// s
		"((rflags >> 2) & 1)",				// p
		"(((rflags >> 7) ^ (rflags >> 11)) & 1)",	// l: SF != OF
		"((((rflags >> 7) ^ (rflags >> 11)) | (rflags >> 6)) & 1)",	// le
	};
	if (cc < 0 || cc > 15)
		return "";
	std::string e = t[cc >> 1];
	return (cc & 1) ? "(" + e + " == 0)" : "(" + e + " != 0)";
}

std::map<std::string, std::vector<Spec>>
by_return_condition(const std::vector<Spec> &specs)
{
	std::map<std::string, std::vector<Spec>> out;
	for (const auto &sp : specs)
		out[sp.ret_if].push_back(sp);
	return out;
}

std::string
with_return_condition(const std::string &cond, const std::string &if_expr)
{
	if (cond.empty())
		return if_expr;
	return "(" + cond + ")" + (if_expr.empty() ? "" : " && (" + if_expr + ")");
}

} // namespace kinst
