// The checks of multi-no-rollback and cas-version (writes_together, no_unseen_overwrite,
// all_recorded): each judged on small hand-made traces that must fail and must pass, on a
// trace from a real server (which has no server record), and on the lessons' own runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/checks.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {
namespace {

// A trace written by hand: one server ("fake": its own key events, or "clients": a real one),
// commands by actors, and what the server did for them.
class Builder {
 public:
  explicit Builder(const std::string& source = "fake") {
    t_.append(TraceEvent{0, "server_start", "redis", -1, -1, -1, ""}
                  .with(F::server, "redis")
                  .with(F::source, source));
  }
  // A client command; returns its span (the `cause` of what the server does for it).
  int64_t command(TimeUs at, const std::string& actor, std::vector<std::string> argv) {
    TraceEvent e{at, "command", actor, 1, 0, 0, ""};
    e.span = t_.new_span();
    int64_t span = e.span;
    t_.append(std::move(e).with(F::argv, std::move(argv)));
    return span;
  }
  void served(TimeUs at, const std::string& cmd, int64_t cause, const std::string& reason = {}) {
    TraceEvent e{at, "served", "redis", 1, -1, -1, ""};
    e.with(F::cmd, cmd).with(F::duration_us, 2);
    if (!reason.empty()) e.with(F::reason, reason);
    t_.append(std::move(e).with(F::cause, cause));
  }
  void key_set(TimeUs at, const std::string& key, const std::string& value, int64_t cause) {
    TraceEvent e{at, "key_set", "redis", 1, -1, -1, ""};
    e.with(F::key, key).with(F::type, "string").with(F::value, value).with(F::expire_at_ms, -1);
    if (cause) e.with(F::cause, cause);
    t_.append(std::move(e));
  }
  void record(TimeUs at, const std::string& actor, const std::string& name) {
    t_.append(TraceEvent{at, "record", actor, -1, -1, -1, ""}.with(F::record, name));
  }
  CheckResult judge(const std::string& kind, CheckArgs args) const {
    TraceIndex ix(t_);
    const CheckKind* k = find_check(kind);
    EXPECT_NE(k, nullptr) << kind;
    return k ? k->run(args, ix) : CheckResult{};
  }

 private:
  Trace t_;
};

CheckArgs texts(std::map<std::string, std::string> t) {
  CheckArgs a;
  a.text = std::move(t);
  return a;
}

// ---- writes_together ----

TEST(WritesTogether, AnExecThatChangedOneKeyOnlyIsAViolation) {
  Builder b;
  int64_t exec = b.command(1000, "buyer2", {"EXEC"});
  b.key_set(1100, "stock:42", "98", exec);
  b.served(1100, "EXEC", exec);
  CheckResult r =
      b.judge("writes_together", texts({{"key", "stock:42"}, {"with", "orders:pending"}}));
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok) << r.summary;
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].who, std::vector<std::string>{"buyer2"});
  EXPECT_NE(r.summary.find("buyer2's transaction (EXEC) at 1 ms changed stock:42 but not "
                           "orders:pending"),
            std::string::npos)
      << r.summary;
}

TEST(WritesTogether, AScriptThatChangedBothHoldsAndAPlainCommandIsNotAUnit) {
  Builder b;
  int64_t legacy = b.command(500, "legacy", {"SET", "orders:pending", "paused"});
  b.key_set(600, "orders:pending", "paused", legacy);
  b.served(600, "SET", legacy);
  int64_t script = b.command(1000, "buyer1", {"EVALSHA", "abc", "2", "stock:42", "orders:pending"});
  b.key_set(1100, "stock:42", "99", script);
  b.key_set(1100, "orders:pending", "[order-9001]", script);
  b.served(1100, "EVALSHA", script);
  CheckResult r =
      b.judge("writes_together", texts({{"key", "stock:42"}, {"with", "orders:pending"}}));
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
  EXPECT_NE(r.summary.find("1 transaction or script call"), std::string::npos) << r.summary;
}

TEST(WritesTogether, AScriptThatChangedOnlyTheOtherKeyIsAViolationToo) {
  Builder b;
  int64_t script = b.command(1000, "buyer1", {"EVAL", "...", "2", "stock:42", "orders:pending"});
  b.key_set(1100, "orders:pending", "[order-9001]", script);
  b.served(1100, "EVAL", script);
  CheckResult r =
      b.judge("writes_together", texts({{"key", "stock:42"}, {"with", "orders:pending"}}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("changed orders:pending but not stock:42"), std::string::npos)
      << r.summary;
}

TEST(WritesTogether, AnAbortedExecIsJudgedAndHolds) {
  Builder b;
  int64_t exec = b.command(1000, "buyer2", {"EXEC"});
  b.served(1100, "EXEC", exec);
  CheckResult r =
      b.judge("writes_together", texts({{"key", "stock:42"}, {"with", "orders:pending"}}));
  EXPECT_TRUE(r.judged);
  EXPECT_TRUE(r.ok) << r.summary;
}

TEST(WritesTogether, NothingReachedTheServerIsNotJudged) {
  Builder b;
  CheckResult r =
      b.judge("writes_together", texts({{"key", "stock:42"}, {"with", "orders:pending"}}));
  EXPECT_FALSE(r.judged);
}

TEST(WritesTogether, ARealServerHasNoRecordToJudgeFrom) {
  Builder b("clients");
  b.command(1000, "buyer2", {"EXEC"});
  CheckResult r =
      b.judge("writes_together", texts({{"key", "stock:42"}, {"with", "orders:pending"}}));
  EXPECT_FALSE(r.judged);
  EXPECT_TRUE(r.backend_lacks);
}

// ---- no_unseen_overwrite ----

TEST(NoUnseenOverwrite, AWriteOverAChangeTheWriterNeverReadIsALostUpdate) {
  Builder b;
  int64_t r1 = b.command(100, "clerk1", {"HGET", "account:7", "balance"});
  b.served(200, "HGET", r1);
  int64_t r2 = b.command(100, "clerk2", {"HGET", "account:7", "balance"});
  b.served(210, "HGET", r2);
  int64_t w1 = b.command(100000, "clerk1", {"EVALSHA", "abc", "1", "account:7", "1", "110"});
  b.key_set(100100, "account:7", "{balance: 110, version: 1}", w1);
  b.key_set(100100, "account:7", "{balance: 110, version: 2}", w1);  // one command, two events
  b.served(100100, "EVALSHA", w1);
  int64_t w2 = b.command(100050, "clerk2", {"EVALSHA", "abc", "1", "account:7", "1", "120"});
  b.key_set(100200, "account:7", "{balance: 120, version: 2}", w2);
  b.served(100200, "EVALSHA", w2);
  CheckResult r = b.judge("no_unseen_overwrite", texts({{"key", "account:7"}}));
  EXPECT_TRUE(r.judged);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.violations.size(), 1u) << r.summary;  // clerk1's second event is its own write
  EXPECT_EQ(r.violations[0].who, (std::vector<std::string>{"clerk2", "clerk1"}));
  EXPECT_NE(r.summary.find("clerk2's script (EVALSHA) at 100 ms wrote account:7 over clerk1's "
                           "change at 100 ms"),
            std::string::npos)
      << r.summary;
}

TEST(NoUnseenOverwrite, AWriteAfterRereadingHolds) {
  Builder b;
  int64_t r1 = b.command(100, "clerk1", {"HGET", "account:7", "version"});
  b.served(200, "HGET", r1);
  int64_t w1 = b.command(1000, "clerk1", {"EVAL", "...", "1", "account:7", "1", "110"});
  b.key_set(1100, "account:7", "{balance: 110, version: 2}", w1);
  b.served(1100, "EVAL", w1);
  int64_t r2 = b.command(1200, "clerk2", {"HGET", "account:7", "version"});
  b.served(1300, "HGET", r2);
  int64_t w2 = b.command(2000, "clerk2", {"EVAL", "...", "1", "account:7", "2", "130"});
  b.key_set(2100, "account:7", "{balance: 130, version: 3}", w2);
  b.served(2100, "EVAL", w2);
  CheckResult r = b.judge("no_unseen_overwrite", texts({{"key", "account:7"}}));
  EXPECT_TRUE(r.ok) << r.summary;
  EXPECT_NE(r.summary.find("2 writes"), std::string::npos) << r.summary;
}

// What a script read inside is not something its caller saw: a script that reads the record
// and writes it anyway is no proof that the caller's copy was fresh. A read that was only
// queued in MULTI did not read anything yet.
TEST(NoUnseenOverwrite, AScriptsOwnReadAndAQueuedReadAreNotReads) {
  Builder b;
  int64_t w1 = b.command(1000, "admin", {"HSET", "account:7", "balance", "500"});
  b.key_set(1100, "account:7", "{balance: 500, version: 1}", w1);
  b.served(1100, "HSET", w1);
  int64_t q = b.command(1200, "clerk1", {"HGET", "account:7", "balance"});
  b.served(1300, "HGET", q, "queued");
  int64_t w2 = b.command(2000, "clerk1", {"EVAL", "...", "1", "account:7", "1", "110"});
  b.key_set(2100, "account:7", "{balance: 110, version: 2}", w2);
  b.served(2100, "EVAL", w2);
  CheckResult r = b.judge("no_unseen_overwrite", texts({{"key", "account:7"}}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("it never read the key"), std::string::npos) << r.summary;
}

TEST(NoUnseenOverwrite, NoWriteIsNotJudgedAndARealServerCannotJudge) {
  Builder b;
  int64_t r1 = b.command(100, "clerk1", {"HGET", "account:7", "version"});
  b.served(200, "HGET", r1);
  EXPECT_FALSE(b.judge("no_unseen_overwrite", texts({{"key", "account:7"}})).judged);
  Builder real("clients");
  CheckResult r = real.judge("no_unseen_overwrite", texts({{"key", "account:7"}}));
  EXPECT_FALSE(r.judged);
  EXPECT_TRUE(r.backend_lacks);
}

// ---- all_recorded ----

TEST(AllRecorded, CountsOnlyItsOwnRecords) {
  Builder b;
  b.record(100, "clerk1", "save");
  b.record(200, "clerk2", "other");
  CheckArgs a = texts({{"record", "save"}});
  a.number["count"] = 2;
  CheckResult r = b.judge("all_recorded", a);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("only 1 of 2 'save' steps"), std::string::npos) << r.summary;
  a.number["count"] = 1;
  EXPECT_TRUE(b.judge("all_recorded", a).ok);
}

// ---- the lessons' own runs ----

std::string scenario_path(const std::string& id) {
  return (std::filesystem::path(REDLAB_SOURCE_DIR) / "scenarios" / (id + ".json")).string();
}

const CheckResult& named(const RunResult& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return c;
  ADD_FAILURE() << "no check " << name;
  static CheckResult none;
  return none;
}

TEST(CasTxLessons, TheOldReleasesSetIsNotBlamedOnlyBuyer2sExec) {
  Scenario s = load_scenario_file(scenario_path("multi-no-rollback"));
  RunOptions o;
  RunResult r = run_scenario(s, o);
  const CheckResult& c = named(r, "writes_together");
  ASSERT_EQ(c.violations.size(), 1u) << c.summary;
  EXPECT_EQ(c.violations[0].who, std::vector<std::string>{"buyer2"});
}

TEST(CasTxLessons, AStaleClerksSaveIsRefusedWithTheVersionCheckAndLostWithout) {
  Scenario s = load_scenario_file(scenario_path("cas-version"));
  RunOptions o;
  o.variant = {{"save", "blind"}};
  RunResult blind = run_scenario(s, o);
  EXPECT_FALSE(named(blind, "no_unseen_overwrite").ok);
  EXPECT_TRUE(named(blind, "every_save_done").ok);  // both saves "succeeded"
  o.variant = {{"save", "cas-reload"}};
  RunResult cas = run_scenario(s, o);
  EXPECT_TRUE(named(cas, "no_unseen_overwrite").ok) << named(cas, "no_unseen_overwrite").summary;
  EXPECT_TRUE(named(cas, "every_save_done").ok);
  // A version check that forgets to bump the version lets the stale clerk through.
  o.scripts = {{"save_cas",
                "if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end\n"
                "redis.call('HSET', KEYS[1], 'balance', ARGV[2])\nreturn 1"}};
  RunResult no_bump = run_scenario(s, o);
  EXPECT_FALSE(named(no_bump, "no_unseen_overwrite").ok);
}

}  // namespace
}  // namespace redlab::scenario
