// Replication in the fake (sim/fake/replication.cpp): what a primary propagates, in the form
// redis-server 7.0.15 sends it (checked by hand with a replica's MONITOR: relative TTLs as
// PXAT / PEXPIREAT, a script's effects in MULTI/EXEC, SELECT first, expiries as DEL), the
// offsets (RESP bytes), READONLY on a replica, WAIT's replies, INFO replication, and a
// promotion. The link between servers is tested through scenarios (network.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/fake/server.h"

namespace redlab::fake {
namespace {

constexpr TimeUs kMs = 1000;

struct Sent {
  std::vector<Argv> commands;
  int64_t offset = 0;
};

// A primary with a replica "r" attached, recording what it propagates.
struct Primary {
  Server server{ServerOptions{.name = "p"}};
  std::vector<Sent> sent;
  ClientId client = 0;
  Primary() {
    server.attach_replica("r", 0);
    server.on_propagate = [this](TimeUs, const std::vector<Argv>& commands, int64_t offset) {
      sent.push_back(Sent{commands, offset});
    };
    client = server.connect(0);
  }
  Reply call(const Argv& argv) { return server.call(client, argv); }
};

int64_t unix_ms_at(const Server& s, TimeUs t) {
  return s.unix_ms(t);
}

TEST(Replication, RelativeTtlsArePropagatedAsAbsoluteTimes) {
  Primary p;
  int64_t now_ms = unix_ms_at(p.server, 0);
  ASSERT_EQ(p.call({"SET", "a", "1", "EX", "100"}), Reply::ok());
  ASSERT_EQ(p.call({"SET", "b", "1", "PX", "100000", "NX"}), Reply::ok());
  ASSERT_EQ(p.call({"SETEX", "c", "100", "v"}), Reply::ok());
  ASSERT_EQ(p.call({"EXPIRE", "a", "50"}), Reply::integer_reply(1));
  ASSERT_EQ(p.call({"INCR", "n"}), Reply::integer_reply(1));
  ASSERT_EQ(p.call({"SET", "k", "v", "KEEPTTL", "NX"}), Reply::ok());
  ASSERT_EQ(p.sent.size(), 6u);
  std::string at100 = std::to_string(now_ms + 100000);
  EXPECT_EQ(p.sent[0].commands,
            (std::vector<Argv>{{"SELECT", "0"}, {"SET", "a", "1", "PXAT", at100}}));
  EXPECT_EQ(p.sent[1].commands, (std::vector<Argv>{{"SET", "b", "1", "PXAT", at100}}));
  EXPECT_EQ(p.sent[2].commands, (std::vector<Argv>{{"SET", "c", "v", "PXAT", at100}}));
  EXPECT_EQ(p.sent[3].commands,
            (std::vector<Argv>{{"PEXPIREAT", "a", std::to_string(now_ms + 50000)}}));
  EXPECT_EQ(p.sent[4].commands, (std::vector<Argv>{{"INCR", "n"}}));
  EXPECT_EQ(p.sent[5].commands, (std::vector<Argv>{{"SET", "k", "v", "KEEPTTL", "NX"}}));
  // master_repl_offset counts RESP bytes: "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n" is 23.
  EXPECT_EQ(p.sent[0].offset, 23 + 4 + 9 + 7 + 7 + 10 + 20);
  EXPECT_EQ(p.server.master_repl_offset(), p.sent.back().offset);
}

TEST(Replication, FailedAndReadOnlyCommandsPropagateNothing) {
  Primary p;
  p.call({"GET", "a"});
  p.call({"SET", "a", "1", "NX"});
  p.sent.clear();
  p.call({"SET", "a", "2", "NX"});  // not set: nothing changed
  p.call({"INCR", "nokey", "extra"});
  p.call({"EXPIRE", "missing", "10"});
  EXPECT_TRUE(p.sent.empty());
}

TEST(Replication, ScriptsPropagateTheirEffectsInOneTransaction) {
  Primary p;
  int64_t now_ms = unix_ms_at(p.server, 0);
  Reply r = p.call(
      {"EVAL", "redis.call('SET',KEYS[1],'x','NX','PX',5000); return redis.call('INCR',KEYS[2])",
       "2", "l", "f"});
  ASSERT_EQ(r, Reply::integer_reply(1));
  r = p.call({"EVAL", "return redis.call('INCR',KEYS[1])", "1", "f"});
  ASSERT_EQ(r, Reply::integer_reply(2));
  ASSERT_EQ(p.sent.size(), 2u);
  EXPECT_EQ(p.sent[0].commands,
            (std::vector<Argv>{{"SELECT", "0"},
                               {"MULTI"},
                               {"SET", "l", "x", "PXAT", std::to_string(now_ms + 5000)},
                               {"INCR", "f"},
                               {"EXEC"}}));
  EXPECT_EQ(p.sent[1].commands, (std::vector<Argv>{{"INCR", "f"}}));
}

TEST(Replication, ExecPropagatesItsCommandsNotItself) {
  Primary p;
  p.call({"MULTI"});
  p.call({"INCR", "a"});
  p.call({"GET", "a"});
  p.call({"INCR", "b"});
  p.call({"EXEC"});
  ASSERT_EQ(p.sent.size(), 1u);
  EXPECT_EQ(
      p.sent[0].commands,
      (std::vector<Argv>{{"SELECT", "0"}, {"MULTI"}, {"INCR", "a"}, {"INCR", "b"}, {"EXEC"}}));
}

TEST(Replication, AnExpiryIsPropagatedAsDel) {
  Primary p;
  p.call({"SET", "a", "1", "PX", "100"});
  p.sent.clear();
  p.server.advance(200 * kMs);
  ASSERT_EQ(p.sent.size(), 1u);
  EXPECT_EQ(p.sent[0].commands, (std::vector<Argv>{{"DEL", "a"}}));
}

TEST(Replication, NoStreamBeforeAReplicaIsAttached) {
  Server s;
  ClientId c = s.connect(0);
  s.call(c, {"SET", "a", "1"});
  EXPECT_EQ(s.master_repl_offset(), 0);
  std::string info = s.call(c, {"INFO", "replication"}).str;
  EXPECT_NE(info.find("role:master\r\nconnected_slaves:0\r\n"), std::string::npos) << info;
  EXPECT_NE(info.find("repl_backlog_active:0\r\n"), std::string::npos) << info;
}

TEST(Replication, AReplicaAppliesTheStreamAndRefusesOtherWriters) {
  Primary p;
  Server r{ServerOptions{.name = "r"}};
  r.become_replica("p", p.server.replid(), 0, 0);
  ClientId user = r.connect(0);
  p.call({"SET", "a", "1", "EX", "100"});
  p.call({"EVAL", "redis.call('INCR',KEYS[1]); return redis.call('INCR',KEYS[1])", "1", "f"});
  for (const Sent& s : p.sent) EXPECT_FALSE(r.replicated(s.commands, s.offset, 1 * kMs));
  r.advance(2 * kMs);
  r.take_outputs();
  EXPECT_EQ(r.call(user, {"GET", "f"}), Reply::bulk("2"));
  EXPECT_EQ(r.call(user, {"PTTL", "a"}).integer, 100000 - 2);
  EXPECT_EQ(r.replica_offset(), p.server.master_repl_offset());
  EXPECT_EQ(r.call(user, {"SET", "b", "1"}),
            Reply::error("READONLY You can't write against a read only replica."));
  EXPECT_EQ(r.call(user, {"WAIT", "0", "0"}).is_error(), true);
  std::string info = r.call(user, {"INFO", "replication"}).str;
  EXPECT_NE(
      info.find("role:slave\r\nmaster_host:p\r\nmaster_port:6379\r\nmaster_link_status:up\r\n"),
      std::string::npos)
      << info;
  EXPECT_NE(info.find("slave_repl_offset:" + std::to_string(p.server.master_repl_offset())),
            std::string::npos)
      << info;
  // A promotion keeps what it had and takes writes.
  r.promote(3 * kMs);
  EXPECT_FALSE(r.is_replica());
  EXPECT_EQ(r.call(user, {"INCR", "f"}), Reply::integer_reply(3));
  info = r.call(user, {"INFO", "replication"}).str;
  EXPECT_NE(info.find("role:master"), std::string::npos) << info;
  EXPECT_NE(info.find("master_replid2:" + p.server.replid()), std::string::npos) << info;
}

TEST(Replication, WaitAnswersTheAcksAtOnceOnAnAckOrAtItsTimeout) {
  Primary p;
  ClientId c = p.client;
  EXPECT_EQ(p.call({"WAIT", "0", "0"}), Reply::integer_reply(1));  // nothing written yet
  p.call({"INCR", "x"});
  int64_t after_incr = p.server.master_repl_offset();
  p.sent.clear();
  // WAIT 1 1000 blocks and asks for an ACK down the stream.
  p.server.submit(c, {"WAIT", "1", "1000"}, 10 * kMs);
  p.server.advance(10 * kMs);
  EXPECT_TRUE(p.server.take_outputs().empty());
  ASSERT_EQ(p.sent.size(), 1u);
  EXPECT_EQ(p.sent[0].commands, (std::vector<Argv>{{"REPLCONF", "GETACK", "*"}}));
  p.server.replica_acked("r", after_incr - 1, 20 * kMs);  // not yet the write
  EXPECT_TRUE(p.server.take_outputs().empty());
  p.server.replica_acked("r", after_incr, 30 * kMs);
  auto out = p.server.take_outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].reply, Reply::integer_reply(1));
  EXPECT_EQ(out[0].at_us, 30 * kMs);
  // The timeout answers how many acked by then: 1 of the 2 asked for.
  p.server.submit(c, {"WAIT", "2", "100"}, 40 * kMs);
  p.server.advance(200 * kMs);
  out = p.server.take_outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].reply, Reply::integer_reply(1));
  EXPECT_EQ(out[0].at_us, 140 * kMs);
}

TEST(Replication, InfoOfAPrimaryListsItsReplica) {
  Primary p;
  p.call({"INCR", "x"});
  p.server.replica_acked("r", p.server.master_repl_offset(), 0);
  std::string info = p.call({"INFO", "replication"}).str;
  std::string off = std::to_string(p.server.master_repl_offset());
  EXPECT_EQ(info,
            "# Replication\r\nrole:master\r\nconnected_slaves:1\r\nslave0:ip=r,port=6379,"
            "state=online,offset=" +
                off + ",lag=0\r\nmaster_failover_state:no-failover\r\nmaster_replid:" +
                p.server.replid() +
                "\r\nmaster_replid2:0000000000000000000000000000000000000000\r\n"
                "master_repl_offset:" +
                off +
                "\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:1\r\nrepl_backlog_size:"
                "1048576\r\nrepl_backlog_first_byte_offset:1\r\nrepl_backlog_histlen:" +
                off + "\r\n");
}

}  // namespace
}  // namespace redlab::fake
