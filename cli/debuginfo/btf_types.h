// SPDX-License-Identifier: BSD-2-Clause
// Kernel types, for trace --args and the typed parts of the expression
// language (prog_compile.h): function prototypes, struct/union member
// offsets, integer sizes and signedness.  Two formats behind one interface
// (Types): Linux's BTF through libbpf's BTF API (Btf, here), FreeBSD's CTF
// through kinstctl's own reader (Ctf, ctf_types.h).
//
// Where the types come from: --btf FILE (raw BTF, raw CTF, or an ELF file
// with a .BTF or .SUNW_ctf section); else, on Linux, /sys/kernel/btf/vmlinux
// and, for a module's function, /sys/kernel/btf/MODULE (split BTF on top of
// vmlinux); on FreeBSD the .SUNW_ctf section of the kernel's or the
// module's file.  Types are loaded only when an expression or --args needs
// them, so that everything else works as before on a kernel without them.
#ifndef KINSTCTL_BTF_TYPES_H
#define KINSTCTL_BTF_TYPES_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

struct btf;

namespace kinst {

// One loaded type graph: the kernel's, or a module's on top of it.  Ids
// are the format's own (BTF type ids, CTF type ids); 0 is void.
class Types {
public:
	virtual ~Types() = default;
	Types() = default;
	Types(const Types &) = delete;
	Types &operator=(const Types &) = delete;

	std::string path() const { return path_; }
	virtual const char *format() const = 0;	// "BTF", "CTF"

	// The types a value can have, after typedefs and qualifiers.
	enum class Kind { void_, integer, pointer, enumeration, structure,
	    union_, array, function, floating, other };
	virtual uint32_t resolve(uint32_t id) const = 0;	// through typedef/const/...
	virtual Kind kind(uint32_t id) const = 0;		// of resolve(id)
	virtual int64_t size(uint32_t id) const = 0;	// bytes, -1 if it has none
	virtual bool is_signed(uint32_t id) const = 0;	// a signed integer or enum
	virtual uint32_t pointee(uint32_t id) const = 0;	// pointer / array element
	virtual uint32_t array_len(uint32_t id) const = 0;
	// The C spelling: "unsigned int", "struct file *", "loff_t".
	virtual std::string name(uint32_t id) const = 0;

	// A function's prototype.
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
	// Throws Error(Exit::unknown_function) when there is no function of
	// that name.
	virtual Func func(const std::string &name) const = 0;

	// A struct or union by tag ("file"), or a typedef/integer by name; 0
	// if none.
	virtual uint32_t find_tagged(const std::string &tag, bool is_union) const = 0;
	virtual uint32_t find_named(const std::string &name) const = 0;

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
	// An enumerator by name (e.g. PIDTYPE_TGID): its value and its enum
	// type.  The first enum that defines the name wins.
	bool enumerator(const std::string &name, int64_t &value, uint32_t &type) const;

	// One member as the format has it ("" for an anonymous one).
	struct RawMember {
		std::string name;
		uint32_t type;
		uint64_t bit_offset;	// from the start of its struct/union
		uint32_t bitfield;	// bits, 0 unless a bitfield
	};
	// The members of the struct/union id (after typedefs), in order;
	// false if id is not one.
	virtual bool members(uint32_t id, std::vector<RawMember> &out) const = 0;

protected:
	std::string path_;
	using Enumerators = std::unordered_map<std::string, std::pair<int64_t, uint32_t>>;
	// Every enumerator, the first definition of a name kept.
	virtual void list_enumerators(Enumerators &out) const = 0;

private:
	mutable Enumerators enums_;	// made on the first lookup
	mutable bool enums_made_ = false;
	bool find_member(uint32_t id, const std::string &name, uint64_t off,
	    Member &m, int depth, long &budget) const;
	void collect(uint32_t id, std::vector<std::string> &out, int depth,
	    long &budget) const;
};

// The lookups a reader of one format (BTF, CTF, DWARF) implements, declared
// once here; each declares its protected list_enumerators itself.  Used as
// "KINST_TYPES_READER;" in the class's public part.
#define KINST_TYPES_READER \
	uint32_t resolve(uint32_t id) const override; \
	Kind kind(uint32_t id) const override; \
	int64_t size(uint32_t id) const override; \
	bool is_signed(uint32_t id) const override; \
	uint32_t pointee(uint32_t id) const override; \
	uint32_t array_len(uint32_t id) const override; \
	std::string name(uint32_t id) const override; \
	Func func(const std::string &name) const override; \
	uint32_t find_tagged(const std::string &tag, bool is_union) const override; \
	uint32_t find_named(const std::string &name) const override; \
	bool members(uint32_t id, std::vector<RawMember> &out) const override

// Linux's BTF, through libbpf's BTF API.
class Btf : public Types {
public:
	// Loads path (raw BTF or ELF), split on top of base when not null.
	// Throws Error(Exit::live, "<path>: <why>").
	Btf(const std::string &path, std::shared_ptr<Btf> base = nullptr);
	// Takes b (a btf built in memory, tests); Btf frees it.
	explicit Btf(struct btf *b);
	~Btf() override;

	const char *format() const override { return "BTF"; }
	KINST_TYPES_READER;
	bool has_func(const std::string &name) const;

protected:
	void list_enumerators(Enumerators &out) const override;

private:
	struct btf *b_ = nullptr;
	std::shared_ptr<Btf> base_;
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
	const Types &get(const std::string &why);
	bool loaded() const { return types_ != nullptr; }
	// The one function the specs name (make_type_env), if any: a module's
	// function given without MODULE: gets that module's types.
	void hint_function(const std::string &f) { func_ = f; }
private:
	std::string file_, module_, func_;
	std::shared_ptr<Types> types_;
};

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

// The register an argument arrives in (regfile.h: x86-64's rdi rsi rdx
// rcx r8 r9, arm64's x0-x7), as a KINST_PREG number; -1 past the last.
int arg_register(size_t index);

// One argument's value from its register as its type says: a narrower
// integer truncated, then sign- or zero-extended.
uint64_t arg_value(const Types &b, uint32_t type, uint64_t reg);

// trace --args: each argument's value from the entry's registers (gpr:
// reg_words(), regfile.h).  known is false for what is not in a register
// (past the last argument register, a struct passed by value, a float).
struct ArgValue {
	std::string name;
	std::string type;	// C spelling
	bool known = false;
	bool pointer = false;
	bool sgn = false;
	uint64_t value = 0;
};
std::vector<ArgValue> read_args(const Types &b, const Types::Func &f,
    const uint64_t *gpr);
// "ksys_read(fd=3, buf=0x7ffc0000, count=7)"; and the JSON object's
// values: integers as numbers, pointers as "0x..." strings, unknown null.
std::string args_text(const std::string &func, const std::vector<ArgValue> &v);

} // namespace kinst

#endif
