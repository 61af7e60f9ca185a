// The scenario engine's speed: whole fake runs of core scenarios, as `redlab explore` and a
// what-if re-run in the GUI do them (DESIGN: a core scenario must be cheap to redo, well
// under 100 ms). items_per_second is trace events per second; runs_per_second is the figure
// explore prints. Every iteration is a different seed, so no run is a repeat of the last.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace {

using namespace redlab::scenario;

const Scenario& scenario(const std::string& id) {
  static std::map<std::string, Scenario> cache;
  auto it = cache.find(id);
  if (it == cache.end()) {
    auto path = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() /
                "scenarios" / (id + ".json");
    it = cache.emplace(id, load_scenario_file(path.string())).first;
  }
  return it->second;
}

void run_scenario_bench(benchmark::State& state, const std::string& id,
                        std::map<std::string, std::string> variant) {
  const Scenario& sc = scenario(id);
  uint64_t seed = 1;
  int64_t events = 0, runs = 0;
  for (auto _ : state) {
    RunOptions o;
    o.seed = seed++;
    o.variant = variant;
    RunResult r = run_scenario(sc, o);
    if (!r.expectation_met) {
      state.SkipWithError("expectation not met");
      return;
    }
    events += int64_t(r.trace.size());
    runs++;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(events);
  state.counters["runs_per_second"] = benchmark::Counter(double(runs), benchmark::Counter::kIsRate);
  state.counters["events_per_run"] = double(events) / double(std::max<int64_t>(runs, 1));
}

void BM_EngineTtlDoubleHolder(benchmark::State& state) {
  run_scenario_bench(state, "ttl-double-holder", {});
}
void BM_EngineWatchRetryStorm(benchmark::State& state) {
  run_scenario_bench(state, "watch-retry-storm", {});
}
void BM_EnginePubSubReconnectLoss(benchmark::State& state) {
  run_scenario_bench(state, "pubsub-reconnect-loss", {});
}
BENCHMARK(BM_EngineTtlDoubleHolder)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EngineWatchRetryStorm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EnginePubSubReconnectLoss)->Unit(benchmark::kMicrosecond);

}  // namespace
