// SPDX-License-Identifier: BSD-2-Clause
// trace --perfetto FILE (perfetto.h).
#include "output/perfetto.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"
#include "output/hitfmt.h"

namespace kinst {

namespace {

// Microseconds, to the nanosecond (the format's unit), as a JSON number
// with exactly these digits (a double could round them).
void
append_micros(std::string &out, uint64_t ns)
{
	append_u64(out, ns / 1000);
	char b[8];
	snprintf(b, sizeof(b), ".%03u", (unsigned)(ns % 1000));
	out += b;
}

void
append_comm(std::string &out, const struct kinst_hit_record &h)
{
	append_json_as_dump(out, std::string_view(h.comm, strnlen(h.comm, sizeof(h.comm))));
}

void
append_hex_string(std::string &out, uint64_t v)
{
	out += '"';
	append_hex0x(out, v);
	out += '"';
}

const size_t flush_at = 1 << 16;

} // namespace

PerfettoWriter::PerfettoWriter(const std::string &path, const std::string &producer)
    : path_(path)
{
	f_ = fopen(path.c_str(), "w");
	if (f_ == nullptr)
		throw Error(Exit::file, "--perfetto " + path + ": " + strerror(errno));
	buf_ = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"monotonic\",\"producer\":";
	append_json_as_dump(buf_, producer);
	buf_ += "},\"traceEvents\":[\n";
	std::vector<int> which;
	for (int w = 0; w < KINST_PREG_COUNT; w++)	// not x86-64's cs and ss
		which.push_back(w);
	std::sort(which.begin(), which.end(), [](int a, int b) {
		return strcmp(reg_name(a), reg_name(b)) < 0;
	});
	for (size_t i = 0; i < which.size(); i++)
		regs_.emplace_back(std::string(i ? ",\"" : "{\"") + reg_name(which[i]) + "\":",
		    which[i]);
}

// Not finished (a run that failed): the events so far are still written
// out (an unclosed JSON array), as when each went straight to the FILE.
PerfettoWriter::~PerfettoWriter()
{
	if (f_ != nullptr) {
		flush();
		fclose(f_);
	}
}

void
PerfettoWriter::flush()
{
	if (!buf_.empty() && !werr_ && fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
		werr_ = true;
		errno_ = errno;
	}
	buf_.clear();
}

void
PerfettoWriter::begin_event()
{
	if (!first_)
		buf_ += ",\n";
	first_ = false;
}

void
PerfettoWriter::end_event()
{
	if (buf_.size() >= flush_at)
		flush();
}

void
PerfettoWriter::thread_ts(char ph, const struct kinst_hit_record &h, uint64_t ts_ns)
{
	buf_ += ",\"ph\":\"";
	buf_ += ph;
	buf_ += "\",\"pid\":";
	append_i64(buf_, h.pid);
	if (ph == 'i')
		buf_ += ",\"s\":\"t\"";	// an instant event on its thread's track
	buf_ += ",\"tid\":";
	append_i64(buf_, h.tid);
	buf_ += ",\"ts\":";
	append_micros(buf_, ts_ns);
}

void
PerfettoWriter::names(const struct kinst_hit_record &h)
{
	auto meta = [&](const char *what, int32_t tid) {
		begin_event();
		buf_ += "{\"args\":{\"name\":";
		append_comm(buf_, h);
		buf_ += "},\"name\":\"";
		buf_ += what;
		buf_ += "\",\"ph\":\"M\",\"pid\":";
		append_i64(buf_, h.pid);
		buf_ += ",\"tid\":";
		append_i64(buf_, tid);
		buf_ += '}';
	};
	if (pids_.insert(h.pid).second)
		meta("process_name", h.pid);
	if (tids_.insert({h.pid, h.tid}).second)
		meta("thread_name", h.tid);
}

void
PerfettoWriter::hit(const HitRecord &r, const ProbeDesc *p)
{
	const struct kinst_hit_record &h = r.hit;
	names(h);
	begin_event();
	buf_ += "{\"args\":{\"address\":";
	append_hex_string(buf_, h.addr);
	buf_ += ",\"cpu\":";
	append_u64(buf_, h.cpu);
	if (p != nullptr) {
		buf_ += ",\"insn\":";
		append_json_as_dump(buf_, p->insn);
	}
	buf_ += ",\"probe_id\":";
	append_u64(buf_, h.probe_id);
	buf_ += ",\"regs\":";
	for (const auto &k : regs_) {
		buf_ += k.first;
		append_hex_string(buf_, reg_value(h.regs, k.second));
	}
	buf_ += "}},\"cat\":\"kinst\",\"name\":";
	if (p != nullptr)
		append_json_as_dump(buf_, p->name);
	else
		append_hex_string(buf_, h.addr);
	thread_ts('i', h, h.timestamp_ns);
	buf_ += '}';
	events_++;
	end_event();
}

void
PerfettoWriter::span(const struct kinst_hit_record &h, uint64_t dur_ns, const std::string &name,
    const SpanArgs &a)
{
	names(h);
	uint64_t start = h.timestamp_ns >= dur_ns ? h.timestamp_ns - dur_ns : 0;
	begin_event();
	buf_ += "{\"args\":{";
	if (a.by != nullptr) {
		buf_ += "\"by\":";
		append_json_as_dump(buf_, *a.by);
		buf_ += ',';
	}
	buf_ += "\"cpu\":";
	append_u64(buf_, a.cpu);
	buf_ += ",\"end\":";
	append_json_as_dump(buf_, a.end);
	buf_ += ",\"latency_ns\":";
	append_u64(buf_, a.latency_ns);
	if (a.overflow)
		buf_ += ",\"overflow\":true";
	if (a.stack_unknown) {
		buf_ += ",\"stack\":[],\"stack_unknown\":true";
	} else if (a.stack != nullptr) {
		buf_ += ",\"stack\":[";
		for (size_t i = 0; i < a.stack->size(); i++) {
			if (i)
				buf_ += ',';
			append_json_as_dump(buf_, (*a.stack)[i]);
		}
		buf_ += a.stack_truncated ? "],\"stack_truncated\":true" :
		    "],\"stack_truncated\":false";
	}
	buf_ += "},\"cat\":\"kinst\",\"name\":";
	append_json_as_dump(buf_, name);
	thread_ts('X', h, start);
	buf_ += ",\"dur\":";
	append_micros(buf_, h.timestamp_ns - start);
	buf_ += '}';
	events_++;
	end_event();
}

void
PerfettoWriter::finish()
{
	if (done_)
		return;
	done_ = true;
	buf_ += "\n]}\n";
	flush();
	bool bad = werr_ || fflush(f_) != 0 || ferror(f_);
	int e = werr_ ? errno_ : errno;
	if (fclose(f_) != 0 && !bad) {
		bad = true;
		e = errno;
	}
	f_ = nullptr;
	if (bad)
		throw Error(Exit::file, "--perfetto " + path_ + ": " + strerror(e));
}

} // namespace kinst
