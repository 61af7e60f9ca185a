// The sweep panel's state (issue 12, item 4): one parameter of the scenario over its range,
// seeds 1..S at every value, run in the background by app::run_sweep (app/lab.h, the same
// code as `redlab sweep`), and each check's outcome plotted against the value. The App draws it
// and runs its commands (sweep_panel.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/gui/background_job.h"
#include "app/gui/whatif.h"
#include "app/lab.h"

namespace redlab::gui {

struct SweepState {
  bool open = false;
  std::string scenario_id;    // whose parameters the fields below are
  app::SweepRequest request;  // the panel's fields
  // A sweep going on, on another thread over its own copy of the scenario.
  std::unique_ptr<BackgroundJob<app::SweepResult>> job;
  // The last sweep's outcome, with what it was asked.
  std::optional<app::SweepResult> result;
  app::SweepRequest result_request;
  std::string result_scenario;
  std::vector<Intervention> result_interventions;  // the what-if branch's, if any
  std::string error;
};

}  // namespace redlab::gui
