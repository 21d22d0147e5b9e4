// SPDX-License-Identifier: BSD-2-Clause
// Probe-program expressions (kinstctl trace --if EXPR) compiled into the
// module's bytecode (kinst_abi.h: struct kinst_pinsn).  The module verifies
// what it gets; this compiler only has to be right, not trusted.
//
// Grammar (C precedence, all arithmetic on unsigned 64-bit values):
//   expr    := unary (binop unary)*
//   binop   := || && | ^ & == != < <= > >= << >> + - *
//   unary   := ! unary | - unary | ~ unary | * [ ( u8|u16|u32|u64 ) ] unary
//            | primary
//   unary   := ... | ( TYPE ) unary | postfix
//   postfix := primary ( -> NAME | . NAME | [ expr ] )*
//   primary := NUMBER | REGISTER | pid | tid | cpu | ( expr )
//            | comm == "STRING" | comm != "STRING"
//            | ARGUMENT | args . ARGUMENT | $ VARIABLE (DWARF)
//   TYPE    := struct NAME *... | union NAME *... | TYPENAME *... (BTF)
// REGISTER: the hit's (regfile.h; x86-64: rax rbx rcx rdx rsi rdi rbp rsp
// r8-r15 rip rflags; arm64: x0-x30 fp lr sp pc pstate).  `*` reads
// 8 bytes unless a size is given or the operand has a pointer type; an
// address in the lower canonical half reads the current process's user
// memory.  && and || short-circuit.  Typed values (arguments, members,
// casts; btf_types.h) are read with loads of their size, signed ones
// sign-extended, and compare signed.
#ifndef KINSTCTL_PROG_COMPILE_H
#define KINSTCTL_PROG_COMPILE_H

#include <functional>
#include <string>
#include <vector>

#include "base/abi.h"

namespace kinst {

class TypeSource;
struct Spec;

class Types;

// $NAME, a C variable at the probe's instruction (trace_vars.h): code
// that pushes its value (an integer, enum or pointer of its type's size;
// reads are KINST_OP_LOAD), or with lval its address (a struct, union or
// array in memory); type: its type in TypeEnv::var_types.
struct VarRef {
	std::vector<struct kinst_pinsn> code;
	bool lval = false;
	// A struct or union held in pieces (registers, values, memory, some
	// perhaps optimized out), of any size: nothing is emitted for it
	// until a member is named; bits(off, n, code) then emits bits
	// [off, off+n) of it (n <= 64) as one value, or throws Error saying
	// which bytes it cannot read.  code stays empty.
	std::function<void(uint32_t bit_off, uint32_t nbits,
	    std::vector<struct kinst_pinsn> &code)> bits;
	uint32_t type = 0;
};

// What typed expressions may use.  types: where BTF comes from (null:
// no typed expressions).  func: the function whose entry the probe is at
// (its arguments can be named), or "" with no_args_why saying why not.
// var: $NAME's lookup (throws Error(Exit::usage, why)); an expression
// that names a $variable is typed by var_types (DWARF) throughout.
struct TypeEnv {
	TypeSource *types = nullptr;
	std::string func;
	std::string no_args_why;
	mutable bool used_args = false;	// set when an argument was named
	std::function<void(const std::string &, VarRef &)> var;
	const Types *var_types = nullptr;
	// The probe is at a return point of ret_func (FUNC:return): $retval
	// is rax, typed by its return type (types, or var_types in a DWARF
	// expression; ret_types when those do not have the function).  ""
	// with no_ret_why saying why not.
	std::string ret_func;
	std::string no_ret_why;
	const Types *ret_types = nullptr;
	// $EXPR's value at the start point (latency): entry(EXPR, &signed)
	// gives the activation's word it is saved in (throws Error(why));
	// entry_frame pushes the activation's frame here, entry_tag its tag.
	std::function<int(const std::string &, bool *)> entry;
	std::vector<struct kinst_pinsn> entry_frame;
	uint64_t entry_tag = 0;
};

// Whether the expression names a C variable ($NAME, not $retval or
// $entry(...)): those are planned per instruction from DWARF (trace_vars.h).
bool names_dwarf_variable(const std::string &expr);

// One bytecode instruction (kinst_prog.h), for code built by hand.
// Throws Error(Exit::usage, "<what>: column N: <why>") on a malformed
// expression or one over the module's limits.
// *result_signed: whether the value compares signed (a key is printed so).
std::vector<struct kinst_pinsn> compile_expr(const std::string &expr,
    const std::string &what, const TypeEnv *env = nullptr, bool *result_signed = nullptr);

// A --mem EXPR:LEN or --str EXPR[:MAX] argument.
struct Capture {
	std::string arg;	// as given
	std::string expr;	// the address
	bool str = false;
	uint32_t len = 0;	// LEN (1..512) or MAX (1..256, default 256)
};

// Parses and checks one argument (the address compiles, LEN/MAX in
// range).  Throws Error(Exit::usage, "--mem ARG: column N: <why>").
Capture parse_capture(const std::string &arg, bool str,
    const TypeEnv *env = nullptr);

// A capture whose address is already code (trace --vars, dwarf_loc.h):
// the instructions that push the address (reads are KINST_OP_LOADC), and
// the bytes to capture there (1..KINST_CAP_MEM_MAX).
struct RawCapture {
	std::vector<struct kinst_pinsn> addr;	// value: the value's code
	uint32_t len = 0;	// value: 8
	bool value = false;	// KINST_OP_VAL of the value addr computes
};

// The program of trace: --if's predicate (none: true) and, when it holds,
// one capture per element of caps (a read in an address is KINST_OP_LOADC:
// its fault is the capture's), then one per element of raw (ranks after
// caps').  Empty when there is none of them.
std::vector<struct kinst_pinsn> compile_trace_prog(const std::string &if_expr,
    const std::vector<Capture> &caps, const TypeEnv *env = nullptr,
    const std::vector<RawCapture> *raw = nullptr);

// The typed-expression environment of a command's specs: types from src,
// and argument names when every spec is the same function (the probe is
// then moved to or checked against its entry: Session::at_entry() in session.h).
void make_type_env(TypeEnv &env, TypeSource &src, const std::vector<Spec> &specs);

} // namespace kinst

#endif
