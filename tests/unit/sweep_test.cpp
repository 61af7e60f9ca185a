// Expectations are true everywhere a user can put the sliders: for every shipped scenario,
// every combination of its variants, and every parameter swept over its declared range (20
// evenly spaced points including min and max, the other parameters at their defaults), on
// seeds 1..5, the run meets the file's expectation. Where the outcome depends on the
// parameters, the file must say how (its expectations' conditions), or withdraw the
// expectation (null) in a band it explains.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/prng.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {
namespace {

namespace fs = std::filesystem;

#ifdef REDLAB_SANITIZED
// Under the sanitizers (ten times slower and more) the sweeps check memory and UB, not
// coverage: both ends of every range and three points between, two seeds. The plain build
// covers the ranges.
constexpr int kPoints = 5;
constexpr uint64_t kSeeds = 2;
#else
constexpr int kPoints = 20;
constexpr uint64_t kSeeds = 5;
#endif

std::vector<std::string> scenario_ids() {
  std::vector<std::string> ids;
  for (auto& e : fs::directory_iterator(fs::path(REDLAB_SOURCE_DIR) / "scenarios"))
    if (e.path().extension() == ".json") ids.push_back(e.path().stem().string());
  std::sort(ids.begin(), ids.end());
  return ids;
}

// Every combination of the scenario's variants.
std::vector<std::map<std::string, std::string>> variant_combinations(const Scenario& sc) {
  std::vector<std::map<std::string, std::string>> out{{}};
  for (const Variant& v : sc.variants) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& partial : out)
      for (const std::string& value : v.values) {
        auto m = partial;
        m[v.name] = value;
        next.push_back(std::move(m));
      }
    out = std::move(next);
  }
  return out;
}

std::vector<int64_t> sweep_points(const Param& p) {
  std::vector<int64_t> out;
  for (int i = 0; i < kPoints; i++) {
    // min + i * (max - min) / (kPoints - 1), in 128 bits (ranges may be large).
    __int128 span = static_cast<__int128>(p.max) - p.min;
    out.push_back(static_cast<int64_t>(p.min + span * i / (kPoints - 1)));
  }
  return out;
}

class Sweep : public ::testing::TestWithParam<std::string> {};

TEST_P(Sweep, ExpectationHoldsOverEveryParameterRange) {
  Scenario sc = load_scenario_file(
      (fs::path(REDLAB_SOURCE_DIR) / "scenarios" / (GetParam() + ".json")).string());
  size_t runs = 0, missed = 0;
  // The settings that missed (variants and the swept value), with the seeds that did.
  std::vector<std::string> misses;
  std::map<std::string, std::string> seeds_of;
  for (const auto& variant : variant_combinations(sc)) {
    for (const Param& p : sc.params) {
      for (int64_t value : sweep_points(p)) {
        for (uint64_t seed = 1; seed <= kSeeds; seed++) {
          RunOptions o;
          o.seed = seed;
          o.variant = variant;
          o.set[p.name] = value;
          RunResult r = run_scenario(sc, o);
          runs++;
          ASSERT_TRUE(r.bound.empty()) << r.bound;
          if (r.expectation_met) continue;
          missed++;
          std::ostringstream m;
          for (auto& [k, v] : variant) m << " --variant " << k << "=" << v;
          m << " --set " << p.name << "=" << value << ":";
          for (const CheckResult& c : r.checks)
            if (c.expected && (c.ok != *c.expected || !c.judged))
              m << " " << c.name << " expected " << (*c.expected ? "to hold" : "violated")
                << " but "
                << (!c.judged ? "not judged"
                    : c.ok    ? "held"
                              : "violated");
          if (!seeds_of.count(m.str())) misses.push_back(m.str());
          seeds_of[m.str()] += " " + std::to_string(seed);
        }
      }
    }
  }
  std::ostringstream report;
  for (size_t i = 0; i < misses.size() && i < 40; i++)
    report << "\n  seeds" << seeds_of[misses[i]] << ":" << misses[i];
  EXPECT_TRUE(misses.empty()) << GetParam() << ": " << missed << " of " << runs
                              << " runs missed the expectation:" << report.str();
  RecordProperty("runs", static_cast<int>(runs));
  std::cout << "[ sweep    ] " << GetParam() << ": " << runs << " runs\n";
}

// The sliders move together too: every parameter on a grid of its range (the points per
// parameter chosen so that a scenario's grid stays near kGridRunsMax settings), every variant
// combination, seeds 1..kGridSeeds. A condition written for one slider at a time (the others
// at their defaults) fails here where the parameters interact.
#ifdef REDLAB_SANITIZED
// Under the sanitizers the grid checks memory and UB, not coverage (see kPoints).
constexpr size_t kGridSettingsMax = 27;
constexpr uint64_t kGridSeeds = 1;
constexpr size_t kGridRandomSettings = 5;
#else
constexpr size_t kGridSettingsMax = 400;
constexpr uint64_t kGridSeeds = 2;
constexpr size_t kGridRandomSettings = 100;
#endif

std::vector<int64_t> grid_points(const Param& p, int points) {
  std::vector<int64_t> out;
  for (int i = 0; i < points; i++) {
    __int128 span = static_cast<__int128>(p.max) - p.min;
    out.push_back(static_cast<int64_t>(p.min + span * i / (points - 1)));
  }
  return out;
}

TEST_P(Sweep, ExpectationHoldsOnTheJointParameterGrid) {
  Scenario sc = load_scenario_file(
      (fs::path(REDLAB_SOURCE_DIR) / "scenarios" / (GetParam() + ".json")).string());
  // The most points per parameter that keep the grid within kGridSettingsMax (at least 3).
  int points = 3;
  for (int k = 3; k <= kPoints; k++) {
    double settings = 1;
    for (size_t i = 0; i < sc.params.size(); i++) settings *= k;
    if (settings <= kGridSettingsMax) points = k;
  }
  std::vector<std::map<std::string, int64_t>> grid{{}};
  for (const Param& p : sc.params) {
    std::vector<std::map<std::string, int64_t>> next;
    for (const auto& partial : grid)
      for (int64_t value : grid_points(p, points)) {
        auto m = partial;
        m[p.name] = value;
        next.push_back(std::move(m));
      }
    grid = std::move(next);
  }
  // Between the grid's lines: settings drawn at random (a fixed seed, so the test is the same
  // every time) anywhere in the ranges. REDLAB_SWEEP_RANDOM=N draws N instead of the default,
  // for a deeper search by hand.
  size_t random_settings = kGridRandomSettings;
  if (const char* n = std::getenv("REDLAB_SWEEP_RANDOM")) random_settings = std::stoul(n);
  Prng prng(20261204);
  for (size_t k = 0; k < random_settings; k++) {
    std::map<std::string, int64_t> set;
    for (const Param& p : sc.params) set[p.name] = prng.range_inclusive(p.min, p.max);
    grid.push_back(std::move(set));
  }
  size_t runs = 0, missed = 0;
  std::vector<std::string> misses;
  std::map<std::string, std::string> seeds_of;
  for (const auto& variant : variant_combinations(sc)) {
    for (const auto& set : grid) {
      for (uint64_t seed = 1; seed <= kGridSeeds; seed++) {
        RunOptions o;
        o.seed = seed;
        o.variant = variant;
        o.set = set;
        RunResult r = run_scenario(sc, o);
        runs++;
        ASSERT_TRUE(r.bound.empty()) << r.bound;
        if (r.expectation_met) continue;
        missed++;
        std::ostringstream m;
        for (auto& [k, v] : variant) m << " --variant " << k << "=" << v;
        for (auto& [k, v] : set) m << " --set " << k << "=" << v;
        m << ":";
        for (const CheckResult& c : r.checks)
          if (c.expected && (c.ok != *c.expected || !c.judged))
            m << " " << c.name << " expected " << (*c.expected ? "to hold" : "violated") << " but "
              << (!c.judged ? "not judged"
                  : c.ok    ? "held"
                            : "violated");
        if (!seeds_of.count(m.str())) misses.push_back(m.str());
        seeds_of[m.str()] += " " + std::to_string(seed);
      }
    }
  }
  std::ostringstream report;
  for (size_t i = 0; i < misses.size() && i < 400; i++)
    report << "\n  seeds" << seeds_of[misses[i]] << ":" << misses[i];
  EXPECT_TRUE(misses.empty()) << GetParam() << ": " << missed << " of " << runs
                              << " runs missed the expectation:" << report.str();
  std::cout << "[ grid     ] " << GetParam() << ": " << runs << " runs, " << points
            << " points per parameter\n";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Sweep, ::testing::ValuesIn(scenario_ids()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace redlab::scenario

namespace redlab::scenario {
namespace {

// The keyspace the trace shows (TraceIndex, from the server's key events) is the server's
// own, at many points of every shipped scenario and variant combination: probed every
// 97 ms of the run (an odd period, so probes fall between and on events alike) and compared
// with the index's keyspace at that exact trace position.
TEST_P(Sweep, TheTracesKeyspaceIsTheServersAtEveryProbe) {
  Scenario sc = load_scenario_file(
      (fs::path(REDLAB_SOURCE_DIR) / "scenarios" / (GetParam() + ".json")).string());
  size_t probes = 0, slowlog_rows = 0;
  for (const auto& variant : variant_combinations(sc)) {
    RunOptions o;
    o.variant = variant;
    struct Probe {
      TimeUs at_us;
      size_t events;
      std::string server;
      std::vector<KeyState> keys;
    };
    std::vector<Probe> seen;
    for (TimeUs t = 0; t < seconds_to_us(60); t += ms_to_us(97)) o.probe_times_us.push_back(t);
    o.on_probe = [&](TimeUs at, size_t events, const std::string& server,
                     const std::vector<KeyState>& keys) {
      seen.push_back(Probe{at, events, server, keys});
    };
    // The SLOWLOG the inspector shows is the server's own, too: the entries made by then.
    struct LogProbe {
      TimeUs at_us;
      size_t events;
      std::string server;
      std::vector<SlowlogRow> rows;
    };
    std::vector<LogProbe> logs;
    o.on_slowlog_probe = [&](TimeUs at, size_t events, const std::string& server,
                             const std::vector<SlowlogRow>& rows) {
      logs.push_back(LogProbe{at, events, server, rows});
    };
    RunResult r = run_scenario(sc, o);
    TraceIndex ix(r.trace);
    ASSERT_FALSE(seen.empty());
    auto same = [](const SlowlogRow& a, const SlowlogRow& b) {
      return a.id == b.id && a.logged_at_us == b.logged_at_us && a.duration_us == b.duration_us &&
             a.argv == b.argv;
    };
    for (const LogProbe& p : logs) {
      std::vector<SlowlogRow> server_rows, trace_rows;
      for (const SlowlogRow& row : p.rows)
        if (row.logged_at_us <= p.at_us) server_rows.push_back(row);
      for (const SlowlogRow& row : ix.slowlog_at(p.server, p.at_us))
        if (row.event < p.events) trace_rows.push_back(row);
      ASSERT_EQ(server_rows.size(), trace_rows.size())
          << GetParam() << " at " << p.at_us << " us, server " << p.server;
      for (size_t i = 0; i < server_rows.size(); i++)
        ASSERT_TRUE(same(server_rows[i], trace_rows[i]))
            << GetParam() << " at " << p.at_us << " us: entry " << i << " is #" << server_rows[i].id
            << " on the server, #" << trace_rows[i].id << " in the trace";
      slowlog_rows += server_rows.size();
    }
    for (const Probe& p : seen) {
      probes++;
      std::vector<KeyState> from_trace = ix.keyspace_before(p.server, p.events);
      ASSERT_EQ(from_trace, p.keys) << GetParam() << " at " << p.at_us << " us, server " << p.server
                                    << ", trace position " << p.events;
    }
  }
  std::cout << "[ keyspace ] " << GetParam() << ": " << probes << " probes, " << slowlog_rows
            << " SLOWLOG rows\n";
}

}  // namespace
}  // namespace redlab::scenario
