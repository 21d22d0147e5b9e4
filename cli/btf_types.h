// SPDX-License-Identifier: BSD-2-Clause
// Kernel types from BTF (libbpf's BTF API), for trace --args and the
// typed parts of the expression language (prog_compile.h): function
// prototypes, struct/union member offsets, integer sizes and signedness.
//
// Where the types come from: --btf FILE (raw BTF or an ELF file with a .BTF
// section), else /sys/kernel/btf/vmlinux and, for a module's function,
// /sys/kernel/btf/MODULE (split BTF on top of vmlinux).  FreeBSD keeps its
// types as CTF, which is not read yet: there every typed feature says so.
// Types are loaded only when an expression or --args needs them, so that
// everything else works as before on a kernel without BTF.
#ifndef KINSTCTL_BTF_TYPES_H
#define KINSTCTL_BTF_TYPES_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct btf;

namespace kinst {

// One loaded type graph (vmlinux, or a module's split on top of it).
class Btf {
public:
	// Loads path (raw BTF or ELF), split on top of base when not null.
	// Throws Error(Exit::live, "<path>: <why>").
	Btf(const std::string &path, std::shared_ptr<Btf> base = nullptr);
	// Takes b (a btf built in memory, tests); Btf frees it.
	explicit Btf(struct btf *b);
	~Btf();
	Btf(const Btf &) = delete;
	Btf &operator=(const Btf &) = delete;

	std::string path() const { return path_; }

	// The types a value can have, after typedefs and qualifiers.
	enum class Kind { void_, integer, pointer, enumeration, structure,
	    union_, array, function, floating, other };
	uint32_t resolve(uint32_t id) const;	// through typedef/const/...
	Kind kind(uint32_t id) const;		// of resolve(id)
	int64_t size(uint32_t id) const;	// bytes, -1 if it has none
	bool is_signed(uint32_t id) const;	// a signed integer or enum
	uint32_t pointee(uint32_t id) const;	// pointer / array element
	uint32_t array_len(uint32_t id) const;
	// The C spelling: "unsigned int", "struct file *", "loff_t".
	std::string name(uint32_t id) const;

	// A function's prototype from its BTF FUNC.
	struct Param {
		std::string name;
		uint32_t type;
	};
	struct Func {
		std::string name;
		uint32_t ret = 0;
		std::vector<Param> params;
		bool variadic = false;
	};
	// Throws Error(Exit::unknown_function) when there is no FUNC of that name.
	Func func(const std::string &name) const;

	// A struct or union by tag ("file"), or a typedef/integer by name; 0
	// if none.
	uint32_t find_tagged(const std::string &tag, bool is_union) const;
	uint32_t find_named(const std::string &name) const;

	// A member of the struct/union id (resolved), looked up also inside
	// anonymous struct/union members.  found == false: no such member.
	struct Member {
		bool found = false;
		uint32_t type = 0;
		uint32_t bit_offset = 0;	// from the start of the outer object
		uint32_t bitfield = 0;		// bits, 0 unless a bitfield
	};
	Member member(uint32_t id, const std::string &name) const;
	// Every member name (anonymous members' included), for suggestions.
	std::vector<std::string> member_names(uint32_t id) const;

private:
	struct btf *b_ = nullptr;
	std::shared_ptr<Btf> base_;
	std::string path_;
	void collect(uint32_t id, std::vector<std::string> &out) const;
	bool find_member(uint32_t id, const std::string &name, uint32_t off,
	    Member &m) const;
};

// The types for one command: loaded once, on first use.
class TypeSource {
public:
	// file: --btf (empty: the kernel's); module: the traced function's
	// module ("" or "kernel": vmlinux only).
	TypeSource(std::string file, std::string module)
	    : file_(std::move(file)), module_(std::move(module)) {}
	// The types, or Error(Exit::live, "<why> needs kernel types (BTF):
	// <what is missing>; ...") naming what was looked for.
	const Btf &get(const std::string &why);
	bool loaded() const { return btf_ != nullptr; }
private:
	std::string file_, module_;
	std::shared_ptr<Btf> btf_;
};

struct Spec;
struct TypeEnv;

// The typed-expression environment of a command's specs: types from src,
// and argument names when every spec is the same function (the probe is
// then moved to or checked against its entry: at_entry() in trace.h).
void make_type_env(TypeEnv &env, TypeSource &src, const std::vector<Spec> &specs);

// The closest candidate to word (edit distance at most 2, or a prefix
// either way), or "".
std::string did_you_mean(const std::string &word,
    const std::vector<std::string> &candidates);

// Where a function's arguments are still all in their registers: past a
// leading endbr64 and the ftrace call site that follows it (a 5-byte nop,
// or a call that is_patched(offset) confirms is the text-patched ftrace
// site).  text is the function's bytes from its first one.
uint32_t entry_offset(const uint8_t *text, size_t len,
    const std::function<bool(uint32_t)> &is_patched);

// The register an argument arrives in (System V AMD64: rdi rsi rdx rcx r8
// r9), as a KINST_PREG number; -1 past the sixth.
int arg_register(size_t index);

// One argument's value from its register as its type says: a narrower
// integer truncated, then sign- or zero-extended.
uint64_t arg_value(const Btf &b, uint32_t type, uint64_t reg);

// trace --args: each argument's value from the entry's registers (gpr in
// enum kinst_gpr order).  known is false for what is not in a register
// (past the sixth, a struct passed by value, a float).
struct ArgValue {
	std::string name;
	std::string type;	// C spelling
	bool known = false;
	bool pointer = false;
	bool sgn = false;
	uint64_t value = 0;
};
std::vector<ArgValue> read_args(const Btf &b, const Btf::Func &f,
    const uint64_t *gpr);
// "ksys_read(fd=3, buf=0x7ffc0000, count=7)"; and the JSON object's
// values: integers as numbers, pointers as "0x..." strings, unknown null.
std::string args_text(const std::string &func, const std::vector<ArgValue> &v);

} // namespace kinst

#endif
