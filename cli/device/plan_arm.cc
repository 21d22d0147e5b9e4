// SPDX-License-Identifier: BSD-2-Clause
// A plan handed to the device session (plan_arm.h).
#include "device/plan_arm.h"

#include <cstdio>

namespace kinst {

void
place_at_entry(Session &dev, Plan &plan)
{
	for (auto &g : plan.groups)
		if (g.hidden && !g.entry_why.empty()) {
			dev.at_entry(g.specs, g.entry_why);
			g.entry_why.clear();
		}
	if (plan.entry_why.empty())
		return;
	dev.at_entry(plan.specs, plan.entry_why);
	plan.group();
}

void
load_programs(Session &dev, Plan &plan)
{
	if (!plan.code.empty())
		plan.prog_id = dev.load_prog(plan.code, plan.what);
	for (auto &g : plan.groups)
		if (g.early && !g.code.empty())
			g.prog_id = dev.load_prog(g.code, g.what);
}

namespace {

// A group's program id: its own (loaded now unless it was), or the plan's.
uint32_t
group_prog(Session &dev, const Plan &plan, PlanGroup &g)
{
	if (g.code.empty())
		return plan.prog_id;
	if (g.prog_id == 0)
		g.prog_id = dev.load_prog(g.code, g.what);
	return g.prog_id;
}

} // namespace

PlanArmed
arm_plan(Session &dev, Plan &plan, bool stop_on_signal)
{
	PlanArmed r;
	for (auto &g : plan.groups) {
		if (!g.hidden)
			continue;
		uint32_t id = group_prog(dev, plan, g);
		for (const auto &sp : g.specs)
			dev.arm(sp, g.flags, id);
		if (!g.note.empty())
			fprintf(stderr, "%s", g.note.c_str());
	}
	if (plan.vars()) {
		r.armed = plan.tv->arm(dev, plan.specs, plan.flags, plan.what, &r.prog_id);
		r.whole = plan.any_whole;
		return r;
	}
	r.prog_id = plan.prog_id;
	for (auto &g : plan.groups) {
		if (g.hidden)
			continue;
		uint32_t id = group_prog(dev, plan, g);
		if (r.prog_id == 0)
			r.prog_id = id;
		ArmTotals a = dev.arm_specs(g.specs, g.flags, id, stop_on_signal);
		r.armed += a.armed;
		r.whole = r.whole || a.whole;
	}
	return r;
}

uint64_t
hidden_hits(Session &dev, const Plan &plan)
{
	std::vector<Spec> hs = plan.hidden_specs();
	if (!plan.vars() && hs.empty())
		return 0;
	std::vector<struct kinst_probe_info> pis = dev.probe_infos();
	return (plan.vars() ? plan.tv->hidden_hits(pis) : 0) + (hs.empty() ? 0 : hits_at(pis, hs));
}

} // namespace kinst
