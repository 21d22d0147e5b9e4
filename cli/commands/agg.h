// SPDX-License-Identifier: BSD-2-Clause
// kinstctl count / hist: in-kernel aggregation (kinst_abi.h, "aggregation";
// docs/kinstctl.8).  The pure steps (program, --linear, merge, rendering)
// are here so that tests/cli can check them without a kernel.
#ifndef KINSTCTL_AGG_H
#define KINSTCTL_AGG_H

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/abi.h"
#include "symbols/disasm.h"

namespace kinst {

struct AggOptions {
	bool hist = false;		// hist (else count)
	std::vector<std::string> specs;
	std::vector<std::string> debug_files;	// --debug-file (source specs)
	std::string by;			// "", "comm", "pid", "stack" or an expression
	std::string if_expr;
	std::string value_expr;		// hist --value, count --value
	std::string linear;		// "MIN,MAX,STEP" or ""
	std::string btf;		// --btf FILE: kernel types
	double duration = 0;
	uint32_t slots = 0;		// 0: the default for the command
	std::vector<std::string> command;	// after --
	bool json = false;
	bool no_color = false;
	bool no_optimize = false;	// --no-optimize: int3 probes only
	// --folded with --by stack: "offsets" (function+0xoff frames) or
	// "functions" (bare names); "" prints the table.
	std::string folded;
	std::string html;		// --html FILE (hist, latency)
	// Every sample also as a record (KINST_AGGF_RECORD: latency --perfetto).
	bool record = false;
	Syntax syntax = Syntax::att;
};

// --folded's value checked against --by and --json; cmd names the
// command.  Returns "", "offsets" or "functions".
std::string check_folded(const char *cmd, const std::string &folded, const std::string &by,
    bool json);

struct Linear {
	int64_t min = 0, max = 0, step = 0;
};
// "MIN,MAX,STEP" (decimal or 0x, MIN may be negative); throws Error(usage).
Linear parse_linear(const std::string &s);

// The program for the options: KEY words for --by, VALUE for --value,
// --if (or true) as the result; empty when none of them is given.
// Throws Error(usage) naming the option and column.
struct TypeEnv;
// *by_signed: --by's value is signed (key_text prints it so).
std::vector<struct kinst_pinsn> agg_program(const AggOptions &o,
    const TypeEnv *env = nullptr, bool *by_signed = nullptr);

// One key, summed over the CPUs.
struct AggKey {
	uint32_t probe_id = 0;
	uint64_t k0 = 0, k1 = 0;
	bool operator<(const AggKey &o) const
	{
		return probe_id != o.probe_id ? probe_id < o.probe_id :
		    k0 != o.k0 ? k0 < o.k0 : k1 < o.k1;
	}
};
struct AggVal {
	uint64_t count = 0;
	uint64_t sum = 0;
	int64_t min = INT64_MAX, max = INT64_MIN;
	std::vector<uint64_t> buckets;
};
using AggMap = std::map<AggKey, AggVal>;

// Adds n entries of entry_size bytes (one CPU's AGG_READ) into m.
void agg_merge(AggMap &m, const uint8_t *buf, uint32_t n, uint32_t entry_size,
    uint32_t nbuckets);

// --by stack: the distinct stacks, over every CPU, by their frames; an
// AggKey's k1 is an index into them.  Frame 0 is the probed instruction.
struct StackSet {
	std::vector<std::vector<uint64_t>> frames;	// [] when a hash named no stack read
	std::vector<bool> truncated;
	std::map<std::vector<uint64_t>, uint64_t> ids;
	uint64_t id(const std::vector<uint64_t> &f, bool truncated);
};

// Adds one CPU's entries (AGG_READ) into m, their key word 1 (a stack's
// hash on that CPU) replaced by the id in ss of the frames of the stack of
// that hash among the CPU's nstacks stacks (AGG_STACKS, read after the
// entries); entries of different CPUs with the same frames merge.
void agg_merge_stacks(AggMap &m, StackSet &ss, const uint8_t *buf, uint32_t n,
    uint32_t entry_size, uint32_t nbuckets, const struct kinst_agg_stack *stacks,
    uint32_t nstacks);

// The histogram's bucket i as [low, high): nullopt-like flags for open ends.
struct Bucket {
	bool has_low = true, has_high = true;
	int64_t low = 0, high = 0;
	std::string label;	// bpftrace style: "[4, 8)", "[1K, 2K)", "(..., 0)"
};
Bucket log2_bucket(uint32_t i);
Bucket linear_bucket(const Linear &l, uint32_t nlinear, uint32_t i);

// The ASCII histogram (bpftrace style): first to last non-zero bucket.
std::string render_hist(const std::vector<Bucket> &b,
    const std::vector<uint64_t> &counts);

// One histogram of an --html page: its key as printed ("" without --by),
// its bucket counts, and the line printed under it.
struct HistPanel {
	std::string key;
	std::vector<uint64_t> counts;
	std::string summary;
};
// --html's page: self-contained (inline CSS, one inline SVG bar chart per
// panel, no script, no external reference).  Each chart has a bar for
// every bucket from the first to the last non-empty one, as render_hist:
// a <g class="bucket"> with data-low, data-high (absent at an open end)
// and data-count, the bucket's label, a <rect> as long as the count
// relative to the panel's largest, and the count.
std::string hist_html(const std::string &title, const std::string &note,
    const std::vector<Bucket> &b, const std::vector<HistPanel> &panels);
// "kinst CMD SPEC..." (an --html page's title).
std::string html_title(const char *cmd, const std::vector<std::string> &specs);

// The key as printed: comm as a string, pid and expressions in decimal.
std::string key_text(const std::string &by, const AggKey &k, bool sgn = false);

int run_agg(const AggOptions &o);

// The steps of a run over the device, shared with latency (latency.h).
class Session;
class Writer;
struct AggState {
	struct kinst_agg_setup su;
	StackSet stacks;	// --by stack
	uint32_t prog_id = 0;
	bool whole = false;	// a spec armed a whole function
	bool by_signed = false;	// --by's value is signed (printed so)
	bool latency = false;	// values are nanoseconds: print percentiles
};
// KINST_IOC_AGG_SETUP for the options (kind, slots, --linear, stacks).
void setup_agg(Session &dev, AggState &s, const AggOptions &o);
// Every CPU's table, merged.
AggMap read_all(Session &dev, AggState &s, uint32_t ncpus);
struct Totals {
	uint64_t hits = 0, delivered = 0, dropped = 0, filtered = 0, faults = 0;
	uint64_t aggregated = 0, overflow = 0, nested = 0;
	uint64_t hidden = 0;	// of filtered, the hits of hidden entry probes
	uint32_t ncpus = 0;
	uint32_t probes = 0, jump = 0;	// armed, and of them jump-optimized (at the end)
	uint32_t shared = 0;	// of them, shared with other sessions (JumpCounts)
};
Totals totals(Session &dev, const AggState &s);
// The summary line (stderr) and, with --json, its object.
void print_summary(Writer &out, const AggOptions &o, const Totals &t);
// One histogram per key (text or JSON); with s.latency, each with its
// mean and approximate percentiles.  With html, also the --html page of
// the same histograms (hist_html; title names the command and specs).
void print_hist(Writer &out, const AggOptions &o, const AggState &s, const AggMap &m,
    std::string *html = nullptr, const std::string &title = "");

// The approximate q-quantile (0 < q <= 1) of a histogram: the value at
// rank ceil(q * count), interpolated linearly inside its bucket [low,
// high) (the middle of that rank's share of it) and clamped to the histogram's [min, max] (both exact).
double hist_quantile(const std::vector<Bucket> &b, const AggVal &v, double q);

} // namespace kinst

#endif
