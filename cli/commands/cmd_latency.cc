// SPDX-License-Identifier: BSD-2-Clause
// kinstctl latency FUNC | FROM TO: the command line; the work is in
// latency.cc.
#include <cmath>
#include <memory>

#include "commands/commands.h"
#include "base/error.h"
#include "commands/latency.h"
#include "device/session.h"

namespace kinst {

void
add_latency(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<LatencyOptions>();
	auto out = std::make_shared<OutputOptions>();
	CLI::App *sub = app.add_subcommand("latency",
	    "Time per thread from FUNC's entry to its return (every return point, tail calls "
	    "included; a recursive call is a sample of its own), or from instruction FROM to "
	    "the thread's next TO; a histogram of nanoseconds built in the kernel, printed "
	    "when Ctrl-C, --duration or -- COMMAND ends it.");
	sub->add_option("spec", o->specs,
	    "FUNC (or MODULE:FUNC), or FROM TO: two specs of one instruction each "
	    "(FUNC+OFF, MODULE:FUNC:OFF, 0xADDRESS, FILE:LINE)")
	    ->required()->expected(1, 2);
	sub->add_option("--debug-file", o->debug_files,
	    "DWARF file for source specs (its module by file name, else by build-id); repeatable")
	    ->type_name("FILE")->allow_extra_args(false);
	add_output_options(sub, *out);
	sub->add_option("--by", o->by,
	    "a histogram per key, evaluated at the end point: comm, pid, stack, or an "
	    "expression ($retval at FUNC's returns, $entry(EXPR) for EXPR's value at the "
	    "start, registers, BTF names as in trace --if)")
	    ->type_name("EXPR|comm|pid|stack");
	sub->add_option("--if", o->if_expr,
	    "time only the calls where EXPR is true at the end point ($retval, $entry(EXPR), ...)")
	    ->type_name("EXPR");
	sub->add_option("--linear", o->linear,
	    "linear buckets [MIN, MAX) of STEP nanoseconds, plus one below and one at or above")
	    ->type_name("MIN,MAX,STEP");
	sub->add_option("--duration", o->duration, "stop after this many seconds")
	    ->check(CLI::NonNegativeNumber);
	sub->add_option("--btf", o->btf,
	    "kernel types for typed expressions from FILE (BTF or CTF) instead of the running kernel's")
	    ->type_name("FILE");
	sub->add_option("--slots", o->slots,
	    "keys per CPU the kernel preallocates (rounded up to a power of two; default 256); " +
	    slot_limit_help(KINST_AGG_LOG2, 0))
	    ->check(CLI::Range(1, KINST_AGG_MAX_SLOTS));
	sub->add_option("--threads", o->threads,
	    "threads the per-thread table holds at once (rounded up to a power of two; "
	    "default 4096)")
	    ->check(CLI::Range(1, KINST_TS_MAX_THREADS));
	sub->add_option("--clock", o->clock,
	    "the clock both ends read: mono (default: the monotonic clock, as bpftrace's "
	    "nsecs) or local (the CPU's scheduler clock, local_clock(), as perf's; cheaper "
	    "where the clocksource is not the TSC, e.g. HPET, but there a duration is only "
	    "right to a tick or two, more where ticks come late: a note says so)")
	    ->check(CLI::IsMember({ "mono", "local" }));
	sub->add_flag("--no-optimize", o->no_optimize, no_optimize_help);
	add_folded_option(sub, o->folded, "each stack's total nanoseconds");
	sub->add_option("--html", o->html,
	    "also write a self-contained HTML page of the histograms (an SVG bar chart "
	    "per key, no script) to FILE")
	    ->type_name("FILE");
	sub->add_option("--perfetto", o->perfetto,
	    "also write every sample to FILE as a span (Trace Event Format, \"ph\":\"X\": "
	    "its thread, start, duration, end point and --by key), for ui.perfetto.dev and "
	    "chrome://tracing")
	    ->type_name("FILE");
	sub->footer(std::string("After the specs, -- COMMAND [ARGS...] runs COMMAND and stops when it "
	    "exits (its exit status is printed, not returned).\n") + spec_help);
	sub->callback([&run, o, out]() {
		run = [o, out]() {
			if (!std::isfinite(o->duration))
				throw Error(Exit::usage, "--duration must be a finite number");
			o->json = out->json;
			o->no_color = out->no_color;
			o->syntax = out->syn();
			o->command = g_command;
			return run_latency(*o);
		};
	});
}

} // namespace kinst
