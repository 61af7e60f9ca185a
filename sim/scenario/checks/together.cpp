// writes_together: two keys that must change together (a transfer's two sides, a stock and its
// order queue) are, by every transaction and script call, changed both or neither. (A plain
// command is one write by nature; what is meant to be one unit is a MULTI/EXEC or a script.)
// MULTI/EXEC has no rollback: a command that fails while EXEC runs (WRONGTYPE) leaves the others
// applied, and so does a script that fails after a write; only the server's record shows which keys
// each one changed.
#include <map>
#include <set>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

bool is_script(std::string_view cmd) {
  return cmd == "EVAL" || cmd == "EVALSHA" || cmd == "FCALL";
}

// "transaction (EXEC)", "script (EVALSHA)".
std::string what_of(const std::string& cmd) {
  return cmd == "EXEC" ? "transaction (EXEC)" : "script (" + cmd + ")";
}

CheckResult writes_together(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string key = arg(args, "key"), with = arg(args, "with");
  bool any_server = false;
  std::set<int64_t> units;  // transactions ended and script calls that reached a server
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    any_server = true;
    // Per command (its span): which of the two keys it changed, and when it first did.
    std::map<int64_t, std::pair<int, TimeUs>> changed;  // cause -> (bit 1 key, bit 2 with)
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.expired || c.cause == 0) continue;
      std::string cmd = command_name(ix, c.cause);
      if (cmd != "EXEC" && !is_script(cmd)) continue;
      int bit = c.state.key == key ? 1 : c.state.key == with ? 2 : 0;
      if (bit == 0) continue;
      auto [it, fresh] = changed.try_emplace(c.cause, 0, c.time_us);
      it->second.first |= bit;
      units.insert(c.cause);
    }
    for (size_t s : ix.of_kind("served")) {
      const TraceEvent& e = ix.event(s);
      std::string_view cmd = e.str_or(F::cmd);
      int64_t cause = e.num_or(F::cause, 0);
      if (e.actor == server && cause != 0 && (cmd == "EXEC" || cmd == "DISCARD" || is_script(cmd)))
        units.insert(cause);
    }
    for (const auto& [cause, what] : changed) {
      if (what.first == 3) continue;
      std::string actor = actor_of_cause(ix, cause);
      const std::string& done = what.first == 1 ? key : with;
      const std::string& missed = what.first == 1 ? with : key;
      r.violations.push_back(Violation{
          what.second,
          what.second,
          {actor},
          (actor.empty() ? std::string("a client") : actor) + "'s " +
              what_of(command_name(ix, cause)) + " at " + format_time(what.second) + " changed " +
              done + " but not " + missed + ": what it did apply stayed applied (no rollback)"});
    }
  }
  if (!any_server) return not_judged_here("the server's own record of " + key + " and " + with);
  if (units.empty()) return not_judged("no transaction or script call reached the server");
  finish(r,
         key + " and " + with + " changed together or not at all (" +
             plural(units.size(), "transaction or script call", "transactions and script calls") +
             ", from the server's record)");
  return r;
}

constexpr FieldSpec kFields[] = {{.key = "key", .type = FieldType::Text, .required = true},
                                 {.key = "with", .type = FieldType::Text, .required = true}};

}  // namespace

extern const CheckKind writes_together_check;
const CheckKind writes_together_check{
    "writes_together", kFields,
    "the server's record: every transaction (EXEC) or script call that changed one of the two keys "
    "changed the other too (fake backend only)",
    writes_together};

}  // namespace redlab::scenario::checks
