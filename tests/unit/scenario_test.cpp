// The five core scenarios: every variant's teaching outcome for seeds 1..20, determinism,
// and the details a class is shown (who overlapped, which messages were lost, ...).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sim/core/trace.h"
#include "sim/core/trace_index.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::scenario {
namespace {

std::string scenario_path(const std::string& id) {
  return (std::filesystem::path(REDLAB_SOURCE_DIR) / "scenarios" / (id + ".json")).string();
}

const Scenario& load(const std::string& id) {
  static std::map<std::string, Scenario> cache;
  auto it = cache.find(id);
  if (it == cache.end()) it = cache.emplace(id, load_scenario_file(scenario_path(id))).first;
  return it->second;
}

RunResult run(const std::string& id, uint64_t seed, std::map<std::string, std::string> variant = {},
              std::map<std::string, int64_t> set = {}) {
  RunOptions o;
  o.seed = seed;
  o.variant = std::move(variant);
  o.set = std::move(set);
  return run_scenario(load(id), o);
}

const CheckResult& check(const RunResult& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return c;
  ADD_FAILURE() << "no check " << name;
  static CheckResult none;
  return none;
}

size_t count(const RunResult& r, const std::string& kind, const std::string& actor = {}) {
  size_t n = 0;
  for (const auto& e : r.trace.events())
    if (e.kind == kind && (actor.empty() || e.actor == actor)) n++;
  return n;
}

struct Case {
  std::string id;
  std::map<std::string, std::string> variant;
  std::map<std::string, int64_t> set;
  std::map<std::string, bool> verdicts;  // as the issue states them
};

// Every scenario and variant from the issue, with the verdicts it states.
std::vector<Case> cases() {
  return {
      {"ttl-double-holder", {}, {}, {{"mutual_exclusion", false}, {"no_foreign_unlock", false}}},
      {"ttl-double-holder",
       {{"release", "lua"}},
       {},
       {{"mutual_exclusion", false}, {"no_foreign_unlock", true}}},
      {"ttl-double-holder",
       {{"watchdog", "on"}},
       {},
       {{"mutual_exclusion", true}, {"no_foreign_unlock", true}}},
      {"ttl-double-holder",
       {{"watchdog", "on"}, {"release", "lua"}},
       {},
       {{"mutual_exclusion", true}}},
      {"ttl-double-holder",
       {{"watchdog", "on"}},
       {{"pause_ms", 15000}},
       {{"mutual_exclusion", false}}},
      {"forged-fence", {}, {}, {{"no_stale_write", true}, {"no_forged_fence", true}}},
      {"forged-fence", {{"resource", "no-check"}}, {}, {{"no_stale_write", false}}},
      {"forged-fence",
       {{"token", "forged"}},
       {},
       {{"no_stale_write", true}, {"no_forged_fence", false}}},
      {"pubsub-reconnect-loss", {}, {}, {{"no_lost_messages", false}}},
      {"pubsub-reconnect-loss", {{"transport", "streams"}}, {}, {{"no_lost_messages", true}}},
      {"pubsub-reconnect-loss", {{"slow-subscriber", "on"}}, {}, {{"no_lost_messages", false}}},
      {"pool-exhaustion", {}, {}, {{"no_pool_timeouts", false}}},
      {"pool-exhaustion", {{"blocking", "dedicated-client"}}, {}, {{"no_pool_timeouts", true}}},
      {"pool-exhaustion",
       {{"server", "slow"}, {"blocking", "dedicated-client"}},
       {},
       {{"no_pool_timeouts", true}, {"no_read_timeouts", false}}},
      {"watch-retry-storm", {}, {}, {{"retries_bounded", false}, {"no_oversell", true}}},
      {"watch-retry-storm",
       {{"retry", "bounded"}},
       {},
       {{"retries_bounded", true}, {"no_oversell", true}}},
      {"watch-retry-storm",
       {{"atomic", "lua"}},
       {},
       {{"retries_bounded", true}, {"no_oversell", true}}},
      {"watch-retry-storm", {{"watch", "wrong-connection"}}, {}, {{"no_oversell", false}}},
      // Issue 14's lessons.
      {"lost-update", {}, {}, {{"no_oversell", false}, {"stock_matches_sales", false}}},
      {"lost-update",
       {{"purchase", "multi"}},
       {},
       {{"no_oversell", false}, {"stock_matches_sales", false}}},
      // More items than workers: nothing oversold, yet the stock forgets a sale.
      {"lost-update",
       {},
       {{"stock", 5}},
       {{"no_oversell", true}, {"stock_matches_sales", false}, {"all_sold", false}}},
      {"lost-update",
       {{"purchase", "lua"}},
       {},
       {{"no_oversell", true}, {"stock_matches_sales", true}, {"all_sold", true}}},
      {"lost-update",
       {{"purchase", "watch"}},
       {{"workers", 10}, {"stock", 3}},
       {{"no_oversell", true}, {"stock_matches_sales", true}, {"all_sold", true}}},
      // multi-no-rollback, cas-version.
      {"multi-no-rollback",
       {},
       {},
       {{"writes_together", false}, {"stock_matches_sales", false}, {"first_checkout_done", true}}},
      {"multi-no-rollback",
       {{"checkout", "discard"}},
       {},
       {{"writes_together", false}, {"every_checkout_reported_done", true}}},
      {"multi-no-rollback", {{"checkout", "lua-write-first"}}, {}, {{"writes_together", false}}},
      {"multi-no-rollback",
       {{"checkout", "lua-validate"}},
       {{"buyers", 5}},
       {{"writes_together", true}, {"stock_matches_sales", true}, {"first_checkout_done", true}}},
      {"multi-no-rollback",
       {{"error", "bad-command"}},
       {},
       {{"writes_together", true}, {"every_checkout_reported_done", false}}},
      {"multi-no-rollback",
       {{"error", "bad-command"}, {"checkout", "discard"}},
       {},
       {{"writes_together", true}, {"stock_matches_sales", true}}},
      {"cas-version", {}, {}, {{"no_unseen_overwrite", false}, {"every_save_done", true}}},
      {"cas-version",
       {{"save", "cas"}},
       {{"clerks", 4}},
       {{"no_unseen_overwrite", true}, {"every_save_done", false}}},
      {"cas-version",
       {{"save", "cas-reload"}},
       {{"clerks", 8}},
       {{"no_unseen_overwrite", true}, {"every_save_done", true}}},
      {"cas-version",
       {{"save", "cas-reload"}, {"admin", "on"}},
       {},
       {{"no_unseen_overwrite", false}, {"every_save_done", true}}},
      // noscript-after-restart, slow-script-busy (issue 14, lessons 9 and 10).
      {"noscript-after-restart", {}, {}, {{"no_noscript", false}}},
      {"noscript-after-restart", {{"event", "script-flush"}}, {}, {{"no_noscript", false}}},
      {"noscript-after-restart", {{"caller", "script-run"}}, {}, {{"no_noscript", true}}},
      {"noscript-after-restart",
       {{"caller", "script-run"}, {"event", "script-flush"}},
       {},
       {{"no_noscript", true}}},
      {"noscript-after-restart", {{"caller", "script-run-tx"}}, {}, {{"no_noscript", false}}},
      {"noscript-after-restart", {}, {{"max_retries", 10}}, {{"no_noscript", false}}},
      {"noscript-after-restart", {{"event", "none"}}, {}, {{"no_noscript", true}}},
      {"slow-script-busy", {}, {}, {{"no_busy", false}, {"no_unkillable", true}}},
      {"slow-script-busy",
       {{"report", "writes"}},
       {},
       {{"no_busy", false}, {"no_unkillable", false}}},
      {"slow-script-busy",
       {{"report", "batched"}},
       {},
       {{"no_busy", true}, {"no_unkillable", true}}},
      {"slow-script-busy", {}, {{"threshold_ms", 100}}, {{"no_busy", false}}},
      // nil-vs-error, cache-fallback.
      {"nil-vs-error", {}, {}, {{"no_unseen_overwrite", false}, {"no_read_timeouts", false}}},
      {"nil-vs-error",
       {{"handler", "nil-only"}},
       {},
       {{"no_unseen_overwrite", true}, {"no_read_timeouts", false}}},
      // A real miss: telling Nil from an error no longer helps; SET NX does.
      {"nil-vs-error",
       {{"handler", "nil-only"}, {"cache", "miss"}},
       {},
       {{"no_unseen_overwrite", false}, {"no_read_timeouts", true}}},
      {"nil-vs-error",
       {{"handler", "nil-only-nx"}, {"cache", "miss"}},
       {{"recompute_ms", 3000}},
       {{"no_unseen_overwrite", true}, {"no_read_timeouts", true}}},
      {"cache-fallback", {}, {}, {{"answered_in_time", false}}},
      {"cache-fallback", {{"cache_read", "deadline-only"}}, {}, {{"answered_in_time", false}}},
      {"cache-fallback", {{"cache_read", "deadline"}}, {}, {{"answered_in_time", true}}},
      {"cache-fallback",
       {{"cache_read", "deadline"}},
       {{"stall_ms", 10000}},
       {{"answered_in_time", true}}},
      {"cache-fallback",
       {{"cache_read", "no-deadline"}},
       {{"stall_ms", 10000}},
       {{"answered_in_time", false}}},
      // A slow database: the fallback itself takes longer than the request may.
      {"cache-fallback",
       {{"cache_read", "deadline"}},
       {{"db_ms", 400}},
       {{"answered_in_time", false}}},
      // timeout-does-not-cancel: the report's KEYS holds the server after everyone gave up.
      {"timeout-does-not-cancel", {}, {}, {{"no_read_timeouts", false}, {"no_wait_behind", false}}},
      {"timeout-does-not-cancel",
       {{"deadline", "long"}},
       {},
       {{"no_read_timeouts", true}, {"no_wait_behind", false}}},
      {"timeout-does-not-cancel",
       {{"report", "scan"}},
       {{"handlers", 20}},
       {{"no_read_timeouts", true}, {"no_wait_behind", true}}},
      {"timeout-does-not-cancel",
       {{"report", "scan"}},
       {{"batch_ms", 300}},
       {{"no_read_timeouts", false}, {"no_wait_behind", false}}},
      {"timeout-does-not-cancel",
       {{"report", "scan"}, {"deadline", "long"}},
       {{"batch_ms", 200}},
       {{"no_read_timeouts", true}, {"no_wait_behind", false}}},
      // setnx-then-expire-crash (issue 13, lesson 1).
      {"setnx-then-expire-crash", {}, {}, {{"next_worker_ran", false}}},
      {"setnx-then-expire-crash", {}, {{"gap_ms", 20}}, {{"next_worker_ran", false}}},
      {"setnx-then-expire-crash", {{"acquire", "set-nx-px"}}, {}, {{"next_worker_ran", true}}},
      {"setnx-then-expire-crash", {{"acquire", "lua"}}, {}, {{"next_worker_ran", true}}},
      // The fix's limit: B stops waiting before the TTL runs out.
      {"setnx-then-expire-crash",
       {{"acquire", "set-nx-px"}},
       {{"ttl_ms", 30000}},
       {{"next_worker_ran", false}}},
      // streams-consumer-crash (issue 13). c1 charges 1 + seed % 4 orders before its crash: the
      // rows below hold whatever it charged.
      {"streams-consumer-crash", {}, {}, {{"processed_once", false}}},
      {"streams-consumer-crash", {{"handler", "idempotent"}}, {}, {{"processed_once", true}}},
      {"streams-consumer-crash",
       {{"handler", "idempotent"}},
       {{"min_idle_ms", 30000}},
       {{"processed_once", true}}},
      // MAXLEN 10 trims orders nobody charged; MAXLEN 40 trims nothing.
      {"streams-consumer-crash",
       {{"handler", "idempotent"}, {"trim", "maxlen"}},
       {},
       {{"processed_once", false}}},
      {"streams-consumer-crash",
       {{"handler", "idempotent"}, {"trim", "maxlen"}},
       {{"maxlen", 40}},
       {{"processed_once", true}}},
      {"streams-consumer-crash",
       {{"trim", "maxlen"}},
       {{"maxlen", 40}},
       {{"processed_once", false}}},
      // idempotency-key-crash (issue 13).
      {"idempotency-key-crash", {}, {}, {{"processed_once", false}, {"event_done", false}}},
      {"idempotency-key-crash",
       {{"marker", "state"}},
       {{"claim_ttl_ms", 10000}},
       {{"processed_once", true}, {"event_done", true}}},
      // A claim shorter than the work: the next delivery takes over a live worker's event.
      {"idempotency-key-crash",
       {{"marker", "state"}},
       {{"claim_ttl_ms", 3000}, {"work_ms", 6000}},
       {{"processed_once", false}, {"event_done", true}}},
      {"idempotency-key-crash",
       {{"marker", "state"}},
       {{"claim_ttl_ms", 40000}},
       {{"processed_once", false}, {"event_done", false}}},
      {"idempotency-key-crash",
       {{"marker", "state"}},
       {},
       {{"processed_once", false}, {"event_done", false}}},
      // A bare marker with a short TTL: once here (no duplicate after it expires), never done.
      {"idempotency-key-crash",
       {},
       {{"claim_ttl_ms", 20000}},
       {{"processed_once", true}, {"event_done", false}}},
      {"idempotency-key-crash",
       {},
       {{"claim_ttl_ms", 10000}},
       {{"processed_once", false}, {"event_done", false}}},
      // Issue 14's lessons rate-limiter-window and pipeline-vs-multi.
      {"rate-limiter-window", {}, {}, {{"rate_within_limit", false}}},
      {"rate-limiter-window", {}, {{"limit", 1}}, {{"rate_within_limit", true}}},
      // The sliding window holds every minute to the limit, not the pace inside it.
      {"rate-limiter-window",
       {{"limiter", "sliding"}},
       {},
       {{"rate_within_limit", true}, {"per_second", false}, {"script_keys_declared", true}}},
      {"rate-limiter-window",
       {{"limiter", "sliding"}},
       {{"limit", 200}, {"window_ms", 10000}},
       {{"rate_within_limit", true}}},
      {"pipeline-vs-multi",
       {},
       {},
       {{"batch_not_interleaved", false}, {"batch_round_trips", true}}},
      {"pipeline-vs-multi",
       {{"send", "one-by-one"}},
       {},
       {{"batch_not_interleaved", false}, {"batch_round_trips", false}}},
      {"pipeline-vs-multi",
       {{"send", "multi"}},
       {},
       {{"batch_not_interleaved", true}, {"batch_round_trips", true}}},
      {"pipeline-vs-multi",
       {{"send", "multi-one-by-one"}},
       {},
       {{"batch_not_interleaved", true}, {"batch_round_trips", false}}},
      // MULTI around the readers does not keep them out of A's pipeline.
      {"pipeline-vs-multi", {{"reads", "multi"}}, {}, {{"batch_not_interleaved", false}}},
      // Issue 14, watchdog-gc-pause and pubsub-slow-subscriber.
      // An 8 s pause, shorter than the 9 s TTL, outlasts the 6.5 s left since the last extend.
      {"watchdog-gc-pause", {}, {}, {{"mutual_exclusion", false}, {"no_stale_write", false}}},
      {"watchdog-gc-pause",
       {{"resource", "checks-fence"}},
       {},
       {{"mutual_exclusion", false}, {"no_stale_write", true}}},
      // The same pause 0.5 s after an extend: 8.5 s were left, the lock survives.
      {"watchdog-gc-pause",
       {},
       {{"pause_at_ms", 3500}},
       {{"mutual_exclusion", true}, {"no_stale_write", true}}},
      {"watchdog-gc-pause",
       {{"watchdog", "off"}},
       {{"pause_ms", 0}},
       {{"mutual_exclusion", false}, {"no_stale_write", false}}},
      {"watchdog-gc-pause",
       {{"watchdog", "off"}, {"resource", "checks-fence"}},
       {{"pause_ms", 0}},
       {{"mutual_exclusion", false}, {"no_stale_write", true}}},
      {"pubsub-slow-subscriber", {}, {}, {{"no_lost_messages", false}}},
      {"pubsub-slow-subscriber", {}, {{"limit_kb", 16384}}, {{"no_lost_messages", true}}},
      {"pubsub-slow-subscriber", {}, {{"channel_size", 200}}, {{"no_lost_messages", false}}},
      {"pubsub-slow-subscriber", {{"transport", "streams"}}, {}, {{"no_lost_messages", true}}},
      {"pubsub-slow-subscriber",
       {{"transport", "streams"}},
       {{"maxlen", 100}},
       {{"no_lost_messages", false}}},
      // context-timeout-reconnect-storm: a deadline below the p99 with ContextTimeoutEnabled.
      {"context-timeout-reconnect-storm",
       {},
       {},
       {{"dials_within", false}, {"no_read_timeouts", false}, {"request_within_deadline", true}}},
      {"context-timeout-reconnect-storm",
       {{"deadline", "headroom"}},
       {},
       {{"dials_within", true}, {"no_read_timeouts", true}}},
      // Off: nothing times out, and the user's request outlives its deadline.
      {"context-timeout-reconnect-storm",
       {{"context_timeout_enabled", "off"}},
       {},
       {{"dials_within", true}, {"no_read_timeouts", true}, {"request_within_deadline", false}}},
      // Off, with a ReadTimeout below the p99: the read is bounded, and the storm is back.
      {"context-timeout-reconnect-storm",
       {{"context_timeout_enabled", "off"}, {"deadline", "headroom"}},
       {{"read_timeout_ms", 100}},
       {{"dials_within", false}, {"no_read_timeouts", false}}},
      // A bigger pool does not help: every connection is thrown away at its next timeout.
      {"context-timeout-reconnect-storm", {}, {{"pool_size", 100}}, {{"dials_within", false}}},
      // functions-survive-restart, aof-everysec-loss (issue 13, item 5).
      {"functions-survive-restart", {}, {}, {{"no_noscript", false}, {"all_served", false}}},
      {"functions-survive-restart",
       {{"caller", "fcall"}},
       {},
       {{"no_noscript", true}, {"all_served", true}}},
      {"functions-survive-restart",
       {{"caller", "fcall"}, {"appendonly", "no"}},
       {},
       {{"no_noscript", true}, {"all_served", false}}},
      {"functions-survive-restart",
       {{"appendonly", "no"}},
       {},
       {{"no_noscript", false}, {"all_served", false}}},
      {"aof-everysec-loss", {}, {}, {{"mutual_exclusion", false}}},
      {"aof-everysec-loss", {}, {{"crash_after_ms", 749}}, {{"mutual_exclusion", false}}},
      {"aof-everysec-loss", {}, {{"crash_after_ms", 750}}, {{"mutual_exclusion", true}}},
      {"aof-everysec-loss", {{"appendfsync", "always"}}, {}, {{"mutual_exclusion", true}}},
      {"aof-everysec-loss",
       {{"appendfsync", "no"}},
       {{"crash_after_ms", 3000}},
       {{"mutual_exclusion", false}}},
      {"aof-everysec-loss", {{"watchdog", "on"}}, {}, {{"mutual_exclusion", false}}},
      // Issue 13, redlock-clock-jump: the jump gives two holders with a majority each, and A's
      // late write is stale unless the database checks fences; a pause gives no second holder
      // by Redlock's own measure, but the same stale write.
      {"redlock-clock-jump",
       {},
       {},
       {{"mutual_exclusion", false},
        {"acquire_took_lock", true},
        {"no_stale_write", false},
        {"no_foreign_unlock", true},
        {"release_removes_own_lock", true}}},
      {"redlock-clock-jump",
       {},
       {{"jump_ms", 1000}},
       {{"mutual_exclusion", true}, {"no_stale_write", true}}},
      {"redlock-clock-jump",
       {{"resource", "checks-fence"}},
       {},
       {{"mutual_exclusion", false}, {"no_stale_write", true}}},
      {"redlock-clock-jump",
       {{"fault", "pause"}},
       {},
       {{"mutual_exclusion", true}, {"no_stale_write", false}, {"no_foreign_unlock", true}}},
      {"redlock-clock-jump",
       {{"fault", "pause"}, {"resource", "checks-fence"}},
       {},
       {{"mutual_exclusion", true}, {"no_stale_write", true}}},
      {"redlock-clock-jump",
       {{"fault", "pause"}},
       {{"pause_ms", 1000}},
       {{"no_stale_write", true}}},
      // retry-double-incr (issue 13 item 6): the retried INCR counts twice; MaxRetries -1 keeps
      // the count but leaves an error; the script with its idempotency key does both.
      {"retry-double-incr", {}, {}, {{"counted_once", false}, {"likes_confirmed", true}}},
      {"retry-double-incr", {}, {{"max_retries", 0}}, {{"counted_once", false}}},
      {"retry-double-incr",
       {},
       {{"max_retries", -1}},
       {{"counted_once", true}, {"likes_confirmed", false}}},
      {"retry-double-incr",
       {{"op", "setnx-then-incr"}},
       {},
       {{"counted_once", false}, {"likes_confirmed", false}}},
      {"retry-double-incr",
       {{"op", "script"}},
       {},
       {{"counted_once", true}, {"likes_confirmed", true}}},
      // background-context-canceled: the request's context (or a child of it) is cancelled
      // before the mailer's INCR; a context from the root with room for the job is not.
      {"background-context-canceled", {}, {}, {{"every_mail_counted", false}}},
      {"background-context-canceled",
       {{"ctx", "request-timeout"}},
       {},
       {{"every_mail_counted", false}}},
      {"background-context-canceled",
       {{"ctx", "without-cancel"}},
       {},
       {{"every_mail_counted", true}}},
      {"background-context-canceled",
       {{"ctx", "background-timeout"}},
       {},
       {{"every_mail_counted", true}}},
      {"background-context-canceled",
       {{"ctx", "background-timeout"}},
       {{"bg_timeout_ms", 150}},
       {{"every_mail_counted", false}}},
      // fence-rollback-failover (issue 13 item 4): the failover loses A's INCR and B gets 33
      // again; WAIT only helps when its answer is acted on; a token store that survives the
      // failover is safe; a replica that keeps up loses nothing.
      {"fence-rollback-failover", {}, {}, {{"no_stale_write", false}}},
      {"fence-rollback-failover", {}, {{"lag_ms", 200}}, {{"no_stale_write", true}}},
      {"fence-rollback-failover",
       {{"token_from", "wait-unchecked"}},
       {},
       {{"no_stale_write", false}}},
      {"fence-rollback-failover",
       {{"token_from", "wait-unchecked"}},
       {{"wait_timeout_ms", 5000}},
       {{"no_stale_write", false}}},
      {"fence-rollback-failover",
       {{"token_from", "wait-unchecked"}},
       {{"lag_ms", 50}},
       {{"no_stale_write", true}}},
      {"fence-rollback-failover", {{"token_from", "wait-checked"}}, {}, {{"no_stale_write", true}}},
      {"fence-rollback-failover",
       {{"token_from", "wait-checked"}},
       {{"lag_ms", 50}},
       {{"no_stale_write", true}}},
      {"fence-rollback-failover", {{"token_from", "token-store"}}, {}, {{"no_stale_write", true}}},
  };
}

std::string describe(const Case& c) {
  std::string s = c.id;
  for (auto& [k, v] : c.variant) s += " " + k + "=" + v;
  for (auto& [k, v] : c.set) s += " " + k + "=" + std::to_string(v);
  return s;
}

TEST(Scenarios, EveryVariantTeachesItsOutcomeForSeeds1To20) {
  for (const Case& c : cases()) {
    for (uint64_t seed = 1; seed <= 20; seed++) {
      RunResult r = run(c.id, seed, c.variant, c.set);
      EXPECT_TRUE(r.expectation_met) << describe(c) << " seed " << seed;
      EXPECT_FALSE(r.bound_hit) << describe(c) << " seed " << seed;
      for (auto& [name, ok] : c.verdicts)
        EXPECT_EQ(check(r, name).ok, ok)
            << describe(c) << " seed " << seed << ": " << name << ": " << check(r, name).summary;
    }
  }
}

TEST(Scenarios, SameInputsGiveByteIdenticalTraces) {
  for (const char* id : {"ttl-double-holder", "forged-fence", "pubsub-reconnect-loss",
                         "pool-exhaustion", "watch-retry-storm"}) {
    RunResult a = run(id, 7), b = run(id, 7), c = run(id, 8);
    std::string ja = trace_to_json(a.trace);
    EXPECT_EQ(ja, trace_to_json(b.trace)) << id;
    // The seed is part of the input: it is in the meta, so traces of two seeds always differ.
    EXPECT_NE(ja, trace_to_json(c.trace)) << id;
    auto parsed = trace_from_json(ja);
    ASSERT_TRUE(parsed) << id;
    EXPECT_EQ(trace_to_json(*parsed), ja) << id;
  }
}

TEST(Scenarios, SeedsChangeTheTimingNotJustTheMeta) {
  // Jitter comes from the seed: the event times of two seeds differ somewhere.
  RunResult a = run("watch-retry-storm", 1), b = run("watch-retry-storm", 2);
  std::vector<TimeUs> ta, tb;
  for (auto& e : a.trace.events()) ta.push_back(e.time_us);
  for (auto& e : b.trace.events()) tb.push_back(e.time_us);
  EXPECT_NE(ta, tb);
}

TEST(Scenarios, TtlDoubleHolderShowsWhoHeldTheLockTogether) {
  RunResult r = run("ttl-double-holder", 1);
  const CheckResult& me = check(r, "mutual_exclusion");
  ASSERT_EQ(me.violations.size(), 2u);
  EXPECT_EQ(me.violations[0].who, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(me.violations[1].who, (std::vector<std::string>{"B", "C"}));
  // B took the lock once it expired (10 s); A's DEL at 12 s freed it for C.
  EXPECT_GE(me.violations[0].from_us, 10'000'000);
  EXPECT_LT(me.violations[0].from_us, 10'400'000);
  EXPECT_NE(me.violations[1].text.find("B and C held lock:job:42 together from 12."),
            std::string::npos)
      << me.violations[1].text;
  const CheckResult& fu = check(r, "no_foreign_unlock");
  EXPECT_NE(fu.summary.find("A's DEL at 12."), std::string::npos) << fu.summary;
}

TEST(Scenarios, TtlDoubleHolderLuaReleaseReportsTheLockLost) {
  RunResult r = run("ttl-double-holder", 3, {{"release", "lua"}});
  EXPECT_EQ(count(r, "lock_lost", "A"), 1u);
  EXPECT_EQ(count(r, "lock_released", "A"), 0u);
}

TEST(Scenarios, WatchdogPauseMakesAAbandonAtItsNextExtend) {
  RunResult r = run("ttl-double-holder", 2, {{"watchdog", "on"}}, {{"pause_ms", 15000}});
  EXPECT_EQ(count(r, "abandon", "A"), 1u);
  EXPECT_EQ(count(r, "lock_released", "A"), 0u);  // A never releases: it learned it lost the lock
  for (auto& e : r.trace.events())
    if (e.kind == "abandon") {
      EXPECT_GE(e.time_us, 17'000'000);  // after the pause (2 s + 15 s)
    }
  // Without the pause, the watchdog keeps extending and nobody abandons.
  RunResult calm = run("ttl-double-holder", 2, {{"watchdog", "on"}});
  EXPECT_GT(count(calm, "lock_extended", "A"), 2u);
  EXPECT_EQ(count(calm, "abandon"), 0u);
}

TEST(Scenarios, ForgedFenceRejectsTheStaleWriteAndThenTheGenuineOnes) {
  RunResult r = run("forged-fence", 1);
  bool rejected_33 = false;
  for (auto& e : r.trace.events())
    if (e.kind == "resource_reject" && e.actor == "A" &&
        e.text.find("fence=33") != std::string::npos)
      rejected_33 = true;
  EXPECT_TRUE(rejected_33);
  RunResult f = run("forged-fence", 1, {{"token", "forged"}});
  EXPECT_NE(check(f, "no_forged_fence").summary.find("fence 99"), std::string::npos);
  size_t b_rejected = 0;
  for (auto& e : f.trace.events())
    if (e.kind == "resource_reject" && e.actor == "B" &&
        e.text.find("fence=34") != std::string::npos)
      b_rejected++;
  EXPECT_GE(b_rejected, 1u);
}

TEST(Scenarios, PubSubLossListsTheMessagesOfTheGapAndPublishReturnsZero) {
  RunResult r = run("pubsub-reconnect-loss", 1);
  // Published every 100 ms from 0.1 s; the connection drops at 2.0 s and the subscriber is
  // back at about 4.0 s (its redials go through the pool's dial-error breaker).
  // From the trace: publish .. published (PUBLISH's reply), and the subscriber's messages.
  TraceIndex ix(r.trace);
  std::vector<std::string> lost;
  for (size_t i : ix.of_kind("publish")) {
    const TraceEvent& p = ix.event(i);
    std::string message(p.str_or(F::message));
    bool got = false;
    for (size_t d : ix.of_kind("pubsub_message"))
      got = got || ix.event(d).str_or(F::message) == message;
    if (!got) lost.push_back(message);
    size_t end = ix.end_of(i);
    ASSERT_NE(end, kNoEvent) << message;
    int64_t receivers = ix.event(end).num_or(F::receivers, -1);
    if (p.time_us > 2'100'000 && p.time_us < 3'900'000) {
      EXPECT_EQ(receivers, 0) << message;
    }
    if (p.time_us < 1'900'000 || p.time_us > 4'100'000) {
      EXPECT_EQ(receivers, 1) << message;
    }
  }
  EXPECT_GE(lost.size(), 19u);
  EXPECT_LE(lost.size(), 22u);
  const CheckResult& c = check(r, "no_lost_messages");
  EXPECT_NE(c.summary.find("PUBLISH returned 0"), std::string::npos) << c.summary;
  EXPECT_NE(c.summary.find(lost.front()), std::string::npos) << c.summary;
}

TEST(Scenarios, SlowSubscriberFallsBehindInItsChannelAndNeverHearsTheRest) {
  // go-redis' Channel() drains the socket into a 100-message buffer, so the server's output
  // buffer never fills and the server does not cut it; the application, one message every
  // handle_ms, is still working through the queue when it stops listening.
  RunResult r = run("pubsub-reconnect-loss", 1, {{"slow-subscriber", "on"}});
  EXPECT_EQ(count(r, "net_server_close"), 0u);
  EXPECT_EQ(count(r, "fault"), 0u);           // no network fault in this variant
  EXPECT_EQ(count(r, "pubsub_dropped"), 0u);  // the 1-minute send timeout is never reached
  EXPECT_FALSE(check(r, "no_lost_messages").ok);
  // Fast enough to keep up: nothing lost.
  RunResult quick =
      run("pubsub-reconnect-loss", 1, {{"slow-subscriber", "on"}}, {{"handle_ms", 100}});
  EXPECT_TRUE(check(quick, "no_lost_messages").ok) << check(quick, "no_lost_messages").summary;
}

// watchdog-gc-pause: A's rows take 250 ms each (resource_write ms). The pause freezes one of
// them; at the resume it reaches the database at once, before the watchdog's overdue extend
// comes back with 0: one stale write, then A abandons.
TEST(Scenarios, WatchdogGcPauseTheFrozenRowLandsBeforeTheExtendSaysLost) {
  RunResult r = run("watchdog-gc-pause", 1);
  TraceIndex ix(r.trace);
  TimeUs resume = -1, lost = -1, abandoned = -1, b_first = -1;
  for (size_t i : ix.of_kind("fault"))
    if (ix.event(i).actor == "A" && ix.event(i).text == "resume") resume = ix.event(i).time_us;
  for (size_t i : ix.of_kind("lock_lost"))
    if (ix.event(i).actor == "A") lost = ix.event(i).time_us;
  for (size_t i : ix.of_kind("abandon"))
    if (ix.event(i).actor == "A") abandoned = ix.event(i).time_us;
  std::vector<TimeUs> a_rows;
  for (size_t i : ix.of_kind("resource_accept")) {
    const TraceEvent& e = ix.event(i);
    if (e.actor == "A") a_rows.push_back(e.time_us);
    if (e.actor == "B" && b_first < 0) b_first = e.time_us;
  }
  ASSERT_EQ(resume, 13'500'000);  // 5.5 s + 8 s
  ASSERT_GE(a_rows.size(), 3u);
  // 250 ms a row, each decided when its timer fires on A's process.
  EXPECT_GE(a_rows[1] - a_rows[0], 250'000);
  EXPECT_LT(a_rows[1] - a_rows[0], 251'000);
  EXPECT_EQ(a_rows.back(), resume);  // the frozen row, decided at the resume
  EXPECT_LT(b_first, resume);        // after B's rows: stale
  EXPECT_GT(lost, resume);           // the extend's answer comes a round trip later
  EXPECT_EQ(abandoned, lost);
  EXPECT_EQ(a_rows.size(), size_t(5500 / 250));  // 21 rows done before the pause, then one
  // The key expired at the last extend (3 s) plus the TTL, not at the pause plus the TTL.
  size_t expired = ix.of_kind("key_expired").front();
  EXPECT_GE(ix.event(expired).time_us, 12'000'000);
  EXPECT_LT(ix.event(expired).time_us, 12'100'000);
}

// redlock-clock-jump: A takes m1..m3 (m4, m5 cut off), m3's jump at 2 s expires A's key there,
// and B takes m3..m5 while A is still within its validity: two majorities, from the servers'
// own record. A's release then finds B's key on m3 and leaves it.
TEST(Scenarios, RedlockClockJumpTwoMajoritiesFromTheServersRecord) {
  RunResult r = run("redlock-clock-jump", 1);
  TraceIndex ix(r.trace);
  std::map<std::string, const TraceEvent*> acquired;
  for (size_t i : ix.of_kind("lock_acquired")) acquired[ix.event(i).actor] = &ix.event(i);
  ASSERT_TRUE(acquired.count("A") && acquired.count("B"));
  const TraceEvent& a = *acquired["A"];
  const TraceEvent& b = *acquired["B"];
  EXPECT_EQ(*a.list(F::servers), (std::vector<std::string>{"m1", "m2", "m3"}));
  EXPECT_EQ(*b.list(F::servers), (std::vector<std::string>{"m3", "m4", "m5"}));
  EXPECT_EQ(a.num_or(F::quorum, 0), 3);
  // Valid for the TTL minus the try (the 50 ms timeout of m4 and m5) minus 1% of the TTL.
  EXPECT_EQ(a.num_or(F::until_us, 0) - a.time_us, 10'000'000 - 50'000 - 100'000);
  EXPECT_LT(b.time_us, a.num_or(F::until_us, 0));
  // m3's record: A's key expired at the jump (2 s), B's SET put B's token there after it.
  bool expired_at_jump = false;
  for (const KeyChange& c : ix.key_changes("m3"))
    if (c.expired && c.state.key == "lock:report" && c.state.value == a.str_or(F::token))
      expired_at_jump = c.time_us == 2'000'000;
  EXPECT_TRUE(expired_at_jump);
  std::optional<KeyState> on_m3 = ix.key_before("m3", 0, "lock:report", ix.size());
  // B released at the end: gone; but while A released, it held B's token.
  EXPECT_FALSE(on_m3.has_value());
  size_t a_node_m3 = kNoEvent;
  for (size_t i : ix.of_kind("redlock_node")) {
    const TraceEvent& e = ix.event(i);
    if (e.actor == "A" && e.str_or(F::server) == "m3" && e.str_or(F::reason) == "not ours")
      a_node_m3 = i;
  }
  ASSERT_NE(a_node_m3, kNoEvent);
  std::optional<KeyState> then = ix.key_before("m3", 0, "lock:report", a_node_m3);
  ASSERT_TRUE(then.has_value());
  EXPECT_EQ(then->value, b.str_or(F::token));
  EXPECT_FALSE(check(r, "mutual_exclusion").ok);
  EXPECT_NE(check(r, "mutual_exclusion").summary.find("A and B held lock:report together"),
            std::string::npos)
      << check(r, "mutual_exclusion").summary;
}

// retry-double-incr: evt_1042's INCR ran on the slowed connection before the ReadTimeout; its
// reply did not come back in time; the retry on a new connection ran it again.
TEST(Scenarios, RetryDoubleIncrTheTimedOutIncrRanAndTheRetryRanItAgain) {
  RunResult r = run("retry-double-incr", 1);
  TraceIndex ix(r.trace);
  std::vector<TimeUs> incrs;  // the server's own record of likes:post:7
  for (size_t i : ix.of_kind("key_set"))
    if (ix.event(i).str_or(F::key) == "likes:post:7") incrs.push_back(ix.event(i).time_us);
  ASSERT_EQ(incrs.size(), 3u);
  size_t timeout = ix.of_kind("read_timeout").front();
  EXPECT_EQ(ix.event(timeout).actor, "handler");
  // The second INCR ran at 1.1 s + 330 ms, before the read timed out at 1.6 s; the third (the
  // retry) after it.
  EXPECT_GE(incrs[1], 1'430'000);
  EXPECT_LT(incrs[1], ix.event(timeout).time_us);
  EXPECT_GE(ix.event(timeout).time_us, 1'600'000);
  EXPECT_GT(incrs[2], ix.event(timeout).time_us);
  const TraceEvent& final_value = ix.event(ix.of_kind("key_final").front());
  EXPECT_EQ(final_value.str_or(F::value), "3");
  EXPECT_EQ(final_value.str_or(F::source), "fake");
  EXPECT_NE(check(r, "counted_once").summary.find("likes:post:7 = 3"), std::string::npos)
      << check(r, "counted_once").summary;
  // With MaxRetries -1 the program sees the i/o timeout and its if on result_class notes it.
  RunResult off = run("retry-double-incr", 1, {}, {{"max_retries", -1}});
  EXPECT_EQ(count(off, "note", "handler"), 1u);
  EXPECT_EQ(count(r, "note", "handler"), 0u);  // the retry answered: no timeout to see
}

// background-context-canceled: the mailer's GET during the request works; its INCR after the
// handler's cancel fails with context canceled before it takes a connection, and is not retried.
TEST(Scenarios, BackgroundContextCanceledTheCallFailsBeforeItTakesAConnection) {
  RunResult r = run("background-context-canceled", 1, {}, {{"requests", 3}});
  TraceIndex ix(r.trace);
  size_t canceled = 0;
  for (size_t i : ix.of_kind("result")) {
    const TraceEvent& e = ix.event(i);
    if (e.actor.rfind("mailer", 0) != 0) continue;
    std::string_view cls = e.str_or(F::result_class);
    if (cls == "context_canceled") {
      canceled++;
      EXPECT_EQ(e.str_or(F::error), "context canceled");
      EXPECT_EQ(e.attempt, 0);  // never retried
      // Nothing of that call reached the pool: no command, no pool event at its step.
      for (size_t j = ix.begin_of(i); j < i; j++) {
        const TraceEvent& x = ix.event(j);
        if (x.actor == e.actor && x.step == e.step) {
          EXPECT_EQ(x.kind, "call");
        }
      }
    } else {
      EXPECT_EQ(cls, "nil");  // GET template:welcome: a miss, during the request
    }
  }
  EXPECT_EQ(canceled, 3u);
  EXPECT_EQ(count(r, "context_cancel", "handler2"), 1u);
  const TraceEvent& final_value = ix.event(ix.of_kind("key_final").front());
  EXPECT_FALSE(final_value.has(F::value));  // no INCR emails:sent ever ran
  // A timeout shorter than the job: context deadline exceeded, not canceled.
  RunResult short_timeout = run("background-context-canceled", 1, {{"ctx", "background-timeout"}},
                                {{"requests", 1}, {"bg_timeout_ms", 150}});
  bool deadline = false;
  for (const TraceEvent& e : short_timeout.trace.events())
    if (e.kind == "result" && e.actor == "mailer")
      deadline = deadline || e.str_or(F::error) == "context deadline exceeded";
  EXPECT_TRUE(deadline);
}

// pubsub-slow-subscriber: PUBLISH counted the subscriber for the messages the server then
// dropped with its output buffer; Channel() holds channel_size messages at most.
TEST(Scenarios, SlowSubscriberIsCutWhilePublishCountedItAsReceiver) {
  RunResult r = run("pubsub-slow-subscriber", 1);
  TraceIndex ix(r.trace);
  ASSERT_FALSE(ix.of_kind("client_cut").empty());
  // The cut is decided at the end of the PUBLISH that filled the buffer; what follows from it
  // (the close, the client's EOF, the note about it) comes no earlier in the trace.
  for (size_t i = 1; i < r.trace.events().size(); i++)
    ASSERT_GE(r.trace.events()[i].time_us, r.trace.events()[i - 1].time_us) << i;
  int64_t dropped = 0;
  for (size_t i : ix.of_kind("net_buffer_lost")) dropped += ix.event(i).num_or(F::count, 0);
  EXPECT_GE(dropped, 16);  // 1 MB of 64 KB messages at each cut
  const CheckResult& c = check(r, "no_lost_messages");
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.summary.find("PUBLISH counted a receiver for"), std::string::npos) << c.summary;
  int64_t queued_max = 0;
  for (size_t i : ix.of_kind("pubsub_message"))
    queued_max = std::max(queued_max, ix.event(i).num_or(F::count, 0));
  EXPECT_EQ(queued_max, 99);  // the default Go channel of 100, one just taken out
  RunResult bigger = run("pubsub-slow-subscriber", 1, {}, {{"channel_size", 200}});
  TraceIndex bx(bigger.trace);
  queued_max = 0;
  for (size_t i : bx.of_kind("pubsub_message"))
    queued_max = std::max(queued_max, bx.event(i).num_or(F::count, 0));
  EXPECT_EQ(queued_max, 199);
  EXPECT_THROW(run("pubsub-slow-subscriber", 1, {}, {{"channel_size", 0}}), ScenarioError);
}

// The stream consumer takes one entry every handle_ms and acknowledges each batch of 10;
// whatever it has not read waits in the stream, so nothing is lost.
TEST(Scenarios, SlowStreamConsumerTakesOneEntryPerHandleTime) {
  RunResult r = run("pubsub-slow-subscriber", 1, {{"transport", "streams"}});
  TraceIndex ix(r.trace);
  std::vector<TimeUs> taken;
  for (size_t i : ix.of_kind("stream_message")) taken.push_back(ix.event(i).time_us);
  ASSERT_EQ(taken.size(), 400u);
  // 50 ms apart; between two batches also the XACK and the next XREADGROUP round trips.
  for (size_t i = 1; i < 400; i++) {
    EXPECT_GE(taken[i] - taken[i - 1], 50'000) << i;
    EXPECT_LT(taken[i] - taken[i - 1], 53'000) << i;
  }
  size_t acks = 0;
  for (size_t i : ix.of_kind("command")) {
    const std::vector<std::string>* argv = ix.event(i).list(F::argv);
    if (argv && !argv->empty() && (*argv)[0] == "XACK") acks++;
  }
  EXPECT_GE(acks, 40u);  // a batch of at most 10 at a time
  EXPECT_TRUE(check(r, "no_lost_messages").ok);
}

TEST(Scenarios, PoolExhaustionFailsHandlersWithPoolTimeoutAndTracesPoolStats) {
  RunResult r = run("pool-exhaustion", 1);
  size_t handler_pool_timeouts = 0;
  for (auto& e : r.trace.events())
    if (e.kind == "pool_timeout" && e.actor.rfind("handler", 0) == 0) handler_pool_timeouts++;
  EXPECT_GE(handler_pool_timeouts, 3u);
  bool failed_call = false;
  for (auto& e : r.trace.events())
    if (e.kind == "result" && e.actor.rfind("handler", 0) == 0 &&
        e.str_or(F::error_class) == "pool_timeout" &&
        e.str_or(F::error) == "redis: connection pool timeout")
      failed_call = true;
  EXPECT_TRUE(failed_call);
  EXPECT_GE(count(r, "pool_stats"), 4u);
  // The slow server drains the pool through read timeouts and closed connections instead.
  RunResult slow =
      run("pool-exhaustion", 1, {{"server", "slow"}, {"blocking", "dedicated-client"}});
  EXPECT_EQ(count(slow, "pool_timeout"), 0u);
  EXPECT_GE(count(slow, "read_timeout"), 3u);
  EXPECT_GE(count(slow, "conn_close"), 3u);
}

TEST(Scenarios, WatchStormAttemptsFarExceedTheBuyers) {
  RunResult r = run("watch-retry-storm", 1);
  // Every attempt is a span tx_attempt .. its outcome; an aborted EXEC ends one.
  int64_t attempts = 0, aborted = 0;
  TraceIndex ix(r.trace);
  for (size_t i : ix.of_kind("tx_attempt")) {
    attempts++;
    size_t end = ix.end_of(i);
    ASSERT_NE(end, kNoEvent);
    if (ix.event(end).kind == "tx_aborted") aborted++;
  }
  EXPECT_GE(attempts, 60);  // 20 buyers
  EXPECT_EQ(aborted, int64_t(count(r, "tx_aborted")));
  RunResult bounded = run("watch-retry-storm", 1, {{"retry", "bounded"}});
  EXPECT_GE(count(bounded, "tx_gave_up"), 1u);
  for (auto& e : bounded.trace.events())
    if (e.kind == "tx_gave_up") {
      // The application's own bound, not a go-redis error.
      EXPECT_EQ(e.text.find("redis:"), std::string::npos) << e.text;
      EXPECT_EQ(e.num_or(F::tries, 0), 3) << e.text;
    }
  RunResult lua = run("watch-retry-storm", 1, {{"atomic", "lua"}});
  EXPECT_EQ(count(lua, "tx_aborted"), 0u);
  EXPECT_EQ(count(lua, "record"), 10u);  // exactly the stock
}

// Per actor, the times of its events of a kind, in trace order.
std::map<std::string, std::vector<TimeUs>> times_by_actor(const TraceIndex& ix,
                                                          const std::string& kind) {
  std::map<std::string, std::vector<TimeUs>> out;
  for (size_t i : ix.of_kind(kind)) out[ix.event(i).actor].push_back(ix.event(i).time_us);
  return out;
}

TEST(Scenarios, WatchStormViolationSpansTheAttemptsPastTheBound) {
  RunResult r = run("watch-retry-storm", 1);
  TraceIndex ix(r.trace);
  // Per buyer, the start of each WATCH attempt past the bound (3) and of its last attempt.
  std::map<std::string, std::vector<TimeUs>> attempts_us = times_by_actor(ix, "tx_attempt");
  size_t seen = 0;
  for (const TraceViolation& v : ix.violations()) {
    if (v.check != "retries_bounded") continue;
    seen++;
    ASSERT_EQ(v.who.size(), 1u) << v.text;
    const std::vector<TimeUs>& times = attempts_us[v.who[0]];
    ASSERT_GT(times.size(), 3u) << v.text;
    // Not at the transaction's first attempt (0 ms for some): when the 4th one began.
    EXPECT_EQ(v.from_us, times[3]) << v.text;
    EXPECT_EQ(v.to_us, times.back()) << v.text;
    EXPECT_GT(v.from_us, 0) << v.text;
  }
  EXPECT_GT(seen, 0u);
}

// A counted violation ("handler1 hit 4 pool timeouts") spans its actor's first to its last
// such event: its words count them all, so a viewer may tell them only once it is over.
TEST(Scenarios, PoolTimeoutViolationSpansTheActorsFirstToItsLastTimeout) {
  RunResult r = run("pool-exhaustion", 1);
  TraceIndex ix(r.trace);
  std::map<std::string, std::vector<TimeUs>> timeouts_us = times_by_actor(ix, "pool_timeout");
  size_t several = 0;
  for (const TraceViolation& v : ix.violations()) {
    if (v.check != "no_pool_timeouts" || v.text.find("still waiting") != std::string::npos)
      continue;
    ASSERT_EQ(v.who.size(), 1u) << v.text;
    const std::vector<TimeUs>& times = timeouts_us[v.who[0]];
    ASSERT_FALSE(times.empty()) << v.text;
    EXPECT_EQ(v.from_us, times.front()) << v.text;
    EXPECT_EQ(v.to_us, times.back()) << v.text;
    EXPECT_NE(v.text.find("hit " + std::to_string(times.size()) + " pool timeout"),
              std::string::npos)
        << v.text;
    if (times.size() > 1) several++;
  }
  EXPECT_GT(several, 0u) << "an actor with several timeouts, whose violation has a length";
}

TEST(Scenarios, ExerciseScriptIsGradedByItsBehaviour) {
  const Scenario& sc = load("ttl-double-holder");
  ASSERT_TRUE(sc.exercise);
  auto passes = [&](const std::string& source) {
    for (uint64_t seed = 1; seed <= 5; seed++) {
      RunOptions o;
      o.seed = seed;
      o.variant = sc.exercise->variant;
      o.scripts[sc.exercise->script] = source;
      RunResult r = run_scenario(sc, o);
      for (auto& [name, want] : sc.exercise->expect)
        if (check(r, name).ok != want) return false;
    }
    return true;
  };
  EXPECT_TRUE(
      passes("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
             "return 0"));
  EXPECT_FALSE(passes("return redis.call('DEL', KEYS[1])"));
}

// The checks judge races as they happened, found by moving the sliders together.

// A's compare-and-delete reaches the server just as the TTL runs out: the EVALSHA is refused
// (NOSCRIPT) while the key is still there, the server expires it, and the EVAL finds nothing.
// The release did not leave A's lock in place: the server removed it.
TEST(Scenarios, AReleaseThatRacesTheTtlIsNotBlamedForTheKeyThatExpired) {
  RunResult r =
      run("ttl-double-holder", 1, {{"release", "lua"}}, {{"ttl_ms", 60000}, {"work_ms", 60000}});
  TraceIndex ix(r.trace);
  size_t release = ix.of_kind("lock_release").front();
  ASSERT_EQ(ix.event(release).actor, "A");
  size_t expired = ix.of_kind("key_expired").front();
  EXPECT_GT(expired, release);             // the key expired during A's release ...
  EXPECT_LT(expired, ix.end_of(release));  // ... before the release ended
  EXPECT_EQ(count(r, "script_fallback", "A"), 1u);
  EXPECT_TRUE(check(r, "release_removes_own_lock").ok)
      << check(r, "release_removes_own_lock").summary;
}

// B's SET NX is served right after A's DEL, and its reply reaches B before the DEL's reply
// reaches A. A had finished with the lock when it began to release: no overlap.
TEST(Scenarios, AHolderThatHasBegunToReleaseHoldsNoMore) {
  RunResult r = run("ttl-double-holder", 2, {{"release", "lua"}, {"watchdog", "on"}},
                    {{"ttl_ms", 40333}, {"work_ms", 50500}, {"pause_ms", 30000}});
  TraceIndex ix(r.trace);
  size_t released = kNoEvent, b_acquired = kNoEvent;
  for (size_t i : ix.of_kind("lock_released"))
    if (ix.event(i).actor == "A") released = i;
  for (size_t i : ix.of_kind("lock_acquired"))
    if (ix.event(i).actor == "B") b_acquired = i;
  ASSERT_NE(released, kNoEvent);
  ASSERT_NE(b_acquired, kNoEvent);
  EXPECT_LT(b_acquired, released);  // the race: B learned it holds before A learned it let go
  EXPECT_TRUE(check(r, "mutual_exclusion").ok) << check(r, "mutual_exclusion").summary;
}

// The run ends while buyer77's EXEC has applied on the server but its purchase has not
// finished (the UNWATCH after it is on its way): the stock went down by one more than the
// sales recorded, and the check says why instead of calling it a mismatch.
TEST(Scenarios, APurchaseStillUnderWayAtTheEndIsNotAStockMismatch) {
  RunResult r = run("watch-retry-storm", 1, {},
                    {{"buyers", 80}, {"stock", 910}, {"think_ms", 18}, {"max_attempts", 29}});
  const CheckResult& c = check(r, "stock_matches_sales");
  EXPECT_TRUE(c.ok) << c.summary;
  EXPECT_NE(c.summary.find("46 sold"), std::string::npos) << c.summary;
  EXPECT_NE(c.summary.find("1 more for purchases still under way"), std::string::npos) << c.summary;
}

// At a time scale DEBUG SLEEP's seconds are scaled once: a literal (pool-exhaustion's DEBUG
// SLEEP 5) and one built from a ms parameter (timeout-does-not-cancel's
// DEBUG SLEEP ${report_ms/1000}.…, report_ms 2000) alike; a SET PX of a ms parameter too.
TEST(Scenarios, DebugSleepIsScaledOnceAtATimeScale) {
  auto sleeps = [](const std::string& id, std::map<std::string, std::string> variant) {
    RunOptions o;
    o.seed = 1;
    o.time_scale = 0.1;
    o.variant = std::move(variant);
    RunResult r = run_scenario(load(id), o);
    TraceIndex ix(r.trace);
    std::vector<std::string> out;
    for (size_t i : ix.of_kind("command")) {
      const std::vector<std::string>* argv = ix.event(i).list(F::argv);
      if (argv && argv->size() == 3 && (*argv)[0] == "DEBUG") out.push_back((*argv)[2]);
    }
    return out;
  };
  EXPECT_EQ(sleeps("pool-exhaustion", {{"server", "slow"}}), std::vector<std::string>{"0.500"});
  EXPECT_EQ(sleeps("timeout-does-not-cancel", {{"report", "keys"}, {"deadline", "short"}}),
            std::vector<std::string>{"0.200"});
}

TEST(Scenarios, BadRunOptionsAreClearErrors) {
  EXPECT_THROW(run("ttl-double-holder", 1, {{"release", "maybe"}}), ScenarioError);
  EXPECT_THROW(run("ttl-double-holder", 1, {{"nope", "x"}}), ScenarioError);
  EXPECT_THROW(run("ttl-double-holder", 1, {}, {{"ttl_ms", 5}}), ScenarioError);
  try {
    run("ttl-double-holder", 1, {{"release", "maybe"}});
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("values: del, lua"), std::string::npos) << e.what();
  }
}

// The storm's numbers, from the trace: each slow moment adds the same misses to the pool's
// statistics while its connection count stays put; with headroom the misses stop at the
// warm-up's. The closes' reasons say why: a GET's read, or a new connection's HELLO.
TEST(Scenarios, ContextTimeoutStormRedialsEverySlowMomentWhileTotalConnsStays) {
  auto last_stats = [](const RunResult& r, TimeUs until_us) {
    const TraceEvent* last = nullptr;
    for (const TraceEvent& e : r.trace.events())
      if (e.kind == "pool_stats" && e.actor == "app" && e.time_us <= until_us) last = &e;
    return last;
  };
  RunResult storm = run("context-timeout-reconnect-storm", 1);
  RunResult calm = run("context-timeout-reconnect-storm", 1, {{"deadline", "headroom"}});
  int64_t previous = -1;
  for (int64_t second = 2; second <= 6; second++) {
    const TraceEvent* s = last_stats(storm, second * 1'000'000);
    const TraceEvent* c = last_stats(calm, second * 1'000'000);
    ASSERT_NE(s, nullptr);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(s->num_or(F::total, -1), 6) << second;
    EXPECT_EQ(c->num_or(F::misses, -1), 6) << second;
    int64_t misses = s->num_or(F::misses, -1);
    if (previous >= 0) {
      EXPECT_GE(misses - previous, 12) << second;
    }
    previous = misses;
  }
  size_t timeouts = 0, hellos = 0;
  for (const TraceEvent& e : storm.trace.events()) {
    if (e.kind != "conn_close") continue;
    const std::string* reason = e.str(F::reason);
    ASSERT_NE(reason, nullptr);
    if (*reason == "i/o timeout") timeouts++;
    if (*reason == "context deadline exceeded") hellos++;
  }
  EXPECT_GT(timeouts, 0u);
  EXPECT_GT(hellos, timeouts);  // most redials die in their HELLO, behind the same command
  EXPECT_EQ(count(calm, "conn_close"), 0u);
}

}  // namespace
}  // namespace redlab::scenario
