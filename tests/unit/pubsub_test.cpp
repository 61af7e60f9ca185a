// Pub/sub in the fake on virtual time: delivery, and client-output-buffer-limit for a
// subscriber that stops reading (the "slow consumer is disconnected" lesson).
#include <gtest/gtest.h>

#include "sim/fake/server.h"

namespace redlab::fake {
namespace {

constexpr TimeUs kSecondUs = 1000000;

class PubSubTest : public ::testing::Test {
 protected:
  Server server;
  TimeUs service_us = server.options().service_us;

  static std::vector<Output> of(const std::vector<Output>& all, ClientId id) {
    std::vector<Output> out;
    for (const Output& o : all)
      if (o.client == id) out.push_back(o);
    return out;
  }
  static Reply message(const std::string& channel, const std::string& payload) {
    return Reply::array({Reply::bulk("message"), Reply::bulk(channel), Reply::bulk(payload)});
  }
  // A subscriber on ch that from now on reads only when the test says so.
  ClientId slow_subscriber() {
    ClientId id = server.connect(0);
    EXPECT_EQ(server.call(id, {"SUBSCRIBE", "ch"}),
              Reply::array({Reply::bulk("subscribe"), Reply::bulk("ch"), Reply::integer_reply(1)}));
    server.client(id)->auto_read = false;
    return id;
  }
  void set_pubsub_limit(const std::string& hard, const std::string& soft,
                        const std::string& seconds) {
    ClientId admin = server.connect(0);
    ASSERT_EQ(server.call(admin, {"CONFIG", "SET", "client-output-buffer-limit",
                                  "pubsub " + hard + " " + soft + " " + seconds}),
              Reply::ok());
    server.disconnect(admin, 0);
  }
  static std::string payload(size_t bytes) { return std::string(bytes, 'p'); }
};

TEST_F(PubSubTest, PublishReachesSubscribersWhenItReplies) {
  ClientId sub = server.connect(0), patsub = server.connect(0), pub = server.connect(0);
  server.call(sub, {"SUBSCRIBE", "news"});
  server.call(patsub, {"PSUBSCRIBE", "n*"});
  server.submit(pub, {"PUBLISH", "news", "hi"}, 7000);
  server.advance(7000);
  auto outputs = server.take_outputs();
  ASSERT_EQ(of(outputs, pub).size(), 1u);
  EXPECT_EQ(of(outputs, pub)[0].reply, Reply::integer_reply(2));
  ASSERT_EQ(of(outputs, sub).size(), 1u);
  EXPECT_EQ(of(outputs, sub)[0].reply, message("news", "hi"));
  EXPECT_EQ(of(outputs, sub)[0].at_us, 7000 + service_us);
  ASSERT_EQ(of(outputs, patsub).size(), 1u);
  EXPECT_EQ(of(outputs, patsub)[0].reply, Reply::array({Reply::bulk("pmessage"), Reply::bulk("n*"),
                                                        Reply::bulk("news"), Reply::bulk("hi")}));
}

TEST_F(PubSubTest, MessagesPublishedBeforeSubscribingAreLost) {
  ClientId sub = server.connect(0), pub = server.connect(0);
  EXPECT_EQ(server.call(pub, {"PUBLISH", "ch", "early"}), Reply::integer_reply(0));
  server.call(sub, {"SUBSCRIBE", "ch"});
  EXPECT_EQ(server.call(pub, {"PUBLISH", "ch", "on-time"}), Reply::integer_reply(1));
  auto outputs = server.take_outputs();
  ASSERT_EQ(of(outputs, sub).size(), 1u);
  EXPECT_EQ(of(outputs, sub)[0].reply, message("ch", "on-time"));
}

TEST_F(PubSubTest, SubscriberContextAndLeavingIt) {
  ClientId sub = server.connect(0);
  server.call(sub, {"SUBSCRIBE", "a", "b"});
  server.call(sub, {"PSUBSCRIBE", "z*", "a*"});
  EXPECT_TRUE(server.call(sub, {"GET", "x"}).is_error());
  EXPECT_EQ(server.call(sub, {"PING"}), Reply::array({Reply::bulk("pong"), Reply::bulk("")}));
  // PUNSUBSCRIBE without arguments goes in subscribe order; counts include the channels.
  auto replies = server.call_all(sub, {"PUNSUBSCRIBE"});
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0], Reply::array({Reply::bulk("punsubscribe"), Reply::bulk("z*"),
                                      Reply::integer_reply(3)}));
  EXPECT_EQ(replies[1], Reply::array({Reply::bulk("punsubscribe"), Reply::bulk("a*"),
                                      Reply::integer_reply(2)}));
  replies = server.call_all(sub, {"UNSUBSCRIBE"});
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1].elements[2], Reply::integer_reply(0));
  EXPECT_EQ(server.call(sub, {"GET", "x"}), Reply::nil()) << "out of the subscriber context";
  EXPECT_EQ(server.call(sub, {"UNSUBSCRIBE"}),
            Reply::array({Reply::bulk("unsubscribe"), Reply::nil(), Reply::integer_reply(0)}));
  EXPECT_TRUE(server.pubsub_channels.empty());
  EXPECT_TRUE(server.pubsub_patterns.empty());
}

TEST_F(PubSubTest, DisconnectRemovesSubscriptions) {
  ClientId sub = server.connect(0), other = server.connect(0);
  server.call(sub, {"SUBSCRIBE", "ch"});
  server.call(sub, {"PSUBSCRIBE", "c*"});
  server.disconnect(sub, 0);
  EXPECT_EQ(server.call(other, {"PUBLISH", "ch", "x"}), Reply::integer_reply(0));
  EXPECT_EQ(server.call(other, {"PUBSUB", "NUMPAT"}), Reply::integer_reply(0));
}

TEST_F(PubSubTest, HardLimitClosesANonReadingSubscriberAtOnce) {
  set_pubsub_limit("1000", "0", "0");
  ClientId sub = slow_subscriber();
  ClientId pub = server.connect(0);
  // Each message is a little over 300 bytes of RESP: the fourth crosses 1000 unread bytes.
  std::string body = payload(300);
  for (int i = 0; i < 3; i++) {
    TimeUs at_us = (i + 1) * kSecondUs;
    server.submit(pub, {"PUBLISH", "ch", body}, at_us);
    server.advance(at_us);
    EXPECT_TRUE(server.take_closed().empty()) << "message " << i << " is still under the limit";
    EXPECT_TRUE(server.connected(sub));
  }
  EXPECT_LT(server.client(sub)->unread_bytes, 1000);
  EXPECT_GE(server.client(sub)->unread_bytes, 900);
  TimeUs fourth_us = 4 * kSecondUs;
  server.submit(pub, {"PUBLISH", "ch", body}, fourth_us);
  server.advance(fourth_us);
  auto closed = server.take_closed();
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].first, sub);
  EXPECT_EQ(closed[0].second, fourth_us + service_us) << "closed as the message is sent";
  EXPECT_FALSE(server.connected(sub));
  // It no longer counts as a receiver.
  EXPECT_EQ(server.call(pub, {"PUBLISH", "ch", "x"}), Reply::integer_reply(0));
}

TEST_F(PubSubTest, ReadingSubscriberStaysConnected) {
  set_pubsub_limit("1000", "0", "0");
  ClientId sub = slow_subscriber();
  ClientId pub = server.connect(0);
  std::string body = payload(300);
  for (int i = 0; i < 20; i++) {
    TimeUs at_us = (i + 1) * kSecondUs;
    server.submit(pub, {"PUBLISH", "ch", body}, at_us);
    server.advance(at_us);
    for (const Output& o : server.take_outputs())
      if (o.client == sub) server.client_read(sub, static_cast<int64_t>(to_resp(o.reply).size()));
  }
  EXPECT_TRUE(server.take_closed().empty());
  EXPECT_TRUE(server.connected(sub));
  EXPECT_EQ(server.client(sub)->unread_bytes, 0);
}

TEST_F(PubSubTest, SoftLimitClosesAfterStayingOverForSoftSeconds) {
  set_pubsub_limit("0", "500", "10");
  ClientId sub = slow_subscriber();
  ClientId pub = server.connect(0);
  TimeUs over_at_us = kSecondUs;
  server.submit(pub, {"PUBLISH", "ch", payload(600)}, over_at_us);
  server.advance(over_at_us);
  EXPECT_TRUE(server.take_closed().empty()) << "over the soft limit, but not for long yet";
  // Nothing else happens: the server must still notice the deadline by itself.
  TimeUs deadline_us = over_at_us + 10 * kSecondUs;
  EXPECT_EQ(server.next_event_us(), deadline_us);
  server.advance(deadline_us - 1);
  EXPECT_TRUE(server.take_closed().empty());
  server.advance(deadline_us);
  auto closed = server.take_closed();
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].first, sub);
  EXPECT_EQ(closed[0].second, deadline_us);
}

TEST_F(PubSubTest, SoftLimitTimerRestartsWhenTheSubscriberCatchesUp) {
  set_pubsub_limit("0", "500", "10");
  ClientId sub = slow_subscriber();
  ClientId pub = server.connect(0);
  server.submit(pub, {"PUBLISH", "ch", payload(600)}, kSecondUs);
  server.advance(kSecondUs);
  // It reads everything at 5 s: back under the limit.
  server.advance(5 * kSecondUs);
  server.client_read(sub, server.client(sub)->unread_bytes);
  server.advance(20 * kSecondUs);
  EXPECT_TRUE(server.take_closed().empty());
  EXPECT_TRUE(server.connected(sub));
  // Over again at 30 s: a fresh 10 s.
  server.submit(pub, {"PUBLISH", "ch", payload(600)}, 30 * kSecondUs);
  server.advance(39 * kSecondUs);
  EXPECT_TRUE(server.take_closed().empty());
  server.advance(40 * kSecondUs);
  auto closed = server.take_closed();
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].second, 40 * kSecondUs);
}

TEST_F(PubSubTest, LimitsDoNotApplyToNonSubscribers) {
  set_pubsub_limit("10", "5", "0");
  ClientId c = server.connect(0);
  server.client(c)->auto_read = false;
  server.submit(c, {"SET", "k", payload(100)}, 10);
  server.submit(c, {"GET", "k"}, 20);
  server.advance(kSecondUs);
  EXPECT_TRUE(server.take_closed().empty());
  EXPECT_TRUE(server.connected(c));
}

}  // namespace
}  // namespace redlab::fake
