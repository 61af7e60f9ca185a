// dials_within: how many connections the clients dialled (or closed) in a window of the run.
//
// A healthy go-redis pool dials its connections once and reuses them: after the warm-up a new
// dial means an old connection was thrown away. go-redis throws one away after any error but
// a server reply (error.go isBadConn; redis.go releaseConn), so a read that hits its deadline
// costs a close and, for the next call, a dial and its HELLO: a deadline below the server's
// p99 turns every slow moment into a reconnect storm. The check counts the clients' own
// `dial` (or `conn_close`) events from `after_ms` to `until_ms`, and a violation says what
// closed the connections meanwhile (each conn_close's typed `reason`: "i/o timeout", "EOF"),
// which is the precise reason the pool had to dial again.
//
// The clients' events are the same on every backend (one client model), so the check judges a
// real server's run too. There the trace's times are the wall clock of a run whose every
// duration was multiplied by --time-scale (the trace meta says by how much): the window is a
// part of the scenario's time, so it is scaled the same way.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "sim/scenario/checks/common.h"
#include "sim/scenario/engine.h"

namespace redlab::scenario::checks {

namespace {

double time_scale(const TraceIndex& ix) {
  if (!ix.trace()) return 1.0;
  std::string s = ix.trace()->meta_or("time_scale", "1");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && v > 0 ? v : 1.0;
}

// "2 after "i/o timeout", 1 after "EOF"" for the closes in [from, to], most frequent first.
std::string close_reasons(const TraceIndex& ix, TimeUs from_us, TimeUs to_us) {
  std::map<std::string, size_t> by_reason;
  std::vector<std::string> order;
  for (size_t i : ix.of_kind("conn_close")) {
    const TraceEvent& e = ix.event(i);
    if (e.time_us < from_us || e.time_us > to_us) continue;
    const std::string* given = e.str(F::reason);
    std::string reason = given && !given->empty() ? *given : "no reason given";
    if (by_reason[reason]++ == 0) order.push_back(reason);
  }
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return by_reason[a] > by_reason[b];
  });
  std::vector<std::string> parts;
  for (const std::string& reason : order)
    parts.push_back(std::to_string(by_reason[reason]) + " after \"" + reason + "\"");
  return names(parts);
}

CheckResult dials_within(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  const int64_t max = args.number.at("max");
  const std::string of = arg(args, "of", "dials");
  if (of != "dials" && of != "closes")
    return not_judged("of is \"" + of + "\": expected dials or closes");
  const bool dials = of == "dials";
  const double scale = time_scale(ix);
  auto scaled_us = [scale](int64_t ms) {
    return static_cast<TimeUs>(std::llround(static_cast<double>(ms) * 1000.0 * scale));
  };
  auto after = args.number.find("after_ms");
  auto until = args.number.find("until_ms");
  const TimeUs from_us = after == args.number.end() ? 0 : scaled_us(after->second);
  const TimeUs to_us = until == args.number.end() ? ix.end_us() : scaled_us(until->second);
  std::string window = "from " + format_time(from_us) + " to " + format_time(to_us);
  if (scale != 1.0) window += " (scaled by the run's time scale)";

  std::vector<size_t> counted;
  for (size_t i : ix.of_kind(dials ? "dial" : "conn_close")) {
    const TraceEvent& e = ix.event(i);
    if (e.time_us >= from_us && e.time_us <= to_us) counted.push_back(i);
  }
  const int64_t n = static_cast<int64_t>(counted.size());
  const std::string what = dials ? "connections dialled" : "connections closed";
  if (n > max) {
    // The violation spans the events past the bound: the first one too many to the last.
    const TraceEvent& first = ix.event(counted[static_cast<size_t>(max)]);
    const TraceEvent& last = ix.event(counted.back());
    std::vector<std::string> who;
    for (size_t i : counted) {
      const std::string& a = ix.event(i).actor;
      if (std::find(who.begin(), who.end(), a) == who.end()) who.push_back(a);
    }
    std::string why = close_reasons(ix, from_us, to_us);
    std::string text = std::to_string(n) + " " + what + " " + window + ", above the bound of " +
                       std::to_string(max) + " (the first past it at " +
                       format_time(first.time_us) + ")";
    if (why.empty())
      text += " (no connection was closed meanwhile)";
    else
      text += dials ? "; meanwhile the clients closed connections: " + why : ": " + why;
    r.violations.push_back(Violation{first.time_us, last.time_us, who, text});
  }
  finish(r, std::to_string(n) + " " + what + " " + window + " (bound " + std::to_string(max) + ")");
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "max", .type = FieldType::Count, .required = true, .unit = "connections"},
    {.key = "of", .type = FieldType::Text, .absent = "`dials`", .choices = "dials closes"},
    {.key = "after_ms", .type = FieldType::Count, .unit = "ms", .absent = "0"},
    {.key = "until_ms", .type = FieldType::Count, .unit = "ms", .absent = "the end of the run"}};

}  // namespace

extern const CheckKind dials_within_check;
const CheckKind dials_within_check{
    "dials_within", kFields,
    "the clients' own dial (or conn_close) events from after_ms to until_ms: at most `max` of "
    "them (a violation names what closed the connections meanwhile, each conn_close's reason)",
    dials_within};

}  // namespace redlab::scenario::checks
