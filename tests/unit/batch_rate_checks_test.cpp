// The checks of issue 14's lessons pipeline-vs-multi and rate-limiter-window, on traces built
// by hand: each must fail on the input it exists to catch and hold on its near miss, from the
// typed fields it says it reads.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"

namespace redlab::scenario {
namespace {

TraceEvent event(TimeUs t, const std::string& kind, const std::string& actor, int64_t conn = -1) {
  TraceEvent e;
  e.time_us = t;
  e.kind = kind;
  e.actor = actor;
  e.connection = conn;
  return e;
}

// A trace under construction: a fake server "redis" (or a real one, whose lane has only what
// clients saw) and helpers for the events the checks read.
struct Built {
  Trace trace;
  int64_t next_span = 1;
  explicit Built(const std::string& source = "fake") {
    trace.append(
        event(0, "server_start", "redis").with(F::server, "redis").with(F::source, source));
  }
  void dial(const std::string& actor, int64_t conn) {
    TraceEvent e = event(0, "dial", actor, conn);
    e.span = next_span++;
    trace.append(std::move(e).with(F::server, "redis"));
  }
  // A client command; returns its span.
  int64_t command(TimeUs t, const std::string& actor, int64_t conn, std::vector<std::string> argv) {
    TraceEvent e = event(t, "command", actor, conn);
    e.span = next_span++;
    int64_t span = e.span;
    trace.append(std::move(e).with(F::argv, std::move(argv)));
    return span;
  }
  void reply(TimeUs t, const std::string& actor, int64_t conn, int64_t span,
             const std::string& text = "OK", bool error = false) {
    TraceEvent e = event(t, "reply", actor, conn);
    e.ends = span;
    e.with(F::reply, text);
    if (error) e.with(F::error, text);
    trace.append(std::move(e));
  }
  void served(TimeUs t, int64_t conn, const std::string& cmd, int64_t cause,
              const std::string& reason = "") {
    TraceEvent e = event(t, "served", "redis", conn);
    e.with(F::cmd, cmd).with(F::duration_us, 2).with(F::cause, cause);
    if (!reason.empty()) e.with(F::reason, reason);
    trace.append(std::move(e));
  }
  void sleep(TimeUs t, const std::string& actor) {
    TraceEvent e = event(t, "sleep", actor);
    e.span = next_span++;
    trace.append(std::move(e).with(F::duration_us, 1000));
  }
  void key_set(TimeUs t, const std::string& key, int64_t cause) {
    trace.append(event(t, "key_set", "redis")
                     .with(F::key, key)
                     .with(F::type, "string")
                     .with(F::value, "1")
                     .with(F::expire_at_ms, -1)
                     .with(F::cause, cause));
  }
};

CheckResult judge(const Built& b, const std::string& kind, CheckArgs args) {
  TraceIndex ix(b.trace);
  return run_check(kind, args, ix);
}

CheckArgs actor_a(int64_t max_round_trips = 1) {
  CheckArgs a;
  a.text["actor"] = "A";
  a.number["max_round_trips"] = max_round_trips;
  return a;
}

// ---- batch_not_interleaved ----

TEST(BatchChecks, AnotherClientsCommandBetweenAPipelinesCommandsIsAViolation) {
  Built b;
  b.dial("A", 1);
  b.dial("B", 2);
  int64_t decr = b.command(1000, "A", 1, {"DECR", "stock:42"});
  int64_t lpush = b.command(1000, "A", 1, {"LPUSH", "orders:pending", "o1"});
  int64_t get = b.command(1100, "B", 2, {"GET", "stock:42"});
  b.served(1200, 1, "DECR", decr);
  b.served(1300, 2, "GET", get);
  b.served(1400, 1, "LPUSH", lpush);
  b.reply(1500, "A", 1, decr);
  b.reply(1500, "A", 1, lpush);
  CheckResult r = judge(b, "batch_not_interleaved", actor_a());
  ASSERT_TRUE(r.judged) << r.summary;
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].who, (std::vector<std::string>{"A", "B"}));
  EXPECT_NE(r.violations[0].text.find("B's GET"), std::string::npos) << r.violations[0].text;
  EXPECT_NE(r.violations[0].text.find("between A's DECR and LPUSH"), std::string::npos);
  // The same round trips, with B's command served after the batch: nothing in between.
  Built after;
  after.dial("A", 1);
  after.dial("B", 2);
  decr = after.command(1000, "A", 1, {"DECR", "stock:42"});
  lpush = after.command(1000, "A", 1, {"LPUSH", "orders:pending", "o1"});
  get = after.command(1100, "B", 2, {"GET", "stock:42"});
  after.served(1200, 1, "DECR", decr);
  after.served(1250, 1, "LPUSH", lpush);
  after.served(1300, 2, "GET", get);
  CheckResult ok = judge(after, "batch_not_interleaved", actor_a());
  EXPECT_TRUE(ok.judged && ok.ok) << ok.summary;
}

TEST(BatchChecks, CommandsQueuedByMultiRunInsideExec) {
  Built b;
  b.dial("A", 1);
  b.dial("B", 2);
  int64_t multi = b.command(1000, "A", 1, {"MULTI"});
  int64_t decr = b.command(1000, "A", 1, {"DECR", "stock:42"});
  int64_t lpush = b.command(1000, "A", 1, {"LPUSH", "orders:pending", "o1"});
  int64_t exec = b.command(1000, "A", 1, {"EXEC"});
  int64_t get = b.command(1100, "B", 2, {"GET", "stock:42"});
  b.served(1200, 1, "MULTI", multi);
  b.served(1210, 1, "DECR", decr, "queued");
  b.served(1300, 2, "GET", get);  // between A's MULTI and EXEC: it ran before DECR did
  b.served(1310, 1, "LPUSH", lpush, "queued");
  b.served(1400, 1, "EXEC", exec);
  CheckResult r = judge(b, "batch_not_interleaved", actor_a());
  EXPECT_TRUE(r.judged && r.ok) << r.summary;
  // A queued command of another client is not one that ran.
  Built q;
  q.dial("A", 1);
  q.dial("B", 2);
  decr = q.command(1000, "A", 1, {"DECR", "stock:42"});
  lpush = q.command(1000, "A", 1, {"LPUSH", "orders:pending", "o1"});
  get = q.command(1100, "B", 2, {"GET", "stock:42"});
  q.served(1200, 1, "DECR", decr);
  q.served(1300, 2, "GET", get, "queued");
  q.served(1400, 1, "LPUSH", lpush);
  EXPECT_TRUE(judge(q, "batch_not_interleaved", actor_a()).ok);
}

TEST(BatchChecks, SleepsSeparateBatchesAndOnlyTheirInsidesCount) {
  Built b;
  b.dial("A", 1);
  b.dial("B", 2);
  int64_t first = b.command(1000, "A", 1, {"INCR", "x"});
  b.served(1100, 1, "INCR", first);
  b.reply(1200, "A", 1, first);
  b.sleep(1200, "A");
  int64_t get = b.command(1300, "B", 2, {"GET", "x"});
  b.served(1400, 2, "GET", get);  // between A's two batches, not inside one
  int64_t second = b.command(2200, "A", 1, {"INCR", "x"});
  b.served(2300, 1, "INCR", second);
  b.reply(2400, "A", 1, second);
  CheckResult r = judge(b, "batch_not_interleaved", actor_a());
  EXPECT_TRUE(r.judged && r.ok) << r.summary;
  EXPECT_NE(r.summary.find("2 batches"), std::string::npos) << r.summary;
}

TEST(BatchChecks, OnARealServerTheOrderIsNotJudgedHere) {
  Built b("clients");
  b.dial("A", 1);
  int64_t decr = b.command(1000, "A", 1, {"DECR", "stock:42"});
  b.reply(1500, "A", 1, decr);
  CheckResult r = judge(b, "batch_not_interleaved", actor_a());
  EXPECT_FALSE(r.judged);
  EXPECT_TRUE(r.backend_lacks);
  Built none;
  EXPECT_FALSE(judge(none, "batch_not_interleaved", actor_a()).judged);
}

// ---- batch_round_trips ----

TEST(BatchChecks, ACommandSentAfterAReplyIsAnotherRoundTrip) {
  Built one_by_one;
  one_by_one.dial("A", 1);
  int64_t hello = one_by_one.command(500, "A", 1, {"HELLO", "2"});  // the handshake: no batch
  one_by_one.reply(700, "A", 1, hello);
  int64_t decr = one_by_one.command(1000, "A", 1, {"DECR", "stock:42"});
  one_by_one.reply(1300, "A", 1, decr);
  int64_t lpush = one_by_one.command(1300, "A", 1, {"LPUSH", "orders:pending", "o1"});
  one_by_one.reply(1600, "A", 1, lpush);
  CheckResult r = judge(one_by_one, "batch_round_trips", actor_a());
  ASSERT_TRUE(r.judged) << r.summary;
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].text.find("2 round trips (0.60 ms)"), std::string::npos)
      << r.violations[0].text;
  EXPECT_TRUE(judge(one_by_one, "batch_round_trips", actor_a(2)).ok);

  Built pipeline;
  pipeline.dial("A", 1);
  decr = pipeline.command(1000, "A", 1, {"DECR", "stock:42"});
  lpush = pipeline.command(1000, "A", 1, {"LPUSH", "orders:pending", "o1"});
  pipeline.reply(1300, "A", 1, decr);
  pipeline.reply(1310, "A", 1, lpush);
  CheckResult p = judge(pipeline, "batch_round_trips", actor_a());
  EXPECT_TRUE(p.judged && p.ok) << p.summary;
  EXPECT_NE(p.summary.find("at most 1 round trip (0.31 ms each)"), std::string::npos) << p.summary;
}

TEST(BatchChecks, ActorNamesAnInstanceOrEveryInstance) {
  Built b;
  b.dial("reader1", 1);
  b.dial("reader12", 2);
  b.dial("readerX", 3);
  for (auto [actor, conn] :
       {std::pair<std::string, int64_t>{"reader1", 1}, {"reader12", 2}, {"readerX", 3}}) {
    int64_t get = b.command(1000, actor, conn, {"GET", "x"});
    b.reply(1100, actor, conn, get);
    int64_t llen = b.command(1100, actor, conn, {"LLEN", "y"});
    b.reply(1200, actor, conn, llen);
  }
  CheckArgs all = actor_a();
  all.text["actor"] = "reader";
  CheckResult r = judge(b, "batch_round_trips", all);
  EXPECT_EQ(r.violations.size(), 2u) << r.summary;  // reader1 and reader12, not readerX
  all.text["actor"] = "reader1";
  EXPECT_EQ(judge(b, "batch_round_trips", all).violations.size(), 1u);
}

// ---- rate_within_limit ----

CheckArgs limit_args(int64_t limit, int64_t window_ms, int64_t at_least = 0) {
  CheckArgs a;
  a.text["key"] = "api:served";
  a.number["limit"] = limit;
  a.number["window_ms"] = window_ms;
  a.number["at_least"] = at_least;
  return a;
}

TEST(RateCheck, MoreThanTheLimitInAnySlidingWindowIsAViolation) {
  Built b;
  b.dial("user", 1);
  for (TimeUs t : {0, 500'000, 900'000}) {
    int64_t incr = b.command(t, "user", 1, {"INCR", "api:served"});
    b.key_set(t + 100, "api:served", incr);
  }
  CheckResult r = judge(b, "rate_within_limit", limit_args(2, 1000));
  ASSERT_TRUE(r.judged);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].text.find("3 requests let through"), std::string::npos)
      << r.violations[0].text;
  EXPECT_TRUE(judge(b, "rate_within_limit", limit_args(3, 1000)).ok);
  // The window slides: windows fixed at 0 s and 1 s hold 3 and 2, but 0.8 s .. 1.2 s holds 4.
  Built sliding;
  sliding.dial("user", 1);
  for (TimeUs t : {100'000, 800'000, 900'000, 1'100'000, 1'200'000}) {
    int64_t incr = sliding.command(t, "user", 1, {"INCR", "api:served"});
    sliding.key_set(t + 100, "api:served", incr);
  }
  CheckResult s = judge(sliding, "rate_within_limit", limit_args(3, 1000));
  EXPECT_FALSE(s.ok) << s.summary;
  ASSERT_EQ(s.violations.size(), 1u);
  EXPECT_EQ(s.violations[0].from_us, 800'100);
}

TEST(RateCheck, RequestsAWindowApartAndExpiriesAreNotCounted) {
  Built b;
  b.dial("user", 1);
  for (TimeUs t : {0, 1'000'000, 2'000'000}) {
    int64_t incr = b.command(t, "user", 1, {"INCR", "api:served"});
    b.key_set(t, "api:served", incr);
  }
  b.key_set(1'500'000, "api:served", 0);  // the server itself (no command): not a request
  CheckResult r = judge(b, "rate_within_limit", limit_args(1, 1000));
  EXPECT_TRUE(r.judged && r.ok) << r.summary;
  EXPECT_NE(r.summary.find("3 in all"), std::string::npos) << r.summary;
}

TEST(RateCheck, ALimiterThatLetsTooFewThroughFailsAtLeast) {
  Built b;
  b.dial("user", 1);
  int64_t incr = b.command(0, "user", 1, {"INCR", "api:served"});
  b.key_set(100, "api:served", incr);
  CheckResult r = judge(b, "rate_within_limit", limit_args(10, 1000, 2));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("only 1 requests let through"), std::string::npos) << r.summary;
  // Nothing at all let through and no floor: nothing to judge.
  Built none;
  EXPECT_FALSE(judge(none, "rate_within_limit", limit_args(10, 1000)).judged);
  EXPECT_FALSE(judge(none, "rate_within_limit", limit_args(10, 1000, 1)).ok);
}

TEST(RateCheck, OnARealServerTheAnsweredWritesCountOnTheScaledClock) {
  Built b("clients");
  b.trace.set_meta("time_scale", "0.1");
  b.dial("user", 1);
  for (TimeUs t : {0, 50'000, 90'000}) {
    int64_t incr = b.command(t, "user", 1, {"INCR", "api:served"});
    b.reply(t + 200, "user", 1, incr, "(integer) 1");
  }
  int64_t refused = b.command(95'000, "user", 1, {"INCR", "api:served"});
  b.reply(95'200, "user", 1, refused, "OOM command not allowed", true);  // not a write
  int64_t other = b.command(96'000, "user", 1, {"GET", "other"});
  b.reply(96'200, "user", 1, other, "nil");
  // A 1000 ms window at a tenth of the time is 100 ms: three writes within 90 ms.
  CheckResult r = judge(b, "rate_within_limit", limit_args(2, 1000));
  ASSERT_TRUE(r.judged);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("as seen by clients"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("3 requests"), std::string::npos) << r.summary;
  EXPECT_TRUE(judge(b, "rate_within_limit", limit_args(2, 800)).ok);
}

}  // namespace
}  // namespace redlab::scenario
