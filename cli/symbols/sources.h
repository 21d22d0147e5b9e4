// SPDX-License-Identifier: BSD-2-Clause
// Where functions come from: --kernel FILE / --module FILE (offline), or the
// running system (live.h).  Every subcommand takes the same options through
// add_source_options().
#ifndef KINSTCTL_SOURCES_H
#define KINSTCTL_SOURCES_H

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "symbols/symbols.h"

namespace kinst {

struct SourceOptions {
	std::string kernel;
	std::vector<std::string> modules;
	// The command reads AArch64 files (list-offsets, resolve); others
	// refuse them (Exit::unsupported_elf).
	bool arm64 = false;
	bool offline() const { return !kernel.empty() || !modules.empty(); }
};

void add_source_options(CLI::App *app, SourceOptions &o);

// Loads the files named in o, or the live system if none.  Throws Error.
void load_symbols(const SourceOptions &o, SymbolTable &syms);

} // namespace kinst

#endif
