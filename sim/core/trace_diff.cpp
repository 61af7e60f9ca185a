#include "sim/core/trace_diff.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#include "sim/core/trace_index.h"

namespace redlab {

const char* difference_kind_name(TraceDifference::Kind kind) {
  switch (kind) {
    case TraceDifference::Kind::verdict:
      return "verdict";
    case TraceDifference::Kind::only_in_a:
      return "only_in_a";
    case TraceDifference::Kind::only_in_b:
      return "only_in_b";
    case TraceDifference::Kind::value:
      return "value";
    case TraceDifference::Kind::timing:
      return "timing";
  }
  return "?";
}

namespace {

// Kinds that are not events of the story: the verdicts (compared from the index instead)
// and the pool statistics, a snapshot after every pool operation that restates what the
// pool events already say.
bool compared_kind(std::string_view kind) {
  return kind != "check" && kind != "violation" && kind != "expectation" && kind != "pool_stats";
}

// Fields that are times or ids of one run: a key's absolute expiry on the server's clock,
// the server's clock, a span id, a blocked command's deadline, a violation's span. Times
// are compared as timing (the event's own time); the rest say nothing about the story.
bool compared_field(F f) {
  switch (f) {
    case F::expire_at_ms:
    case F::clock_unix_ms:
    case F::cause:
    case F::timeout_at_us:
    case F::from_us:
    case F::to_us:
    case F::duration_us:
    case F::source:  // "fake" / "clients": which backend, said by the inputs already
      return false;
    default:
      return true;
  }
}

// One trace, prepared: its events' identities and the renaming of its tokens.
struct Side {
  const Trace* trace = nullptr;
  double scale = 1.0;  // time_us / scale is on the scenario's axis
  std::vector<std::pair<std::string, std::string>> tokens;  // token -> "A's token 1"
  std::map<std::string, std::vector<size_t>> by_identity;   // identity -> events, in order
  std::set<std::string> kinds;

  TimeUs time(size_t i) const {
    return static_cast<TimeUs>(double(trace->events()[i].time_us) / scale);
  }
  std::string rename(std::string s) const {
    for (const auto& [token, name] : tokens)
      for (size_t at = s.find(token); at != std::string::npos; at = s.find(token, at))
        s.replace(at, token.size(), name), at += name.size();
    return s;
  }
};

Side prepare(const Trace& trace) {
  Side side;
  side.trace = &trace;
  std::string scale = trace.meta_or("time_scale");
  if (!scale.empty()) {
    double x = std::strtod(scale.c_str(), nullptr);
    if (x > 0) side.scale = x;
  }
  std::map<std::string, int> per_actor;
  std::set<std::string> seen;
  const auto& events = trace.events();
  for (size_t i = 0; i < events.size(); i++) {
    const TraceEvent& e = events[i];
    if (const std::string* token = e.str(F::token);
        token && !token->empty() && seen.insert(*token).second)
      side.tokens.emplace_back(
          *token, "<" + e.actor + "'s token " + std::to_string(++per_actor[e.actor]) + ">");
  }
  // Longer tokens first, so a token that contains another is renamed whole.
  std::stable_sort(side.tokens.begin(), side.tokens.end(),
                   [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
  for (size_t i = 0; i < events.size(); i++) {
    const TraceEvent& e = events[i];
    if (!compared_kind(e.kind)) continue;
    side.kinds.insert(e.kind);
    std::string id = e.actor + '\x1f' + std::to_string(e.step) + '\x1f' +
                     std::to_string(e.attempt) + '\x1f' + e.kind;
    // A server's key events: per key, so an extra write to one key does not shift another's.
    if (const std::string* key = e.str(F::key); key && e.step < 0) id += '\x1f' + side.rename(*key);
    side.by_identity[id].push_back(i);
  }
  return side;
}

// Durations in a real run's commands are scaled (`--time-scale 0.1`: PX 10000 is sent as
// PX 1000, DEBUG SLEEP 5 as 0.5). Two words are the same if they are equal, or if both are
// numbers and put back on the scenario's scale they are equal (to a thousandth).
bool same_word(std::string_view x, double scale_x, std::string_view y, double scale_y) {
  if (x == y) return true;
  if (scale_x == scale_y || x.empty() || y.empty()) return false;
  auto number = [](std::string_view w, double* out) {
    std::string s(w);
    char* end = nullptr;
    *out = std::strtod(s.c_str(), &end);
    return end && *end == '\0' && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-');
  };
  double nx = 0, ny = 0;
  if (!number(x, &nx) || !number(y, &ny)) return false;
  double ux = nx / scale_x, uy = ny / scale_y;
  return std::fabs(ux - uy) <= 0.001 * std::max({1.0, std::fabs(ux), std::fabs(uy)});
}

// Texts compared word by word with same_word (only when the scales differ).
bool same_text(const std::string& x, double scale_x, const std::string& y, double scale_y) {
  if (x == y) return true;
  if (scale_x == scale_y) return false;
  auto words = [](const std::string& s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
      size_t j = s.find(' ', i);
      if (j == std::string::npos) j = s.size();
      out.push_back(std::string_view(s).substr(i, j - i));
      i = j + 1;
    }
    return out;
  };
  auto wx = words(x), wy = words(y);
  if (wx.size() != wy.size()) return false;
  for (size_t i = 0; i < wx.size(); i++)
    if (!same_word(wx[i], scale_x, wy[i], scale_y)) return false;
  return true;
}

// "reply (integer) 1 / (integer) 0": the first compared field that differs, or "".
std::string field_difference(const Side& a, const TraceEvent& x, const Side& b, const TraceEvent& y,
                             std::optional<F>* which) {
  auto value_text = [](const Side& s, const TraceField& f) -> std::string {
    if (const auto* n = std::get_if<int64_t>(&f.value)) return std::to_string(*n);
    if (const auto* t = std::get_if<std::string>(&f.value)) return s.rename(*t);
    std::string out;
    for (const std::string& item : std::get<std::vector<std::string>>(f.value))
      out += (out.empty() ? "" : " ") + s.rename(item);
    return out;
  };
  std::map<F, std::string> xs, ys;
  for (const TraceField& f : x.fields)
    if (compared_field(f.key)) xs[f.key] = value_text(a, f);
  for (const TraceField& f : y.fields)
    if (compared_field(f.key)) ys[f.key] = value_text(b, f);
  for (const auto& [key, value] : xs) {
    auto it = ys.find(key);
    std::string name(field_info(key).name);
    if (it == ys.end()) return *which = key, name + " " + value + " / (none)";
    if (!same_text(value, a.scale, it->second, b.scale))
      return *which = key, name + " " + value + " / " + it->second;
  }
  for (const auto& [key, value] : ys)
    if (!xs.count(key))
      return *which = key, std::string(field_info(key).name) + " (none) / " + value;
  return "";
}

std::string describe(const Side& s, const TraceEvent& e) {
  std::string out = (e.actor.empty() ? std::string("the run") : e.actor) + "'s " + e.kind;
  if (e.step >= 0) out += " (step " + std::to_string(e.step) + ")";
  if (const auto* argv = e.list(F::argv); argv && !argv->empty()) {
    std::string line;
    for (const std::string& arg : *argv) line += (line.empty() ? "" : " ") + s.rename(arg);
    out += " " + trace_excerpt(line, 80);
  } else if (const std::string* key = e.str(F::key)) {
    out += " " + s.rename(*key);
  } else if (const std::string* lock = e.str(F::lock)) {
    out += " " + *lock;
  }
  return out;
}

// "12.001 s", "83.0 ms": exact enough to see a timing difference.
std::string seconds_text(TimeUs t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f s", double(t) / 1e6);
  return buf;
}
std::string millis_text(TimeUs t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f ms", double(t) / 1e3);
  return buf;
}

bool answers_hello(const TraceIndex& ix, const TraceEvent& e) {
  if (e.kind != "reply" || e.ends <= 0) return false;
  size_t command = ix.span_begin(e.ends);
  if (command == kNoEvent) return false;
  const auto* argv = ix.event(command).list(F::argv);
  return argv && !argv->empty() && ((*argv)[0] == "HELLO" || (*argv)[0] == "hello");
}

}  // namespace

TraceDiff diff_traces(const Trace& ta, const Trace& tb, const TraceDiffOptions& options) {
  TraceDiff d;
  Side a = prepare(ta), b = prepare(tb);
  std::vector<TraceDifference> events;
  auto add = [&](TraceDifference x) { events.push_back(std::move(x)); };
  auto make = [](TraceDifference::Kind kind, TimeUs at_us, size_t x, size_t y, std::string what) {
    TraceDifference d;
    d.kind = kind;
    d.at_us = at_us;
    d.a = x;
    d.b = y;
    d.what = std::move(what);
    return d;
  };

  // ---- Verdicts, from the one reader ----
  TraceIndex ia(ta), ib(tb);
  std::vector<TraceDifference> verdicts;
  auto verdict_word = [](const TraceCheck& c) -> std::string {
    if (!c.judged) return "not judged";
    return c.ok ? "held" : "violated (" + std::to_string(c.violations) + ")";
  };
  std::vector<std::string> names;
  for (const TraceCheck& c : ia.checks()) names.push_back(c.name);
  for (const TraceCheck& c : ib.checks())
    if (std::find(names.begin(), names.end(), c.name) == names.end()) names.push_back(c.name);
  for (const std::string& name : names) {
    const TraceCheck *x = nullptr, *y = nullptr;
    for (const TraceCheck& c : ia.checks())
      if (c.name == name) x = &c;
    for (const TraceCheck& c : ib.checks())
      if (c.name == name) y = &c;
    bool same = x && y && x->judged == y->judged && x->ok == y->ok;
    // A check one backend cannot judge at all (the fake server's own record, on a real
    // server) is not a different verdict: that run has none.
    bool comparable = !(x && !x->judged_here) && !(y && !y->judged_here);
    if (same || !comparable) continue;
    TraceDifference v;
    v.kind = TraceDifference::Kind::verdict;
    v.at_us = ia.end_us();
    v.what = name + ": " + (x ? verdict_word(*x) : "not checked") + " / " +
             (y ? verdict_word(*y) : "not checked");
    v.check = name;
    verdicts.push_back(std::move(v));
  }
  if (ia.expectation_met() && ib.expectation_met() &&
      *ia.expectation_met() != *ib.expectation_met()) {
    TraceDifference v;
    v.kind = TraceDifference::Kind::verdict;
    v.at_us = ia.end_us();
    v.what = "expectation: " + ia.expectation_text() + " / " + ib.expectation_text();
    verdicts.push_back(std::move(v));
  }

  // ---- Events, aligned by identity ----
  for (const std::string& k : a.kinds)
    if (!b.kinds.count(k)) d.kinds_only_in_a.push_back(k);
  for (const std::string& k : b.kinds)
    if (!a.kinds.count(k)) d.kinds_only_in_b.push_back(k);
  auto compared = [&](const TraceEvent& e) {
    return a.kinds.count(e.kind) && b.kinds.count(e.kind);
  };
  for (const auto& [id, xs] : a.by_identity) {
    auto it = b.by_identity.find(id);
    static const std::vector<size_t> kNone;
    const std::vector<size_t>& ys = it == b.by_identity.end() ? kNone : it->second;
    size_t both = std::min(xs.size(), ys.size());
    for (size_t k = 0; k < both; k++) {
      const TraceEvent& x = ta.events()[xs[k]];
      const TraceEvent& y = tb.events()[ys[k]];
      d.aligned++;
      // A connection's HELLO reply carries the server's id for the connection, which is the
      // server's own numbering, not part of the story.
      bool hello = answers_hello(ia, x) && answers_hello(ib, y);
      std::optional<F> which;
      std::string field = hello ? std::string() : field_difference(a, x, b, y, &which);
      if (!field.empty()) {
        TraceDifference v = make(TraceDifference::Kind::value, a.time(xs[k]), xs[k], ys[k],
                                 describe(a, x) + ": " + field);
        v.field = which;
        add(std::move(v));
      }
      TimeUs gap = a.time(xs[k]) - b.time(ys[k]);
      if (std::llabs(gap) > options.tolerance_us)
        add(make(TraceDifference::Kind::timing, a.time(xs[k]), xs[k], ys[k],
                 describe(a, x) + ": at " + seconds_text(a.time(xs[k])) + " / " +
                     seconds_text(b.time(ys[k])) + " (B " + (gap < 0 ? "+" : "-") +
                     millis_text(std::llabs(gap)) + ")"));
    }
    for (size_t k = both; k < xs.size(); k++)
      if (compared(ta.events()[xs[k]]))
        add(make(TraceDifference::Kind::only_in_a, a.time(xs[k]), xs[k], kNoEvent,
                 describe(a, ta.events()[xs[k]])));
    for (size_t k = both; k < ys.size(); k++)
      if (compared(tb.events()[ys[k]]))
        add(make(TraceDifference::Kind::only_in_b, b.time(ys[k]), kNoEvent, ys[k],
                 describe(b, tb.events()[ys[k]])));
  }
  for (const auto& [id, ys] : b.by_identity) {
    if (a.by_identity.count(id)) continue;
    for (size_t y : ys)
      if (compared(tb.events()[y]))
        add(make(TraceDifference::Kind::only_in_b, b.time(y), kNoEvent, y,
                 describe(b, tb.events()[y])));
  }
  // By time, then by the events' positions, so the order does not depend on the map's.
  std::stable_sort(events.begin(), events.end(), [](const auto& x, const auto& y) {
    if (x.at_us != y.at_us) return x.at_us < y.at_us;
    if (x.a != y.a) return x.a < y.a;
    return x.b < y.b;
  });
  for (const TraceDifference& x : events) {
    bool divergence = x.kind == TraceDifference::Kind::only_in_a ||
                      x.kind == TraceDifference::Kind::only_in_b ||
                      x.kind == TraceDifference::Kind::value;
    if (divergence && !d.first_divergence) d.first_divergence = x;
  }
  d.differences = std::move(verdicts);
  d.differences.insert(d.differences.end(), events.begin(), events.end());
  for (const TraceDifference& x : d.differences) {
    switch (x.kind) {
      case TraceDifference::Kind::verdict:
        d.count_verdict++;
        break;
      case TraceDifference::Kind::only_in_a:
        d.count_only_in_a++;
        break;
      case TraceDifference::Kind::only_in_b:
        d.count_only_in_b++;
        break;
      case TraceDifference::Kind::value:
        d.count_value++;
        break;
      case TraceDifference::Kind::timing:
        d.count_timing++;
        break;
    }
  }
  return d;
}

}  // namespace redlab
