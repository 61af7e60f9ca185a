// The sweep panel's state (issue 12, item 4): one parameter of the scenario over its range,
// seeds 1..S at every value, run in the background by app::run_sweep (app/lab.h, the same
// code as `redlab sweep`), and each check's outcome plotted against the value. The App draws it
// and runs its commands (sweep_panel.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/lab.h"

namespace redlab::gui {

struct SweepState {
  // A sweep on another thread: it owns a copy of the scenario; the UI polls the shared part.
  struct Job {
    struct Shared {
      std::mutex mu;
      int64_t done = 0, total = 0;
      bool finished = false;
      std::optional<app::SweepResult> result;
      std::string error;
      std::atomic<bool> cancel{false};
    };
    std::shared_ptr<Shared> shared = std::make_shared<Shared>();
    std::thread thread;
    ~Job() {
      shared->cancel = true;
      if (thread.joinable()) thread.join();
    }
  };
  bool open = false;
  std::string scenario_id;    // whose parameters the fields below are
  app::SweepRequest request;  // the panel's fields
  std::unique_ptr<Job> job;   // a sweep going on
  // The last sweep's outcome, with what it was asked.
  std::optional<app::SweepResult> result;
  app::SweepRequest result_request;
  std::string result_scenario;
  std::string error;
};

}  // namespace redlab::gui
