// SPDX-License-Identifier: BSD-2-Clause
// kinstctl trace: arm probes through /dev/kinst (session.h), stream hits,
// summarize.
#ifndef KINSTCTL_TRACE_H
#define KINSTCTL_TRACE_H

#include <cstdint>
#include <string>
#include <vector>

#include "symbols/disasm.h"

namespace kinst {

struct TraceOptions {
	std::vector<std::string> specs;
	bool json = false;
	uint64_t count = 0;		// stop after this many hits (0: no limit)
	double duration = 0;		// stop after this many seconds (0: no limit)
	int cpu = -1;			// only hits on this CPU
	long pid = -1;			// only hits in this process
	bool regs_all = false;		// --regs all
	std::vector<int> regs_list;	// --regs LIST: only these (base/text.h)
	bool stack = false;		// --stack: the kernel stack at each hit
	bool no_optimize = false;	// --no-optimize: int3 probes only
	bool no_color = false;
	bool verbose = false;		// list every refused instruction
	std::string if_expr;		// --if: predicate evaluated in the kernel
	std::vector<std::string> mems;	// --mem EXPR:LEN
	std::vector<std::string> strs;	// --str EXPR[:MAX]
	bool args = false;		// --args: the arguments at the entry
	std::vector<std::string> var_names;	// --var NAME (DWARF)
	bool vars = false;		// --vars: every variable in scope
	std::string btf;		// --btf FILE: kernel types (else /sys/kernel/btf)
	Syntax syntax = Syntax::att;
	std::vector<std::string> debug_files;	// --debug-file (source specs)
	std::string latency_from;	// --latency-from SPEC: time since its hit
	std::string output;		// --output FILE: a capture (capture.h)
	std::string perfetto;		// --perfetto FILE: Trace Event Format (perfetto.h)
	uint64_t buffer_size = 0;	// --buffer-size: ring bytes per CPU (0: default)
	uint64_t backlog = (uint64_t)256 << 20;	// --backlog: bytes read, not yet printed
};

// Returns the exit code.  Throws Error for everything that stops it.
int run_trace(const TraceOptions &o);

} // namespace kinst

#endif
