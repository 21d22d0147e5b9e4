// SPDX-License-Identifier: BSD-2-Clause
#include "commands/commands.h"

#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"

namespace kinst {

const char *const spec_help =
    "Probe specs:\n"
    "  FUNC                 every instruction of FUNC\n"
    "  FUNC+OFFSET          the instruction at OFFSET (decimal or 0x-hex) bytes into FUNC\n"
    "  MODULE:FUNC          FUNC in MODULE (\"kernel\" is the kernel itself)\n"
    "  MODULE:FUNC:OFFSET   kinst style, e.g. kernel:vm_fault:28\n"
    "  0xADDRESS            the instruction at ADDRESS (inside a known function)\n"
    "  [MODULE:]FILE:LINE   every instruction where LINE of FILE starts (DWARF; FILE\n"
    "                       may be trailing path components: read_write.c:470)\n"
    "  FUNC:LINE            the same, inside FUNC only\n"
    "  [MODULE:]FUNC:entry  the first instruction of each inlined copy of FUNC\n"
    "  [MODULE:]FUNC:return each instruction control reaches leaving a copy\n"
    "Offsets must be instruction boundaries; ambiguous names (static duplicates)\n"
    "are listed with their addresses: pick one with MODULE: or 0xADDRESS.";

void
add_folded_option(CLI::App *app, std::string &folded, const std::string &weight)
{
	// A flag, so that the spec after it is never taken for its value:
	// --folded alone is "true" (check_folded() reads it as offsets).
	app->add_flag("--folded", folded,
	    "with --by stack: folded stacks (FlameGraph's collapsed format, for flamegraph.pl, "
	    "speedscope, inferno): one line per stack, frames root first joined by ';' "
	    "(function+0xoff, or bare names with --folded=functions), a space and " + weight)
	    ->option_text("[=functions]");
}

const char *const no_optimize_help =
    "every hit traps (int3).  Without it the module replaces, in the background, "
    "the int3 of each probe whose instruction window qualifies (kinstctl "
    "list-offsets says which) with a jump to a detour: no trap per hit, the same "
    "record; the summary says how many were";

void
add_regs_option(CLI::App *app, std::string &regs, const std::string &dflt)
{
	app->add_option("--regs", regs, std::string("registers per hit: compact (one line: ") +
	    reg_name(regfile.pc) + ", " + reg_name(regfile.sp) + " and the argument and return "
	    "registers), all (every one, on a second line), or a comma-separated LIST of "
	    "names (" + (regfile.a64 ? "x0,x1,pc" : "rdi,rsi,rip") + ": only those, in that "
	    "order; JSON too) (default: " + dflt + ")")
	    ->check(CLI::Validator([](std::string &s) {
		    if (s == "compact" || s == "all")
			    return std::string();
		    try {
			    (void)parse_reg_list(s, "--regs");
		    } catch (const Error &e) {
			    return std::string(e.what());
		    }
		    return std::string();
	    }, "compact|all|LIST", "registers"));
}

void
regs_view(const std::string &regs, bool *all, std::vector<int> *list)
{
	*all = regs == "all";
	list->clear();
	if (!regs.empty() && regs != "all" && regs != "compact")
		*list = parse_reg_list(regs, "--regs");
}

void
add_output_options(CLI::App *app, OutputOptions &o)
{
	app->add_flag("--json", o.json, "One JSON object per line (schema: docs/json.md)");
	app->add_option("--syntax", o.syntax, "Disassembly syntax")
	    ->check(CLI::IsMember({"att", "intel"}))
	    ->capture_default_str();
	app->add_flag("--no-color", o.no_color,
	    "No colour (colour is only used on a terminal, and never if NO_COLOR is set)");
}

} // namespace kinst
