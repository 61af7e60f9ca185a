// answered_within (cache-fallback): judged on small hand-made traces that must fail and must
// pass, and on the lesson's own runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"

namespace redlab::scenario {
namespace {

// A trace written by hand: requests (actor_start .. actor_end) and client calls in them.
class Requests {
 public:
  void start(TimeUs at, const std::string& actor) {
    t_.append(TraceEvent{at, "actor_start", actor, -1, -1, -1, "a request"});
  }
  void end(TimeUs at, const std::string& actor, const std::string& reason = "done") {
    t_.append(TraceEvent{at, "actor_end", actor, -1, -1, -1, reason}.with(F::reason, reason));
  }
  // A call from `from` to `to` ending in `error_class` ("" for a reply); `attempt` is the last
  // attempt's index.
  void call(TimeUs from, TimeUs to, const std::string& actor, const std::string& error_class,
            int64_t attempt = 0) {
    TraceEvent c{from, "call", actor, -1, 0, 0, ""};
    c.span = t_.new_span();
    int64_t span = c.span;
    t_.append(std::move(c).with(F::argv, std::vector<std::string>{"GET", "cache:user:42"}));
    TraceEvent r{to, "result", actor, -1, 0, attempt, ""};
    r.ends = span;
    if (error_class.empty())
      r.with(F::reply, "ann");
    else
      r.with(F::error, "i/o timeout").with(F::error_class, error_class);
    t_.append(std::move(r));
  }
  void scale(const std::string& x) { t_.set_meta("time_scale", x); }
  CheckResult judge(const std::string& actor, int64_t ms) const {
    TraceIndex ix(t_);
    const CheckKind* k = find_check("answered_within");
    EXPECT_NE(k, nullptr);
    CheckArgs a;
    a.text["actor"] = actor;
    a.number["ms"] = ms;
    return k ? k->run(a, ix) : CheckResult{};
  }

 private:
  Trace t_;
};

TEST(AnsweredWithin, ARequestAnsweredAfterTheBoundIsAViolationNamingItsLongestCall) {
  Requests t;
  t.start(0, "handler1");
  t.call(1000, 2000, "handler1", "");
  t.end(3000, "handler1");
  t.start(200000, "handler2");
  t.call(200500, 6300000, "handler2", "read_timeout", 1);
  t.end(6400000, "handler2");
  CheckResult r = t.judge("handler", 500);
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].who, std::vector<std::string>{"handler2"});
  EXPECT_EQ(r.violations[0].from_us, 200000);
  EXPECT_EQ(r.violations[0].to_us, 6400000);
  EXPECT_NE(r.violations[0].text.find("6200 ms"), std::string::npos) << r.violations[0].text;
  EXPECT_NE(r.violations[0].text.find("GET cache:user:42"), std::string::npos);
  EXPECT_NE(r.violations[0].text.find("read_timeout"), std::string::npos);
  EXPECT_NE(r.violations[0].text.find("2 attempts"), std::string::npos);
}

TEST(AnsweredWithin, EveryRequestWithinTheBoundHolds) {
  Requests t;
  t.start(0, "handler1");
  t.end(3000, "handler1");
  t.start(200000, "handler2");
  t.call(200500, 450000, "handler2", "context_deadline");
  t.end(551000, "handler2");
  CheckResult r = t.judge("handler", 500);
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
  EXPECT_NE(r.summary.find("2 requests"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("351 ms"), std::string::npos) << r.summary;
}

TEST(AnsweredWithin, TheBoundIsInclusive) {
  Requests t;
  t.start(0, "handler");
  t.end(500000, "handler");
  EXPECT_TRUE(t.judge("handler", 500).ok);
  Requests late;
  late.start(0, "handler");
  late.end(500001, "handler");
  EXPECT_FALSE(late.judge("handler", 500).ok);
}

// A real run at --time-scale 0.1 is told in tenths: its bound is a tenth too.
TEST(AnsweredWithin, TheBoundIsScaledLikeTheRunsDurations) {
  Requests t;
  t.scale("0.1");
  t.start(0, "handler");
  t.end(90000, "handler");  // 90 ms of wall clock: 900 ms of the story
  CheckResult r = t.judge("handler", 500);
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].text.find("50 ms (the run's time scale 0.1)"), std::string::npos)
      << r.violations[0].text;
  Requests fast;
  fast.scale("0.1");
  fast.start(0, "handler");
  fast.end(35000, "handler");
  EXPECT_TRUE(fast.judge("handler", 500).ok);
}

TEST(AnsweredWithin, ARequestStillOpenAtTheEndIsAViolation) {
  Requests t;
  t.start(0, "handler");
  t.call(100, 9000000, "handler", "read_timeout");
  CheckResult r = t.judge("handler", 500);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].text.find("had not answered"), std::string::npos);
}

TEST(AnsweredWithin, AnAbandonedRequestIsNoAnswerHoweverFast) {
  Requests t;
  t.start(0, "handler");
  t.end(1000, "handler", "abandoned: the lock was lost");
  CheckResult r = t.judge("handler", 500);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].text.find("gave up"), std::string::npos);
}

TEST(AnsweredWithin, OnlyTheNamedActorsInstancesCount) {
  Requests t;
  t.start(0, "handler");
  t.end(100000, "handler");
  t.start(0, "handlerX");  // another actor whose name begins alike
  t.end(9000000, "handlerX");
  t.start(0, "profile");
  t.end(9000000, "profile");
  EXPECT_TRUE(t.judge("handler", 500).ok);
  EXPECT_FALSE(t.judge("profile", 500).ok);
}

TEST(AnsweredWithin, NoRequestIsNotJudged) {
  Requests t;
  t.start(0, "profile");
  t.end(1000, "profile");
  CheckResult r = t.judge("handler", 500);
  EXPECT_FALSE(r.judged);
}

}  // namespace
}  // namespace redlab::scenario
