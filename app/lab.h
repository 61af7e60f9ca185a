// The lab's headless half: a parameter sweep, shared by `redlab sweep` and the GUI's sweep
// plot. A sweep runs one scenario (fake backend, so every run is a pure function of its
// inputs) at `steps` evenly spaced values of one parameter, seeds 1..seeds at each, and
// tallies how each check came out there: what a class plots to find, say, the pause at
// which the watchdog stops protecting.
//
// Runs are split over threads and merged by (point, seed), so the result does not depend on
// the thread count. A cancel flag ends a sweep early (the points finished so far are kept,
// the rest are marked unfinished); a progress callback sees every finished run.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::app {

struct SweepRequest {
  std::string param;
  int64_t from = 0;
  int64_t to = 0;
  int64_t steps = 2;          // points, both ends included (1: only `from`)
  int64_t seeds = 1;          // seeds 1..seeds at every point
  scenario::RunOptions base;  // variants, other parameters, replaced scripts; seed ignored
};

// Bounds of a sweep: a point is a value; a run is a (point, seed).
inline constexpr int64_t kSweepStepsMax = 10'000;
inline constexpr int64_t kSweepSeedsMax = 100'000;
inline constexpr int64_t kSweepRunsMax = 10'000'000;

struct SweepCheck {
  std::string name;
  int64_t violated = 0;     // seeds where it was violated
  int64_t not_judged = 0;   // seeds where it had nothing to judge
  int64_t first_seed = -1;  // the smallest seed where it was violated
  std::string first_summary;
};

struct SweepPoint {
  int64_t value = 0;
  bool finished = false;           // false: cancelled before every seed of this point had run
  std::vector<SweepCheck> checks;  // in the scenario's order
  int64_t expectation_unmet = 0;   // 0 when the sweep has no expectation (below)
  int64_t first_unmet_seed = -1;
};

struct SweepResult {
  std::vector<SweepPoint> points;
  int64_t runs = 0;  // runs that finished
  bool cancelled = false;
  // false: the runs have interventions, which take the file's expectations away (the engine's
  // evaluate_checks), so there is no expectation to meet or miss at any point.
  bool expectation = true;
};

// The values of a sweep: from + (to - from) * i / (steps - 1), exact in integers.
std::vector<int64_t> sweep_values(int64_t from, int64_t to, int64_t steps);

// Throws scenario::ScenarioError (a one-line message) when the request does not fit the
// scenario: an unknown parameter (with the known ones), a value outside its range, steps or
// seeds out of bounds, or the parameter also fixed in `base.set`.
void validate_sweep(const scenario::Scenario& sc, const SweepRequest& request);

// Runs the sweep on `threads` threads (at least 1). A run-time error in the scenario is
// rethrown once every thread has stopped, for the smallest (point, seed) that hit it.
SweepResult run_sweep(
    const scenario::Scenario& sc, const SweepRequest& request, unsigned threads,
    const std::function<void(int64_t runs_done, int64_t runs_total)>& progress = nullptr,
    const std::atomic<bool>* cancel = nullptr);

}  // namespace redlab::app
