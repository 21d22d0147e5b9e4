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

#include "abi.h"
#include "disasm.h"

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
	Syntax syntax = Syntax::att;
};

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

// The key as printed: comm as a string, pid and expressions in decimal.
std::string key_text(const std::string &by, const AggKey &k, bool sgn = false);

int run_agg(const AggOptions &o);

} // namespace kinst

#endif
