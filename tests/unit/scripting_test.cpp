// Scripting in the fake Redis: SHA-1 vectors, EVAL/EVALSHA and the script cache, the sandbox,
// virtual time and the BUSY / SCRIPT KILL cycle, and the bounds that keep hostile scripts
// from crashing or hanging the simulator (deep recursion, endless loops, huge replies,
// memory, a server destroyed under a running script).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/core/reply.h"
#include "sim/fake/server.h"
#include "sim/fake/sha1.h"

namespace redlab::fake {
namespace {

// ---- SHA-1 ----

TEST(Sha1, KnownVectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex("The quick brown fox jumps over the lazy dog"),
            "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
  EXPECT_EQ(sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  EXPECT_EQ(sha1_hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
}

TEST(Sha1, PaddingBoundaries) {
  // 55, 56 and 64 bytes: the length field fits, just does not fit, and a full block.
  EXPECT_EQ(sha1_hex(std::string(55, 'b')), "4d055f5334ac4bca50260deff4707cd8d4fc1454");
  EXPECT_EQ(sha1_hex(std::string(56, 'c')), "ee59278c72f2b1f1c6be889b06f4c47d7a220b3d");
}

TEST(Sha1, IncrementalEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 300; i++) data.push_back(static_cast<char>(i * 7));
  for (size_t split : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{299}}) {
    Sha1 h;
    h.update(data.data(), split);
    h.update(data.data() + split, data.size() - split);
    auto d = h.digest();
    static const char kHex[] = "0123456789abcdef";
    std::string hex;
    for (uint8_t b : d) {
      hex.push_back(kHex[b >> 4]);
      hex.push_back(kHex[b & 15]);
    }
    EXPECT_EQ(hex, sha1_hex(data)) << "split at " << split;
  }
}

// ---- helpers ----

struct Fixture {
  std::unique_ptr<Server> server = std::make_unique<Server>();
  ClientId a = server->connect(0);
  ClientId b = server->connect(0);
  Reply call(const Argv& argv) { return server->call(a, argv); }
  Reply eval(const std::string& body, const Argv& rest = {"0"}) {
    Argv argv{"EVAL", body};
    argv.insert(argv.end(), rest.begin(), rest.end());
    return call(argv);
  }
  // Event mode: the replies of client id among what the server sent up to now.
  std::vector<Output> outputs_for(ClientId id) {
    std::vector<Output> all = server->take_outputs();
    std::vector<Output> mine;
    for (auto& o : all)
      if (o.client == id) mine.push_back(std::move(o));
    return mine;
  }
};

Reply integer(int64_t v) {
  return Reply::integer_reply(v);
}

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// ---- EVAL, EVALSHA and the cache ----

TEST(Scripting, ConversionsBothWays) {
  Fixture f;
  EXPECT_EQ(f.eval("return 42"), integer(42));
  EXPECT_EQ(f.eval("return 3.99"), integer(3));
  EXPECT_EQ(f.eval("return -3.99"), integer(-3));
  EXPECT_EQ(f.eval("return 0/0"), integer(INT64_MIN));
  EXPECT_EQ(f.eval("return 2^63"), integer(INT64_MIN));
  EXPECT_EQ(f.eval("return true"), integer(1));
  EXPECT_EQ(f.eval("return false"), Reply::nil());
  EXPECT_EQ(f.eval("return {1, 'a', {2}, nil, 5}"),
            Reply::array({integer(1), Reply::bulk("a"), Reply::array({integer(2)})}));
  EXPECT_EQ(f.eval("return {ok = 'fine'}"), Reply::status("fine"));
  EXPECT_EQ(f.eval("return {err = 'MY bad'}"), Reply::error("MY bad"));
  EXPECT_EQ(f.eval("return redis.call('get', 'nokey')"), Reply::nil());
  EXPECT_EQ(f.eval("return type(redis.call('get', 'nokey'))"), Reply::bulk("boolean"));
  EXPECT_EQ(f.eval("return redis.call('ping')"), Reply::status("PONG"));
  EXPECT_EQ(f.eval("return {KEYS[1], ARGV[1], #KEYS, #ARGV}", {"1", "k", "v"}),
            Reply::array({Reply::bulk("k"), Reply::bulk("v"), integer(1), integer(1)}));
}

TEST(Scripting, BinarySafeBothWays) {
  Fixture f;
  std::string value("a\0b\xff", 4);
  EXPECT_EQ(f.eval("return redis.call('set', KEYS[1], ARGV[1])", {"1", "bin", value}), Reply::ok());
  EXPECT_EQ(f.call({"GET", "bin"}), Reply::bulk(value));
  EXPECT_EQ(f.eval("return redis.call('get', 'bin')"), Reply::bulk(value));
  EXPECT_EQ(f.eval("return #redis.call('get', 'bin')"), integer(4));
  EXPECT_EQ(f.eval("return 'x\\0y'"), Reply::bulk(std::string("x\0y", 3)));
}

TEST(Scripting, ErrorsCarryScriptAndLine) {
  Fixture f;
  f.call({"SET", "str", "x"});
  Reply r = f.eval("local x = 1\nreturn redis.call('incr', 'str')");
  ASSERT_TRUE(r.is_error());
  EXPECT_EQ(r.str, "ERR value is not an integer or out of range script: " +
                       sha1_hex("local x = 1\nreturn redis.call('incr', 'str')") +
                       ", on @user_script:2.");
  r = f.eval("return 1 + nil");
  EXPECT_EQ(r.str, "ERR user_script:1: attempt to perform arithmetic on a nil value script: " +
                       sha1_hex("return 1 + nil") + ", on @user_script:1.");
  r = f.eval("return 1 +");
  EXPECT_EQ(r.str,
            "ERR Error compiling script (new function): user_script:1: unexpected symbol near "
            "'<eof>'");
  EXPECT_EQ(f.eval("return redis.pcall('incr', 'str')"),
            Reply::error("ERR value is not an integer or out of range"));
}

TEST(Scripting, NumkeysErrors) {
  Fixture f;
  EXPECT_EQ(f.call({"EVAL", "return 1", "2", "a"}),
            Reply::error("ERR Number of keys can't be greater than number of args"));
  EXPECT_EQ(f.call({"EVAL", "return 1", "-1"}),
            Reply::error("ERR Number of keys can't be negative"));
  EXPECT_EQ(f.call({"EVAL", "return 1", "x"}),
            Reply::error("ERR value is not an integer or out of range"));
}

TEST(Scripting, CacheLoadExistsFlushAndRestart) {
  Fixture f;
  const std::string sha = sha1_hex("return 1");
  EXPECT_EQ(f.call({"EVALSHA", sha, "0"}), Reply::error(std::string(err::kNoScript)));
  EXPECT_EQ(f.call({"SCRIPT", "LOAD", "return 1"}), Reply::bulk(sha));
  EXPECT_EQ(f.call({"EVALSHA", sha, "0"}), integer(1));
  std::string upper = sha;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  EXPECT_EQ(f.call({"EVALSHA", upper, "0"}), integer(1));
  EXPECT_EQ(f.call({"SCRIPT", "EXISTS", sha, "ffff"}), Reply::array({integer(1), integer(0)}));
  // EVAL caches too.
  f.eval("return 2");
  EXPECT_EQ(f.call({"EVALSHA", sha1_hex("return 2"), "0"}), integer(2));
  EXPECT_EQ(f.call({"SCRIPT", "FLUSH"}), Reply::ok());
  EXPECT_EQ(f.call({"EVALSHA", sha, "0"}), Reply::error(std::string(err::kNoScript)));
  // A restarted server (a new Server object) has an empty cache: NOSCRIPT, then EVAL works.
  f.call({"SCRIPT", "LOAD", "return 1"});
  f.server = std::make_unique<Server>();
  f.a = f.server->connect(0);
  EXPECT_EQ(f.call({"EVALSHA", sha, "0"}), Reply::error(std::string(err::kNoScript)));
  EXPECT_EQ(f.eval("return 1"), integer(1));
  EXPECT_EQ(f.call({"EVALSHA", sha, "0"}), integer(1));
}

TEST(Scripting, ReadOnlyScripts) {
  Fixture f;
  EXPECT_EQ(f.call({"EVAL_RO", "return redis.call('set', 'k', 'v')", "0"}).str,
            "ERR Write commands are not allowed from read-only scripts. script: " +
                sha1_hex("return redis.call('set', 'k', 'v')") + ", on @user_script:1.");
  EXPECT_EQ(f.call({"EXISTS", "k"}), integer(0));
  EXPECT_EQ(f.call({"EVAL_RO", "#!lua\nreturn 1", "0"}),
            Reply::error("ERR Can not execute a script with write flag using *_ro command."));
  EXPECT_EQ(f.call({"EVAL", "#!lua flags=no-writes\nreturn redis.pcall('set', 'k', 'v')", "0"}),
            Reply::error("ERR Write commands are not allowed from read-only scripts."));
  EXPECT_EQ(f.call({"EVAL", "#!lua flags=bogus\nreturn 1", "0"}),
            Reply::error("ERR Unexpected flag in script shebang: bogus"));
}

TEST(Scripting, RefusedCommands) {
  Fixture f;
  for (const char* cmd : {"multi", "exec", "blpop", "subscribe", "script", "eval", "client"}) {
    Reply r = f.eval(std::string("return redis.pcall('") + cmd + "')");
    EXPECT_TRUE(r == Reply::error("ERR This Redis command is not allowed from script") ||
                r == Reply::error("ERR Wrong number of args calling Redis command from script"))
        << cmd << ": " << format_short(r);
  }
  EXPECT_EQ(f.eval("return redis.pcall('blpop', 'l', 0)"),
            Reply::error("ERR This Redis command is not allowed from script"));
  EXPECT_EQ(f.eval("return redis.pcall('nosuch')"),
            Reply::error("ERR Unknown Redis command called from script"));
  // A blocking command that scripts may call answers at once, as if timed out.
  EXPECT_EQ(f.eval("return redis.call('blmpop', 0, 1, 'nolist', 'LEFT')"), Reply::nil());
}

// ---- the sandbox ----

TEST(Scripting, GlobalsAndLibrariesAreReadOnly) {
  Fixture f;
  EXPECT_TRUE(starts_with(f.eval("x = 1").str,
                          "ERR user_script:1: Attempt to modify a readonly table script:"));
  EXPECT_TRUE(starts_with(f.eval("return x").str,
                          "ERR user_script:1: Script attempted to access nonexistent global "
                          "variable 'x' script:"));
  EXPECT_TRUE(starts_with(f.eval("string.len = nil").str,
                          "ERR user_script:1: Attempt to modify a readonly table script:"));
  EXPECT_TRUE(
      starts_with(f.eval("rawset(_G, 'x', 1)").str, "ERR Attempt to modify a readonly table"));
  EXPECT_TRUE(starts_with(f.eval("getmetatable('').__index = {}").str,
                          "ERR user_script:1: Attempt to modify a readonly table"));
  EXPECT_EQ(f.eval("return ('abc'):upper()"), Reply::bulk("ABC"));
  EXPECT_EQ(f.eval("return rawget(string, 'len') ~= nil"), integer(1));
  // A raw write into a library table that slips past the proxy does not outlive the script.
  EXPECT_EQ(f.eval("table.insert(string, 'leak') return string[1]"), Reply::bulk("leak"));
  EXPECT_EQ(f.eval("return rawget(string, 1)"), Reply::nil());
  EXPECT_EQ(f.eval("return string[1]"), Reply::nil());
}

TEST(Scripting, MathRandomIsRedisPrng) {
  Fixture f;
  EXPECT_EQ(f.eval("return tostring(math.random())"), Reply::bulk("0.39646477363839"));
  EXPECT_EQ(f.eval("return tostring(math.random())"), Reply::bulk("0.84048536971234"));
  EXPECT_EQ(f.eval("math.randomseed(1) return tostring(math.random())"),
            Reply::bulk("0.041630344484761"));
  EXPECT_EQ(f.eval("return tostring(math.random())"), Reply::bulk("0.4544924448498"));
}

TEST(Scripting, Cjson) {
  Fixture f;
  EXPECT_EQ(f.eval("return cjson.encode({1, 'two', {three = 3}, true, false, cjson.null})"),
            Reply::bulk("[1,\"two\",{\"three\":3},true,false,null]"));
  EXPECT_EQ(f.eval("return cjson.encode(cjson.decode(ARGV[1]))", {"0", "{\"x\":[1,2.5,\"a/b\"]}"}),
            Reply::bulk("{\"x\":[1,2.5,\"a\\/b\"]}"));
  EXPECT_TRUE(starts_with(f.eval("return cjson.decode('[1,2')").str,
                          "ERR user_script:1: Expected comma or array end but found T_END at "
                          "character 5 script:"));
  EXPECT_TRUE(starts_with(f.eval("local t = {} t.t = t return cjson.encode(t)").str,
                          "ERR user_script:1: Cannot serialise, excessive nesting (1001)"));
  EXPECT_TRUE(starts_with(
      f.eval("return cjson.decode(string.rep('[', 5000))").str,
      "ERR user_script:1: Found too many nested data structures (1001) at character 1001"));
}

TEST(Scripting, SelectInsideScriptKeepsCallerDb) {
  Fixture f;
  EXPECT_EQ(f.eval("redis.call('select', 3) return redis.call('set', 'k', 'v')"), Reply::ok());
  EXPECT_EQ(f.call({"GET", "k"}), Reply::nil());
  EXPECT_EQ(f.call({"SELECT", "3"}), Reply::ok());
  EXPECT_EQ(f.call({"GET", "k"}), Reply::bulk("v"));
  EXPECT_EQ(f.eval("return redis.call('get', 'k')"), Reply::bulk("v"));
}

TEST(Scripting, EvalInsideMultiExec) {
  Fixture f;
  EXPECT_EQ(f.call({"MULTI"}), Reply::ok());
  EXPECT_EQ(f.eval("return redis.call('incr', 'c')"), Reply::status("QUEUED"));
  EXPECT_EQ(f.eval("return redis.call('incr', 'c') * 10"), Reply::status("QUEUED"));
  EXPECT_EQ(f.call({"EXEC"}), Reply::array({integer(1), integer(20)}));
}

// ---- time, BUSY and SCRIPT KILL ----

TEST(Scripting, ScriptCostsVirtualTime) {
  Fixture f;
  TimeUs start = f.server->clock_us();
  // About 2 VM instructions per iteration: 2M instructions.
  f.server->submit(f.a, {"EVAL", "local x = 0 for i = 1, 1000000 do x = x + 1 end return x", "0"},
                   start);
  f.server->advance(start + 10'000'000);
  auto out = f.outputs_for(f.a);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].reply, integer(1000000));
  TimeUs took = out[0].at_us - start;
  EXPECT_GT(took, 20'000);  // 2M instructions at 20 ns each: about 40 ms
  EXPECT_LT(took, 100'000);
}

TEST(Scripting, BusyThenScriptKill) {
  Fixture f;
  f.call({"CONFIG", "SET", "busy-reply-threshold", "100"});
  TimeUs t0 = f.server->clock_us();
  f.server->submit(f.a, {"EVAL", "while true do end", "0"}, t0);
  f.server->advance(t0 + 50'000);
  // Under the threshold the other client waits: no reply yet.
  f.server->submit(f.b, {"PING"}, t0 + 50'000);
  f.server->advance(t0 + 90'000);
  EXPECT_TRUE(f.outputs_for(f.b).empty());
  f.server->advance(t0 + 150'000);
  auto busy = f.outputs_for(f.b);
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0].reply, Reply::error(std::string(err::kBusy)));
  EXPECT_GE(busy[0].at_us, t0 + 100'000);
  f.server->submit(f.b, {"SCRIPT", "KILL"}, t0 + 200'000);
  f.server->advance(t0 + 210'000);
  std::vector<Output> all = f.server->take_outputs();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].client, f.b);
  EXPECT_EQ(all[0].reply, Reply::ok());
  EXPECT_EQ(all[1].client, f.a);
  EXPECT_EQ(all[1].reply.str, "ERR Script killed by user with SCRIPT KILL... script: " +
                                  sha1_hex("while true do end") + ", on @user_script:1.");
  EXPECT_FALSE(f.server->long_running_active());
  EXPECT_EQ(f.server->call(f.b, {"SCRIPT", "KILL"}),
            Reply::error("NOTBUSY No scripts in execution right now."));
}

TEST(Scripting, KillReachesLoopsInsidePcallSortAndCoroutines) {
  const char* scripts[] = {
      "pcall(function() while true do end end) return 'after'",
      "table.sort({3, 2, 1}, function(a, b) while true do end end)",
      "local t = setmetatable({}, {__index = function() while true do end end}) return t.x",
      "local co = coroutine.wrap(function() while true do end end) co()",
      "local n = 0 while true do pcall(function() while true do end end) n = n + 1 end",
  };
  for (const char* body : scripts) {
    Fixture f;
    f.call({"CONFIG", "SET", "busy-reply-threshold", "10"});
    TimeUs t0 = f.server->clock_us();
    f.server->submit(f.a, {"EVAL", body, "0"}, t0);
    f.server->submit(f.b, {"SCRIPT", "KILL"}, t0 + 20'000);
    f.server->advance(t0 + 100'000);
    auto out = f.outputs_for(f.a);
    ASSERT_EQ(out.size(), 1u) << body;
    if (std::string(body).find("'after'") != std::string::npos) {
      EXPECT_EQ(out[0].reply, Reply::bulk("after"));
    } else {
      EXPECT_TRUE(starts_with(out[0].reply.str, "ERR Script killed by user with SCRIPT KILL..."))
          << body << ": " << format_short(out[0].reply);
    }
    EXPECT_FALSE(f.server->long_running_active()) << body;
  }
}

TEST(Scripting, UnkillableAfterWriteAndCallLimit) {
  Fixture f;
  f.call({"CONFIG", "SET", "busy-reply-threshold", "10"});
  TimeUs t0 = f.server->clock_us();
  f.server->submit(
      f.a, {"EVAL", "redis.call('set', 'w', 1) for i = 1, 3000000 do end return 1", "0"}, t0);
  f.server->submit(f.b, {"SCRIPT", "KILL"}, t0 + 20'000);
  f.server->advance(t0 + 30'000);
  auto out = f.outputs_for(f.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(starts_with(out[0].reply.str, "UNKILLABLE Sorry the script already executed"));
  f.server->advance(t0 + 10'000'000);
  EXPECT_EQ(f.outputs_for(f.a).at(0).reply, integer(1));
  // call() never hangs: an endless script is stopped at script_call_limit_us, even one that
  // wrote (which SCRIPT KILL could not stop).
  f.server->script_call_limit_us = 50'000;
  Reply r = f.eval("redis.call('set', 'w', 2) while true do end");
  EXPECT_TRUE(starts_with(r.str, "ERR Script killed by redlab")) << format_short(r);
  r = f.eval("while true do end");
  EXPECT_TRUE(r.is_error()) << format_short(r);
  EXPECT_EQ(f.call({"GET", "w"}), Reply::bulk("2"));
  EXPECT_EQ(f.eval("return 'still usable'"), Reply::bulk("still usable"));
}

TEST(Scripting, TwoServersInterleaveTheirScripts) {
  Fixture f1, f2;
  f1.server->submit(f1.a, {"EVAL", "local x = 0 for i = 1, 2000000 do x = x + 1 end return x", "0"},
                    0);
  f2.server->submit(f2.a, {"EVAL", "local x = 0 for i = 1, 3000000 do x = x + 2 end return x", "0"},
                    0);
  for (TimeUs t = 1000; t <= 1'000'000; t += 1000) {
    f1.server->advance(t);
    f2.server->advance(t);
  }
  EXPECT_EQ(f1.outputs_for(f1.a).at(0).reply, integer(2000000));
  EXPECT_EQ(f2.outputs_for(f2.a).at(0).reply, integer(6000000));
}

TEST(Scripting, ServerDestroyedUnderARunningScript) {
  {
    Fixture f;
    f.server->submit(f.a, {"EVAL", "local t = {} while true do t[#t % 100 + 1] = {} end", "0"}, 0);
    f.server->advance(5000);
    EXPECT_TRUE(f.server->long_running_active());
  }  // the suspended script's server goes away
  Fixture g;
  EXPECT_EQ(g.eval("return 'fine'"), Reply::bulk("fine"));
}

TEST(Scripting, ClientGoneWhileItsScriptRuns) {
  Fixture f;
  f.server->submit(
      f.a, {"EVAL", "for i = 1, 1000000 do end return redis.call('set', 'k', 'v')", "0"}, 0);
  f.server->advance(1000);
  f.server->disconnect(f.a, 1000);
  f.server->advance(10'000'000);
  EXPECT_EQ(f.server->call(f.b, {"GET", "k"}), Reply::bulk("v"));
}

TEST(Scripting, BlockedClientServedWhenScriptEnds) {
  Fixture f;
  f.server->submit(f.b, {"BLPOP", "q", "0"}, 0);
  f.server->advance(10);
  f.server->submit(f.a, {"EVAL", "return redis.call('rpush', KEYS[1], 'x')", "1", "q"}, 20);
  f.server->advance(100'000);
  auto out = f.outputs_for(f.b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].reply, Reply::array({Reply::bulk("q"), Reply::bulk("x")}));
}

// ---- hostile scripts ----

TEST(Scripting, DeepRecursionIsAnError) {
  Fixture f;
  EXPECT_TRUE(starts_with(f.eval("local function f(n) return 1 + f(n + 1) end return f(1)").str,
                          "ERR user_script:1: stack overflow"));
  // Recursion through C functions (pcall, metamethods) hits Lua's C-call limit.
  Reply r = f.eval("local function f() return select(2, pcall(f)) end return f()");
  EXPECT_EQ(r.kind, Reply::Kind::Bulk) << format_short(r);  // the innermost pcall's message
  r = f.eval(
      "local t = setmetatable({}, {__index = function(t, k) return t[k .. 'x'] end}) return t.a");
  EXPECT_TRUE(r.is_error()) << format_short(r);
  r = f.eval(
      "local function g(s) return (string.gsub(s, '.', function(c) return g(c) end)) end "
      "return g('abc')");
  EXPECT_TRUE(r.is_error()) << format_short(r);
  EXPECT_EQ(f.eval("return 'alive'"), Reply::bulk("alive"));
}

TEST(Scripting, SelfReferencingReplyStopsAtLuaStackLimit) {
  Fixture f;
  Reply r = f.eval("local t = {} t[1] = t return t");
  int depth = 0;
  const Reply* cur = &r;
  while (cur->kind == Reply::Kind::Array && depth < 100000) {
    ASSERT_EQ(cur->elements.size(), 1u);
    cur = &cur->elements[0];
    depth++;
  }
  EXPECT_EQ(depth, 7995);  // as deep as Redis 7.0.15 goes
  EXPECT_EQ(*cur, Reply::error("ERR reached lua stack limit"));
}

TEST(Scripting, HugeRepliesAndMemory) {
  Fixture f;
  Reply r = f.eval("local t = {} for i = 1, 200000 do t[i] = i end return t");
  ASSERT_EQ(r.kind, Reply::Kind::Array);
  EXPECT_EQ(r.elements.size(), 200000u);
  EXPECT_EQ(r.elements.back(), integer(200000));
  EXPECT_EQ(f.eval("return #string.rep('x', 10000000)"), integer(10000000));
  r = f.eval("return #string.rep('x', 2^30)");
  EXPECT_TRUE(r.is_error()) << format_short(r);
  EXPECT_NE(r.str.find("not enough memory"), std::string::npos) << r.str;
  EXPECT_EQ(f.eval("return 'alive'"), Reply::bulk("alive"));
}

}  // namespace
}  // namespace redlab::fake
