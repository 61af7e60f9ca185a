// The fencing checks: a protected resource's own decisions about fenced writes.
#include <algorithm>
#include <map>
#include <set>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

// Resource writes, from the resource's own events (the engine is the resource).
struct Write {
  std::string resource, actor, value;
  int64_t fence = 0, highest = 0;
  bool accepted = false;
  TimeUs at_us = 0;
  size_t event = 0;
};
std::vector<Write> writes(const TraceIndex& ix, const std::string& only) {
  std::vector<Write> out;
  for (size_t i = 0; i < ix.size(); i++) {
    const TraceEvent& e = ix.event(i);
    if (e.kind != "resource_accept" && e.kind != "resource_reject") continue;
    Write w;
    w.resource = std::string(e.str_or(F::resource));
    if (!only.empty() && w.resource != only) continue;
    w.actor = e.actor;
    w.value = std::string(e.str_or(F::value));
    w.fence = e.num_or(F::fence, 0);
    w.highest = e.num_or(F::highest, 0);
    w.accepted = e.kind == "resource_accept";
    w.at_us = e.time_us;
    w.event = i;
    out.push_back(std::move(w));
  }
  return out;
}

// A write is stale when the resource had already accepted a higher fence, or the same fence
// from another writer (two holders with one fence: one of them is stale, and the resource
// cannot tell which). From the resource's own decisions (the engine is the resource).
CheckResult no_stale_write(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::vector<Write> ws = writes(ix, arg(args, "resource"));
  struct Seen {
    int64_t fence = 0;
    std::string actor;
    bool any = false;
  };
  std::map<std::string, Seen> highest;  // resource -> highest accepted fence and its writer
  size_t accepted = 0, rejected = 0;
  for (const Write& w : ws) {
    (w.accepted ? accepted : rejected)++;
    if (!w.accepted) continue;
    Seen& h = highest[w.resource];
    std::string why;
    if (h.any && w.fence < h.fence)
      why = "after it had seen fence " + std::to_string(h.fence);
    else if (h.any && w.fence == h.fence && w.actor != h.actor)
      why = "with the same fence as " + h.actor + "'s earlier write: two holders had one fence";
    if (!why.empty())
      r.violations.push_back(Violation{w.at_us,
                                       w.at_us,
                                       {w.actor},
                                       w.resource + " accepted " + w.actor +
                                           "'s write with fence " + std::to_string(w.fence) +
                                           " at " + format_time(w.at_us) + " " + why});
    if (!h.any || w.fence > h.fence) h = Seen{w.fence, w.actor, true};
  }
  if (ws.empty()) return not_judged("nothing was written to the resource");
  finish(r, "no write with an old fence was accepted (" + std::to_string(accepted) + " accepted, " +
                std::to_string(rejected) + " rejected)");
  return r;
}

// Fences handed out: the values the fence counter took on the server (its own record), or
// on a real server what the fenced acquisitions returned.
CheckResult no_forged_fence(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string fence_key = arg(args, "fence_key");
  std::set<int64_t> issued;
  bool from_server = false;
  if (!fence_key.empty())
    for (const std::string& server : ix.servers()) {
      if (!ix.has_server_events(server)) continue;
      from_server = true;
      bool setup_seen = false;
      for (const KeyChange& c : ix.key_changes(server)) {
        if (!c.present || c.state.key != fence_key) continue;
        // The counter's starting value (a setup command) is not a fence anyone got.
        if (c.cause == 0 && !setup_seen) {
          setup_seen = true;
          continue;
        }
        if (auto v = parse_int(c.state.value)) issued.insert(*v);
      }
    }
  if (!from_server)
    for (size_t i : ix.of_kind("lock_acquired"))
      if (const int64_t* f = ix.event(i).num(F::fence)) issued.insert(*f);
  std::vector<Write> ws = writes(ix, arg(args, "resource"));
  for (size_t i = 0; i < ws.size(); i++) {
    const Write& w = ws[i];
    if (!w.accepted || issued.count(w.fence)) continue;
    // What it cost: genuine writes rejected after the forged fence was accepted.
    std::vector<std::string> victims;
    size_t lost = 0;
    for (size_t j = i + 1; j < ws.size(); j++) {
      const Write& v = ws[j];
      if (v.resource == w.resource && !v.accepted && issued.count(v.fence)) {
        lost++;
        if (std::find(victims.begin(), victims.end(), v.actor) == victims.end())
          victims.push_back(v.actor);
      }
    }
    std::string text = w.resource + " accepted " + w.actor + "'s fence " + std::to_string(w.fence) +
                       " at " + format_time(w.at_us) + ", a fence no lock ever handed out";
    if (lost > 0)
      text += "; it then rejected " + plural(lost, "genuine write", "genuine writes") + " by " +
              names(victims);
    std::vector<std::string> who{w.actor};
    who.insert(who.end(), victims.begin(), victims.end());
    r.violations.push_back(Violation{w.at_us, w.at_us, who, text});
  }
  if (ws.empty()) return not_judged("nothing was written to the resource");
  finish(r, "every accepted fence came from the lock (" + std::to_string(issued.size()) +
                " handed out" + (from_server ? ", from the server's counter" : "") + ")");
  return r;
}

constexpr FieldSpec kStaleFields[] = {
    {.key = "resource", .type = FieldType::Resource, .absent = "every resource"}};
constexpr FieldSpec kForgedFields[] = {
    {.key = "resource", .type = FieldType::Resource, .absent = "every resource"},
    {.key = "fence_key", .type = FieldType::Text}};

}  // namespace

extern const CheckKind no_stale_write_check, no_forged_fence_check;
const CheckKind no_stale_write_check{
    "no_stale_write", kStaleFields,
    "the resource's own decisions: no write was accepted with a fence below one it had "
    "accepted, or with the fence of another writer's accepted write",
    no_stale_write};
const CheckKind no_forged_fence_check{
    "no_forged_fence", kForgedFields,
    "the resource's decisions and the values the fence counter took on the server (or, without "
    "fence_key or on a real server, the fences acquisitions returned)",
    no_forged_fence};

}  // namespace redlab::scenario::checks
