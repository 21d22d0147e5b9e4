// SPDX-License-Identifier: BSD-2-Clause
// trace --perfetto FILE, latency --perfetto FILE: the records as Chrome's
// Trace Event Format (the JSON ui.perfetto.dev and chrome://tracing open):
// one instant event per hit (trace) or one complete event per latency
// sample, on its thread's track; process and thread names from comm.
#ifndef KINSTCTL_PERFETTO_H
#define KINSTCTL_PERFETTO_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/record.h"
#include "device/session.h"

namespace kinst {

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
	    const nlohmann::json &args);
	// Closes the JSON and the file; throws Error(Exit::file) on a write
	// error.  Idempotent.
	void finish();
	uint64_t events() const { return events_; }

private:
	void event(const std::string &json);
	// The process_name and thread_name metadata, the first time each is seen.
	void names(const struct kinst_hit_record &h);

	std::string path_;
	FILE *f_ = nullptr;
	bool first_ = true, done_ = false;
	uint64_t events_ = 0;
	std::set<int32_t> pids_;
	std::set<std::pair<int32_t, int32_t>> tids_;
};

} // namespace kinst

#endif
