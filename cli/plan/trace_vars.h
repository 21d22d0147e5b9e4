// SPDX-License-Identifier: BSD-2-Clause
// trace --var NAME / --vars: C variables by name at each hit (DWARF).
//
// Before arming, every instruction the specs name is planned on its own
// (a variable lives in different places at different instructions): its
// variables' locations (dwarf_vars.h) say which registers the record
// already holds and which memory the probe must capture (a stack slot, a
// piece in memory, each load of a computed value).  Instructions whose
// plans compile to the same probe program share it.  At a hit, each
// variable is put together from the record's registers and captures
// (eval_node for computed values) and printed as its DWARF type says.
#ifndef KINSTCTL_TRACE_VARS_H
#define KINSTCTL_TRACE_VARS_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "debuginfo/debuginfo.h"
#include "debuginfo/dwarf_vars.h"
#include "plan/prog_compile.h"
#include "symbols/sources.h"
#include "base/spec.h"

namespace kinst {

struct HitRecord;
// A program's instructions as a map key (one program per distinct code).
inline std::string
code_key(const std::vector<struct kinst_pinsn> &code)
{
	return std::string((const char *)code.data(), code.size() * sizeof(code[0]));
}

class Session;

// The spec of one planned instruction: FUNCTION+OFF in MODULE, named text.
Spec insn_spec(const std::string &text, const std::string &module, const std::string &function,
    uint32_t off);

class TraceVars {
public:
	// names: --var (in order); all: --vars.  debug_files: --debug-file.
	// exprs: --if/--mem/--str name $variables (planned per instruction
	// too, nothing printed for them).
	// offline: plan on these files' symbols instead of the running
	// kernel's (tests); max_programs: the module's programs per session.
	TraceVars(const std::vector<std::string> &names, bool all,
	    const std::vector<std::string> &debug_files, bool exprs = false,
	    const SourceOptions *offline = nullptr, unsigned max_programs = KINST_PROG_MAX);
	~TraceVars();
	bool active() const { return all_ || !names_.empty() || exprs_; }
	bool prints() const { return all_ || !names_.empty(); }

	// One variable's reading at one instruction.
	struct Item {
		std::string name;
		Var v;
		Dwfl_Module *dm = nullptr;
		std::string why;	// not empty: not readable here (printed null)
		uint32_t size = 0;	// bytes put together
		std::vector<int> piece_cap;	// per piece: capture rank or -1
		std::vector<int> load_caps;	// value pieces' loads: capture ranks
		// value pieces' entry registers: (gpr, rank of its VAL capture)
		std::vector<std::pair<int, int>> entry_caps;
	};
	struct Plan {
		std::vector<Item> items;
		std::vector<RawCapture> caps;	// ranks after the user's --mem/--str
		std::vector<struct kinst_pinsn> code;	// the probe program
	};

	// Expands specs (a whole function to each of its traceable
	// instructions) and plans each; the program of each is pred's
	// predicate and the user's captures (caps) followed by the plan's.
	// Throws Error for an unknown variable, one not available at an
	// explicit instruction, or a module without DWARF.
	// prog: instead of trace's program, the one to build from each
	// instruction's environment (count/hist: --by/--value/--if).
	void prepare(std::vector<Spec> &specs, const std::string &if_expr,
	    const std::vector<Capture> &caps, const TypeEnv *env,
	    const std::function<std::vector<struct kinst_pinsn>(const TypeEnv *)> &prog = nullptr);
	// Loads each distinct plan's program (at most KINST_PROG_MAX) and arms
	// every planned instruction with it; an instruction the module refuses
	// is left out with a note (an explicit one is an error).  The number
	// armed; *prog_id: one of the programs (0: none).
	uint64_t arm(Session &dev, const std::vector<Spec> &specs, uint32_t flags,
	    const std::string &what, uint32_t *prog_id) const;
	// The plan of the instruction a hit is at (null: none).
	const Plan *plan(const std::string &function, uint32_t offset) const;
	const Plan *plan(const Spec &sp) const { return plan(sp.function, sp.offset); }
	size_t nplans() const { return plans_.size(); }

	// The values at a hit: text ("n=5 sum=10 p={lo=1, hi=2}") and JSON
	// ({"n": 5, ...}; null where unavailable).
	std::string text(const Plan &p, const HitRecord &r) const;
	nlohmann::json json(const Plan &p, const HitRecord &r) const;
	// An item's bytes from a hit's record (unread or faulted ones
	// unknown).  why: "entry not seen" when an entry value was missing.
	void bytes_of(const Item &it, const HitRecord &r, VarBytes &b, std::string *why) const;

	// Functions whose entry registers some plan reads (entry values): a
	// hidden probe at the entry saves them (per-thread state).  Where it
	// may go: the first instruction, or one after only nops (nothing
	// before it changed a register or rsp); its program.  offsets is
	// empty when a traced instruction's program pushes instead.
	struct EntryProbe {
		std::string module, function;
		std::vector<uint32_t> offsets;
		std::vector<struct kinst_pinsn> code;
	};
	const std::vector<EntryProbe> &entry_probes() const { return entries_; }
	// The hits of the hidden entry probes arm() armed, from the session's
	// probe list (their programs filter every hit).
	uint64_t hidden_hits(const std::vector<struct kinst_probe_info> &probes) const;

private:
	std::vector<std::string> names_;
	bool all_;
	bool exprs_;
	const SourceOptions *offline_;
	unsigned max_programs_;
	std::map<Dwfl_Module *, std::unique_ptr<DwarfTypes>> types_;
	DebugOptions dbg_opts_;
	std::unique_ptr<SymbolTable> syms_;
	std::unique_ptr<DebugInfo> dbg_;
	std::map<std::pair<std::string, uint32_t>, Plan> plans_;
	std::vector<EntryProbe> entries_;
	// Where arm() put them: function, offset.
	mutable std::vector<std::pair<std::string, uint32_t>> hidden_;
	// Its value as text and JSON ("<why>" and null when not readable).
	void value(const Item &it, const HitRecord &r, std::string &text,
	    nlohmann::json &j) const;
	// prepare()'s steps (trace_vars.cc).
	struct Prep;	// one prepare(): its inputs, what it planned so far
	struct Site;	// one spec's function
	struct Tally;	// what one spec's instructions came to
	struct Making;	// one instruction's plan in the making
	void plan_spec(const Spec &sp, Prep &pr);
	void plan_insn(const Site &s, uint32_t off, Prep &pr, Tally &tl);
	std::vector<std::pair<std::string, const Var *>> choose(const std::vector<Var> &vars,
	    const Site &s, Tally &tl) const;
	static void take_captures(Making &mk, Item &it, const Prep &pr);
	void limit_programs(Making &mk, const Prep &pr, Tally &tl) const;
	void add_entry_probe(Module &m, const Function &f, Disassembler &dis);
	void report(const Spec &sp, const Tally &tl, bool strict, size_t planned) const;
	void splice_entry_probes();
};

// A function's module's DWARF types from --debug-file, for $retval where
// BTF/CTF has no prototype of it (a module built without BTF): types()
// is null when there are no debug files or they do not have the module.
class DwarfReturnTypes {
public:
	DwarfReturnTypes(const std::vector<Spec> &specs, const std::vector<std::string> &debug_files);
	~DwarfReturnTypes();
	const Types *types() const { return types_.get(); }
private:
	std::unique_ptr<SymbolTable> syms_;
	std::unique_ptr<DebugInfo> dbg_;
	std::unique_ptr<DwarfTypes> types_;
};

} // namespace kinst

#endif
