// answered_within: every request an actor stands for was answered within a bound. A handler
// that falls back to the database when the cache is slow answers late but answers; one that
// waits out the client's ReadTimeout (and its retries) behind a stalled server keeps the user
// waiting for seconds. Judged from the actor's own events (actor_start .. actor_end: the request
// from its arrival to its answer), and, to say why a request was late, from its client calls'
// spans (call .. result) and their results' typed fields (error_class): never from a reply's
// text.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "sim/scenario/checks/common.h"
#include "sim/scenario/engine.h"

namespace redlab::scenario::checks {

namespace {

// `name` is the actor itself, or one instance of a counted actor ("handler3").
bool instance_of(const std::string& name, const std::string& actor) {
  if (name == actor) return true;
  if (name.size() <= actor.size() || name.compare(0, actor.size(), actor) != 0) return false;
  for (size_t i = actor.size(); i < name.size(); i++)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

std::string format_scale(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::string seconds(TimeUs us) {
  // Tenths of a millisecond are noise here; whole milliseconds read best.
  return std::to_string(us / 1000) + " ms";
}

// The actor's longest client call between `from` and `to` (trace positions), in words: what it
// was waiting for when the answer was late.
std::string longest_call(const TraceIndex& ix, const std::string& actor, size_t from, size_t to) {
  size_t best = kNoEvent;
  TimeUs best_us = -1;
  for (size_t c : ix.of_kind("call")) {
    if (c < from || c > to) continue;
    const TraceEvent& e = ix.event(c);
    if (e.actor != actor) continue;
    TimeUs took = end_time(ix, c) - e.time_us;
    if (took > best_us) {
      best_us = took;
      best = c;
    }
  }
  if (best == kNoEvent) return "";
  const TraceEvent& call = ix.event(best);
  std::string what;
  if (const auto* argv = call.list(F::argv))
    for (size_t i = 0; i < argv->size() && i < 2; i++) what += (i ? " " : "") + (*argv)[i];
  if (what.empty()) what = std::string(call.str_or(F::cmd, "a call"));
  std::string how = " (still waiting at the end of the run)";
  size_t end = ix.end_of(best);
  if (end != kNoEvent) {
    const TraceEvent& res = ix.event(end);
    std::string_view cls = res.str_or(F::error_class);
    how = cls.empty()
              ? std::string(", then it answered")
              : ", ending in " + std::string(cls) + " (" + std::string(res.str_or(F::error)) + ")";
    // A deadline met in the backoff before a retry ends the call without that attempt: only
    // the attempts that read count then, so say none rather than one too many.
    int64_t attempts = res.attempt + 1;
    if (attempts > 1 && cls != "context_deadline")
      how += " after " + std::to_string(attempts) + " attempts";
  }
  return "; its longest wait was " + what + ", " + seconds(best_us) + how;
}

CheckResult answered_within(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string actor = arg(args, "actor");
  // On a real server the trace's times are the wall clock of a run whose every duration was
  // multiplied by --time-scale (its meta says by how much): the bound is a duration of the
  // scenario, so it is scaled the same way, or a run in tenths would always be in time.
  double scale = 1.0;
  if (ix.trace()) {
    std::string s = ix.trace()->meta_or("time_scale", "1");
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && v > 0) scale = v;
  }
  TimeUs bound = std::llround(static_cast<double>(args.number.at("ms")) * 1000.0 * scale);
  std::string scaled =
      scale == 1.0 ? std::string() : " (the run's time scale " + format_scale(scale) + ")";
  size_t requests = 0;
  TimeUs slowest = 0;
  for (size_t s : ix.of_kind("actor_start")) {
    const TraceEvent& st = ix.event(s);
    if (!instance_of(st.actor, actor)) continue;
    requests++;
    size_t end = kNoEvent;
    for (size_t e : ix.of_kind("actor_end"))
      if (e > s && ix.event(e).actor == st.actor) {
        end = e;
        break;
      }
    if (end == kNoEvent) {
      r.violations.push_back(
          Violation{st.time_us,
                    ix.end_us(),
                    {st.actor},
                    st.actor + " had not answered by the end of the run (" +
                        seconds(ix.end_us() - st.time_us) + " after its request began at " +
                        format_time(st.time_us) + ", bound " + seconds(bound) + scaled + ")" +
                        longest_call(ix, st.actor, s, ix.size())});
      continue;
    }
    const TraceEvent& en = ix.event(end);
    TimeUs took = en.time_us - st.time_us;
    slowest = std::max(slowest, took);
    std::string_view reason = en.str_or(F::reason);
    if (reason != "done") {
      r.violations.push_back(Violation{st.time_us,
                                       en.time_us,
                                       {st.actor},
                                       st.actor + " gave up without an answer at " +
                                           format_time(en.time_us) + " (" + std::string(reason) +
                                           ")" + longest_call(ix, st.actor, s, end)});
    } else if (took > bound) {
      r.violations.push_back(
          Violation{st.time_us,
                    en.time_us,
                    {st.actor},
                    st.actor + " answered " + seconds(took) + " after its request began at " +
                        format_time(st.time_us) + ", over the bound of " + seconds(bound) + scaled +
                        longest_call(ix, st.actor, s, end)});
    }
  }
  if (requests == 0) return not_judged("no request of " + actor + " began");
  finish(r, "every request of " + actor + " was answered within " + seconds(bound) + scaled + " (" +
                plural(requests, "request", "requests") + ", the slowest in " + seconds(slowest) +
                ")");
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "actor", .type = FieldType::Text, .required = true},
    {.key = "ms", .type = FieldType::Count, .required = true, .unit = "ms"}};

}  // namespace

extern const CheckKind answered_within_check;
const CheckKind answered_within_check{
    "answered_within", kFields,
    "the actor's own events: each of its instances ended its steps (actor_start .. actor_end, "
    "done) within `ms`; a late one is explained by its longest client call (call .. result, "
    "the result's error_class)",
    answered_within};

}  // namespace redlab::scenario::checks
