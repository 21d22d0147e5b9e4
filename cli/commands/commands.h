// SPDX-License-Identifier: BSD-2-Clause
// Subcommands.  Each one lives in its own cmd_<name>.cc and is registered
// by an add_<name>() that adds a CLI11 subcommand and, when that subcommand
// is chosen, sets `run` to the code that does the work (called by main()
// after parsing, inside its one try/catch).  `trace` slots in the same way.
#ifndef KINSTCTL_COMMANDS_H
#define KINSTCTL_COMMANDS_H

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "symbols/disasm.h"
#include "base/output.h"

namespace kinst {

using Runner = std::function<int()>;

// --json, --syntax, --no-color: shared by every subcommand that prints
// instructions.
struct OutputOptions {
	bool json = false;
	std::string syntax = "att";
	bool no_color = false;
	Syntax syn() const { return syntax == "intel" ? Syntax::intel : Syntax::att; }
};
void add_output_options(CLI::App *app, OutputOptions &o);

// The spec grammar, for --help footers and error hints.
extern const char *const spec_help;
// The help text of --no-optimize (trace, count, hist).
extern const char *const no_optimize_help;
// --folded[=functions] (count, hist, latency with --by stack) into folded;
// weight: what each line's number is.
void add_folded_option(CLI::App *app, std::string &folded, const std::string &weight);

// --regs compact|all|LIST (trace, print) into regs; dflt: what no --regs means.
void add_regs_option(CLI::App *app, std::string &regs, const std::string &dflt);
// regs (checked by add_regs_option's validator) as HitFormat's regs_all
// and regs_list.
void regs_view(const std::string &regs, bool *all, std::vector<int> *list);

void add_list_offsets(CLI::App &app, Runner &run);
void add_list_inlines(CLI::App &app, Runner &run);
void add_list_vars(CLI::App &app, Runner &run);
void add_resolve(CLI::App &app, Runner &run);
void add_trace(CLI::App &app, Runner &run);
void add_count(CLI::App &app, Runner &run);
void add_hist(CLI::App &app, Runner &run);
void add_cover(CLI::App &app, Runner &run);
void add_latency(CLI::App &app, Runner &run);
void add_print(CLI::App &app, Runner &run);

// count/hist/cover: what follows "--" on the command line (cmd_count.cc).
extern std::vector<std::string> g_command;

} // namespace kinst

#endif
