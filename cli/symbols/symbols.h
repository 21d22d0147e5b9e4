// SPDX-License-Identifier: BSD-2-Clause
// The functions kinstctl knows about, from any source: ELF files given with
// --kernel/--module, the running kernel (kallsyms + the kinst device on
// Linux, the kernel and module files on FreeBSD).  A Module is one kernel
// image or module; a Function is one body of code (aliases at the same
// address are one Function with several names).
#ifndef KINSTCTL_SYMBOLS_H
#define KINSTCTL_SYMBOLS_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kinst {

class ElfImage;

// The running kernel's answer for a symbol name of one loaded file:
// lookup(name, &addr, &size) is false when it has none.
using SymbolLookup = std::function<bool(const std::string &, uint64_t *, uint64_t *)>;

struct Function {
	std::string name;			// canonical name (global first, then shortest)
	std::vector<std::string> aliases;	// other names at the same address
	uint64_t addr = 0;			// ET_REL: section-relative
	uint64_t size = 0;
	std::string section;			// ET_REL: its section, else ""
	bool global = false;
	size_t module = 0;			// index in SymbolTable::modules()
	size_t handle = 0;			// the Module's own reference
};

struct Bytes {
	const uint8_t *data = nullptr;
	size_t size = 0;
};

class Module {
public:
	virtual ~Module() = default;
	const std::string &name() const { return name_; }
	const std::string &path() const { return path_; }
	// Addresses are section-relative (an unlinked ET_REL module file).
	bool relocatable() const { return relocatable_; }
	// AArch64 code (an arm64 kernel's file): list-offsets only, so far.
	bool a64() const { return a64_; }
	const std::vector<Function> &functions() const { return functions_; }
	// Changes when a function's address or size changes after it was
	// read (a live kernel's size, learnt when its bytes are fetched), so
	// that an index over them can tell it is stale.
	uint64_t generation() const { return generation_; }
	// The function's bytes; may fetch them (live).  Throws Error.
	virtual Bytes bytes(const Function &f) = 0;
	// Unlinked module files: the relocations applied to the instruction
	// at [addr, addr+len) of f, "symbol+addend, ..." ("" if none).
	virtual std::string relocation(const Function &, uint64_t, size_t) { return ""; }
	// The running kernel's own verdict on the instruction at offset of f
	// (a KINST_R_* reason, KINST_R_NONE if it would arm it), for the
	// refusals only the kernel knows (ftrace sites, exception fixups,
	// excluded functions, ...); -1 when there is no running kernel to ask.
	// *sessions (when not null): the kinst sessions tracing it now (0
	// when not asked).
	virtual int kernel_verdict(const Function &, uint32_t, uint32_t *sessions = nullptr)
	{
		if (sessions)
			*sessions = 0;
		return -1;
	}

protected:
	std::string name_, path_;
	bool relocatable_ = false;
	bool a64_ = false;
	std::vector<Function> functions_;
	uint64_t generation_ = 0;
	friend class SymbolTable;
};

// A module read from an ELF file (kernel image or .ko).
class ElfModule : public Module {
public:
	// name empty: "kernel" for executables, else .modinfo name or the
	// file's base name without ".ko".
	ElfModule(std::unique_ptr<ElfImage> img, const std::string &name);
	~ElfModule() override;
	Bytes bytes(const Function &f) override;
	std::string relocation(const Function &f, uint64_t addr, size_t len) override;
	const ElfImage &image() const { return *img_; }
	// A loaded module: replace section-relative addresses by live ones,
	// section by section from lookup, the kernel's answers for some names
	// (live_place.h).  If any section holding a function cannot be
	// placed, the whole module stays section-relative.  Returns whether
	// it was relocated.
	bool relocate(const SymbolLookup &lookup);

private:
	std::unique_ptr<ElfImage> img_;
};

// Module name for a file: its base name without directories and ".ko".
std::string module_name_from_path(const std::string &path);

class SymbolTable {
public:
	void add(std::unique_ptr<Module> m);
	const std::vector<std::unique_ptr<Module>> &modules() const { return modules_; }
	Module &module(size_t i) const { return *modules_.at(i); }
	// Modules whose name is name (normalising '-' and '_' as Linux does).
	std::vector<size_t> find_module(const std::string &name) const;
	// Functions (module index, function index) with this name or alias.
	struct Ref { size_t module, index; };
	std::vector<Ref> find(const std::string &name) const;
	// Functions whose name starts with prefix + "." (compiler clones).
	std::vector<Ref> find_clones(const std::string &name) const;
	// Functions containing addr (addr in [start, start+size)), in
	// (module, index) order; in an unlinked module, in any of its
	// sections.  By binary search in each module's (and section's)
	// functions.
	std::vector<Ref> containing(uint64_t addr) const;
	// The same for the target of a direct jump or call in from that has
	// no relocation: in an unlinked module file, where addresses are
	// section-relative, only from's own section of its own module can
	// hold it (another section's or module's function at the same number
	// is not the target); elsewhere containing().
	std::vector<Ref> containing_from(const Function &from, uint64_t addr) const;
	const Function &function(Ref r) const { return modules_.at(r.module)->functions()[r.index]; }
	size_t nfunctions() const;

private:
	std::vector<std::unique_ptr<Module>> modules_;
	// Names to functions, filled on the first find() after modules
	// were added (named_: how many are in it): listing every function
	// of a file never asks, and a large module's map was 0.9 MB of
	// list-offsets' peak (amdgpu.ko, massif).
	mutable std::unordered_map<std::string, std::vector<Ref>> by_name_;
	mutable size_t named_ = 0;
	// Per module, built on first use and again when the module's
	// generation() moves: its functions ordered by (section, address),
	// each with the furthest end of it and those before it in its
	// section, so that a search back from an address stops at the first
	// entry whose reach is at or below it; section k's run is
	// ix[sections[k], sections[k + 1]) (the last entry is ix's size).
	// Not for use from two threads at once (no
	// SymbolTable is: symbols are looked up where records are printed).
	struct Reach { size_t index; uint64_t reach; };
	struct AddrIndex {
		bool built = false;
		uint64_t generation = 0;
		std::vector<Reach> ix;
		std::vector<size_t> sections;
	};
	mutable std::vector<AddrIndex> by_addr_;
	const AddrIndex &addr_index(size_t mi) const;
	// Appends to r the functions of module mi's ix[lo, hi) (one
	// section's run) that contain addr, in no particular order.
	void containing_in(size_t mi, size_t lo, size_t hi, uint64_t addr,
	    std::vector<Ref> &r) const;
};

// Groups raw symbols into Functions: same (section, address) = one Function
// with aliases, returned in (section, address, size) order.  Raw entries:
// name, addr, size, section, global.
struct RawSymbol {
	std::string name;
	uint64_t addr, size;
	std::string section;
	bool global;
	size_t handle;
};
std::vector<Function> group_aliases(std::vector<RawSymbol> raw);

} // namespace kinst

#endif
