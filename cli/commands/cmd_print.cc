// SPDX-License-Identifier: BSD-2-Clause
// kinstctl print FILE: a capture (trace --output, capture.h) as trace would
// have printed it, text or --json; the trace's summary to stderr.
#include <memory>

#include "device/capture.h"
#include "commands/commands.h"
#include "base/error.h"
#include "output/hitfmt.h"
#include "base/spec.h"

namespace kinst {

namespace {

struct PrintOptions {
	std::string file;
	std::string regs;	// empty: as traced
	std::string count = "0";
	OutputOptions out;
};

int
run_print(const PrintOptions &o)
{
	CaptureReader rd(o.file);
	const CaptureHeader &h = rd.header();
	uint64_t limit = 0;
	parse_number(o.count, UINT64_MAX, &limit);
	Writer out(stdout);
	HitFormat hf;
	hf.json = o.out.json;
	if (o.regs.empty()) {	// as traced
		hf.regs_all = h.regs_all;
		hf.regs_list = h.regs_list;
	} else
		regs_view(o.regs, &hf.regs_all, &hf.regs_list);
	hf.latency_from = h.latency_from;
	hf.st = Style::detect(stdout, o.out.no_color);
	hf.capd = h.capd;
	HitFormatter fmt(hf, h.probes);
	bool flush_each = out.tty();
	uint64_t n = 0;
	HitRecord r;
	while ((limit == 0 || n < limit) && rd.next(r)) {
		fmt.format(r, out.buffer());
		n++;
		if (flush_each)
			out.flush();
		else
			out.commit();
	}
	out.flush();
	if (limit != 0 && n >= limit) {
		fprintf(stderr, "kinstctl: %llu records printed (-n)\n", (unsigned long long)n);
		return 0;
	}
	const nlohmann::json &s = rd.summary();
	if (s.is_null()) {
		fprintf(stderr, "kinstctl: %llu records printed; WARNING: %s has no summary "
		    "(the capture was cut short: kinstctl trace did not finish it)\n",
		    (unsigned long long)n, o.file.c_str());
		return 0;
	}
	auto num = [&](const char *k) -> unsigned long long {
		return s.contains(k) && s[k].is_number_unsigned() ? s[k].get<unsigned long long>() : 0;
	};
	fprintf(stderr, "kinstctl: %llu records printed; traced: %llu hits, %llu delivered, "
	    "%llu dropped, %llu written\n", (unsigned long long)n, num("hits"),
	    num("delivered"), num("dropped"), num("records"));
	if (n != num("records"))
		fprintf(stderr, "kinstctl: WARNING: the capture says %llu records were written, "
		    "%llu are in it\n", num("records"), (unsigned long long)n);
	return 0;
}

} // namespace

void
add_print(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<PrintOptions>();
	CLI::App *sub = app.add_subcommand("print",
	    "Print the records of a capture file (kinstctl trace --output FILE) as trace "
	    "prints them, text or --json; the trace's summary goes to stderr.");
	sub->add_option("file", o->file, "the capture file")->required();
	add_output_options(sub, o->out);
	add_regs_option(sub, o->regs, "as traced");
	sub->add_option("-n,--count", o->count, "stop after this many records (0: no limit)")
	    ->check(CLI::Validator([](std::string &s) {
		    uint64_t v;
		    return parse_number(s, UINT64_MAX, &v) ? std::string() :
			"not a record count (0 to 18446744073709551615): " + s;
	    }, "COUNT", "count"));
	sub->callback([o, &run]() { run = [o]() { return run_print(*o); }; });
}

} // namespace kinst
