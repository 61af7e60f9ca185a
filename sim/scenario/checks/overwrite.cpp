// no_unseen_overwrite: nobody writes a key over another actor's change it never read. A writer
// reads (HGET version, HGET balance), thinks, writes; if someone else changed the key after
// that read, the write is computed from a stale copy and erases the other change: the lost
// update a version check (check-and-set) exists to refuse. Judged from the server's record:
// when each command read the key (`served`, its `cause` naming the command and so its actor and
// argv) and which command changed it (key events with their `cause`); never from what a script
// answered.
#include <set>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

bool is_script_or_exec(std::string_view cmd) {
  return cmd == "EVAL" || cmd == "EVALSHA" || cmd == "EVAL_RO" || cmd == "EVALSHA_RO" ||
         cmd == "FCALL" || cmd == "FCALL_RO" || cmd == "EXEC";
}

CheckResult no_unseen_overwrite(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string key = arg(args, "key");
  bool any_server = false;
  size_t writes = 0;
  for (const std::string& server : ix.servers()) {
    if (!ix.has_server_events(server)) continue;
    any_server = true;
    // The commands that changed the key: a command that changed it did not merely read it.
    std::set<int64_t> writers;
    for (const KeyChange& c : ix.key_changes(server))
      if (!c.expired && c.cause != 0 && c.state.key == key) writers.insert(c.cause);
    // Reads: a plain command (not a script or EXEC: what a script read inside, its caller never
    // saw) whose first argument is the key, served, and not one of the writers.
    struct Read {
      size_t event;
      std::string actor;
    };
    std::vector<Read> reads;
    for (size_t s : ix.of_kind("served")) {
      const TraceEvent& e = ix.event(s);
      int64_t cause = e.num_or(F::cause, 0);
      if (e.actor != server || cause == 0 || !e.str_or(F::reason).empty()) continue;
      if (is_script_or_exec(e.str_or(F::cmd)) || writers.count(cause)) continue;
      size_t cmd = ix.span_begin(cause);
      if (cmd == kNoEvent) continue;
      const auto* argv = ix.event(cmd).list(F::argv);
      if (!argv || argv->size() < 2 || (*argv)[1] != key) continue;
      reads.push_back({s, ix.event(cmd).actor});
    }
    struct Change {
      size_t event;
      TimeUs at;
      std::string actor;
      int64_t cause;
    };
    std::vector<Change> changes;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.expired || c.cause == 0 || c.state.key != key) continue;
      if (!changes.empty() && changes.back().cause == c.cause) continue;  // the same command
      std::string actor = actor_of_cause(ix, c.cause);
      // The latest change by someone else, and this writer's latest read before this write.
      const Change* other = nullptr;
      for (auto it = changes.rbegin(); it != changes.rend(); ++it)
        if (it->actor != actor) {
          other = &*it;
          break;
        }
      const Read* seen = nullptr;
      for (const Read& rd : reads)
        if (rd.event < c.event && rd.actor == actor) seen = &rd;
      writes++;
      if (other && (!seen || seen->event < other->event)) {
        std::string cmd = command_name(ix, c.cause);
        std::string how = cmd == "EXEC"            ? "'s transaction (EXEC)"
                          : is_script_or_exec(cmd) ? "'s script (" + cmd + ")"
                                                   : "'s " + cmd;
        r.violations.push_back(Violation{
            other->at,
            c.time_us,
            {actor, other->actor},
            actor + how + " at " + format_time(c.time_us) + " wrote " + key + " over " +
                other->actor + "'s change at " + format_time(other->at) + ", which " + actor +
                " had not read (" +
                (seen ? "its last read was at " + format_time(ix.event(seen->event).time_us)
                      : std::string("it never read the key")) +
                "): " + other->actor + "'s update is lost"});
      }
      changes.push_back({c.event, c.time_us, actor, c.cause});
    }
  }
  if (!any_server) return not_judged_here("the server's own record of " + key);
  if (writes == 0) return not_judged("no actor changed " + key);
  finish(r, "every write to " + key + " came after its writer read the latest change (" +
                plural(writes, "write", "writes") + ", from the server's record)");
  return r;
}

constexpr FieldSpec kFields[] = {{.key = "key", .type = FieldType::Text, .required = true}};

}  // namespace

extern const CheckKind no_unseen_overwrite_check;
const CheckKind no_unseen_overwrite_check{
    "no_unseen_overwrite", kFields,
    "the server's record: no command changed the key after another actor's change that its actor "
    "had not read since (a plain command naming the key first, served in between) (fake backend "
    "only)",
    no_unseen_overwrite};

}  // namespace redlab::scenario::checks
