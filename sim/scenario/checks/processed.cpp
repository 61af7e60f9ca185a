// processed_once: every message or event had its effect exactly once. At-least-once delivery
// (a stream entry reclaimed from a dead consumer's PEL, a webhook sent again) makes twice the
// normal case for a handler that is not idempotent, and a guard against twice (an idempotency
// key) can turn a crash into never. Both are judged from the side effect itself: the writes a
// resource (the database outside Redis the handler writes to) accepted, each carrying the
// message or event it was for as its value. Never from what a handler or a script said.
//
// What must have been processed: with `stream`, every entry XADD added to it (the `published`
// event's typed id: an XADD that failed added nothing), so an entry MAXLEN trimmed before
// anyone handled it counts as never processed; with `event`, that event. Either way a value
// accepted twice is a violation; without either, only that.
#include <algorithm>
#include <map>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

struct Accepted {
  TimeUs at_us = 0;
  std::string actor;
};

// "1767225600001-0, 1767225600001-1, ..., 1767225600001-9" for long lists.
std::string short_list(const std::vector<std::string>& v) {
  if (v.size() <= 4) return names(v);
  return v[0] + ", " + v[1] + ", ..., " + v.back();
}

CheckResult processed_once(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string resource = arg(args, "resource");
  std::string stream = arg(args, "stream");
  std::string event = arg(args, "event");
  // The resource's own decisions, in trace order: value -> every accepted write of it.
  std::map<std::string, std::vector<Accepted>> writes;
  for (size_t i : ix.of_kind("resource_accept")) {
    const TraceEvent& e = ix.event(i);
    if (e.str_or(F::resource) != resource) continue;
    writes[std::string(e.str_or(F::value))].push_back({e.time_us, e.actor});
  }
  // What had to be processed, with when it came to be (for the never-processed violation).
  std::vector<std::pair<std::string, TimeUs>> due;
  std::map<std::string, std::string> label;
  auto named = [&label](const std::string& value) {
    auto it = label.find(value);
    return it == label.end() ? value : it->second;
  };
  if (!stream.empty())
    for (size_t i : ix.of_kind("published")) {
      const TraceEvent& e = ix.event(i);
      size_t begin = ix.begin_of(i);
      if (begin == kNoEvent || e.has(F::error) || !e.has(F::id)) continue;
      const TraceEvent& b = ix.event(begin);
      if (b.str_or(F::method) != "stream" || b.str_or(F::channel) != stream) continue;
      // The entry as people read it: its id and its fields ("1767225600002-0 (order=2)").
      due.emplace_back(std::string(e.str_or(F::id)), b.time_us);
      label[std::string(e.str_or(F::id))] =
          std::string(e.str_or(F::id)) + " (" + std::string(b.str_or(F::message)) + ")";
    }
  if (!event.empty()) due.emplace_back(event, TimeUs{0});
  if (stream.empty() && event.empty() && writes.empty())
    return not_judged(resource + " accepted no write");
  if (!stream.empty() && event.empty() && due.empty())
    return not_judged("no entry was added to " + stream);

  size_t once = 0;
  for (const auto& [value, ws] : writes) {
    if (ws.size() == 1) {
      once++;
      continue;
    }
    std::vector<std::string> who, each;
    for (const Accepted& w : ws) {
      if (std::find(who.begin(), who.end(), w.actor) == who.end()) who.push_back(w.actor);
      each.push_back(w.actor + " at " + format_time(w.at_us));
    }
    r.violations.push_back(Violation{ws.front().at_us, ws.back().at_us, who,
                                     named(value) + " was processed " + std::to_string(ws.size()) +
                                         " times: " + resource + " accepted it from " +
                                         names(each)});
  }
  std::vector<std::string> never;
  TimeUs first_due = 0;
  for (const auto& [value, at] : due) {
    if (writes.count(value)) continue;
    if (never.empty()) first_due = at;
    never.push_back(named(value));
  }
  if (!never.empty()) {
    std::string what =
        !event.empty() && never.size() == 1 && never[0] == event
            ? event + " was never processed"
            : plural(never.size(), "entry", "entries") + " of " + stream + " were never processed";
    if (never.size() == 1 && never[0] != event)
      what = "1 entry of " + stream + " was never processed";
    r.violations.push_back(Violation{first_due,
                                     ix.end_us(),
                                     {},
                                     what + ": " + resource + " accepted no write of " +
                                         short_list(never) + " by the end of the run (" +
                                         format_time(ix.end_us()) + ")"});
  }
  std::string scope;
  if (!stream.empty())
    scope = "every entry of " + stream + " (" +
            std::to_string(due.size() - (event.empty() ? 0 : 1)) + ")";
  if (!event.empty()) scope += (scope.empty() ? "" : " and ") + event;
  if (scope.empty()) scope = "every value";
  finish(r, scope + " processed exactly once (" + resource + " accepted " +
                plural(once, "write", "writes") + ", one per value)");
  return r;
}

constexpr FieldSpec kFields[] = {{.key = "resource", .type = FieldType::Resource, .required = true},
                                 {.key = "stream", .type = FieldType::Text, .absent = "none"},
                                 {.key = "event", .type = FieldType::Text, .absent = "none"}};

}  // namespace

extern const CheckKind processed_once_check;
const CheckKind processed_once_check{
    "processed_once", kFields,
    "the resource's accepted writes, each naming what it processed (its value): no value "
    "accepted twice, and every entry XADD added to `stream` and the `event` accepted once",
    processed_once};

}  // namespace redlab::scenario::checks
