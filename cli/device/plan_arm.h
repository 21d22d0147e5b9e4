// SPDX-License-Identifier: BSD-2-Clause
// A plan (plan/planner.h) handed to the device session: its specs at
// their entries, its programs loaded, its groups armed.
#ifndef KINSTCTL_PLAN_ARM_H
#define KINSTCTL_PLAN_ARM_H

#include <cstdint>

#include "device/session.h"
#include "plan/planner.h"

namespace kinst {

// Puts the hidden groups that ask for it (PlanGroup::entry_why) at their
// functions' entries (Session::at_entry); when the plan's expressions read
// arguments (Plan::entry_why), its specs too, and groups them again.
void place_at_entry(Session &dev, Plan &plan);

// Loads the plan's program (Plan::prog_id) and its early groups', before
// arming.
void load_programs(Session &dev, Plan &plan);

struct PlanArmed {
	uint64_t armed = 0;	// traced instructions armed (not the hidden ones)
	bool whole = false;	// a spec armed a whole function
	uint32_t prog_id = 0;	// a program of the traced instructions (0: none)
};
// Arms the hidden groups (each loads its program now unless early, arms
// its instruction, says its note), then the traced instructions: with
// variables, each with its own program (TraceVars::arm); else each group
// with its program (loaded now unless early; none: the plan's).
// stop_on_signal: a stop requested while arming arms nothing more.
PlanArmed arm_plan(Session &dev, Plan &plan, bool stop_on_signal);

// The hits of the plan's hidden probes (the variables' entry probes, the
// hidden groups) so far, which summaries tell apart.
uint64_t hidden_hits(Session &dev, const Plan &plan);

} // namespace kinst

#endif
