// The go-redis v9 client model (sim/client) over the simulated network, on virtual time:
// exact times of pool waits and timeouts, retries and backoff, read timeouts, context
// deadlines, pipelines, transactions, WATCH, Script.Run, PubSub reconnects and pauses.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <optional>

#include "sim/client/client.h"
#include "sim/client/commands.h"
#include "sim/client/pubsub.h"
#include "sim/core/scheduler.h"
#include "sim/core/trace.h"
#include "sim/fake/server.h"
#include "sim/net/network.h"
#include "sim/net/process.h"

namespace redlab::client {
namespace {

constexpr TimeUs kLatencyUs = 100;
constexpr TimeUs kRttUs = 2 * kLatencyUs;
constexpr TimeUs kServiceUs = 2;  // the fake's default service time
// A new connection: the handshake, then HELLO (initConn) answered after the service time.
constexpr TimeUs kNewConnUs = kRttUs + kRttUs + kServiceUs;

struct Outcome {
  TimeUs at_us = 0;
  Result result;
};

class ClientTest : public ::testing::Test {
 protected:
  Scheduler scheduler;
  Trace trace;
  fake::Server server;
  net::Network network{scheduler, 1, &trace};
  std::vector<std::unique_ptr<net::Process>> processes;
  std::vector<std::unique_ptr<Client>> clients;

  ClientTest() {
    network.set_default_link(net::LinkConfig{kLatencyUs, 0});
    network.add_server("redis", &server);
  }

  Client& make_client(const std::string& name, Options options = Options::go_redis_v9(),
                      uint64_t seed = 1, const std::string& to = "redis") {
    processes.push_back(std::make_unique<net::Process>(scheduler, name));
    clients.push_back(
        std::make_unique<Client>(*processes.back(), network, to, options, &trace, seed));
    return *clients.back();
  }
  // Issues argv at time t; the outcome lands in out.
  void command_at(TimeUs t, Client& c, Argv argv, std::optional<Outcome>& out, Context ctx = {}) {
    scheduler.schedule_at(t, [this, &c, argv, &out, ctx] {
      c.do_command(ctx, argv, [this, &out](Result r) { out = Outcome{scheduler.now_us(), r}; });
    });
  }
  std::vector<TraceEvent> events(std::string_view kind, std::string_view actor = "",
                                 int64_t step = -2) const {
    std::vector<TraceEvent> out;
    for (const TraceEvent& e : trace.events())
      if (e.kind == kind && (actor.empty() || e.actor == actor) && (step == -2 || e.step == step))
        out.push_back(e);
    return out;
  }
  Reply server_get(const std::string& key) {
    return server.call(server.connect(scheduler.now_us()), {"GET", key});
  }
};

// ---------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------

// Options.init at each tag (options.go): the resolved defaults of the three profiles.
TEST(OptionsTest, ProfilesHaveGoRedisDefaults) {
  Options v9 = Options::go_redis_v9(8);
  v9.init();
  EXPECT_EQ(v9.profile, "v9.0");
  EXPECT_EQ(v9.pool_size, 80);
  EXPECT_EQ(v9.read_timeout_us, seconds_to_us(3));
  EXPECT_EQ(v9.write_timeout_us, seconds_to_us(3));
  EXPECT_EQ(v9.pool_timeout_us, seconds_to_us(4));
  EXPECT_EQ(v9.dial_timeout_us, seconds_to_us(5));
  EXPECT_EQ(v9.max_retries, 3);
  EXPECT_EQ(v9.min_retry_backoff_us, ms_to_us(8));
  EXPECT_EQ(v9.max_retry_backoff_us, ms_to_us(512));
  EXPECT_EQ(v9.conn_max_idle_time_us, seconds_to_us(1800));
  EXPECT_FALSE(v9.context_timeout_enabled);
  EXPECT_FALSE(v9.retry_pool_timeout);
  EXPECT_FALSE(v9.retry_dial_timeout);
  EXPECT_EQ(v9.dial_attempts, 1);
  Options v98 = Options::go_redis_v9_8();
  v98.init();
  EXPECT_EQ(v98.profile, "v9.8");
  EXPECT_EQ(v98.read_timeout_us, seconds_to_us(3));
  EXPECT_EQ(v98.pool_timeout_us, seconds_to_us(4));
  EXPECT_EQ(v98.min_retry_backoff_us, ms_to_us(8));
  EXPECT_TRUE(v98.retry_pool_timeout);
  EXPECT_FALSE(v98.retry_dial_timeout);
  EXPECT_EQ(v98.dial_attempts, 1);
  Options v922 = Options::go_redis_v9_22();
  v922.init();
  EXPECT_EQ(v922.profile, "v9.22");
  EXPECT_EQ(v922.pool_size, 10);
  EXPECT_EQ(v922.read_timeout_us, seconds_to_us(5));
  EXPECT_EQ(v922.write_timeout_us, seconds_to_us(5));
  EXPECT_EQ(v922.pool_timeout_us, seconds_to_us(6));
  EXPECT_EQ(v922.min_retry_backoff_us, ms_to_us(10));
  EXPECT_EQ(v922.max_retry_backoff_us, seconds_to_us(1));
  EXPECT_TRUE(v922.retry_pool_timeout);
  EXPECT_TRUE(v922.retry_dial_timeout);
  EXPECT_EQ(v922.dial_attempts, 5);
  EXPECT_EQ(v922.dial_retry_delay_us, ms_to_us(100));
  for (const std::string& name : Options::profile_names())
    EXPECT_EQ(Options::for_profile(name)->profile, name);
  EXPECT_FALSE(Options::for_profile("v9.21"));
  Options custom = Options::go_redis_v9();
  custom.read_timeout_us = seconds_to_us(1);
  custom.derive_from_read_timeout();
  EXPECT_EQ(custom.pool_timeout_us, seconds_to_us(2));
}

// 0 asks for the default and -1 switches off, as in go-redis; init() resolves once.
TEST(OptionsTest, ZeroIsTheDefaultAndMinusOneIsOff) {
  for (const std::string& name : Options::profile_names()) {
    Options d = *Options::for_profile(name);
    d.init();
    Options zero = *Options::for_profile(name);
    zero.max_retries = 0;
    zero.min_retry_backoff_us = zero.max_retry_backoff_us = 0;
    zero.read_timeout_us = zero.write_timeout_us = zero.pool_timeout_us = 0;
    zero.dial_timeout_us = zero.conn_max_idle_time_us = 0;
    zero.init();
    EXPECT_EQ(zero.max_retries, 3) << name;
    EXPECT_EQ(zero.min_retry_backoff_us, d.min_retry_backoff_us) << name;
    EXPECT_EQ(zero.max_retry_backoff_us, d.max_retry_backoff_us) << name;
    EXPECT_EQ(zero.read_timeout_us, d.read_timeout_us) << name;
    EXPECT_EQ(zero.write_timeout_us, d.read_timeout_us) << name;
    EXPECT_EQ(zero.pool_timeout_us, d.read_timeout_us + seconds_to_us(1)) << name;
    EXPECT_EQ(zero.dial_timeout_us, seconds_to_us(5)) << name;
    EXPECT_EQ(zero.conn_max_idle_time_us, seconds_to_us(1800)) << name;
    // init() runs once: resolved values are not resolved again (0 retries stays 0).
    Options off = *Options::for_profile(name);
    off.max_retries = -1;
    off.min_retry_backoff_us = off.max_retry_backoff_us = -1;
    off.init().init();
    EXPECT_EQ(off.max_retries, 0) << name;
    EXPECT_EQ(off.min_retry_backoff_us, 0) << name;
    EXPECT_EQ(off.max_retry_backoff_us, 0) << name;
  }
}

// ReadTimeout -1: no timeout, and then PoolTimeout is 30 s, not 1 s; -2: no deadline set at
// all; a positive one derives ReadTimeout + 1 s. A scenario's -1 ms means -1 too.
TEST(OptionsTest, PoolTimeoutIsDerivedFromTheReadTimeout) {
  struct Case {
    TimeUs read, resolved_read, pool;
  };
  for (Case c :
       {Case{Options::kNoTimeout, 0, seconds_to_us(30)}, Case{-ms_to_us(1), 0, seconds_to_us(30)},
        Case{Options::kNoDeadline, -1, seconds_to_us(30)},
        Case{-ms_to_us(2), -1, seconds_to_us(30)},
        Case{ms_to_us(250), ms_to_us(250), ms_to_us(1250)}}) {
    Options o = Options::go_redis_v9();
    o.read_timeout_us = c.read;
    o.derive_from_read_timeout();
    EXPECT_EQ(o.pool_timeout_us, c.pool) << c.read;
    Options raw = Options::go_redis_v9();
    raw.read_timeout_us = c.read;
    raw.pool_timeout_us = 0;
    raw.write_timeout_us = 0;
    raw.init();
    EXPECT_EQ(raw.read_timeout_us, c.resolved_read) << c.read;
    EXPECT_EQ(raw.write_timeout_us, c.resolved_read) << c.read;
    EXPECT_EQ(raw.pool_timeout_us, c.pool) << c.read;
  }
}

TEST(CommandsTest, BlockingCommandsAndTheirTimeouts) {
  EXPECT_EQ(blocking_timeout_us({"BLPOP", "q", "0"}), TimeUs{0});
  EXPECT_EQ(blocking_timeout_us({"brpop", "a", "b", "1.5"}), TimeUs{1'500'000});
  EXPECT_EQ(blocking_timeout_us({"BLMOVE", "a", "b", "LEFT", "RIGHT", "2"}), seconds_to_us(2));
  EXPECT_EQ(blocking_timeout_us({"BZMPOP", "0.25", "1", "z", "MIN"}), TimeUs{250'000});
  EXPECT_EQ(blocking_timeout_us({"XREAD", "BLOCK", "500", "STREAMS", "s", "$"}), ms_to_us(500));
  EXPECT_EQ(blocking_timeout_us({"XREAD", "STREAMS", "s", "$"}), std::nullopt);
  EXPECT_EQ(blocking_timeout_us({"GET", "k"}), std::nullopt);
  EXPECT_EQ(parse_seconds_us("0.000001"), TimeUs{1});
  EXPECT_EQ(parse_seconds_us("-1"), std::nullopt);
}

TEST(BackoffTest, RetryBackoffFollowsGoRedis) {
  Prng prng(3);
  for (int i = 0; i < 200; i++)
    EXPECT_LE(retry_backoff_us(7, ms_to_us(8), ms_to_us(512), prng), ms_to_us(512));
  EXPECT_EQ(retry_backoff_us(70, ms_to_us(8), ms_to_us(512), prng), ms_to_us(512));
  EXPECT_EQ(retry_backoff_us(2, 0, ms_to_us(512), prng), 0);
  // min == max pins the backoff (every draw is capped).
  EXPECT_EQ(retry_backoff_us(1, ms_to_us(8), ms_to_us(8), prng), ms_to_us(8));
}

// min + rand[0, min << n), capped at max, for both default ranges: over many draws every
// value is in bounds and the draws cover the range from min up (a (min << n) + jitter form
// would never go below min << n).
TEST(BackoffTest, BoundsOverManyDraws) {
  for (const std::string& name : Options::profile_names()) {
    Options o = *Options::for_profile(name);
    o.init();
    TimeUs lo = o.min_retry_backoff_us, cap = o.max_retry_backoff_us;
    Prng prng(17);
    for (int64_t n = 1; n <= 6; n++) {
      TimeUs top = std::min(lo + (lo << n), cap + 1);  // exclusive
      TimeUs seen_min = kTimeNeverUs, seen_max = 0;
      int64_t capped = 0;
      for (int i = 0; i < 20000; i++) {
        TimeUs d = retry_backoff_us(n, lo, cap, prng);
        ASSERT_GE(d, lo) << name << " n=" << n;
        ASSERT_LT(d, top) << name << " n=" << n;
        seen_min = std::min(seen_min, d);
        seen_max = std::max(seen_max, d);
        if (d == cap) capped++;
      }
      // The lowest draws are near min, whatever n is.
      EXPECT_LT(seen_min, lo + (lo << n) / 100 + 1) << name << " n=" << n;
      if (lo + (lo << n) <= cap) {
        EXPECT_GT(seen_max, lo + (lo << n) * 99 / 100) << name << " n=" << n;
        EXPECT_EQ(capped, 0) << name << " n=" << n;
      } else {
        EXPECT_GT(capped, 0) << name << " n=" << n;  // draws past max are capped to it
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Commands and the pool
// ---------------------------------------------------------------------------------------

TEST_F(ClientTest, FirstCommandDialsThenReusesTheConnection) {
  Client& c = make_client("app");
  std::optional<Outcome> first, second;
  command_at(0, c, {"SET", "k", "v"}, first);
  scheduler.run_all();
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->result.ok());
  // Dial and HELLO; then the command: one round trip plus the service time.
  EXPECT_EQ(first->at_us, kNewConnUs + kRttUs + kServiceUs);
  auto commands = events("command", "app");
  ASSERT_EQ(commands.size(), 2u);
  EXPECT_EQ(*commands[0].list(F::argv), (std::vector<std::string>{"HELLO", "2"}));
  command_at(scheduler.now_us(), c, {"GET", "k"}, second);
  scheduler.run_all();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->result.reply, Reply::bulk("v"));
  EXPECT_EQ(second->at_us, first->at_us + kRttUs + kServiceUs);
  PoolStats s = c.pool_stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.total_conns, 1u);
  EXPECT_EQ(s.idle_conns, 1u);
  EXPECT_FALSE(events("pool_stats", "app").empty());
}

TEST_F(ClientTest, PoolExhaustedByBlockingCommandsTimesOutAfterPoolTimeout) {
  Options o = Options::go_redis_v9();
  o.pool_size = 4;
  o.max_retries = -1;  // no retries (0 would be the default, 3)
  Client& c = make_client("app", o);
  std::vector<std::optional<Outcome>> blpops(6);
  for (int i = 0; i < 6; i++)
    command_at(0, c, {"BLPOP", "queue", "0"}, blpops[i], Context{kTimeNeverUs, i, {}});
  std::optional<Outcome> get;
  TimeUs t = seconds_to_us(1);
  command_at(t, c, {"GET", "k"}, get, Context{kTimeNeverUs, 7, {}});
  scheduler.run_all();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->at_us, t + seconds_to_us(4));
  EXPECT_EQ(get->result.error.kind, ErrorKind::PoolTimeout);
  EXPECT_EQ(get->result.error.text, "redis: connection pool timeout");
  ASSERT_EQ(events("pool_wait", "app", 7).size(), 1u);
  EXPECT_EQ(events("pool_wait", "app", 7)[0].time_us, t);
  // Four BLPOPs hold the four connections forever; the two others timed out at 4 s.
  for (int i = 0; i < 4; i++) EXPECT_FALSE(blpops[i]);
  for (int i = 4; i < 6; i++) {
    ASSERT_TRUE(blpops[i]);
    EXPECT_EQ(blpops[i]->at_us, seconds_to_us(4));
    EXPECT_EQ(blpops[i]->result.error.kind, ErrorKind::PoolTimeout);
  }
  PoolStats s = c.pool_stats();
  EXPECT_EQ(s.misses, 4u);
  EXPECT_EQ(s.timeouts, 3u);
  EXPECT_EQ(s.total_conns, 4u);
  EXPECT_EQ(s.idle_conns, 0u);
}

TEST_F(ClientTest, PoolTimeoutIsRetriedWithBackoffFromV98) {
  Options o = Options::go_redis_v9_8();
  o.pool_size = 1;
  Client& c = make_client("app", o);
  std::optional<Outcome> blpop, get;
  command_at(0, c, {"BLPOP", "queue", "0"}, blpop);
  TimeUs t = seconds_to_us(1);
  command_at(t, c, {"GET", "k"}, get, Context{kTimeNeverUs, 7, {}});
  scheduler.run_all();
  ASSERT_TRUE(get);
  auto timeouts = events("pool_timeout", "app", 7);
  auto backoffs = events("backoff", "app", 7);
  ASSERT_EQ(timeouts.size(), 4u);  // 1 + MaxRetries attempts
  ASSERT_EQ(backoffs.size(), 3u);
  TimeUs expected = t;
  for (size_t i = 0; i < 4; i++) {
    expected += seconds_to_us(4);
    EXPECT_EQ(timeouts[i].time_us, expected);
    EXPECT_EQ(timeouts[i].attempt, static_cast<int64_t>(i));
    if (i < 3) {
      EXPECT_EQ(backoffs[i].time_us, expected);
      expected += std::stoll(backoffs[i].text);
    }
  }
  EXPECT_EQ(get->at_us, expected);
  EXPECT_EQ(get->result.error.kind, ErrorKind::PoolTimeout);
  EXPECT_EQ(c.pool_stats().timeouts, 4u);
}

TEST_F(ClientTest, V90DoesNotRetryPoolTimeouts) {
  Options o = Options::go_redis_v9();
  o.pool_size = 1;
  Client& c = make_client("app", o);
  std::optional<Outcome> blpop, get;
  command_at(0, c, {"BLPOP", "queue", "0"}, blpop);
  command_at(seconds_to_us(1), c, {"GET", "k"}, get);
  scheduler.run_all();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->at_us, seconds_to_us(5));
  EXPECT_EQ(get->result.error.kind, ErrorKind::PoolTimeout);
  EXPECT_TRUE(events("backoff", "app").empty());
}

TEST_F(ClientTest, BackoffSequenceIsExactAndSeeded) {
  Client& c = make_client("app", Options::go_redis_v9(), 9, "nowhere");
  std::optional<Outcome> get;
  command_at(0, c, {"GET", "k"}, get);
  scheduler.run_all();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->result.error.kind, ErrorKind::Refused);
  EXPECT_EQ(get->result.error.text, "dial tcp: connect: connection refused");
  Prng prng = Prng(9).derive(Client::kBackoffStream);
  auto backoffs = events("backoff", "app");
  ASSERT_EQ(backoffs.size(), 3u);
  TimeUs t = 0;
  for (int64_t attempt = 1; attempt <= 3; attempt++) {
    TimeUs b = retry_backoff_us(attempt, ms_to_us(8), ms_to_us(512), prng);
    EXPECT_GE(b, ms_to_us(8));
    EXPECT_LT(b, ms_to_us(8) + (ms_to_us(8) << attempt));
    t += kRttUs;  // each refused dial takes one round trip
    EXPECT_EQ(backoffs[attempt - 1].time_us, t);
    EXPECT_EQ(backoffs[attempt - 1].attempt, attempt);
    EXPECT_EQ(backoffs[attempt - 1].text, std::to_string(b) + " us");
    t += b;
  }
  EXPECT_EQ(get->at_us, t + kRttUs);
}

// A client whose connection is already up (so that a stalled server hits a command, not the
// HELLO of a new connection).
class StalledServerTest : public ClientTest {
 protected:
  // Warms c's pool with one connection by t = 1 ms; at 1 ms "admin" stalls the server 60 s
  // (DEBUG SLEEP reaches it at 1 ms + kNewConnUs + kLatencyUs).
  void warm_then_stall(std::vector<Client*> warm) {
    for (Client* c : warm) {
      warmups.emplace_back();
      command_at(0, *c, {"PING"}, warmups.back());
    }
    Options admin_options = Options::go_redis_v9();
    admin_options.max_retries = -1;
    Client& admin = make_client("admin", admin_options);
    command_at(ms_to_us(1), admin, {"DEBUG", "SLEEP", "60"}, stall);
  }
  std::deque<std::optional<Outcome>> warmups;
  std::optional<Outcome> stall;
};

TEST_F(StalledServerTest, ReadTimeoutClosesTheConnectionAndIsRetried) {
  Options o = Options::go_redis_v9();
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);  // pins every backoff
  Client& c = make_client("app", o);
  warm_then_stall({&c});
  std::optional<Outcome> incr;
  TimeUs t = ms_to_us(2);
  command_at(t, c, {"INCR", "n"}, incr);
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(incr);
  // Attempt 0 on the pooled connection: ReadTimeout, retryable, the connection is closed.
  // Attempt 1 after 8 ms on a new connection: its HELLO times out too; initConn errors are
  // getConn errors, not retried (after HELLO's own one backoff).
  EXPECT_EQ(incr->at_us,
            t + seconds_to_us(3) + ms_to_us(8) + kRttUs + seconds_to_us(3) + ms_to_us(8));
  EXPECT_EQ(incr->result.error.kind, ErrorKind::ReadTimeout);
  EXPECT_EQ(incr->result.error.text, "i/o timeout");
  auto closes = events("conn_close", "app");
  ASSERT_EQ(closes.size(), 2u);
  for (const TraceEvent& e : closes) EXPECT_EQ(e.text, "i/o timeout");
  EXPECT_EQ(c.pool_stats().total_conns, 0u);
  // The server still runs the INCR once the sleep is over: a timeout cancels nothing there.
  scheduler.run_all();
  EXPECT_EQ(server_get("n"), Reply::bulk("1"));
}

TEST_F(StalledServerTest, WithoutHelloEveryAttemptTimesOut) {
  Options o = Options::go_redis_v9();
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);
  o.hello_on_connect = false;
  Client& c = make_client("app", o);
  warm_then_stall({&c});
  std::optional<Outcome> incr;
  TimeUs t = ms_to_us(2);
  command_at(t, c, {"INCR", "n"}, incr);
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(incr);
  // Four attempts: the pooled connection, then three new ones (a dial each); 8 ms between.
  EXPECT_EQ(incr->at_us, t + seconds_to_us(3) + 3 * (ms_to_us(8) + kRttUs + seconds_to_us(3)));
  EXPECT_EQ(incr->result.error.kind, ErrorKind::ReadTimeout);
  EXPECT_EQ(events("conn_close", "app").size(), 4u);
  EXPECT_EQ(events("pool_miss", "app").size(), 4u);
  // Every attempt was sent, and every one runs after the sleep: the counter says 4.
  scheduler.run_all();
  EXPECT_EQ(server_get("n"), Reply::bulk("4"));
}

TEST_F(StalledServerTest, BlockingCommandReadsWithItsOwnTimeoutAndIsNotRetried) {
  Client& c = make_client("app");
  warm_then_stall({&c});
  std::optional<Outcome> blpop;
  TimeUs t = ms_to_us(2);
  command_at(t, c, {"BLPOP", "queue", "1"}, blpop);
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(blpop);
  EXPECT_EQ(blpop->at_us, t + seconds_to_us(1 + 10));
  EXPECT_EQ(blpop->result.error.kind, ErrorKind::ReadTimeout);
  EXPECT_TRUE(events("backoff", "app").empty());
}

TEST_F(StalledServerTest, ContextDeadlineBoundsTheReadOnlyWithContextTimeoutEnabled) {
  Options on = Options::go_redis_v9();
  on.context_timeout_enabled = true;
  Client& with = make_client("with", on);
  Client& without = make_client("without");
  warm_then_stall({&with, &without});
  std::optional<Outcome> a, b;
  TimeUs t = ms_to_us(2);
  Context ctx{t + seconds_to_us(1), 1, {}};
  command_at(t, with, {"GET", "k"}, a, ctx);
  command_at(t, without, {"GET", "k"}, b, ctx);
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  // With: the socket deadline is the context's; the i/o timeout is retryable, but the
  // backoff sleep sees the context done: "context deadline exceeded", no second attempt.
  EXPECT_EQ(a->at_us, t + seconds_to_us(1));
  EXPECT_EQ(a->result.error.kind, ErrorKind::ContextDeadline);
  EXPECT_EQ(a->result.error.text, "context deadline exceeded");
  EXPECT_EQ(events("command", "with").size(), 3u);  // HELLO, PING, GET
  // Without: the read ignores the context and waits the full ReadTimeout.
  EXPECT_EQ(b->at_us, t + seconds_to_us(3));
  EXPECT_EQ(b->result.error.kind, ErrorKind::ContextDeadline);
  EXPECT_EQ(events("conn_close", "without").size(), 1u);
}

// The reconnect storm's step (context-timeout-reconnect-storm): with ContextTimeoutEnabled a
// call whose deadline passes while the server is busy closes its connection; the next call
// dials a new one, whose HELLO (initConn) waits behind the same busy server, is cut at that
// call's own deadline, and closes the new connection too ("context deadline exceeded": HELLO's
// i/o timeout is retryable, and its backoff sleep finds the context done). The GET itself is
// never sent. go-redis v9 redis.go (_getConn, initConn, releaseConn), error.go (isBadConn).
TEST_F(StalledServerTest, WithContextTimeoutEveryDeadlineCostsAConnectionAndTheRedialsHello) {
  Options o = Options::go_redis_v9();
  o.context_timeout_enabled = true;
  Client& c = make_client("app", o);
  warm_then_stall({&c});
  std::optional<Outcome> first, second;
  TimeUs t = ms_to_us(2);
  command_at(t, c, {"GET", "k"}, first, Context{t + ms_to_us(50), 1, {}});
  TimeUs t2 = t + ms_to_us(100);
  command_at(t2, c, {"GET", "k"}, second, Context{t2 + ms_to_us(50), 2, {}});
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(first);
  ASSERT_TRUE(second);
  EXPECT_EQ(first->at_us, t + ms_to_us(50));
  EXPECT_EQ(first->result.error.kind, ErrorKind::ContextDeadline);
  EXPECT_EQ(second->at_us, t2 + ms_to_us(50));
  EXPECT_EQ(second->result.error.kind, ErrorKind::ContextDeadline);
  auto closes = events("conn_close", "app");
  ASSERT_EQ(closes.size(), 2u);
  EXPECT_EQ(closes[0].text, "i/o timeout");                // the first GET's read
  EXPECT_EQ(closes[1].text, "context deadline exceeded");  // the redial's HELLO
  EXPECT_EQ(events("dial", "app").size(), 2u);             // the warm-up's and the redial
  size_t gets = 0;
  for (const TraceEvent& e : events("command", "app"))
    if (const auto* argv = e.list(F::argv); argv && !argv->empty() && (*argv)[0] == "GET") gets++;
  EXPECT_EQ(gets, 1u);
  EXPECT_EQ(c.pool_stats().misses, 2u);
  EXPECT_EQ(c.pool_stats().total_conns, 0u);
}

TEST_F(StalledServerTest, TxPipelineReadTimeoutIsNotRetried) {
  Client& c = make_client("app");
  warm_then_stall({&c});
  std::optional<PipelineResult> result;
  TimeUs done_at = 0;
  TimeUs t = ms_to_us(2);
  scheduler.schedule_at(t, [&] {
    c.tx_pipeline({}, {{"INCR", "n"}}, [&](PipelineResult r) {
      result = r;
      done_at = scheduler.now_us();
    });
  });
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->error.kind, ErrorKind::ReadTimeout);
  EXPECT_EQ(done_at, t + seconds_to_us(3));
  EXPECT_TRUE(events("backoff", "app").empty());
}

TEST_F(ClientTest, PoolWaitEndsAtTheContextDeadline) {
  Options o = Options::go_redis_v9();
  o.pool_size = 1;
  Client& c = make_client("app", o);
  std::optional<Outcome> blpop, get;
  command_at(0, c, {"BLPOP", "queue", "0"}, blpop);
  command_at(1000, c, {"GET", "k"}, get, Context{ms_to_us(500), 2, {}});
  scheduler.run_all();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->at_us, ms_to_us(500));
  EXPECT_EQ(get->result.error.kind, ErrorKind::ContextDeadline);
  EXPECT_EQ(c.pool_stats().timeouts, 0u);
  auto ended = events("pool_wait_deadline", "app", 2);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].str_or(F::error_class), "context_deadline");
  EXPECT_EQ(ended[0].num_or(F::duration_us, -1), ms_to_us(499));  // waited from 1 ms
}

// ---------------------------------------------------------------------------------------
// Go contexts: cancellation (context.h)
// ---------------------------------------------------------------------------------------

TEST(ContextStateTest, ChildrenEndWithTheirParentAndErrKeepsTheFirstCause) {
  auto root = ContextState::derive(nullptr, kTimeNeverUs);      // WithCancel(Background())
  auto child = ContextState::derive(root, ms_to_us(500));       // WithTimeout(root, 500 ms)
  auto detached = ContextState::derive(nullptr, kTimeNeverUs);  // WithoutCancel(root)
  EXPECT_EQ(child->deadline_us(), ms_to_us(500));
  EXPECT_EQ(root->err(ms_to_us(100)), ErrorKind::None);
  EXPECT_EQ(child->err(ms_to_us(500)), ErrorKind::ContextDeadline);
  int fired = 0;
  auto sub = ContextState::on_cancel(child, [&fired] { fired++; });
  auto gone = ContextState::on_cancel(child, [&fired] { fired += 100; });
  gone.reset();  // unsubscribed: never runs
  root->cancel(ms_to_us(100));
  EXPECT_EQ(fired, 1);  // the root's cancel ends its child's waits
  EXPECT_EQ(root->err(ms_to_us(100)), ErrorKind::Canceled);
  EXPECT_EQ(child->err(ms_to_us(100)), ErrorKind::Canceled);
  EXPECT_EQ(child->err(ms_to_us(900)), ErrorKind::Canceled);  // the cancel came first
  EXPECT_EQ(detached->err(ms_to_us(900)), ErrorKind::None);
  root->cancel(ms_to_us(200));  // a second cancel changes nothing and fires nothing
  EXPECT_EQ(fired, 1);
  // A cancel after the deadline: Err() keeps context deadline exceeded.
  auto timed = ContextState::derive(nullptr, ms_to_us(50));
  timed->cancel(ms_to_us(60));
  EXPECT_EQ(timed->err(ms_to_us(60)), ErrorKind::ContextDeadline);
  EXPECT_EQ(Error::make(ErrorKind::Canceled).text, "context canceled");
  EXPECT_STREQ(error_class(ErrorKind::Canceled), "context_canceled");
  EXPECT_FALSE(should_retry(Error::make(ErrorKind::Canceled), true, Options::go_redis_v9_22()));
}

// waitTurn: a context already done fails the call at once, before it takes a turn, even with
// every connection free; nothing is sent, nothing is retried.
TEST_F(ClientTest, ACancelledContextFailsBeforeTakingAPoolTurn) {
  Client& c = make_client("app");
  auto ctx = ContextState::derive(nullptr, kTimeNeverUs);
  scheduler.schedule_at(ms_to_us(1), [&] { ctx->cancel(scheduler.now_us()); });
  std::optional<Outcome> get;
  Context call{kTimeNeverUs, 3, {}};
  call.state = ctx;
  command_at(ms_to_us(2), c, {"GET", "k"}, get, call);
  scheduler.run_all();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->at_us, ms_to_us(2));
  EXPECT_EQ(get->result.error.kind, ErrorKind::Canceled);
  EXPECT_EQ(get->result.error.text, "context canceled");
  EXPECT_TRUE(events("command", "app", 3).empty());
  EXPECT_TRUE(events("dial", "app", 3).empty());
  ASSERT_EQ(events("result", "app", 3).size(), 1u);
  EXPECT_EQ(events("result", "app", 3)[0].str_or(F::result_class), "context_canceled");
  EXPECT_EQ(c.pool_stats().misses, 0u);
}

// waitTurn's select on ctx.Done(): a cancel ends a wait for a turn at once (not a pool timeout).
TEST_F(ClientTest, ACancelEndsAPoolWait) {
  Options o = Options::go_redis_v9();
  o.pool_size = 1;
  Client& c = make_client("app", o);
  auto ctx = ContextState::derive(nullptr, kTimeNeverUs);
  std::optional<Outcome> blpop, get;
  command_at(0, c, {"BLPOP", "queue", "0"}, blpop);
  Context call{kTimeNeverUs, 2, {}};
  call.state = ctx;
  command_at(ms_to_us(1), c, {"GET", "k"}, get, call);
  scheduler.schedule_at(ms_to_us(50), [&] { ctx->cancel(scheduler.now_us()); });
  scheduler.run_until(seconds_to_us(10));
  ASSERT_TRUE(get);
  EXPECT_EQ(get->at_us, ms_to_us(50));
  EXPECT_EQ(get->result.error.kind, ErrorKind::Canceled);
  auto ended = events("pool_wait_deadline", "app", 2);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].str_or(F::error_class), "context_canceled");
  EXPECT_EQ(ended[0].num_or(F::duration_us, -1), ms_to_us(49));  // the wait, not PoolTimeout
  EXPECT_EQ(c.pool_stats().timeouts, 0u);
  EXPECT_EQ(c.pool().waiters(), 0u);
}

// A cancel never ends a read in flight, even with ContextTimeoutEnabled (pool.Conn.deadline
// takes only ctx.Deadline()): the read waits for its ReadTimeout; the retry's backoff then
// finds the context done and the call ends with context canceled, without another attempt.
TEST_F(StalledServerTest, ACancelDoesNotEndAReadButEndsTheNextBackoff) {
  Options o = Options::go_redis_v9();
  o.context_timeout_enabled = true;
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);
  Client& c = make_client("app", o);
  warm_then_stall({&c});
  auto ctx = ContextState::derive(nullptr, kTimeNeverUs);
  std::optional<Outcome> incr;
  TimeUs t = ms_to_us(2);
  Context call{kTimeNeverUs, 5, {}};
  call.state = ctx;
  command_at(t, c, {"INCR", "n"}, incr, call);
  scheduler.schedule_at(ms_to_us(100), [&] { ctx->cancel(scheduler.now_us()); });
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(incr);
  EXPECT_EQ(incr->at_us, t + seconds_to_us(3));
  EXPECT_EQ(incr->result.error.kind, ErrorKind::Canceled);
  EXPECT_EQ(events("read_timeout", "app", 5).size(), 1u);
  EXPECT_EQ(events("command", "app", 5).size(), 1u);  // no second attempt
}

// A call's own timeout is context.WithTimeout(ctx): a child whose Err() is fixed by whichever
// came first. Its deadline (1 s) passed before the parent's cancel (2 s), so when the read in
// flight ends (ReadTimeout, 3 s) the backoff finds "context deadline exceeded", not the cancel.
TEST_F(StalledServerTest, ACallsOwnDeadlineBeforeItsContextsCancelIsADeadline) {
  Options o = Options::go_redis_v9();
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);
  Client& c = make_client("app", o);
  warm_then_stall({&c});
  auto ctx = ContextState::derive(nullptr, kTimeNeverUs);
  std::optional<Outcome> incr;
  TimeUs t = ms_to_us(2);
  Context call{seconds_to_us(1), 5, {}};
  call.state = ctx;
  command_at(t, c, {"INCR", "n"}, incr, call);
  scheduler.schedule_at(seconds_to_us(2), [&] { ctx->cancel(scheduler.now_us()); });
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(incr);
  EXPECT_EQ(incr->at_us, t + seconds_to_us(3));
  EXPECT_EQ(incr->result.error.kind, ErrorKind::ContextDeadline);
  EXPECT_EQ(incr->result.error.text, "context deadline exceeded");
  EXPECT_EQ(events("command", "app", 5).size(), 1u);
}

// internal.Sleep(ctx, backoff): a cancel in the middle of a backoff ends it there.
TEST_F(StalledServerTest, ACancelEndsABackoffInTheMiddle) {
  Options o = Options::go_redis_v9();
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);
  Client& c = make_client("app", o);
  warm_then_stall({&c});
  auto ctx = ContextState::derive(nullptr, kTimeNeverUs);
  std::optional<Outcome> incr;
  TimeUs t = ms_to_us(2);
  Context call{kTimeNeverUs, 5, {}};
  call.state = ctx;
  command_at(t, c, {"INCR", "n"}, incr, call);
  TimeUs cancel_at = t + seconds_to_us(3) + ms_to_us(4);
  scheduler.schedule_at(cancel_at, [&] { ctx->cancel(scheduler.now_us()); });
  scheduler.run_until(seconds_to_us(30));
  ASSERT_TRUE(incr);
  EXPECT_EQ(incr->at_us, cancel_at);
  EXPECT_EQ(incr->result.error.kind, ErrorKind::Canceled);
  EXPECT_EQ(events("backoff", "app", 5).size(), 1u);
  EXPECT_EQ(events("command", "app", 5).size(), 1u);
}

TEST_F(ClientTest, ResultClassTellsANilFromAnError) {
  Client& c = make_client("app");
  std::optional<Outcome> miss, hit;
  command_at(0, c, {"GET", "absent"}, miss, Context{kTimeNeverUs, 1, {}});
  command_at(ms_to_us(10), c, {"INCR", "n"}, hit, Context{kTimeNeverUs, 2, {}});
  scheduler.run_all();
  ASSERT_TRUE(miss && hit);
  EXPECT_STREQ(result_class(miss->result), "nil");
  EXPECT_STREQ(result_class(hit->result), "ok");
  EXPECT_EQ(events("result", "app", 1)[0].str_or(F::result_class), "nil");
  EXPECT_EQ(events("result", "app", 2)[0].str_or(F::result_class), "ok");
}

TEST_F(ClientTest, BlockingCommandHoldsItsConnectionUntilServed) {
  Options o = Options::go_redis_v9();
  o.pool_size = 1;
  Client& c = make_client("app", o);
  Client& pusher = make_client("pusher");
  std::optional<Outcome> blpop, get, push;
  command_at(0, c, {"BLPOP", "queue", "0"}, blpop);
  command_at(1000, c, {"GET", "k"}, get);
  command_at(ms_to_us(100), pusher, {"RPUSH", "queue", "job"}, push);
  scheduler.run_all();
  ASSERT_TRUE(blpop);
  ASSERT_TRUE(get);
  EXPECT_EQ(blpop->result.reply, Reply::array({Reply::bulk("queue"), Reply::bulk("job")}));
  // RPUSH reaches the server at 100 ms + new connection + latency; BLPOP is served then.
  TimeUs served = ms_to_us(100) + kNewConnUs + kLatencyUs;
  EXPECT_EQ(blpop->at_us, served + kServiceUs + kLatencyUs);
  EXPECT_EQ(get->at_us, blpop->at_us + kRttUs + kServiceUs);  // got the freed connection
  EXPECT_EQ(c.pool_stats().hits, 1u);
  EXPECT_EQ(c.pool_stats().misses, 1u);
}

TEST_F(ClientTest, StaleConnectionsAreDiscardedOnGet) {
  Client& c = make_client("app");
  std::optional<Outcome> first, second, third;
  command_at(0, c, {"PING"}, first);
  scheduler.run_all();
  net::ConnId conn = events("dial_ok", "app").at(0).connection;
  scheduler.schedule_at(ms_to_us(1), [&] { network.disconnect(conn); });
  command_at(ms_to_us(2), c, {"PING"}, second);
  scheduler.run_all();
  ASSERT_TRUE(second);
  EXPECT_TRUE(second->result.ok());
  EXPECT_EQ(second->at_us, ms_to_us(2) + kNewConnUs + kRttUs + kServiceUs);  // a fresh dial
  PoolStats s = c.pool_stats();
  EXPECT_EQ(s.stale_conns, 1u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.hits, 0u);
  // ConnMaxIdleTime: 30 minutes idle makes a connection stale too.
  command_at(second->at_us + seconds_to_us(1800), c, {"PING"}, third);
  scheduler.run_all();
  ASSERT_TRUE(third);
  EXPECT_EQ(c.pool_stats().stale_conns, 2u);
}

TEST_F(ClientTest, PoolStatsAreSampledPeriodically) {
  Client& c = make_client("app");
  c.pool().sample_stats(seconds_to_us(1), seconds_to_us(3));
  std::optional<Outcome> get;
  command_at(ms_to_us(1500), c, {"GET", "k"}, get);
  scheduler.run_all();
  auto samples = events("pool_stats_sample", "app");
  ASSERT_EQ(samples.size(), 4u);
  EXPECT_EQ(samples[0].time_us, 0);
  EXPECT_EQ(samples[3].time_us, seconds_to_us(3));
  EXPECT_EQ(samples[0].num_or(F::misses, -1), 0);
  EXPECT_EQ(samples[0].num_or(F::total, -1), 0);
  EXPECT_EQ(samples[3].num_or(F::hits, -1), 0);
  EXPECT_EQ(samples[3].num_or(F::misses, -1), 1);
  EXPECT_EQ(samples[3].num_or(F::timeouts, -1), 0);
  EXPECT_EQ(samples[3].num_or(F::total, -1), 1);
  EXPECT_EQ(samples[3].num_or(F::idle, -1), 1);
  EXPECT_EQ(samples[3].num_or(F::stale, -1), 0);
}

// Before v9.22 a dial timeout is a net.Error with Timeout() true, and getConn passes
// retryTimeout = false: the call fails after one DialTimeout.
TEST_F(ClientTest, DialTimeoutIsNotRetriedBeforeV922) {
  for (Options o : {Options::go_redis_v9(), Options::go_redis_v9_8()}) {
    Client& c = make_client("app" + o.profile, o);
    network.set_partition("app" + o.profile, "redis", true);
    std::optional<Outcome> get;
    command_at(scheduler.now_us(), c, {"GET", "k"}, get);
    TimeUs start = scheduler.now_us();
    scheduler.run_until(start + seconds_to_us(20));
    ASSERT_TRUE(get) << o.profile;
    EXPECT_EQ(get->result.error.kind, ErrorKind::DialTimeout) << o.profile;
    EXPECT_EQ(get->at_us, start + seconds_to_us(5)) << o.profile;
    EXPECT_EQ(events("dial_timeout", "app" + o.profile).size(), 1u) << o.profile;
    EXPECT_TRUE(events("backoff", "app" + o.profile).empty()) << o.profile;
  }
}

// v9.22: dialConn tries 5 dials 100 ms apart, each with its own DialTimeout (DialerRetries,
// PR #3705), and a dial timeout is retried by the call as well (PRs #3787, #3810).
TEST_F(ClientTest, V922TriesEachDialAgainAndRetriesDialTimeouts) {
  Options o = Options::go_redis_v9_22();
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);
  Client& c = make_client("app", o);
  network.set_partition("app", "redis", true);
  scheduler.schedule_at(seconds_to_us(7), [&] { network.set_partition("app", "redis", false); });
  std::optional<Outcome> get;
  command_at(0, c, {"GET", "k"}, get);
  scheduler.run_until(seconds_to_us(60));
  ASSERT_TRUE(get);
  EXPECT_TRUE(get->result.ok());
  // Try 1 swallowed (times out at 5 s), try 2 at 5.1 s swallowed too (healed at 7 s, but its
  // SYN was dropped), try 3 at 10.2 s connects: all within one dialConn, one pool miss.
  auto timeouts = events("dial_timeout", "app");
  ASSERT_EQ(timeouts.size(), 2u);
  EXPECT_EQ(timeouts[0].time_us, seconds_to_us(5));
  EXPECT_EQ(timeouts[1].time_us, seconds_to_us(10) + ms_to_us(100));
  EXPECT_EQ(events("dial", "app").size(), 3u);
  EXPECT_TRUE(events("backoff", "app").empty());
  EXPECT_EQ(get->at_us, seconds_to_us(10) + ms_to_us(200) + kNewConnUs + kRttUs + kServiceUs);
  EXPECT_EQ(c.pool_stats().misses, 1u);
  // A whole dialConn that times out is retried by the call (MaxRetries 3, 8 ms backoff).
  Options once = Options::go_redis_v9_22();
  once.dial_attempts = 1;
  once.dial_timeout_us = seconds_to_us(1);
  once.min_retry_backoff_us = once.max_retry_backoff_us = ms_to_us(8);
  Client& d = make_client("app2", once);
  network.set_partition("app2", "redis", true);
  std::optional<Outcome> get2;
  TimeUs t = scheduler.now_us();
  command_at(t, d, {"GET", "k"}, get2);
  scheduler.run_until(t + seconds_to_us(60));
  ASSERT_TRUE(get2);
  EXPECT_EQ(get2->result.error.kind, ErrorKind::DialTimeout);
  EXPECT_EQ(events("dial_timeout", "app2").size(), 4u);
  EXPECT_EQ(get2->at_us, t + 4 * seconds_to_us(1) + 3 * ms_to_us(8));
}

TEST_F(ClientTest, RetryableServerErrorsAreRetriedOthersAreNot) {
  Options o = Options::go_redis_v9();
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);
  Client& c = make_client("app", o);
  std::optional<Outcome> loading, wrongtype, readonly;
  // A Lua error_reply makes the fake answer any error text.
  command_at(
      0, c,
      {"EVAL", "return redis.error_reply('LOADING Redis is loading the dataset in memory')", "0"},
      loading, Context{kTimeNeverUs, 1, {}});
  scheduler.run_all();
  ASSERT_TRUE(loading);
  EXPECT_EQ(loading->result.error.text, "LOADING Redis is loading the dataset in memory");
  EXPECT_EQ(events("command", "app", 1).size(), 1u + 4u);  // HELLO, then 1 + MaxRetries
  EXPECT_EQ(events("backoff", "app", 1).size(), 3u);
  EXPECT_TRUE(events("conn_close", "app").empty());  // a server error keeps the connection
  EXPECT_EQ(loading->at_us, kNewConnUs + 4 * (kRttUs + kServiceUs) + 3 * ms_to_us(8));
  command_at(scheduler.now_us(), c, {"SET", "s", "x"}, wrongtype);
  scheduler.run_all();
  command_at(scheduler.now_us(), c, {"LPUSH", "s", "x"}, wrongtype, Context{kTimeNeverUs, 2, {}});
  scheduler.run_all();
  ASSERT_TRUE(wrongtype);
  EXPECT_EQ(wrongtype->result.error.text.substr(0, 9), "WRONGTYPE");
  EXPECT_EQ(events("command", "app", 2).size(), 1u);
  // READONLY is retried and, like a network error, closes the connection.
  command_at(
      scheduler.now_us(), c,
      {"EVAL",
       "return redis.error_reply(\"READONLY You can't write against a read only replica.\")", "0"},
      readonly, Context{kTimeNeverUs, 3, {}});
  scheduler.run_all();
  ASSERT_TRUE(readonly);
  EXPECT_EQ(readonly->result.error.text.substr(0, 9), "READONLY ");
  // Attempt 0 on the pooled connection, then three new ones (HELLO + EVAL each).
  EXPECT_EQ(events("command", "app", 3).size(), 1u + 3u * 2u);
  EXPECT_EQ(events("conn_close", "app").size(), 4u);
}

TEST_F(ClientTest, ScriptRunAfterAServerRestartFallsBackToEval) {
  Client& c = make_client("app");
  Script script("return 42");
  std::vector<Result> results;
  auto run = [&] {
    c.run_script({}, script, {}, {}, [&](Result r) { results.push_back(r); });
    scheduler.run_all();
  };
  run();
  run();
  fake::Server restarted;
  network.replace_server("redis", &restarted);  // the pooled connection is reset
  scheduler.run_all();
  run();
  ASSERT_EQ(results.size(), 3u);
  for (const Result& r : results) EXPECT_EQ(r.reply, Reply::integer_reply(42));
  EXPECT_EQ(events("script_fallback", "app").size(), 2u);
  EXPECT_EQ(c.pool_stats().stale_conns, 1u);  // the reset connection was found dead on Get
}

// ---------------------------------------------------------------------------------------
// Pipelines and transactions
// ---------------------------------------------------------------------------------------

TEST_F(ClientTest, PipelineIsResentWholeOnRetrySoIncrCountsTwice) {
  Client& c = make_client("app");
  std::optional<Outcome> warm;
  command_at(0, c, {"PING"}, warm);
  std::optional<PipelineResult> result;
  TimeUs done_at = 0;
  scheduler.schedule_at(1000, [&] {
    network.set_loss("app", "redis", net::Direction::ToClient, net::LossRatio{1, 1});
    c.pipeline({}, {{"INCR", "c"}, {"INCR", "c"}}, [&](PipelineResult r) {
      result = std::move(r);
      done_at = scheduler.now_us();
    });
  });
  scheduler.schedule_at(2000, [&] {
    network.set_loss("app", "redis", net::Direction::ToClient, net::LossRatio{0, 1});
  });
  scheduler.run_all();
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->error.ok());
  ASSERT_EQ(result->results.size(), 2u);
  EXPECT_EQ(result->results[0].reply, Reply::integer_reply(3));
  EXPECT_EQ(result->results[1].reply, Reply::integer_reply(4));
  EXPECT_EQ(server_get("c"), Reply::bulk("4"));  // the lost first round was applied too
  auto backoffs = events("backoff", "app");
  ASSERT_EQ(backoffs.size(), 1u);
  EXPECT_EQ(backoffs[0].time_us, 1000 + seconds_to_us(3));
  EXPECT_EQ(done_at, 1000 + seconds_to_us(3) + std::stoll(backoffs[0].text) + kNewConnUs + kRttUs +
                         2 * kServiceUs);
}

TEST_F(ClientTest, TxPipelineWrapsInMultiExec) {
  Client& c = make_client("app");
  std::optional<PipelineResult> ok, aborted;
  c.tx_pipeline({}, {{"SET", "a", "1"}, {"INCR", "a"}}, [&](PipelineResult r) { ok = r; });
  scheduler.run_all();
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->error.ok());
  EXPECT_EQ(ok->results[0].reply, Reply::ok());
  EXPECT_EQ(ok->results[1].reply, Reply::integer_reply(2));
  auto commands = events("command", "app");
  ASSERT_EQ(commands.size(), 5u);
  EXPECT_EQ(commands[0].list(F::argv)->at(0), "HELLO");
  EXPECT_EQ(*commands[1].list(F::argv), std::vector<std::string>{"MULTI"});
  EXPECT_EQ(*commands[4].list(F::argv), std::vector<std::string>{"EXEC"});
  c.tx_pipeline({}, {{"SET", "a", "5"}, {"INCR"}}, [&](PipelineResult r) { aborted = r; });
  scheduler.run_all();
  ASSERT_TRUE(aborted);
  EXPECT_EQ(aborted->error.text, "EXECABORT Transaction discarded because of previous errors.");
  EXPECT_EQ(server_get("a"), Reply::bulk("2"));
}

TEST_F(ClientTest, WatchHelperRetriesThenGivesUpWithTxFailed) {
  Client& c = make_client("app");
  Client& other = make_client("other");
  int64_t calls = 0;
  // Every attempt: read the counter, let another client change it, then try to write.
  Client::WatchFn fn = [&](Tx& tx, Client::ErrorDone finish) {
    calls++;
    tx.do_command({}, {"GET", "counter"}, [&, finish](Result) {
      other.do_command({}, {"INCR", "counter"}, [&, finish](Result) {
        tx.tx_pipelined({}, {{"SET", "counter", "100"}},
                        [finish](PipelineResult r) { finish(r.error); });
      });
    });
  };
  std::optional<Error> result;
  c.watch_with_retries({}, {"counter"}, fn, 3, [&](Error e) { result = e; });
  scheduler.run_all();
  ASSERT_TRUE(result);
  EXPECT_EQ(result->kind, ErrorKind::TxFailed);
  EXPECT_EQ(result->text, "redis: transaction failed");
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(server_get("counter"), Reply::bulk("3"));
  EXPECT_EQ(events("watch_retry", "app").size(), 2u);
  EXPECT_EQ(events("watch_gave_up", "app").size(), 1u);
  EXPECT_EQ(*events("command", "app").back().list(F::argv), std::vector<std::string>{"UNWATCH"});
  PoolStats s = c.pool_stats();
  EXPECT_EQ(s.misses, 1u);  // one connection, given back after each attempt
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.idle_conns, 1u);
}

TEST_F(ClientTest, WatchHelperSucceedsWithoutInterference) {
  Client& c = make_client("app");
  std::optional<Error> result;
  c.watch_with_retries(
      {}, {"counter"},
      [&](Tx& tx, Client::ErrorDone finish) {
        tx.do_command({}, {"GET", "counter"}, [&tx, finish](Result r) {
          int64_t n = r.reply.kind == Reply::Kind::Bulk ? std::stoll(r.reply.str) : 0;
          tx.tx_pipelined({}, {{"SET", "counter", std::to_string(n + 1)}},
                          [finish](PipelineResult p) { finish(p.error); });
        });
      },
      3, [&](Error e) { result = e; });
  scheduler.run_all();
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->ok());
  EXPECT_EQ(server_get("counter"), Reply::bulk("1"));
  EXPECT_TRUE(events("watch_retry", "app").empty());
}

TEST_F(ClientTest, ScriptRunFallsBackToEvalOnNoscript) {
  Client& c = make_client("app");
  Script script("return redis.call('INCR', KEYS[1])");
  std::vector<Result> results;
  auto run = [&] {
    c.run_script({}, script, {"n"}, {}, [&](Result r) { results.push_back(r); });
    scheduler.run_all();
  };
  run();  // NOSCRIPT -> EVAL (loads it)
  run();  // EVALSHA hits the cache
  std::optional<Outcome> flush;
  command_at(scheduler.now_us(), c, {"SCRIPT", "FLUSH"}, flush);
  scheduler.run_all();
  run();  // NOSCRIPT again after the flush
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].reply, Reply::integer_reply(1));
  EXPECT_EQ(results[1].reply, Reply::integer_reply(2));
  EXPECT_EQ(results[2].reply, Reply::integer_reply(3));
  EXPECT_EQ(events("script_fallback", "app").size(), 2u);
  auto calls = events("call", "app");
  ASSERT_EQ(calls.size(), 6u);  // EVALSHA EVAL EVALSHA SCRIPT EVALSHA EVAL
  EXPECT_EQ(calls[0].list(F::argv)->at(0), "EVALSHA");
  EXPECT_EQ(calls[1].list(F::argv)->at(0), "EVAL");
  EXPECT_EQ(*calls[0].list(F::argv),
            (std::vector<std::string>{"EVALSHA", script.sha1_hex, "1", "n"}));
}

// ---------------------------------------------------------------------------------------
// PubSub
// ---------------------------------------------------------------------------------------

TEST_F(ClientTest, PubSubResubscribesAndLosesExactlyTheGap) {
  Client& sub_client = make_client("sub");
  // One publisher per message, connected beforehand: each PUBLISH reaches the server
  // exactly one latency after it is sent.
  std::vector<Client*> pubs;
  std::vector<std::optional<Outcome>> warm(5);
  for (int i = 0; i < 5; i++) {
    pubs.push_back(&make_client("pub" + std::to_string(i + 1)));
    command_at(0, *pubs.back(), {"PING"}, warm[i]);
  }
  PubSub ps(sub_client, 1);
  std::vector<Message> received;
  ps.on_message = [&](const Message& m) { received.push_back(m); };
  std::optional<Error> subscribed;
  ps.subscribe({"news"}, [&](Error e) { subscribed = e; });
  std::vector<std::optional<Outcome>> published(5);
  // Send times; each PUBLISH reaches the server 100 us later.
  const TimeUs sent[5] = {10'000, 20'050, 20'350, 20'550, 30'000};
  for (int i = 0; i < 5; i++)
    command_at(sent[i], *pubs[i], {"PUBLISH", "news", "m" + std::to_string(i + 1)}, published[i]);
  // The connection is reset at 20 ms: the server drops the subscription at once; the client
  // sees EOF at 20.1 ms, redials (connected 20.3 ms, HELLO answered 20.502 ms), and SUBSCRIBE
  // reaches the server at 20.602 ms. m2 (at the server 20.15 ms) and m3 (20.45 ms) fall
  // into the gap; m4 (20.65 ms) is delivered.
  scheduler.schedule_at(20'000, [&] { network.disconnect(ps.conn_id()); });
  scheduler.run_all();
  ASSERT_TRUE(subscribed);
  EXPECT_TRUE(subscribed->ok());
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(received[0].payload, "m1");
  EXPECT_EQ(received[1].payload, "m4");
  EXPECT_EQ(received[2].payload, "m5");
  EXPECT_EQ(received[1].received_us, 20'650 + kServiceUs + kLatencyUs);
  EXPECT_EQ(ps.reconnects(), 1);
  // The publisher is told how many received each message; the subscriber is told nothing.
  EXPECT_EQ(published[1]->result.reply, Reply::integer_reply(0));
  EXPECT_EQ(published[2]->result.reply, Reply::integer_reply(0));
  EXPECT_EQ(published[3]->result.reply, Reply::integer_reply(1));
  auto gone = events("pubsub_disconnected", "sub");
  auto back = events("pubsub_resubscribe", "sub");
  ASSERT_EQ(gone.size(), 1u);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(gone[0].time_us, 20'100);
  EXPECT_EQ(back[0].time_us, 20'502);
}

// ---------------------------------------------------------------------------------------
// Process pauses
// ---------------------------------------------------------------------------------------

TEST_F(ClientTest, PausedClientResumesLateAndItsLockHasExpired) {
  Client& holder = make_client("holder");
  Client& other = make_client("other");
  std::optional<Outcome> acquired, late_reply, check, stolen;
  command_at(0, holder, {"SET", "lock", "holder", "NX", "PX", "2000"}, acquired);
  // A command whose reply arrives while the process is frozen (reply at 500.102 ms).
  command_at(499'900, holder, {"GET", "lock"}, late_reply);
  // The holder's "work done, check the lock" timer, due at 1 s.
  TimeUs timer_ran_at = -1;
  scheduler.schedule_at(0, [&] {
    holder.process().after(seconds_to_us(1), [&] {
      timer_ran_at = scheduler.now_us();
      holder.do_command({}, {"GET", "lock"}, [&](Result r) {
        check = Outcome{scheduler.now_us(), r};
      });
    });
  });
  scheduler.schedule_at(ms_to_us(500), [&] { holder.process().pause_for(seconds_to_us(5)); });
  command_at(seconds_to_us(3), other, {"SET", "lock", "other", "NX", "PX", "10000"}, stolen);
  scheduler.run_all();
  ASSERT_TRUE(acquired && late_reply && check && stolen);
  EXPECT_EQ(acquired->result.reply, Reply::ok());
  EXPECT_EQ(stolen->result.reply, Reply::ok());  // the holder's lock expired at 2 s
  TimeUs resume = ms_to_us(500) + seconds_to_us(5);
  EXPECT_EQ(late_reply->at_us, resume);  // read at resume, not a timeout
  EXPECT_EQ(late_reply->result.reply, Reply::bulk("holder"));
  EXPECT_EQ(timer_ran_at, resume);
  EXPECT_EQ(check->at_us, resume + kRttUs + kServiceUs);
  EXPECT_EQ(check->result.reply, Reply::bulk("other"));
}

// ---------------------------------------------------------------------------------------
// Determinism
// ---------------------------------------------------------------------------------------

std::string run_scenario(uint64_t seed) {
  Scheduler scheduler;
  Trace trace;
  fake::Server server;
  net::Network network(scheduler, seed, &trace);
  network.set_default_link(net::LinkConfig{300, 200});
  network.add_server("redis", &server);
  std::vector<std::unique_ptr<net::Process>> processes;
  std::vector<std::unique_ptr<Client>> clients;
  Options o = Options::go_redis_v9();
  o.pool_size = 2;
  for (int i = 0; i < 3; i++) {
    std::string name = "worker" + std::to_string(i);
    processes.push_back(std::make_unique<net::Process>(scheduler, name));
    clients.push_back(std::make_unique<Client>(*processes.back(), network, "redis", o, &trace,
                                               seed + static_cast<uint64_t>(i)));
  }
  PubSub ps(*clients[0], 0);
  ps.subscribe({"events"}, [](Error) {});
  clients[0]->pool().sample_stats(seconds_to_us(1), seconds_to_us(8));
  // Each worker: 15 chained INCRs, each followed by a PUBLISH and a pipeline every 5th.
  // Owned here, called through raw pointers: no self-referencing shared_ptr cycle.
  std::vector<std::unique_ptr<std::function<void(int64_t)>>> steps;
  for (size_t w = 0; w < clients.size(); w++) {
    Client* c = clients[w].get();
    steps.push_back(std::make_unique<std::function<void(int64_t)>>());
    std::function<void(int64_t)>* step = steps.back().get();
    *step = [c, step, w](int64_t n) {
      if (n >= 15) return;
      c->do_command(Context{kTimeNeverUs, n, {}}, {"INCR", "counter"}, [c, step, n, w](Result) {
        if (n % 5 == 0) {
          c->pipeline(Context{kTimeNeverUs, n, {}},
                      {{"INCR", "p"}, {"PUBLISH", "events", std::to_string(w)}},
                      [step, n](PipelineResult) { (*step)(n + 1); });
        } else {
          (*step)(n + 1);
        }
      });
    };
    scheduler.schedule_at(static_cast<TimeUs>(w) * 1000, [step] { (*step)(0); });
  }
  scheduler.schedule_at(ms_to_us(5), [&] { network.set_partition("worker1", "redis", true); });
  scheduler.schedule_at(seconds_to_us(4),
                        [&] { network.set_partition("worker1", "redis", false); });
  scheduler.schedule_at(ms_to_us(7), [&] { network.disconnect(ps.conn_id()); });
  scheduler.schedule_at(ms_to_us(6), [&] { processes[2]->pause_for(seconds_to_us(2)); });
  auto result = scheduler.run_all(1'000'000);
  EXPECT_FALSE(result.bound_hit);
  trace.set_meta("seed", std::to_string(seed));
  return trace_to_json(trace);
}

TEST(ClientDeterminismTest, SameSeedGivesByteIdenticalTrace) {
  std::string a = run_scenario(11), b = run_scenario(11), c = run_scenario(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a.find("read_timeout"), std::string::npos);  // the partition made timeouts
  EXPECT_NE(a.find("pubsub_resubscribe"), std::string::npos);
  EXPECT_NE(a.find("pool_stats_sample"), std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Profiles, retries and the dial-error circuit breaker
// ---------------------------------------------------------------------------------------

// max_retries 0 is go-redis' default (3 retries); -1 disables retries.
TEST_F(ClientTest, MaxRetriesZeroIsTheDefaultMinusOneIsNone) {
  struct Case {
    int64_t max_retries;
    size_t dials;
  };
  for (Case k : {Case{0, 4}, Case{-1, 1}, Case{2, 3}}) {
    Options o = Options::go_redis_v9();
    o.max_retries = k.max_retries;
    std::string name = "app" + std::to_string(k.max_retries);
    Client& c = make_client(name, o, 1, "nowhere");
    std::optional<Outcome> get;
    command_at(scheduler.now_us(), c, {"GET", "k"}, get);
    scheduler.run_all();
    ASSERT_TRUE(get) << k.max_retries;
    EXPECT_EQ(get->result.error.kind, ErrorKind::Refused) << k.max_retries;
    EXPECT_EQ(events("dial", name).size(), k.dials) << k.max_retries;
    EXPECT_EQ(events("backoff", name).size(), k.dials - 1) << k.max_retries;
  }
}

// The same starved pool under each profile: v9.0 gives up after one PoolTimeout, v9.8 and
// v9.22 retry the pool timeout MaxRetries times (each with its profile's PoolTimeout).
TEST_F(ClientTest, PoolTimeoutRetryDiffersByProfile) {
  struct Case {
    Options options;
    size_t pool_timeouts;
    TimeUs pool_timeout;
  };
  for (Case k : {Case{Options::go_redis_v9(), 1, seconds_to_us(4)},
                 Case{Options::go_redis_v9_8(), 4, seconds_to_us(4)},
                 Case{Options::go_redis_v9_22(), 4, seconds_to_us(6)}}) {
    Options o = k.options;
    o.pool_size = 1;
    std::string name = "app" + o.profile;
    Client& c = make_client(name, o);
    std::optional<Outcome> blpop, get;
    TimeUs t = scheduler.now_us();
    command_at(t, c, {"BLPOP", "queue-" + o.profile, "0"}, blpop);
    command_at(t + seconds_to_us(1), c, {"GET", "k"}, get, Context{kTimeNeverUs, 7, {}});
    scheduler.run_until(t + seconds_to_us(120));
    ASSERT_TRUE(get) << o.profile;
    EXPECT_EQ(get->result.error.kind, ErrorKind::PoolTimeout) << o.profile;
    auto timeouts = events("pool_timeout", name, 7);
    ASSERT_EQ(timeouts.size(), k.pool_timeouts) << o.profile;
    EXPECT_EQ(timeouts[0].time_us, t + seconds_to_us(1) + k.pool_timeout) << o.profile;
    EXPECT_EQ(events("backoff", name, 7).size(), k.pool_timeouts - 1) << o.profile;
  }
}

class BreakerTest : public ClientTest {
 protected:
  // A client with a pool of 3 whose calls are not retried: one call, one dial.
  Client& client(const std::string& name) {
    Options o = Options::go_redis_v9();
    o.pool_size = 3;
    o.max_retries = -1;
    return make_client(name, o);
  }
  Outcome call_at(Client& c, TimeUs t) {
    std::optional<Outcome> out;
    command_at(t, c, {"GET", "k"}, out);
    scheduler.run_until(t + ms_to_us(50));
    EXPECT_TRUE(out);
    return out ? *out : Outcome{};
  }
  std::vector<TraceEvent> probes(const std::string& actor) const {
    std::vector<TraceEvent> out;
    for (const TraceEvent& e : events("dial", actor))
      if (e.str_or(F::reason) == "probe") out.push_back(e);
    return out;
  }
};

// PoolSize failed dials open the breaker: the next call gets the last dial error at once,
// without a dial.
TEST_F(BreakerTest, PoolSizeFailedDialsReturnTheLastErrorAtOnce) {
  Client& c = client("app");
  network.set_refused("app", "redis", true);
  for (int i = 0; i < 3; i++) {
    Outcome o = call_at(c, ms_to_us(100) * (i + 1));
    EXPECT_EQ(o.result.error.kind, ErrorKind::Refused);
    EXPECT_EQ(o.at_us, ms_to_us(100) * (i + 1) + kRttUs);  // a real dial, refused
  }
  EXPECT_TRUE(c.pool().breaker_open());
  ASSERT_EQ(events("pool_breaker_open", "app").size(), 1u);
  EXPECT_EQ(events("pool_breaker_open", "app")[0].time_us, ms_to_us(300) + kRttUs);
  size_t dials = events("dial", "app").size() - probes("app").size();
  EXPECT_EQ(dials, 3u);
  Outcome fast = call_at(c, ms_to_us(500));
  EXPECT_EQ(fast.at_us, ms_to_us(500));  // no network round trip
  EXPECT_EQ(fast.result.error.kind, ErrorKind::Refused);
  EXPECT_EQ(fast.result.error.text, "dial tcp: connect: connection refused");
  EXPECT_EQ(events("dial", "app").size() - probes("app").size(), 3u);
  ASSERT_EQ(events("pool_breaker_fail", "app").size(), 1u);
}

// While open, a background probe redials at most once per second (a dial, then 1 s of
// sleep); the calls meanwhile never dial.
TEST_F(BreakerTest, ProbeRedialsAtMostOncePerSecond) {
  Client& c = client("app");
  network.set_refused("app", "redis", true);
  for (int i = 0; i < 3; i++) call_at(c, ms_to_us(100) * (i + 1));
  TimeUs opened = ms_to_us(300) + kRttUs;
  for (int i = 0; i < 40; i++) call_at(c, opened + ms_to_us(250) * (i + 1));  // to +10.05 s
  auto p = probes("app");
  ASSERT_GE(p.size(), 9u);
  EXPECT_LE(p.size(), 11u);
  EXPECT_EQ(p[0].time_us, opened);
  for (size_t i = 1; i < p.size(); i++)
    EXPECT_GE(p[i].time_us - p[i - 1].time_us, seconds_to_us(1));
  EXPECT_EQ(events("dial", "app").size() - p.size(), 3u);  // the 40 calls never dialed
  EXPECT_EQ(events("pool_breaker_fail", "app").size(), 40u);
  EXPECT_TRUE(c.pool().breaker_open());
}

// Only a successful probe closes it; a successful ordinary dial does not reset the count,
// so failures that are not consecutive add up to PoolSize too.
TEST_F(BreakerTest, OnlyASuccessfulProbeResetsIt) {
  Client& c = client("app");
  network.set_refused("app", "redis", true);
  call_at(c, ms_to_us(100));
  call_at(c, ms_to_us(200));
  EXPECT_EQ(c.pool().dial_errors(), 2);
  network.set_refused("app", "redis", false);
  Outcome ok = call_at(c, ms_to_us(300));
  EXPECT_TRUE(ok.result.ok());
  EXPECT_EQ(c.pool().dial_errors(), 2);  // not reset by a good dial
  // The pooled connection is dropped; the next call dials again and fails: 3 in all.
  network.disconnect(events("dial_ok", "app").back().connection);
  scheduler.run_until(ms_to_us(350));
  network.set_refused("app", "redis", true);
  Outcome third = call_at(c, ms_to_us(400));
  EXPECT_EQ(third.result.error.kind, ErrorKind::Refused);
  EXPECT_TRUE(c.pool().breaker_open());
  TimeUs opened = events("pool_breaker_open", "app").at(0).time_us;
  // The server takes connections again at opened + 2.5 s: the probe at opened + 2 s (+ its
  // refused round trip) still fails, the one a second later succeeds and resets.
  scheduler.schedule_at(opened + ms_to_us(2500),
                        [&] { network.set_refused("app", "redis", false); });
  Outcome still = call_at(c, opened + ms_to_us(2900));
  EXPECT_EQ(still.result.error.kind, ErrorKind::Refused);
  EXPECT_EQ(still.at_us, opened + ms_to_us(2900));
  scheduler.run_until(opened + seconds_to_us(5));
  auto resets = events("pool_breaker_reset", "app");
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_EQ(resets[0].time_us, opened + 3 * (kRttUs + seconds_to_us(1)) + kRttUs);
  EXPECT_FALSE(c.pool().breaker_open());
  EXPECT_EQ(c.pool().dial_errors(), 0);
  Outcome after = call_at(c, opened + seconds_to_us(5));
  EXPECT_TRUE(after.result.ok());
  EXPECT_EQ(probes("app").size(), 4u);  // and no probe after the reset
  scheduler.run_until(opened + seconds_to_us(20));
  EXPECT_EQ(probes("app").size(), 4u);
}

// A PubSub reconnects through the same breaker (pool.NewConn -> dialConn): after PoolSize
// refused redials it resubscribes only once the probe got through, not when the server
// takes connections again.
TEST_F(ClientTest, PubSubReconnectWaitsForTheBreakersProbe) {
  Options o = Options::go_redis_v9();
  o.pool_size = 3;
  Client& sub = make_client("sub", o);
  PubSub ps(sub, 1);
  ps.subscribe({"news"}, [](Error) {});
  scheduler.run_until(ms_to_us(10));
  scheduler.schedule_at(ms_to_us(20), [&] {
    network.set_refused("sub", "redis", true);
    network.disconnect(ps.conn_id());
  });
  // Redials: refused at once, then every 100 ms; the third failure opens the breaker.
  scheduler.schedule_at(ms_to_us(700), [&] { network.set_refused("sub", "redis", false); });
  scheduler.run_until(seconds_to_us(5));
  TimeUs opened = events("pool_breaker_open", "sub").at(0).time_us;
  EXPECT_LT(opened, ms_to_us(300));
  auto reset = events("pool_breaker_reset", "sub");
  ASSERT_EQ(reset.size(), 1u);
  EXPECT_GT(reset[0].time_us, opened + seconds_to_us(1));  // the second probe
  auto back = events("pubsub_resubscribe", "sub");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_GT(back[0].time_us, reset[0].time_us);
  EXPECT_LT(back[0].time_us, reset[0].time_us + ms_to_us(101) + kNewConnUs);
  EXPECT_FALSE(events("pool_breaker_fail", "sub").empty());
  ps.close();
}

// ---------------------------------------------------------------------------------------
// PubSub.Channel()
// ---------------------------------------------------------------------------------------

class ChannelTest : public ClientTest {
 protected:
  // A subscriber on "news" (connected by 10 ms) and a warm publisher.
  void SetUp() override {
    pub_ = &make_client("pub");
    command_at(0, *pub_, {"PING"}, warm_);
    sub_ = std::make_unique<PubSub>(make_client("sub"), 1);
    sub_->on_message = [this](const Message& m) { got_.push_back(m); };
  }
  void TearDown() override { sub_->close(); }
  void publish_at(TimeUs t, int n, size_t bytes = 10) {
    for (int i = 0; i < n; i++) {
      outs_.emplace_back();
      std::string payload = "m" + std::to_string(next_++);
      payload.resize(std::max(payload.size(), bytes), '.');
      command_at(t, *pub_, {"PUBLISH", "news", payload}, outs_.back());
    }
  }
  std::string name(size_t i) const {
    return got_.at(i).payload.substr(0, got_[i].payload.find('.'));
  }
  Client* pub_ = nullptr;
  std::unique_ptr<PubSub> sub_;
  std::vector<Message> got_;
  std::deque<std::optional<Outcome>> outs_;
  std::optional<Outcome> warm_;
  int next_ = 1;
};

// A full Go channel blocks the reader; after the send timeout the message is dropped and
// the reader reads on. The application takes messages at its own pace.
TEST_F(ChannelTest, AFullChannelDropsAfterTheSendTimeout) {
  ChannelOptions co;
  co.size = 2;
  co.send_timeout_us = seconds_to_us(1);
  co.handle_us = seconds_to_us(10);
  co.health_check_us = 0;
  sub_->channel(co);
  sub_->subscribe({"news"}, [](Error) {});
  scheduler.run_until(ms_to_us(10));
  publish_at(ms_to_us(10), 5);
  scheduler.run_until(ms_to_us(500));
  // m1 taken at once (handling it takes 10 s), m2 and m3 wait, m4 blocks the reader.
  ASSERT_EQ(got_.size(), 1u);
  EXPECT_EQ(name(0), "m1");
  EXPECT_EQ(sub_->queued(), 2u);
  EXPECT_TRUE(sub_->reader_blocked());
  scheduler.run_until(seconds_to_us(25));
  auto dropped = events("pubsub_dropped", "sub");
  ASSERT_EQ(dropped.size(), 2u);  // m4, then m5 a second later
  EXPECT_EQ(dropped[0].str_or(F::message).substr(0, 2), "m4");
  EXPECT_EQ(dropped[1].str_or(F::message).substr(0, 2), "m5");
  EXPECT_EQ(dropped[1].time_us - dropped[0].time_us, seconds_to_us(1));
  EXPECT_EQ(sub_->dropped(), 2);
  ASSERT_EQ(got_.size(), 3u);
  EXPECT_EQ(name(1), "m2");
  EXPECT_EQ(name(2), "m3");
  EXPECT_EQ(got_[2].received_us - got_[1].received_us, seconds_to_us(10));
  EXPECT_EQ(events("pubsub_message", "sub").size(), 3u);
}

// The reader drains the socket into the channel, so a slow application does not fill the
// server's output buffer (client-output-buffer-limit pubsub) while the channel has room;
// with a small channel the reader stops reading, the buffer fills and the server cuts it.
TEST_F(ChannelTest, TheChannelShieldsTheServerBufferUntilItIsFull) {
  std::optional<Outcome> limit;
  command_at(0, *pub_, {"CONFIG", "SET", "client-output-buffer-limit", "pubsub 16kb 8kb 60"},
             limit);
  ChannelOptions co;
  co.size = 100;
  co.handle_us = ms_to_us(300);
  co.health_check_us = 0;
  sub_->channel(co);
  sub_->subscribe({"news"}, [](Error) {});
  scheduler.run_until(ms_to_us(10));
  for (int i = 0; i < 20; i++) publish_at(ms_to_us(10) + ms_to_us(10) * i, 1, 4096);
  scheduler.run_until(ms_to_us(400));
  EXPECT_GE(sub_->queued(), 18u);  // the backlog is in the client's memory
  scheduler.run_until(seconds_to_us(10));
  EXPECT_TRUE(events("client_cut").empty());
  EXPECT_TRUE(events("pubsub_disconnected", "sub").empty());
  EXPECT_EQ(got_.size(), 20u);
}

TEST_F(ChannelTest, AFullChannelStopsReadingAndTheServerCutsTheSubscriber) {
  std::optional<Outcome> limit;
  command_at(0, *pub_, {"CONFIG", "SET", "client-output-buffer-limit", "pubsub 16kb 8kb 60"},
             limit);
  ChannelOptions co;
  co.size = 3;
  co.handle_us = seconds_to_us(5);
  co.health_check_us = 0;
  sub_->channel(co);
  sub_->subscribe({"news"}, [](Error) {});
  scheduler.run_until(ms_to_us(10));
  for (int i = 0; i < 20; i++) publish_at(ms_to_us(10) + ms_to_us(10) * i, 1, 4096);
  scheduler.run_until(seconds_to_us(1));
  // m1 taken, m2..m4 queued, m5 blocks the reader; the server's buffer passed 16 KB.
  EXPECT_FALSE(events("client_cut").empty());
  EXPECT_TRUE(sub_->reader_blocked());
  // The blocked reader has not noticed the EOF yet.
  EXPECT_TRUE(events("pubsub_disconnected", "sub").empty());
  scheduler.run_until(seconds_to_us(8));
  // Once the application took m2 (at 5 s) the reader sends m5, reads, sees EOF, reconnects.
  auto gone = events("pubsub_disconnected", "sub");
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_GE(gone[0].time_us, seconds_to_us(5));
  EXPECT_FALSE(events("pubsub_resubscribe", "sub").empty());
  EXPECT_TRUE(events("pubsub_dropped", "sub").empty());  // 1 min send timeout not reached
}

// The health check writes PING when nothing arrived for its interval (3 s by default).
TEST_F(ChannelTest, HealthCheckPingsAQuietConnection) {
  sub_->channel(ChannelOptions{});
  sub_->subscribe({"news"}, [](Error) {});
  publish_at(seconds_to_us(2), 1);
  scheduler.run_until(seconds_to_us(9) + ms_to_us(1));
  std::vector<TimeUs> pings;
  for (const TraceEvent& e : events("command", "sub"))
    if (e.list(F::argv) && e.list(F::argv)->at(0) == "PING") pings.push_back(e.time_us);
  // The message at ~2 s resets the interval: a ping 3 s later; its pong (any reply is as
  // good as a message) resets it again.
  ASSERT_EQ(pings.size(), 2u);
  EXPECT_GT(pings[0], seconds_to_us(5));
  EXPECT_LT(pings[0], seconds_to_us(5) + ms_to_us(2));
  EXPECT_EQ(pings[1], pings[0] + kRttUs + kServiceUs + seconds_to_us(3));
  EXPECT_EQ(got_.size(), 1u);
}

}  // namespace
}  // namespace redlab::client
