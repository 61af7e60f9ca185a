// The timeout checks: counted client events, a violation per actor.
#include <map>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

CheckResult count_events(const TraceIndex& ix, const std::string& kind, const std::string& what,
                         const std::string& ok_text) {
  CheckResult r;
  // One violation per actor, spanning its first to its last such event: its text counts them
  // all, so it is over (and may be told whole) only at the last.
  struct Seen {
    size_t n = 0;
    TimeUs first = 0, last = 0;
  };
  std::map<std::string, Seen> by_actor;
  std::vector<std::string> order;
  for (size_t i : ix.of_kind(kind)) {
    const TraceEvent& e = ix.event(i);
    auto [it, fresh] = by_actor.try_emplace(e.actor, Seen{0, e.time_us, e.time_us});
    if (fresh) order.push_back(e.actor);
    it->second.n++;
    it->second.last = e.time_us;
  }
  for (const auto& actor : order) {
    auto [n, first, last] = by_actor[actor];
    r.violations.push_back(Violation{first,
                                     last,
                                     {actor},
                                     actor + " hit " + std::to_string(n) + " " + what +
                                         (n > 1 ? "s" : "") + " (the first at " +
                                         format_time(first) + ")"});
  }
  finish(r, ok_text);
  return r;
}

// Pool timeouts, and waits for a connection still going at the end of the run (a
// PoolTimeout longer than the run would otherwise hide that the call never got one).
CheckResult no_pool_timeouts(const CheckArgs&, const TraceIndex& ix) {
  CheckResult r = count_events(ix, "pool_timeout", "pool timeout",
                               "no call waited in vain for a pooled connection");
  std::map<std::string, std::pair<size_t, TimeUs>> waiting;  // actor -> (count, longest from)
  for (size_t i : ix.of_kind("pool_wait")) {
    if (ix.end_of(i) != kNoEvent) continue;
    const TraceEvent& e = ix.event(i);
    auto [it, fresh] = waiting.try_emplace(e.actor, 0, e.time_us);
    it->second.first++;
    (void)fresh;
  }
  for (const auto& [actor, w] : waiting)
    r.violations.push_back(Violation{w.second,
                                     ix.end_us(),
                                     {actor},
                                     actor +
                                         " was still waiting for a pooled connection at the "
                                         "end of the run (since " +
                                         format_time(w.second) + ")"});
  finish(r, "no call waited in vain for a pooled connection");
  return r;
}

CheckResult no_read_timeouts(const CheckArgs&, const TraceIndex& ix) {
  return count_events(ix, "read_timeout", "read timeout",
                      "every reply came within its read timeout");
}

}  // namespace

extern const CheckKind no_pool_timeouts_check, no_read_timeouts_check;
const CheckKind no_pool_timeouts_check{
    "no_pool_timeouts",
    {},
    "the clients' pool_timeout events (a violation per actor, from its first to its last), and "
    "pool waits still going at the end of the run",
    no_pool_timeouts};
const CheckKind no_read_timeouts_check{
    "no_read_timeouts",
    {},
    "the clients' read_timeout events (a violation per actor, from its first to its last)",
    no_read_timeouts};

}  // namespace redlab::scenario::checks
