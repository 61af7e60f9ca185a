// mutual_exclusion on Redlock holds (checks/common.cpp, redlock_hold): judged on small
// hand-made traces of five masters that must fail and must pass. A hold begins when the
// holder's token is on a quorum of the servers (their own key events) and ends at its validity
// end at the latest; a hold believed in with the token on fewer servers than the quorum is a
// violation of its own. acquire_took_lock judges every server a Redlock counted as taken.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"

namespace redlab::scenario {
namespace {

const std::vector<std::string> kMasters = {"m1", "m2", "m3", "m4", "m5"};

class Builder {
 public:
  explicit Builder(const std::string& source = "fake") {
    for (const std::string& m : kMasters)
      t_.append(TraceEvent{0, "server_start", m, -1, -1, -1, ""}
                    .with(F::server, m)
                    .with(F::source, source));
  }
  // The actor's SET on `server` and, if it took, the server's key_set of its token.
  void set(TimeUs at, const std::string& actor, const std::string& server, const std::string& token,
           bool took = true) {
    TraceEvent c{at, "command", actor, conn_++, 0, 0, ""};
    c.span = t_.new_span();
    int64_t cause = c.span;
    t_.append(std::move(c).with(
        F::argv, std::vector<std::string>{"SET", "lock:report", token, "NX", "PX", "10000"}));
    if (took)
      t_.append(TraceEvent{at + 300, "key_set", server, -1, -1, -1, ""}
                    .with(F::key, "lock:report")
                    .with(F::type, "string")
                    .with(F::value, token)
                    .with(F::expire_at_ms, 1767225610000)
                    .with(F::cause, cause));
  }
  void expired(TimeUs at, const std::string& server, const std::string& token) {
    t_.append(TraceEvent{at, "key_expired", server, -1, -1, -1, ""}
                  .with(F::key, "lock:report")
                  .with(F::type, "string")
                  .with(F::value, token)
                  .with(F::expire_at_ms, 1767225610000));
  }
  // lock_acquire .. lock_acquired (begins the hold); returns the hold's span.
  int64_t acquire_begin(TimeUs at, const std::string& actor, const std::string& token) {
    TraceEvent b{at, "lock_acquire", actor, -1, 0, -1, ""};
    b.span = t_.new_span();
    int64_t span = b.span;
    t_.append(std::move(b)
                  .with(F::lock, "lock:report")
                  .with(F::token, token)
                  .with(F::servers, kMasters)
                  .with(F::quorum, 3));
    return span;
  }
  int64_t acquired(TimeUs at, const std::string& actor, const std::string& token,
                   std::vector<std::string> took, int64_t begun, TimeUs until_us,
                   int64_t quorum = 3) {
    TraceEvent e{at, "lock_acquired", actor, -1, 0, 0, ""};
    e.span = t_.new_span();
    e.ends = begun;
    int64_t span = e.span;
    t_.append(std::move(e)
                  .with(F::lock, "lock:report")
                  .with(F::token, token)
                  .with(F::servers, std::move(took))
                  .with(F::quorum, quorum)
                  .with(F::until_us, until_us));
    return span;
  }
  void hold_end(TimeUs at, const std::string& actor, int64_t hold) {
    TraceEvent e{at, "hold_end", actor, -1, -1, -1, ""};
    e.ends = hold;
    t_.append(std::move(e).with(F::lock, "lock:report").with(F::reason, "released"));
  }
  CheckResult judge(const char* kind) const {
    TraceIndex ix(t_);
    const CheckKind* k = find_check(kind);
    EXPECT_NE(k, nullptr);
    CheckArgs a;
    a.text["lock"] = "lock:report";
    return k ? k->run(a, ix) : CheckResult{};
  }

 private:
  Trace t_;
  int64_t conn_ = 1;
};

// Kleppmann's story: A takes m1..m3; m3's key expires early (its clock jumped); B takes m3..m5
// while A is within its validity. Two majorities, each on the servers' record.
TEST(RedlockMutualExclusion, TwoMajoritiesWithinValidityAreAViolation) {
  Builder b;
  int64_t a_begin = b.acquire_begin(100'000, "A", "tokA");
  for (const char* m : {"m1", "m2", "m3"}) b.set(100'000, "A", m, "tokA");
  int64_t a = b.acquired(150'000, "A", "tokA", {"m1", "m2", "m3"}, a_begin, 9'950'000);
  b.expired(2'000'000, "m3", "tokA");
  int64_t b_begin = b.acquire_begin(2'500'000, "B", "tokB");
  for (const char* m : {"m3", "m4", "m5"}) b.set(2'500'000, "B", m, "tokB");
  int64_t bh = b.acquired(2'550'000, "B", "tokB", {"m3", "m4", "m5"}, b_begin, 12'400'000);
  b.hold_end(5'200'000, "A", a);
  b.hold_end(8'600'000, "B", bh);
  CheckResult r = b.judge("mutual_exclusion");
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  // From B's quorum on the servers (its third key_set, at 2.5003 s) to A's release.
  EXPECT_EQ(r.violations[0].from_us, 2'500'300);
  EXPECT_EQ(r.violations[0].to_us, 5'200'000);
  EXPECT_EQ(r.violations[0].who, (std::vector<std::string>{"A", "B"}));
}

// A process pause: A believes it holds the lock until it wakes at 17 s, but its validity ended
// at 9.95 s, before the masters forgot its keys; B's majority after that is no overlap.
TEST(RedlockMutualExclusion, AHoldEndsAtItsValidityEnd) {
  Builder b;
  int64_t a_begin = b.acquire_begin(100'000, "A", "tokA");
  for (const char* m : {"m1", "m2", "m3"}) b.set(100'000, "A", m, "tokA");
  int64_t a = b.acquired(150'000, "A", "tokA", {"m1", "m2", "m3"}, a_begin, 9'950'000);
  for (const char* m : {"m1", "m2", "m3"}) b.expired(10'100'300, m, "tokA");
  int64_t b_begin = b.acquire_begin(10'200'000, "B", "tokB");
  for (const char* m : {"m3", "m4", "m5"}) b.set(10'200'000, "B", m, "tokB");
  int64_t bh = b.acquired(10'250'000, "B", "tokB", {"m3", "m4", "m5"}, b_begin, 20'100'000);
  b.hold_end(17'000'000, "A", a);
  b.hold_end(16'300'000, "B", bh);
  CheckResult r = b.judge("mutual_exclusion");
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
}

// A wrong quorum: B believes in the lock with its token on two masters only. Its hold is a
// violation of its own, even where it overlaps nobody.
TEST(RedlockMutualExclusion, ABeliefBelowTheQuorumOnTheServersIsAViolation) {
  Builder b;
  int64_t b_begin = b.acquire_begin(2'500'000, "B", "tokB");
  for (const char* m : {"m4", "m5"}) b.set(2'500'000, "B", m, "tokB");
  b.set(2'500'000, "B", "m3", "tokB", /*took=*/false);
  int64_t bh = b.acquired(2'550'000, "B", "tokB", {"m4", "m5"}, b_begin, 12'400'000, 2);
  b.hold_end(8'600'000, "B", bh);
  CheckResult r = b.judge("mutual_exclusion");
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_NE(r.violations[0].text.find("on 2 of the servers then, below the quorum of 3"),
            std::string::npos)
      << r.violations[0].text;
  // It claimed a quorum of 2; the check takes the quorum of the five servers it tried.
}

// The same acquisitions on a real server (no key events): the beliefs, cut at validity.
TEST(RedlockMutualExclusion, OnARealServerTheBeliefsWithinValidityAreJudged) {
  Builder b("clients");
  int64_t a_begin = b.acquire_begin(100'000, "A", "tokA");
  int64_t a = b.acquired(150'000, "A", "tokA", {"m1", "m2", "m3"}, a_begin, 9'950'000);
  int64_t b_begin = b.acquire_begin(2'500'000, "B", "tokB");
  int64_t bh = b.acquired(2'550'000, "B", "tokB", {"m3", "m4", "m5"}, b_begin, 12'400'000);
  b.hold_end(5'200'000, "A", a);
  b.hold_end(8'600'000, "B", bh);
  CheckResult r = b.judge("mutual_exclusion");
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].from_us, 2'550'000);
}

// acquire_took_lock: every server a Redlock counted as taken has its token on record.
TEST(RedlockAcquireTookLock, AServerCountedButNotSetIsAViolation) {
  Builder b;
  int64_t a_begin = b.acquire_begin(100'000, "A", "tokA");
  for (const char* m : {"m1", "m2"}) b.set(100'000, "A", m, "tokA");
  b.set(100'000, "A", "m3", "tokA", /*took=*/false);
  b.acquired(150'000, "A", "tokA", {"m1", "m2", "m3"}, a_begin, 9'950'000);
  CheckResult r = b.judge("acquire_took_lock");
  EXPECT_FALSE(r.ok) << r.summary;
  EXPECT_NE(r.summary.find("on m3"), std::string::npos) << r.summary;

  Builder good;
  a_begin = good.acquire_begin(100'000, "A", "tokA");
  for (const char* m : {"m1", "m2", "m3"}) good.set(100'000, "A", m, "tokA");
  good.acquired(150'000, "A", "tokA", {"m1", "m2", "m3"}, a_begin, 9'950'000);
  CheckResult ok = good.judge("acquire_took_lock");
  EXPECT_TRUE(ok.ok) << ok.summary;
}

}  // namespace
}  // namespace redlab::scenario
