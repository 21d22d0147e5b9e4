// SPDX-License-Identifier: BSD-2-Clause
// trace --perfetto FILE (perfetto.h).
#include "output/perfetto.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/text.h"

namespace kinst {

namespace {

std::string
comm_of(const struct kinst_hit_record &h)
{
	return std::string(h.comm, strnlen(h.comm, sizeof(h.comm)));
}

// Compact JSON; a comm that is not UTF-8 gets U+FFFD, not an exception.
std::string
dumped(const nlohmann::json &j)
{
	return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Microseconds, to the nanosecond (the format's unit), as a JSON number
// with exactly these digits (a double could round them).
std::string
micros(uint64_t ns)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return b;
}

} // namespace

PerfettoWriter::PerfettoWriter(const std::string &path, const std::string &producer)
    : path_(path)
{
	f_ = fopen(path.c_str(), "w");
	if (f_ == nullptr)
		throw Error(Exit::file, "--perfetto " + path + ": " + strerror(errno));
	nlohmann::json od = {{"producer", producer}, {"clock", "monotonic"}};
	fprintf(f_, "{\"displayTimeUnit\":\"ns\",\"otherData\":%s,\"traceEvents\":[\n",
	    dumped(od).c_str());
}

PerfettoWriter::~PerfettoWriter()
{
	if (f_ != nullptr)
		fclose(f_);
}

void
PerfettoWriter::event(const std::string &json)
{
	if (!first_)
		fputs(",\n", f_);
	first_ = false;
	fputs(json.c_str(), f_);
}

void
PerfettoWriter::names(const struct kinst_hit_record &h)
{
	std::string comm = comm_of(h);
	if (pids_.insert(h.pid).second) {
		nlohmann::json m = {{"ph", "M"}, {"name", "process_name"}, {"pid", h.pid},
		    {"tid", h.pid}, {"args", {{"name", comm}}}};
		event(dumped(m));
	}
	if (tids_.insert({h.pid, h.tid}).second) {
		nlohmann::json m = {{"ph", "M"}, {"name", "thread_name"}, {"pid", h.pid},
		    {"tid", h.tid}, {"args", {{"name", comm}}}};
		event(dumped(m));
	}
}

void
PerfettoWriter::hit(const HitRecord &r, const ProbeDesc *p)
{
	const struct kinst_hit_record &h = r.hit;
	names(h);
	nlohmann::json regs = nlohmann::json::object();
	for (int i = 0; i < KINST_NGPR; i++)
		regs[gpr_names[i]] = hex(h.regs.gpr[i]);
	regs["rip"] = hex(h.regs.rip);
	regs["rflags"] = hex(h.regs.rflags);
	nlohmann::json args = {{"cpu", h.cpu}, {"probe_id", h.probe_id},
	    {"address", hex(h.addr)}, {"regs", regs}};
	if (p != nullptr)
		args["insn"] = p->insn;
	nlohmann::json e = {{"ph", "i"}, {"s", "t"}, {"cat", "kinst"},
	    {"name", p != nullptr ? p->name : hex(h.addr)}, {"pid", h.pid},
	    {"tid", h.tid}, {"args", args}};
	std::string s = dumped(e);
	s.pop_back();
	s += ",\"ts\":" + micros(h.timestamp_ns) + '}';
	event(s);
	events_++;
}

void
PerfettoWriter::span(const struct kinst_hit_record &h, uint64_t dur_ns, const std::string &name,
    const nlohmann::json &args)
{
	names(h);
	uint64_t start = h.timestamp_ns >= dur_ns ? h.timestamp_ns - dur_ns : 0;
	nlohmann::json e = {{"ph", "X"}, {"cat", "kinst"}, {"name", name}, {"pid", h.pid},
	    {"tid", h.tid}, {"args", args}};
	std::string s = dumped(e);
	s.pop_back();
	s += ",\"ts\":" + micros(start) + ",\"dur\":" + micros(h.timestamp_ns - start) + '}';
	event(s);
	events_++;
}

void
PerfettoWriter::finish()
{
	if (done_)
		return;
	done_ = true;
	fputs("\n]}\n", f_);
	bool bad = fflush(f_) != 0 || ferror(f_);
	int e = errno;
	if (fclose(f_) != 0 && !bad) {
		bad = true;
		e = errno;
	}
	f_ = nullptr;
	if (bad)
		throw Error(Exit::file, "--perfetto " + path_ + ": " + strerror(e));
}

} // namespace kinst
