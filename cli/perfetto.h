// SPDX-License-Identifier: BSD-2-Clause
// trace --perfetto FILE: the records as Chrome's Trace Event Format (the
// JSON ui.perfetto.dev and chrome://tracing open): one instant event per
// hit on its thread's track, process and thread names from comm.
#ifndef KINSTCTL_PERFETTO_H
#define KINSTCTL_PERFETTO_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "record.h"
#include "session.h"

namespace kinst {

class PerfettoWriter {
public:
	// Creates (truncates) path; throws Error(Exit::file) when it cannot.
	explicit PerfettoWriter(const std::string &path);
	~PerfettoWriter();
	PerfettoWriter(const PerfettoWriter &) = delete;
	PerfettoWriter &operator=(const PerfettoWriter &) = delete;

	// One hit: "ph":"i" (thread scope) at the record's timestamp in
	// microseconds of the monotonic clock, named by the probe, with the
	// CPU, probe id, address, instruction and registers as args; the
	// process's and thread's names (metadata events) the first time the
	// pid or tid is seen.
	void hit(const HitRecord &r, const ProbeDesc *p);
	// Closes the JSON and the file; throws Error(Exit::file) on a write
	// error.  Idempotent.
	void finish();
	uint64_t events() const { return events_; }

private:
	void event(const std::string &json);

	std::string path_;
	FILE *f_ = nullptr;
	bool first_ = true, done_ = false;
	uint64_t events_ = 0;
	std::set<int32_t> pids_;
	std::set<std::pair<int32_t, int32_t>> tids_;
};

} // namespace kinst

#endif
