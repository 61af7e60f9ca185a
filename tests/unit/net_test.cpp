// The simulated network (sim/net) on virtual time: latency and jitter, FIFO connections,
// closes from both sides, partitions, one-way loss, resets, clock jumps, and process pauses.
#include <gtest/gtest.h>

#include <optional>

#include "sim/core/scheduler.h"
#include "sim/core/trace.h"
#include "sim/fake/server.h"
#include "sim/net/network.h"
#include "sim/net/process.h"

namespace redlab::net {
namespace {

constexpr TimeUs kLatencyUs = 100;

// One connection's view: what arrived and when.
struct Endpoint {
  std::optional<TimeUs> connected_us;
  std::optional<TimeUs> closed_us;
  std::vector<std::pair<TimeUs, Reply>> replies;
};

class NetTest : public ::testing::Test {
 protected:
  Scheduler scheduler;
  Trace trace;
  fake::Server server;
  Network network{scheduler, 42, &trace};
  TimeUs service_us = server.options().service_us;

  NetTest() {
    network.set_default_link(LinkConfig{kLatencyUs, 0});
    network.add_server("redis", &server);
  }

  ConnId open(Endpoint& e, std::string_view host = "app", std::string_view to = "redis") {
    ConnCallbacks cb;
    cb.on_connected = [this, &e] { e.connected_us = scheduler.now_us(); };
    cb.on_closed = [this, &e] { e.closed_us = scheduler.now_us(); };
    cb.on_reply = [this, &e](Reply r) { e.replies.emplace_back(scheduler.now_us(), std::move(r)); };
    return network.open(host, to, std::move(cb));
  }
  bool traced(std::string_view kind) const {
    for (const TraceEvent& e : trace.events())
      if (e.kind == kind) return true;
    return false;
  }
};

TEST_F(NetTest, HandshakeIsOneRoundTripAndRepliesComeBackAfterTheLatency) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_until(kLatencyUs);
  EXPECT_NE(network.server_client(id), 0);  // the server accepted at one latency
  EXPECT_FALSE(e.connected_us);
  scheduler.run_all();
  ASSERT_TRUE(e.connected_us);
  EXPECT_EQ(*e.connected_us, 2 * kLatencyUs);
  network.send(id, {"SET", "k", "v"});
  network.send(id, {"GET", "k"});
  scheduler.run_all();
  ASSERT_EQ(e.replies.size(), 2u);
  // Both arrive at 300; served one after the other (2 us each), back 100 us later.
  EXPECT_EQ(e.replies[0].first, 3 * kLatencyUs + service_us + kLatencyUs);
  EXPECT_EQ(e.replies[0].second, Reply::ok());
  EXPECT_EQ(e.replies[1].first, 3 * kLatencyUs + 2 * service_us + kLatencyUs);
  EXPECT_EQ(e.replies[1].second, Reply::bulk("v"));
}

TEST_F(NetTest, JitterIsSeededAndNeverReordersAConnection) {
  auto run = [](uint64_t seed) {
    Scheduler s;
    fake::Server srv;
    Network net(s, seed, nullptr);
    net.set_default_link(LinkConfig{1000, 900});
    net.add_server("redis", &srv);
    std::vector<std::pair<TimeUs, Reply>> replies;
    ConnCallbacks cb;
    cb.on_reply = [&](Reply r) { replies.emplace_back(s.now_us(), std::move(r)); };
    ConnId id = net.open("app", "redis", std::move(cb));
    s.run_all();
    for (int i = 0; i < 50; i++) net.send(id, {"ECHO", std::to_string(i)});
    s.run_all();
    return replies;
  };
  auto a = run(7), b = run(7), c = run(8);
  ASSERT_EQ(a.size(), 50u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  bool jittered = false;
  for (size_t i = 0; i < a.size(); i++) {
    EXPECT_EQ(a[i].second, Reply::bulk(std::to_string(i)));  // in order
    if (i > 0) {
      EXPECT_GE(a[i].first, a[i - 1].first);
    }
    if (i > 0 && a[i].first - a[i - 1].first != 2) jittered = true;
  }
  EXPECT_TRUE(jittered);
}

TEST_F(NetTest, ClientCloseReachesTheServerAfterTheLatency) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_all();
  fake::ClientId sid = network.server_client(id);
  ASSERT_TRUE(server.connected(sid));
  TimeUs t = scheduler.now_us();
  network.close(id);
  scheduler.run_until(t + kLatencyUs - 1);
  EXPECT_TRUE(server.connected(sid));
  scheduler.run_until(t + kLatencyUs);
  EXPECT_FALSE(server.connected(sid));
  EXPECT_FALSE(e.closed_us);  // no callback after our own close
}

TEST_F(NetTest, ServerCloseIsAnEofAtTheClient) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_all();
  TimeUs t = scheduler.now_us();
  network.send(id, {"QUIT"});
  scheduler.run_all();
  ASSERT_EQ(e.replies.size(), 1u);
  EXPECT_EQ(e.replies[0].second, Reply::ok());
  ASSERT_TRUE(e.closed_us);
  EXPECT_EQ(*e.closed_us, t + kLatencyUs + service_us + kLatencyUs);
  EXPECT_FALSE(server.connected(network.server_client(id)));
}

TEST_F(NetTest, PartitionSwallowsDialsAndMessagesUntilHealed) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_all();
  network.set_partition("app", "redis", true);
  network.send(id, {"SET", "k", "v"});
  Endpoint e2;
  open(e2);
  scheduler.run_all();
  EXPECT_TRUE(e.replies.empty());
  EXPECT_FALSE(e2.connected_us);  // the dial hangs: only a dial timeout can end it
  EXPECT_FALSE(e2.closed_us);
  EXPECT_EQ(network.messages_dropped(), 2u);
  EXPECT_TRUE(traced("net_partition"));
  EXPECT_TRUE(traced("net_drop"));
  EXPECT_EQ(server.call(server.connect(0), {"EXISTS", "k"}), Reply::integer_reply(0));
  network.set_partition("app", "redis", false);
  network.send(id, {"PING"});
  scheduler.run_all();
  ASSERT_EQ(e.replies.size(), 1u);
  EXPECT_EQ(e.replies[0].second, Reply::status("PONG"));
}

TEST_F(NetTest, OneWayLossExecutesTheCommandButLosesTheReply) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_all();
  network.set_loss("app", "redis", Direction::ToClient, LossRatio{1, 1});
  network.send(id, {"INCR", "n"});
  scheduler.run_all();
  EXPECT_TRUE(e.replies.empty());
  EXPECT_EQ(server.call(server.connect(0), {"GET", "n"}), Reply::bulk("1"));
}

TEST_F(NetTest, DisconnectResetsBothSides) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_all();
  fake::ClientId sid = network.server_client(id);
  TimeUs t = scheduler.now_us();
  network.disconnect(id);
  EXPECT_FALSE(server.connected(sid));  // the server forgets it at once
  scheduler.run_all();
  ASSERT_TRUE(e.closed_us);
  EXPECT_EQ(*e.closed_us, t + kLatencyUs);
  EXPECT_TRUE(traced("net_disconnect"));
}

TEST_F(NetTest, ExtraLatencySlowsOneConnectionOnly) {
  Endpoint slow, fast;
  ConnId s = open(slow), f = open(fast);
  scheduler.run_all();
  network.set_extra_latency(s, 5000);
  TimeUs t = scheduler.now_us();
  network.send(s, {"PING"});
  network.send(f, {"PING"});
  scheduler.run_all();
  ASSERT_EQ(slow.replies.size(), 1u);
  ASSERT_EQ(fast.replies.size(), 1u);
  EXPECT_EQ(fast.replies[0].first, t + 2 * kLatencyUs + service_us);
  EXPECT_EQ(slow.replies[0].first, t + 2 * (kLatencyUs + 5000) + service_us);
}

TEST_F(NetTest, UnknownServerRefusesAfterARoundTrip) {
  Endpoint e;
  open(e, "app", "nowhere");
  scheduler.run_all();
  ASSERT_TRUE(e.closed_us);
  EXPECT_EQ(*e.closed_us, 2 * kLatencyUs);
  EXPECT_FALSE(e.connected_us);
}

TEST_F(NetTest, ServerClockJumpExpiresKeys) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_all();
  network.send(id, {"SET", "lock", "a", "PX", "10000"});
  scheduler.run_all();
  network.jump_server_clock("redis", 20 * 1000 * 1000);
  network.send(id, {"GET", "lock"});
  scheduler.run_all();
  ASSERT_EQ(e.replies.size(), 2u);
  EXPECT_EQ(e.replies[1].second, Reply::nil());
  EXPECT_TRUE(traced("clock_jump"));
}

TEST_F(NetTest, ServerDownResetsConnectionsAndRefusesDialsThenARestartIsEmpty) {
  Endpoint e;
  ConnId id = open(e);
  scheduler.run_all();
  network.send(id, {"SET", "k", "v"});
  scheduler.run_all();
  TimeUs t = scheduler.now_us();
  network.set_server_down("redis", true);
  Endpoint refused;
  open(refused);
  scheduler.run_all();
  ASSERT_TRUE(e.closed_us);
  EXPECT_EQ(*e.closed_us, t + kLatencyUs);
  ASSERT_TRUE(refused.closed_us);
  EXPECT_EQ(*refused.closed_us, t + 2 * kLatencyUs);
  EXPECT_FALSE(refused.connected_us);
  fake::Server restarted;
  network.replace_server("redis", &restarted);
  network.set_server_down("redis", false);
  Endpoint fresh;
  ConnId f = open(fresh);
  scheduler.run_all();
  ASSERT_TRUE(fresh.connected_us);
  network.send(f, {"GET", "k"});
  scheduler.run_all();
  ASSERT_EQ(fresh.replies.size(), 1u);
  EXPECT_EQ(fresh.replies[0].second, Reply::nil());  // the data did not survive the restart
  EXPECT_TRUE(traced("server_down"));
  EXPECT_TRUE(traced("server_restart"));
}

TEST_F(NetTest, ServersCanStartWithClockOffsets) {
  fake::Server ahead;
  network.add_server("ahead", &ahead, 5 * 1000 * 1000);
  EXPECT_EQ(ahead.unix_ms(0) - server.unix_ms(0), 5000);
}

TEST(ProcessTest, PausedTimersAndDeliveriesRunAtResumeInOrder) {
  Scheduler scheduler;
  Process p(scheduler, "app");
  std::vector<std::pair<TimeUs, std::string>> log;
  p.after(100, [&] { log.emplace_back(scheduler.now_us(), "timer100"); });
  p.after(300, [&] { log.emplace_back(scheduler.now_us(), "timer300"); });
  auto cancelled = p.after(250, [&] { log.emplace_back(scheduler.now_us(), "cancelled"); });
  scheduler.schedule_at(50, [&] { p.pause_for(1000); });
  scheduler.schedule_at(
      200, [&] { p.deliver([&] { log.emplace_back(scheduler.now_us(), "delivery200"); }); });
  scheduler.schedule_at(260, [&] { EXPECT_TRUE(p.cancel(cancelled)); });
  scheduler.run_all();
  std::vector<std::pair<TimeUs, std::string>> want = {
      {1050, "timer100"}, {1050, "delivery200"}, {1050, "timer300"}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(p.timers_pending(), 0u);
  // Running again: a delivery runs at once.
  p.deliver([&] { log.emplace_back(scheduler.now_us(), "now"); });
  EXPECT_EQ(log.back(), std::make_pair(TimeUs{1050}, std::string("now")));
}

}  // namespace
}  // namespace redlab::net
