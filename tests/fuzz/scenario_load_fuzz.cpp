// Fuzz target: the scenario loader and, for files it accepts, one bounded run of the engine.
//
// A scenario file is input a teacher writes by hand: whatever the bytes, loading must end in
// a Scenario or a ScenarioError (never a crash, a hang or a sanitizer report), and a loaded
// scenario must run to its end or stop with a ScenarioError. Runs are bounded in events so
// that a scenario with a huge repeat count is not a hang. Invariants checked besides:
// every error message is located ("fuzz.json:LINE:COLUMN: ..." or the run's own flag text),
// and a second run of the same input gives the same trace (determinism).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/core/trace.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace redlab::scenario;
  constexpr size_t kInputBytesMax = 32 * 1024;
  if (size > kInputBytesMax) return 0;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Scenario sc;
  try {
    sc = load_scenario_text(text, "fuzz.json");
  } catch (const ScenarioError& e) {
    if (std::string_view(e.what()).rfind("fuzz.json:", 0) != 0) __builtin_trap();
    return 0;
  }
  RunOptions o;
  o.seed = 1;
  o.events_max = 20000;
  try {
    RunResult a = run_scenario(sc, o);
    RunResult b = run_scenario(sc, o);
    if (redlab::trace_to_json(a.trace) != redlab::trace_to_json(b.trace)) __builtin_trap();
  } catch (const ScenarioError& e) {
    if (std::string_view(e.what()).rfind("fuzz.json:", 0) != 0) __builtin_trap();
  }
  return 0;
}
