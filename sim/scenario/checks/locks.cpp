// The lock checks: what actors believed about a lock, against the server's own record of its key.
#include <algorithm>
#include <set>

#include "sim/scenario/checks/common.h"

namespace redlab::scenario::checks {

namespace {

CheckResult mutual_exclusion(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::vector<Hold> hs = holds(ix, arg(args, "lock"));
  for (size_t i = 0; i < hs.size(); i++)
    for (size_t j = i + 1; j < hs.size(); j++) {
      const Hold& a = hs[i];
      const Hold& b = hs[j];
      if (b.lock != a.lock || b.actor == a.actor) continue;
      TimeUs from = std::max(a.from_us, b.from_us), to = std::min(a.to_us, b.to_us);
      if (to <= from) continue;
      r.violations.push_back(Violation{from,
                                       to,
                                       {a.actor, b.actor},
                                       a.actor + " and " + b.actor + " held " + a.lock +
                                           " together from " + format_time(from) + " to " +
                                           format_time(to)});
    }
  // A Redlock believed in without its token on a quorum of the servers: a holder by its own
  // count only (a wrong quorum, a reply misread), which a second holder need not respect.
  for (const Hold& h : hs)
    if (!h.backed)
      r.violations.push_back(
          Violation{h.from_us,
                    h.to_us,
                    {h.actor},
                    h.actor + " believed it held " + h.lock + " from " + format_time(h.from_us) +
                        ", but its token was on " + std::to_string(h.on_servers) +
                        " of the servers then, below the quorum of " + std::to_string(h.quorum)});
  if (hs.empty()) return not_judged("nobody acquired the lock");
  finish(r, "never two holders at once (" + plural(hs.size(), "hold", "holds") + ")");
  return r;
}

// How a deletion is named: "release script", "transaction", "DEL".
std::string how_of(const std::string& cmd) {
  if (cmd == "EVAL" || cmd == "EVALSHA" || cmd == "EVAL_RO" || cmd == "EVALSHA_RO")
    return "release script";
  if (cmd == "EXEC") return "transaction";
  return cmd.empty() ? "command" : cmd;
}

CheckResult no_foreign_unlock(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string lock = arg(args, "lock");
  std::vector<std::string> servers = lock_servers(ix, lock);
  if (server_events_for(ix, servers)) {
    // The server's record: every key_del of the lock key names the command that did it and
    // the token the key held.
    size_t deletions = 0;
    for (const std::string& server : servers)
      for (const KeyChange& c : ix.key_changes(server)) {
        if (c.present || c.expired || (!lock.empty() && c.state.key != lock)) continue;
        if (lock.empty() && c.state.key.rfind("lock", 0) != 0) continue;
        std::string actor = actor_of_cause(ix, c.cause);
        if (actor.empty()) continue;
        deletions++;
        std::string own = belief_token(ix, actor, c.state.key, c.event);
        if (own == c.state.value) continue;
        // A Redlock try that fell short of the quorum releases what it took on every server
        // (go-redsync does): its own token, from an acquisition still under way.
        if (attempt_token(ix, actor, c.state.key, c.event) == c.state.value) continue;
        Writer owner = writer_of(ix, server, c.state.key, c.state.value, c.event);
        std::string how = how_of(command_name(ix, c.cause));
        std::string text =
            actor + "'s " + how + " at " + format_time(c.time_us) + " removed " + c.state.key;
        std::vector<std::string> who{actor};
        if (owner.found) {
          text += ", which " + owner.actor + " had held since " + format_time(owner.at_us);
          who.push_back(owner.actor);
        } else {
          text += ", which held a token " + actor + " never had";
        }
        r.violations.push_back(Violation{c.time_us, c.time_us, who, text});
      }
    if (deletions == 0 && ix.of_kind("lock_release").empty())
      return not_judged("nobody released the lock");
    finish(r, "every deletion of the lock removed its deleter's own token (" +
                  plural(deletions, "deletion", "deletions") + ", from the server's record)");
    return r;
  }
  // A real server: only the clients' view. A release that reports a deletion (DEL's reply,
  // the script's reply) counts as one, by the last acquirer's name. Releases are counted as
  // the fake counts them, every lock_release begun: a Redlock release that deleted on fewer
  // servers than its quorum (its keys had expired) was a release that removed nobody's lock.
  size_t releases = 0;
  for (size_t i : ix.of_kind("lock_release"))
    if (lock.empty() || ix.event(i).str_or(F::lock) == lock) releases++;
  for (size_t i : ix.of_kind("lock_released")) {
    const TraceEvent& e = ix.event(i);
    std::string l(e.str_or(F::lock));
    if (!lock.empty() && l != lock) continue;
    std::string reply(e.str_or(F::reply));
    if (reply == "(integer) 0" || reply == "0") continue;
    std::string owner;
    TimeUs since = 0;
    for (size_t j : ix.of_kind("lock_acquired")) {
      if (j >= i) break;
      const TraceEvent& a = ix.event(j);
      if (a.str_or(F::lock) == l) {
        owner = a.actor;
        since = a.time_us;
      }
    }
    if (owner.empty() || owner == e.actor) continue;
    r.violations.push_back(Violation{e.time_us,
                                     e.time_us,
                                     {e.actor, owner},
                                     e.actor + "'s release at " + format_time(e.time_us) +
                                         " removed " + l + ", which " + owner + " had held since " +
                                         format_time(since) + " (as seen by clients)"});
  }
  if (releases == 0) return not_judged("nobody released the lock");
  finish(r, "every release removed only the releaser's own lock (" +
                plural(releases, "release", "releases") + ", as seen by clients)");
  return r;
}

// A release step: lock_release .. its end, with the commands it sent. A Redlock's release
// (its lock_release lists servers) is judged on each server apart: the commands that went
// there (by their connection's server) and that server's answer (its redlock_node event).
CheckResult release_removes_own_lock(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string lock = arg(args, "lock");
  std::vector<std::string> servers = lock_servers(ix, lock);
  if (!server_events_for(ix, servers))
    return not_judged_here("the server's own record of the lock key");
  size_t judged = 0;
  for (size_t i : ix.of_kind("lock_release")) {
    const TraceEvent& rel = ix.event(i);
    std::string l(rel.str_or(F::lock));
    if (!lock.empty() && l != lock) continue;
    std::string token(rel.str_or(F::token));
    size_t end = ix.end_of(i);
    size_t until = end == kNoEvent ? ix.size() : end;
    std::string who = rel.actor;
    if (end == kNoEvent) {
      judged++;
      r.violations.push_back(
          Violation{rel.time_us,
                    ix.end_us(),
                    {who},
                    who + "'s release of " + l + " at " + format_time(rel.time_us) +
                        " never finished (still waiting at the end of the run: a script that "
                        "does not end?)"});
      continue;
    }
    const TraceEvent& fin = ix.event(end);
    // What the caller learnt from one server: failed (an error, no answer), deleted or not.
    struct Answer {
      bool failed = false, said_deleted = false;
      std::string reply, error;
      TimeUs at_us = 0;
    };
    const auto* redlock_servers = rel.list(F::servers);
    std::vector<std::string> on =
        redlock_servers ? *redlock_servers
                        : std::vector<std::string>{std::string(rel.str_or(F::server))};
    for (const std::string& server : on) {
      Answer ans;
      if (redlock_servers) {
        bool found = false;
        for (size_t n : ix.of_kind("redlock_node")) {
          if (n <= i) continue;
          if (n >= until) break;
          const TraceEvent& ne = ix.event(n);
          if (ne.actor != who || ne.step != rel.step || ne.str_or(F::server) != server) continue;
          found = true;
          std::string reason(ne.str_or(F::reason));
          ans.failed = reason == "error" || reason == "no answer in time";
          ans.said_deleted = reason == "deleted";
          ans.reply = std::string(ne.str_or(F::reply));
          ans.error = reason == "error" ? std::string(ne.str_or(F::error)) : reason;
          ans.at_us = ne.time_us;
        }
        if (!found) continue;
      } else {
        ans.failed = fin.kind == "lock_release_failed";
        ans.reply = std::string(fin.str_or(F::reply));
        ans.said_deleted = fin.kind == "lock_released" && ans.reply != "(integer) 0";
        ans.error = std::string(fin.str_or(F::error));
        ans.at_us = fin.time_us;
      }
      // The release's commands to this server: the actor's command events of this step
      // inside the span.
      std::set<int64_t> causes;
      for (size_t c : ix.of_kind("command")) {
        if (c <= i) continue;
        if (c >= until) break;
        const TraceEvent& ce = ix.event(c);
        if (ce.actor != who || ce.step != rel.step) continue;
        if (redlock_servers && ix.connection_server(ce.connection) != server) continue;
        causes.insert(ce.span);
      }
      // What the server did for them: when it first acted on one (its served event, or a key
      // event the command caused, whichever the trace has first), and any deletion of the key.
      size_t first_served = kNoEvent;
      for (const char* kind : {"served", "busy_reply"})  // a BUSY refusal reached it too
        for (size_t sv : ix.of_kind(kind)) {
          if (sv <= i) continue;
          if (sv >= until || sv >= first_served) break;
          if (causes.count(ix.event(sv).num_or(F::cause, 0))) {
            first_served = sv;
            break;
          }
        }
      for (const KeyChange& c : ix.key_changes(server)) {
        if (c.event <= i || c.event >= first_served || c.event >= until) continue;
        if (causes.count(c.cause)) {
          first_served = c.event;
          break;
        }
      }
      if (first_served == kNoEvent) continue;  // it never reached the server: not its fault
      judged++;
      // Left in place: the key held the releaser's token when its release first reached the
      // server, and still holds it when the release ends. A key whose TTL ran out meanwhile
      // (an EVALSHA refused with NOSCRIPT, then the EVAL finding the key expired) was not left
      // by the release: the server removed it.
      std::optional<KeyState> before = ix.key_before(server, 0, l, first_served);
      std::optional<KeyState> after = ix.key_before(server, 0, l, until);
      bool held_own = before && before->value == token && after && after->value == token;
      bool deleted = false, deleted_own = false;
      for (const KeyChange& c : ix.key_changes(server)) {
        if (c.event < first_served) continue;
        if (c.event >= until) break;
        if (c.state.key == l && !c.present && !c.expired && causes.count(c.cause)) {
          deleted = true;
          deleted_own = deleted_own || c.state.value == token;
        }
      }
      std::string at = " at " + format_time(ans.at_us) + (redlock_servers ? " on " + server : "");
      if (held_own && !deleted_own) {
        std::string why = ans.failed ? "failed (" + ans.error + ")" : "returned " + ans.reply;
        r.violations.push_back(Violation{ans.at_us,
                                         ans.at_us,
                                         {who},
                                         who + "'s release" + at + " " + why + " and left " + l +
                                             " in place, still holding " + who + "'s own token"});
      } else if (deleted != ans.said_deleted && !ans.failed) {
        r.violations.push_back(
            Violation{ans.at_us,
                      ans.at_us,
                      {who},
                      who + "'s release" + at + (deleted ? " removed " : " did not remove ") + l +
                          " but returned " + ans.reply +
                          ": the caller believes the opposite of what happened"});
      }
    }
  }
  if (judged == 0) return not_judged("no release reached the server");
  finish(r, "every release removed the releaser's own lock and said so (" +
                plural(judged, "release", "releases") + ", from the server's record)");
  return r;
}

// Every acquisition an actor believed in took the lock on the server: among the key events
// its acquire commands caused is the lock key set to its token.
CheckResult acquire_took_lock(const CheckArgs& args, const TraceIndex& ix) {
  CheckResult r;
  std::string lock = arg(args, "lock");
  std::vector<std::string> servers = lock_servers(ix, lock);
  if (!server_events_for(ix, servers))
    return not_judged_here("the server's own record of the lock key");
  size_t acquisitions = 0;
  for (size_t i : ix.of_kind("lock_acquired")) {
    const TraceEvent& got = ix.event(i);
    std::string l(got.str_or(F::lock));
    if (!lock.empty() && l != lock) continue;
    acquisitions++;
    std::string token(got.str_or(F::token));
    std::string server(got.str_or(F::server));
    size_t begin = ix.begin_of(i);  // the lock_acquire that this acquisition ended
    if (begin == kNoEvent) continue;
    std::set<int64_t> causes;
    for (size_t c : ix.of_kind("command")) {
      if (c <= begin) continue;
      if (c >= i) break;
      const TraceEvent& ce = ix.event(c);
      if (ce.actor == got.actor && ce.step == got.step) causes.insert(ce.span);
    }
    auto set_own = [&](const std::string& on) {
      for (const KeyChange& c : ix.key_changes(on)) {
        if (c.event <= begin) continue;
        if (c.event >= i) break;
        if (c.present && c.state.key == l && c.state.value == token && causes.count(c.cause))
          return true;
      }
      return false;
    };
    // A Redlock: every server it counted as taken.
    std::string where;
    if (const auto* took = got.list(F::servers)) {
      server.clear();
      for (const std::string& on : *took)
        if (!set_own(on)) {
          server = on;
          where = " on " + on;
          break;
        }
      if (server.empty()) continue;
    } else if (set_own(server)) {
      continue;
    }
    std::optional<KeyState> held = ix.key_before(server, 0, l, i);
    std::string what =
        !held ? "the key did not exist"
              : "it held " + (writer_of(ix, server, l, held->value, i).found
                                  ? writer_of(ix, server, l, held->value, i).actor + "'s token"
                                  : "\"" + held->value + "\"");
    r.violations.push_back(Violation{
        got.time_us,
        got.time_us,
        {got.actor},
        got.actor + " believed it acquired " + l + " at " + format_time(got.time_us) +
            ", but the server never set the key to its token" + where + " (" + what + ")"});
  }
  if (acquisitions == 0) return not_judged("nobody acquired the lock");
  finish(r, "every acquisition set the lock key to its holder's token (" +
                plural(acquisitions, "acquisition", "acquisitions") +
                ", from the server's record)");
  return r;
}

constexpr FieldSpec kLockField[] = {
    {.key = "lock", .type = FieldType::Text, .absent = "every lock"}};

}  // namespace

extern const CheckKind mutual_exclusion_check, no_foreign_unlock_check,
    release_removes_own_lock_check, acquire_took_lock_check;

const CheckKind mutual_exclusion_check{
    "mutual_exclusion", kLockField,
    "what the actors believed: no two actors held the lock (lock_acquired .. hold_end, or the "
    "start of the holder's release) at the same time; a Redlock's hold, from the servers' record, "
    "begins when its token is on a quorum of them and ends at its validity end at the latest, and "
    "a Redlock believed in with its token on fewer servers than the quorum is a violation",
    mutual_exclusion};
const CheckKind no_foreign_unlock_check{
    "no_foreign_unlock", kLockField,
    "the server's record: no command deleted the lock key while it held another actor's token "
    "(on a real server: releases that reported a deletion, by the last acquirer)",
    no_foreign_unlock};
const CheckKind release_removes_own_lock_check{
    "release_removes_own_lock", kLockField,
    "the server's record: a release that reached the server while the key held the releaser's "
    "token deleted it (unless the key expired meanwhile), and its reply said whether it deleted "
    "(fake backend only)",
    release_removes_own_lock};
const CheckKind acquire_took_lock_check{
    "acquire_took_lock", kLockField,
    "the server's record: every acquisition an actor believed in set the lock key to its token "
    "(fake backend only)",
    acquire_took_lock};

}  // namespace redlab::scenario::checks
