// Fuzz target: the fake server's command dispatcher.
//
// The input is a small script, one command per line in redis-cli quoting (split_args), so
// that the seed corpus is readable and a crash reproducer can be pasted into `redlab repl`.
// A line may start with @N to send it from client N (of kClients), or be a meta line:
//   :sleep MS   advance virtual time (bounded), letting blocked clients time out and keys
//               expire
//   :close      drop the current client and connect a new one in its place
// Between commands virtual time advances by 1 ms, through Server::advance, as in a run.
//
// Two modes, as the server has two entry points. By default each command goes through
// Server::call_all (immediate use: tests, benchmarks). An input whose first line is #async
// submits each command with Server::submit instead, so that commands queue, wait behind a
// DEBUG SLEEP, get BUSY while a script runs and are answered later through take_outputs
// (event-driven use: scenarios, the repl). The modes are not mixed in one input: no host
// does that.
//
// To see what an input does (a finding, a corpus file), replay it with REDLAB_FUZZ_TRACE=1:
//   REDLAB_FUZZ_TRACE=1 build/tests/fuzz_replay_fake_dispatch crash-file
// prints each command and every reply and push, as redlab repl would.
//
// What counts as a bug: a crash, a sanitizer report, a hang (libFuzzer -timeout), and a
// reply that could not be put on the wire: an error or status line holding \r or \n (Redis
// sanitizes those, see addReplyErrorLength), an empty error; and an output stamped earlier
// than a time the host had already advanced to. These are checked with
// __builtin_trap() so that they fire in every build type.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/cmdline.h"
#include "sim/core/reply.h"
#include "sim/fake/server.h"
#include "sim/fake/util.h"

namespace {

using redlab::Reply;
namespace fake = redlab::fake;

constexpr size_t kInputBytesMax = 16 * 1024;
constexpr size_t kCommandsMax = 256;
constexpr size_t kClients = 4;
constexpr fake::TimeUs kStepUs = 1000;                 // between two commands
constexpr fake::TimeUs kSleepMaxUs = 120LL * 1000000;  // one :sleep at most
constexpr fake::TimeUs kDrainUs = 30LL * 1000000;      // after the last command
constexpr fake::TimeUs kScriptLimitUs = 2LL * 1000;    // ~400k Lua instructions, then killed
// #async: a script may run past busy-reply-threshold (lowered to this) before it is killed,
// so that other clients get BUSY and SCRIPT KILL has something to kill.
constexpr fake::TimeUs kAsyncScriptLimitUs = 8LL * 1000;
constexpr const char* kAsyncBusyThresholdMs = "2";
constexpr int kReplyDepthMax = 64;

void check_reply(const Reply& r, int depth) {
  if (depth > kReplyDepthMax) __builtin_trap();  // replies are never this deeply nested
  switch (r.kind) {
    case Reply::Kind::Error:
      if (r.str.empty()) __builtin_trap();
      [[fallthrough]];
    case Reply::Kind::Status:
      if (r.str.find_first_of("\r\n") != std::string::npos) __builtin_trap();
      break;
    case Reply::Kind::Array:
      for (const Reply& e : r.elements) check_reply(e, depth + 1);
      break;
    default:
      break;
  }
}

// Commands that allocate in proportion to a number in their arguments (SETRANGE at offset
// 500 MB, SRANDMEMBER with count -10^9) are legitimate Redis requests but would only find
// the fuzzer's memory limit; keep their numbers small.
bool too_costly(const fake::Argv& argv) {
  static constexpr std::string_view kSizedByArgument[] = {
      "setrange", "setbit", "bitfield", "srandmember", "zrandmember", "hrandfield",
      "debug",    "lpos",   "getrange", "substr",      "bitcount",    "bitpos"};
  bool sized = false;
  for (std::string_view name : kSizedByArgument) sized |= fake::equals_nocase(argv[0], name);
  if (!sized) return false;
  constexpr int64_t kNumberMax = 1 << 20;
  for (size_t i = 1; i < argv.size(); i++) {
    auto v = fake::parse_int64(argv[i]);
    if (v && (*v > kNumberMax || *v < -kNumberMax)) return true;
    // DEBUG SLEEP and friends take floats; a huge one only stalls virtual time, but keep
    // DEBUG's other numbers small too.
    if (fake::equals_nocase(argv[0], "debug") && argv[i].size() > 8) return true;
  }
  return false;
}

void trace_line(const char* prefix, const std::string& text) {
  std::fprintf(stderr, "%s%s\n", prefix, text.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kInputBytesMax) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  static const bool trace = std::getenv("REDLAB_FUZZ_TRACE") != nullptr;
  const bool async = input.substr(0, 6) == "#async";

  fake::Server server;
  server.script_call_limit_us = async ? kAsyncScriptLimitUs : kScriptLimitUs;
  if (async) server.config()["busy-reply-threshold"] = kAsyncBusyThresholdMs;
  uint64_t observed = 0;
  server.observer = [&observed](const fake::ServerEvent& e) { observed += e.detail.size(); };
  fake::ClientId clients[kClients];
  for (auto& id : clients) id = server.connect(server.clock_us());

  size_t commands = 0;
  // Time the host has taken the outputs up to: nothing may leave the server before it.
  fake::TimeUs consumed_us = 0;
  size_t pos = 0;
  while (pos < input.size() && commands < kCommandsMax) {
    size_t end = input.find('\n', pos);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(pos, end - pos);
    pos = end + 1;
    auto args = redlab::split_args(line);
    if (!args || args->empty() || (*args)[0][0] == '#') continue;  // # comment (and #async)
    commands++;

    size_t who = 0;
    if ((*args)[0].size() == 2 && (*args)[0][0] == '@') {
      who = static_cast<unsigned char>((*args)[0][1]) % kClients;
      args->erase(args->begin());
      if (args->empty()) continue;
    }
    fake::ClientId id = clients[who];
    const std::string& name = (*args)[0];
    if (trace) {
      std::string line =
          "@" + std::to_string(who) + " t=" + std::to_string(server.clock_us()) + "us";
      for (const std::string& a : *args) line += " " + redlab::quote_repr(a);
      trace_line("> ", line);
    }

    if (name == ":sleep") {
      fake::TimeUs sleep_us = 0;
      if (args->size() > 1) {
        auto ms = fake::parse_int64((*args)[1]);
        if (ms && *ms > 0) sleep_us = std::min<int64_t>(*ms, kSleepMaxUs / 1000) * 1000;
      }
      server.advance(server.clock_us() + sleep_us);
    } else if (name == ":close") {
      server.disconnect(id, server.clock_us());
      clients[who] = server.connect(server.clock_us());
    } else if (!too_costly(*args)) {
      // A client the server closed (QUIT, CLIENT KILL) is replaced, as a pool would.
      if (!server.connected(id)) clients[who] = id = server.connect(server.clock_us());
      if (async) {
        server.submit(id, std::move(*args), server.clock_us());
      } else {
        for (const Reply& r : server.call_all(id, *args)) {
          if (trace) trace_line("  ", redlab::format_short(r, 400));
          check_reply(r, 0);
        }
      }
    }
    server.advance(server.clock_us() + kStepUs);
    for (const fake::Output& out : server.take_outputs()) {
      if (out.at_us < consumed_us) __builtin_trap();
      if (trace) {
        trace_line("  later to client ", std::to_string(out.client) + " at " +
                                             std::to_string(out.at_us) +
                                             "us: " + redlab::format_short(out.reply, 400));
      }
      check_reply(out.reply, 0);
    }
    consumed_us = server.clock_us();
    for (const auto& [closed, at_us] : server.take_closed()) {
      if (trace) trace_line("  closed client ", std::to_string(closed));
    }
  }
  // Let what is still queued or blocked run out (bounded: blocked clients may wait forever).
  server.advance(server.clock_us() + kDrainUs);
  for (const fake::Output& out : server.take_outputs()) {
    if (out.at_us < consumed_us) __builtin_trap();
    check_reply(out.reply, 0);
  }
  return 0;
}
