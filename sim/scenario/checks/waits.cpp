// no_wait_behind: no client's command waited at the single-threaded server longer than max_ms
// behind other clients' commands. A client that gives up on a slow command (its deadline or
// ReadTimeout) stops waiting, but the server does not stop working: KEYS over a big keyspace or
// a long script runs to its end, and every command that arrives meanwhile queues behind it.
// Judged from the server's own record (`served`: when it began each command and how long it was
// busy with it) and the time the client sent the command (its `command` span): the wait counted
// is the time the server spent on other actors' commands between the two, so network latency
// and the actor's own commands do not count, and the violation names the command that held the
// server longest, as SLOWLOG would.
#include <map>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

struct Busy {
  TimeUs from = 0, to = 0;
  std::string actor, cmd;
};

CheckResult no_wait_behind(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  TimeUs max_us = args.number.at("max_ms") * 1000;
  bool any_server = false;
  size_t judged = 0;
  struct Worst {
    size_t n = 0;
    TimeUs first = 0, last = 0, wait = 0;
    std::string behind, cmd, culprit;
    TimeUs culprit_us = 0;
  };
  std::map<std::string, Worst> by_actor;
  std::vector<std::string> order;
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    any_server = true;
    // The server's busy spans, in the order it served them (its own record).
    std::vector<Busy> busy;
    std::vector<size_t> served;
    for (size_t s : ix.of_kind("served")) {
      const TraceEvent& e = ix.event(s);
      if (e.actor != server) continue;
      int64_t cause = e.num_or(F::cause, 0);
      busy.push_back(Busy{e.time_us, e.time_us + e.num_or(F::duration_us, 0),
                          cause ? actor_of_cause(ix, cause) : std::string(),
                          std::string(e.str_or(F::cmd))});
      served.push_back(s);
    }
    for (size_t k = 0; k < served.size(); k++) {
      const TraceEvent& e = ix.event(served[k]);
      int64_t cause = e.num_or(F::cause, 0);
      if (cause == 0) continue;
      size_t cmd = ix.span_begin(cause);
      if (cmd == kNoEvent) continue;
      const TraceEvent& c = ix.event(cmd);
      judged++;
      // Busy time on other actors' commands between the send and the start of this one.
      TimeUs waited = 0, longest = 0;
      const Busy* culprit = nullptr;
      for (size_t j = 0; j < k; j++) {
        const Busy& b = busy[j];
        if (b.to <= c.time_us || b.actor == c.actor) continue;
        TimeUs from = std::max(b.from, c.time_us), to = std::min(b.to, e.time_us);
        if (to <= from) continue;
        waited += to - from;
        if (b.to - b.from > longest) {
          longest = b.to - b.from;
          culprit = &b;
        }
      }
      if (waited <= max_us) continue;
      auto [it, fresh] = by_actor.try_emplace(c.actor);
      if (fresh) {
        order.push_back(c.actor);
        it->second.first = c.time_us;
      }
      Worst& w = it->second;
      w.n++;
      w.last = e.time_us;
      if (waited > w.wait) {
        w.wait = waited;
        w.cmd = std::string(e.str_or(F::cmd));
        w.culprit = culprit ? culprit->actor : std::string();
        w.behind = culprit ? culprit->cmd : std::string();
        w.culprit_us = longest;
      }
    }
  }
  if (!any_server) return not_judged_here("the server's own record of what it served");
  if (judged == 0) return not_judged("the server served no client command");
  for (const std::string& actor : order) {
    const Worst& w = by_actor[actor];
    std::vector<std::string> who{actor};
    if (!w.culprit.empty() && w.culprit != actor) who.push_back(w.culprit);
    r.violations.push_back(Violation{
        w.first, w.last, who,
        actor + ": " + plural(w.n, "command", "commands") + " waited at the server longer than " +
            format_time(max_us) + " behind other clients' commands (the longest: its " + w.cmd +
            " waited " + format_time(w.wait) + " behind " +
            (w.culprit.empty() ? std::string("the server") : w.culprit) + "'s " + w.behind +
            ", which held the server for " + format_time(w.culprit_us) + ")"});
  }
  finish(r, "no command waited at the server longer than " + format_time(max_us) +
                " behind another client's (" + plural(judged, "command", "commands") +
                ", from the server's record)");
  return r;
}

constexpr FieldSpec kFields[] = {
    {.key = "max_ms", .type = FieldType::Count, .required = true, .unit = "ms"}};

}  // namespace

extern const CheckKind no_wait_behind_check;
const CheckKind no_wait_behind_check{
    "no_wait_behind", kFields,
    "the server's record: no client's command waited longer than `max_ms` between its send and "
    "its start while the server served other actors' commands (the longest of them named, as "
    "SLOWLOG would) (fake backend only)",
    no_wait_behind};

}  // namespace redlab::scenario::checks
