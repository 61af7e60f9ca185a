// The error-reply check: calls whose application got back a given class of server error.
//
// A server error reply starts with its code, one upper-case word (RESP: "the first word after
// the -, up to the first space or newline, represents the kind of error returned"; Redis 7.0
// counts them by it in INFO errorstats): NOSCRIPT, BUSY, UNKILLABLE, WRONGTYPE. The check reads
// the `result` event that ends every client call, which is what the program got back after
// go-redis' retries, and its typed `error` / `error_class` fields: the server's own reply, on
// the fake and on a real server alike. One exception is not what the program saw: Script.Run
// answers a NOSCRIPT from its EVALSHA with EVAL at once (the client's `script_fallback` event,
// same actor, step and time), so that NOSCRIPT never reaches the caller and is not counted.
#include <map>
#include <tuple>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

// The code of a server error: its first word ("NOSCRIPT No matching script." -> NOSCRIPT).
std::string_view error_code(std::string_view error) {
  return error.substr(0, error.find(' '));
}

CheckResult no_error_replies(const CheckArgs& args, const TraceIndex& ix) {
  const std::string code = arg(args, "error");
  CheckResult r;
  // Script.Run's fallbacks, by (actor, step, time): each one hides one NOSCRIPT result.
  std::map<std::tuple<std::string, int64_t, TimeUs>, int> fallbacks;
  for (size_t i : ix.of_kind("script_fallback")) {
    const TraceEvent& e = ix.event(i);
    fallbacks[{e.actor, e.step, e.time_us}]++;
  }
  struct Seen {
    size_t n = 0;
    TimeUs first = 0, last = 0;
    std::string error;
  };
  std::map<std::string, Seen> by_actor;
  std::vector<std::string> order;
  size_t calls = 0;
  for (size_t i : ix.of_kind("result")) {
    const TraceEvent& e = ix.event(i);
    if (e.actor.empty()) continue;  // not an actor's call
    calls++;
    if (e.str_or(F::error_class) != "server") continue;
    std::string_view error = e.str_or(F::error);
    if (error_code(error) != code) continue;
    if (code == "NOSCRIPT") {
      auto it = fallbacks.find({e.actor, e.step, e.time_us});
      if (it != fallbacks.end() && it->second > 0) {
        it->second--;  // Script.Run sent EVAL: the caller never saw this one
        continue;
      }
    }
    auto [it, fresh] = by_actor.try_emplace(e.actor, Seen{0, e.time_us, e.time_us, ""});
    if (fresh) {
      order.push_back(e.actor);
      it->second.error = std::string(error);
    }
    it->second.n++;
    it->second.last = e.time_us;
  }
  if (calls == 0) return not_judged("no actor made a call");
  // One violation per actor, from its first such call to its last: its text counts them all.
  for (const std::string& actor : order) {
    const Seen& s = by_actor[actor];
    r.violations.push_back(Violation{s.first,
                                     s.last,
                                     {actor},
                                     actor + ": " + plural(s.n, "call", "calls") + " failed with " +
                                         code + " (the first at " + format_time(s.first) + ": " +
                                         s.error + ")"});
  }
  finish(r, "no call failed with " + code + " (" + plural(calls, "call", "calls") + ")");
  return r;
}

constexpr FieldSpec kFields[] = {{.key = "error", .type = FieldType::Text, .required = true}};

}  // namespace

extern const CheckKind no_error_replies_check;
const CheckKind no_error_replies_check{
    "no_error_replies", kFields,
    "the result of every call as the program got it back, after go-redis' retries: none failed "
    "with a server error whose code (its first word) is `error` (a NOSCRIPT that Script.Run "
    "answered with EVAL, its script_fallback, never reached the program and is not counted)",
    no_error_replies};

}  // namespace redlab::scenario::checks
