#include "app/grade.h"

namespace redlab::app {

using namespace redlab::scenario;

std::string GradeFailure::text() const {
  switch (why) {
    case Why::should_hold:
      return check + " should hold, but: " + summary;
    case Why::should_be_violated:
      return check + " should be violated, but it held: " + summary;
    case Why::not_judged:
      return check + " could not be judged (" + summary + ")";
    case Why::did_not_finish:
      return "the run did not finish: " + summary;
  }
  return summary;
}

GradeResult grade_exercise(const Scenario& sc, const RunOptions& answer, int64_t seeds,
                           const BackendChoice& backend,
                           const std::function<void(int64_t, int64_t)>& progress,
                           const std::atomic<bool>* cancel) {
  if (!sc.exercise) throw ScenarioError(sc.id + " has no exercise to check");
  const Exercise& ex = *sc.exercise;
  RunOptions base = answer;
  for (auto& [k, v] : ex.variant) base.variant[k] = v;
  for (auto& [k, v] : ex.set) base.set[k] = v;
  GradeResult out;
  out.seeds = seeds > 0 ? seeds : ex.seeds;
  for (auto& [name, want] : ex.expect) out.graded.push_back(name);
  for (int64_t seed = 1; seed <= out.seeds; seed++) {
    if (cancel && cancel->load()) {
      out.cancelled = true;
      return out;
    }
    if (progress) progress(seed, out.seeds);
    RunOptions o = base;
    o.seed = uint64_t(seed);
    RunResult r = run_on_backend(sc, o, backend);
    if (!r.backend_trouble.empty()) throw BackendError(r.backend_trouble);
    out.seeds_done = seed;
    std::vector<GradeFailure> why;
    if (!r.bound.empty()) {
      // Stopped by a bound (a script that never ends): a graded check already violated in
      // the part that ran is violated, and says what the answer did wrong.
      why.push_back({GradeFailure::Why::did_not_finish, "", r.bound});
      for (auto& [name, want] : ex.expect)
        for (const CheckResult& x : r.checks)
          if (x.name == name && want && x.judged && !x.ok)
            why.push_back({GradeFailure::Why::should_hold, name, x.summary});
    } else {
      for (auto& [name, want] : ex.expect) {
        const CheckResult* ch = nullptr;
        for (const CheckResult& x : r.checks)
          if (x.name == name) ch = &x;
        if (!ch)
          throw ScenarioError(sc.id + ": the exercise grades \"" + name +
                              "\", which is not a check");
        if (!ch->judged)
          why.push_back({GradeFailure::Why::not_judged, name, ch->summary});
        else if (ch->ok != want)
          why.push_back(
              {want ? GradeFailure::Why::should_hold : GradeFailure::Why::should_be_violated, name,
               ch->summary});
      }
    }
    if (!why.empty()) {
      out.failed_seed = seed;
      out.failed = std::move(why);
      out.failed_options = std::move(o);
      return out;
    }
  }
  out.pass = true;
  return out;
}

}  // namespace redlab::app
