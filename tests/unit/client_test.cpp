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

TEST(OptionsTest, ProfilesHaveGoRedisDefaults) {
  Options v9 = Options::go_redis_v9(8);
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
  Options v922 = Options::go_redis_v9_22();
  EXPECT_EQ(v922.pool_size, 10);
  EXPECT_EQ(v922.read_timeout_us, seconds_to_us(5));
  EXPECT_EQ(v922.pool_timeout_us, seconds_to_us(6));
  EXPECT_EQ(v922.min_retry_backoff_us, ms_to_us(10));
  EXPECT_EQ(v922.max_retry_backoff_us, seconds_to_us(1));
  Options custom = Options::go_redis_v9();
  custom.read_timeout_us = seconds_to_us(1);
  custom.derive_from_read_timeout();
  EXPECT_EQ(custom.pool_timeout_us, seconds_to_us(2));
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
  for (int64_t retry = 1; retry <= 3; retry++) {
    for (int i = 0; i < 200; i++) {
      TimeUs d = retry_backoff_us(retry, ms_to_us(8), ms_to_us(512), prng, false);
      EXPECT_GE(d, ms_to_us(8));
      EXPECT_LT(d, ms_to_us(8) + (ms_to_us(8) << retry));
    }
  }
  for (int i = 0; i < 200; i++)
    EXPECT_LE(retry_backoff_us(7, ms_to_us(8), ms_to_us(512), prng, false), ms_to_us(512));
  EXPECT_EQ(retry_backoff_us(70, ms_to_us(8), ms_to_us(512), prng, false), ms_to_us(512));
  EXPECT_EQ(retry_backoff_us(2, 0, ms_to_us(512), prng, false), 0);
  // min == max pins the backoff (every draw is capped).
  EXPECT_EQ(retry_backoff_us(1, ms_to_us(8), ms_to_us(8), prng, false), ms_to_us(8));
  // The later form: (min << n) + jitter, at least min << n.
  for (int i = 0; i < 200; i++) {
    TimeUs d = retry_backoff_us(2, ms_to_us(10), seconds_to_us(1), prng, true);
    EXPECT_GE(d, ms_to_us(40));
    EXPECT_LT(d, ms_to_us(80));
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
  EXPECT_EQ(commands[0].text, "HELLO 2");
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
  o.max_retries = 0;  // go-redis MaxRetries: -1
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

TEST_F(ClientTest, PoolTimeoutIsRetriedWithBackoff) {
  Options o = Options::go_redis_v9();
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

TEST_F(ClientTest, OlderVersionsDoNotRetryPoolTimeouts) {
  Options o = Options::go_redis_v9();
  o.pool_size = 1;
  o.retry_pool_timeout = false;
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
    TimeUs b = retry_backoff_us(attempt, ms_to_us(8), ms_to_us(512), prng, false);
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
    admin_options.max_retries = 0;
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
  EXPECT_EQ(samples[0].text, "hits=0 misses=0 timeouts=0 total=0 idle=0 stale=0");
  EXPECT_EQ(samples[3].text, "hits=0 misses=1 timeouts=0 total=1 idle=1 stale=0");
}

TEST_F(ClientTest, DialTimeoutsInAPartitionAreRetried) {
  Options o = Options::go_redis_v9();
  o.min_retry_backoff_us = o.max_retry_backoff_us = ms_to_us(8);
  Client& c = make_client("app", o);
  network.set_partition("app", "redis", true);
  scheduler.schedule_at(seconds_to_us(7), [&] { network.set_partition("app", "redis", false); });
  std::optional<Outcome> get;
  command_at(0, c, {"GET", "k"}, get);
  scheduler.run_all();
  ASSERT_TRUE(get);
  EXPECT_TRUE(get->result.ok());
  // Two dials swallowed by the partition (5 s each), the third after it healed.
  auto timeouts = events("dial_timeout", "app");
  ASSERT_EQ(timeouts.size(), 2u);
  EXPECT_EQ(timeouts[0].time_us, seconds_to_us(5));
  EXPECT_EQ(timeouts[1].time_us, seconds_to_us(10) + ms_to_us(8));
  EXPECT_EQ(timeouts[0].text, "dial tcp: i/o timeout");
  EXPECT_EQ(get->at_us, seconds_to_us(10) + 2 * ms_to_us(8) + kNewConnUs + kRttUs + kServiceUs);
  EXPECT_EQ(c.pool_stats().misses, 3u);
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
  EXPECT_EQ(commands[0].text, "HELLO 2");
  EXPECT_EQ(commands[1].text, "MULTI");
  EXPECT_EQ(commands[4].text, "EXEC");
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
  EXPECT_EQ(events("command", "app").back().text, "UNWATCH");
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
  EXPECT_EQ(calls[0].text.substr(0, 7), "EVALSHA");
  EXPECT_EQ(calls[1].text.substr(0, 4), "EVAL");
  EXPECT_EQ(calls[0].text, "EVALSHA " + script.sha1_hex + " 1 n");
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

}  // namespace
}  // namespace redlab::client
