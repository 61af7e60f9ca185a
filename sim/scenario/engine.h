// The scenario engine: runs a Scenario on a backend (the fake by default) and reports what
// happened.
//
// A run is a pure function of (scenario, seed, variant, parameters, script overrides): it
// builds a scheduler, the fake servers, the simulated network, one client process per actor
// (or one shared by the actors of a shared client), interprets every actor's steps in
// continuation style, fires the scheduled faults, stops at the scenario's duration, and then
// judges the checks from the trace (checks.h, through sim/core/trace_index.h). The trace is
// the one product; every verdict and violation is also written into it, so a saved trace
// shows exactly what the run showed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/scenario/backend.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {

struct RunOptions {
  uint64_t seed = 1;
  std::map<std::string, std::string> variant;       // overrides of the variants' defaults
  std::map<std::string, int64_t> set;               // overrides of the parameters' defaults
  std::map<std::string, std::string> scripts;       // script name -> replacement source (exercises)
  std::map<std::string, std::string> script_paths;  // script name -> its file, for messages
  std::string lang = "en";
  // Bounds of one run (docs: scenarios/README.md, "Limits"). A run that reaches one stops
  // there: RunResult::bound says which, located at the step that ran last.
  uint64_t events_max = 5'000'000;            // scheduler events (timers, deliveries, ...)
  uint64_t steps_max = 10'000'000;            // steps run, all actors together
  size_t trace_events_max = 2'000'000;        // events in the trace
  size_t trace_bytes_max = size_t(64) << 20;  // the trace's memory, estimated
  // Lua VM instructions the fake's scripts run, all scripts of the run together (counted
  // every 1000; sim/fake/lua_budget.h): a script that never ends stops the run here. 5e7 is
  // about 0.25 s of CPU and 1 s of the fake server's virtual time (20 ns an instruction);
  // the seeds' scripts take about 20 instructions a call.
  uint64_t lua_instructions_max = 50'000'000;
  // A live view: sees every trace event as the run appends it, on the engine's thread.
  std::function<void(const TraceEvent&)> on_event;

  // Where the servers are. nullptr: the in-process fake (a fresh one per run). A real
  // backend (real/real_backend.h) is used for one run and finished by it.
  Backend* backend = nullptr;
  // Every duration of the scenario (TTLs, work, pauses, timeouts, the client's options, the
  // network's latency) times this: a 25 s scenario runs in 2.5 s at 0.1 on a real server.
  // Relations between durations are kept, so the story is the same.
  double time_scale = 1.0;
  // Server-wide faults (DEBUG, CLIENT PAUSE, SCRIPT FLUSH, CONFIG SET, restart) on a server
  // the backend does not own. Without it such a scenario is refused before it starts.
  bool allow_server_faults = false;
  // Set from another thread to end a real run early, as if its duration had been reached.
  const std::atomic<bool>* cancel = nullptr;
  // Tests: at each of these times, on_probe sees every server's own keyspace (where the
  // backend can show it) and the trace's length then, so the trace can be held against the
  // truth at that exact position.
  std::vector<TimeUs> probe_times_us;
  std::function<void(TimeUs at_us, size_t trace_events, const std::string& server,
                     const std::vector<KeyState>& keyspace)>
      on_probe;
  // The same for the server's SLOWLOG (Backend::slowlog), at the same times.
  std::function<void(TimeUs at_us, size_t trace_events, const std::string& server,
                     const std::vector<SlowlogRow>& slowlog)>
      on_slowlog_probe;
};

struct Violation {
  TimeUs from_us = 0;
  TimeUs to_us = 0;
  std::vector<std::string> who;
  std::string text;  // plain words: "B and C held lock:job:42 together from 12.0 s to 14.3 s"
};

struct CheckResult {
  std::string name;   // as the scenario calls it
  std::string check;  // the invariant
  bool ok = true;
  std::vector<Violation> violations;
  std::string summary;           // one line for ok and for violated
  std::optional<bool> expected;  // what the expectation for this variant says, if anything
  // false: the trace had nothing to judge this check from (no such events, or it needs the
  // server's own events and the run was on a real server); ok is then true and the summary
  // says why. A grader never counts an unjudged check as passed.
  bool judged = true;
  // Not judged because this backend cannot record what the check needs (the server's own key
  // events on a real server): the expectation is then judged on the other checks.
  bool backend_lacks = false;
};

struct RunResult {
  Trace trace;
  std::vector<CheckResult> checks;
  std::map<std::string, std::string> variant;  // every variant, resolved
  std::map<std::string, int64_t> params;       // every parameter, resolved
  std::vector<std::string> actors;             // actor instances, in lane order
  bool expectation_met = true;
  // false: the run has interventions, which take the file's expectations away, so there was
  // none to meet (expectation_met is then true whatever the checks say).
  bool expectation_given = true;
  // Checks the expectation names that this backend could not judge (left out of it).
  std::vector<std::string> not_judged_here;
  TimeUs end_us = 0;
  uint64_t events = 0;
  bool bound_hit = false;
  // When a bound stopped the run: one line, located at the step that ran last
  // ("x.json:12:7: actors[0].steps[1]: the run reached its bound of ... at 2.3 s").
  std::string bound;
  // A real server that died or stopped answering during the run (Backend::trouble()); the
  // verdicts are then about a broken run. "" if none.
  std::string backend_trouble;
};

// Runs the scenario. Bad options (an unknown variant or parameter, a value out of range) and
// run-time errors in the file (an expression that is not an integer, a CONFIG SET the server
// refuses) throw ScenarioError naming where.
RunResult run_scenario(const Scenario& scenario, const RunOptions& options);

// "12.0 s", "350 ms": times for people.
std::string format_time(TimeUs t);

}  // namespace redlab::scenario
