// Faults and what they hit (scenarios/README.md, "faults"): the target forms, with exact
// virtual times on a network without latency.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
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

namespace redlab::scenario {
namespace {

// The crash fault: the process dies; what its actors held stays on the server until its TTL.
TEST(CrashFault, AHolderThatCrashesNeverUnlocksAndTheNextWaitsForTheTtl) {
  RunResult r = run_text(world(
      R"({"name": "A", "steps": [{"do": "lock_acquire", "lock": "lock:x", "ttl_ms": 5000},
                                 {"do": "work", "ms": 3000},
                                 {"do": "lock_release", "lock": "lock:x", "method": "lua"}]},
         {"name": "B", "start_ms": 100,
          "steps": [{"do": "lock_acquire", "lock": "lock:x", "ttl_ms": 5000, "retry_ms": 100}]})",
      R"({"at_ms": 1000, "do": "crash", "actor": "A"})"));
  EXPECT_EQ(when(r, "fault"), (std::vector<std::string>{"A@1000000"}));
  EXPECT_EQ(when(r, "actor_end"), (std::vector<std::string>{"A@1000000", "B@5100104"}));
  // A believed it held the lock until the crash; B takes it at its first try after the key
  // expired (5 s after A's SET, seen by the server's next expiry cycle), not at the crash.
  std::vector<std::string> holds = when(r, "hold_end");
  ASSERT_GE(holds.size(), 1u);
  EXPECT_EQ(holds[0], "A@1000000");
  EXPECT_EQ(when(r, "lock_acquired"), (std::vector<std::string>{"A@4", "B@5100104"}));
  EXPECT_EQ(when(r, "lock_release"), std::vector<std::string>{});
  EXPECT_EQ(when(r, "key_expired"), (std::vector<std::string>{"redis@5001000"}));
  // Its work span ends at the crash, and nothing of A happens after it.
  const auto& events = r.trace.events();
  int64_t work_span = 0;
  for (const TraceEvent& e : events)
    if (e.kind == "work" && e.actor == "A") work_span = e.span;
  ASSERT_GT(work_span, 0);
  bool cut = false;
  for (const TraceEvent& e : events) {
    if (e.ends == work_span) {
      EXPECT_EQ(e.kind, "crashed");
      EXPECT_EQ(e.time_us, 1000000);
      cut = true;
    }
    if (e.actor == "A") {
      EXPECT_LE(e.time_us, 1000000) << e.kind;
    }
  }
  EXPECT_TRUE(cut);
  for (const TraceEvent& e : events) {
    if (e.kind == "actor_end" && e.actor == "A") {
      EXPECT_EQ(e.str_or(F::reason), "crashed");
    }
  }
}

TEST(CrashFault, WithRestartAfterTheActorStartsAgainFromItsFirstStep) {
  RunResult r = run_text(world(
      R"({"name": "w", "steps": [{"do": "set", "save": "x", "value": "1"},
                                 {"do": "command", "cmd": "INCR starts"},
                                 {"do": "sleep", "ms": 1000}]})",
      R"({"at_ms": 500, "do": "crash", "actor": "w", "restart_after_ms": 200})"));
  EXPECT_EQ(when(r, "actor_start"), (std::vector<std::string>{"w@0", "w@700000"}));
  // The second life: INCR's round trip (4 us), then the sleep.
  EXPECT_EQ(when(r, "actor_end"), (std::vector<std::string>{"w@500000", "w@1700004"}));
  EXPECT_EQ(when(r, "sleep_done"), (std::vector<std::string>{"w@1700004"}));
  EXPECT_EQ(when(r, "fault"), (std::vector<std::string>{"w@500000", "w@700000"}));
  // The second life ran its steps again: INCR twice, on a new connection.
  std::vector<std::string> incr;
  for (const TraceEvent& e : r.trace.events())
    if (e.kind == "key_set" && e.str_or(F::key) == "starts")
      incr.push_back(std::string(e.str_or(F::value)));
  EXPECT_EQ(incr, (std::vector<std::string>{"1", "2"}));
}

// Its sockets close as the kernel closes them: the server drops the subscription, so a PUBLISH
// after the crash reaches nobody (PUBLISH's reply: 1, then 0).
TEST(CrashFault, TheServerSeesTheCrashedClientsConnectionsClose) {
  RunResult r = run_text(world(
      R"({"name": "s", "steps": [{"do": "subscribe", "channels": ["c"], "for_ms": 5000}]},
         {"name": "p", "start_ms": 100,
          "steps": [{"do": "publish", "channel": "c", "message": "m1"},
                    {"do": "sleep", "ms": 1900},
                    {"do": "publish", "channel": "c", "message": "m2"}]})",
      R"({"at_ms": 1000, "do": "crash", "actor": "s"})"));
  std::vector<int64_t> receivers;
  for (const TraceEvent& e : r.trace.events())
    if (e.kind == "published") receivers.push_back(e.num_or(F::receivers, -1));
  EXPECT_EQ(receivers, (std::vector<int64_t>{1, 0}));
}

TEST(CrashFault, NeedsAnActor) {
  EXPECT_EQ(load_error(world(kThreeSleepers, R"({"at_ms": 1, "do": "crash"})")),
            "<{\"at> faults[0]: missing key \"actor\" (who the crash hits)");
}

// After a failover the name "redis" leads to the promoted replica: a key's final value is read
// there (what a client reading "redis" gets), and the old primary, down for good, shows no keys
// from the failover on. The replica lags 5 s, so it never got the three INCRs before it.
TEST(Failover, TheFinalValueIsReadWhereTheNameLeadsAndTheOldPrimaryHoldsNothing) {
  std::string text = R"({"id": "t", "title": "t", "network": {"latency_us": 0, "jitter_us": 0},
    "duration_ms": 4000, "servers": {"redis": {}, "replica": {"replica_of": "redis"}},
    "actors": [{"name": "A", "steps": [
      {"do": "command", "cmd": "INCR c"}, {"do": "command", "cmd": "INCR c"},
      {"do": "command", "cmd": "INCR c"}, {"do": "sleep", "ms": 2000},
      {"do": "command", "cmd": "INCR c"}]}],
    "faults": [{"at_ms": 0, "do": "replica_lag", "server": "replica", "by_ms": 5000},
               {"at_ms": 1000, "do": "failover", "server": "replica"}],
    "checks": [{"check": "key_final", "key": "c", "equals": "1"}]})";
  RunResult r = run_text(text);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_TRUE(r.checks[0].ok) << r.checks[0].summary;
  const TraceEvent* final_event = nullptr;
  for (const TraceEvent& e : r.trace.events())
    if (e.kind == "key_final") final_event = &e;
  ASSERT_NE(final_event, nullptr);
  EXPECT_EQ(final_event->actor, "replica");
  EXPECT_EQ(final_event->str_or(F::server), "redis");
  EXPECT_EQ(final_event->str_or(F::host), "replica");
  EXPECT_EQ(final_event->str_or(F::value), "1");

  TraceIndex ix(r.trace);
  ASSERT_EQ(ix.keyspace_at("redis", 999'000).size(), 1u);
  EXPECT_EQ(ix.keyspace_at("redis", 999'000)[0].value, "3");
  EXPECT_EQ(ix.failed_over_at("redis"), 1'000'000);
  EXPECT_EQ(ix.failed_over_to("redis"), "replica");
  EXPECT_TRUE(ix.keyspace_at("redis", 1'000'000).empty());
  EXPECT_TRUE(ix.keyspace_at("redis", 3'000'000).empty());
  EXPECT_EQ(ix.failed_over_at("replica"), -1);

  // The same check expecting the old primary's 3 fails, and says where it read.
  std::string wrong = text;
  wrong.replace(wrong.find(R"("equals": "1")"), 13, R"("equals": "3")");
  RunResult w = run_text(wrong);
  ASSERT_EQ(w.checks.size(), 1u);
  EXPECT_FALSE(w.checks[0].ok);
  ASSERT_EQ(w.checks[0].violations.size(), 1u);
  EXPECT_NE(w.checks[0].violations[0].text.find("c = 1"), std::string::npos)
      << w.checks[0].violations[0].text;
  EXPECT_NE(w.checks[0].violations[0].text.find("replica, where redis leads"), std::string::npos)
      << w.checks[0].violations[0].text;
}

// servers.NAME.when: a replica only one variant has. Without it the run has no such server (no
// lane), a fault that names it is a located run error, and the first server cannot have one.
TEST(ServerWhen, AServerExistsOnlyInRunsWhereItsWhenHolds) {
  std::string text = R"({"id": "t", "title": "t", "network": {"latency_us": 0, "jitter_us": 0},
    "duration_ms": 2000,
    "variants": {"replica": {"values": ["none", "one"]}},
    "servers": {"redis": {}, "replica": {"replica_of": "redis", "when": "replica=one"}},
    "actors": [{"name": "A", "steps": [{"do": "command", "cmd": "INCR c"}]}],
    "faults": [{"at_ms": 1000, "do": "failover", "server": "replica", "when": "replica=one"}]})";
  Scenario sc = load_scenario_text(text, "t.json");
  auto lanes = [](const RunResult& r) {
    std::vector<std::string> out;
    for (const TraceEvent& e : r.trace.events())
      if (e.kind == "server_start") out.push_back(e.actor);
    return out;
  };
  EXPECT_EQ(lanes(run_scenario(sc, RunOptions{})), (std::vector<std::string>{"redis"}));
  RunOptions one;
  one.variant["replica"] = "one";
  EXPECT_EQ(lanes(run_scenario(sc, one)), (std::vector<std::string>{"redis", "replica"}));

  // The failover without its own when, in a run without the replica: a run error naming it.
  std::string unguarded = text;
  const std::string guard = R"(, "when": "replica=one"})";
  unguarded.replace(unguarded.rfind(guard), guard.size(), "}");
  Scenario bad = load_scenario_text(unguarded, "t.json");
  try {
    run_scenario(bad, RunOptions{});
    ADD_FAILURE() << "expected a run error";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("faults[0].server: failover at 1.0 s: replica is not in "
                                         "this run (servers.replica.when)"),
              std::string::npos)
        << e.what();
  }
  // Not on the first server.
  std::string first = text;
  first.replace(first.find(R"("redis": {})"), 11, R"("redis": {"when": "replica=one"})");
  EXPECT_EQ(load_error(first).substr(0, 6), "<\"rep>");
  EXPECT_NE(load_error(first).find("servers.redis.when: the first server is the default"),
            std::string::npos)
      << load_error(first);
}

}  // namespace
}  // namespace redlab::scenario
