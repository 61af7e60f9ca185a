// What a run needs from a server redlab did not start (RunNeeds, sim/scenario/backend.h),
// read from the scenario before the run: which scripts may run, which raw command lines the
// steps and setup send, and which server-wide commands its faults send with
// --allow-server-faults. The real backend makes the run's ACL user of it (real/acl.h).
//
// Found without running anything, so it is conservative: a step, actor or fault whose `when`
// cannot be decided before the run (it reads an actor's variables) counts as running, and so
// does a lock_release whose method is not known to be "del".
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "sim/scenario/backend.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {

// test(cond, where) and text(template, where) evaluate without an actor (the engine's own
// evaluation: parameters, variants, the seed); either may throw ScenarioError, which counts
// as "cannot be decided".
struct NeedsEval {
  std::function<bool(const Cond&, const Where&)> test;
  std::function<std::string(const Template&, const Where&)> text;
};

// What a step kind tells run_needs of itself (StepKind::needs).
class StepNeeds {
 public:
  // The step may run this script.
  virtual void script(const std::string& name) = 0;
  // A template's value without an actor (parameters, variants, the seed), or nullopt if it
  // cannot be known before the run.
  virtual std::optional<std::string> text(const Template& t, const Where& where) = 0;

 protected:
  ~StepNeeds() = default;
};

// scripts: the run's --script replacements (name -> source).
RunNeeds run_needs(const Scenario& sc, const std::map<std::string, std::string>& scripts,
                   bool allow_server_faults, const NeedsEval& eval);

}  // namespace redlab::scenario
