// SPDX-License-Identifier: BSD-2-Clause
// kinstctl latency FUNC / latency FROM TO: per-thread time between two
// points, measured and bucketed in the kernel (docs/kinstctl.8).
//
// A start probe (FUNC's entry, or FROM) opens an activation in the
// session's per-thread state (kinst_tstate.h) with the clock and the
// values $entry(EXPR) names; an end probe (each of FUNC's return points,
// returns.h, or TO) finds this thread's activation, closes it and
// aggregates the time since the push into a histogram (the count/hist
// table, agg.h), keyed by --by and filtered by --if, evaluated there.
// FUNC's activations are framed by the stack pointer at the entry, which
// is the stack pointer at every return point: a recursive call is an
// activation of its own and each return closes its own.  FROM's are
// unframed: the next FROM of the thread replaces one never closed.
#ifndef KINSTCTL_LATENCY_H
#define KINSTCTL_LATENCY_H

#include <cstdint>
#include <string>
#include <vector>

#include "base/abi.h"
#include "symbols/disasm.h"

namespace kinst {

struct LatencyOptions {
	std::vector<std::string> specs;	// FUNC, or FROM TO
	std::vector<std::string> debug_files;
	std::string by;			// "", comm, pid, stack, or an expression at the end
	std::string if_expr;		// at the end point
	std::string linear;		// MIN,MAX,STEP in ns, or "" (log2)
	std::string btf;
	double duration = 0;
	uint32_t slots = 0;
	uint32_t threads = 0;		// per-thread state slots (0: the default)
	std::string clock = "mono";	// --clock: mono (global) or local (per CPU)
	std::vector<std::string> command;
	bool json = false;
	bool no_color = false;
	bool no_optimize = false;
	std::string folded;		// --folded (AggOptions::folded)
	std::string html;		// --html FILE (AggOptions::html)
	std::string perfetto;		// --perfetto FILE: every sample as a span
	Syntax syntax = Syntax::att;
};

// The start probe's program: the frame (rsp when framed, else 0), each
// saved value's code (compile_expr's without its RET, at most
// KINST_TS_VALS), TS_PUSH of tag; no aggregation (the result is false).
std::vector<struct kinst_pinsn> latency_start_program(bool framed,
    const std::vector<std::vector<struct kinst_pinsn>> &saved, uint64_t tag);

// An end probe's program.  body: agg_program()'s for --by/--if (which may
// read $entry values; empty: count every end).  It closes the thread's
// activation (tag, the frame) after body has read what it needs and
// aggregates the time since its push; cond (a conditional return point's
// ReturnPoint::leaves_if, "" for none): when it is false, the program does
// nothing at all (the call goes on).
std::vector<struct kinst_pinsn> latency_end_program(bool framed, uint64_t tag,
    const std::string &cond, const std::vector<struct kinst_pinsn> &body);

int run_latency(const LatencyOptions &o);

// The one instruction arg names (FROM, TO, trace --latency-from): a usage
// error naming role when it names several or a whole function.
struct Spec;
Spec one_instruction(const std::string &arg, const char *role,
    const std::vector<std::string> &debug_files);

// trace --latency-from: the tag of its activations, and the code that
// pushes the time since this thread's hit there (0 and a NOSTATE capture
// when there was none: a KINST_TSF_SOFT read, which never closes it).
extern const uint64_t latency_from_tag;
std::vector<struct kinst_pinsn> latency_since_code();

} // namespace kinst

#endif
