// SPDX-License-Identifier: BSD-2-Clause
// kinstctl count SPEC... / kinstctl hist SPEC... : the command lines; the
// work is in agg.cc.
#include <cmath>
#include <memory>

#include "commands/agg.h"
#include "commands/commands.h"
#include "base/error.h"
#include "device/session.h"
#include "base/spec.h"

namespace kinst {

std::vector<std::string> g_command;

namespace {

void
add_agg_common(CLI::App *sub, AggOptions &o, OutputOptions &out, uint64_t &slots)
{
	sub->add_option("spec", o.specs,
	    "probe specs: FUNC (every instruction), FUNC+OFF, MODULE:FUNC:OFF, 0xADDRESS, "
	    "FILE:LINE, FUNC:LINE, INLINE_FUNC:entry, INLINE_FUNC:return")
	    ->required();
	sub->add_option("--debug-file", o.debug_files,
	    "DWARF file for source specs (its module by file name, else by build-id); repeatable")
	    ->type_name("FILE")->allow_extra_args(false);
	add_output_options(sub, out);
	sub->add_option("--if", o.if_expr,
	    "count only the hits where EXPR is true (the grammar of trace --if)")
	    ->type_name("EXPR");
	sub->add_option("--duration", o.duration, "stop after this many seconds")
	    ->check(CLI::NonNegativeNumber);
	sub->add_option("--btf", o.btf,
	    "kernel types for typed expressions from FILE (BTF, or CTF: raw, or an ELF "
	    "file's .BTF or .SUNW_ctf) instead of the running kernel's")
	    ->type_name("FILE");
	sub->add_option("--slots", slots,
	    "keys per CPU the kernel preallocates (rounded up to a power of two; "
	    "count: 8192, hist: 256; hits of further keys are counted as overflowed); "
	    "count: " + slot_limit_help(KINST_AGG_COUNT, KINST_AGGF_PROBE) + "; hist: " +
	    slot_limit_help(KINST_AGG_LOG2, 0) +
	    "; fewer with --by stack")
	    ->check(CLI::Range(1, KINST_AGG_MAX_SLOTS));
	sub->add_flag("--no-optimize", o.no_optimize, no_optimize_help);
	add_folded_option(sub, o.folded, "each stack's count");
	sub->footer(std::string("After the specs, -- COMMAND [ARGS...] runs COMMAND and stops when it "
	    "exits (its exit status is printed, not returned).\n") + spec_help);
}

void
add_agg(CLI::App &app, Runner &run, bool hist)
{
	auto o = std::make_shared<AggOptions>();
	auto out = std::make_shared<OutputOptions>();
	auto slots = std::make_shared<uint64_t>(0);
	CLI::App *sub = hist ?
	    app.add_subcommand("hist",
		"Histogram of an expression's value at the probes, built in the kernel "
		"(log2 buckets, or --linear), printed when Ctrl-C, --duration or -- COMMAND ends it.") :
	    app.add_subcommand("count",
		"Count hits in the kernel (per probe, or --by a key) without a record per hit; "
		"the table is printed when Ctrl-C, --duration or -- COMMAND ends it.");
	add_agg_common(sub, *o, *out, *slots);
	CLI::Option *lin = nullptr;
	sub->add_option("--by", o->by,
	    "a key per hit: comm, pid, stack (the kernel stack, symbolized one frame per "
	    "line; --slots also sizes the stack table, default 1024 for count), or an "
	    "expression (registers, pid, tid, cpu, *ADDR, argument names and struct "
	    "members as in trace --if ...)")
	    ->type_name("EXPR|comm|pid|stack");
	if (hist) {
		sub->add_option("--value", o->value_expr,
		    "the expression whose values are counted in buckets")
		    ->type_name("EXPR")->required();
		lin = sub->add_option("--linear", o->linear,
		    "linear buckets [MIN, MAX) of STEP, plus one below and one at or above")
		    ->type_name("MIN,MAX,STEP");
		sub->add_option("--html", o->html,
		    "also write a self-contained HTML page of the histograms (an SVG bar chart "
		    "per key, no script) to FILE")
		    ->type_name("FILE");
	} else {
		sub->add_option("--value", o->value_expr,
		    "also sum, min and max of this expression per row")
		    ->type_name("EXPR");
	}
	sub->callback([&run, o, out, slots, hist, lin]() {
		if (lin != nullptr && lin->count() != 0 && o->linear.empty())
			throw CLI::ValidationError("--linear", "expected MIN,MAX,STEP");
		run = [o, out, slots, hist]() {
			if (!std::isfinite(o->duration))
				throw Error(Exit::usage, "--duration must be a finite number");
			o->hist = hist;
			o->json = out->json;
			o->no_color = out->no_color;
			o->syntax = out->syn();
			o->slots = (uint32_t)*slots;
			o->command = g_command;
			return run_agg(*o);
		};
	});
}

} // namespace

void
add_count(CLI::App &app, Runner &run)
{
	add_agg(app, run, false);
}

void
add_hist(CLI::App &app, Runner &run)
{
	add_agg(app, run, true);
}

} // namespace kinst
