// See common.h.
#include "sim/scenario/checks/common.h"

#include <algorithm>
#include <optional>

namespace redlab::scenario::checks {

std::string arg(const CheckArgs& a, const std::string& k, const std::string& def) {
  auto it = a.text.find(k);
  return it == a.text.end() ? def : it->second;
}

std::string names(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); i++) {
    if (i > 0) out += i + 1 == v.size() ? " and " : ", ";
    out += v[i];
  }
  return out;
}

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void finish(CheckResult& r, const std::string& ok_summary, const std::string& more) {
  std::sort(r.violations.begin(), r.violations.end(),
            [](const Violation& x, const Violation& y) { return x.from_us < y.from_us; });
  r.ok = r.violations.empty();
  if (r.ok) {
    r.summary = ok_summary;
  } else {
    r.summary = r.violations[0].text;
    if (r.violations.size() > 1)
      r.summary += " (+" + std::to_string(r.violations.size() - 1) + " more)";
    if (!more.empty()) r.summary += "; " + more;
  }
}

CheckResult not_judged(const std::string& why) {
  CheckResult r;
  r.ok = true;
  r.judged = false;
  r.summary = "not judged: " + why;
  return r;
}

CheckResult not_judged_here(const std::string& what) {
  CheckResult r = not_judged("it needs " + what + ", which only the fake backend records");
  r.backend_lacks = true;
  return r;
}

std::string actor_of_cause(const TraceIndex& ix, int64_t cause) {
  size_t i = ix.span_begin(cause);
  return i == kNoEvent ? std::string() : ix.event(i).actor;
}

TimeUs end_time(const TraceIndex& ix, size_t begin_event) {
  size_t e = ix.end_of(begin_event);
  return e == kNoEvent ? ix.end_us() : ix.event(e).time_us;
}

namespace {

// The servers a Redlock acquisition tried (its lock_acquire's list), else those it took.
std::vector<std::string> redlock_servers(const TraceIndex& ix, size_t acquired) {
  size_t begin = ix.begin_of(acquired);
  const auto* tried = begin == kNoEvent ? nullptr : ix.event(begin).list(F::servers);
  if (!tried) tried = ix.event(acquired).list(F::servers);
  return tried ? *tried : std::vector<std::string>{};
}

// See Hold: a Redlock's hold from the servers' record, within its validity.
void redlock_hold(const TraceIndex& ix, size_t acquired, Hold& h) {
  const TraceEvent& e = ix.event(acquired);
  h.to_us = std::min<TimeUs>(h.to_us, e.num_or(F::until_us, h.to_us));
  std::vector<std::string> servers = redlock_servers(ix, acquired);
  // The quorum of the servers it tried, whatever quorum the acquisition claimed.
  h.quorum = std::max<int64_t>(h.quorum, static_cast<int64_t>(servers.size() / 2 + 1));
  if (!server_events_for(ix, servers)) return;  // a real server: the actor's belief alone
  std::vector<TimeUs> set_at;
  for (const std::string& server : servers) {
    // Since when the key has held the token without a break, at the acquisition.
    std::optional<TimeUs> since;
    for (const KeyChange& c : ix.key_changes(server)) {
      if (c.event >= acquired) break;
      if (c.state.key != h.lock) continue;
      if (c.present && c.state.value == h.token) {
        if (!since) since = c.time_us;
      } else {
        since.reset();
      }
    }
    if (since) set_at.push_back(*since);
  }
  h.on_servers = set_at.size();
  h.backed = static_cast<int64_t>(set_at.size()) >= h.quorum;
  if (!h.backed) return;
  std::sort(set_at.begin(), set_at.end());
  h.from_us = set_at[static_cast<size_t>(h.quorum) - 1];
}

}  // namespace

std::vector<Hold> holds(const TraceIndex& ix, const std::string& only) {
  std::vector<Hold> out;
  for (size_t i : ix.of_kind("lock_acquired")) {
    const TraceEvent& e = ix.event(i);
    Hold h;
    h.lock = std::string(e.str_or(F::lock));
    if (!only.empty() && h.lock != only) continue;
    h.actor = e.actor;
    h.token = std::string(e.str_or(F::token));
    h.server = std::string(e.str_or(F::server));
    h.from_us = e.time_us;
    size_t end = ix.end_of(i);
    h.to_us = end == kNoEvent ? ix.end_us() : ix.event(end).time_us;
    for (size_t k : ix.of_kind("lock_release")) {
      if (k <= i) continue;
      if (end != kNoEvent && k >= end) break;
      const TraceEvent& rel = ix.event(k);
      if (rel.actor == h.actor && rel.str_or(F::lock) == h.lock) {
        h.to_us = std::min(h.to_us, rel.time_us);
        break;
      }
    }
    h.event = i;
    h.quorum = e.num_or(F::quorum, 0);
    if (h.quorum > 0) redlock_hold(ix, i, h);
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<std::string> lock_servers(const TraceIndex& ix, const std::string& lock) {
  std::vector<std::string> out;
  for (const char* kind : {"lock_acquire", "lock_release"})
    for (size_t i : ix.of_kind(kind)) {
      const TraceEvent& e = ix.event(i);
      if (!lock.empty() && e.str_or(F::lock) != lock) continue;
      std::string server(e.str_or(F::server));
      if (!server.empty() && std::find(out.begin(), out.end(), server) == out.end())
        out.push_back(server);
      if (const auto* list = e.list(F::servers))  // a Redlock's
        for (const std::string& s : *list)
          if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
  return out;
}

bool server_events_for(const TraceIndex& ix, const std::vector<std::string>& servers) {
  if (servers.empty()) return false;
  for (const std::string& s : servers)
    if (!ix.has_server_events(s)) return false;
  return true;
}

Writer writer_of(const TraceIndex& ix, const std::string& server, const std::string& key,
                 const std::string& value, size_t before_event) {
  Writer w;
  for (const KeyChange& c : ix.key_changes(server)) {
    if (c.event >= before_event) break;
    if (!c.present || c.state.key != key || c.state.value != value) continue;
    std::string actor = actor_of_cause(ix, c.cause);
    if (actor.empty()) continue;
    // The first write of this value in a row is the acquisition; later ones (PEXPIRE by a
    // watchdog) keep the same writer.
    if (!w.found || w.actor != actor) w = Writer{actor, c.time_us, true};
  }
  return w;
}

std::string belief_token(const TraceIndex& ix, const std::string& actor, const std::string& lock,
                         size_t event) {
  std::string token;
  for (size_t i : ix.of_kind("lock_acquired")) {
    if (i >= event) break;
    const TraceEvent& e = ix.event(i);
    if (e.actor == actor && e.str_or(F::lock) == lock) token = std::string(e.str_or(F::token));
  }
  return token;
}

std::string attempt_token(const TraceIndex& ix, const std::string& actor, const std::string& lock,
                          size_t event) {
  std::string token;
  for (size_t i : ix.of_kind("lock_acquire")) {
    if (i >= event) break;
    const TraceEvent& e = ix.event(i);
    if (e.actor == actor && e.str_or(F::lock) == lock) token = std::string(e.str_or(F::token));
  }
  return token;
}

std::string command_name(const TraceIndex& ix, int64_t cause) {
  size_t i = ix.span_begin(cause);
  if (i == kNoEvent) return "";
  const auto* argv = ix.event(i).list(F::argv);
  if (!argv || argv->empty()) return "";
  std::string name = (*argv)[0];
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace redlab::scenario::checks
