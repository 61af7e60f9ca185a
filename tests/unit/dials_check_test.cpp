// dials_within (context-timeout-reconnect-storm): judged on small hand-made traces that must
// fail and must pass, and its `of` refused at load when it is neither dials nor closes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {
namespace {

// A client's connections, written by hand: dials and closes with their reasons.
class Conns {
 public:
  void dial(TimeUs at, const std::string& actor, int64_t conn) {
    TraceEvent e{at, "dial", actor, conn, 0, 0, ""};
    e.span = t_.new_span();
    t_.append(std::move(e).with(F::server, "redis"));
  }
  void close(TimeUs at, const std::string& host, int64_t conn, const std::string& reason) {
    t_.append(TraceEvent{at, "conn_close", host, conn, -1, -1, reason}.with(F::reason, reason));
  }
  void scale(const std::string& x) { t_.set_meta("time_scale", x); }
  void end(TimeUs at) { t_.append(TraceEvent{at, "note", "A", -1, -1, -1, "the end"}); }
  CheckResult judge(int64_t max, const std::string& of = "", int64_t after_ms = -1,
                    int64_t until_ms = -1) const {
    TraceIndex ix(t_);
    const CheckKind* k = find_check("dials_within");
    EXPECT_NE(k, nullptr);
    CheckArgs a;
    a.number["max"] = max;
    if (!of.empty()) a.text["of"] = of;
    if (after_ms >= 0) a.number["after_ms"] = after_ms;
    if (until_ms >= 0) a.number["until_ms"] = until_ms;
    return k ? k->run(a, ix) : CheckResult{};
  }

 private:
  Trace t_;
};

// A warm-up of two dials, then a storm: each read timeout closes a connection and the next
// call dials a new one.
Conns storm() {
  Conns t;
  t.dial(100000, "handler1", 1);
  t.dial(101000, "handler2", 2);
  for (int64_t i = 0; i < 5; i++) {
    TimeUs at = 1'050'000 + i * 50'000;
    t.close(at, "app", 1 + 2 * i, "i/o timeout");
    t.dial(at + 1000, "handler1", 3 + 2 * i);
  }
  t.close(1'400'000, "app", 20, "EOF");
  t.end(2'000'000);
  return t;
}

TEST(DialsWithin, AStormOfRedialsAfterTheWarmUpIsAViolationNamingWhatClosedThem) {
  Conns t = storm();
  CheckResult r = t.judge(2, "", 500);
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  const Violation& v = r.violations[0];
  // Five dials after 0.5 s, the bound is 2: the violation runs from the third to the last.
  EXPECT_EQ(v.from_us, 1'151'000);
  EXPECT_EQ(v.to_us, 1'251'000);
  EXPECT_EQ(v.who, std::vector<std::string>{"handler1"});
  EXPECT_NE(v.text.find("5 connections dialled"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("bound of 2 (the first past it at 1.1 s)"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("5 after \"i/o timeout\" and 1 after \"EOF\""), std::string::npos)
      << v.text;
}

TEST(DialsWithin, TheWarmUpIsNotCountedAndTheBoundIsInclusive) {
  Conns t = storm();
  EXPECT_TRUE(t.judge(5, "", 500).ok);
  EXPECT_FALSE(t.judge(4, "", 500).ok);
  // From the start, the warm-up's two dials count too.
  EXPECT_FALSE(t.judge(5).ok);
  EXPECT_TRUE(t.judge(7).ok);
  // A window that ends before the storm holds with no bound at all.
  CheckResult quiet = t.judge(0, "", 500, 1000);
  EXPECT_TRUE(quiet.ok) << quiet.summary;
  EXPECT_NE(quiet.summary.find("0 connections dialled"), std::string::npos) << quiet.summary;
}

TEST(DialsWithin, ClosesAreCountedWithTheirReasons) {
  Conns t = storm();
  CheckResult r = t.judge(3, "closes", 500);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].who, std::vector<std::string>{"app"});
  EXPECT_NE(r.violations[0].text.find("6 connections closed"), std::string::npos)
      << r.violations[0].text;
  EXPECT_NE(r.violations[0].text.find("5 after \"i/o timeout\""), std::string::npos);
  EXPECT_TRUE(t.judge(6, "closes", 500).ok);
}

TEST(DialsWithin, ARunWithoutDialsHolds) {
  Conns t;
  t.end(1'000'000);
  CheckResult r = t.judge(0);
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
}

// A real run at --time-scale 0.1: its trace is in wall time, a tenth of the story's; the
// window is a part of the story's time and is scaled with it.
TEST(DialsWithin, TheWindowIsScaledLikeTheRunsDurations) {
  Conns t;
  t.scale("0.1");
  t.dial(10000, "handler1", 1);  // 0.1 s of the story: warm-up
  t.dial(60000, "handler1", 2);  // 0.6 s of the story: after 0.5 s
  t.end(200000);
  EXPECT_TRUE(t.judge(1, "", 500).ok);
  EXPECT_FALSE(t.judge(0, "", 500).ok);
  EXPECT_TRUE(t.judge(0, "", 700).ok);
}

TEST(DialsWithin, AnOfThatIsNeitherDialsNorClosesIsALoadError) {
  std::string text = R"({"id": "x", "title": "x",
    "actors": [{"name": "A", "steps": [{"do": "command", "cmd": "PING"}]}],
    "checks": [{"check": "dials_within", "max": 1, "of": "dial"}]})";
  try {
    load_scenario_text(text, "x.json");
    FAIL() << "loaded";
  } catch (const std::exception& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("checks[0].of"), std::string::npos) << what;
    EXPECT_NE(what.find("expected \"dials\" or \"closes\""), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace redlab::scenario
