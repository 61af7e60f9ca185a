// The fake server's engine on virtual time: queueing and service time, exact expiry, WATCH,
// clock jumps, determinism. (Reply bytes are checked against a real server by the
// conformance suite; this is what only the fake can show: time.) The last section checks the
// server's own events (ServerEvent): a keyspace rebuilt from them equals the server's state
// after every command of a long random run, and the other kinds of events come as documented.
#include "sim/fake/server.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/core/prng.h"
#include "sim/fake/util.h"

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
  EXPECT_EQ(events[0].key, "lock:job:42");
  EXPECT_EQ(events[0].value, "token-a");
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

// ---------------------------------------------------------------------------------------
// The server's own events
// ---------------------------------------------------------------------------------------

namespace redlab::fake {
namespace {

using Kind = ServerEvent::Kind;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Served:
      return "Served";
    case Kind::KeyWritten:
      return "KeyWritten";
    case Kind::KeyDeleted:
      return "KeyDeleted";
    case Kind::KeyExpired:
      return "KeyExpired";
    case Kind::Blocked:
      return "Blocked";
    case Kind::Unblocked:
      return "Unblocked";
    case Kind::ScriptStart:
      return "ScriptStart";
    case Kind::ScriptBusy:
      return "ScriptBusy";
    case Kind::BusyReply:
      return "BusyReply";
    case Kind::ScriptKilled:
      return "ScriptKilled";
    case Kind::ScriptEnd:
      return "ScriptEnd";
    case Kind::ClientCut:
      return "ClientCut";
    case Kind::ClockJump:
      return "ClockJump";
    case Kind::Slowlogged:
      return "Slowlogged";
    case Kind::SlowlogReset:
      return "SlowlogReset";
    case Kind::ReplPropagated:
      return "ReplPropagated";
    case Kind::ReplApplied:
      return "ReplApplied";
    case Kind::ReplAcked:
      return "ReplAcked";
    case Kind::ReplPromoted:
      return "ReplPromoted";
  }
  return "?";
}

struct KeyState {
  std::string type;
  std::string value;
  int64_t expire_at_ms = -1;
  bool operator==(const KeyState&) const = default;
};
using KeyId = std::pair<int, std::string>;
using Keyspace = std::map<KeyId, KeyState>;

std::string describe(const Keyspace& keys) {
  std::string out;
  for (const auto& [id, k] : keys)
    out += "  db" + std::to_string(id.first) + " " + id.second + " " + k.type + " " + k.value +
           " exp=" + std::to_string(k.expire_at_ms) + "\n";
  return out.empty() ? "  (empty)\n" : out;
}

bool visible_at(const KeyState& k, int64_t now_ms) {
  return k.expire_at_ms < 0 || now_ms <= k.expire_at_ms;
}

// The server's state read directly, as a key-event consumer must see it at the server's now.
Keyspace actual_keyspace(Server& s) {
  Keyspace out;
  const int64_t now_ms = s.unix_ms(s.clock_us());
  for (size_t db = 0; db < s.dbs().size(); db++)
    for (const auto& [key, entry] : s.dbs()[db].dict) {
      KeyState k{type_name(entry.value.type()), value_summary(entry.value), entry.expire_at_ms};
      if (visible_at(k, now_ms)) out[{static_cast<int>(db), key}] = k;
    }
  return out;
}

// Records every event and rebuilds the keyspace from the key events, as a trace reader does.
// A deletion or expiry must name a key it knows, with the value it was last told.
class EventLog {
 public:
  explicit EventLog(Server& s) {
    s.observer = [this](const ServerEvent& e) { on(e); };
  }
  std::vector<ServerEvent> events;
  Keyspace keys;  // also keys whose TTL has passed without a KeyExpired yet
  std::vector<std::string> problems;

  Keyspace visible(int64_t now_ms) const {
    Keyspace out;
    for (const auto& [id, k] : keys)
      if (visible_at(k, now_ms)) out.emplace(id, k);
    return out;
  }
  std::vector<ServerEvent> since(size_t mark, Kind kind) const {
    std::vector<ServerEvent> out;
    for (size_t i = mark; i < events.size(); i++)
      if (events[i].kind == kind) out.push_back(events[i]);
    return out;
  }
  std::vector<ServerEvent> of(Kind kind) const { return since(0, kind); }
  // "Kind key value" of the key events from mark on, for compact expectations.
  std::vector<std::string> key_events(size_t mark) const {
    std::vector<std::string> out;
    for (size_t i = mark; i < events.size(); i++) {
      const ServerEvent& e = events[i];
      if (e.kind != Kind::KeyWritten && e.kind != Kind::KeyDeleted && e.kind != Kind::KeyExpired)
        continue;
      out.push_back(std::string(kind_name(e.kind)) + " " + std::to_string(e.db) + ":" + e.key +
                    " " + e.type + " " + e.value);
    }
    return out;
  }

 private:
  void on(const ServerEvent& e) {
    events.push_back(e);
    KeyId id{e.db, e.key};
    if (e.kind == Kind::KeyWritten) {
      keys[id] = KeyState{e.type, e.value, e.expire_at_ms};
      return;
    }
    if (e.kind != Kind::KeyDeleted && e.kind != Kind::KeyExpired) return;
    auto it = keys.find(id);
    if (it == keys.end()) {
      problems.push_back(std::string(kind_name(e.kind)) + " of a key never written: " + e.key);
      return;
    }
    if (it->second.type != e.type || it->second.value != e.value)
      problems.push_back(std::string(kind_name(e.kind)) + " " + e.key + " says it held " + e.type +
                         " " + e.value + ", last written as " + it->second.type + " " +
                         it->second.value);
    if (e.kind == Kind::KeyExpired && it->second.expire_at_ms != e.expire_at_ms)
      problems.push_back("KeyExpired " + e.key + " with another expiry than written");
    keys.erase(it);
  }
};

// ---- the random run ----

const char* const kValues[] = {"a", "b", "c", "1", "2", "10", "-3", "x y", "\x01\xff\n", "3.5"};

class CommandGen {
 public:
  explicit CommandGen(uint64_t seed) : rng_(seed) {}
  Prng& rng() { return rng_; }

  // Mostly a key of the kind the command works on (s: strings, l: lists, h: hashes, t: sets,
  // z: sorted sets, x: streams), sometimes one that any kind may hold (WRONGTYPE, RENAME
  // across kinds, ...).
  std::string key() {
    static constexpr char kKinds[] = "slhtzx";
    char kind = kind_ == '*' ? kKinds[rng_.uniform(6)] : kind_;
    if (rng_.chance(1, 4)) kind = 'k';
    return std::string(1, kind) + std::to_string(rng_.uniform(4));
  }
  std::string value() {
    if (rng_.chance(1, 40)) return std::string(300, 'L');  // past the summary's 200 bytes
    return kValues[rng_.uniform(sizeof kValues / sizeof kValues[0])];
  }
  std::string num(int64_t lo, int64_t hi) { return std::to_string(rng_.range_inclusive(lo, hi)); }
  std::string db() { return num(0, 2); }

  // One command (step numbers keep explicit stream IDs increasing).
  Argv command(int64_t step, int64_t now_unix_ms) {
    const uint64_t pick = rng_.uniform(62);
    kind_ = pick <= 12   ? 's'
            : pick <= 25 ? '*'
            : pick <= 36 ? 'l'
            : pick <= 42 ? 'h'
            : pick <= 48 ? 't'
            : pick <= 57 ? 'z'
                         : 'x';
    switch (pick) {
      case 0:
      case 1:
        return {"SET", key(), value()};
      case 2: {
        Argv a = {"SET", key(), value()};
        const char* opts[] = {"NX", "XX", "GET", "KEEPTTL"};
        a.push_back(opts[rng_.uniform(4)]);
        if (rng_.chance(1, 2)) {
          a.push_back(rng_.chance(1, 2) ? "PX" : "EX");
          a.push_back(a.back() == "PX" ? num(1, 3000) : num(1, 3));
          if (a[3] == "KEEPTTL") a.erase(a.begin() + 3);
        }
        return a;
      }
      case 3:
        return {"SET", key(), value(), "PXAT",
                std::to_string(now_unix_ms + rng_.range_inclusive(-500, 2500))};
      case 4:
        return {"GETSET", key(), value()};
      case 5:
        return {"GETDEL", key()};
      case 6: {
        const char* opts[] = {"EX", "PX", "PERSIST", "PXAT"};
        std::string opt = opts[rng_.uniform(4)];
        if (opt == "PERSIST") return {"GETEX", key(), opt};
        if (opt == "PXAT") return {"GETEX", key(), opt, std::to_string(now_unix_ms - 1)};
        return {"GETEX", key(), opt, opt == "EX" ? num(1, 3) : num(1, 3000)};
      }
      case 7:
        return {"MSET", key(), value(), key(), value()};
      case 8:
        return {"MSETNX", key(), value(), key(), value()};
      case 9:
        return {"INCR", key()};
      case 10:
        return {"INCRBYFLOAT", key(), "1.5"};
      case 11:
        return {"APPEND", key(), value()};
      case 12:
        return {"SETRANGE", key(), num(0, 12), rng_.chance(1, 5) ? "" : value()};
      case 13:
        return {"DEL", key(), key()};
      case 14:
        return {"UNLINK", key()};
      case 15: {
        Argv a = {"EXPIRE", key(), num(-1, 3)};
        const char* opts[] = {"NX", "XX", "GT", "LT"};
        if (rng_.chance(1, 2)) a.push_back(opts[rng_.uniform(4)]);
        return a;
      }
      case 16:
        return {"PEXPIRE", key(), num(1, 3000)};
      case 17:
        return {"PEXPIREAT", key(), std::to_string(now_unix_ms + rng_.range_inclusive(-100, 3000))};
      case 18:
        return {"PERSIST", key()};
      case 19:
        return {"RENAME", key(), key()};
      case 20:
        return {"RENAMENX", key(), key()};
      case 21: {
        Argv a = {"COPY", key(), key()};
        if (rng_.chance(1, 2)) a.insert(a.end(), {"DB", db()});
        if (rng_.chance(1, 2)) a.push_back("REPLACE");
        return a;
      }
      case 22:
        return {"MOVE", key(), db()};
      case 23:
        return {"SELECT", db()};
      case 24:
        if (rng_.chance(1, 3)) return {"SWAPDB", db(), db()};
        return {"GET", key()};
      case 25:
        if (rng_.chance(1, 8)) return {rng_.chance(1, 2) ? "FLUSHDB" : "FLUSHALL"};
        return {"EXISTS", key()};
      case 26:
      case 27:
        return {rng_.chance(1, 2) ? "LPUSH" : "RPUSH", key(), value(), value()};
      case 28:
        return {rng_.chance(1, 2) ? "LPUSHX" : "RPUSHX", key(), value()};
      case 29:
        if (rng_.chance(1, 2)) return {"LPOP", key()};
        return {"RPOP", key(), num(1, 3)};
      case 30:
        return {"LMPOP", "2",      key(), key(), rng_.chance(1, 2) ? "LEFT" : "RIGHT",
                "COUNT", num(1, 3)};
      case 31:
        return {"LMOVE", key(), key(), "LEFT", "RIGHT"};
      case 32:
        return {"RPOPLPUSH", key(), key()};
      case 33:
        return {"LSET", key(), num(-2, 2), value()};
      case 34:
        return {"LTRIM", key(), num(-3, 2), num(-3, 3)};
      case 35:
        return {"LREM", key(), num(-2, 2), value()};
      case 36:
        return {"LINSERT", key(), "BEFORE", value(), value()};
      case 37:
      case 38:
        return {"HSET", key(), "f" + num(0, 12), value(), "g", value()};
      case 39:
        return {"HSETNX", key(), "f" + num(0, 3), value()};
      case 40:
        return {"HDEL", key(), "f" + num(0, 12), "g"};
      case 41:
        return {"HINCRBY", key(), "n", num(-5, 5)};
      case 42:
        return {"HINCRBYFLOAT", key(), "n", "0.25"};
      case 43:
      case 44:
        return {"SADD", key(), "m" + num(0, 14), "m" + num(0, 14)};
      case 45:
        return {"SREM", key(), "m" + num(0, 14), "m" + num(0, 14)};
      case 46:
        return {"SPOP", key(), num(1, 3)};
      case 47:
        return {"SMOVE", key(), key(), "m" + num(0, 14)};
      case 48: {
        const char* ops[] = {"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"};
        return {ops[rng_.uniform(3)], key(), key(), key()};
      }
      case 49:
      case 50: {
        Argv a = {"ZADD", key()};
        const char* opts[] = {"NX", "XX", "GT", "LT", "CH"};
        if (rng_.chance(1, 3)) a.push_back(opts[rng_.uniform(5)]);
        a.insert(a.end(), {num(-3, 20), "z" + num(0, 14), num(-3, 20), "z" + num(0, 14)});
        return a;
      }
      case 51:
        return {"ZINCRBY", key(), "0.5", "z" + num(0, 14)};
      case 52:
        return {"ZREM", key(), "z" + num(0, 14), "z" + num(0, 14)};
      case 53:
        return {rng_.chance(1, 2) ? "ZPOPMIN" : "ZPOPMAX", key(), num(1, 3)};
      case 54:
        if (rng_.chance(1, 2)) return {"ZREMRANGEBYRANK", key(), "0", num(0, 2)};
        return {"ZREMRANGEBYSCORE", key(), "-inf", num(0, 10)};
      case 55: {
        const char* ops[] = {"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"};
        return {ops[rng_.uniform(3)], key(), "2", key(), key()};
      }
      case 56:
        return {"ZRANGESTORE", key(), key(), "0", num(-1, 3)};
      case 57:
        return {"ZMPOP", "1", key(), "MIN", "COUNT", num(1, 2)};
      case 58:
      case 59: {
        Argv a = {"XADD", key()};
        if (rng_.chance(1, 3)) a.insert(a.end(), {"MAXLEN", num(1, 4)});
        a.insert(a.end(), {std::to_string(step) + "-1", "f", value()});
        return a;
      }
      case 60:
        if (rng_.chance(1, 2))
          return {"XDEL", key(), std::to_string(step - rng_.range_inclusive(1, 30)) + "-1"};
        return {"XTRIM", key(), "MAXLEN", num(0, 3)};
      default:
        return {"XGROUP", "CREATE", key(), "g" + num(0, 1), "$", "MKSTREAM"};
    }
  }

  // A script call with several writes (some fail half-way: their earlier writes stay).
  Argv script() {
    static const char* const kScripts[] = {
        "redis.call('SET', KEYS[1], ARGV[1]) redis.call('DEL', KEYS[1]) "
        "redis.call('RPUSH', KEYS[2], ARGV[1]) return 1",
        "local n = redis.call('INCR', KEYS[1]) redis.call('PEXPIRE', KEYS[1], 700) "
        "redis.call('HSET', KEYS[2], 'n', n) return n",
        "redis.pcall('LPUSH', KEYS[1], 'a', 'b') redis.pcall('SADD', KEYS[2], ARGV[1]) "
        "redis.pcall('ZADD', KEYS[1], 1, 'm') return redis.pcall('RENAME', KEYS[1], KEYS[2])",
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end "
        "return 0",
        "redis.call('SELECT', 1) redis.call('SET', KEYS[1], ARGV[1]) redis.call('SELECT', 0) "
        "redis.call('LPOP', KEYS[2]) return redis.call('SET', KEYS[2], 'z', 'PX', 900)",
        "redis.call('SWAPDB', 0, 2) redis.call('APPEND', KEYS[1], ARGV[1]) "
        "return redis.call('MOVE', KEYS[1], 1)",
    };
    const size_t n = sizeof kScripts / sizeof kScripts[0];
    kind_ = '*';
    return {"EVAL", kScripts[rng_.uniform(n)], "2", key(), key(), value()};
  }

 private:
  Prng rng_;
  char kind_ = '*';
};

// Checks, after one command: the keys rebuilt from the events are the server's, every key
// event of the command carries its client and cause (expiries: none), one Served for it.
void check_after(Server& s, const EventLog& log, size_t mark, ClientId client, int64_t cause,
                 const std::string& what) {
  ASSERT_TRUE(log.problems.empty()) << what << ": " << log.problems.front();
  const int64_t now_ms = s.unix_ms(s.clock_us());
  Keyspace want = actual_keyspace(s);
  Keyspace got = log.visible(now_ms);
  ASSERT_EQ(got, want) << what << "\nrebuilt from events:\n"
                       << describe(got) << "server:\n"
                       << describe(want);
  size_t served = 0;
  for (size_t i = mark; i < log.events.size(); i++) {
    const ServerEvent& e = log.events[i];
    if (e.kind == Kind::KeyExpired) {
      EXPECT_EQ(e.cause, 0) << what;
      EXPECT_EQ(e.client, 0) << what;
    } else if (e.kind == Kind::KeyWritten || e.kind == Kind::KeyDeleted) {
      EXPECT_EQ(e.cause, cause) << what << " " << kind_name(e.kind) << " " << e.key;
      EXPECT_EQ(e.client, client) << what << " " << kind_name(e.kind) << " " << e.key;
    } else if (e.kind == Kind::Served) {
      served++;
      EXPECT_EQ(e.cause, cause) << what;
      EXPECT_EQ(e.client, client) << what;
    }
  }
  EXPECT_EQ(served, 1u) << what;
}

std::string line_of(const Argv& argv) {
  std::string out;
  for (const std::string& a : argv) out += (out.empty() ? "" : " ") + a.substr(0, 60);
  return out;
}

TEST(FakeServerEvents, KeyspaceRebuiltFromEventsEqualsTheServerAfterEveryCommand) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  CommandGen gen(20260101);
  constexpr int kSteps = 6000;
  int64_t cause = 0;
  size_t commands = 0;
  auto run = [&](const Argv& argv, int step) {
    const size_t mark = log.events.size();
    cause++;
    s.call(a, argv, cause);
    commands++;
    check_after(s, log, mark, a, cause, "step " + std::to_string(step) + ": " + line_of(argv));
  };
  for (int step = 0; step < kSteps && !::testing::Test::HasFatalFailure(); step++) {
    Prng& r = gen.rng();
    const int64_t now_ms = s.unix_ms(s.clock_us());
    const uint64_t what = r.uniform(100);
    if (what < 8) {
      // Time passes: keys expire actively (KeyExpired), between commands.
      const size_t mark = log.events.size();
      s.advance(s.clock_us() + r.range_inclusive(1, 1500) * 1000);
      ASSERT_TRUE(log.problems.empty()) << log.problems.front();
      ASSERT_EQ(log.visible(s.unix_ms(s.clock_us())), actual_keyspace(s)) << "after advance";
      for (const ServerEvent& e : log.since(mark, Kind::KeyExpired)) EXPECT_EQ(e.cause, 0);
    } else if (what < 9) {
      s.jump_clock(r.range_inclusive(-2000, 4000) * 1000, s.clock_us());
      ASSERT_EQ(log.visible(s.unix_ms(s.clock_us())), actual_keyspace(s)) << "after a jump";
    } else if (what < 14) {
      const bool discard = r.chance(1, 6);
      run({"MULTI"}, step);
      const uint64_t n = 2 + r.uniform(3);
      for (uint64_t i = 0; i < n; i++)
        run(r.chance(1, 5) ? gen.script() : gen.command(step, now_ms), step);
      run({discard ? "DISCARD" : "EXEC"}, step);
    } else if (what < 22) {
      run(gen.script(), step);
    } else {
      run(gen.command(step, now_ms), step);
    }
  }
  EXPECT_GT(commands, 6000u);
  // The run met every kind of key event, and an emptied list's deletion among them.
  EXPECT_GT(log.of(Kind::KeyWritten).size(), 1000u);
  EXPECT_GT(log.of(Kind::KeyDeleted).size(), 300u);
  EXPECT_GT(log.of(Kind::KeyExpired).size(), 50u);
}

// The same on the event-driven path: several clients' commands queue at the server, blocked
// clients are woken by others' writes; every key event names the client and cause of the
// command that did it.
TEST(FakeServerEvents, KeyspaceRebuiltFromEventsWithQueuedCommandsOfSeveralClients) {
  Server s;
  EventLog log(s);
  std::vector<ClientId> clients = {s.connect(0), s.connect(0), s.connect(0)};
  const ClientId blocker = s.connect(0);
  CommandGen gen(7);
  std::map<int64_t, ClientId> client_of_cause;
  int64_t cause = 0;
  TimeUs now = 0;
  constexpr int kRounds = 1500;
  for (int round = 0; round < kRounds && !::testing::Test::HasFatalFailure(); round++) {
    Prng& r = gen.rng();
    const uint64_t n = 1 + r.uniform(4);
    for (uint64_t i = 0; i < n; i++) {
      const ClientId c = clients[r.uniform(clients.size())];
      cause++;
      client_of_cause[cause] = c;
      Argv argv = r.chance(1, 6) ? gen.script() : gen.command(round, s.unix_ms(now));
      s.submit(c, argv, now + static_cast<TimeUs>(r.uniform(500)), cause);
    }
    if (r.chance(1, 4) && s.client(blocker) && !s.client(blocker)->blocked) {
      cause++;
      client_of_cause[cause] = blocker;
      const char* blocking[] = {"BLPOP", "BRPOP", "BZPOPMIN"};
      const char* name = blocking[r.uniform(3)];
      const std::string k = std::string(name[1] == 'Z' ? "z" : "l") + std::to_string(r.uniform(4));
      s.submit(blocker, {name, k, "k0", "0.2"}, now, cause);
    }
    now += static_cast<TimeUs>(r.range_inclusive(1, 300)) * kMs;
    s.advance(now);
    s.take_outputs();
    ASSERT_TRUE(log.problems.empty()) << "round " << round << ": " << log.problems.front();
    ASSERT_EQ(log.visible(s.unix_ms(s.clock_us())), actual_keyspace(s)) << "round " << round;
  }
  size_t woken = 0;
  for (const ServerEvent& e : log.events) {
    if (e.kind == Kind::KeyWritten || e.kind == Kind::KeyDeleted) {
      ASSERT_NE(e.cause, 0) << e.key;
      EXPECT_EQ(e.client, client_of_cause[e.cause]) << e.key << " cause " << e.cause;
      if (e.client == blocker) woken++;
    } else if (e.kind == Kind::KeyExpired) {
      EXPECT_EQ(e.cause, 0);
    }
  }
  EXPECT_GT(woken, 10u) << "blocked pops served by others' pushes";
  EXPECT_GT(log.of(Kind::KeyExpired).size(), 50u);
}

TEST(FakeServerEvents, KeyEventsOfCommonWrites) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  size_t m = log.events.size();
  s.call(a, {"SET", "lock", "tok-A", "PX", "10000"}, 1);
  const int64_t expire_ms = s.unix_ms(s.clock_us()) + 10000;
  auto written = log.since(m, Kind::KeyWritten);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0].key, "lock");
  EXPECT_EQ(written[0].type, "string");
  EXPECT_EQ(written[0].value, "tok-A");
  EXPECT_EQ(written[0].expire_at_ms, expire_ms);
  EXPECT_EQ(written[0].cause, 1);
  EXPECT_EQ(written[0].client, a);
  // A TTL change is a KeyWritten with the new expiry; PERSIST clears it.
  m = log.events.size();
  s.call(a, {"PEXPIRE", "lock", "20000"});
  ASSERT_EQ(log.since(m, Kind::KeyWritten).size(), 1u);
  EXPECT_EQ(log.since(m, Kind::KeyWritten)[0].expire_at_ms, expire_ms + 10000);
  m = log.events.size();
  s.call(a, {"PERSIST", "lock"});
  EXPECT_EQ(log.since(m, Kind::KeyWritten).at(0).expire_at_ms, -1);
  // A list popped empty is deleted, with what it held before the command.
  s.call(a, {"RPUSH", "q", "job-1"});
  m = log.events.size();
  s.call(a, {"LPOP", "q"});
  EXPECT_EQ(log.key_events(m), std::vector<std::string>{"KeyDeleted 0:q list [job-1]"});
  // RENAME: the source is deleted, the destination written with the value (and its TTL).
  s.call(a, {"SET", "src", "v", "EX", "100"});
  m = log.events.size();
  s.call(a, {"RENAME", "src", "dst"});
  EXPECT_EQ(log.key_events(m),
            (std::vector<std::string>{"KeyDeleted 0:src string v", "KeyWritten 0:dst string v"}));
  EXPECT_GT(log.since(m, Kind::KeyWritten).at(0).expire_at_ms, 0);
  // A script's writes, one redis.call after the other: SET then DEL shows both.
  m = log.events.size();
  s.call(
      a,
      {"EVAL", "redis.call('SET', KEYS[1], 'x') redis.call('DEL', KEYS[1]) return 1", "1", "tmp"},
      7);
  EXPECT_EQ(log.key_events(m),
            (std::vector<std::string>{"KeyWritten 0:tmp string x", "KeyDeleted 0:tmp string x"}));
  for (const ServerEvent& e : log.since(m, Kind::KeyWritten)) EXPECT_EQ(e.client, a);
  // Commands inside EXEC carry the EXEC's cause; the queued ones were Served as "queued".
  s.call(a, {"MULTI"}, 8);
  s.call(a, {"INCR", "n"}, 9);
  s.call(a, {"HSET", "h", "b", "2", "a", "1"}, 10);
  m = log.events.size();
  s.call(a, {"EXEC"}, 11);
  EXPECT_EQ(log.key_events(m), (std::vector<std::string>{"KeyWritten 0:n string 1",
                                                         "KeyWritten 0:h hash {a: 1, b: 2}"}));
  for (const ServerEvent& e : log.since(m, Kind::KeyWritten)) EXPECT_EQ(e.cause, 11);
  auto served = log.of(Kind::Served);
  ASSERT_GE(served.size(), 4u);
  EXPECT_EQ(served[served.size() - 4].command, "MULTI");
  EXPECT_EQ(served[served.size() - 3].detail, "queued");
  EXPECT_EQ(served[served.size() - 3].cause, 9);
  EXPECT_EQ(served.back().command, "EXEC");
  // FLUSHALL: one deletion per key, in key order, database by database.
  s.call(a, {"SELECT", "1"});
  s.call(a, {"SADD", "set", "b", "a"});
  m = log.events.size();
  s.call(a, {"FLUSHALL"});
  EXPECT_EQ(log.key_events(m), (std::vector<std::string>{
                                   "KeyDeleted 0:dst string v", "KeyDeleted 0:h hash {a: 1, b: 2}",
                                   "KeyDeleted 0:lock string tok-A", "KeyDeleted 0:n string 1",
                                   "KeyDeleted 1:set set {a, b}"}));
  // SWAPDB: each database's keys are reported where they are now.
  s.call(a, {"SET", "only1", "x"});
  s.call(a, {"SELECT", "0"});
  s.call(a, {"SET", "only0", "y"});
  m = log.events.size();
  s.call(a, {"SWAPDB", "0", "1"});
  EXPECT_EQ(log.key_events(m), (std::vector<std::string>{
                                   "KeyDeleted 0:only0 string y", "KeyWritten 0:only1 string x",
                                   "KeyWritten 1:only0 string y", "KeyDeleted 1:only1 string x"}));
  EXPECT_TRUE(log.problems.empty()) << log.problems.front();
}

TEST(FakeServerEvents, CommandsThatChangeNothingReportNoKey) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  s.call(a, {"SET", "s", "v"});
  s.call(a, {"SADD", "set", "m"});
  s.call(a, {"ZADD", "z", "1", "m"});
  s.call(a, {"HSET", "h", "f", "v"});
  s.call(a, {"SELECT", "1"});
  s.call(a, {"SET", "s", "other"});
  s.call(a, {"SELECT", "0"});
  const size_t m = log.events.size();
  const std::vector<Argv> nothing = {
      {"SET", "s", "w", "NX"},
      {"SET", "missing", "w", "XX"},
      {"DEL", "missing"},
      {"UNLINK", "missing", "gone"},
      {"SADD", "set", "m"},
      {"SREM", "set", "x"},
      {"ZADD", "z", "NX", "5", "m"},
      {"ZADD", "z", "1", "m"},
      {"HSETNX", "h", "f", "w"},
      {"HDEL", "h", "nofield"},
      {"LPUSHX", "nolist", "x"},
      {"LPOP", "nolist"},
      {"EXPIRE", "missing", "10"},
      {"PERSIST", "s"},
      {"GETEX", "s"},
      {"SETRANGE", "s", "0", ""},
      {"SETRANGE", "missing", "3", ""},
      {"RENAMENX", "s", "set"},
      {"COPY", "s", "set"},
      {"MOVE", "s", "1"},
      {"GETDEL", "missing"},
      {"INCR", "s"},
      {"LPUSH", "s", "x"},
      {"HINCRBY", "newhash", "f", "x"},
      {"GET", "s"},
      {"SMOVE", "set", "other", "nomember"},
      {"ZREM", "z", "x"},
      {"XTRIM", "nostream", "MAXLEN", "0"},
      {"SWAPDB", "2", "3"},
      {"EXPIRE", "s", "10", "XX"},
  };
  for (const Argv& argv : nothing) {
    const size_t before = log.events.size();
    s.call(a, argv);
    EXPECT_TRUE(log.key_events(before).empty())
        << line_of(argv) << ": " << log.key_events(before)[0];
  }
  EXPECT_EQ(log.since(m, Kind::Served).size(), nothing.size());
}

// ---- served commands, blocking, long scripts, cut clients ----

TEST(FakeServerEvents, ServedCommandsShowTheBusyPeriods) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  s.submit(a, {"DEBUG", "SLEEP", "0.5"}, 1000, 101);
  s.submit(b, {"client", "setname", "worker-b"}, 2000, 102);
  s.submit(b, {"NOSUCHCMD", "x"}, 3000, 103);
  s.advance(2 * kSec);
  std::vector<Output> out = s.take_outputs();
  auto served = log.of(Kind::Served);
  ASSERT_EQ(served.size(), 3u);
  EXPECT_EQ(served[0].command, "DEBUG");
  EXPECT_EQ(served[0].client, a);
  EXPECT_EQ(served[0].cause, 101);
  EXPECT_EQ(served[0].at_us, 1000);
  EXPECT_GE(served[0].duration_us, 500000);
  EXPECT_LE(served[0].duration_us, 500000 + s.options().service_us);
  // The command after it starts when it ends, and each Served ends when its reply leaves.
  EXPECT_EQ(served[1].command, "CLIENT SETNAME");
  EXPECT_EQ(served[1].cause, 102);
  EXPECT_EQ(served[1].at_us, served[0].at_us + served[0].duration_us);
  EXPECT_EQ(served[2].command, "NOSUCHCMD");
  EXPECT_TRUE(served[2].detail.rfind("ERR unknown command", 0) == 0) << served[2].detail;
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; i++) EXPECT_EQ(served[i].at_us + served[i].duration_us, out[i].at_us);
}

TEST(FakeServerEvents, BlockedClientsServedTimedOutAndDisconnected) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  // Served: B's push wakes A, whose pop (with A's cause) empties and deletes the list.
  s.submit(a, {"BLPOP", "q", "other", "0"}, 0, 201);
  s.advance(10 * kMs);
  auto blocked = log.of(Kind::Blocked);
  ASSERT_EQ(blocked.size(), 1u);
  EXPECT_EQ(blocked[0].client, a);
  EXPECT_EQ(blocked[0].cause, 201);
  EXPECT_EQ(blocked[0].detail, "q other");
  EXPECT_EQ(blocked[0].timeout_at_us, kNever);
  EXPECT_EQ(log.of(Kind::Served).at(0).detail, "blocked");
  size_t m = log.events.size();
  s.submit(b, {"RPUSH", "q", "job"}, 20 * kMs, 202);
  s.advance(30 * kMs);
  EXPECT_EQ(log.key_events(m),
            (std::vector<std::string>{"KeyWritten 0:q list [job]", "KeyDeleted 0:q list [job]"}));
  auto deleted = log.since(m, Kind::KeyDeleted);
  EXPECT_EQ(deleted.at(0).client, a);
  EXPECT_EQ(deleted.at(0).cause, 201);
  auto woken = log.since(m, Kind::Served);
  ASSERT_EQ(woken.size(), 2u);
  EXPECT_EQ(woken[1].detail, "woken");
  EXPECT_EQ(woken[1].cause, 201);
  auto unblocked = log.since(m, Kind::Unblocked);
  ASSERT_EQ(unblocked.size(), 1u);
  EXPECT_EQ(unblocked[0].detail, "served");
  EXPECT_EQ(unblocked[0].cause, 201);
  // Timed out.
  m = log.events.size();
  s.submit(a, {"BLPOP", "q", "1"}, 100 * kMs, 203);
  s.advance(2 * kSec);
  ASSERT_EQ(log.since(m, Kind::Blocked).size(), 1u);
  EXPECT_EQ(log.since(m, Kind::Blocked)[0].timeout_at_us, 100 * kMs + 1 * kSec);
  unblocked = log.since(m, Kind::Unblocked);
  ASSERT_EQ(unblocked.size(), 1u);
  EXPECT_EQ(unblocked[0].detail, "timeout");
  EXPECT_EQ(unblocked[0].cause, 203);
  EXPECT_EQ(unblocked[0].at_us, 100 * kMs + 1 * kSec);
  // Disconnected by its own side, and killed by another client (CLIENT KILL).
  m = log.events.size();
  s.submit(a, {"BLPOP", "q", "0"}, 3 * kSec, 204);
  s.advance(3 * kSec + 10 * kMs);
  s.disconnect(a, 3 * kSec + 10 * kMs);
  unblocked = log.since(m, Kind::Unblocked);
  ASSERT_EQ(unblocked.size(), 1u);
  EXPECT_EQ(unblocked[0].detail, "disconnected");
  EXPECT_EQ(unblocked[0].cause, 204);
  ClientId c = s.connect(4 * kSec);
  m = log.events.size();
  s.submit(c, {"XREAD", "BLOCK", "0", "STREAMS", "st", "$"}, 4 * kSec, 205);
  s.submit(b, {"CLIENT", "KILL", "ID", std::to_string(c)}, 4 * kSec + 1, 206);
  s.advance(5 * kSec);
  EXPECT_EQ(log.since(m, Kind::Blocked).at(0).detail, "st");
  unblocked = log.since(m, Kind::Unblocked);
  ASSERT_EQ(unblocked.size(), 1u);
  EXPECT_EQ(unblocked[0].detail, "killed");
  auto cut = log.since(m, Kind::ClientCut);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].client, c);
  EXPECT_EQ(cut[0].detail, "CLIENT KILL");
  EXPECT_EQ(cut[0].by_client, b);
  EXPECT_EQ(cut[0].cause, 206);
}

TEST(FakeServerEvents, LongScriptStartBusyKilledEnd) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  s.call(b, {"CONFIG", "SET", "busy-reply-threshold", "100"});
  const size_t m = log.events.size();
  s.submit(a, {"EVAL", "while true do end", "0"}, 0, 301);
  s.submit(b, {"GET", "k"}, 50 * kMs, 302);
  s.submit(b, {"SCRIPT", "KILL"}, 200 * kMs, 303);
  s.advance(1 * kSec);
  auto start = log.since(m, Kind::ScriptStart);
  ASSERT_EQ(start.size(), 1u);
  EXPECT_EQ(start[0].client, a);
  EXPECT_EQ(start[0].cause, 301);
  EXPECT_EQ(start[0].command, "EVAL");
  EXPECT_EQ(start[0].at_us, 0);
  auto busy = log.since(m, Kind::ScriptBusy);
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_GE(busy[0].at_us, 100 * kMs);
  EXPECT_LT(busy[0].at_us, 102 * kMs);
  auto busy_reply = log.since(m, Kind::BusyReply);
  ASSERT_EQ(busy_reply.size(), 1u);
  EXPECT_EQ(busy_reply[0].client, b);
  EXPECT_EQ(busy_reply[0].cause, 302);
  EXPECT_EQ(busy_reply[0].at_us, busy[0].at_us);
  auto killed = log.since(m, Kind::ScriptKilled);
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_EQ(killed[0].client, a);
  EXPECT_EQ(killed[0].cause, 301);
  EXPECT_EQ(killed[0].by_client, b);
  auto end = log.since(m, Kind::ScriptEnd);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(end[0].detail, "killed");
  EXPECT_EQ(end[0].at_us, killed[0].at_us);
  EXPECT_EQ(end[0].duration_us, end[0].at_us);
  EXPECT_GE(end[0].at_us, 200 * kMs);
  // No Served for the long script; SCRIPT KILL itself was served, the GET was not.
  auto served = log.since(m, Kind::Served);
  ASSERT_EQ(served.size(), 1u);
  EXPECT_EQ(served[0].command, "SCRIPT KILL");
  EXPECT_EQ(served[0].cause, 303);
  // A short script is an ordinary Served command, as long as it ran.
  const size_t m2 = log.events.size();
  s.submit(a, {"EVALSHA", "0000000000000000000000000000000000000000", "0"}, 2 * kSec, 304);
  s.submit(a, {"EVAL", "local x = 0 for i = 1, 10000 do x = x + 1 end return x", "0"}, 2 * kSec,
           305);
  s.advance(3 * kSec);
  served = log.since(m2, Kind::Served);
  ASSERT_EQ(served.size(), 2u);
  EXPECT_EQ(served[0].command, "EVALSHA");
  EXPECT_EQ(served[1].command, "EVAL");
  EXPECT_EQ(served[1].cause, 305);
  EXPECT_GT(served[1].duration_us, 100);
  EXPECT_TRUE(log.since(m2, Kind::ScriptStart).empty());
}

// A script is logged as its EVAL, timed from its start to its end, even when it was killed
// (call() times the whole call); RESET empties the log, not the ids (slowlog.c).
TEST(FakeServerEvents, SlowlogLogsAScriptWhenItEnds) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  s.call(b, {"CONFIG", "SET", "busy-reply-threshold", "100"});
  const size_t m = log.events.size();
  s.submit(a, {"EVAL", "while true do end", "0"}, 0, 401);
  s.submit(b, {"SCRIPT", "KILL"}, 200 * kMs, 402);
  s.advance(1 * kSec);
  auto end = log.since(m, Kind::ScriptEnd);
  ASSERT_EQ(end.size(), 1u);
  auto logged = log.since(m, Kind::Slowlogged);
  ASSERT_EQ(logged.size(), 1u) << "one entry: the EVAL (SCRIPT KILL is fast)";
  EXPECT_EQ(logged[0].argv, (std::vector<std::string>{"EVAL", "while true do end", "0"}));
  EXPECT_EQ(logged[0].duration_us, end[0].duration_us);
  EXPECT_EQ(logged[0].logged_at_us, end[0].at_us);
  EXPECT_EQ(logged[0].client, a);
  EXPECT_EQ(logged[0].cause, 401);
  EXPECT_EQ(logged[0].count, 1);
  ASSERT_EQ(s.slowlog().size(), 1u);
  EXPECT_EQ(s.slowlog()[0].id, 0);
  EXPECT_EQ(s.slowlog()[0].duration_us, end[0].duration_us);
  // A short script is not logged; DEBUG SLEEP is, dated at its start, made at its end.
  s.submit(a, {"EVAL", "return 1", "0"}, 2 * kSec, 403);
  s.submit(a, {"DEBUG", "SLEEP", "0.05"}, 2 * kSec, 404);
  s.advance(3 * kSec);
  logged = log.since(m, Kind::Slowlogged);
  ASSERT_EQ(logged.size(), 2u);
  EXPECT_EQ(logged[1].argv[0], "DEBUG");
  EXPECT_GE(logged[1].duration_us, 50 * kMs);
  EXPECT_LT(logged[1].duration_us, 51 * kMs);
  EXPECT_EQ(logged[1].logged_at_us, logged[1].at_us + logged[1].duration_us);
  EXPECT_EQ(logged[1].count, 2);
  s.submit(b, {"SLOWLOG", "RESET"}, 4 * kSec, 405);
  s.submit(a, {"DEBUG", "SLEEP", "0.02"}, 4 * kSec, 406);
  s.advance(5 * kSec);
  EXPECT_EQ(log.since(m, Kind::SlowlogReset).size(), 1u);
  ASSERT_EQ(s.slowlog().size(), 1u);
  EXPECT_EQ(s.slowlog()[0].id, 2) << "RESET keeps counting ids";
  EXPECT_EQ(log.since(m, Kind::Slowlogged).back().count, 1);
}

TEST(FakeServerEvents, QueuedExecAndScriptWritesCarryTheirCause) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  ClientId b = s.connect(0);
  s.submit(a, {"MULTI"}, 0, 601);
  s.submit(a, {"SET", "x", "1"}, 0, 602);
  s.submit(a, {"EXEC"}, 0, 603);
  s.submit(b, {"EVAL", "redis.call('SET', KEYS[1], 'b') return redis.call('INCR', 'n')", "1", "y"},
           0, 604);
  // A script that writes after its first slice: a long-running call whose write happens later.
  const char* slow =
      "local x = 0 for i = 1, 200000 do x = x + 1 end return redis.call('SET', KEYS[1], x)";
  s.submit(b, {"EVAL", slow, "1", "z"}, 10 * kMs, 605);
  s.advance(1 * kSec);
  EXPECT_TRUE(log.problems.empty()) << log.problems.front();
  EXPECT_EQ(log.key_events(0),
            (std::vector<std::string>{"KeyWritten 0:x string 1", "KeyWritten 0:y string b",
                                      "KeyWritten 0:n string 1", "KeyWritten 0:z string 200000"}));
  auto written = log.of(Kind::KeyWritten);
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(written[0].cause, 603);
  EXPECT_EQ(written[0].client, a);
  for (size_t i = 1; i < 3; i++) {
    EXPECT_EQ(written[i].cause, 604);
    EXPECT_EQ(written[i].client, b) << "a script's writes are its caller's, not the Lua client's";
  }
  EXPECT_EQ(written[3].cause, 605);
  EXPECT_EQ(written[3].client, b);
  auto start = log.of(Kind::ScriptStart);
  auto end = log.of(Kind::ScriptEnd);
  ASSERT_EQ(start.size(), 1u);
  ASSERT_EQ(end.size(), 1u);
  EXPECT_EQ(start[0].cause, 605);
  EXPECT_EQ(start[0].at_us, 10 * kMs);
  EXPECT_GT(written[3].at_us, start[0].at_us) << "the write is drawn when its slice ran";
  EXPECT_LE(written[3].at_us, end[0].at_us);
  EXPECT_EQ(end[0].at_us - end[0].duration_us, start[0].at_us);
  EXPECT_EQ(end[0].detail, "");
  // One Served per command taken from the queue, except the long script.
  std::vector<int64_t> served;
  for (const ServerEvent& e : log.of(Kind::Served)) served.push_back(e.cause);
  EXPECT_EQ(served, (std::vector<int64_t>{601, 602, 603, 604}));
}

TEST(FakeServerEvents, SubscriberCutByTheOutputBufferLimit) {
  Server s;
  EventLog log(s);
  ClientId pub = s.connect(0);
  ClientId sub = s.connect(0);
  s.call(pub, {"CONFIG", "SET", "client-output-buffer-limit", "pubsub 1000 0 0"});
  s.call(sub, {"SUBSCRIBE", "ch"});
  s.client(sub)->auto_read = false;
  for (int i = 0; i < 5; i++)
    s.submit(pub, {"PUBLISH", "ch", std::string(400, 'p')}, (i + 1) * kMs, 400 + i);
  s.advance(1 * kSec);
  auto cut = log.of(Kind::ClientCut);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].client, sub);
  EXPECT_EQ(cut[0].detail.rfind("client-output-buffer-limit pubsub", 0), 0u) << cut[0].detail;
  EXPECT_EQ(cut[0].by_client, 0);
  EXPECT_EQ(cut[0].cause, 0);
  EXPECT_FALSE(s.connected(sub));
}

TEST(FakeServerEvents, ClockJumpAndExpiry) {
  Server s;
  EventLog log(s);
  ClientId a = s.connect(0);
  s.call(a, {"SET", "lock", "A", "EX", "30"});
  s.jump_clock(31 * kSec, s.clock_us());
  s.advance(s.clock_us() + 1);
  auto jump = log.of(Kind::ClockJump);
  ASSERT_EQ(jump.size(), 1u);
  EXPECT_EQ(jump[0].delta_us, 31 * kSec);
  EXPECT_EQ(jump[0].detail, "+31000 ms");
  auto expired = log.of(Kind::KeyExpired);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].key, "lock");
  EXPECT_EQ(expired[0].value, "A");
  EXPECT_EQ(expired[0].at_us, jump[0].at_us);
  EXPECT_TRUE(log.problems.empty());
}

TEST(FakeServerEvents, ValueSummaries) {
  auto summary = [](Value v) { return value_summary(v); };
  EXPECT_EQ(summary(Value{std::string("tok\n\x01\"q\\")}), "tok\\n\\x01\\\"q\\\\");
  EXPECT_EQ(summary(Value{std::string(250, 'a')}), std::string(200, 'a') + "... (250 bytes)");
  ListValue list;
  for (int i = 0; i < 12; i++) list.push_back(std::to_string(i));
  EXPECT_EQ(summary(Value{list}), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (12 items)]");
  HashValue hash;
  hash.set("b", "2");
  hash.set("a", "1");
  EXPECT_EQ(summary(Value{hash}), "{a: 1, b: 2}");
  EXPECT_EQ(summary(Value{SetValue{"y", "x"}}), "{x, y}");
  ZSetValue z;
  z.by_score = {{2.5, "b"}, {0.1, "a"}, {-std::numeric_limits<double>::infinity(), "c"}};
  EXPECT_EQ(summary(Value{z}), "{c: -inf, a: 0.1, b: 2.5}");
  Server s;
  ClientId a = s.connect(0);
  s.call(a, {"XADD", "st", "1-1", "f", "v"});
  s.call(a, {"XADD", "st", "2-1", "f", "v"});
  s.call(a, {"XDEL", "st", "2-1"});
  EXPECT_EQ(summary(s.dbs()[0].dict.at("st").value), "1 entries, last 1-1");
}

}  // namespace
}  // namespace redlab::fake
