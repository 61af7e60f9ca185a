// The scenario engine: runs a Scenario on a backend (the fake by default) and reports what
// happened.
//
// A run is a pure function of (scenario, seed, variant, parameters, script overrides): it
// builds a scheduler, the fake servers, the simulated network, one client process per actor
// (or one shared by the actors of a shared client), interprets every actor's steps in
// continuation style, fires the scheduled faults, stops at the scenario's duration, and then
// evaluates the checks over what the actors believed and did (Facts). The trace is the one
// product; the check verdicts are also written into it, so a saved trace replays with them.
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
  std::map<std::string, std::string> variant;  // overrides of the variants' defaults
  std::map<std::string, int64_t> set;          // overrides of the parameters' defaults
  std::map<std::string, std::string> scripts;  // script name -> replacement source (exercises)
  std::string lang = "en";
  uint64_t events_max = 5'000'000;
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
};

// What the actors believed and did, the raw material of the checks.
struct Facts {
  struct Hold {  // an actor believed it held a lock from..to
    std::string lock, actor, token;
    TimeUs from_us = 0, to_us = 0;
    std::string ended;  // "released", "lost", "abandoned", "actor ended", "run ended"
  };
  struct Acquire {  // a successful acquisition, as the server granted it
    std::string lock, actor, token;
    TimeUs at_us = 0;
  };
  struct Release {
    std::string lock, actor, method;
    TimeUs at_us = 0;
    bool deleted = false;  // the server removed a key
  };
  struct Write {
    std::string resource, actor, value;
    int64_t fence = 0;
    int64_t highest_before = 0;  // the highest fence the resource had accepted before
    bool accepted = false;
    TimeUs at_us = 0;
  };
  struct Publish {
    std::string channel, message, actor;
    bool stream = false;
    int64_t receivers = -1;  // PUBLISH's reply; -1 unknown (failed, or a stream)
    TimeUs at_us = 0;
  };
  struct Listen {  // a subscriber (or stream consumer) listening to a channel from..to
    std::string channel, actor, group;  // group: streams, where any consumer of it counts
    bool stream = false;
    TimeUs from_us = 0, to_us = 0;
  };
  struct Delivery {
    std::string channel, message, actor, group;
    TimeUs at_us = 0;
  };
  struct Attempts {
    std::string actor;
    int64_t step = -1;
    int64_t attempts = 0;
    int64_t aborted = 0;
    bool gave_up = false;
  };
  struct Record {
    std::string name, actor;
    TimeUs at_us = 0;
  };
  std::vector<Hold> holds;
  std::vector<Acquire> acquires;
  std::vector<Release> releases;
  std::vector<Write> writes;
  std::map<std::string, std::vector<int64_t>> issued_fences;  // lock -> fences handed out
  std::vector<Publish> publishes;
  std::vector<Listen> listens;
  std::vector<Delivery> deliveries;
  std::vector<Attempts> attempts;
  std::vector<Record> records;
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
};

struct RunResult {
  Trace trace;
  Facts facts;
  std::vector<CheckResult> checks;
  std::map<std::string, std::string> variant;  // every variant, resolved
  std::map<std::string, int64_t> params;       // every parameter, resolved
  std::vector<std::string> actors;             // actor instances, in lane order
  bool expectation_met = true;
  TimeUs end_us = 0;
  uint64_t events = 0;
  bool bound_hit = false;
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
