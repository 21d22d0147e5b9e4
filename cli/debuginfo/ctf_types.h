// SPDX-License-Identifier: BSD-2-Clause
// Kernel types from CTF, the format FreeBSD's kernel and modules carry in
// their .SUNW_ctf section (ctfconvert/ctfmerge): versions 2 and 3, raw or
// zlib-compressed.  kinstctl reads it itself (FreeBSD's libctf is a private
// library with no installed headers), so the reader is portable and tested
// on Linux against CTF built by the tests.
//
// Functions: CTF keeps their prototypes in a section ordered like the ELF
// symbol table's STT_FUNC entries, so a prototype needs the file's .symtab;
// raw CTF (no ELF around it) has types but no functions.  CTF records no
// parameter names: arguments are named arg0, arg1, ...
//
// Not read: a dictionary uniquified against a parent (cth_parname set;
// FreeBSD's kernel and module builds do not make them), big-endian data.
// Every offset and id is checked while loading: a corrupt section is an
// Error naming what is wrong, never a crash.
#ifndef KINSTCTL_CTF_TYPES_H
#define KINSTCTL_CTF_TYPES_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "debuginfo/btf_types.h"

namespace kinst {

// True if path is raw CTF or an ELF file with a .SUNW_ctf section.
bool ctf_file(const std::string &path);

class Ctf : public Types {
public:
	// One symbol-table entry, as the function section needs it.
	struct Sym {
		std::string name;	// "" when st_name is 0
		uint8_t type = 0;	// ELF64_ST_TYPE
		uint16_t shndx = 0;
		uint64_t value = 0;
	};
	// Loads path: raw CTF, or an ELF file's .SUNW_ctf with its .symtab.
	// Throws Error(Exit::live, "<path>: <why>").
	explicit Ctf(const std::string &path);
	// From memory: the section's bytes, the symbol table (empty: no
	// functions) and the external string table (names with stid 1).
	Ctf(const std::vector<uint8_t> &section, const std::vector<Sym> &syms,
	    const std::string &strtab, const std::string &label);

	const char *format() const override { return "CTF"; }
	int version() const { return version_; }
	size_t type_count() const { return types_.size() - 1; }
	size_t func_count() const { return funcs_.size(); }

	KINST_TYPES_READER;

protected:
	void list_enumerators(Enumerators &out) const override;

private:
	struct T {
		uint8_t kind = 0;	// CTF_K_*
		uint32_t name = 0;	// raw name reference (stid bit, offset)
		uint32_t ref = 0;	// referenced type; forward: the tag's kind
		uint64_t size = 0;
		uint32_t enc = 0;	// integer/float encoding word
		uint32_t vlen = 0;
		uint32_t first = 0;	// into members_ (struct/union), args_
					// (function), enumvals_ (enum)
		uint32_t nelems = 0;	// array
		bool negative = false;	// an enum with a negative value
	};
	struct M {
		uint32_t name;
		uint32_t type;
		uint64_t offset;	// bits
	};
	struct F {
		uint32_t ret;
		std::vector<uint32_t> args;
		bool variadic;
	};
	int version_ = 0;
	std::vector<uint8_t> data_;	// the section after its header, inflated
	uint32_t stroff_ = 0, strlen_ = 0;
	std::string ext_;		// the ELF string table (stid 1)
	std::vector<T> types_;		// [0] is void
	std::vector<M> members_;
	std::vector<uint32_t> args_;
	std::unordered_map<std::string, F> funcs_;
	std::unordered_map<std::string, uint32_t> structs_, unions_, typedefs_, ints_;
	struct E {
		uint32_t name;		// raw name reference
		int32_t value;
	};
	std::vector<E> enumvals_;

	void load(const std::vector<uint8_t> &section, const std::vector<Sym> &syms);
	// load's steps (ctf_types.cc), reading data_ through a Body.
	struct Body;
	struct Sections {	// where the functions and the types start in data_
		uint32_t funcoff, typeoff;
	};
	Sections load_header(const std::vector<uint8_t> &section);
	uint64_t load_type(const Body &b, uint64_t off);
	uint64_t load_type_data(const Body &b, T &t, uint64_t p, uint64_t size,
	    uint32_t small);
	void link_types();
	void load_funcs(const Body &b, const std::vector<Sym> &syms, uint64_t funcoff,
	    uint64_t typeoff);
	std::string str(uint32_t ref) const;
	const T &at(uint32_t id) const;
	std::string spell(uint32_t id, int depth) const;
	int64_t size_at(uint32_t id, int depth) const;
};

} // namespace kinst

#endif
