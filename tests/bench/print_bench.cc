// SPDX-License-Identifier: BSD-2-Clause
// Benchmark (prints figures, never fails on timing): the cost per record of
// kinstctl's consumer, on N synthetic hit records of 200 probes (random
// registers, a dd-like process).  In process: parse_hit_record alone, then
// parse + format as text, as JSON (cli/output/hitfmt.cc), and as the DOM trace
// used before (nlohmann::json built and dumped per record: the peer).  End
// to end: `kinstctl print [--json] FILE >/dev/null` on a capture of the
// same records, and `jq -c . >/dev/null` on print's JSON (what a user's
// pipeline pays per record at least).  Then --perfetto's writer, streaming
// (issue 42) against the DOM writer it replaced, for hits and spans.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/capture.h"
#include "base/regfile.h"
#include "base/text.h"
#include "output/hitfmt.h"
#include "base/record.h"
#include "output/perfetto.h"
#include "../cli/perfetto_dom.h"

using namespace kinst;

static double
now()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static std::string
dom_line(const std::map<uint32_t, ProbeDesc> &probes, const HitRecord &r)
{
	const struct kinst_hit_record &h = r.hit;
	const ProbeDesc &d = probes.at(h.probe_id);
	nlohmann::json j;
	j["schema"] = KINST_JSON_SCHEMA;
	j["type"] = "hit";
	j["time_ns"] = h.timestamp_ns;
	j["cpu"] = h.cpu;
	j["pid"] = h.pid;
	j["tid"] = h.tid;
	j["comm"] = std::string(h.comm, strnlen(h.comm, sizeof(h.comm)));
	j["probe_id"] = h.probe_id;
	j["probe"] = d.name;
	j["module"] = d.module;
	j["function"] = d.function;
	j["offset"] = d.offset;
	j["address"] = hex(h.addr);
	j["insn"] = d.insn;
	j["regs"] = json_regs(h.regs);
	return json_line(j) + "\n";
}

static double
timed_cmd(const std::string &cmd)
{
	double t0 = now();
	int st = system(cmd.c_str());
	if (st != 0)
		fprintf(stderr, "print_bench: WARNING: `%s` exited %d\n", cmd.c_str(), st);
	return now() - t0;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], nullptr, 0) : 300000;
	std::mt19937_64 rng(1);
	CaptureHeader ch;
	for (uint32_t id = 1; id <= 200; id++) {
		ProbeDesc d;
		d.module = "kernel";
		d.function = "ksys_read";
		d.offset = id * 3;
		d.insn = "mov %rdi, %rax";
		d.name = "kernel:ksys_read+" + hex(d.offset);
		d.addr = 0xffffffff81000000ull + d.offset;
		ch.probes[id] = d;
	}
	std::vector<std::vector<uint8_t>> recs;
	for (size_t i = 0; i < 4096; i++) {
		struct kinst_hit_record h;
		memset(&h, 0, sizeof(h));
		h.hdr.size = sizeof(h);
		h.hdr.type = KINST_REC_HIT;
		h.cpu = (uint32_t)(i & 1);
		h.probe_id = 1 + (uint32_t)(rng() % 200);
		h.timestamp_ns = 1000000000ull * 120 + i * 977;
		h.addr = ch.probes[h.probe_id].addr;
		h.pid = h.tid = 4242;
		strcpy(h.comm, "dd");
		for (auto &g : h.regs.gpr)
			g = rng() >> (rng() % 64);
		h.regs.rip = h.addr;
		h.regs.rflags = 0x246;
		h.regs.cs = 0x10;
		h.regs.ss = 0x18;
		recs.emplace_back((uint8_t *)&h, (uint8_t *)&h + sizeof(h));
	}
	const char *file = "/tmp/print_bench.kinst";
	{
		CaptureWriter w(file, ch);
		for (size_t i = 0; i < n; i++)
			w.record(recs[i % recs.size()].data(), recs[i % recs.size()].size());
		w.finish({{"hits", n}, {"delivered", n}, {"dropped", 0}, {"records", n}});
	}
	printf("print_bench: %zu records of %zu bytes (200 probes)\n", n, recs[0].size());

	std::string out;
	out.reserve(1 << 22);
	auto per = [&](const char *what, double t) {
		printf("  %-34s %8.0f ns/record  %10.0f records/s\n", what, t * 1e9 / n, n / t);
	};
	double t0 = now();
	size_t sink = 0;
	for (size_t i = 0; i < n; i++) {
		const auto &v = recs[i % recs.size()];
		sink += parse_hit_record(v.data(), v.size()).hit.cpu;
	}
	per("parse_hit_record", now() - t0);
	for (int json = 0; json < 2; json++) {
		HitFormat f;
		f.json = json;
		HitFormatter fmt(f, ch.probes);
		t0 = now();
		for (size_t i = 0; i < n; i++) {
			const auto &v = recs[i % recs.size()];
			fmt.format(parse_hit_record(v.data(), v.size()), out);
			if (out.size() > (1 << 21)) {
				sink += out.size();
				out.clear();
			}
		}
		per(json ? "parse + hitfmt JSON" : "parse + hitfmt text", now() - t0);
	}
	t0 = now();
	for (size_t i = 0; i < n; i++) {
		const auto &v = recs[i % recs.size()];
		out += dom_line(ch.probes, parse_hit_record(v.data(), v.size()));
		if (out.size() > (1 << 21)) {
			sink += out.size();
			out.clear();
		}
	}
	per("parse + DOM JSON (before; peer)", now() - t0);
	// --perfetto (issue 42): the streaming writer against the DOM writer
	// it replaced (perfetto_dom.h), a hit event (trace) and a latency span
	// per record, to a file.
	{
		const char *pf = "/tmp/print_bench.perfetto.json";
		std::string end = "kernel:vfs_read+0x9f";
		auto dur_of = [](const HitRecord &r) { return 1000 + r.hit.regs.gpr[0] % 100000; };
		// Each record through fn(record); t0 is set at the start.
		auto each = [&](const char *what, const std::function<void(const HitRecord &)> &fn) {
			t0 = now();
			for (size_t i = 0; i < n; i++) {
				const auto &v = recs[i % recs.size()];
				fn(parse_hit_record(v.data(), v.size()));
			}
			return what;
		};
		for (int span = 0; span < 2; span++) {
			const char *producer = span ? "kinstctl latency" : "kinstctl trace";
			{
				PerfettoWriter w(pf, producer);
				const char *what = each(span ? "parse + Perfetto span (streaming)" :
				    "parse + Perfetto hit (streaming)", [&](const HitRecord &r) {
					if (!span) {
						w.hit(r, &ch.probes.at(r.hit.probe_id));
						return;
					}
					SpanArgs a;
					a.cpu = r.hit.cpu;
					a.latency_ns = dur_of(r);
					a.end = end;
					w.span(r.hit, a.latency_ns, "vfs_read", a);
				});
				w.finish();
				per(what, now() - t0);
			}
			DomPerfetto d(producer);
			FILE *f = fopen(pf, "w");
			const char *what = each(span ? "parse + Perfetto span (DOM; peer)" :
			    "parse + Perfetto hit (DOM; peer)", [&](const HitRecord &r) {
				if (span)
					d.span(r.hit, dur_of(r), "vfs_read", {{"cpu", r.hit.cpu},
					    {"latency_ns", dur_of(r)}, {"end", end}});
				else
					d.hit(r.hit, &ch.probes.at(r.hit.probe_id));
				if (d.out.size() > (1 << 16)) {
					fwrite(d.out.data(), 1, d.out.size(), f);
					d.out.clear();
				}
			});
			d.finish();
			fwrite(d.out.data(), 1, d.out.size(), f);
			fclose(f);
			per(what, now() - t0);
		}
		remove(pf);
	}
	std::string k = KINSTCTL_PATH;
	per("kinstctl print FILE >/dev/null", timed_cmd(k + " print " + file + " >/dev/null 2>&1"));
	per("kinstctl print --json FILE >/dev/null",
	    timed_cmd(k + " print --json " + file + " >/dev/null 2>&1"));
	timed_cmd(k + " print --json " + file + " >/tmp/print_bench.json 2>/dev/null");
	per("jq -c . <print's JSON >/dev/null", timed_cmd("jq -c . </tmp/print_bench.json >/dev/null"));
	per("cat <print's JSON >/dev/null", timed_cmd("cat </tmp/print_bench.json >/dev/null"));
	printf("  (sink %zu)\n", sink % 10);
	remove(file);
	remove("/tmp/print_bench.json");
	return 0;
}
