// The batch checks: what one actor sends together (a pipeline, a MULTI/EXEC, or commands one
// by one), against the server's order of execution and the round trips it waited for.
//
// A batch is what an actor sends between two of its `sleep` or `work` steps (or its start and
// its end): a pipeline step, a tx step, or several command steps in a row. The actor's
// connection handshake (HELLO) belongs to no batch.
//
// - batch_not_interleaved: the fake server's own record (`served` events, each naming the
//   client command that caused it): between the first and the last command of a batch that the
//   server executed, no command of another actor ran. A command queued by MULTI ("served" with
//   reason `queued`) has not run yet, and MULTI itself runs nothing of the batch: the queued
//   commands run inside EXEC, in one served event. A pipeline's commands each run when they
//   arrive, so whatever another client sent in the meantime runs between them.
// - batch_round_trips: the client's own events: a batch took one round trip more each time the
//   actor sent a command after it had waited for a reply. A pipeline (and a TxPipeline) writes
//   every command before reading any reply: one round trip.
#include <algorithm>
#include <map>
#include <set>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

struct Batch {
  std::string actor;
  std::vector<size_t> commands;  // `command` events, in order
  std::vector<size_t> replies;   // `reply` events of those commands, in order
  size_t round_trips = 0;
  bool replied = true;  // a reply came since the last command sent: the next one waited
  TimeUs from_us = 0, to_us = 0;
};

// `name` is the actor: an instance ("A", "reader2") or every instance of an actor with a
// count ("reader" matches reader1, reader2, ...; batches_of prefers an exact name).
bool actor_matches(const std::string& actor, const std::string& name) {
  if (actor == name) return true;
  if (actor.size() <= name.size() || actor.compare(0, name.size(), name) != 0) return false;
  return std::all_of(actor.begin() + static_cast<std::ptrdiff_t>(name.size()), actor.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<Batch> batches_of(const TraceIndex& ix, const std::string& name) {
  // An actor named exactly so wins over the instances of another ("reader1" is not reader12).
  const std::vector<std::string>& lanes = ix.actors();
  bool exact = std::find(lanes.begin(), lanes.end(), name) != lanes.end();
  std::vector<Batch> out;
  std::map<std::string, Batch> open;
  std::set<size_t> batch_commands;
  auto close = [&](const std::string& actor) {
    auto it = open.find(actor);
    if (it == open.end()) return;
    if (!it->second.commands.empty()) out.push_back(std::move(it->second));
    open.erase(it);
  };
  for (size_t i = 0; i < ix.size(); i++) {
    const TraceEvent& e = ix.event(i);
    if (e.actor.empty() || (exact ? e.actor != name : !actor_matches(e.actor, name))) continue;
    if (e.kind == "sleep" || e.kind == "work") {
      close(e.actor);
    } else if (e.kind == "command") {
      const auto* argv = e.list(F::argv);
      if (!argv || argv->empty() || upper((*argv)[0]) == "HELLO") continue;
      Batch& b = open[e.actor];
      if (b.commands.empty()) {
        b.actor = e.actor;
        b.from_us = e.time_us;
      }
      if (b.replied) b.round_trips++;
      b.replied = false;
      b.commands.push_back(i);
      b.to_us = e.time_us;
      batch_commands.insert(i);
    } else if (e.kind == "reply") {
      size_t begin = ix.begin_of(i);
      if (begin == kNoEvent || !batch_commands.count(begin)) continue;
      auto it = open.find(e.actor);
      if (it == open.end()) continue;
      it->second.replies.push_back(i);
      it->second.replied = true;
      it->second.to_us = e.time_us;
    }
  }
  std::vector<std::string> left;
  for (auto& [actor, b] : open) left.push_back(actor);
  for (const std::string& actor : left) close(actor);
  std::stable_sort(out.begin(), out.end(),
                   [](const Batch& x, const Batch& y) { return x.commands[0] < y.commands[0]; });
  return out;
}

// "0.42 ms", "12.5 ms", "1.2 s": a batch lasts well under a millisecond.
std::string format_short(TimeUs us) {
  if (us >= 10000) return format_time(us);
  std::string frac = std::to_string(us % 1000 / 10);
  if (frac.size() < 2) frac = "0" + frac;
  return std::to_string(us / 1000) + "." + frac + " ms";
}

std::string command_of(const TraceIndex& ix, size_t command_event) {
  const auto* argv = ix.event(command_event).list(F::argv);
  return argv && !argv->empty() ? upper((*argv)[0]) : std::string("?");
}

CheckResult batch_not_interleaved(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string name = arg(args, "actor");
  std::vector<Batch> bs = batches_of(ix, name);
  if (bs.empty()) return not_judged(name + " sent no commands");
  for (const Batch& b : bs) {
    int64_t connection = ix.event(b.commands[0]).connection;
    std::string server = ix.connection_server(connection);
    if (!ix.has_server_events(server))
      return not_judged_here("the server's own order of execution");
  }
  // What the server executed for each client command (its span): the served events.
  std::map<int64_t, size_t> served_by_cause;
  const std::vector<size_t>& served = ix.of_kind("served");
  for (size_t i : served) {
    const TraceEvent& e = ix.event(i);
    int64_t cause = e.num_or(F::cause, 0);
    if (cause != 0 && e.str_or(F::reason) != "queued") served_by_cause.emplace(cause, i);
  }
  size_t judged = 0;
  for (const Batch& b : bs) {
    size_t first = kNoEvent, last = kNoEvent;
    std::string first_cmd, last_cmd;
    for (size_t c : b.commands) {
      if (command_of(ix, c) == "MULTI") continue;  // opens the queue; nothing of it runs yet
      auto it = served_by_cause.find(ix.event(c).span);
      if (it == served_by_cause.end()) continue;
      if (first == kNoEvent || it->second < first) {
        first = it->second;
        first_cmd = command_of(ix, c);
      }
      if (last == kNoEvent || it->second > last) {
        last = it->second;
        last_cmd = command_of(ix, c);
      }
    }
    if (first == kNoEvent) continue;
    judged++;
    auto lo = std::upper_bound(served.begin(), served.end(), first);
    auto hi = std::lower_bound(served.begin(), served.end(), last);
    std::vector<std::string> who{b.actor};
    size_t intruders = 0;
    std::string first_intruder;
    for (auto it = lo; it < hi; ++it) {
      const TraceEvent& e = ix.event(*it);
      int64_t cause = e.num_or(F::cause, 0);
      if (cause == 0 || e.str_or(F::reason) == "queued") continue;
      std::string actor = actor_of_cause(ix, cause);
      if (actor.empty() || actor == b.actor) continue;
      if (intruders == 0)
        first_intruder =
            actor + "'s " + std::string(e.str_or(F::cmd)) + " at " + format_short(e.time_us);
      intruders++;
      if (std::find(who.begin(), who.end(), actor) == who.end()) who.push_back(actor);
    }
    if (intruders == 0) continue;
    TimeUs from = ix.event(first).time_us, to = ix.event(last).time_us;
    r.violations.push_back(Violation{
        from, to, who,
        first_intruder + " ran between " + b.actor + "'s " + first_cmd + " and " + last_cmd +
            " (its batch of " + std::to_string(b.commands.size()) + " sent at " +
            format_short(b.from_us) + ")" +
            (intruders > 1 ? ", and " + plural(intruders - 1, "more command", "more commands")
                           : std::string())});
  }
  if (judged == 0) return not_judged("the server executed none of " + name + "'s batches");
  finish(r,
         "no other client's command ran inside any of " + name + "'s " +
             plural(judged, "batch", "batches") + " (from the server's order of execution)",
         plural(r.violations.size(), "batch", "batches") + " of " + std::to_string(judged) +
             " interleaved");
  return r;
}

CheckResult batch_round_trips(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string name = arg(args, "actor");
  int64_t bound = args.number.at("max_round_trips");
  std::vector<Batch> bs = batches_of(ix, name);
  if (bs.empty()) return not_judged(name + " sent no commands");
  size_t most = 0;
  TimeUs shortest = -1, longest = 0;
  for (const Batch& b : bs) {
    most = std::max(most, b.round_trips);
    TimeUs took = b.to_us - b.from_us;
    if (shortest < 0 || took < shortest) shortest = took;
    longest = std::max(longest, took);
    if (static_cast<int64_t>(b.round_trips) <= bound) continue;
    r.violations.push_back(Violation{
        b.from_us,
        b.to_us,
        {b.actor},
        b.actor + "'s batch of " + plural(b.commands.size(), "command", "commands") + " at " +
            format_short(b.from_us) + " waited for " + std::to_string(b.round_trips) +
            " round trips (" + format_short(took) + "), bound " + std::to_string(bound)});
  }
  std::string span = format_short(shortest) +
                     (longest != shortest ? " to " + format_short(longest) : std::string());
  finish(r,
         "every one of " + name + "'s " + plural(bs.size(), "batch", "batches") + " took at most " +
             std::to_string(most) + (most == 1 ? " round trip" : " round trips") + " (" + span +
             " each)",
         plural(bs.size(), "batch", "batches") + ", " + span + " each");
  return r;
}

constexpr FieldSpec kInterleaved[] = {{.key = "actor", .type = FieldType::Text, .required = true}};
constexpr FieldSpec kRoundTrips[] = {
    {.key = "actor", .type = FieldType::Text, .required = true},
    {.key = "max_round_trips", .type = FieldType::Count, .required = true, .unit = "round trips"}};

}  // namespace

extern const CheckKind batch_not_interleaved_check, batch_round_trips_check;
const CheckKind batch_not_interleaved_check{
    "batch_not_interleaved", kInterleaved,
    "the server's order of execution: no other actor's command ran between the first and the "
    "last command of one of the actor's batches that the server executed (commands MULTI "
    "queued run inside EXEC) (fake backend only)",
    batch_not_interleaved};
const CheckKind batch_round_trips_check{
    "batch_round_trips", kRoundTrips,
    "the actor's own command and reply events: no batch sent a command after waiting for a "
    "reply more than max_round_trips - 1 times",
    batch_round_trips};

}  // namespace redlab::scenario::checks
