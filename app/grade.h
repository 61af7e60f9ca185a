// The exercise grader, shared by `redlab check` and the GUI's exercise panel (one grader: the
// two cannot disagree about an answer). It runs the exercise over seeds 1..seeds with the
// settings the exercise fixes and requires each check the exercise names to come out as it
// says, judged from what the server and the resources did (checks.h), never from what the
// student's script replied. The first seed that fails ends the grade, with every graded check
// that failed there (a mistake often breaks more than one) in the check's own words.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/backend.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::app {

struct GradeFailure {
  enum class Why : uint8_t {
    should_hold,  // summary: the check's own (its first violation, ...)
    should_be_violated,
    not_judged,
    did_not_finish,  // the run stopped at a bound (check empty; summary: the bound)
  };
  Why why = Why::should_hold;
  std::string check;
  std::string summary;
  // The sentence `redlab check` prints ("no_oversell should hold, but: ...").
  std::string text() const;
};

struct GradeResult {
  bool pass = false;
  bool cancelled = false;    // stopped by the cancel flag before every seed had run
  int64_t seeds = 0;         // graded over 1..seeds
  int64_t seeds_done = 0;    // seeds that ran (all of them on a pass)
  int64_t failed_seed = -1;  // the first seed that failed
  std::vector<GradeFailure> failed;
  // The failing run's options (the answer, the exercise's settings and the seed), to replay it.
  scenario::RunOptions failed_options;
  std::vector<std::string> graded;  // the checks the exercise grades, in its order
};

// `answer`: the student's scripts or settings over the run's options (lang, bounds); the
// settings the exercise fixes are put over them here. seeds <= 0: the exercise's own count.
// progress (if given) sees each seed as it starts; cancel (if given) ends the grade between
// seeds. Throws scenario::ScenarioError when the scenario has no exercise or grades a name
// that is not a check, BackendError when the backend fails a run.
GradeResult grade_exercise(const scenario::Scenario& sc, const scenario::RunOptions& answer,
                           int64_t seeds, const BackendChoice& backend,
                           const std::function<void(int64_t seed, int64_t seeds)>& progress = {},
                           const std::atomic<bool>* cancel = nullptr);

}  // namespace redlab::app
