#include "app/lab.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/core/assert.h"

namespace redlab::app {

using namespace redlab::scenario;

std::vector<int64_t> sweep_values(int64_t from, int64_t to, int64_t steps) {
  REDLAB_ASSERT(steps >= 1 && "validate_sweep bounds the steps");
  std::vector<int64_t> out;
  out.reserve(size_t(steps));
  for (int64_t i = 0; i < steps; i++) {
    if (steps == 1) {
      out.push_back(from);
      break;
    }
    // In 128 bits: a range of two int64 extremes times 10,000 steps does not fit 64.
    __int128 span = static_cast<__int128>(to) - from;
    out.push_back(static_cast<int64_t>(from + span * i / (steps - 1)));
  }
  return out;
}

void validate_sweep(const Scenario& sc, const SweepRequest& request) {
  auto refuse = [&](const std::string& message) { throw ScenarioError(message); };
  const Param* p = sc.param(request.param);
  if (!p) {
    std::vector<std::string> names;
    for (const Param& q : sc.params) names.push_back(q.name);
    refuse("--param " + request.param + ": " + sc.id + " has no such parameter" +
           (names.empty() ? " (it has none)" : " (it has " + comma_list(names) + ")"));
  }
  for (auto [flag, value] : {std::pair{"--from", request.from}, std::pair{"--to", request.to}})
    if (value < p->min || value > p->max)
      refuse(std::string(flag) + " " + std::to_string(value) + ": " + p->name + " goes from " +
             std::to_string(p->min) + " to " + std::to_string(p->max));
  if (request.steps < 1 || request.steps > kSweepStepsMax)
    refuse("--steps " + std::to_string(request.steps) + ": expected 1.." +
           std::to_string(kSweepStepsMax));
  if (request.seeds < 1 || request.seeds > kSweepSeedsMax)
    refuse("--seeds " + std::to_string(request.seeds) + ": expected 1.." +
           std::to_string(kSweepSeedsMax));
  if (request.steps * request.seeds > kSweepRunsMax)
    refuse("--steps " + std::to_string(request.steps) + " times --seeds " +
           std::to_string(request.seeds) + " is more than " + std::to_string(kSweepRunsMax) +
           " runs");
  if (request.base.set.count(request.param))
    refuse("--set " + request.param + ": that is the parameter being swept");
}

namespace {

// What one run left for the tally: per check, violated or not judged, and the summary of
// each violated one (kept only for those, so a long sweep of passing runs stays small).
struct RunOutcome {
  bool done = false;
  bool met = true;
  bool expectation_given = true;       // RunResult::expectation_given
  std::vector<uint8_t> state;          // per check: 0 held, 1 violated, 2 not judged
  std::vector<std::string> summaries;  // per check, "" unless violated
  std::string error;                   // a run-time error or a bound: the sweep stops on it
};

}  // namespace

SweepResult run_sweep(const Scenario& sc, const SweepRequest& request, unsigned threads,
                      const std::function<void(int64_t, int64_t)>& progress,
                      const std::atomic<bool>* cancel) {
  validate_sweep(sc, request);
  const std::vector<int64_t> values = sweep_values(request.from, request.to, request.steps);
  const int64_t total = request.steps * request.seeds;
  std::vector<RunOutcome> outcomes(static_cast<size_t>(total));
  std::atomic<int64_t> next{0}, finished{0};
  std::atomic<bool> failed{false};
  std::mutex progress_mutex;  // the callback is called from one thread at a time
  auto work = [&] {
    for (;;) {
      if (failed.load() || (cancel && cancel->load())) return;
      int64_t run = next.fetch_add(1);
      if (run >= total) return;
      RunOptions o = request.base;
      o.set[request.param] = values[size_t(run / request.seeds)];
      o.seed = uint64_t(run % request.seeds + 1);
      RunOutcome& out = outcomes[size_t(run)];
      try {
        RunResult r = run_scenario(sc, o);
        if (!r.bound.empty()) {
          out.error = r.bound;
        } else {
          out.met = r.expectation_met;
          out.expectation_given = r.expectation_given;
          out.state.reserve(r.checks.size());
          out.summaries.resize(r.checks.size());
          for (size_t i = 0; i < r.checks.size(); i++) {
            const CheckResult& c = r.checks[i];
            out.state.push_back(!c.judged ? 2 : c.ok ? 0 : 1);
            if (c.judged && !c.ok) out.summaries[i] = c.summary;
          }
        }
      } catch (const ScenarioError& e) {
        out.error = e.what();
      }
      out.done = true;
      if (!out.error.empty()) failed.store(true);
      int64_t n = finished.fetch_add(1) + 1;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(n, total);
      }
    }
  };
  threads = std::max(1u, threads);
  if (threads == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; t++) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
  }
  for (int64_t run = 0; run < total; run++) {
    const RunOutcome& out = outcomes[size_t(run)];
    if (out.done && !out.error.empty())
      throw ScenarioError(request.param + "=" +
                          std::to_string(values[size_t(run / request.seeds)]) + " seed " +
                          std::to_string(run % request.seeds + 1) + ": " + out.error);
  }

  // The check names, from any finished run (every run of a scenario has the same checks).
  SweepResult result;
  result.cancelled = cancel && cancel->load() && finished.load() < total;
  // The engine's word for it, from any finished run (every run of a sweep has the same
  // interventions).
  for (const RunOutcome& out : outcomes)
    if (out.done && out.error.empty()) {
      result.expectation = out.expectation_given;
      break;
    }
  std::vector<std::string> names;
  for (const CheckDef& def : sc.checks) names.push_back(def.name);
  for (int64_t point = 0; point < request.steps; point++) {
    SweepPoint p;
    p.value = values[size_t(point)];
    p.finished = true;
    for (const std::string& name : names) {
      SweepCheck c;
      c.name = name;
      p.checks.push_back(std::move(c));
    }
    for (int64_t seed = 1; seed <= request.seeds; seed++) {
      const RunOutcome& out = outcomes[size_t(point * request.seeds + seed - 1)];
      if (!out.done) {
        p.finished = false;
        continue;
      }
      result.runs++;
      if (!out.met) {
        p.expectation_unmet++;
        if (p.first_unmet_seed < 0) p.first_unmet_seed = seed;
      }
      REDLAB_ASSERT(out.state.size() == p.checks.size() && "a run reports every check once");
      for (size_t i = 0; i < out.state.size(); i++) {
        SweepCheck& c = p.checks[i];
        if (out.state[i] == 2) c.not_judged++;
        if (out.state[i] != 1) continue;
        c.violated++;
        if (c.first_seed < 0) {
          c.first_seed = seed;
          c.first_summary = out.summaries[i];
        }
      }
    }
    result.points.push_back(std::move(p));
  }
  return result;
}

}  // namespace redlab::app
