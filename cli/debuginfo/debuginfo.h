// SPDX-License-Identifier: BSD-2-Clause
// Source lines and inline functions from DWARF, with libdw (elfutils).
//
// A DebugInfo serves one SymbolTable.  For each module it finds the debug
// file the way the platform's tools do (--debug-file, the module file's own
// DWARF, /usr/lib/debug/... by path and by build-id, debuginfod through
// libdw when DEBUGINFOD_URLS is set), checks that the file's build-id is
// the image's, and answers in the module's terms (function + offset):
//
//   where(f, off)		file, line and the inline chain of an instruction
//   line starts		FILE:LINE and FUNC:LINE: every instruction where
//				that line starts (in every function and inlined copy)
//   inline instances	INLINE_FUNC:entry/return, list-inlines
//
// A module without debug info is said once on stderr (what was not found,
// where it looked); a debug file whose build-id is not the image's is an
// Error (never wrong lines).
#ifndef KINSTCTL_DEBUGINFO_H
#define KINSTCTL_DEBUGINFO_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "symbols/disasm.h"
#include "symbols/resolver.h"
#include "base/spec.h"
#include "symbols/symbols.h"

struct Dwfl_Module;

namespace kinst {

struct DebugOptions {
	std::vector<std::string> files;		// --debug-file (repeatable)
};
void add_debug_options(CLI::App *app, DebugOptions &o);

struct InlineFrame {
	std::string function;		// the inlined function
	std::string call_file;		// where it was inlined
	unsigned call_line = 0;
};

struct SrcLoc {
	bool known = false;
	std::string file;		// as in the DWARF (comp_dir joined)
	unsigned line = 0;
	std::vector<InlineFrame> inl;	// innermost first
};

struct InlineInstance {
	std::string function;		// the inlined function
	size_t module = 0;
	const Function *caller = nullptr;
	std::vector<std::pair<uint32_t, uint32_t>> ranges;	// [lo, hi) offsets in caller
	uint32_t entry = 0;		// first instruction (lowest address)
	bool has_entry_pc = false;
	uint32_t entry_pc = 0;		// DW_AT_entry_pc, when given
	std::string call_file;
	unsigned call_line = 0;
	std::vector<uint32_t> returns;	// instructions control reaches on leaving it
};

class ModuleDebug;

class DebugInfo {
public:
	DebugInfo(SymbolTable &syms, const DebugOptions &o);
	~DebugInfo();
	DebugInfo(const DebugInfo &) = delete;
	DebugInfo &operator=(const DebugInfo &) = delete;

	// The module's debug data, loaded on first use; nullptr when there
	// is none (said once on stderr).  Throws Error on a mismatched or
	// corrupt debug file.
	ModuleDebug *module(size_t mi);
	// Where the module's debug info came from ("" if none).
	std::string debug_path(size_t mi);

	// The instruction at off of f (known == false without line info).
	SrcLoc where(size_t mi, const Function &f, uint32_t off);

	// Source specs (Spec::is_source()) to function + offset targets
	// (never whole functions).  Throws Error saying what was found
	// instead (nearest lines with code, similar names).
	std::vector<Target> resolve(const Spec &sp, Disassembler &dis);

	// Every inlined instance of name in the module (entry, returns).
	std::vector<InlineInstance> inlines(size_t mi, const std::string &name,
	    Disassembler &dis);

	// libdw's view of f (dwarf_vars.cc): its module and the debug address
	// of f's first byte; false without debug info for f.
	bool dwarf_function(size_t mi, const Function &f, Dwfl_Module **dm, uint64_t *base);

	// The modules a source spec is looked up in (its MODULE:, else every
	// offline file, else the running kernel and --debug-file modules).
	std::vector<size_t> spec_modules(const Spec &sp);

private:
	// resolve()'s kinds: FUNC:return out of line (false: not out of line),
	// inline entries and returns, FUNC:LINE, FILE:LINE.
	bool resolve_returns(const Spec &sp, Disassembler &dis, std::vector<Target> &out);
	void resolve_inline(const Spec &sp, const std::vector<size_t> &mods, Disassembler &dis,
	    std::vector<Target> &out);
	void resolve_func_line(const Spec &sp, Disassembler &dis, std::vector<Target> &out);
	void resolve_file_line(const Spec &sp, const std::vector<size_t> &mods, Disassembler &dis,
	    std::vector<Target> &out);
	SymbolTable &syms_;
	DebugOptions opts_;
	std::map<size_t, std::unique_ptr<ModuleDebug>> mods_;
	std::map<size_t, bool> tried_;
	std::vector<bool> file_used_;
};

// Spec resolution for every subcommand: an ordinary spec gives its one
// target (resolve_target); a source spec its list (DebugInfo::resolve).
std::vector<Target> resolve_targets(const Spec &sp, SymbolTable &syms, DebugInfo &dbg,
    Disassembler &dis);

// trace/count/hist arm by name: a source spec becomes MODULE:FUNC+OFFSET
// specs, resolved on the running kernel's symbols.
std::vector<Spec> expand_source_spec(const Spec &sp, const DebugOptions &o);

// list-offsets --source: the lines printed before an instruction (text) or
// the fields added to its JSON object.
class SourceAnnotator {
public:
	SourceAnnotator(DebugInfo &d, const std::string &source_dir)
	    : dbg_(d), dir_(source_dir) {}
	void start_function() { have_prev_ = false; }
	// Text: "FILE:LINE  source" when the line changes, "inlined from
	// F() at FILE:LINE" when the inline chain changes.
	void text_lines(size_t mi, const Function &f, const Insn &in, std::vector<std::string> &out);
	// JSON: ,"file":...,"line":N,"inline":[...] before the closing brace.
	void json_fields(size_t mi, const Function &f, const Insn &in, std::string &obj);
	// The text of a source line ("" when the file cannot be read).
	std::string source_line(const std::string &file, unsigned line);

private:
	DebugInfo &dbg_;
	std::string dir_;
	bool have_prev_ = false;
	SrcLoc prev_;
	std::map<std::string, std::vector<std::string>> cache_;
};

// FILE names a DWARF file name: equal, or its trailing path components.
bool source_file_matches(const std::string &dwarf_name, const std::string &file);

} // namespace kinst

#endif
