// SPDX-License-Identifier: BSD-2-Clause
// trace --perfetto FILE, latency --perfetto FILE: the records as Chrome's
// Trace Event Format (the JSON ui.perfetto.dev and chrome://tracing open):
// one instant event per hit (trace) or one complete event per latency
// sample, on its thread's track; process and thread names from comm.
//
// Each event is written as it comes, by hand, into one buffer (no JSON
// document per event): the bytes are those nlohmann::json's dump() writes
// for the same event (members sorted by name, then "ts" and "dur"), which
// tests/cli/cli_unit_test.cc:perfetto_bytes checks against a DOM.
#ifndef KINSTCTL_PERFETTO_H
#define KINSTCTL_PERFETTO_H

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/record.h"
#include "device/session.h"

namespace kinst {

// A latency span's args.  Members, in the file (sorted by name): by (when
// by is set), cpu, end, latency_ns, overflow (when true), then with stack
// set: stack and stack_truncated, or with stack_unknown: stack [] and
// stack_unknown true.
struct SpanArgs {
	uint32_t cpu = 0;
	uint64_t latency_ns = 0;
	std::string_view end;	// the caller's, alive until span() returns
	const std::string *by = nullptr;
	bool overflow = false;
	const std::vector<std::string> *stack = nullptr;
	bool stack_truncated = false;
	bool stack_unknown = false;
};

class PerfettoWriter {
public:
	// Creates (truncates) path; throws Error(Exit::file) when it cannot.
	// producer: the command, in the file's otherData.
	explicit PerfettoWriter(const std::string &path,
	    const std::string &producer = "kinstctl trace");
	~PerfettoWriter();
	PerfettoWriter(const PerfettoWriter &) = delete;
	PerfettoWriter &operator=(const PerfettoWriter &) = delete;

	// One hit: "ph":"i" (thread scope) at the record's timestamp in
	// microseconds of the monotonic clock, named by the probe, with the
	// CPU, probe id, address, instruction and registers as args; the
	// process's and thread's names (metadata events) the first time the
	// pid or tid is seen.
	void hit(const HitRecord &r, const ProbeDesc *p);
	// One span that ended at h's timestamp and lasted dur_ns: "ph":"X"
	// (ts its start, dur, both in microseconds to the nanosecond), named
	// name, with args; the names' metadata events as for hit().  A span
	// longer than the time since the clock's origin starts at 0.
	void span(const struct kinst_hit_record &h, uint64_t dur_ns, const std::string &name,
	    const SpanArgs &args);
	// Closes the JSON and the file; throws Error(Exit::file) on a write
	// error.  Idempotent.
	void finish();
	uint64_t events() const { return events_; }

private:
	// Starts an event in buf_ (its separator); end_event() writes buf_
	// out once it is large.
	void begin_event();
	void end_event();
	void flush();
	// An event's members after "name": ph, pid, (s,) tid and ts.
	void thread_ts(char ph, const struct kinst_hit_record &h, uint64_t ts_ns);
	// The process_name and thread_name metadata, the first time each is seen.
	void names(const struct kinst_hit_record &h);

	std::string path_;
	FILE *f_ = nullptr;
	bool first_ = true, done_ = false, werr_ = false;
	int errno_ = 0;
	uint64_t events_ = 0;
	std::string buf_;
	std::set<int32_t> pids_;
	std::set<std::pair<int32_t, int32_t>> tids_;
	// hit()'s registers in dump()'s order (by name): key text and register.
	std::vector<std::pair<std::string, int>> regs_;
};

} // namespace kinst

#endif
