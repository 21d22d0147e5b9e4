// SPDX-License-Identifier: BSD-2-Clause
// Where control leaves a function (FUNC:return, kinstctl latency): every
// instruction by which a call of it ends, found from its own code with the
// engine's decoder and classifier:
//   ret, ret imm16                          a return
//   jmp __x86_return_thunk                  a return through the retbleed
//                                           thunk (Linux built with
//                                           CONFIG_RETHUNK)
//   jmp OTHER (OTHER's first instruction)   a tail call: OTHER returns for it
//   jmp *REG, jmp *MEM,                     an indirect tail call when its
//   jmp __x86_indirect_thunk_REG            target is outside the function
//                                           (a switch compiled -O0 jumps
//                                           through a register too); a jump
//                                           table, jmp *TABLE(,%r,8), is none
//   jCC to a return thunk or another function: the same, when taken
// A jump to the function's own compiler parts (FUNC.cold, FUNC.part.N) is
// not a return, nor the ret of a local subroutine (code a call inside the
// function reaches, where nothing else falls or jumps in).  At every return point the stack pointer is the one the
// function was entered with (it points at the return address), so the
// per-thread state's frame of the call (kinst_tstate.h) is rsp there.
#ifndef KINSTCTL_RETURNS_H
#define KINSTCTL_RETURNS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "symbols/resolver.h"
#include "base/spec.h"
#include "symbols/symbols.h"

namespace kinst {

struct ReturnPoint {
	enum class Kind { ret, ret_imm, rethunk, tail_call, tail_call_indirect };
	uint32_t offset = 0;
	Kind kind = Kind::ret;
	// A jCC: the condition code (0..15, the low nibble of the opcode);
	// -1 for an unconditional one.  The probe fires whether or not the
	// jump is taken: a program tests rflags (return_condition()).
	int cc = -1;
	// When the call ends here only sometimes: an expression (the --if
	// grammar, prog_compile.h) true when it does; "" when always.  A jCC:
	// its condition over rflags; an indirect jump: its target (a register
	// or a memory word) outside the function as loaded (f's address).
	std::string leaves_if;
	std::string target;	// tail calls: the callee ("" when indirect)
};

// "ret", "ret-imm", "rethunk", "tail-call", "tail-call-indirect" (JSON).
const char *return_kind_name(ReturnPoint::Kind k);
// As list-offsets prints it: "return", "return (jne)", "tail call to f", ...
std::string return_text(const ReturnPoint &r);

// The return points of f (insns: walk(), the engine's view), in
// offset order.  syms/m name jump targets (an unlinked module's relocations,
// else the symbol at the target address).
std::vector<ReturnPoint> return_points(const SymbolTable &syms, Module &m,
    const Function &f, const std::vector<Insn> &insns);

// An expression (prog_compile.h grammar) over rflags that is true when a
// jCC of condition cc is taken; "" for -1.
std::string return_condition(int cc);

// The specs grouped by the condition of their return point (Spec::ret_if):
// "", every spec that is not a conditional one, and each condition.  A
// group is armed with its own program, whose --if is
// with_return_condition(cond, if_expr): a hit counts only when the call
// ends there.
std::map<std::string, std::vector<Spec>> by_return_condition(const std::vector<Spec> &specs);
std::string with_return_condition(const std::string &cond, const std::string &if_expr);

} // namespace kinst

#endif
