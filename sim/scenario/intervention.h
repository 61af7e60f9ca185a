// Interventions: a fault written as one line of words, for the command line (`redlab run
// --fault "pause A at 3000 for 14000"`), the GUI's what-if edits, branch files and the trace
// meta. One line is one entry of a scenario's `faults` list, so it is validated by the same
// loader code and runs through the same fault kinds as a fault written in the file.
//
//   LINE   := KIND [TARGET] (FIELD VALUE)* [why TEXT...]
//   TARGET := an actor, an instance of one (buyer7), or a server of the scenario
//   FIELD  := at | for | by | on | key | any field of the kind, without its "_ms"
//   VALUE  := a number of ms (3000, 3000ms, 3s, 1.5s, -500) or, after on / key, a name
//
// Examples: "pause A at 3000 for 14000", "crash A at 5s restart_after 2s",
// "clock_jump redis at 8000 by 12000", "partition A on redis at 2000 for 1500".
// docs: scenarios/README.md, "Interventions".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/scenario.h"

namespace redlab::scenario {

inline constexpr size_t kInterventionsMax = 1000;  // per run

// The faults[] entry (a JSON object, as text) that `line` stands for in `sc`. Throws
// ScenarioError("intervention \"LINE\": what is wrong, at which word") for a line that
// cannot be read; what the entry says is then checked by the loader like any fault.
std::string intervention_entry(const Scenario& sc, std::string_view line);

// The interventions of a run, added to `sc.faults` after the file's own and listed in
// `sc.interventions` (the engine keeps them in the trace meta and applies no expectation):
// each line read by intervention_entry and loaded by the loader's fault rules; errors name
// the line. Done once per scenario, not per run.
void add_interventions(Scenario& sc, const std::vector<std::string>& lines);

}  // namespace redlab::scenario
