// processed_once and key_final (streams-consumer-crash, idempotency-key-crash): judged on
// small hand-made traces that must fail and must pass, and on the lessons' own runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"

namespace redlab::scenario {
namespace {

// A trace written by hand: XADDs (publish .. published), resource writes, a server's keys.
class Hand {
 public:
  Hand() {
    t_.append(TraceEvent{0, "server_start", "redis", -1, -1, -1, ""}
                  .with(F::server, "redis")
                  .with(F::source, source_)
                  .with(F::clock_unix_ms, int64_t{1767225600000}));
  }
  explicit Hand(const std::string& source) : source_(source) {
    t_.append(TraceEvent{0, "server_start", "redis", -1, -1, -1, ""}
                  .with(F::server, "redis")
                  .with(F::source, source_));
  }
  // An XADD of `message` that the server answered with `id` ("" = it failed).
  void add(TimeUs at, const std::string& stream, const std::string& message,
           const std::string& id) {
    TraceEvent p{at, "publish", "shop", 0, -1, -1, ""};
    p.span = t_.new_span();
    int64_t span = p.span;
    t_.append(
        std::move(p).with(F::channel, stream).with(F::message, message).with(F::method, "stream"));
    TraceEvent d{at + 1000, "published", "shop", 0, -1, -1, ""};
    d.ends = span;
    if (id.empty())
      d.with(F::error, "ERR The ID specified in XADD is equal or smaller")
          .with(F::error_class, "server");
    else
      d.with(F::id, id);
    t_.append(std::move(d));
  }
  void write(TimeUs at, const std::string& actor, const std::string& resource,
             const std::string& value, bool accepted = true) {
    t_.append(
        TraceEvent{at, accepted ? "resource_accept" : "resource_reject", actor, -1, -1, -1, ""}
            .with(F::resource, resource)
            .with(F::fence, int64_t{0})
            .with(F::highest, int64_t{0})
            .with(F::value, value));
  }
  void key_set(TimeUs at, const std::string& key, const std::string& value, int64_t expire_at_ms) {
    t_.append(TraceEvent{at, "key_set", "redis", -1, -1, -1, ""}
                  .with(F::key, key)
                  .with(F::type, "string")
                  .with(F::value, value)
                  .with(F::expire_at_ms, expire_at_ms));
  }
  void key_expired(TimeUs at, const std::string& key, const std::string& value,
                   int64_t expire_at_ms) {
    t_.append(TraceEvent{at, "key_expired", "redis", -1, -1, -1, ""}
                  .with(F::key, key)
                  .with(F::type, "string")
                  .with(F::value, value)
                  .with(F::expire_at_ms, expire_at_ms));
  }
  // The engine's key_final event: the key's state when the run ends ("" type = absent).
  void key_final(TimeUs at, const std::string& key, const std::string& value,
                 int64_t expire_at_ms) {
    TraceEvent e{at, "key_final", "redis", -1, -1, -1, ""};
    e.with(F::server, "redis")
        .with(F::key, key)
        .with(F::source, source_ == "fake" ? "fake" : "server");
    if (!value.empty())
      e.with(F::type, "string").with(F::value, value).with(F::expire_at_ms, expire_at_ms);
    t_.append(std::move(e));
  }
  void end(TimeUs at) { t_.append(TraceEvent{at, "run_end", "", -1, -1, -1, ""}); }
  CheckResult judge(const std::string& kind, const CheckArgs& a) const {
    TraceIndex ix(t_);
    const CheckKind* k = find_check(kind);
    EXPECT_NE(k, nullptr);
    return k ? k->run(a, ix) : CheckResult{};
  }

 private:
  std::string source_ = "fake";
  Trace t_;
};

CheckArgs args(std::initializer_list<std::pair<const std::string, std::string>> text) {
  CheckArgs a;
  a.text = text;
  return a;
}

TEST(ProcessedOnce, AnEntryChargedByTwoConsumersIsAViolationNamingBoth) {
  Hand t;
  t.add(0, "orders", "order=1", "1-0");
  t.add(2000, "orders", "order=2", "1-1");
  t.write(300000, "C1", "ledger", "1-0");
  t.write(500000, "C1", "ledger", "1-1");
  t.write(6200000, "C2", "ledger", "1-0");  // reclaimed from C1's PEL and charged again
  t.end(10000000);
  CheckResult r = t.judge("processed_once", args({{"resource", "ledger"}, {"stream", "orders"}}));
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].who, (std::vector<std::string>{"C1", "C2"}));
  EXPECT_EQ(r.violations[0].from_us, 300000);
  EXPECT_EQ(r.violations[0].to_us, 6200000);
  EXPECT_NE(r.violations[0].text.find("1-0 (order=1) was processed 2 times"), std::string::npos)
      << r.violations[0].text;
}

TEST(ProcessedOnce, AnEntryNobodyProcessedIsAViolationAndAFailedXaddIsNotDue) {
  Hand t;
  t.add(0, "orders", "order=1", "1-0");
  t.add(2000, "orders", "order=2", "1-1");  // trimmed before anyone read it
  t.add(4000, "orders", "order=3", "");     // XADD failed: nothing was added
  t.write(300000, "C1", "ledger", "1-0");
  t.end(10000000);
  CheckResult r = t.judge("processed_once", args({{"resource", "ledger"}, {"stream", "orders"}}));
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].from_us, 2000);
  EXPECT_NE(r.violations[0].text.find("1 entry of orders was never processed"), std::string::npos)
      << r.violations[0].text;
  EXPECT_NE(r.violations[0].text.find("1-1 (order=2)"), std::string::npos);
  EXPECT_EQ(r.violations[0].text.find("order=3"), std::string::npos);
}

TEST(ProcessedOnce, ARejectedDuplicateIsNotAnEffectAndEveryEntryOnceHolds) {
  Hand t;
  t.add(0, "orders", "order=1", "1-0");
  t.add(2000, "orders", "order=2", "1-1");
  t.write(300000, "C1", "ledger", "1-0");
  t.write(6200000, "C2", "ledger", "1-0", /*accepted=*/false);  // the unique key refused it
  t.write(6400000, "C2", "ledger", "1-1");
  t.write(6500000, "C2", "other", "1-1");  // another resource: not this check's
  t.end(10000000);
  CheckResult r = t.judge("processed_once", args({{"resource", "ledger"}, {"stream", "orders"}}));
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
  EXPECT_NE(r.summary.find("every entry of orders (2)"), std::string::npos) << r.summary;
}

TEST(ProcessedOnce, AnEventNeverProcessedOrProcessedTwiceIsAViolation) {
  Hand never;
  never.end(40000000);
  CheckResult r =
      never.judge("processed_once", args({{"resource", "payments"}, {"event", "evt_1042"}}));
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("evt_1042 was never processed"), std::string::npos) << r.summary;

  Hand twice;
  twice.write(11100000, "delivery2", "payments", "evt_1042");
  twice.write(16200000, "delivery3", "payments", "evt_1042");
  twice.end(40000000);
  r = twice.judge("processed_once", args({{"resource", "payments"}, {"event", "evt_1042"}}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("evt_1042 was processed 2 times"), std::string::npos) << r.summary;

  Hand once;
  once.write(11100000, "delivery2", "payments", "evt_1042");
  once.end(40000000);
  r = once.judge("processed_once", args({{"resource", "payments"}, {"event", "evt_1042"}}));
  EXPECT_TRUE(r.ok) << r.summary;
}

TEST(ProcessedOnce, NothingToJudgeIsNotJudged) {
  Hand t;
  t.end(1000);
  CheckResult r = t.judge("processed_once", args({{"resource", "ledger"}, {"stream", "orders"}}));
  EXPECT_FALSE(r.judged);
  r = t.judge("processed_once", args({{"resource", "ledger"}}));
  EXPECT_FALSE(r.judged);
}

// The idempotency record's final state (idempotency-key-crash's event_done): the verdict from
// the key_final event, the story of an absent key from the server's own key events.
TEST(KeyFinal, AKeyThatEndsWithAnotherValueOrIsGoneIsAViolationSayingWhat) {
  const CheckArgs done = args({{"key", "idem:evt_1042"}, {"equals", "done"}});
  Hand started;
  started.key_set(1000, "idem:evt_1042", "started", 1767225600000 + 86400000);
  started.key_final(40000000, "idem:evt_1042", "started", 1767225600000 + 86400000);
  started.end(40000000);
  CheckResult r = started.judge("key_final", done);
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("idem:evt_1042 = started"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("of TTL left"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("expected done"), std::string::npos) << r.summary;

  Hand expired;
  expired.key_set(1000, "idem:evt_1042", "done", 1767225610000);
  expired.key_expired(10000000, "idem:evt_1042", "done", 1767225610000);
  expired.key_final(40000000, "idem:evt_1042", "", -1);
  expired.end(40000000);
  r = expired.judge("key_final", done);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("expired at 10.0 s"), std::string::npos) << r.summary;

  Hand never;
  never.key_final(40000000, "idem:evt_1042", "", -1);
  never.end(40000000);
  r = never.judge("key_final", done);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("never existed"), std::string::npos) << r.summary;
}

TEST(KeyFinal, TheFinalValueCountsAndARealServerIsJudgedFromItsOwnAnswer) {
  const CheckArgs done = args({{"key", "idem:evt_1042"}, {"equals", "done"}});
  Hand t;
  t.key_set(1000, "idem:evt_1042", "started", 1767225610000);
  t.key_set(7000000, "idem:evt_1042", "done", 1767225600000 + 86400000);
  t.key_final(40000000, "idem:evt_1042", "done", 1767225600000 + 86400000);
  t.end(40000000);
  CheckResult r = t.judge("key_final", done);
  EXPECT_TRUE(r.ok) << r.summary;

  // A real server: no key events, but its own answer after the run (TYPE, GET, PEXPIRETIME).
  Hand real("clients");
  real.key_final(40000000, "idem:evt_1042", "", -1);
  real.end(40000000);
  r = real.judge("key_final", done);
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("idem:evt_1042 does not exist"), std::string::npos) << r.summary;
  Hand real_done("clients");
  real_done.key_final(40000000, "idem:evt_1042", "done", 1767225600000 + 86400000);
  real_done.end(40000000);
  r = real_done.judge("key_final", done);
  EXPECT_TRUE(r.ok) << r.summary;

  // No key_final event (the run ended on an error before it): nothing to judge.
  Hand none("clients");
  none.end(40000000);
  r = none.judge("key_final", done);
  EXPECT_FALSE(r.judged);
}

}  // namespace
}  // namespace redlab::scenario
