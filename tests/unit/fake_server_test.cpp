// The fake server's engine on virtual time: queueing and service time, exact expiry, WATCH,
// clock jumps, determinism. (Reply bytes are checked against a real server by the
// conformance suite; this is what only the fake can show: time.)
#include "sim/fake/server.h"

#include <gtest/gtest.h>

namespace redlab::fake {
namespace {

constexpr TimeUs kMs = 1000;
constexpr TimeUs kSec = 1000 * kMs;

std::vector<Output> run_until(Server& s, TimeUs t) {
  s.advance(t);
  return s.take_outputs();
}

TEST(FakeServer, ServesCommandsInArrivalOrderWithServiceTime) {
  Server s;
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  s.submit(a, {"SET", "k", "1"}, 10);
  s.submit(b, {"GET", "k"}, 10);
  auto out = run_until(s, 1 * kMs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].client, a);
  EXPECT_EQ(out[0].reply, Reply::ok());
  EXPECT_EQ(out[1].client, b);
  EXPECT_EQ(out[1].reply, Reply::bulk("1"));
  // The second command waited for the first: it leaves one service time later.
  EXPECT_EQ(out[1].at_us - out[0].at_us, s.options().service_us);
}

TEST(FakeServer, DebugSleepStallsEveryoneElse) {
  Server s;
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  s.submit(a, {"DEBUG", "SLEEP", "2"}, 0);
  s.submit(b, {"PING"}, 1 * kMs);
  auto out = run_until(s, 5 * kSec);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].client, a);
  EXPECT_GE(out[0].at_us, 2 * kSec);
  EXPECT_EQ(out[1].client, b);
  EXPECT_EQ(out[1].reply, Reply::status("PONG"));
  EXPECT_GE(out[1].at_us, 2 * kSec) << "PING must wait behind DEBUG SLEEP";
}

TEST(FakeServer, KeyExpiresAtTheExactVirtualMoment) {
  Server s;
  std::vector<ServerEvent> events;
  s.observer = [&](const ServerEvent& e) {
    if (e.kind == ServerEvent::Kind::KeyExpired) events.push_back(e);
  };
  ClientId a = s.connect(0);
  s.submit(a, {"SET", "lock:job:42", "token-a", "NX", "PX", "10000"}, 0);
  run_until(s, 9999 * kMs);
  EXPECT_TRUE(events.empty());
  s.submit(a, {"PTTL", "lock:job:42"}, 9999 * kMs);
  auto out = run_until(s, 9999 * kMs + 500);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].reply, Reply::integer_reply(1));
  run_until(s, 11 * kSec);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].detail, "lock:job:42");
  // Redis: expired when now_ms > expire_at_ms, so 10.001 s after a PX 10000 set at 0.
  EXPECT_EQ(events[0].at_us, 10001 * kMs);
}

TEST(FakeServer, SecondHolderAfterExpiryIsTheTextbookDoubleHold) {
  Server s;
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  EXPECT_EQ(s.call(a, {"SET", "lock", "A", "NX", "PX", "10000"}), Reply::ok());
  EXPECT_EQ(s.call(b, {"SET", "lock", "B", "NX", "PX", "10000"}), Reply::nil());
  s.advance(10001 * kMs);
  EXPECT_EQ(s.call(b, {"SET", "lock", "B", "NX", "PX", "10000"}), Reply::ok());
  // A, still working, deletes B's lock with a plain DEL.
  EXPECT_EQ(s.call(a, {"DEL", "lock"}), Reply::integer_reply(1));
}

TEST(FakeServer, WatchedKeyExpiryAbortsExec) {
  Server s;
  ClientId a = s.connect(0);
  s.call(a, {"SET", "k", "v", "PX", "100"});
  s.call(a, {"WATCH", "k"});
  s.advance(200 * kMs);
  s.call(a, {"MULTI"});
  s.call(a, {"GET", "k"});
  EXPECT_EQ(s.call(a, {"EXEC"}), Reply::nil_array());
}

TEST(FakeServer, ClockJumpExpiresKeysEarly) {
  Server s;
  ClientId a = s.connect(0);
  s.call(a, {"SET", "k", "v", "EX", "30"});
  s.jump_clock(31 * kSec, s.clock_us());
  s.advance(s.clock_us() + 1 * kMs);
  EXPECT_EQ(s.call(a, {"EXISTS", "k"}), Reply::integer_reply(0));
}

TEST(FakeServer, CommandsOfABlockedClientWaitBehindIt) {
  Server s;
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  // A's second command must not overtake its first, even if the first waits.
  s.submit(a, {"DEBUG", "SLEEP", "0.5"}, 0);
  s.submit(a, {"GET", "x"}, 1);
  s.submit(b, {"SET", "x", "1"}, 2);
  auto out = run_until(s, 1 * kSec);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].client, a);
  EXPECT_EQ(out[1].client, a);
  EXPECT_EQ(out[1].reply, Reply::nil()) << "FIFO per server: A's GET arrived before B's SET";
  EXPECT_EQ(out[2].client, b);
}

TEST(FakeServer, DisconnectClearsWatchAndQueuedCommands) {
  Server s;
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  s.call(a, {"WATCH", "k"});
  s.submit(a, {"SET", "never", "1"}, 5);
  s.disconnect(a, 1);
  s.call(b, {"SET", "k", "1"});
  s.advance(1 * kSec);
  EXPECT_EQ(s.call(b, {"EXISTS", "never"}), Reply::integer_reply(0));
  EXPECT_FALSE(s.connected(a));
}

TEST(FakeServer, SameInputsGiveTheSameOutputs) {
  auto run = [] {
    Server s;
    ClientId a = s.connect(0);
    ClientId b = s.connect(0);
    std::string log;
    for (int i = 0; i < 200; i++) {
      s.submit(i % 2 ? a : b, {"INCR", "n" + std::to_string(i % 7)}, i * 100);
      if (i % 10 == 0) s.submit(a, {"SET", "t" + std::to_string(i), "v", "PX", "350"}, i * 100);
    }
    s.submit(b, {"KEYS", "*"}, 30 * kMs);
    s.advance(60 * kMs);
    for (const auto& o : s.take_outputs())
      log += std::to_string(o.client) + "@" + std::to_string(o.at_us) + " " + to_resp(o.reply);
    return log;
  };
  EXPECT_EQ(run(), run());
}

TEST(FakeServer, UnknownCommandAndArityErrorsFlagTheTransaction) {
  Server s;
  ClientId a = s.connect(0);
  s.call(a, {"MULTI"});
  EXPECT_EQ(s.call(a, {"GET"}), Reply::error("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(s.call(a, {"SET", "x", "1"}), Reply::status("QUEUED"));
  EXPECT_EQ(s.call(a, {"EXEC"}), Reply::error(std::string(err::kExecAbort)));
  EXPECT_EQ(s.call(a, {"EXISTS", "x"}), Reply::integer_reply(0));
}

TEST(FakeServer, HugeAndBinaryArgumentsAreSafe) {
  Server s;
  ClientId a = s.connect(0);
  Argv mset = {"MSET"};
  for (int i = 0; i < 10000; i++) {
    mset.push_back("key" + std::to_string(i));
    mset.push_back(std::string("v\0\xff", 3));
  }
  EXPECT_EQ(s.call(a, mset), Reply::ok());
  EXPECT_EQ(s.call(a, {"DBSIZE"}), Reply::integer_reply(10000));
  EXPECT_EQ(s.call(a, {"GET", "key9999"}), Reply::bulk(std::string("v\0\xff", 3)));
  EXPECT_EQ(s.call(a, {"INCRBY", "n", std::string(100000, '9')}),
            Reply::error(std::string(err::kNotInteger)));
  Argv unknown(10000, std::string(1000, 'x'));
  Reply r = s.call(a, unknown);
  ASSERT_TRUE(r.is_error());
  EXPECT_LT(r.str.size(), 400u) << "the unknown-command error is bounded like Redis'";
}

}  // namespace
}  // namespace redlab::fake

namespace redlab::fake {
namespace {

TEST(FakeServer, Hello2AnswersLikeRedis7AndSetsTheName) {
  // The shape real redis-server 7.0.15 gives (the id is the connection's own, so the
  // conformance suite cannot compare it byte for byte).
  Server s;
  ClientId a = s.connect(0);
  Reply r = s.call(a, {"HELLO", "2", "AUTH", "default", "any", "SETNAME", "worker-1"});
  ASSERT_EQ(r.kind, Reply::Kind::Array);
  ASSERT_EQ(r.elements.size(), 14u);
  EXPECT_EQ(r.elements[0], Reply::bulk("server"));
  EXPECT_EQ(r.elements[3], Reply::bulk("7.0.15"));
  EXPECT_EQ(r.elements[5], Reply::integer_reply(2));
  EXPECT_EQ(r.elements[7], Reply::integer_reply(a));
  EXPECT_EQ(r.elements[13], Reply::array());
  EXPECT_EQ(s.call(a, {"CLIENT", "GETNAME"}), Reply::bulk("worker-1"));
  // RESP3 is not spoken by the fake: refused rather than answered in the wrong protocol.
  EXPECT_TRUE(s.call(a, {"HELLO", "3"}).is_error());
}

}  // namespace
}  // namespace redlab::fake
