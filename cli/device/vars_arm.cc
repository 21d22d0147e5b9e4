// SPDX-License-Identifier: BSD-2-Clause
// TraceVars::arm: a variable plan (trace_vars.h) handed to the device
// session: the per-thread table, the hidden entry probes, each
// instruction with its program; and hidden_hits, what its hidden probes
// counted.  In the device layer, above the plan it
// arms (cli/README.md).
#include <cstdio>
#include <map>

#include "base/error.h"
#include "device/session.h"
#include "base/text.h"
#include "plan/trace_vars.h"

namespace kinst {

uint64_t
TraceVars::arm(Session &dev, const std::vector<Spec> &specs, uint32_t flags,
    const std::string &what, uint32_t *prog_id) const
{
	std::map<std::string, uint32_t> progs;
	std::vector<uint32_t> ids(specs.size(), 0);
	*prog_id = 0;
	// Entry values: the table first, then each hidden entry probe, before
	// the instructions that read what it saves.
	if (!entries_.empty())
		dev.ts_setup(1024, what + ": entry values");
	for (const EntryProbe &e : entries_) {
		if (e.offsets.empty())
			continue;	// pushed by a traced instruction's program
		uint32_t id = dev.load_prog(e.code, what + " (the entry of " + e.function + ")");
		bool ok = false;
		for (uint32_t o : e.offsets) {
			Spec s = insn_spec(e.function + "+" + hex(o), e.module, e.function, o);
			try {
				dev.arm(s, flags & ~(uint32_t)(KINST_ARM_STACK | KINST_ARM_AGG), id);
				ok = true;
				hidden_.emplace_back(e.function, o);
				fprintf(stderr, "kinstctl: note: %s+%s: a hidden probe saves the entry's "
				    "registers for entry values (its hits are counted apart in the summary)\n",
				    e.function.c_str(), hex(o).c_str());
				break;
			} catch (const Error &err) {
				if (err.code() == Exit::live)
					throw;
			}
		}
		if (!ok)
			fprintf(stderr, "kinstctl: note: %s: its entry cannot be traced: entry "
			    "values read \"entry not seen\"\n", e.function.c_str());
	}
	for (size_t i = 0; i < specs.size(); i++) {
		const Plan *p = plan(specs[i]);
		if (p == nullptr || p->code.empty())
			continue;
		std::string key = code_key(p->code);
		auto it = progs.find(key);
		if (it == progs.end()) {
			if (progs.size() >= max_programs_)
				throw Error(Exit::usage, what + ": the instructions need more than " +
				    std::to_string(max_programs_) + " different probe programs (the "
				    "module's limit per session); name fewer instructions or variables");
			it = progs.emplace(key, dev.load_prog(p->code, what)).first;
		}
		ids[i] = it->second;
		*prog_id = it->second;
	}
	// Each instruction with its plan's program; one the module refuses is
	// left out (a whole function's instructions were planned from the
	// text, before the module's last word).
	uint64_t armed = 0, refused = 0;
	for (size_t i = 0; i < specs.size() && !g_stop; i++) {
		try {
			armed += dev.arm(specs[i], flags, ids[i]).narmed;
		} catch (const Error &e) {
			if (specs.size() == 1 || e.code() == Exit::live)
				throw;
			refused++;
		}
	}
	if (refused)
		fprintf(stderr, "kinstctl: %llu instruction%s refused by the module, left out\n",
		    (unsigned long long)refused, refused == 1 ? "" : "s");
	return armed;
}

uint64_t
TraceVars::hidden_hits(const std::vector<struct kinst_probe_info> &probes) const
{
	return hits_at(probes, hidden_);
}

} // namespace kinst
