// no_wait_behind (timeout-does-not-cancel): judged on small hand-made traces that must fail and
// must pass: a command queued behind another client's slow command, one delayed by the network
// or by its own actor's command (neither counts), a wait under the bound, a real server's trace
// (no server record) and a trace with nothing served.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"

namespace redlab::scenario {
namespace {

class Builder {
 public:
  explicit Builder(const std::string& source = "fake") {
    t_.append(TraceEvent{0, "server_start", "redis", -1, -1, -1, ""}
                  .with(F::server, "redis")
                  .with(F::source, source));
  }
  int64_t command(TimeUs at, const std::string& actor, std::vector<std::string> argv) {
    TraceEvent e{at, "command", actor, 1, 0, 0, ""};
    e.span = t_.new_span();
    int64_t span = e.span;
    t_.append(std::move(e).with(F::argv, std::move(argv)));
    return span;
  }
  void served(TimeUs at, const std::string& cmd, int64_t cause, int64_t duration_us) {
    TraceEvent e{at, "served", "redis", 1, -1, -1, ""};
    e.with(F::cmd, cmd).with(F::duration_us, duration_us);
    t_.append(std::move(e).with(F::cause, cause));
  }
  CheckResult judge(int64_t max_ms) const {
    TraceIndex ix(t_);
    const CheckKind* k = find_check("no_wait_behind");
    EXPECT_NE(k, nullptr);
    CheckArgs a;
    a.number["max_ms"] = max_ms;
    return k ? k->run(a, ix) : CheckResult{};
  }

 private:
  Trace t_;
};

TEST(NoWaitBehind, AReadQueuedBehindAnotherClientsSlowCommandIsAViolation) {
  Builder b;
  int64_t keys = b.command(1'000'000, "report", {"KEYS", "*"});
  b.served(1'000'300, "KEYS", keys, 2'000'000);
  int64_t get = b.command(1'100'000, "handler1", {"GET", "cache:page:1"});
  b.served(3'000'300, "GET", get, 2);
  CheckResult r = b.judge(100);
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].who, (std::vector<std::string>{"handler1", "report"}));
  EXPECT_NE(r.violations[0].text.find("KEYS"), std::string::npos) << r.violations[0].text;
  EXPECT_EQ(r.violations[0].from_us, 1'100'000);
  EXPECT_EQ(r.violations[0].to_us, 3'000'300);
}

TEST(NoWaitBehind, AWaitUnderTheBoundHolds) {
  Builder b;
  int64_t scan = b.command(1'000'000, "report", {"SCAN", "0"});
  b.served(1'000'300, "SCAN", scan, 20'000);
  int64_t get = b.command(1'001'000, "handler1", {"GET", "cache:page:1"});
  b.served(1'020'300, "GET", get, 2);
  CheckResult r = b.judge(100);
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
}

TEST(NoWaitBehind, TheNetworkAndTheActorsOwnCommandsDoNotCount) {
  Builder b;
  // A slow command of the same actor (its own pipeline) and a late arrival with the server idle.
  int64_t own = b.command(1'000'000, "report", {"KEYS", "*"});
  b.served(1'000'300, "KEYS", own, 500'000);
  int64_t next = b.command(1'000'001, "report", {"GET", "x"});
  b.served(1'500'300, "GET", next, 2);
  int64_t late = b.command(2'000'000, "handler1", {"GET", "cache:page:1"});
  b.served(2'400'000, "GET", late, 2);
  CheckResult r = b.judge(100);
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
}

TEST(NoWaitBehind, ManyShortCommandsAddUp) {
  Builder b;
  int64_t get = b.command(1'000'000, "handler1", {"GET", "cache:page:1"});
  TimeUs t = 1'000'300;
  for (int i = 0; i < 3; i++) {
    int64_t batch = b.command(t - 300, "report", {"SCAN", "0"});
    b.served(t, "SCAN", batch, 50'000);
    t += 50'000;
  }
  b.served(t, "GET", get, 2);
  CheckResult r = b.judge(100);
  EXPECT_FALSE(r.ok) << r.summary;
}

TEST(NoWaitBehind, ARealServerHasNoRecordToJudgeFrom) {
  Builder b("clients");
  b.command(1000, "handler1", {"GET", "cache:page:1"});
  CheckResult r = b.judge(100);
  EXPECT_FALSE(r.judged);
  EXPECT_TRUE(r.backend_lacks);
}

TEST(NoWaitBehind, NothingServedIsNotJudged) {
  Builder b;
  b.command(1000, "handler1", {"GET", "cache:page:1"});
  CheckResult r = b.judge(100);
  EXPECT_FALSE(r.judged);
  EXPECT_FALSE(r.backend_lacks);
}

}  // namespace
}  // namespace redlab::scenario
