// SPDX-License-Identifier: BSD-2-Clause
// The planning step (issue 46): specs and options in, one Plan out.
//
// A command says what it arms (its specs, debug files, --btf) and how its
// program is compiled (PlanRequest::program, for a type environment and a
// return condition); make_plan() then does, always in this order:
//
//   1. resolve the specs (probe_specs: source lines expanded, addresses
//      to FUNC+OFFSET), then PlanStep::specs
//   2. the type environment (BTF/CTF, DWARF return types for $retval),
//      then PlanStep::types (the command's hidden companions, checks)
//   3. the traced instructions' program (not with per-instruction
//      programs of $variables)
//   4. with variables, PlanStep::vars, then the variable plans
//      (trace_vars.h: each instruction on its own, hidden entry probes
//      for entry values); else each return condition's program
//   5. PlanStep::programs, then the groups: hidden companions first,
//      then the traced specs by return condition (returns.h), a program
//      of their own each.
//
// The device's side (device/plan_arm.h) puts the specs at their entry
// when the expressions name arguments, loads the programs and arms the
// groups.  A new probe action or spec kind touches this file and the one
// command that has it.
#ifndef KINSTCTL_PLANNER_H
#define KINSTCTL_PLANNER_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/abi.h"
#include "base/spec.h"
#include "debuginfo/btf_types.h"
#include "plan/prog_compile.h"
#include "plan/trace_vars.h"

namespace kinst {

// The probes that trace, count and hist name: source specs (FILE:LINE and
// the like) expanded to theirs through debug_files, addresses resolved to
// FUNC+OFFSET in the running kernel.
std::vector<Spec> probe_specs(const std::vector<std::string> &args,
    const std::vector<std::string> &debug_files);

// A group of instructions armed with one program.
struct PlanGroup {
	// A hidden companion (a latency start: trace --latency-from's, or
	// latency's), armed before the traced instructions, one instruction;
	// its hits are not the command's.
	bool hidden = false;
	std::string cond;	// the return condition ("": none)
	std::vector<Spec> specs;
	// Its program; empty: the plan's program (Plan::code, if any).
	std::vector<struct kinst_pinsn> code;
	std::string what;	// what code is compiled from (load_prog's messages)
	uint32_t flags = 0;	// KINST_ARM_*
	bool early = false;	// loaded with the plan's program, before arming
	std::string note;	// printed once it is armed
	// Not empty: a hidden group's specs move to their functions' entries
	// when the plan is handed to the device (place_at_entry); the option
	// that needs it, for messages.
	std::string entry_why;
	uint32_t prog_id = 0;	// once loaded
};

struct Plan;
// Where make_plan() is: a command's checks and additions go there.
enum class PlanStep {
	specs,		// the specs are resolved
	types,		// the type environment is made
	vars,		// the program is compiled; variables to plan next
	programs,	// every program is compiled (hidden companions whose
			// programs depend on the command's are added here)
};

// A command's program for the type environment at its instructions and a
// return condition ("": none).
using PlanProgram = std::function<std::vector<struct kinst_pinsn>(const TypeEnv *env,
    const std::string &cond)>;

struct PlanRequest {
	std::vector<std::string> specs;		// the probe specs as given
	// Or the specs already resolved (latency's end points).
	const std::vector<Spec> *resolved = nullptr;
	std::vector<std::string> debug_files;	// --debug-file
	std::string btf;			// --btf
	PlanProgram program;
	std::string what;	// what program() compiles ("--by/--value/--if")
	std::string cond_what;	// the same at a conditional return
	uint32_t flags = 0;	// KINST_ARM_* of the traced instructions
	// Every group with a program of its own (program(env, "") too),
	// loaded before arming (latency's end points).
	bool early = false;
	// Variables (trace_vars.h): --var NAMEs, --vars, and whether the
	// expressions name $variables.  Each instruction then has its own
	// program: trace's predicate vars_if with the captures *vars_caps
	// (the variables' after them), or, when vars_caps is null,
	// program(env, "") in that instruction's environment.
	std::vector<std::string> var_names;
	bool all_vars = false;
	bool dollar = false;
	std::string vars_if;
	const std::vector<Capture> *vars_caps = nullptr;
	unsigned max_programs = KINST_PROG_MAX;	// for the variables' programs
	// Called at each step (may throw, add hidden groups, change what).
	std::function<void(PlanStep, Plan &)> step;
};

// What to arm, and everything the output needs to name it.
struct Plan {
	Plan() = default;
	Plan(const Plan &) = delete;
	Plan &operator=(const Plan &) = delete;

	// The traced instructions (with variables: one per instruction).
	std::vector<Spec> specs;
	bool any_whole = false;		// a spec as given names a whole function
	std::unique_ptr<TypeSource> types;
	TypeEnv env;
	std::unique_ptr<DwarfReturnTypes> rtypes;	// $retval without BTF/CTF
	std::unique_ptr<TraceVars> tv;	// never null once planned
	// The traced instructions' program (empty: none, or per instruction).
	std::vector<struct kinst_pinsn> code;
	std::string what;
	uint32_t flags = 0;
	uint32_t prog_id = 0;		// code's, once loaded
	// Not empty: the specs must be at their functions' entries (the
	// arguments are read there); the option that needs it, for messages.
	std::string entry_why;
	// Hidden companions first, then the traced specs by return condition
	// (none with variables: they arm each instruction themselves).
	std::vector<PlanGroup> groups;
	// Each return condition's program (a traced group's code).
	std::map<std::string, std::vector<struct kinst_pinsn>> cond_code;
	std::string cond_what;
	bool early = false;	// PlanRequest::early

	bool vars() const { return tv && tv->active(); }
	// The traced specs grouped again by return condition (after they
	// moved to their entry), each condition with its program.
	void group();
	// The hidden groups' specs.
	std::vector<Spec> hidden_specs() const;
};

// The one planning step.  Throws Error for everything that stops it.
void make_plan(const PlanRequest &req, Plan &plan);

} // namespace kinst

#endif
