// SPDX-License-Identifier: BSD-2-Clause
// The planning step (planner.h).
#include "plan/planner.h"

#include "base/live.h"
#include "debuginfo/debuginfo.h"
#include "symbols/returns.h"

namespace kinst {

std::vector<Spec>
probe_specs(const std::vector<std::string> &args, const std::vector<std::string> &debug_files)
{
	std::vector<Spec> specs;
	for (const auto &s : args) {
		Spec sp = parse_spec(s);
		if (sp.is_source()) {	// FILE:LINE etc.: their MODULE:FUNC+OFFSET probes
			for (const auto &e : expand_source_spec(sp, DebugOptions{debug_files}))
				specs.push_back(e);
			continue;
		}
		if (sp.is_address)
			sp = resolve_address(sp);
		specs.push_back(sp);
	}
	return specs;
}

void
Plan::group()
{
	std::vector<PlanGroup> g;
	for (auto &h : groups)
		if (h.hidden)
			g.push_back(std::move(h));
	if (!vars())
		for (auto &c : by_return_condition(specs)) {
			PlanGroup t;
			t.cond = c.first;
			t.specs = std::move(c.second);
			t.flags = flags;
			if (!t.cond.empty() || early) {
				t.code = cond_code[t.cond];
				t.what = t.cond.empty() ? what : cond_what;
				t.early = early;
			}
			g.push_back(std::move(t));
		}
	groups = std::move(g);
}

std::vector<Spec>
Plan::hidden_specs() const
{
	std::vector<Spec> v;
	for (const auto &g : groups)
		if (g.hidden)
			v.insert(v.end(), g.specs.begin(), g.specs.end());
	return v;
}

namespace {

// Step 2: the types the expressions may name, for the specs' function.
void
make_types(const PlanRequest &req, Plan &plan)
{
	plan.types = std::make_unique<TypeSource>(req.btf, plan.specs[0].module);
	make_type_env(plan.env, *plan.types, plan.specs);
	plan.rtypes = std::make_unique<DwarfReturnTypes>(plan.specs, req.debug_files);
	plan.env.ret_types = plan.rtypes->types();
}

// Step 4: every instruction planned on its own (trace_vars.h).
void
plan_vars(const PlanRequest &req, Plan &plan)
{
	if (req.vars_caps != nullptr) {
		plan.tv->prepare(plan.specs, req.vars_if, *req.vars_caps, &plan.env);
		return;
	}
	const PlanProgram &prog = req.program;
	plan.tv->prepare(plan.specs, "", {}, &plan.env,
	    [&prog](const TypeEnv *e) { return prog(e, ""); });
}

} // namespace

void
make_plan(const PlanRequest &req, Plan &plan)
{
	auto step = [&](PlanStep s) {
		if (req.step)
			req.step(s, plan);
	};
	plan.flags = req.flags;
	plan.what = req.what;
	plan.cond_what = req.cond_what;
	plan.early = req.early;
	plan.specs = req.resolved ? *req.resolved : probe_specs(req.specs, req.debug_files);
	for (const auto &sp : plan.specs)
		plan.any_whole = plan.any_whole || !sp.has_offset;
	step(PlanStep::specs);
	make_types(req, plan);
	step(PlanStep::types);
	// With $variables and a program of the command's, each instruction
	// compiles its own; trace's predicate is compiled once anyway (its
	// captures are the variables' first).
	// With programs of their own (PlanRequest::early), only for the
	// instructions without a return condition, if any.
	bool per_insn = req.dollar && req.vars_caps == nullptr;
	if (!per_insn && !(req.early && !by_return_condition(plan.specs).count("")))
		plan.code = req.program(&plan.env, "");
	plan.tv = std::make_unique<TraceVars>(req.var_names, req.all_vars, req.debug_files,
	    req.dollar, nullptr, req.max_programs);
	if (plan.vars()) {
		plan.code.clear();
		step(PlanStep::vars);
		plan_vars(req, plan);
	} else {
		for (const auto &c : by_return_condition(plan.specs))
			if (!c.first.empty())
				plan.cond_code[c.first] = req.program(&plan.env, c.first);
		if (plan.early) {
			plan.cond_code[""] = std::move(plan.code);
			plan.code.clear();
		}
	}
	if (plan.env.used_args && plan.entry_why.empty())
		plan.entry_why = "argument names";
	step(PlanStep::programs);
	plan.group();
}

} // namespace kinst
