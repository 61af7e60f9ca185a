// rate_within_limit: how many requests a rate limiter let through in any window of its length.
//
// A request let through does its work on the server: it writes `key` (INCR api:served:42). So
// the requests let through are the server's record of that key, not the limiter script's
// reply: a script that says "allowed" and lets nothing through, or says "denied" and lets the
// request through anyway, is judged by what reached the key. The windows slide: every window
// of window_ms that starts at a request let through is counted, so a burst at the end of one
// fixed window and another at the start of the next are one window to this check, as they are
// to the service behind the limiter.
//
// On a real server the trace has no key events: the requests let through are then the commands
// that named the key and were answered without an error, at the time the answer came back (as
// seen by clients). Times on a real server run at the run's --time-scale; the window is scaled
// with them.
#include <algorithm>
#include <cstdlib>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

struct Through {
  TimeUs at_us = 0;
  std::string actor;
};

CheckResult rate_within_limit(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string key = arg(args, "key");
  int64_t limit = args.number.at("limit");
  int64_t window_ms = args.number.at("window_ms");
  auto least = args.number.find("at_least");
  int64_t at_least = least == args.number.end() ? 0 : least->second;
  double scale = 1.0;
  if (ix.trace()) {
    std::string s = ix.trace()->meta_or("time_scale");
    if (!s.empty()) scale = std::strtod(s.c_str(), nullptr);
    if (!(scale > 0)) scale = 1.0;
  }
  TimeUs window_us = static_cast<TimeUs>(static_cast<double>(window_ms) * 1000.0 * scale);
  std::vector<Through> through;
  bool server_record = !ix.servers().empty();
  for (const std::string& server : ix.servers())
    if (!ix.has_server_events(server)) server_record = false;
  if (server_record) {
    for (const std::string& server : ix.servers())
      for (const KeyChange& c : ix.key_changes(server)) {
        if (!c.present || c.cause == 0 || c.state.key != key) continue;
        through.push_back(Through{c.time_us, actor_of_cause(ix, c.cause)});
      }
  } else {
    for (size_t i : ix.of_kind("command")) {
      const TraceEvent& e = ix.event(i);
      const auto* argv = e.list(F::argv);
      if (!argv || argv->size() < 2 || (*argv)[1] != key) continue;
      size_t end = ix.end_of(i);
      if (end == kNoEvent) continue;
      const TraceEvent& reply = ix.event(end);
      if (reply.kind != "reply" || reply.has(F::error)) continue;
      through.push_back(Through{reply.time_us, e.actor});
    }
  }
  std::stable_sort(through.begin(), through.end(),
                   [](const Through& x, const Through& y) { return x.at_us < y.at_us; });
  std::string seen = server_record ? "" : " (as seen by clients)";
  if (through.empty() && at_least == 0)
    return not_judged("no request was let through: nothing wrote " + key);
  int64_t most = 0;
  for (size_t i = 0, j = 0; i < through.size(); i++) {
    j = std::max(j, i);
    while (j < through.size() && through[j].at_us < through[i].at_us + window_us) j++;
    int64_t n = static_cast<int64_t>(j - i);
    most = std::max(most, n);
    if (n <= limit) continue;
    std::vector<std::string> who;
    for (size_t k = i; k < j; k++)
      if (!through[k].actor.empty() &&
          std::find(who.begin(), who.end(), through[k].actor) == who.end())
        who.push_back(through[k].actor);
    r.violations.push_back(Violation{
        through[i].at_us, through[j - 1].at_us, who,
        std::to_string(n) + " requests let through from " + format_time(through[i].at_us) + " to " +
            format_time(through[j - 1].at_us) + ", within one window of " + format_time(window_us) +
            ": the limit is " + std::to_string(limit) + seen});
    // The next violation starts after this window's requests: one per burst, not one per
    // request in it.
    i = j - 1;
  }
  int64_t total = static_cast<int64_t>(through.size());
  if (total < at_least)
    r.violations.push_back(
        Violation{ix.end_us(),
                  ix.end_us(),
                  {},
                  "only " + std::to_string(total) + " requests let through in all" + seen +
                      ": a limit of " + std::to_string(limit) + " per " + format_time(window_us) +
                      " should have let through at least " + std::to_string(at_least)});
  finish(r,
         "at most " + std::to_string(most) + " requests let through in any " +
             format_time(window_us) + " (limit " + std::to_string(limit) + "), " +
             std::to_string(total) + " in all" + seen,
         "at most " + std::to_string(most) + " in any " + format_time(window_us) + ", " +
             std::to_string(total) + " in all");
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "key", .type = FieldType::Text, .required = true},
    {.key = "limit", .type = FieldType::Count, .required = true, .unit = "requests"},
    {.key = "window_ms", .type = FieldType::Count, .required = true, .unit = "ms"},
    {.key = "at_least", .type = FieldType::Count, .unit = "requests", .absent = "0"}};

}  // namespace

extern const CheckKind rate_within_limit_check;
const CheckKind rate_within_limit_check{
    "rate_within_limit", kFields,
    "the server's record of `key`, which every request let through writes: no window of "
    "window_ms held more than `limit` of them, and at least at_least in all (on a real server: "
    "the commands that wrote it and were answered without an error)",
    rate_within_limit};

}  // namespace redlab::scenario::checks
