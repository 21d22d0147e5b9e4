// SPDX-License-Identifier: BSD-2-Clause
// A 64-bit little-endian x86-64 ELF file read with libelf: executables
// (kernel images), shared objects and relocatable objects (kernel modules).
// Every libelf handle is owned by an RAII wrapper; every table is bounds
// checked, so a corrupt file is an Error(Exit::bad_elf), never a crash.
#ifndef KINSTCTL_ELF_IMAGE_H
#define KINSTCTL_ELF_IMAGE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace kinst {

struct ElfFunction {
	std::string name;
	uint64_t value;		// st_value: section-relative for ET_REL
	uint64_t size;		// st_size
	uint32_t shndx;		// section index
	bool global;		// STB_GLOBAL or STB_WEAK
};

struct ElfSection {
	std::string name;
	uint64_t addr;		// sh_addr (0 in ET_REL)
	uint64_t size;
	uint32_t type;
	uint64_t flags;
	const uint8_t *data;	// nullptr for SHT_NOBITS / unreadable
	size_t data_size;
};

class ElfImage {
public:
	// Reads the whole file.  Throws Error on any problem.
	explicit ElfImage(const std::string &path);
	// Parses an in-memory image (copied); used by the fuzzer and tests.
	ElfImage(const std::string &label, const uint8_t *data, size_t size);
	~ElfImage();
	ElfImage(const ElfImage &) = delete;
	ElfImage &operator=(const ElfImage &) = delete;

	const std::string &path() const { return path_; }
	bool relocatable() const { return relocatable_; }
	uint16_t type() const { return type_; }
	uint16_t machine() const { return machine_; }	// EM_X86_64 or EM_AARCH64
	const std::vector<ElfSection> &sections() const { return sections_; }
	// STT_FUNC symbols with a size, in a section with bytes (SHT_PROGBITS,
	// SHF_EXECINSTR), and fully inside it.  Symbols that fail those checks
	// are counted in skipped().
	const std::vector<ElfFunction> &functions() const { return functions_; }
	size_t skipped() const { return skipped_; }
	// The symbol table defines name (any type or binding) more than once,
	// so looking it up by name may find another definition.  Modules
	// only (ET_REL, ET_DYN): always false in an executable, which is a
	// kernel image, never placed by name.
	bool name_repeated(const std::string &name) const { return repeated_.count(name) != 0; }
	// Linux .modinfo "name=" (empty if none).
	const std::string &modinfo_name() const { return modinfo_name_; }
	// Bytes of a function (valid while this object lives).
	const uint8_t *bytes(const ElfFunction &f) const;
	// Address of a function: for ET_REL the section-relative value.
	uint64_t address(const ElfFunction &f) const;
	// ET_REL: the relocation(s) applied to bytes [off, off+len) of section
	// shndx, as "symbol+addend" ("" if none).  Lets an unlinked module's
	// listing name the target of a call or a RIP-relative operand.
	std::string relocation_at(uint32_t shndx, uint64_t off, size_t len) const;

private:
	void parse();
	// parse()'s steps, in order.
	void check_ident() const;
	void check_shdr_extent() const;
	size_t open_elf(size_t *shstrndx);
	size_t read_sections(size_t nsec, size_t shstrndx);
	void note_modinfo(const ElfSection &s);
	void note_relocations(size_t nsec);
	void read_functions(size_t nsec);
	struct Impl;
	std::string path_;
	std::vector<uint8_t> buf_;	// in-memory images only
	void *map_ = nullptr;		// mmap of a file
	uint8_t *data_ = nullptr;	// the image: map_ or buf_
	size_t size_ = 0;
	std::unique_ptr<Impl> impl_;
	bool relocatable_ = false;
	uint16_t type_ = 0;
	uint16_t machine_ = 0;
	std::vector<ElfSection> sections_;
	std::vector<ElfFunction> functions_;
	size_t skipped_ = 0;
	std::unordered_set<std::string> repeated_;
	std::string modinfo_name_;
	size_t symsec_ = 0;
	// Per target section: its SHT_RELA section; on first use, whether its
	// entries are in r_offset order already (as assemblers write them:
	// then searched in place) or else (r_offset, index) pairs sorted.
	std::vector<uint32_t> rela_for_;
	enum class RelaOrder : uint8_t { unknown, in_place, sorted_copy };
	mutable std::vector<RelaOrder> rela_order_;
	mutable std::vector<std::vector<std::pair<uint64_t, uint32_t>>> rela_sorted_;
	// Per target section: the position the last lookup found (listings
	// ask in address order: the next answer is at or a few past it).
	mutable std::vector<size_t> rela_hint_;
	// Per section of a mapped file: how far from its start its pages have
	// been given back (drop_behind).
	mutable std::vector<uint64_t> dropped_;
	void drop_behind(size_t shndx, uint64_t off) const;
};

} // namespace kinst

#endif
