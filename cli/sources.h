// SPDX-License-Identifier: BSD-2-Clause
// Where functions come from: --kernel FILE / --module FILE (offline), or the
// running system (live_linux.cc, live_freebsd.cc).  Every subcommand takes
// the same options through add_source_options().
#ifndef KINSTCTL_SOURCES_H
#define KINSTCTL_SOURCES_H

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "symbols.h"

namespace kinst {

struct SourceOptions {
	std::string kernel;
	std::vector<std::string> modules;
	bool offline() const { return !kernel.empty() || !modules.empty(); }
};

void add_source_options(CLI::App *app, SourceOptions &o);

// Loads the files named in o, or the live system if none.  Throws Error.
void load_symbols(const SourceOptions &o, SymbolTable &syms);

// The running system (implemented per OS in live_*.cc).
void load_live_symbols(SymbolTable &syms);
// An address spec (0x...) as the function that contains it in the running
// kernel, at its offset.  Throws Error(Exit::unknown_function) when none does.
struct Spec;
Spec resolve_address(const Spec &sp);

#ifdef __FreeBSD__
// The file whose .SUNW_ctf holds the types of module ("" or "kernel": the
// kernel, kern.bootfile) in the running system.  Throws Error(Exit::live).
std::string live_types_file(const std::string &module);
#endif

} // namespace kinst

#endif
