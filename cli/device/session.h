// SPDX-License-Identifier: BSD-2-Clause
// One open /dev/kinst: the only place kinstctl speaks the device protocol
// (kinst_abi.h, kinst(4)).  A Session negotiates the version, names what
// the loaded module can do (Feature), arms and explains refusals, loads
// programs, sets up and reads aggregations, lists probes, streams hit
// records and reads the counters of the summary.  trace, count/hist and
// cover (trace.cc, agg.cc, cmd_cover.cc) are drivers over it; the live
// symbol source (live_linux.cc) reads function text and verdicts through it.
// Closing it (the destructor) disarms every probe it armed.
#ifndef KINSTCTL_SESSION_H
#define KINSTCTL_SESSION_H

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/branch.h"

#include "base/abi.h"
#include "symbols/disasm.h"

namespace kinst {

struct HitRecord;
struct Spec;

// What a module can do, by the ABI minor version that brought it
// (kinst_abi.h's version comment).
enum class Feature {
	filter,		// 1.1 KINST_IOC_FILTER
	arm_check,	// 1.2 KINST_ARM_CHECK
	stack,		// 1.4 KINST_ARM_STACK
	prog,		// 1.5 probe programs
	agg,		// 1.6 aggregation
	mem_capture,	// 1.7 memory and string captures
	agg_stack,	// 1.8 KINST_AGGF_STACK
	noopt,		// 1.9 jump-optimized probes, KINST_ARM_NOOPT
	thread_state,	// 1.10 per-thread state (KINST_IOC_TS_*), value captures
	ring_size,	// 1.11 KINST_IOC_RING
	mmap,		// 1.12 mapped rings, KINST_IOC_WAKE
	sharing,	// 1.13 probes shared by sessions (KINST_PI_SESSIONS)
	agg_record,	// 1.14 KINST_AGGF_RECORD, KINST_SEC_AGG
	ts_clock,	// 1.15 KINST_TS_LOCAL_CLOCK
};
// The minor version that brought f.
unsigned feature_minor(Feature f);
// Whether a module of version abi_version (major << 16 | minor) has f.
bool abi_has(uint32_t abi_version, Feature f);
// "WHAT: the loaded kinst module (ABI 1.N) cannot DO; load one of ABI 1.M
// or later": the message of a missing feature.
std::string feature_missing(uint32_t abi_version, Feature f, const std::string &what);

// A device call failed with errno e (ENODEV: the module is being unloaded).
[[noreturn]] void device_failed(const std::string &what, int e);

extern volatile sig_atomic_t g_stop;	// set by SIGINT/SIGTERM

// kinstctl owns SIGINT and SIGTERM from main's first instruction
// (own_signals), whatever it inherited: a shell starts a script's
// background job with SIGINT ignored, and a SIGINT sent while such a run
// was still planning used to be lost, the run then arming and tracing
// until killed.  Unless STOPS_CLEANLY (the subcommand arms probes: main
// knows before it calls this, so no signal meets the handler before the
// choice), either signal ends the process as its default action would;
// with it, they set g_stop, and the command stops: before arming
// (stop_before_arming), while arming, or while tracing.
void own_signals(bool stops_cleanly);
// After planning, before the first probe: when a stop was asked, says so
// and ends the run with exit status 0 (nothing was armed).
void stop_before_arming(const char *cmd);

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

// A probe of the session (KINST_IOC_LIST), named for the user.
struct ProbeDesc {
	std::string name;	// module:function+0xoff
	std::string insn;	// disassembly
	// A direct call or jump out of the function: shown after insn in text
	// (branch.annotation()), a "target" member in JSON.
	BranchTarget branch;
	std::string module, function;
	uint32_t offset = 0;
	uint64_t addr = 0;
};

// The probes of the session, and how many of them are jump-optimized now,
// in all and per function ("module:function", in order of first appearance).
struct JumpCounts {
	uint32_t total = 0, jump = 0;
	// Probes whose instruction another session traced too while they
	// were armed (ABI 1.13), and the most sessions on one instruction.
	uint32_t shared = 0, max_sessions = 0;
	std::vector<std::string> names;
	std::map<std::string, std::pair<uint32_t, uint32_t>> per;	// total, jump
};

// One arm request's answer.
struct Armed {
	uint32_t narmed = 0, nrefused = 0;
};
// All of arm_specs()'s.
struct ArmTotals {
	uint64_t armed = 0;
	bool whole = false;	// a spec armed a whole function
};

// What a record stream hands on: hit() gets every hit record and returns
// false to end the stream (the --count limit); batch() follows every read.
struct RecordSink {
	std::function<bool(const HitRecord &)> hit;
	// If set, gets every hit record's bytes instead of hit() (unparsed:
	// trace --output), and returns false to end the stream.
	std::function<bool(const uint8_t *, size_t)> raw;
	std::function<void()> batch;
	// If set, asked between reads (at least every 100 ms): true ends the
	// stream as a signal does (what was read and not handed on is left
	// for drain()).
	std::function<bool()> stop;
};

class Session {
public:
	static constexpr const char *path = "/dev/kinst";
	// Opens the device and checks the ABI version; throws Error(Exit::live)
	// saying what to do (load the module, run as root) for `purpose`.
	static Session open(const std::string &purpose);
	Session(Session &&o) noexcept;
	Session &operator=(Session &&) = delete;
	Session(const Session &) = delete;
	~Session();

	uint32_t abi_version() const { return abi_; }
	bool has(Feature f) const { return abi_has(abi_, f); }
	// Throws Error(Exit::live, feature_missing(...)) unless the module has f.
	void require(Feature f, const std::string &what) const;

	// --no-optimize: every later arm asks for int3 probes (a module before
	// 1.9 never optimizes, and refuses the flag: not asked then).
	void no_optimize(bool on) { no_optimize_ = on; }

	// KINST_IOC_FILTER: hits of pid (-1: any) on cpu (-1: any), never this
	// process's.  A module before FILTER (1.0) records everything anyway.
	// An unknown --cpu is a usage error of cmd.
	void filter(const std::string &cmd, int32_t pid, int cpu);

	// KINST_IOC_TEXT: the original bytes of module:function into buf (its
	// size the capacity).  False, errno set, when the module cannot say.
	// *size: the function's whole size (more than buf's when it is short).
	bool text(const std::string &module, const std::string &function,
	    std::vector<uint8_t> &buf, uint64_t *addr, uint32_t *size);
	// KINST_ARM_CHECK: the module's refuse reason for the instruction
	// (KINST_R_NONE: it would arm it), nothing armed; -1 when not answered.
	int check(const std::string &module, const std::string &function, uint32_t offset,
	    uint32_t *sessions = nullptr);
	// Puts every spec at its function's entry, where the arguments are still
	// in their registers (btf_types.h entry_offset()): a spec without an
	// offset moves there; one past it is refused, naming the entry.  what:
	// the option that needs it ("--args").
	void at_entry(std::vector<Spec> &specs, const std::string &what);

	// KINST_IOC_ARM of sp (every instruction of its function, KINST_ARM_ALL,
	// when it has no offset) with flags and the program prog (0: none).  A
	// refusal throws, as precisely as can be said (arm_failed()).  The
	// second form arms module:function as resolved for sp (cover).
	Armed arm(const Spec &sp, uint32_t flags, uint32_t prog);
	Armed arm(const Spec &sp, const std::string &module, const std::string &function,
	    uint32_t flags, uint32_t prog);
	// Every spec, saying for a whole function how many of its instructions
	// were armed and refused.  stop_on_signal: a stop requested while
	// arming arms nothing more.
	ArmTotals arm_specs(const std::vector<Spec> &specs, uint32_t flags, uint32_t prog,
	    bool stop_on_signal);
	// KINST_IOC_DISARM of every probe: no new hits.
	void disarm_all();

	// KINST_IOC_PROG_LOAD: the program's id; a refusal names the verifier's
	// reason, and an instruction newer than the module the feature it
	// needs (before asking).  what: the options it was compiled from.
	uint32_t load_prog(const std::vector<struct kinst_pinsn> &code, const std::string &what);
	// KINST_IOC_PROG_STATS: the per-CPU counters of the session's programs.
	std::vector<struct kinst_prog_cpu_stats> prog_stats();

	// KINST_IOC_AGG_SETUP: su in, its entry_size and nbuckets out; tables
	// too large for the module are a usage error (--slots).
	void agg_setup(struct kinst_agg_setup &su);
	// KINST_IOC_TS_SETUP (per-thread state, ABI 1.10): the session's table
	// of nthreads threads, its flags (KINST_TS_LOCAL_CLOCK: ABI 1.15); a
	// module without it is an error naming why (Feature::thread_state,
	// Feature::ts_clock).  Once a session: a second call takes the table
	// as it is, and one that asks for flags must ask for the same.
	// Returns the flags in force (the module's answer).
	uint32_t ts_setup(uint32_t nthreads, const std::string &why, uint32_t flags = 0);
	// KINST_IOC_RING, before the first probe is armed: the rings' size,
	// bytes per CPU.  bytes 0: kinstctl's default (default_ring_size());
	// a module without the command keeps its own (an error if bytes was
	// given).  Returns the size in effect; ncpus: the rings per file.
	uint32_t ring_size(uint64_t bytes, const std::string &what, uint32_t *ncpus = nullptr);
	// KINST_IOC_TS_STATS: the table's counters (nslots 0: none).
	struct kinst_ts_stats ts_stats();
	// KINST_IOC_AGG_READ / KINST_IOC_AGG_STACKS of one CPU into buf (cap
	// entries): the count the module returns.
	uint32_t agg_read(uint32_t cpu, void *buf, uint32_t cap);
	uint32_t agg_stacks(uint32_t cpu, struct kinst_agg_stack *buf, uint32_t cap);
	// KINST_IOC_AGG_STATS and KINST_IOC_STATS: one element per CPU.
	std::vector<struct kinst_agg_cpu_stats> agg_stats();
	std::vector<struct kinst_cpu_stats> stats();

	// KINST_IOC_LIST: every probe, by id, its instruction disassembled.
	std::map<uint32_t, ProbeDesc> probes(Disassembler &dis);
	JumpCounts jump_probes();
	// The summary's lines about them (stderr; one per function when there
	// are several), from a module that optimizes (1.9).
	void print_jump_summary(const JumpCounts &jc) const;

	// Polls and reads hit records into sink until it ends them, a signal
	// (g_stop) or duration seconds (0: no limit).  True when sink ended it.
	// A reader thread moves the records from the device into a backlog
	// of at most backlog() bytes; sink runs in the calling thread.
	// The reader maps the rings (ABI 1.12) unless KINSTCTL_NO_MMAP is set
	// or the mapping fails; read(2) otherwise.
	bool stream(double duration, const RecordSink &sink);
	// Maps the rings now, as stream() would (once; true when mapped): a
	// command calls it before it says it is tracing, so that a workload
	// started on that word finds the rings mapped.
	bool map_rings();
	// How stream() read: "mmap" or "read" (after stream()).
	const char *read_path() const { return maps_.empty() ? "read" : "mmap"; }
	void set_backlog(size_t bytes) { backlog_ = bytes; }
	size_t backlog() const { return backlog_; }
	// After stream(): the backlog's peak, and whether it was ever full.
	size_t backlog_peak() const { return backlog_peak_; }
	bool backlog_was_full() const { return backlog_full_; }
	// After disarm_all(): what the module had already delivered, until sink
	// ends it.  True when sink ended it.
	bool drain(const RecordSink &sink);
	// KINST_IOC_LIST: every probe of this file, with its hits.
	std::vector<struct kinst_probe_info> probe_infos();

private:
	Session(int fd, uint32_t abi) : fd_(fd), abi_(abi) {}
	[[noreturn]] void arm_failed(const Spec &sp, const struct kinst_arm &a, int e);
	std::vector<uint8_t> live_text(const Spec &sp);
	bool consume(const uint8_t *buf, size_t n, const RecordSink &sink);
	void reader(void *backlog, double duration);
	// The rings as this process maps them (map_rings()), one per CPU.
	struct MappedRing {
		struct kinst_ring_ctl *ctl;
		const uint8_t *data;
		uint32_t size;
	};
	void unmap_rings();
	size_t take_mapped(uint8_t *buf, size_t cap);
	std::vector<MappedRing> maps_;
	bool maps_tried_ = false;
	size_t backlog_ = (size_t)256 << 20;
	std::deque<std::vector<uint8_t>> pending_;	// stream()'s, for drain()
	size_t backlog_peak_ = 0;
	bool backlog_full_ = false;
	uint32_t agg_table(unsigned long cmd, uint32_t cpu, void *buf, uint32_t cap,
	    const char *what);

	int fd_;
	uint32_t abi_;
	bool no_optimize_ = false;
	std::optional<uint32_t> ts_flags_;	// ts_setup()'s, once it succeeded
};

// The largest --slots an aggregation set up as su (kind, flags, stacks
// following the slots as count --by stack's do) may have on ncpus CPUs
// within the module's KINST_AGG_MAX_BYTES (0: not even one); *slot_bytes:
// the kernel memory one slot costs there (both tables, every CPU).
uint32_t agg_slot_limit(struct kinst_agg_setup su, uint32_t ncpus, uint64_t *slot_bytes);
// The CPU ids this machine may have (the module's rings and tables are
// per possible CPU): /sys/devices/system/cpu/possible, else online ones.
uint32_t possible_cpus();
// --help's words on --slots' maximum on this machine for an aggregation
// of this kind (KINST_AGG_*) and flags.
std::string slot_limit_help(uint32_t kind, uint32_t flags);

// The records of a chunk read from the device (several CPUs' rings, one
// after another) put in time order, stably; a malformed chunk is left.
void order_by_time(uint8_t *buf, size_t n);

// The hits, in a probe list (Session::probe_infos()), of the probes at
// these (function, offset) places, or at these specs' instructions: the
// hidden probes' hits that summaries tell apart.
uint64_t hits_at(const std::vector<struct kinst_probe_info> &probes,
    const std::vector<std::pair<std::string, uint32_t>> &places);
uint64_t hits_at(const std::vector<struct kinst_probe_info> &probes,
    const std::vector<Spec> &specs);

// What count/hist/cover aggregate over: the command after -- (a child
// traced like any process), or --duration seconds, or until Ctrl-C.
class Workload {
public:
	Workload(const std::vector<std::string> &command, double duration)
	    : command_(command), duration_(duration) {}
	// Runs the command, if there is one.
	void start();
	// Until Ctrl-C (g_stop), the duration, or the command's exit (reported).
	void wait();
	// The same without waiting: whether the run is over now (the command
	// exited, reaped and reported, or the duration is up; once over, it
	// stays so).  Not g_stop.
	bool done();
	// After disarming: an interrupted run does not leave the command behind
	// (it got the same signal from the terminal, or none at all).
	void finish();
	// The command was started and has not been reaped: finish() would
	// signal it.  After wait() has reaped it, never (its pid may be reused).
	bool running() const { return child_ > 0; }

private:
	std::vector<std::string> command_;
	double duration_;
	double t0_ = 0;		// start()'s time (the duration's origin)
	bool over_ = false;	// done() said so (it stays so)
	pid_t child_ = -1;
};

} // namespace kinst

#endif
