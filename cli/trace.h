// SPDX-License-Identifier: BSD-2-Clause
// kinstctl trace: arm probes through /dev/kinst, stream hits, summarize.
#ifndef KINSTCTL_TRACE_H
#define KINSTCTL_TRACE_H

#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "abi.h"
#include "disasm.h"

namespace kinst {

struct TraceOptions {
	std::vector<std::string> specs;
	bool json = false;
	uint64_t count = 0;		// stop after this many hits (0: no limit)
	double duration = 0;		// stop after this many seconds (0: no limit)
	int cpu = -1;			// only hits on this CPU
	long pid = -1;			// only hits in this process
	bool regs_all = false;		// --regs all
	bool stack = false;		// --stack: the kernel stack at each hit
	bool no_optimize = false;	// --no-optimize: int3 probes only
	bool no_color = false;
	bool verbose = false;		// list every refused instruction
	std::string if_expr;		// --if: predicate evaluated in the kernel
	std::vector<std::string> mems;	// --mem EXPR:LEN
	std::vector<std::string> strs;	// --str EXPR[:MAX]
	bool args = false;		// --args: the arguments at the entry
	std::string btf;		// --btf FILE: kernel types (else /sys/kernel/btf)
	Syntax syntax = Syntax::att;
	std::vector<std::string> debug_files;	// --debug-file (source specs)
};

// Returns the exit code.  Throws Error for everything that stops it.
int run_trace(const TraceOptions &o);

// ---- shared with count/hist (cmd_count.cc, agg.cc) ----
struct Spec;

// The help text of --no-optimize (trace, count, hist).
extern const char *const no_optimize_help;
// The arm flag for --no-optimize, if the module knows it (ABI 1.9).
uint32_t noopt_flag(uint32_t abi_version, bool no_optimize);
// Probes of this file, and how many of them are jump-optimized now, in
// all and per function ("module:function", in order of first appearance).
struct JumpCounts {
	uint32_t total = 0, jump = 0;
	std::vector<std::string> names;
	std::map<std::string, std::pair<uint32_t, uint32_t>> per;	// total, jump
};
JumpCounts jump_probes(int fd);
// The summary's lines about them (stderr; one per function when there are
// several), from a module of ABI 1.9 or later.
void print_jump_summary(uint32_t abi_version, bool no_optimize, const JumpCounts &jc);


extern volatile sig_atomic_t g_stop;	// set by SIGINT/SIGTERM
// Catches SIGINT/SIGTERM (sets g_stop, poll() returns EINTR) and ignores
// SIGPIPE while it lives.
class SignalGuard {
public:
	SignalGuard();
	~SignalGuard();
private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

struct ProbeDesc {
	std::string name;	// module:function+0xoff
	std::string insn;	// disassembly
	std::string module, function;
	uint32_t offset = 0;
	uint64_t addr = 0;
};

double now_s();
void copy_name(char *dst, size_t cap, const std::string &s, const char *what);
Spec resolve_address(const Spec &sp);
std::string spec_label(const Spec &sp);
[[noreturn]] void device_failed(const std::string &what, int e);
[[noreturn]] void arm_failed(int fd, const Spec &sp, const struct kinst_arm &a, int e);
std::map<uint32_t, ProbeDesc> list_probes(int fd, Disassembler &dis);
// Puts every spec at its function's entry, where the arguments are still
// in their registers (btf_types.h entry_offset()): a spec without an
// offset moves there; one past it is refused, naming the entry.  what:
// the option that needs it ("--args").
void at_entry(int fd, std::vector<Spec> &specs, const std::string &what);

} // namespace kinst

#endif
