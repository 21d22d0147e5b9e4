// SPDX-License-Identifier: BSD-2-Clause
// The Perfetto writer as it was before issue 42 (an nlohmann::json
// document per event), written again from the format: the reference
// cli_unit_test:perfetto_bytes compares the streaming writer with, byte
// for byte, and print_bench's peer.
#ifndef KINST_TESTS_PERFETTO_DOM_H
#define KINST_TESTS_PERFETTO_DOM_H

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "base/record.h"
#include "base/text.h"
#include "device/session.h"

namespace kinst {

inline std::string
dom_dump(const nlohmann::json &j)
{
	return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

inline std::string
dom_micros(uint64_t ns)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	return b;
}

struct DomPerfetto {
	std::string out;
	bool first = true;
	std::set<int32_t> pids;
	std::set<std::pair<int32_t, int32_t>> tids;

	explicit DomPerfetto(const std::string &producer)
	{
		out = "{\"displayTimeUnit\":\"ns\",\"otherData\":" +
		    dom_dump({{"producer", producer}, {"clock", "monotonic"}}) +
		    ",\"traceEvents\":[\n";
	}
	void finish() { out += "\n]}\n"; }

	void event(const std::string &e)
	{
		out += first ? "" : ",\n";
		first = false;
		out += e;
	}
	void names(const struct kinst_hit_record &h)
	{
		std::string comm(h.comm, strnlen(h.comm, sizeof(h.comm)));
		if (pids.insert(h.pid).second)
			event(dom_dump({{"ph", "M"}, {"name", "process_name"}, {"pid", h.pid},
			    {"tid", h.pid}, {"args", {{"name", comm}}}}));
		if (tids.insert({h.pid, h.tid}).second)
			event(dom_dump({{"ph", "M"}, {"name", "thread_name"}, {"pid", h.pid},
			    {"tid", h.tid}, {"args", {{"name", comm}}}}));
	}
	void hit(const struct kinst_hit_record &h, const ProbeDesc *p)
	{
		names(h);
		nlohmann::json regs = nlohmann::json::object();
		// x86-64's names, written out here: the reference does not
		// share the writer's table (regfile_x86.cc).
		static const char *const gpr[KINST_NGPR] = {"rax", "rcx", "rdx",
		    "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11",
		    "r12", "r13", "r14", "r15"};
		for (int i = 0; i < KINST_NGPR; i++)
			regs[gpr[i]] = hex(h.regs.gpr[i]);
		regs["rip"] = hex(h.regs.rip);
		regs["rflags"] = hex(h.regs.rflags);
		nlohmann::json args = {{"cpu", h.cpu}, {"probe_id", h.probe_id},
		    {"address", hex(h.addr)}, {"regs", regs}};
		if (p != nullptr)
			args["insn"] = p->insn;
		std::string s = dom_dump({{"ph", "i"}, {"s", "t"}, {"cat", "kinst"},
		    {"name", p != nullptr ? p->name : hex(h.addr)}, {"pid", h.pid},
		    {"tid", h.tid}, {"args", args}});
		s.pop_back();
		event(s + ",\"ts\":" + dom_micros(h.timestamp_ns) + '}');
	}
	void span(const struct kinst_hit_record &h, uint64_t dur, const std::string &name,
	    const nlohmann::json &args)
	{
		names(h);
		uint64_t start = h.timestamp_ns >= dur ? h.timestamp_ns - dur : 0;
		std::string s = dom_dump({{"ph", "X"}, {"cat", "kinst"}, {"name", name},
		    {"pid", h.pid}, {"tid", h.tid}, {"args", args}});
		s.pop_back();
		event(s + ",\"ts\":" + dom_micros(start) + ",\"dur\":" +
		    dom_micros(h.timestamp_ns - start) + '}');
	}
};


} // namespace kinst

#endif
