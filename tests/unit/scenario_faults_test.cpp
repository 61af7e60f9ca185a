// Faults and what they hit (scenarios/README.md, "faults"): the target forms, with exact
// virtual times on a network without latency.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {
namespace {

// A scenario with no network delay: actors and faults as given (JSON arrays' insides).
std::string world(const std::string& actors, const std::string& faults) {
  return R"({"id": "t", "title": "t", "network": {"latency_us": 0, "jitter_us": 0},
             "duration_ms": 10000, "actors": [)" +
         actors + R"(], "faults": [)" + faults + "]}";
}

// A load error as "<what the position points at> path: message", or "(loaded)".
std::string load_error(const std::string& text) {
  try {
    load_scenario_text(text, "t.json");
  } catch (const ScenarioError& e) {
    std::string what = e.what();  // t.json:LINE:COLUMN: path: message
    size_t a = what.find(':'), b = what.find(':', a + 1), c = what.find(':', b + 1);
    int line = std::stoi(what.substr(a + 1, b - a - 1));
    size_t column = std::stoul(what.substr(b + 1, c - b - 1));
    size_t at = 0;
    for (int l = 1; l < line; l++) at = text.find('\n', at) + 1;
    return "<" + text.substr(at + column - 1, 4) + ">" + what.substr(c + 1);
  }
  return "(loaded)";
}

RunResult run_text(const std::string& text) {
  Scenario sc = load_scenario_text(text, "t.json");
  RunOptions o;
  return run_scenario(sc, o);
}

// "actor@time_us" of every event of a kind, in trace order.
std::vector<std::string> when(const RunResult& r, const std::string& kind) {
  std::vector<std::string> out;
  for (const TraceEvent& e : r.trace.events())
    if (e.kind == kind) out.push_back(e.actor + "@" + std::to_string(e.time_us));
  return out;
}

const char* kThreeSleepers = R"({"name": "w", "count": 3, "steps": [{"do": "sleep", "ms": 1000}]})";

TEST(FaultTargets, AnActorNameHitsEveryInstance) {
  RunResult r = run_text(world(kThreeSleepers, R"({"at_ms": 500, "do": "pause", "actor": "w",
                                                    "for_ms": 2000})"));
  EXPECT_EQ(when(r, "sleep_done"),
            (std::vector<std::string>{"w1@2500000", "w2@2500000", "w3@2500000"}));
}

TEST(FaultTargets, AnInstanceNameHitsOnlyThatInstance) {
  RunResult r = run_text(world(kThreeSleepers, R"({"at_ms": 500, "do": "pause", "actor": "w2",
                                                    "for_ms": 2000})"));
  EXPECT_EQ(when(r, "sleep_done"),
            (std::vector<std::string>{"w1@1000000", "w3@1000000", "w2@2500000"}));
  EXPECT_EQ(when(r, "fault"), (std::vector<std::string>{"w2@500000", "w2@2500000"}));
}

TEST(FaultTargets, AnInstanceTheCountDoesNotHaveIsALoadError) {
  EXPECT_EQ(load_error(world(kThreeSleepers,
                             R"({"at_ms": 1, "do": "pause", "actor": "w4", "for_ms": 1})")),
            "<\"w4\"> faults[0].actor: no instance \"w4\": w has 3 (w1 to w3)");
  EXPECT_EQ(load_error(world(R"({"name": "w", "steps": [{"do": "sleep", "ms": 1}]})",
                             R"({"at_ms": 1, "do": "pause", "actor": "w1", "for_ms": 1})")),
            "<\"w1\"> faults[0].actor: no instance \"w1\": w has one, called w");
  EXPECT_EQ(load_error(world(kThreeSleepers,
                             R"({"at_ms": 1, "do": "pause", "actor": "x1", "for_ms": 1})")),
            "<\"x1\"> faults[0].actor: no actor named \"x1\"");
}

TEST(FaultTargets, ACountOverParametersIsCheckedWhenTheRunHasIt) {
  // Three instances by default: w4 is in no run at the default, and hits nothing.
  std::string text = R"({"id": "t", "title": "t", "network": {"latency_us": 0, "jitter_us": 0},
      "params": {"workers": {"default": 3, "min": 1, "max": 5}},
      "actors": [{"name": "w", "count": "workers", "steps": [{"do": "sleep", "ms": 1000}]}],
      "faults": [{"at_ms": 500, "do": "pause", "actor": "w4", "for_ms": 2000}]})";
  Scenario sc = load_scenario_text(text, "t.json");
  RunResult three = run_scenario(sc, RunOptions{});
  EXPECT_TRUE(when(three, "fault").empty());
  RunOptions five;
  five.set["workers"] = 5;
  RunResult r = run_scenario(sc, five);
  EXPECT_EQ(when(r, "fault"), (std::vector<std::string>{"w4@500000", "w4@2500000"}));
}

TEST(FaultTargets, KeysAKindDoesNotTakeAreRefusedUnlessShared) {
  // The shared keys are accepted by every kind (and ignored where unused)...
  EXPECT_EQ(load_error(world(kThreeSleepers, R"({"at_ms": 1, "do": "restart", "actor": "w",
                                                  "for_ms": 5, "by_ms": -3})")),
            "(loaded)");
  // ...anything else is not.
  EXPECT_EQ(load_error(world(kThreeSleepers, R"({"at_ms": 1, "do": "restart", "ttl_ms": 5})")),
            "<\"ttl> faults[0].ttl_ms: unknown key \"ttl_ms\" (expected one of: at_ms, do, "
            "actor, server, for_ms, by_ms, when, why)");
}

}  // namespace
}  // namespace redlab::scenario
