// SPDX-License-Identifier: BSD-2-Clause
// One hit record as trace prints it: a text line or a JSON line (docs/json.md,
// "type": "hit").  Shared by trace (live) and print (a capture file).
//
// The JSON line is written directly, without building a DOM per record:
// the members in the order nlohmann::json's dump() puts them (sorted by
// key), numbers in decimal, strings escaped as dump() escapes them (a
// string with anything but printable ASCII goes through dump() itself), so
// the line is byte for byte what the DOM would give (cli_unit_test:
// hit_json_matches_dom).  Each probe's constant members are rendered once.
#ifndef KINSTCTL_HITFMT_H
#define KINSTCTL_HITFMT_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "debuginfo/btf_types.h"
#include "base/output.h"
#include "base/record.h"
#include "output/record_text.h"
#include "symbols/stack_symbols.h"
#include "device/session.h"

namespace kinst {

class TraceVars;

// --args: the prototype whose arguments each hit prints.
struct ArgsView {
	const Types *btf = nullptr;
	Types::Func func;
};

struct HitFormat {
	bool json = false;
	bool regs_all = false;		// --regs all (text)
	std::vector<int> regs_list;	// --regs LIST (text and JSON): only these
	bool latency_from = false;	// records carry --latency-from's value
	Style st;
	std::vector<CaptureDesc> capd;	// the user's captures
	const ArgsView *av = nullptr;	// --args
	const TraceVars *tv = nullptr;	// --var/--vars/$variables
	StackSymbolizer *sym = nullptr;	// --stack
};

class HitFormatter {
public:
	HitFormatter(const HitFormat &f, const std::map<uint32_t, ProbeDesc> &probes);
	// Appends the record's line (text or JSON) and a newline to out.
	void format(const HitRecord &full, std::string &out);

private:
	// A probe's constant JSON members, rendered: function, insn,
	// module, offset, probe, probe_id.
	const std::vector<std::string> &cached(uint32_t probe_id);
	void text(const HitRecord &full, const HitRecord &user, const ProbeDesc &d,
	    const std::string &name, bool has_since, uint64_t since, std::string &out);
	void json(const HitRecord &full, const HitRecord &user, const ProbeDesc *d,
	    bool has_since, uint64_t since, std::string &out);

	HitFormat f_;
	// The JSON "regs" object's members, in dump()'s order: each key
	// ('{"name":"' or ',"name":"') and its register (reg_value()).
	std::vector<std::pair<std::string, int>> json_regs_;
	const std::map<uint32_t, ProbeDesc> &probes_;
	std::map<uint32_t, std::vector<std::string>> cache_;
};

// Appends s as a JSON string, exactly as nlohmann::json's dump() (with the
// replace error handler) would write it.
void append_json_as_dump(std::string &out, std::string_view s);

} // namespace kinst

#endif
