// Scripting (Redis 7.0 eval.c, script.c, script_lua.c): EVAL EVALSHA EVAL_RO EVALSHA_RO and
// SCRIPT LOAD|EXISTS|FLUSH|KILL|DEBUG|HELP, on a real Lua 5.1 interpreter.
//
// One Lua state per server, as in Redis. A script body is compiled once and kept in the Lua
// registry under its SHA-1, so EVALSHA of a small script costs one table lookup and a call;
// SCRIPT FLUSH drops the cache, and a restarted server (a new Server object) starts empty,
// which is how a client meets NOSCRIPT.
//
// The sandbox. Redis 7.0.15 runs a patched Lua whose tables can be marked read-only: the
// globals, every library table and the string metatable refuse writes ("Attempt to modify a
// readonly table"), and reading an undefined global is an error. Stock Lua 5.1 has no such
// flag, so here each protected table is an empty *proxy* whose metatable reads through to the
// real table and refuses writes, and the thread's globals table is itself such a proxy. The
// base functions that bypass metatables (rawget, rawset, next, pairs, getmetatable,
// setmetatable) are replaced by versions that see through, or refuse, proxies. One known
// difference: table.insert on a library table raises no error (it writes into the proxy, and
// the write is undone when the script ends, so no script can affect the next one).
//
// Time. A script blocks the server, in virtual time: it costs the EVAL's own service time,
// plus kHookCostNs per kHookInstructions Lua VM instructions, plus the service time of every
// command it calls. 20 ns per instruction is about four times what Redis 7.0.15 needs on
// our machines (a numeric for loop runs at ~5 ns per VM instruction), on purpose: the repl
// and a live GUI drive the fake at wall-clock speed, and the stock Lua here runs at ~6 ns
// per instruction, so a cost below that would let a busy script fall ever further behind
// the clock. Commands called by a script run at the script's start time: Redis too freezes
// the clock during a script, so that no key expires half-way through it.
//
// Pausing a script. The script runs on a C stack of its own (a ucontext fiber), and every
// kHookInstructions instructions a count hook may switch back to the server, which answers
// other clients (BUSY past busy-reply-threshold, SCRIPT KILL) and later switches back. A Lua
// coroutine yield could not do this in Lua 5.1: it cannot cross a C call, and a script that
// loops inside pcall, a metamethod or a sort comparator would never give the server a
// chance. The fiber stops exactly where Redis processes events while busy. SCRIPT KILL sets
// a flag; the hook then raises the kill error and switches itself to every line, so a pcall
// cannot swallow the error for good (Redis does the same).
//
// Libraries: base (without print, dofile, loadfile, getfenv, setfenv, newproxy), string,
// table, math (with Redis' deterministic math.random), coroutine, bit, cjson
// (script_json.cpp) and redis.*. cmsgpack and struct are not provided.
//
// Lua errors are longjmps. No C++ object with a destructor may be alive in a frame that a
// Lua error can unwind: the C functions keep their buffers in the ScriptJob, and all Lua
// work outside a script runs under lua_cpcall.
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <lua.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "sim/core/assert.h"
#include "sim/core/cmdline.h"
#include "sim/fake/lua_budget.h"
#include "sim/fake/script_json.h"
#include "sim/fake/server.h"
#include "sim/fake/sha1.h"
#include "sim/fake/util.h"

#if defined(__SANITIZE_ADDRESS__)
#define REDLAB_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDLAB_FIBER_ASAN 1
#endif
#endif
#ifdef REDLAB_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace redlab::fake {
namespace {

// ---------------------------------------------------------------------------------------
// Bounds and the cost model
// ---------------------------------------------------------------------------------------

constexpr int kHookInstructions = 1000;            // the count hook fires this often
constexpr int64_t kHookCostNs = 20000;             // virtual time of kHookInstructions instructions
constexpr size_t kLuaMemoryMaxBytes = 256u << 20;  // a script that allocates more fails
constexpr size_t kFiberStackBytes = 64u << 20;     // C stack of a script (pages mapped on use)
constexpr size_t kReplyElementsMax = 1u << 21;     // values in one script reply
constexpr int kSyncResumesMax = 4;                 // EVAL inside EXEC: one resume runs it all
constexpr const char* kRedisVersion = "7.0.15";
constexpr int kRedisVersionNum = 0x07000f;

// Script flags (#!lua flags=...); kCompatMode marks a script without a shebang line.
enum ScriptFlag : uint32_t {
  kCompatMode = 1u << 0,
  kNoWrites = 1u << 1,
  kAllowOom = 1u << 2,
  kAllowStale = 1u << 3,
  kNoCluster = 1u << 4,
  kAllowCrossSlotKeys = 1u << 5,
};

// scripts_flags_def: the flags' names, in Redis' order (the shebang, register_function and
// FUNCTION LIST read or show them).
constexpr std::pair<const char*, uint32_t> kScriptFlagNames[] = {
    {"no-writes", kNoWrites},
    {"allow-oom", kAllowOom},
    {"allow-stale", kAllowStale},
    {"no-cluster", kNoCluster},
    {"allow-cross-slot-keys", kAllowCrossSlotKeys}};

// Commands Redis 7.0 refuses from scripts (its "noscript" flag). Our command table may not
// carry kNoScript for all of them (the blocking list and zset commands, for instance), so
// the list is kept here too.
bool refused_in_scripts(const CommandSpec& spec) {
  if (spec.flags & kNoScript) return true;
  static const std::unordered_set<std::string_view> kNames = {
      "acl",          "auth",       "bgrewriteaof", "bgsave",    "blmove",     "blpop",
      "brpop",        "brpoplpush", "bzpopmax",     "bzpopmin",  "client",     "config",
      "debug",        "discard",    "eval",         "eval_ro",   "evalsha",    "evalsha_ro",
      "exec",         "failover",   "fcall",        "fcall_ro",  "function",   "hello",
      "latency",      "module",     "monitor",      "multi",     "psubscribe", "psync",
      "punsubscribe", "quit",       "replconf",     "replicaof", "reset",      "role",
      "save",         "script",     "shutdown",     "slaveof",   "ssubscribe", "subscribe",
      "sunsubscribe", "sync",       "unsubscribe",  "unwatch",   "wait",       "watch"};
  return kNames.count(spec.name) != 0;
}

// (long long)d as x86-64 computes it, which is what Redis replies for a Lua number: the
// fraction is dropped, and NaN or anything out of range gives INT64_MIN.
int64_t lua_number_to_int64(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

// ---------------------------------------------------------------------------------------
// Fiber: a C stack of its own for the running script
// ---------------------------------------------------------------------------------------

class Fiber {
 public:
  Fiber() = default;
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;
  ~Fiber() {
    if (stack_) munmap(stack_, mapped_bytes_);
  }

  // Switches to the fiber: the first time (or after reset) entry() starts on the fiber's
  // stack; afterwards the fiber continues from its last yield(). Returns when it yields.
  // entry never returns: it loops, yielding after each piece of work, so that one
  // makecontext serves every script (each context operation costs a system call).
  void run(void (*entry)()) {
    if (!ready_) {
      if (!stack_) map_stack();
      int rc = getcontext(&fiber_);
      REDLAB_ASSERT(rc == 0 && "getcontext");
      fiber_.uc_stack.ss_sp = stack_ + guard_bytes_;
      fiber_.uc_stack.ss_size = kFiberStackBytes;
      fiber_.uc_link = nullptr;
      makecontext(&fiber_, entry, 0);
      ready_ = true;
    }
    switch_in();
  }
  // On the fiber, first thing after a fresh start.
  void entered() {
#ifdef REDLAB_FIBER_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &caller_bottom_, &caller_size_);
#endif
  }
  // On the fiber: back to whoever called run().
  void yield() {
#ifdef REDLAB_FIBER_ASAN
    __sanitizer_start_switch_fiber(&fiber_fake_stack_, caller_bottom_, caller_size_);
#endif
    swapcontext(&fiber_, &caller_);
#ifdef REDLAB_FIBER_ASAN
    __sanitizer_finish_switch_fiber(fiber_fake_stack_, &caller_bottom_, &caller_size_);
#endif
  }
  // The fiber was left in the middle of a script that will never be resumed: the next run()
  // starts afresh on the same stack.
  void reset() {
    ready_ = false;
  }

 private:
  void map_stack() {
    guard_bytes_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mapped_bytes_ = kFiberStackBytes + guard_bytes_;
    void* p = mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REDLAB_ASSERT(p != MAP_FAILED && "cannot map a stack for scripts");
    stack_ = static_cast<char*>(p);
    // A guard page below the stack: an overflow faults instead of corrupting the heap.
    mprotect(stack_, guard_bytes_, PROT_NONE);
  }
  void switch_in() {
#ifdef REDLAB_FIBER_ASAN
    __sanitizer_start_switch_fiber(&caller_fake_stack_, stack_ + guard_bytes_, kFiberStackBytes);
#endif
    swapcontext(&caller_, &fiber_);
#ifdef REDLAB_FIBER_ASAN
    __sanitizer_finish_switch_fiber(caller_fake_stack_, nullptr, nullptr);
#endif
  }

  ucontext_t caller_{};
  ucontext_t fiber_{};
  char* stack_ = nullptr;
  size_t mapped_bytes_ = 0;
  size_t guard_bytes_ = 0;
  bool ready_ = false;
  // AddressSanitizer's bookkeeping of which stack is current.
  [[maybe_unused]] void* caller_fake_stack_ = nullptr;
  [[maybe_unused]] void* fiber_fake_stack_ = nullptr;
  [[maybe_unused]] const void* caller_bottom_ = nullptr;
  [[maybe_unused]] size_t caller_size_ = 0;
};

// ---------------------------------------------------------------------------------------
// Per-server state
// ---------------------------------------------------------------------------------------

class ScriptJob;

struct CachedScript {
  std::string body;
  size_t code_offset = 0;  // the Lua code starts after the shebang line (its '\n' is kept)
  uint32_t flags = 0;
  int ref = LUA_NOREF;  // the compiled function in the registry; LUA_NOREF until compiled
};

// A function a library registered (functionInfo).
struct FunctionDef {
  std::string name;  // as registered
  std::string library;
  std::string description;
  bool has_description = false;
  uint32_t flags = 0;  // ScriptFlag, never kCompatMode
  int ref = LUA_NOREF;
};

// A library (functionLibInfo): its whole code, shebang included, as FUNCTION LOAD got it.
struct Library {
  std::string name;
  std::string code;
  std::vector<std::string> functions;  // lower-cased keys of ScriptingState::functions
};

// The library whose code is running (luaEngineCreate's loadCtx): what it registered so far.
struct LoadingLibrary {
  std::vector<FunctionDef> registered;
  int64_t instructions = 0;  // bounded: a load that runs too long fails (LOAD_TIMEOUT_MS)
};

struct ScriptingState {
  ScriptingState() { client.name = "lua"; }
  ~ScriptingState() { close_lua(); }
  ScriptingState(const ScriptingState&) = delete;
  ScriptingState& operator=(const ScriptingState&) = delete;

  bool open_lua();
  void close_lua();

  lua_State* lua = nullptr;
  size_t lua_bytes = 0;         // the Lua heap, bounded by kLuaMemoryMaxBytes
  int globals_ref = LUA_NOREF;  // the real globals table behind the read-only _G
  int errh_ref = LUA_NOREF;     // __redis__err__handler
  int proxies_ref = LUA_NOREF;  // every read-only proxy, to undo raw writes into them
  std::unordered_map<std::string, CachedScript, StringHash, std::equal_to<>> scripts;
  // redisLrand48's state: 48 bits, seeded as Redis' rand.c is (math.random is deterministic
  // and its sequence runs on across scripts, as in Redis 7.0).
  uint64_t rand48 = 0x1234ABCD330EULL;
  Fiber fiber;
  Client client;  // the script's own client: SELECT inside a script does not move the caller
  ScriptJob* running = nullptr;  // the job on the fiber, if any

  // ---- Functions (FUNCTION LOAD, FCALL) ----
  // Libraries by name and functions by lower-cased name (Redis' function dict is case-blind,
  // its library dict is not). Redis lists both in hash order; ours are sorted.
  std::map<std::string, Library, std::less<>> libraries;
  std::map<std::string, FunctionDef, std::less<>> functions;
  // The functions' compiled callbacks belong to the Lua state: after close_lua they are
  // compiled again, from the libraries' code, before the next FCALL.
  bool functions_compiled = true;
  int fenv_ref = LUA_NOREF;           // the globals every library's code and functions see
  int fenv_meta_ref = LUA_NOREF;      // its metatable: __index is switched while a library loads
  int libapi_ref = LUA_NOREF;         // what a loading library sees: only `redis`, and of it only
                                      // register_function, log and the constants
  LoadingLibrary* loading = nullptr;  // set while a library's code runs
};

ScriptingState& state_of(Server& s) {
  if (!s.scripting_state) s.scripting_state = std::make_shared<ScriptingState>();
  return *static_cast<ScriptingState*>(s.scripting_state.get());
}

std::shared_ptr<ScriptingState> shared_state_of(Server& s) {
  state_of(s);
  return std::static_pointer_cast<ScriptingState>(s.scripting_state);
}

// ---------------------------------------------------------------------------------------
// The running script
// ---------------------------------------------------------------------------------------

thread_local ScriptJob* t_job = nullptr;  // the job whose fiber is running on this thread

class ScriptJob final : public LongRunning {
 public:
  enum class Kill : uint8_t { None, User, Limit, Budget };

  ScriptJob(std::shared_ptr<ScriptingState> state, Server& server, ClientId client, int db,
            std::string_view name, int func_ref, const Argv& argv, size_t numkeys, bool read_only,
            bool deliver, TimeUs base_cost_us, bool function_call = false)
      : state_(std::move(state)),
        server_(&server),
        client_(client),
        db_(db),
        name_(name),
        func_ref_(func_ref),
        numkeys_(numkeys),
        read_only_(read_only),
        deliver_(deliver),
        used_ns_(base_cost_us * 1000),
        limit_ns_(std::clamp<TimeUs>(server.script_call_limit_us, 0, INT64_MAX / 1000) * 1000),
        function_call_(function_call) {
    if (function_call_) command_ = argv;
    // KEYS and ARGV: argv[3 .. 3+numkeys) and the rest.
    args_.assign(argv.begin() + 3, argv.end());
  }

  ~ScriptJob() override {
    if (state_->running == this) {
      // Destroyed while suspended (its server is going away): the Lua state still has the
      // script's frames on the abandoned stack, so it is closed and reopened on next use.
      state_->fiber.reset();
      state_->running = nullptr;
      state_->close_lua();
    }
  }

  TimeUs resume(Server& server, TimeUs now_us, TimeUs budget_us, bool& done) override {
    REDLAB_ASSERT(&server == server_ && "a script resumes on its own server");
    REDLAB_ASSERT(budget_us > 0);
    done = false;
    slice_end_ns_ = budget_us >= INT64_MAX / 2000 ? INT64_MAX : used_ns_ + budget_us * 1000;
    ScriptJob* saved = t_job;
    t_job = this;
    if (!started_) {
      started_ = true;
      start_us_ = now_us;
      REDLAB_ASSERT(state_->running == nullptr && "one script at a time per server");
      state_->running = this;
    }
    state_->fiber.run(&ScriptJob::fiber_main);
    t_job = saved;
    int64_t total_us = used_ns_ / 1000;
    TimeUs used_us = total_us - reported_us_;
    reported_us_ = total_us;
    if (finished_) {
      done = true;
      state_->running = nullptr;
      if (deliver_) server.emit(client_, now_us + used_us, std::move(result_));
    }
    return used_us;
  }

  // SCRIPT KILL: refused once the script has written (Redis' SCRIPT_WRITE_DIRTY).
  bool kill() override {
    if (wrote_) return false;
    if (kill_ == Kill::None) kill_ = Kill::User;
    return true;
  }
  bool has_written() const override { return wrote_; }
  bool is_function() const override { return function_call_; }

  Reply take_result() { return std::move(result_); }

  // ---- For the Lua callbacks (redis.call, the hook) ----

  // Fills call_argv_ from the Lua arguments 1..argc; false if one is not a string or number.
  bool collect_args(lua_State* L, int argc);
  // Runs call_argv_; nullptr when it ran (reply in call_reply_), else why it was refused.
  const char* run_command();
  static void count_hook(lua_State* L, lua_Debug* ar);

  std::shared_ptr<ScriptingState> state_;
  Server* server_;
  ClientId client_;
  int db_;
  // What errors name (run_ctx->funcname): the script's SHA-1, or the function's name.
  std::string name_;
  int func_ref_;
  size_t numkeys_;
  bool read_only_;
  bool deliver_;  // emit the reply to client_ (false: the caller takes it, EVAL inside EXEC)
  Argv args_;     // KEYS then ARGV
  bool started_ = false;
  bool finished_ = false;
  bool wrote_ = false;
  bool resp3_ = false;  // redis.setresp(3): null replies become nil instead of false
  Kill kill_ = Kill::None;
  TimeUs start_us_ = 0;
  int64_t used_ns_;   // virtual time used so far
  int64_t limit_ns_;  // past this the script is stopped even if it wrote
  int64_t slice_end_ns_ = 0;
  int64_t reported_us_ = 0;
  Reply result_;
  Argv call_argv_;
  std::vector<Reply> call_replies_;
  Reply call_reply_;
  bool function_call_;  // FCALL: keys and args are the function's arguments, not KEYS/ARGV
  Argv command_;        // FCALL: the command, for FUNCTION STATS

 private:
  static void fiber_main();
  void run_on_fiber();
};

// ---------------------------------------------------------------------------------------
// Errors as Lua values
// ---------------------------------------------------------------------------------------

// Pushes a Redis error table {err="CODE msg"} (luaPushErrorBuff). When dashed, text is an
// error reply "CODE msg" whose first word is kept as the code; otherwise the code is ERR.
// Like Redis this works on C strings (a NUL ends the text) and trims \r\n off the message.
void push_error(lua_State* L, const char* text, size_t size, bool dashed, bool ignore_stats) {
  size = strnlen(text, size);
  const char* code = "ERR";
  size_t code_size = 3;
  const char* msg = text;
  size_t msg_size = size;
  if (dashed) {
    const char* space = static_cast<const char*>(std::memchr(text, ' ', size));
    if (space) {
      code = text;
      code_size = static_cast<size_t>(space - text);
      msg = space + 1;
      msg_size = size - code_size - 1;
    }
  }
  while (msg_size > 0 && (msg[0] == '\r' || msg[0] == '\n')) msg++, msg_size--;
  while (msg_size > 0 && (msg[msg_size - 1] == '\r' || msg[msg_size - 1] == '\n')) msg_size--;
  lua_newtable(L);
  lua_pushliteral(L, "err");
  lua_pushlstring(L, code, code_size);
  lua_pushliteral(L, " ");
  lua_pushlstring(L, msg, msg_size);
  lua_concat(L, 3);
  lua_rawset(L, -3);
  if (ignore_stats) {
    lua_pushliteral(L, "ignore_error_stats_update");
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
  }
}

void push_error(lua_State* L, const char* msg, bool ignore_stats = false) {
  push_error(L, msg, std::strlen(msg), false, ignore_stats);
}

// A Redis error reply as Redis writes it (addReplyErrorFormat): \r\n trimmed off both ends,
// any left inside become spaces. s includes the leading '-', which is then dropped.
void sanitize_error(std::string& s) {
  size_t begin = 0, end = s.size();
  while (begin < end && (s[begin] == '\r' || s[begin] == '\n')) begin++;
  while (end > begin && (s[end - 1] == '\r' || s[end - 1] == '\n')) end--;
  s = s.substr(begin, end - begin);
  for (char& ch : s)
    if (ch == '\r' || ch == '\n') ch = ' ';
  if (!s.empty() && s[0] == '-') s.erase(0, 1);
}

// tostring() for anything but a table (the error handler's "ERR " .. tostring(err)).
void push_tostring(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      lua_pushlstring(L, s, n);
      break;
    }
    case LUA_TBOOLEAN:
      lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false");
      break;
    case LUA_TNIL:
      lua_pushliteral(L, "nil");
      break;
    default:
      lua_pushfstring(L, "%s: %p", luaL_typename(L, idx), lua_topointer(L, idx));
      break;
  }
}

// __redis__err__handler: the error becomes {err=..., source=..., line=...}, the position being
// that of the Lua code that raised it (the caller, when a C function such as redis.call or
// error raised it). A non-table error becomes {err="ERR " .. tostring(err)}.
int error_handler(lua_State* L) {
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) != 0;
  if (have) {
    lua_getinfo(L, "nSl", &ar);
    if (std::strcmp(ar.what, "C") == 0) {
      have = lua_getstack(L, 2, &ar) != 0;
      if (have) lua_getinfo(L, "nSl", &ar);
    }
  }
  if (!lua_istable(L, 1)) {
    lua_newtable(L);
    lua_pushliteral(L, "err");
    lua_pushliteral(L, "ERR ");
    push_tostring(L, 1);
    lua_concat(L, 2);
    lua_rawset(L, -3);
    lua_replace(L, 1);
  }
  lua_settop(L, 1);
  if (have) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  return 1;
}

// ---------------------------------------------------------------------------------------
// Redis replies <-> Lua values
// ---------------------------------------------------------------------------------------

// A command's reply as a Lua value (redisProtocolToLuaType).
void push_reply(lua_State* L, const Reply& r, bool resp3) {
  luaL_checkstack(L, 4, "reply nested too deep");
  switch (r.kind) {
    case Reply::Kind::Status:
      lua_newtable(L);
      lua_pushliteral(L, "ok");
      lua_pushlstring(L, r.str.data(), r.str.size());
      lua_rawset(L, -3);
      break;
    case Reply::Kind::Error:
      push_error(L, r.str.data(), r.str.size(), true, true);
      break;
    case Reply::Kind::Integer:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      break;
    case Reply::Kind::Bulk:
      lua_pushlstring(L, r.str.data(), r.str.size());
      break;
    case Reply::Kind::Nil:
    case Reply::Kind::NilArray:
      if (resp3) {
        lua_pushnil(L);
      } else {
        lua_pushboolean(L, 0);
      }
      break;
    case Reply::Kind::Array:
      lua_createtable(L, static_cast<int>(std::min<size_t>(r.elements.size(), INT32_MAX)), 0);
      for (size_t i = 0; i < r.elements.size(); i++) {
        push_reply(L, r.elements[i], resp3);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      break;
  }
}

bool table_field_is(lua_State* L, const char* field, int type) {
  lua_pushstring(L, field);
  lua_rawget(L, -2);
  if (lua_type(L, -1) == type) return true;
  lua_pop(L, 1);
  return false;
}

// A string, boolean, number or other non-table value as a reply (the value stays on the stack).
[[gnu::noinline]] void scalar_to_reply(lua_State* L, Reply& out) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      out.kind = Reply::Kind::Bulk;
      out.str.assign(s, n);
      break;
    }
    case LUA_TBOOLEAN:
      out = lua_toboolean(L, -1) ? Reply::integer_reply(1) : Reply::nil();
      break;
    case LUA_TNUMBER:
      out = Reply::integer_reply(lua_number_to_int64(lua_tonumber(L, -1)));
      break;
    default:
      out = Reply::nil();
      break;
  }
}

// The single-field tables: {err=}, {ok=}, {double=}, {big_number=}, {verbatim_string=}.
// Returns true, with the table popped, if the table on top is one of them.
[[gnu::noinline]] bool special_table_to_reply(lua_State* L, Reply& out) {
  if (table_field_is(L, "err", LUA_TSTRING)) {
    lua_pop(L, 1);
    lua_getfield(L, -1, "err");
    const char* msg = lua_tostring(L, -1);
    out.kind = Reply::Kind::Error;
    out.str.assign("-");
    out.str.append(msg ? msg : "");
    lua_pop(L, 2);
    sanitize_error(out.str);
    return true;
  }
  if (table_field_is(L, "ok", LUA_TSTRING)) {
    out.kind = Reply::Kind::Status;
    out.str.assign(lua_tostring(L, -1));  // a C string, as sdsnew() takes it
    for (char& ch : out.str)
      if (ch == '\r' || ch == '\n') ch = ' ';
    lua_pop(L, 2);
    return true;
  }
  if (table_field_is(L, "double", LUA_TNUMBER)) {
    double d = lua_tonumber(L, -1);
    char buf[64];
    if (std::isinf(d)) {
      std::snprintf(buf, sizeof buf, "%s", d > 0 ? "inf" : "-inf");
    } else {
      std::snprintf(buf, sizeof buf, "%.17g", d);
    }
    out.kind = Reply::Kind::Bulk;
    out.str.assign(buf);
    lua_pop(L, 2);
    return true;
  }
  if (table_field_is(L, "big_number", LUA_TSTRING)) {
    size_t n = 0;
    const char* s = lua_tolstring(L, -1, &n);
    out.kind = Reply::Kind::Bulk;
    out.str.assign(s, n);
    for (char& ch : out.str)
      if (ch == '\r' || ch == '\n') ch = ' ';
    lua_pop(L, 2);
    return true;
  }
  if (table_field_is(L, "verbatim_string", LUA_TTABLE)) {
    if (table_field_is(L, "format", LUA_TSTRING)) {
      lua_pushstring(L, "string");
      lua_rawget(L, -3);
      if (lua_type(L, -1) == LUA_TSTRING) {
        size_t n = 0;
        const char* s = lua_tolstring(L, -1, &n);
        out.kind = Reply::Kind::Bulk;
        out.str.assign(s, n);
        lua_pop(L, 4);
        return true;
      }
      lua_pop(L, 2);
    }
    lua_pop(L, 1);
  }
  return false;
}

[[gnu::noinline]] void stack_limit_reply(Reply& out) {
  out = Reply::error("ERR reached lua stack limit");
}

// The value on top of the stack as a Redis reply (luaReplyToRedisReply), popping it. The
// stack discipline is Redis' own, so a self-referencing table nests exactly as deep before
// "reached lua stack limit" (7995 levels). This frame recurses that deep, so it holds only
// references (a Lua error may also unwind it); out belongs to the job.
void lua_to_reply(lua_State* L, Reply& out, size_t& budget) {
  if (!lua_checkstack(L, 4)) {
    stack_limit_reply(out);
    lua_pop(L, 1);
    return;
  }
  if (budget == 0) {
    out.kind = Reply::Kind::Nil;
    lua_pop(L, 1);
    return;
  }
  budget--;
  if (lua_type(L, -1) != LUA_TTABLE) {
    scalar_to_reply(L, out);
    lua_pop(L, 1);
    return;
  }
  if (special_table_to_reply(L, out)) return;
  out.kind = Reply::Kind::Array;
  out.elements.clear();
  if (table_field_is(L, "map", LUA_TTABLE)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      if (budget == 0) {
        lua_pop(L, 2);
        break;
      }
      lua_pushvalue(L, -2);
      out.elements.emplace_back();
      lua_to_reply(L, out.elements.back(), budget);
      out.elements.emplace_back();
      lua_to_reply(L, out.elements.back(), budget);
    }
    lua_pop(L, 2);
    return;
  }
  if (table_field_is(L, "set", LUA_TTABLE)) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pop(L, 1);
      if (budget == 0) {
        lua_pop(L, 1);
        break;
      }
      lua_pushvalue(L, -1);
      out.elements.emplace_back();
      lua_to_reply(L, out.elements.back(), budget);
    }
    lua_pop(L, 2);
    return;
  }
  // Bounded: a Lua table holds fewer than kLuaMemoryMaxBytes elements.
  for (int j = 1;; j++) {
    lua_pushnumber(L, j);
    lua_rawget(L, -2);
    if (lua_type(L, -1) == LUA_TNIL || budget == 0) {
      lua_pop(L, 1);
      break;
    }
    out.elements.emplace_back();
    lua_to_reply(L, out.elements.back(), budget);
  }
  lua_pop(L, 1);
}

// ---------------------------------------------------------------------------------------
// The redis.* API
// ---------------------------------------------------------------------------------------

bool ScriptJob::collect_args(lua_State* L, int argc) {
  call_argv_.resize(static_cast<size_t>(argc));
  for (int j = 0; j < argc; j++) {
    std::string& arg = call_argv_[static_cast<size_t>(j)];
    if (lua_type(L, j + 1) == LUA_TNUMBER) {
      // Not lua_tolstring: its "%.14g" loses precision.
      char buf[64];
      int n = std::snprintf(buf, sizeof buf, "%.17g", lua_tonumber(L, j + 1));
      arg.assign(buf, static_cast<size_t>(n));
      continue;
    }
    size_t n = 0;
    const char* s = lua_tolstring(L, j + 1, &n);
    if (!s) return false;
    arg.assign(s, n);
  }
  return true;
}

const char* ScriptJob::run_command() {
  const CommandSpec* spec = server_->find_command(call_argv_[0]);
  if (!spec) return "Unknown Redis command called from script";
  int argc = static_cast<int>(call_argv_.size());
  if ((spec->arity > 0 && spec->arity != argc) || argc < -spec->arity)
    return "Wrong number of args calling Redis command from script";
  if (refused_in_scripts(*spec)) return "This Redis command is not allowed from script";
  if (spec->flags & kWrite) {
    if (read_only_) return "Write commands are not allowed from read-only scripts.";
    wrote_ = true;
  }
  call_replies_.clear();
  server_->execute(state_->client, call_argv_, start_us_, &call_replies_, false, true);
  used_ns_ += server_->service_time(*spec, call_argv_) * 1000;
  call_reply_ = call_replies_.empty() ? Reply::nil() : std::move(call_replies_.front());
  return nullptr;
}

int redis_generic_call(lua_State* L, bool raise) {
  ScriptJob* job = t_job;
  if (!job) {
    push_error(L, "redis.call/pcall can only be called inside a script invocation");
    return lua_error(L);
  }
  int argc = lua_gettop(L);
  if (argc == 0) {
    push_error(L, "Please specify at least one argument for this redis lib call");
    return raise ? lua_error(L) : 1;
  }
  bool args_ok = job->collect_args(L, argc);
  lua_settop(L, 0);
  if (!args_ok) {
    push_error(L, "Lua redis lib command arguments must be strings or integers");
    return raise ? lua_error(L) : 1;
  }
  if (const char* refused = job->run_command()) {
    push_error(L, refused, true);
    return raise ? lua_error(L) : 1;
  }
  push_reply(L, job->call_reply_, job->resp3_);
  if (raise && job->call_reply_.kind == Reply::Kind::Error) return lua_error(L);
  return 1;
}

int redis_call(lua_State* L) {
  return redis_generic_call(L, true);
}
int redis_pcall(lua_State* L) {
  return redis_generic_call(L, false);
}

int redis_sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) {
    push_error(L, "wrong number of arguments");
    return lua_error(L);
  }
  size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);  // NULL for a table: hashes ""
  char hex[41];
  sha1_hex(hex, s ? std::string_view(s, n) : std::string_view());
  lua_pushstring(L, hex);
  return 1;
}

int redis_error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error(L, "wrong number or type of arguments");
    return 1;
  }
  const char* s = lua_tostring(L, -1);
  // "-" is added when missing, then the first word is the error code.
  push_error(L, s[0] == '-' ? s + 1 : s, std::strlen(s[0] == '-' ? s + 1 : s), true, false);
  return 1;
}

int redis_status_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushliteral(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

// redis.log: checks its arguments like Redis; the simulator has no log file to write to.
// (int)lua_tonumber() as Redis writes it, without the undefined behaviour: out of range
// (and NaN) gives INT_MIN, which is what x86 produces, so the same calls fail the same way.
int lua_number_to_int(lua_Number n) {
  if (!(n > -2147483649.0 && n < 2147483648.0)) return INT32_MIN;
  return static_cast<int>(n);
}

int redis_log(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) {
    push_error(L, "redis.log() requires two arguments or more.");
    return lua_error(L);
  }
  if (!lua_isnumber(L, -argc)) {
    push_error(L, "First argument must be a number (log level).");
    return lua_error(L);
  }
  int level = lua_number_to_int(lua_tonumber(L, -argc));
  if (level < 0 || level > 3) {
    push_error(L, "Invalid debug level.");
    return lua_error(L);
  }
  return 0;
}

int redis_setresp(lua_State* L) {
  ScriptJob* job = t_job;
  if (!job) {
    push_error(L, "redis.setresp can only be called inside a script invocation");
    return lua_error(L);
  }
  if (lua_gettop(L) != 1) {
    push_error(L, "redis.setresp() requires one argument.");
    return lua_error(L);
  }
  int resp = lua_number_to_int(lua_tonumber(L, -1));
  if (resp != 2 && resp != 3) {
    push_error(L, "RESP version must be 2 or 3.");
    return lua_error(L);
  }
  job->resp3_ = resp == 3;
  return 0;
}

int redis_set_repl(lua_State* L) {
  if (lua_gettop(L) != 1) {
    push_error(L, "redis.set_repl() requires two arguments.");
    return lua_error(L);
  }
  int flags = lua_number_to_int(lua_tonumber(L, -1));
  if ((flags & ~3) != 0) {
    push_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return lua_error(L);
  }
  return 0;
}

int redis_replicate_commands(lua_State* L) {
  lua_pushboolean(L, 1);  // effects replication is the only mode in 7.0
  return 1;
}

int redis_breakpoint(lua_State* L) {
  lua_pushboolean(L, 0);  // no debugger session
  return 1;
}

int redis_debug(lua_State*) {
  return 0;
}

int redis_acl_check_cmd(lua_State* L) {
  ScriptJob* job = t_job;
  if (!job) {
    push_error(L, "redis.acl_check_cmd can only be called inside a script invocation");
    return lua_error(L);
  }
  int argc = lua_gettop(L);
  if (argc == 0) {
    push_error(L, "Please specify at least one argument for this redis lib call");
    return lua_error(L);
  }
  bool args_ok = job->collect_args(L, argc);
  lua_settop(L, 0);
  if (!args_ok) {
    push_error(L, "Lua redis lib command arguments must be strings or integers");
    return lua_error(L);
  }
  if (!job->server_->find_command(job->call_argv_[0])) {
    push_error(L, "Invalid command passed to redis.acl_check_cmd()");
    return lua_error(L);
  }
  lua_pushboolean(L, 1);  // the default user may run everything
  return 1;
}

// Redis' pcall: a table error with an err field is handed back as its err string, as the
// string errors of Redis 6 were.
int sandbox_pcall(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc == 0) {
    // Redis calls lua_pcall with -1 arguments here and calls the boolean it just pushed.
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "attempt to call a boolean value");
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) lua_replace(L, -2);
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// ---- math.random: Redis' own PRNG (rand.c, the drand48 recurrence) ----

uint32_t rand48_next(ScriptingState& st) {
  st.rand48 = (0x5DEECE66DULL * st.rand48 + 0xB) & ((1ULL << 48) - 1);
  return static_cast<uint32_t>(st.rand48 >> 17);  // 31 bits
}

ScriptingState& upvalue_state(lua_State* L) {
  return *static_cast<ScriptingState*>(lua_touserdata(L, lua_upvalueindex(1)));
}

int math_random(lua_State* L) {
  constexpr uint32_t kMax = 2147483647;  // REDIS_LRAND48_MAX
  double r = static_cast<double>(rand48_next(upvalue_state(L)) % kMax) / kMax;
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      int l = luaL_checkint(L, 1);
      int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int math_randomseed(lua_State* L) {
  uint32_t seed = static_cast<uint32_t>(luaL_checkint(L, 1));
  upvalue_state(L).rand48 = (uint64_t{seed} << 16) | 0x330E;
  return 0;
}

// ---- bit: the LuaBitOp API Redis bundles (32-bit operations on numbers) ----

// A number as LuaBitOp reads it: wrapped to 32 bits (adding 2^52 + 2^51 puts the integer
// part in the low word of the double).
uint32_t bit_arg(lua_State* L, int idx) {
  union {
    double d;
    uint64_t u;
  } v;
  v.d = lua_tonumber(L, idx) + 6755399441055744.0;
  uint32_t b = static_cast<uint32_t>(v.u);
  if (b == 0 && !lua_isnumber(L, idx)) luaL_typerror(L, idx, "number");
  return b;
}

int bit_push(lua_State* L, uint32_t b) {
  lua_pushnumber(L, static_cast<int32_t>(b));
  return 1;
}

int bit_tobit(lua_State* L) {
  return bit_push(L, bit_arg(L, 1));
}
int bit_bnot(lua_State* L) {
  return bit_push(L, ~bit_arg(L, 1));
}
int bit_bswap(lua_State* L) {
  uint32_t b = bit_arg(L, 1);
  return bit_push(L, (b >> 24) | ((b >> 8) & 0xff00) | ((b & 0xff00) << 8) | (b << 24));
}
template <int kOp>
int bit_fold(lua_State* L) {
  uint32_t b = bit_arg(L, 1);
  for (int i = lua_gettop(L); i > 1; i--) {
    uint32_t x = bit_arg(L, i);
    if (kOp == 0) b &= x;
    if (kOp == 1) b |= x;
    if (kOp == 2) b ^= x;
  }
  return bit_push(L, b);
}
template <int kOp>
int bit_shift(lua_State* L) {
  uint32_t b = bit_arg(L, 1);
  uint32_t n = bit_arg(L, 2) & 31;
  switch (kOp) {
    case 0:
      b = b << n;
      break;
    case 1:
      b = b >> n;
      break;
    case 2:
      b = static_cast<uint32_t>(static_cast<int32_t>(b) >> n);
      break;
    case 3:
      b = n == 0 ? b : (b << n) | (b >> (32 - n));
      break;
    case 4:
      b = n == 0 ? b : (b >> n) | (b << (32 - n));
      break;
  }
  return bit_push(L, b);
}
int bit_tohex(lua_State* L) {
  uint32_t b = bit_arg(L, 1);
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(bit_arg(L, 2));
  const char* digits = "0123456789abcdef";
  if (n < 0) {
    n = n == INT32_MIN ? 8 : -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int i = n - 1; i >= 0; i--) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

// ---------------------------------------------------------------------------------------
// The read-only sandbox
// ---------------------------------------------------------------------------------------

// Upvalue 1 of the sandbox's base functions: the table proxy -> real table.
bool is_proxy(lua_State* L, int idx) {
  lua_pushvalue(L, idx);
  lua_rawget(L, lua_upvalueindex(1));
  bool proxy = !lua_isnil(L, -1);
  lua_pop(L, 1);
  return proxy;
}

// Replaces a proxy at idx by its real table.
void unproxy(lua_State* L, int idx) {
  lua_pushvalue(L, idx);
  lua_rawget(L, lua_upvalueindex(1));
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
  } else {
    lua_replace(L, idx);
  }
}

// From a C function, as the patched Lua raises it: no position.
int readonly_error(lua_State* L) {
  lua_pushliteral(L, "Attempt to modify a readonly table");
  return lua_error(L);
}

// __newindex of every proxy: raised at the Lua code that assigns.
int readonly_newindex(lua_State* L) {
  return luaL_error(L, "Attempt to modify a readonly table");
}

// __index of the real globals table.
int nonexistent_global(lua_State* L) {
  if (!lua_isstring(L, 2)) {
    return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
  }
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    lua_tostring(L, 2));
}

int sandbox_rawget(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  unproxy(L, 1);
  lua_rawget(L, 1);
  return 1;
}

int sandbox_rawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  lua_settop(L, 3);
  if (is_proxy(L, 1)) return readonly_error(L);
  lua_rawset(L, 1);
  return 1;
}

int sandbox_next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  unproxy(L, 1);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

// Upvalues: the proxies table, the sandbox's next.
int sandbox_pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// Upvalues: the proxies table, the views table (metatable -> what getmetatable shows for it;
// false shows nothing).
int sandbox_getmetatable(lua_State* L) {
  luaL_checkany(L, 1);
  if (!lua_getmetatable(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushvalue(L, -1);
  lua_rawget(L, lua_upvalueindex(2));
  if (!lua_isnil(L, -1)) {
    if (lua_isboolean(L, -1)) lua_pushnil(L);
    return 1;
  }
  lua_pop(L, 1);
  luaL_getmetafield(L, 1, "__metatable");  // if present, shown instead of the metatable
  return 1;
}

int sandbox_setmetatable(lua_State* L) {
  int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
  if (is_proxy(L, 1)) return readonly_error(L);
  if (luaL_getmetafield(L, 1, "__metatable"))
    return luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

void set_function(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
}

void set_number(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

// Stack: proxies (index p), views (index v), proxy list (index list). Replaces the table on
// top of the stack by a read-only proxy of it. view is what getmetatable shows for the proxy
// (an absolute stack index, or 0 for nothing).
void make_proxy(lua_State* L, int proxies, int views, int list, int view) {
  int real = lua_gettop(L);
  lua_newtable(L);  // the proxy
  int proxy = real + 1;
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, real);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushvalue(L, -1);
  if (view) {
    lua_pushvalue(L, view);
  } else {
    lua_pushboolean(L, 0);
  }
  lua_rawset(L, views);
  lua_setmetatable(L, proxy);
  lua_pushvalue(L, proxy);
  lua_pushvalue(L, real);
  lua_rawset(L, proxies);
  lua_pushvalue(L, proxy);
  lua_rawseti(L, list, static_cast<int>(lua_objlen(L, list)) + 1);
  lua_replace(L, real);  // the proxy takes the real table's place
}

// ---------------------------------------------------------------------------------------
// redis.register_function (function_lua.c)
// ---------------------------------------------------------------------------------------

// Function names follow library names' rule (functionsVerifyName).
bool valid_function_name(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '_'))
      return false;
  return true;
}

constexpr const char* kBadNameError =
    "Library names can only contain letters, numbers, or underscores(_) and must be at least one "
    "character long";

// luaRegisterFunctionReadFlags: the flags table on top of the stack; false on an unknown flag.
bool read_function_flags(lua_State* L, uint32_t& flags) {
  flags = 0;
  // Bounded by the table's array part: it ends at the first nil.
  for (int j = 1;; j++) {
    lua_pushnumber(L, j);
    lua_gettable(L, -2);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return true;
    }
    if (!lua_isstring(L, -1)) {
      lua_pop(L, 1);
      return false;
    }
    const char* flag = lua_tostring(L, -1);
    uint32_t bit = 0;
    for (const auto& [name, value] : kScriptFlagNames)
      if (strcasecmp(name, flag) == 0) bit = value;
    lua_pop(L, 1);
    if (!bit) return false;
    flags |= bit;
  }
}

// Raises a Redis error {err="ERR msg"}, after unref'ing the callback taken so far.
int register_error(lua_State* L, int callback_ref, const char* msg) {
  if (callback_ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, callback_ref);
  push_error(L, msg);
  return lua_error(L);
}

// Adds what register_function read to the loading library (no Lua error can happen here).
void add_registered(LoadingLibrary& loading, const char* name, size_t name_size, const char* desc,
                    size_t desc_size, uint32_t flags, int ref) {
  FunctionDef f;
  f.name.assign(name, name_size);
  if (desc) {
    f.description.assign(desc, desc_size);
    f.has_description = true;
  }
  f.flags = flags;
  f.ref = ref;
  loading.registered.push_back(std::move(f));
}

// redis.register_function(name, callback) or redis.register_function{function_name=...,
// callback=..., flags={...}, description=...}. The error texts are Redis 7.0's. No C++ object
// with a destructor lives in this frame: errors are longjmps.
int register_function(lua_State* L) {
  auto* st = static_cast<ScriptingState*>(lua_touserdata(L, lua_upvalueindex(1)));
  LoadingLibrary* loading = st->loading;
  if (!loading) {
    push_error(L, "redis.register_function can only be called on FUNCTION LOAD command");
    return lua_error(L);
  }
  int argc = lua_gettop(L);
  if (argc < 1 || argc > 2)
    return register_error(L, LUA_NOREF, "wrong number of arguments to redis.register_function");
  const char* name = nullptr;
  size_t name_size = 0;
  const char* desc = nullptr;
  size_t desc_size = 0;
  uint32_t flags = 0;
  int ref = LUA_NOREF;
  if (argc == 2) {
    if (!lua_isstring(L, 1))
      return register_error(L, ref, "first argument to redis.register_function must be a string");
    if (!lua_isfunction(L, 2))
      return register_error(L, ref,
                            "second argument to redis.register_function must be a function");
    name = lua_tolstring(L, 1, &name_size);  // a number becomes a string in place
    ref = luaL_ref(L, LUA_REGISTRYINDEX);
  } else {
    if (!lua_istable(L, 1))
      return register_error(L, ref,
                            "calling redis.register_function with a single argument is only "
                            "applicable to Lua table (representing named arguments).");
    // Slots 2 and 3 anchor the name and the description (a number is turned into a string
    // there, not in the table); lua_next walks the table above them.
    lua_settop(L, 3);
    lua_pushnil(L);
    // Bounded by the table's keys.
    while (lua_next(L, 1)) {
      if (!lua_isstring(L, -2))
        return register_error(L, ref,
                              "named argument key given to redis.register_function is not a "
                              "string");
      // A copy of the key is read: lua_tostring on the key itself would turn a number into a
      // string and confuse lua_next.
      lua_pushvalue(L, -2);
      const char* key = lua_tostring(L, -1);
      int which = strcasecmp(key, "function_name") == 0 ? 1
                  : strcasecmp(key, "description") == 0 ? 2
                  : strcasecmp(key, "callback") == 0    ? 3
                  : strcasecmp(key, "flags") == 0       ? 4
                                                        : 0;
      lua_pop(L, 1);
      if (which == 1) {
        if (!lua_isstring(L, -1))
          return register_error(
              L, ref, "function_name argument given to redis.register_function must be a string");
        lua_pushvalue(L, -1);
        lua_replace(L, 2);
        name = lua_tolstring(L, 2, &name_size);
      } else if (which == 2) {
        if (!lua_isstring(L, -1))
          return register_error(
              L, ref, "description argument given to redis.register_function must be a string");
        lua_pushvalue(L, -1);
        lua_replace(L, 3);
        desc = lua_tolstring(L, 3, &desc_size);
      } else if (which == 3) {
        if (!lua_isfunction(L, -1))
          return register_error(
              L, ref, "callback argument given to redis.register_function must be a function");
        if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
        ref = luaL_ref(L, LUA_REGISTRYINDEX);  // pops the value
        continue;
      } else if (which == 4) {
        if (!lua_istable(L, -1))
          return register_error(L, ref,
                                "flags argument to redis.register_function must be a table "
                                "representing function flags");
        if (!read_function_flags(L, flags)) return register_error(L, ref, "unknown flag given");
      } else {
        return register_error(L, ref, "unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    if (!name)
      return register_error(L, ref, "redis.register_function must get a function name argument");
    if (ref == LUA_NOREF)
      return register_error(L, ref, "redis.register_function must get a callback argument");
  }
  // The name and description strings are values of the argument table (or the argument
  // itself), which is still on the stack: they stay valid until we return.
  if (!valid_function_name(std::string_view(name, strnlen(name, name_size))))
    return register_error(L, ref, kBadNameError);
  for (const FunctionDef& f : loading->registered)
    if (f.name == std::string_view(name, name_size))
      return register_error(L, ref, "Function already exists in the library");
  add_registered(*loading, name, name_size, desc, desc_size, flags, ref);
  return 0;
}

struct InitArgs {
  ScriptingState* state;
};

// Builds the sandbox (scriptingInit and the 7.0.15 table protection). Runs under lua_cpcall.
int init_sandbox(lua_State* L) {
  ScriptingState& st = *static_cast<InitArgs*>(lua_touserdata(L, 1))->state;
  lua_settop(L, 0);
  const lua_CFunction libs[] = {luaopen_base, luaopen_table, luaopen_string, luaopen_math};
  for (lua_CFunction open : libs) {
    lua_pushcfunction(L, open);
    lua_call(L, 0, 0);
  }
  lua_pushvalue(L, LUA_GLOBALSINDEX);  // 1: the real globals
  for (const char* name : {"print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setfield(L, 1, name);
  }
  lua_newtable(L);  // 2: proxy -> real table
  lua_newtable(L);  // 3: metatable -> what getmetatable shows
  lua_newtable(L);  // 4: every proxy
  const int globals = 1, proxies = 2, views = 3, list = 4;

  // Base functions that see through proxies.
  lua_pushvalue(L, proxies);
  lua_pushcclosure(L, sandbox_rawget, 1);
  lua_setfield(L, globals, "rawget");
  lua_pushvalue(L, proxies);
  lua_pushcclosure(L, sandbox_rawset, 1);
  lua_setfield(L, globals, "rawset");
  lua_pushvalue(L, proxies);
  lua_pushcclosure(L, sandbox_next, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, globals, "next");
  lua_pushvalue(L, proxies);
  lua_insert(L, -2);
  lua_pushcclosure(L, sandbox_pairs, 2);
  lua_setfield(L, globals, "pairs");
  lua_pushvalue(L, proxies);
  lua_pushvalue(L, views);
  lua_pushcclosure(L, sandbox_getmetatable, 2);
  lua_setfield(L, globals, "getmetatable");
  lua_pushvalue(L, proxies);
  lua_pushcclosure(L, sandbox_setmetatable, 1);
  lua_setfield(L, globals, "setmetatable");
  lua_pushcfunction(L, sandbox_pcall);
  lua_setfield(L, globals, "pcall");
  lua_pushcfunction(L, error_handler);
  lua_pushvalue(L, -1);
  st.errh_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_setfield(L, globals, "__redis__err__handler");

  // math.random and math.randomseed: Redis' PRNG.
  lua_getfield(L, globals, "math");
  lua_pushlightuserdata(L, &st);
  lua_pushcclosure(L, math_random, 1);
  lua_setfield(L, -2, "random");
  lua_pushlightuserdata(L, &st);
  lua_pushcclosure(L, math_randomseed, 1);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  // bit
  lua_newtable(L);
  set_function(L, "tobit", bit_tobit);
  set_function(L, "bnot", bit_bnot);
  set_function(L, "band", bit_fold<0>);
  set_function(L, "bor", bit_fold<1>);
  set_function(L, "bxor", bit_fold<2>);
  set_function(L, "lshift", bit_shift<0>);
  set_function(L, "rshift", bit_shift<1>);
  set_function(L, "arshift", bit_shift<2>);
  set_function(L, "rol", bit_shift<3>);
  set_function(L, "ror", bit_shift<4>);
  set_function(L, "bswap", bit_bswap);
  set_function(L, "tohex", bit_tohex);
  lua_setfield(L, globals, "bit");
  push_cjson_library(L);
  lua_setfield(L, globals, "cjson");

  // redis
  lua_newtable(L);
  set_function(L, "call", redis_call);
  set_function(L, "pcall", redis_pcall);
  set_function(L, "log", redis_log);
  set_number(L, "LOG_DEBUG", 0);
  set_number(L, "LOG_VERBOSE", 1);
  set_number(L, "LOG_NOTICE", 2);
  set_number(L, "LOG_WARNING", 3);
  set_function(L, "setresp", redis_setresp);
  set_function(L, "sha1hex", redis_sha1hex);
  set_function(L, "error_reply", redis_error_reply);
  set_function(L, "status_reply", redis_status_reply);
  set_function(L, "set_repl", redis_set_repl);
  set_number(L, "REPL_NONE", 0);
  set_number(L, "REPL_AOF", 1);
  set_number(L, "REPL_SLAVE", 2);
  set_number(L, "REPL_REPLICA", 2);
  set_number(L, "REPL_ALL", 3);
  set_function(L, "replicate_commands", redis_replicate_commands);
  set_function(L, "breakpoint", redis_breakpoint);
  set_function(L, "debug", redis_debug);
  set_function(L, "acl_check_cmd", redis_acl_check_cmd);
  lua_pushstring(L, kRedisVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
  set_number(L, "REDIS_VERSION_NUM", kRedisVersionNum);
  lua_setfield(L, globals, "redis");

  // Read-only library tables.
  for (const char* name : {"string", "math", "table", "coroutine", "redis", "bit", "cjson"}) {
    lua_getfield(L, globals, name);
    make_proxy(L, proxies, views, list, 0);
    lua_setfield(L, globals, name);
  }
  // The string metatable ("x"):len() reads through: getmetatable("") shows a read-only
  // {__index = string}.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);  // the real one: {__index = the real string table}
  lua_newtable(L);
  lua_getfield(L, globals, "string");
  lua_setfield(L, -2, "__index");
  make_proxy(L, proxies, views, list, 0);
  lua_rawset(L, views);  // real string metatable -> the read-only view
  lua_pop(L, 1);

  // The globals: a read-only proxy whose real table raises on unknown names.
  lua_newtable(L);
  lua_pushcfunction(L, nonexistent_global);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, globals);
  lua_newtable(L);  // what getmetatable(_G) shows
  lua_pushcfunction(L, nonexistent_global);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_newindex);
  lua_setfield(L, -2, "__newindex");
  make_proxy(L, proxies, views, list, 0);
  int globals_view = lua_gettop(L);
  lua_pushvalue(L, globals);
  make_proxy(L, proxies, views, list, globals_view);
  int globals_proxy = lua_gettop(L);
  lua_pushvalue(L, globals_proxy);
  lua_setfield(L, globals, "_G");  // raw: the globals have no __newindex yet
  lua_pushvalue(L, globals);
  st.globals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, list);
  st.proxies_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  // Functions (function_lua.c, luaEngineInitEngine). What a library's code sees while it
  // loads: globals that hold only `redis`, and of it only register_function, log, the log
  // levels and the version; any other name is an error, and nothing can be assigned.
  lua_newtable(L);
  lua_pushlightuserdata(L, &st);
  lua_pushcclosure(L, register_function, 1);
  lua_setfield(L, -2, "register_function");
  set_function(L, "log", redis_log);
  set_number(L, "LOG_DEBUG", 0);
  set_number(L, "LOG_VERBOSE", 1);
  set_number(L, "LOG_NOTICE", 2);
  set_number(L, "LOG_WARNING", 3);
  lua_pushstring(L, kRedisVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
  set_number(L, "REDIS_VERSION_NUM", kRedisVersionNum);
  lua_newtable(L);
  lua_pushcfunction(L, nonexistent_global);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  make_proxy(L, proxies, views, list, 0);
  lua_newtable(L);  // the library API's globals
  lua_insert(L, -2);
  lua_setfield(L, -2, "redis");
  lua_newtable(L);
  lua_pushcfunction(L, nonexistent_global);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  st.libapi_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  // The environment of every library and its functions: empty and read-only, reading through
  // to the library API while its code loads and to the full globals afterwards (Redis
  // switches the __index of its globals' metatable the same way).
  lua_newtable(L);
  lua_newtable(L);
  lua_pushvalue(L, globals_proxy);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, readonly_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushvalue(L, -1);
  st.fenv_meta_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);
  st.fenv_ref = luaL_ref(L, LUA_REGISTRYINDEX);

  // From now on every function compiled or created sees the proxy as its globals.
  lua_pushvalue(L, globals_proxy);
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_settop(L, 0);
  return 0;
}

void* lua_alloc(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* st = static_cast<ScriptingState*>(ud);
  if (new_size == 0) {
    std::free(ptr);
    st->lua_bytes -= old_size;
    return nullptr;
  }
  if (new_size > old_size && st->lua_bytes + (new_size - old_size) > kLuaMemoryMaxBytes)
    return nullptr;  // Lua raises "not enough memory"
  void* p = std::realloc(ptr, new_size);
  if (!p) return nullptr;
  st->lua_bytes = st->lua_bytes - old_size + new_size;
  return p;
}

int lua_panic(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "redlab: unprotected Lua error: %s\n", msg ? msg : "?");
  std::abort();
}

bool ScriptingState::open_lua() {
  if (lua) return true;
  lua_bytes = 0;
  lua = lua_newstate(lua_alloc, this);
  REDLAB_ASSERT(lua && "cannot create a Lua state");
  lua_atpanic(lua, lua_panic);
  InitArgs args{this};
  int rc = lua_cpcall(lua, init_sandbox, &args);
  REDLAB_ASSERT(rc == 0 && "the Lua sandbox builds in a fresh state");
  return true;
}

void ScriptingState::close_lua() {
  REDLAB_ASSERT(running == nullptr && "the Lua state is closed under a running script");
  if (!lua) return;
  lua_close(lua);
  lua = nullptr;
  globals_ref = errh_ref = proxies_ref = LUA_NOREF;
  fenv_ref = fenv_meta_ref = libapi_ref = LUA_NOREF;
  for (auto& [sha, script] : scripts) script.ref = LUA_NOREF;
  for (auto& [key, function] : functions) function.ref = LUA_NOREF;
  functions_compiled = functions.empty();
}

// ---------------------------------------------------------------------------------------
// Running a script
// ---------------------------------------------------------------------------------------

// Undoes writes that bypassed the proxies' __newindex (table.insert into a library table).
void undo_proxy_writes(lua_State* L, ScriptingState& st) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, st.proxies_ref);
  int list = lua_gettop(L);
  int n = static_cast<int>(lua_objlen(L, list));
  for (int i = 1; i <= n; i++) {
    lua_rawgeti(L, list, i);
    int proxy = lua_gettop(L);
    lua_pushnil(L);
    // Bounded by the keys written into the proxy during one script.
    while (lua_next(L, proxy)) {
      lua_pop(L, 1);
      lua_pushvalue(L, -1);
      lua_pushnil(L);
      lua_rawset(L, proxy);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void push_string_array(lua_State* L, const Argv& args, size_t from, size_t to) {
  lua_createtable(L, static_cast<int>(to - from), 0);
  for (size_t i = from; i < to; i++) {
    lua_pushlstring(L, args[i].data(), args[i].size());
    lua_rawseti(L, -2, static_cast<int>(i - from + 1));
  }
}

// The script call itself (luaCallFunction). Runs on the fiber under lua_cpcall.
int protected_run(lua_State* L) {
  auto* job = static_cast<ScriptJob*>(lua_touserdata(L, 1));
  ScriptingState& st = *job->state_;
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, st.globals_ref);
  if (job->function_call_) {
    // Redis runs functions in a Lua state of their own, where no KEYS or ARGV of an earlier
    // EVAL can be seen.
    lua_pushnil(L);
    lua_setfield(L, -2, "KEYS");
    lua_pushnil(L);
    lua_setfield(L, -2, "ARGV");
  } else {
    push_string_array(L, job->args_, 0, job->numkeys_);
    lua_setfield(L, -2, "KEYS");
    push_string_array(L, job->args_, job->numkeys_, job->args_.size());
    lua_setfield(L, -2, "ARGV");
  }
  lua_pop(L, 1);
  // [error handler, function]: after the call, [error handler, result] as in Redis, which
  // makes "reached lua stack limit" strike at the same depth.
  lua_rawgeti(L, LUA_REGISTRYINDEX, st.errh_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, job->func_ref_);
  int nargs = 0;
  if (job->function_call_) {
    // luaCallFunction without SCRIPT_EVAL_MODE: function(keys, args).
    push_string_array(L, job->args_, 0, job->numkeys_);
    push_string_array(L, job->args_, job->numkeys_, job->args_.size());
    nargs = 2;
  }
  lua_sethook(L, ScriptJob::count_hook, LUA_MASKCOUNT, kHookInstructions);
  int err = lua_pcall(L, nargs, 1, 1);
  lua_sethook(L, nullptr, 0, 0);
  Reply& out = job->result_;
  if (err == 0) {
    size_t budget = kReplyElementsMax;
    lua_to_reply(L, out, budget);
    if (budget == 0) {
      out = Reply::error("ERR redlab: the script's reply has more than " +
                         std::to_string(kReplyElementsMax) + " values");
    }
  } else if (!lua_istable(L, -1)) {
    // Errors the handler did not see: memory exhausted, or an error inside the handler.
    const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    out.kind = Reply::Kind::Error;
    out.str.assign("-ERR Error running script ");
    out.str.append(job->name_);
    out.str.append(", ");
    out.str.append(msg, strnlen(msg, 100));
    sanitize_error(out.str);
  } else {
    out.kind = Reply::Kind::Error;
    out.str.assign("-");
    lua_getfield(L, -1, "err");
    if (const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : nullptr) out.str.append(msg);
    lua_pop(L, 1);
    lua_getfield(L, -1, "source");
    lua_getfield(L, -2, "line");
    if (lua_isstring(L, -2) && lua_isstring(L, -1)) {
      out.str.append(" script: ");
      out.str.append(job->name_);
      out.str.append(", on ");
      out.str.append(lua_tostring(L, -2));
      out.str.append(":");
      out.str.append(lua_tostring(L, -1));
      out.str.append(".");
    }
    lua_pop(L, 2);
    sanitize_error(out.str);
  }
  lua_settop(L, 0);
  undo_proxy_writes(L, st);
  return 0;
}

void ScriptJob::run_on_fiber() {
  lua_State* L = state_->lua;
  state_->client.db = db_;
  if (lua_cpcall(L, protected_run, this) != 0) {
    // Memory exhausted while building KEYS/ARGV or the reply.
    const char* msg = lua_tostring(L, -1);
    result_ = Reply::error("ERR Error running script " + name_ + ", " +
                           (msg ? msg : "execution failure"));
    lua_settop(L, 0);
  }
}

// The fiber's loop: one script per turn. t_job is the job that switched in.
void ScriptJob::fiber_main() {
  t_job->state_->fiber.entered();
  // Bounded by the scripts the server runs; between them the fiber waits in yield().
  while (true) {
    ScriptJob* job = t_job;
    REDLAB_ASSERT(job && job->state_->running == job && "the fiber runs its server's job");
    job->run_on_fiber();
    job->finished_ = true;
    job->state_->fiber.yield();
  }
}

void ScriptJob::count_hook(lua_State* L, lua_Debug* ar) {
  ScriptJob* job = t_job;
  if (!job) return;
  if (ar->event == LUA_HOOKCOUNT) {
    job->used_ns_ += kHookCostNs;
    if (job->kill_ == Kill::None && job->used_ns_ > job->limit_ns_) job->kill_ = Kill::Limit;
    // The run's bound on Lua work (lua_budget.h): checked before yielding, so an endless
    // loop ends at the bound rather than at the end of the scenario's time.
    if (LuaInstructionBudget* budget = LuaInstructionBudget::current();
        budget && job->kill_ == Kill::None && budget->add(kHookInstructions, job->name_.c_str()))
      job->kill_ = Kill::Budget;
    // The server's turn: it answers other clients and resumes us later (or never, if the
    // server goes away).
    if (job->kill_ == Kill::None && job->used_ns_ >= job->slice_end_ns_) job->state_->fiber.yield();
  }
  if (job->kill_ != Kill::None) {
    // From now on at every line, so that a pcall cannot keep the script alive.
    lua_sethook(L, count_hook, LUA_MASKLINE, 0);
    push_error(L, job->kill_ == Kill::User ? "Script killed by user with SCRIPT KILL..."
                  : job->kill_ == Kill::Limit
                      ? "Script killed by redlab: it ran past the simulator's time limit "
                        "(Server::script_call_limit_us)"
                      : "Script killed by redlab: the run's scripts ran past its bound of Lua "
                        "instructions (--lua-instructions-max)");
    lua_error(L);
  }
}

// ---------------------------------------------------------------------------------------
// The script cache
// ---------------------------------------------------------------------------------------

// evalExtractShebangFlags: "#!lua [flags=a,b]" on the first line. Returns an error text.
std::optional<std::string> parse_shebang(std::string_view body, uint32_t& flags,
                                         size_t& code_offset) {
  flags = kCompatMode;
  code_offset = 0;
  if (body.substr(0, 2) != "#!") return std::nullopt;
  std::string_view c_body = body.substr(0, strnlen(body.data(), body.size()));
  size_t end = c_body.find('\n');
  if (end == std::string_view::npos) return "Invalid script shebang";
  code_offset = end;
  auto parts = split_args(body.substr(0, end));
  if (!parts || parts->empty()) return "Invalid engine in script shebang";
  if ((*parts)[0] != "#!lua") return "Unexpected engine in script shebang: " + (*parts)[0];
  flags &= ~kCompatMode;
  for (size_t j = 1; j < parts->size(); j++) {
    std::string_view part = (*parts)[j];
    if (part.substr(0, 6) != "flags=") return "Unknown lua shebang option: " + (*parts)[j];
    std::string_view list = part.substr(6);
    if (list.empty()) continue;
    // Bounded by the commas in one line.
    while (true) {
      size_t comma = list.find(',');
      std::string_view name = list.substr(0, comma);
      uint32_t bit = 0;
      for (const auto& [flag_name, flag_bit] : kScriptFlagNames)
        if (name == flag_name) bit = flag_bit;
      if (!bit) return "Unexpected flag in script shebang: " + std::string(name);
      flags |= bit;
      if (comma == std::string_view::npos) break;
      list = list.substr(comma + 1);
    }
  }
  return std::nullopt;
}

struct CompileArgs {
  const char* code;
  size_t size;
  int ref;
  std::string* error;
};

int protected_compile(lua_State* L) {
  auto* a = static_cast<CompileArgs*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  if (luaL_loadbuffer(L, a->code, a->size, "@user_script") != 0) {
    size_t n = 0;
    const char* msg = lua_tolstring(L, -1, &n);
    a->error->assign(msg ? msg : "", msg ? n : 0);
    lua_settop(L, 0);
    return 0;
  }
  a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

// Compiles a cached script into the current Lua state; false (with error set) if it does not
// compile.
bool compile(ScriptingState& st, CachedScript& script, std::string& error) {
  if (script.ref != LUA_NOREF) return true;
  st.open_lua();
  CompileArgs args{script.body.data() + script.code_offset, script.body.size() - script.code_offset,
                   LUA_NOREF, &error};
  if (lua_cpcall(st.lua, protected_compile, &args) != 0) {
    const char* msg = lua_tostring(st.lua, -1);
    error = msg ? msg : "not enough memory";
    lua_settop(st.lua, 0);
    return false;
  }
  if (args.ref == LUA_NOREF) return false;
  script.ref = args.ref;
  return true;
}

// luaCreateFunction: the cached script for body (compiled and added if new), or nullptr after
// replying the error.
CachedScript* create_or_reply(Ctx& c, ScriptingState& st, std::string_view body, const char* sha) {
  auto it = st.scripts.find(std::string_view(sha, 40));
  if (it != st.scripts.end()) {
    std::string error;
    if (compile(st, it->second, error)) return &it->second;
    c.reply_error("ERR Error compiling script (new function): " + error);
    return nullptr;
  }
  CachedScript script;
  if (auto error = parse_shebang(body, script.flags, script.code_offset)) {
    std::string msg = "-ERR " + *error;
    sanitize_error(msg);
    c.reply_error(msg);
    return nullptr;
  }
  script.body.assign(body);
  std::string error;
  if (!compile(st, script, error)) {
    std::string msg = "-ERR Error compiling script (new function): " + error;
    sanitize_error(msg);
    c.reply_error(msg);
    return nullptr;
  }
  return &st.scripts.emplace(std::string(sha, 40), std::move(script)).first->second;
}

// A 40-character sha in lower case (the cache is keyed that way), or false.
bool normalize_sha(std::string_view in, char out[41]) {
  if (in.size() != 40) return false;
  for (size_t i = 0; i < 40; i++) {
    char ch = in[i];
    out[i] = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + 32) : ch;
  }
  out[40] = '\0';
  return true;
}

// ---------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------

// evalGenericCommand for EVAL, EVALSHA, EVAL_RO and EVALSHA_RO.
// Runs c's EVAL or FCALL (name: the SHA-1 or the function's name, for errors): inside EXEC to
// its end at once, since the transaction's reply array waits for this one; else as the
// server's long-running job, which answers when it ends.
void run_script_job(Ctx& c, std::string_view name, int ref, size_t numkeys, bool read_only,
                    bool function_call) {
  TimeUs base_cost_us = c.server.service_time(c.cmd, c.argv);
  if (c.in_exec) {
    ScriptJob job(shared_state_of(c.server), c.server, c.client.id, c.client.db, name, ref, c.argv,
                  numkeys, read_only, false, base_cost_us, function_call);
    bool done = false;
    TimeUs t = c.now_us;
    for (int i = 0; i < kSyncResumesMax && !done; i++) t += job.resume(c.server, t, kNever, done);
    REDLAB_ASSERT(done && "a script inside EXEC runs to its end in one resume");
    return c.reply(job.take_result());
  }
  c.server.start_long_running(
      c.client.id,
      std::make_unique<ScriptJob>(shared_state_of(c.server), c.server, c.client.id, c.client.db,
                                  name, ref, c.argv, numkeys, read_only, true, base_cost_us,
                                  function_call),
      c.now_us);
}

void eval_generic(Ctx& c, bool by_sha, bool ro_command) {
  char sha[41];
  if (by_sha && !normalize_sha(c.arg(1), sha)) return c.reply_error(err::kNoScript);
  int64_t numkeys = 0;
  if (!c.int_arg(2, numkeys)) return;
  if (numkeys > static_cast<int64_t>(c.argc()) - 3)
    return c.reply_error("ERR Number of keys can't be greater than number of args");
  if (numkeys < 0) return c.reply_error("ERR Number of keys can't be negative");
  ScriptingState& st = state_of(c.server);
  if (st.running) return c.reply_error(c.server.busy_error());  // cannot happen: dispatch does
  CachedScript* script = nullptr;
  if (by_sha) {
    auto it = st.scripts.find(std::string_view(sha, 40));
    if (it == st.scripts.end()) return c.reply_error(err::kNoScript);
    std::string error;
    if (!compile(st, it->second, error)) {
      return c.reply_error("ERR Error compiling script (new function): " + error);
    }
    script = &it->second;
  } else {
    sha1_hex(sha, c.arg(1));
    script = create_or_reply(c, st, c.arg(1), sha);
    if (!script) return;
  }
  // scriptPrepareForRun
  if (!(script->flags & kCompatMode) && !(script->flags & kNoWrites) && ro_command)
    return c.reply_error("ERR Can not execute a script with write flag using *_ro command.");
  bool read_only = ro_command || (script->flags & kNoWrites);
  run_script_job(c, std::string_view(sha, 40), script->ref, static_cast<size_t>(numkeys), read_only,
                 false);
}

void eval_command(Ctx& c) {
  eval_generic(c, false, false);
}
void evalsha_command(Ctx& c) {
  eval_generic(c, true, false);
}
void eval_ro_command(Ctx& c) {
  eval_generic(c, false, true);
}
void evalsha_ro_command(Ctx& c) {
  eval_generic(c, true, true);
}

// scriptKill (script.c), for SCRIPT KILL (is_eval) and FUNCTION KILL: a script that has
// written cannot be stopped, and each command stops only its own kind of script.
void script_kill(Ctx& c, bool is_eval) {
  const LongRunning* job = c.server.long_running();
  if (!job) return c.reply_error("NOTBUSY No scripts in execution right now.");
  if (job->has_written())
    return c.reply_error(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. "
        "You can either wait the script termination or kill the server in a hard way using "
        "the SHUTDOWN NOSAVE command.");
  if (is_eval && job->is_function()) return c.reply_error(err::kBusyFunction);
  if (!is_eval && !job->is_function()) return c.reply_error(err::kBusy);
  bool killed = c.server.kill_long_running(c.client.id);
  REDLAB_ASSERT(killed && "a script that has not written can be killed");
  c.reply_ok();
}

void script_help(Ctx& c) {
  static const char* const kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help.",
  };
  std::vector<Reply> lines;
  for (const char* line : kLines) lines.push_back(Reply::status(line));
  c.reply(Reply::array(std::move(lines)));
}

void script_command(Ctx& c) {
  struct Subcommand {
    const char* name;
    int arity;
  };
  static constexpr Subcommand kSubcommands[] = {{"debug", 3}, {"exists", -3}, {"flush", -2},
                                                {"help", 2},  {"kill", 2},    {"load", 3}};
  const Subcommand* sub = nullptr;
  for (const Subcommand& s : kSubcommands)
    if (equals_nocase(c.arg(1), s.name)) sub = &s;
  if (!sub) return c.reply_unknown_subcommand();
  int argc = static_cast<int>(c.argc());
  if ((sub->arity > 0 && sub->arity != argc) || argc < -sub->arity)
    return c.reply_arity_error(std::string("script|") + sub->name);
  std::string_view name = sub->name;
  // Only SCRIPT KILL is allowed while a script is busy (the others lack allow-busy).
  if (c.server.long_running_active() && name != "kill") return c.reply_error(c.server.busy_error());
  ScriptingState& st = state_of(c.server);
  if (name == "help") return script_help(c);
  if (name == "kill") return script_kill(c, true);
  if (name == "load") {
    char sha[41];
    sha1_hex(sha, c.arg(2));
    if (!create_or_reply(c, st, c.arg(2), sha)) return;
    return c.reply_bulk(std::string_view(sha, 40));
  }
  if (name == "exists") {
    std::vector<Reply> found;
    for (size_t j = 2; j < c.argc(); j++) {
      char sha[41];
      bool known = normalize_sha(c.arg(j), sha) && st.scripts.count(std::string_view(sha, 40));
      found.push_back(Reply::integer_reply(known ? 1 : 0));
    }
    return c.reply(Reply::array(std::move(found)));
  }
  if (name == "flush") {
    if (argc == 3 && !equals_nocase(c.arg(2), "sync") && !equals_nocase(c.arg(2), "async"))
      return c.reply_error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    if (argc > 3) return c.reply_error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    // Redis recreates the whole Lua state; nothing else of it outlives a script here.
    if (st.lua) {
      for (auto& [sha, script] : st.scripts)
        if (script.ref != LUA_NOREF) luaL_unref(st.lua, LUA_REGISTRYINDEX, script.ref);
      lua_gc(st.lua, LUA_GCCOLLECT, 0);
    }
    st.scripts.clear();
    return c.reply_ok();
  }
  // debug: no debugger in the simulator.
  if (equals_nocase(c.arg(2), "no")) return c.reply_ok();
  if (equals_nocase(c.arg(2), "yes") || equals_nocase(c.arg(2), "sync"))
    return c.reply_error("ERR SCRIPT DEBUG is not supported by the redlab simulator");
  c.reply_error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
}

// ---------------------------------------------------------------------------------------
// Functions (Redis 7.0 functions.c, function_lua.c): FUNCTION LOAD|LIST|DELETE|FLUSH|KILL|
// STATS|HELP, FCALL, FCALL_RO
// ---------------------------------------------------------------------------------------

// A library's code may run this many Lua instructions while it loads: LOAD_TIMEOUT_MS (500 ms)
// at kHookCostNs per kHookInstructions.
constexpr int64_t kLoadInstructionsMax = 500LL * 1000 * 1000 / kHookCostNs * kHookInstructions;
constexpr int kLoadHookInstructions = 100000;  // luaEngineLoadHook's period

thread_local LoadingLibrary* t_loading = nullptr;

void load_hook(lua_State* L, lua_Debug*) {
  LoadingLibrary* loading = t_loading;
  if (!loading) return;
  loading->instructions += kLoadHookInstructions;
  if (loading->instructions <= kLoadInstructionsMax) return;
  lua_sethook(L, load_hook, LUA_MASKLINE, 0);
  push_error(L, "FUNCTION LOAD timeout");
  lua_error(L);
}

struct LoadArgs {
  ScriptingState* st;
  const char* code;  // after the shebang line (its '\n' is kept: line numbers count it)
  size_t size;
  std::string* error;
};

// luaEngineCreate: compiles the library's code and runs it with the library API as its
// globals, so that it registers its functions (into st->loading). Runs under lua_cpcall.
int protected_load(lua_State* L) {
  auto* a = static_cast<LoadArgs*>(lua_touserdata(L, 1));
  ScriptingState& st = *a->st;
  lua_settop(L, 0);
  if (luaL_loadbuffer(L, a->code, a->size, "@user_function") != 0) {
    a->error->assign("Error compiling function: ");
    if (const char* msg = lua_tostring(L, -1)) a->error->append(msg);
    lua_settop(L, 0);
    return 0;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, st.fenv_ref);
  lua_setfenv(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, st.fenv_meta_ref);  // 2
  lua_rawgeti(L, LUA_REGISTRYINDEX, st.libapi_ref);
  lua_setfield(L, 2, "__index");
  lua_pushvalue(L, 1);
  lua_sethook(L, load_hook, LUA_MASKCOUNT, kLoadHookInstructions);
  int rc = lua_pcall(L, 0, 0, 0);
  lua_sethook(L, nullptr, 0, 0);
  lua_pushvalue(L, LUA_GLOBALSINDEX);  // the globals' read-only proxy
  lua_setfield(L, 2, "__index");
  if (rc != 0) {
    // luaExtractErrorInformation: a string error becomes "ERR <it>", a table gives its err.
    a->error->assign("Error registering functions: ");
    if (lua_isstring(L, -1)) {
      a->error->append("ERR ");
      a->error->append(lua_tostring(L, -1));
    } else if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) a->error->append(lua_tostring(L, -1));
    }
  }
  lua_settop(L, 0);
  return 0;
}

// Unrefs the callbacks a library that failed to load had registered.
void drop_registered(ScriptingState& st, LoadingLibrary& loading) {
  for (FunctionDef& f : loading.registered) luaL_unref(st.lua, LUA_REGISTRYINDEX, f.ref);
  loading.registered.clear();
}

// Unlinks a library and its functions (libraryUnlink), unref'ing their callbacks.
void delete_library(ScriptingState& st, decltype(ScriptingState::libraries)::iterator lib) {
  for (const std::string& key : lib->second.functions) {
    auto f = st.functions.find(key);
    if (st.lua && f->second.ref != LUA_NOREF) luaL_unref(st.lua, LUA_REGISTRYINDEX, f->second.ref);
    st.functions.erase(f);
  }
  st.libraries.erase(lib);
}

// Runs a library's code; what it registered is in `loading` (nothing, on failure).
bool run_library_code(ScriptingState& st, std::string_view code, LoadingLibrary& loading,
                      std::string& error) {
  st.open_lua();
  LoadArgs args{&st, code.data(), code.size(), &error};
  st.loading = &loading;
  LoadingLibrary* saved = t_loading;
  t_loading = &loading;
  int rc = lua_cpcall(st.lua, protected_load, &args);
  t_loading = saved;
  st.loading = nullptr;
  if (rc != 0) {
    error = "Error registering functions: not enough memory";
    lua_settop(st.lua, 0);
  }
  if (!error.empty()) {
    drop_registered(st, loading);
    return false;
  }
  return true;
}

// The library's name and where its code starts (functionExtractLibMetaData), or the error.
std::optional<std::string> library_metadata(std::string_view payload, std::string& name,
                                            size_t& code_offset) {
  if (payload.substr(0, 2) != "#!") return "Missing library metadata";
  std::string_view c_payload = payload.substr(0, strnlen(payload.data(), payload.size()));
  size_t end = c_payload.find('\n');
  if (end == std::string_view::npos) return "Invalid library metadata";
  auto parts = split_args(payload.substr(0, end));
  if (!parts || parts->empty()) return "Invalid library metadata";
  std::string engine = (*parts)[0].substr(2);
  bool have_name = false;
  for (size_t i = 1; i < parts->size(); i++) {
    const std::string& part = (*parts)[i];
    if (part.size() >= 5 && equals_nocase(std::string_view(part).substr(0, 5), "name=")) {
      if (have_name) return "Invalid metadata value, name argument was given multiple times";
      name = part.substr(5);
      have_name = true;
      continue;
    }
    return "Invalid metadata value given: " + part;
  }
  if (!have_name) return "Library name was not given";
  if (!valid_function_name(name)) return std::string(kBadNameError);
  if (!equals_nocase(engine, "lua")) return "Engine '" + engine + "' not found";
  code_offset = end;
  return std::nullopt;
}

// functionsCreateWithLibraryCtx: loads (or with replace, replaces) a library. Returns its name,
// or the error text.
bool create_library(ScriptingState& st, std::string_view code, bool replace, std::string& name,
                    std::string& error) {
  size_t code_offset = 0;
  if (auto e = library_metadata(code, name, code_offset)) {
    error = *e;
    return false;
  }
  auto old = st.libraries.find(name);
  if (old != st.libraries.end() && !replace) {
    error = "Library '" + name + "' already exists";
    return false;
  }
  LoadingLibrary loading;
  if (!run_library_code(st, code.substr(code_offset), loading, error)) return false;
  if (loading.registered.empty()) {
    error = "No functions registered";
    return false;
  }
  // Function names are unique across libraries, case-blind; the library it replaces is
  // unlinked first, so its own functions do not count.
  for (const FunctionDef& f : loading.registered) {
    auto it = st.functions.find(to_lower(f.name));
    if (it != st.functions.end() && it->second.library != name) {
      error = "Function " + f.name + " already exists";
      drop_registered(st, loading);
      return false;
    }
  }
  if (old != st.libraries.end()) delete_library(st, old);
  Library lib{name, std::string(code), {}};
  for (FunctionDef& f : loading.registered) {
    f.library = name;
    std::string key = to_lower(f.name);
    lib.functions.push_back(key);
    st.functions.emplace(key, std::move(f));
  }
  std::sort(lib.functions.begin(), lib.functions.end());
  st.libraries.emplace(name, std::move(lib));
  return true;
}

// After the Lua state was closed and opened again: the functions' callbacks are compiled again
// from their libraries' code.
void ensure_functions(ScriptingState& st) {
  if (st.functions_compiled && st.lua) return;
  st.open_lua();
  for (auto& [name, lib] : st.libraries) {
    std::string ignored, error;
    size_t code_offset = 0;
    library_metadata(lib.code, ignored, code_offset);
    LoadingLibrary loading;
    bool ok = run_library_code(st, std::string_view(lib.code).substr(code_offset), loading, error);
    REDLAB_ASSERT(ok && "a library that loaded once loads again");
    for (FunctionDef& f : loading.registered) st.functions.at(to_lower(f.name)).ref = f.ref;
  }
  st.functions_compiled = true;
}

void fcall_generic(Ctx& c, bool ro_command) {
  ScriptingState& st = state_of(c.server);
  auto it = st.functions.find(to_lower(c.arg(1)));
  if (it == st.functions.end()) return c.reply_error("ERR Function not found");
  auto numkeys = parse_int64(c.arg(2));
  if (!numkeys) return c.reply_error("ERR Bad number of keys provided");
  if (*numkeys > static_cast<int64_t>(c.argc()) - 3)
    return c.reply_error("ERR Number of keys can't be greater than number of args");
  if (*numkeys < 0) return c.reply_error("ERR Number of keys can't be negative");
  if (st.running) return c.reply_error(c.server.busy_error());  // cannot happen: dispatch does
  FunctionDef& f = it->second;
  // scriptPrepareForRun: a function is never in compatibility mode.
  if (!(f.flags & kNoWrites) && ro_command)
    return c.reply_error("ERR Can not execute a script with write flag using *_ro command.");
  ensure_functions(st);
  bool read_only = ro_command || (f.flags & kNoWrites);
  run_script_job(c, f.name, f.ref, static_cast<size_t>(*numkeys), read_only, true);
}

void fcall_command(Ctx& c) {
  fcall_generic(c, false);
}
void fcall_ro_command(Ctx& c) {
  fcall_generic(c, true);
}

void function_help(Ctx& c) {
  static const char* const kLines[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Prints this help.",
  };
  std::vector<Reply> lines;
  for (const char* line : kLines) lines.push_back(Reply::status(line));
  c.reply(Reply::array(std::move(lines)));
}

// A function's flags as FUNCTION LIST shows them (functionListReplyFlags), in Redis' order.
Reply function_flags_reply(uint32_t flags) {
  std::vector<Reply> out;
  for (const auto& [name, bit] : kScriptFlagNames)
    if (flags & bit) out.push_back(Reply::status(name));
  return Reply::array(std::move(out));
}

void function_list(Ctx& c, ScriptingState& st) {
  bool with_code = false;
  const std::string* pattern = nullptr;
  for (size_t i = 2; i < c.argc(); i++) {
    if (!with_code && equals_nocase(c.arg(i), "withcode")) {
      with_code = true;
      continue;
    }
    if (!pattern && equals_nocase(c.arg(i), "libraryname")) {
      if (i >= c.argc() - 1) return c.reply_error("ERR library name argument was not given");
      pattern = &c.arg(++i);
      continue;
    }
    return c.reply_error("ERR Unknown argument " + c.arg(i));
  }
  std::vector<Reply> libs;
  for (const auto& [name, lib] : st.libraries) {
    if (pattern && !glob_match(*pattern, name, true)) continue;
    std::vector<Reply> functions;
    for (const std::string& key : lib.functions) {
      const FunctionDef& f = st.functions.at(key);
      functions.push_back(
          Reply::array({Reply::bulk("name"), Reply::bulk(f.name), Reply::bulk("description"),
                        f.has_description ? Reply::bulk(f.description) : Reply::nil(),
                        Reply::bulk("flags"), function_flags_reply(f.flags)}));
    }
    std::vector<Reply> entry = {Reply::bulk("library_name"), Reply::bulk(name),
                                Reply::bulk("engine"),       Reply::bulk("LUA"),
                                Reply::bulk("functions"),    Reply::array(std::move(functions))};
    if (with_code) {
      entry.push_back(Reply::bulk("library_code"));
      entry.push_back(Reply::bulk(lib.code));
    }
    libs.push_back(Reply::array(std::move(entry)));
  }
  c.reply(Reply::array(std::move(libs)));
}

// FUNCTION FLUSH and the restart of a server without persistence: every library goes.
void flush_functions(ScriptingState& st) {
  if (st.lua)
    for (auto& [key, f] : st.functions)
      if (f.ref != LUA_NOREF) luaL_unref(st.lua, LUA_REGISTRYINDEX, f.ref);
  st.functions.clear();
  st.libraries.clear();
  st.functions_compiled = true;
}

void function_command(Ctx& c) {
  struct Subcommand {
    const char* name;
    int arity;
  };
  static constexpr Subcommand kSubcommands[] = {{"delete", 3}, {"dump", 2},     {"flush", -2},
                                                {"help", 2},   {"kill", 2},     {"list", -2},
                                                {"load", -3},  {"restore", -3}, {"stats", 2}};
  const Subcommand* sub = nullptr;
  for (const Subcommand& s : kSubcommands)
    if (equals_nocase(c.arg(1), s.name)) sub = &s;
  if (!sub) return c.reply_unknown_subcommand();
  int argc = static_cast<int>(c.argc());
  if ((sub->arity > 0 && sub->arity != argc) || argc < -sub->arity)
    return c.reply_arity_error(std::string("function|") + sub->name);
  std::string_view name = sub->name;
  // FUNCTION KILL and STATS are allowed while a script is busy (allow-busy); the others not.
  if (c.server.long_running_active() && name != "kill" && name != "stats")
    return c.reply_error(c.server.busy_error());
  ScriptingState& st = state_of(c.server);
  if (name == "help") return function_help(c);
  if (name == "load") {
    bool replace = false;
    size_t pos = 2;
    for (; pos + 1 < c.argc(); pos++) {
      if (!equals_nocase(c.arg(pos), "replace"))
        return c.reply_error("ERR Unknown option given: " + c.arg(pos));
      replace = true;
    }
    std::string lib_name, error;
    if (!create_library(st, c.arg(pos), replace, lib_name, error)) {
      std::string msg = "-ERR " + error;
      sanitize_error(msg);
      return c.reply_error(msg);
    }
    c.server.note_functions_changed();
    return c.reply_bulk(lib_name);
  }
  if (name == "list") return function_list(c, st);
  if (name == "delete") {
    auto it = st.libraries.find(c.arg(2));
    if (it == st.libraries.end()) return c.reply_error("ERR Library not found");
    delete_library(st, it);
    c.server.note_functions_changed();
    return c.reply_ok();
  }
  if (name == "flush") {
    if (argc > 3)
      return c.reply_error("ERR unknown subcommand or wrong number of arguments for '" +
                           c.arg(1).substr(0, 128) + "'. Try FUNCTION HELP.");
    if (argc == 3 && !equals_nocase(c.arg(2), "sync") && !equals_nocase(c.arg(2), "async"))
      return c.reply_error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    flush_functions(st);
    c.server.note_functions_changed();
    return c.reply_ok();
  }
  if (name == "kill") return script_kill(c, false);
  if (name == "stats") {
    if (st.running && !st.running->function_call_)
      return c.reply_error(err::kBusy);  // shared.slowevalerr
    Reply running = Reply::nil_array();
    if (st.running) {
      std::vector<Reply> command;
      for (const std::string& a : st.running->command_) command.push_back(Reply::bulk(a));
      running =
          Reply::array({Reply::bulk("name"), Reply::bulk(st.running->name_), Reply::bulk("command"),
                        Reply::array(std::move(command)), Reply::bulk("duration_ms"),
                        Reply::integer_reply((c.now_us - st.running->start_us_) / 1000)});
    }
    int64_t functions = static_cast<int64_t>(st.functions.size());
    int64_t libraries = static_cast<int64_t>(st.libraries.size());
    return c.reply(Reply::array(
        {Reply::bulk("running_script"), std::move(running), Reply::bulk("engines"),
         Reply::array(
             {Reply::bulk("LUA"),
              Reply::array({Reply::bulk("libraries_count"), Reply::integer_reply(libraries),
                            Reply::bulk("functions_count"), Reply::integer_reply(functions)})})}));
  }
  // dump, restore: the RDB payload format is not modelled.
  std::string upper(name);
  for (char& ch : upper) ch = static_cast<char>(ch - 'a' + 'A');
  c.reply_error("ERR FUNCTION " + upper + " is not supported by the redlab simulator");
}

}  // namespace

std::vector<std::string> function_library_codes(Server& server) {
  std::vector<std::string> out;
  if (!server.scripting_state) return out;
  for (const auto& [name, lib] : state_of(server).libraries) out.push_back(lib.code);
  return out;
}

void register_scripting_commands(CommandTable& table) {
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h) {
    table[name] = CommandSpec{name, arity, flags, h, 0, 0, 0};
  };
  add("eval", -3, kNoScript, eval_command);
  add("evalsha", -3, kNoScript, evalsha_command);
  add("eval_ro", -3, kNoScript | kReadOnly, eval_ro_command);
  add("evalsha_ro", -3, kNoScript | kReadOnly, evalsha_ro_command);
  // allow-busy for SCRIPT KILL; the other subcommands answer BUSY themselves.
  add("script", -2, kNoScript | kAllowBusy, script_command);
  add("fcall", -3, kNoScript, fcall_command);
  add("fcall_ro", -3, kNoScript | kReadOnly, fcall_ro_command);
  // allow-busy for FUNCTION KILL and STATS; the other subcommands answer BUSY themselves.
  add("function", -2, kNoScript | kAllowBusy, function_command);
}

// ---------------------------------------------------------------------------------------
// The run's bound on Lua instructions
// ---------------------------------------------------------------------------------------

namespace {
thread_local LuaInstructionBudget* t_budget = nullptr;  // see lua_budget.h
}  // namespace

LuaInstructionBudget::LuaInstructionBudget(uint64_t max,
                                           std::function<void(const char* sha)> on_exceeded)
    : max_(max), on_exceeded_(std::move(on_exceeded)), previous_(t_budget) {
  t_budget = this;
}

LuaInstructionBudget::~LuaInstructionBudget() {
  t_budget = previous_;
}

LuaInstructionBudget* LuaInstructionBudget::current() {
  return t_budget;
}

bool LuaInstructionBudget::add(uint64_t n, const char* sha) {
  used_ = n > UINT64_MAX - used_ ? UINT64_MAX : used_ + n;
  if (used_ <= max_) return exceeded_;
  if (!exceeded_) {
    exceeded_ = true;
    if (on_exceeded_) on_exceeded_(sha);
  }
  return true;
}

}  // namespace redlab::fake
