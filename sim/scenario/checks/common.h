// What the check kinds share: their verdict helpers and the few readings of the trace that
// more than one of them makes (beliefs about a lock, the server's record of a lock key).
// Each reading comes from one kind of event, so that every check can say what it judged from.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario/checks.h"

namespace redlab::scenario::checks {

std::string arg(const CheckArgs& a, const std::string& k, const std::string& def = {});
// "a, b and c"
std::string names(const std::vector<std::string>& v);
// "1 hold", "3 holds"
std::string plural(size_t n, const std::string& one, const std::string& many);
// Sorts the violations by time and sets ok and the summary (the first violation, "+N more",
// then `more`; or ok_summary).
void finish(CheckResult& r, const std::string& ok_summary, const std::string& more = {});
// Nothing to judge from in this run: n/a, with the reason.
CheckResult not_judged(const std::string& why);
// The run's backend has no record to judge this check from (a real server's own key events
// do not reach the trace): not judged *here*, which the expectation leaves out, unlike a run
// in which nothing happened to judge.
CheckResult not_judged_here(const std::string& what);

// The actor whose client command began span `cause` ("" for the server itself / unknown).
std::string actor_of_cause(const TraceIndex& ix, int64_t cause);
// When the span begun by begin_event ended (the end of the run if it did not).
TimeUs end_time(const TraceIndex& ix, size_t begin_event);
// The command (upper case) whose span is `cause`, "" if unknown.
std::string command_name(const TraceIndex& ix, int64_t cause);

// What actors believed: a hold is lock_acquired .. hold_end (the span), or the start of the
// holder's release if that comes first: an actor that has begun to release is done with what
// the lock protects, so B acquiring while A waits for its DEL's reply is no overlap. (Without
// this, B's SET NX served just after A's DEL can reach B before the DEL's reply reaches A: a
// jitter race, not two workers in the critical section.)
//
// A Redlock's hold (its lock_acquired has a quorum) is judged from the servers' events where
// they are recorded: it begins when its token was on a quorum of the servers it tried (the
// quorum-th SET that put it there) and ends at its validity end (until_us) at the latest. An
// acquisition whose token was on fewer servers than the quorum when the actor believed it had
// the lock is `backed = false` (mutual_exclusion reports it); its hold begins at lock_acquired.
struct Hold {
  std::string lock, actor, token, server;
  TimeUs from_us = 0, to_us = 0;
  size_t event = 0;
  int64_t quorum = 0;     // a Redlock's quorum; 0 for a single-server lock
  size_t on_servers = 0;  // a Redlock: the servers that held its token when it believed it
  bool backed = true;     // a Redlock: on_servers >= quorum (or no server events to judge)
};
std::vector<Hold> holds(const TraceIndex& ix, const std::string& only);

// The servers a lock lives on (from the actors' lock events), in first-seen order.
std::vector<std::string> lock_servers(const TraceIndex& ix, const std::string& lock);
// Every one of these servers recorded its own key events (the fake does).
bool server_events_for(const TraceIndex& ix, const std::vector<std::string>& servers);

// The holder (as the server recorded it) of the token a key held: the actor whose command
// wrote that value into the key last before `before_event`, and when.
struct Writer {
  std::string actor;
  TimeUs at_us = 0;
  bool found = false;
};
Writer writer_of(const TraceIndex& ix, const std::string& server, const std::string& key,
                 const std::string& value, size_t before_event);

// The token an actor believed it held for `lock` at trace position `event` (its latest
// lock_acquired before it), "" if none.
std::string belief_token(const TraceIndex& ix, const std::string& actor, const std::string& lock,
                         size_t event);
// The token of the actor's latest acquisition of `lock` (lock_acquire) before `event`, "" if
// none: an acquisition still under way owns its token before it believes it holds the lock.
std::string attempt_token(const TraceIndex& ix, const std::string& actor, const std::string& lock,
                          size_t event);

}  // namespace redlab::scenario::checks
