// The fake's blocking list commands on virtual time: when a woken BLPOP replies, that a
// timeout fires at exactly its deadline, FIFO service, and the Redis 7.0 details that a
// conformance script cannot pin to a time (nil array vs nil bulk on the wire).
#include <gtest/gtest.h>

#include "sim/fake/server.h"

namespace redlab::fake {
namespace {

constexpr TimeUs kSecondUs = 1000000;

class ListTest : public ::testing::Test {
 protected:
  Server server;
  TimeUs service_us = server.options().service_us;

  // Outputs of one client, in the order they leave the server.
  static std::vector<Output> of(const std::vector<Output>& all, ClientId id) {
    std::vector<Output> out;
    for (const Output& o : all)
      if (o.client == id) out.push_back(o);
    return out;
  }
  static Reply pair(const std::string& key, const std::string& value) {
    return Reply::array({Reply::bulk(key), Reply::bulk(value)});
  }
};

TEST_F(ListTest, BlpopWokenByLaterPushRepliesAtThatTime) {
  ClientId waiter = server.connect(0);
  ClientId pusher = server.connect(0);
  server.submit(waiter, {"BLPOP", "q", "0"}, 1000);
  server.advance(1000);
  EXPECT_TRUE(server.take_outputs().empty()) << "BLPOP on a missing key must block";

  TimeUs push_at_us = 3 * kSecondUs;
  server.advance(push_at_us - 1);
  EXPECT_TRUE(server.take_outputs().empty()) << "nothing wakes the waiter before the push";

  server.submit(pusher, {"LPUSH", "q", "x"}, push_at_us);
  server.advance(push_at_us);
  auto outputs = server.take_outputs();
  auto pushed = of(outputs, pusher);
  auto woken = of(outputs, waiter);
  ASSERT_EQ(pushed.size(), 1u);
  EXPECT_EQ(pushed[0].reply, Reply::integer_reply(1));
  EXPECT_EQ(pushed[0].at_us, push_at_us + service_us);
  ASSERT_EQ(woken.size(), 1u);
  EXPECT_EQ(woken[0].reply, pair("q", "x"));
  EXPECT_EQ(woken[0].at_us, push_at_us + service_us) << "served as the push completes";
  // The waiter took the element: the list is gone.
  EXPECT_EQ(server.call(pusher, {"EXISTS", "q"}), Reply::integer_reply(0));
}

TEST_F(ListTest, BlpopTimesOutAtExactlyItsTimeout) {
  ClientId waiter = server.connect(0);
  TimeUs start_us = 500;
  server.submit(waiter, {"BLPOP", "q", "1.5"}, start_us);
  server.advance(start_us);
  TimeUs deadline_us = start_us + 1500 * 1000;
  EXPECT_EQ(server.next_event_us(), deadline_us);
  server.advance(deadline_us - 1);
  EXPECT_TRUE(server.take_outputs().empty()) << "no reply one microsecond before the timeout";
  server.advance(deadline_us);
  auto outputs = server.take_outputs();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].client, waiter);
  EXPECT_EQ(outputs[0].at_us, deadline_us);
  EXPECT_EQ(outputs[0].reply, Reply::nil_array());
  EXPECT_FALSE(server.client(waiter)->blocked);
  // A push after the timeout is not taken by the former waiter.
  EXPECT_EQ(server.call(waiter, {"RPUSH", "q", "late"}), Reply::integer_reply(1));
  EXPECT_EQ(server.call(waiter, {"LLEN", "q"}), Reply::integer_reply(1));
}

TEST_F(ListTest, TimeoutsRoundUpToWholeMilliseconds) {
  ClientId waiter = server.connect(0);
  // 0.0001 s is 1 ms (ceil), not 0 (which would wait forever).
  server.submit(waiter, {"BLPOP", "q", "0.0001"}, 0);
  server.advance(0);
  EXPECT_EQ(server.next_event_us(), 1000);
  // A tiny negative timeout rounds up to 0: forever.
  ClientId forever = server.connect(0);
  server.submit(forever, {"BRPOP", "q", "-0.0001"}, 0);
  server.advance(10 * kSecondUs);
  auto outputs = server.take_outputs();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].client, waiter);
  EXPECT_TRUE(server.client(forever)->blocked);
  EXPECT_EQ(server.call(waiter, {"BLPOP", "q", "inf"}), Reply::error("ERR timeout is negative"));
  EXPECT_EQ(server.call(waiter, {"BLPOP", "q", "x"}),
            Reply::error("ERR timeout is not a float or out of range"));
}

TEST_F(ListTest, WaitersAreServedFirstBlockedFirstServed) {
  ClientId a = server.connect(0), b = server.connect(0), c = server.connect(0);
  ClientId pusher = server.connect(0);
  server.submit(c, {"BLPOP", "q", "0"}, 10);  // c blocks first
  server.submit(a, {"BRPOP", "q", "0"}, 20);
  server.submit(b, {"BLPOP", "q", "0"}, 30);
  server.submit(pusher, {"RPUSH", "q", "1", "2"}, 100);
  server.advance(100);
  auto outputs = server.take_outputs();
  ASSERT_EQ(of(outputs, c).size(), 1u);
  EXPECT_EQ(of(outputs, c)[0].reply, pair("q", "1"));
  ASSERT_EQ(of(outputs, a).size(), 1u);
  EXPECT_EQ(of(outputs, a)[0].reply, pair("q", "2"));
  EXPECT_TRUE(of(outputs, b).empty()) << "the list ran out: the third waiter keeps waiting";
  EXPECT_TRUE(server.client(b)->blocked);
  server.submit(pusher, {"RPUSH", "q", "3"}, 200);
  server.advance(200);
  outputs = server.take_outputs();
  ASSERT_EQ(of(outputs, b).size(), 1u);
  EXPECT_EQ(of(outputs, b)[0].reply, pair("q", "3"));
}

TEST_F(ListTest, SeveralKeysServedFromTheKeyMadeReadyFirst) {
  ClientId waiter = server.connect(0);
  ClientId writer = server.connect(0);
  server.submit(waiter, {"BLPOP", "a", "b", "0"}, 0);
  server.advance(0);
  for (const Argv& argv :
       std::vector<Argv>{{"MULTI"}, {"RPUSH", "b", "from-b"}, {"RPUSH", "a", "from-a"}, {"EXEC"}})
    server.submit(writer, argv, 10);
  server.advance(100);  // four commands, one after another
  auto woken = of(server.take_outputs(), waiter);
  ASSERT_EQ(woken.size(), 1u);
  EXPECT_EQ(woken[0].reply, pair("b", "from-b"));
  EXPECT_EQ(server.call(writer, {"LLEN", "a"}), Reply::integer_reply(1));
}

TEST_F(ListTest, BlmoveFillsAListAnotherClientWaitsOn) {
  ClientId mover = server.connect(0), reader = server.connect(0), writer = server.connect(0);
  server.submit(mover, {"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"}, 0);
  server.submit(reader, {"BLPOP", "dst", "0"}, 1);
  server.submit(writer, {"RPUSH", "src", "v"}, 50);
  server.advance(50);
  auto outputs = server.take_outputs();
  ASSERT_EQ(of(outputs, mover).size(), 1u);
  EXPECT_EQ(of(outputs, mover)[0].reply, Reply::bulk("v"));
  ASSERT_EQ(of(outputs, reader).size(), 1u);
  EXPECT_EQ(of(outputs, reader)[0].reply, pair("dst", "v"));
  EXPECT_EQ(server.call(writer, {"EXISTS", "src", "dst"}), Reply::integer_reply(0));
}

TEST_F(ListTest, BlmoveTimeoutIsANilArrayButInsideMultiANilBulk) {
  ClientId c = server.connect(0);
  server.submit(c, {"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0.01"}, 0);
  server.advance(kSecondUs);
  auto outputs = server.take_outputs();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].at_us, 10000);
  EXPECT_EQ(to_resp(outputs[0].reply), "*-1\r\n");  // replyToBlockedClientTimedOut

  EXPECT_EQ(server.call(c, {"MULTI"}), Reply::ok());
  server.call(c, {"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"});
  server.call(c, {"BRPOPLPUSH", "src", "dst", "0"});
  server.call(c, {"BLPOP", "src", "0"});
  server.call(c, {"BLMPOP", "0", "1", "src", "LEFT"});
  Reply exec = server.call(c, {"EXEC"});
  EXPECT_EQ(to_resp(exec), "*4\r\n$-1\r\n$-1\r\n*-1\r\n*-1\r\n");
  EXPECT_FALSE(server.client(c)->blocked);
}

TEST_F(ListTest, CommandsOfABlockedClientWaitBehindIt) {
  ClientId waiter = server.connect(0), writer = server.connect(0);
  server.submit(waiter, {"BLPOP", "q", "0"}, 0);
  server.submit(waiter, {"RPUSH", "q", "mine"}, 5);
  server.advance(kSecondUs);
  EXPECT_TRUE(server.take_outputs().empty());
  server.submit(writer, {"RPUSH", "q", "theirs"}, 2 * kSecondUs);
  server.advance(2 * kSecondUs + 100);
  auto woken = of(server.take_outputs(), waiter);
  ASSERT_EQ(woken.size(), 2u);
  EXPECT_EQ(woken[0].reply, pair("q", "theirs"));
  EXPECT_EQ(woken[1].reply, Reply::integer_reply(1));
  EXPECT_GT(woken[1].at_us, woken[0].at_us);
}

TEST_F(ListTest, DisconnectedWaiterTakesNothing) {
  ClientId waiter = server.connect(0), writer = server.connect(0);
  server.submit(waiter, {"BLPOP", "q", "0"}, 0);
  server.advance(0);
  server.disconnect(waiter, 10);
  server.submit(writer, {"RPUSH", "q", "x"}, 20);
  server.advance(20);
  EXPECT_EQ(server.call(writer, {"LRANGE", "q", "0", "-1"}), Reply::array({Reply::bulk("x")}));
}

TEST_F(ListTest, PushPopAndRanges) {
  ClientId c = server.connect(0);
  EXPECT_EQ(server.call(c, {"RPUSH", "l", "a", "b", "c", "d"}), Reply::integer_reply(4));
  EXPECT_EQ(server.call(c, {"LPOP", "l", "2"}), Reply::array({Reply::bulk("a"), Reply::bulk("b")}));
  EXPECT_EQ(server.call(c, {"RPOP", "l", "5"}), Reply::array({Reply::bulk("d"), Reply::bulk("c")}));
  EXPECT_EQ(server.call(c, {"EXISTS", "l"}), Reply::integer_reply(0)) << "empty lists vanish";
  EXPECT_EQ(server.call(c, {"LPOP", "l"}), Reply::nil());
  EXPECT_EQ(to_resp(server.call(c, {"LPOP", "l", "1"})), "*-1\r\n");
  EXPECT_EQ(server.call(c, {"LPOP", "l", "-1"}),
            Reply::error("ERR value is out of range, must be positive"));
  server.call(c, {"RPUSH", "l", "a", "b", "a", "c", "a"});
  EXPECT_EQ(server.call(c, {"LREM", "l", "-2", "a"}), Reply::integer_reply(2));
  EXPECT_EQ(server.call(c, {"LRANGE", "l", "0", "-1"}),
            Reply::array({Reply::bulk("a"), Reply::bulk("b"), Reply::bulk("c")}));
  EXPECT_EQ(server.call(c, {"LPOS", "l", "c"}), Reply::integer_reply(2));
  EXPECT_EQ(server.call(c, {"LINSERT", "l", "BEFORE", "c", "x"}), Reply::integer_reply(4));
  EXPECT_EQ(server.call(c, {"LINDEX", "l", "-2"}), Reply::bulk("x"));
  EXPECT_EQ(server.call(c, {"LTRIM", "l", "1", "-2"}), Reply::ok());
  EXPECT_EQ(server.call(c, {"LRANGE", "l", "0", "-1"}),
            Reply::array({Reply::bulk("b"), Reply::bulk("x")}));
  server.call(c, {"SET", "s", "v"});
  EXPECT_EQ(server.call(c, {"LPUSH", "s", "x"}),
            Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"));
}

TEST_F(ListTest, PushTouchesWatchedKey) {
  ClientId watcher = server.connect(0), writer = server.connect(0);
  server.call(watcher, {"WATCH", "l"});
  server.call(writer, {"RPUSH", "l", "x"});
  server.call(watcher, {"MULTI"});
  server.call(watcher, {"LPOP", "l"});
  EXPECT_EQ(server.call(watcher, {"EXEC"}), Reply::nil_array());
}

}  // namespace
}  // namespace redlab::fake
