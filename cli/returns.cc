// SPDX-License-Identifier: BSD-2-Clause
// Return points of a function (returns.h).
#include "returns.h"

#include <cstring>

extern "C" {
#include "kinst_decode.h"
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
		return "return (indirect tail call" + c + ")";
	}
	return "return";
}

std::vector<ReturnPoint>
return_points(const SymbolTable &syms, Module &m, const Function &f,
    const std::vector<Insn> &insns)
{
	std::vector<ReturnPoint> out;
	for (const auto &in : insns) {
		if (in.unreachable || in.dec_status != KINST_DEC_OK || in.bytes == nullptr)
			continue;
		ReturnPoint r;
		r.offset = in.offset;
		struct kinst_insn d;
		if (kinst_decode(in.bytes, in.len, &d) != KINST_DEC_OK)
			continue;
		uint8_t em = in.cls.emul;
		if (em == KINST_EM_NONE)
			em = kinst_branch_kind(&d);
		if (em == KINST_EM_RET || em == KINST_EM_RET_IMM) {
			r.kind = em == KINST_EM_RET ? ReturnPoint::Kind::ret : ReturnPoint::Kind::ret_imm;
			out.push_back(r);
			continue;
		}
		if (em == KINST_EM_JMP_IND) {
			// jmp *TABLE(,%reg,8) is a switch's jump table; a jump
			// through a register or a plain memory word leaves.
			if (d.mod != 3 && d.has_sib && ((d.sib >> 3) & 7) + 8 * d.rex_x != 4)
				continue;
			r.kind = ReturnPoint::Kind::tail_call_indirect;
			out.push_back(r);
			continue;
		}
		if (em != KINST_EM_JMP_REL && em != KINST_EM_JCC)
			continue;
		if (em == KINST_EM_JCC)
			r.cc = d.opcode & 0xf;
		std::string name;
		bool at_start = false;
		std::string rel = m.relocatable() ? m.relocation(f, in.addr, in.len) : "";
		if (!rel.empty()) {
			// An unlinked module: the relocation names the target
			// (PLT32 to a function is its start).
			name = reloc_symbol(rel);
			at_start = true;
			// A section symbol (.text.unlikely+N): a cold part or a
			// static function, which cannot be told apart here.
			if (!name.empty() && name[0] == '.')
				continue;
		} else {
			uint64_t target = in.addr + in.len + (uint64_t)d.imm;
			if (target >= f.addr && target < f.addr + f.size)
				continue;	// inside: a branch
			for (const auto &ref : syms.containing(target)) {
				const Function &g = syms.function(ref);
				if (g.module != f.module && m.relocatable())
					continue;
				name = g.name;
				at_start = g.addr == target;
				break;
			}
			if (name.empty())
				continue;	// nowhere known: not called a return
		}
		if (name.empty() || name == f.name || own_part(f.name, name))
			continue;
		if (return_thunk(name)) {
			r.kind = ReturnPoint::Kind::rethunk;
		} else if (indirect_thunk(name)) {
			r.kind = ReturnPoint::Kind::tail_call_indirect;
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

std::map<int, std::vector<Spec>>
by_return_condition(const std::vector<Spec> &specs)
{
	std::map<int, std::vector<Spec>> out;
	for (const auto &sp : specs)
		out[sp.ret_cc].push_back(sp);
	return out;
}

std::string
with_return_condition(int cc, const std::string &if_expr)
{
	if (cc < 0)
		return if_expr;
	return return_condition(cc) + (if_expr.empty() ? "" : " && (" + if_expr + ")");
}

} // namespace kinst
