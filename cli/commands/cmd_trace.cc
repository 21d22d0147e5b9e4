// SPDX-License-Identifier: BSD-2-Clause
// kinstctl trace SPEC... : the command line; the work is in trace.cc.
#include <cmath>
#include <memory>

#include "commands/commands.h"
#include "base/error.h"
#include "base/spec.h"
#include "commands/trace.h"

namespace kinst {

// What each hit records besides the registers: --if, the captures, the
// arguments and variables, the types, the stack, --latency-from.
static void
add_trace_record_options(CLI::App *sub, TraceOptions &o)
{
	sub->add_option("--if", o.if_expr,
	    "record only the hits where EXPR is true, decided in the kernel before any "
	    "record is built: registers (rdi, rsi, ...), pid, tid, cpu, comm == \"NAME\", "
	    "numbers, *ADDR and *(u8|u16|u32|u64)ADDR reads, ! ~ - * + << >> & ^ | "
	    "== != < <= > >= && || (unsigned, C precedence); with kernel types (BTF): "
	    "argument names at a function's entry (fd or args.fd), casts and members "
	    "((struct file *)rdi)->f_pos, args.file->f_inode->i_ino, a[i] (signed types "
	    "compare signed)")
	    ->type_name("EXPR");
	sub->add_option("--mem", o.mems,
	    "capture LEN (1-512) bytes at the address EXPR (the --if grammar) with each "
	    "recorded hit, shown as a hex dump (\"mem\" in JSON); a lower-half address "
	    "reads the current process's memory, never paging it in; a read or an address "
	    "that faults is reported as such; repeatable")
	    ->type_name("EXPR:LEN")->allow_extra_args(false);
	sub->add_option("--str", o.strs,
	    "capture the NUL-terminated string at the address EXPR, at most MAX (1-256, "
	    "default 256) bytes, shown quoted with C escapes (\"str\" in JSON); repeatable; "
	    "8 captures and 2048 bytes in all")
	    ->type_name("EXPR[:MAX]")->allow_extra_args(false);
	sub->add_flag("--args", o.args,
	    "print the function's arguments by name and type (from BTF) at each hit, "
	    "e.g. ksys_read(fd=3, buf=0x7ffd..., count=7) (\"args\" in JSON); the probe "
	    "goes to the function's entry (FUNC alone means its entry, not every instruction; "
	    "an offset past the entry is refused)");
	sub->add_option("--var", o.var_names,
	    "print the C variable NAME at each hit, from DWARF: wherever it lives at that "
	    "instruction (a register, the stack through the CFA, pieces, a computed value), "
	    "printed as its type says (\"vars\" in JSON); repeatable; see list-vars")
	    ->type_name("NAME")->allow_extra_args(false);
	sub->add_flag("--vars", o.vars,
	    "print every C variable and parameter in scope at each hit (DWARF); those not "
	    "readable there print as <reason> (null in JSON)");
	sub->add_option("--btf", o.btf,
	    "kernel types from FILE (BTF, or CTF: raw, or an ELF file's .BTF or "
	    ".SUNW_ctf) instead of the running kernel's (Linux: /sys/kernel/btf/vmlinux "
	    "and /sys/kernel/btf/MODULE; FreeBSD: the kernel's or module's file)")
	    ->type_name("FILE");
	sub->add_flag("--stack", o.stack,
	    "record the kernel call stack at each hit (up to 64 frames; one per line, or \"stack\" in JSON)");
	sub->add_option("--latency-from", o.latency_from,
	    "add to each hit the time since this thread's last hit at SPEC (one instruction; "
	    "a hidden probe there), or nothing when it has none (JSON since_ns)")
	    ->type_name("SPEC");
}

void
add_trace(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<TraceOptions>();
	auto out = std::make_shared<OutputOptions>();
	auto regs = std::make_shared<std::string>("compact");
	auto count = std::make_shared<std::string>("0");
	CLI::App *sub = app.add_subcommand("trace",
	    "Arm probes through /dev/kinst and print every hit (registers, cpu, pid/tid/comm) "
	    "until Ctrl-C, -n or --duration; a summary goes to stderr.");
	sub->add_option("spec", o->specs,
	    "probe specs: FUNC (every instruction), FUNC+OFF, MODULE:FUNC:OFF, 0xADDRESS, "
	    "FILE:LINE, FUNC:LINE, INLINE_FUNC:entry, INLINE_FUNC:return")
	    ->required();
	sub->add_option("--debug-file", o->debug_files,
	    "DWARF file for source specs (its module by file name, else by build-id); repeatable")
	    ->type_name("FILE")->allow_extra_args(false);
	add_output_options(sub, *out);
	// Parsed here, not by CLI11, which takes "-1" for 2^64 - 1 and an
	// overflowing number silently.
	sub->add_option("-n,--count", *count, "stop after this many hits (0: no limit)")
	    ->check(CLI::Validator([](std::string &s) {
		    uint64_t v;
		    return parse_number(s, UINT64_MAX, &v) ? std::string() :
			"not a hit count (0 to 18446744073709551615): " + s;
	    }, "COUNT", "count"));
	sub->add_option("--output", o->output,
	    "write the records to FILE as the module delivered them (a capture: no "
	    "formatting while tracing), for kinstctl print FILE [--json] later")
	    ->type_name("FILE");
	sub->add_option("--perfetto", o->perfetto,
	    "write the hits to FILE as Chrome's Trace Event Format JSON, which "
	    "ui.perfetto.dev and chrome://tracing open: one instant event per hit on its "
	    "thread's track (probe, CPU, registers as args), processes and threads named "
	    "by comm, timestamps in microseconds of the monotonic clock; nothing is printed")
	    ->type_name("FILE");
	auto bufsz = std::make_shared<std::string>();
	auto backlog = std::make_shared<std::string>();
	sub->add_option("--buffer-size", *bufsz,
	    "the kernel's ring per CPU for this trace: a power of two from 4K to 64M "
	    "(default: 32M shared by the CPUs, at most 8M each, at least the module's ring_size)")
	    ->type_name("SIZE");
	sub->add_option("--backlog", *backlog,
	    "records read from the kernel but not yet printed, at most SIZE bytes "
	    "(default 256M): a burst waits here instead of being dropped")
	    ->type_name("SIZE");
	sub->add_option("--duration", o->duration, "stop after this many seconds")
	    ->check(CLI::NonNegativeNumber);
	sub->add_option("--cpu", o->cpu, "only print hits on this CPU")
	    ->check(CLI::NonNegativeNumber);
	sub->add_option("--pid", o->pid, "only print hits in this process")
	    ->check(CLI::NonNegativeNumber);
	add_regs_option(sub, *regs, "compact");
	add_trace_record_options(sub, *o);
	sub->add_flag("--no-optimize", o->no_optimize, no_optimize_help);
	sub->add_flag("-v,--verbose", o->verbose, "more detail on stderr");
	sub->footer(spec_help);
	sub->callback([&run, o, out, regs, count, bufsz, backlog]() {
		run = [o, out, regs, count, bufsz, backlog]() {
			if (!bufsz->empty())
				o->buffer_size = parse_size(*bufsz, "trace: --buffer-size");
			if (!backlog->empty()) {
				o->backlog = parse_size(*backlog, "trace: --backlog");
				if (o->backlog < (1u << 20))
					throw Error(Exit::usage, "trace: --backlog " + *backlog +
					    ": at least 1M");
			}
			if (!parse_number(*count, UINT64_MAX, &o->count))
				throw Error(Exit::usage, "trace: -n " + *count + ": not a hit count");
			if (!std::isfinite(o->duration))
				throw Error(Exit::usage, "trace: --duration must be a finite number");
			o->json = out->json;
			o->no_color = out->no_color;
			o->syntax = out->syn();
			regs_view(*regs, &o->regs_all, &o->regs_list);
			return run_trace(*o);
		};
	});
}

} // namespace kinst
