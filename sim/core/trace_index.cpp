// See trace_index.h.
#include "sim/core/trace_index.h"

#include <algorithm>

#include "sim/core/assert.h"

namespace redlab {

namespace {

const std::vector<size_t> kNone;

}  // namespace

void TraceIndex::reset() {
  *this = TraceIndex();
}

void TraceIndex::update(const Trace& trace) {
  if (trace_ != &trace || trace.size() < seen_) reset();
  trace_ = &trace;
  const size_t n = trace.size();
  begins_.resize(n, 0);
  ends_.resize(n, 0);
  for (; seen_ < n; seen_++) consume(seen_);
}

void TraceIndex::add_actor(const std::string& name) {
  if (name.empty() || actor_seen_.count(name)) return;
  if (server_info_.count(name) || name == "net") return;
  for (const std::string& r : resources_)
    if (r == name) return;
  actor_seen_.emplace(name, actors_.size());
  actors_.push_back(name);
}

TraceIndex::ServerInfo& TraceIndex::server_info(const std::string& name) {
  auto it = server_info_.find(name);
  if (it != server_info_.end()) return it->second;
  servers_.push_back(name);
  return server_info_[name];
}

namespace {

// What consume() does with an event of a kind: most kinds are none of these (other).
enum class K : uint8_t {
  other,
  run_start,
  server_start,
  resource_start,
  clock,
  key,
  dial,
  failover,
  violation,
  check,
  expectation
};

K role_of(std::string_view kind) {
  static const std::unordered_map<std::string_view, K> kKinds = {
      {"run_start", K::run_start},
      {"server_start", K::server_start},
      {"resource_start", K::resource_start},
      {"clock_jump", K::clock},
      {"server_restart", K::clock},
      {"key_set", K::key},
      {"key_del", K::key},
      {"key_expired", K::key},
      {"dial", K::dial},
      {"repl_failover", K::failover},
      {"violation", K::violation},
      {"check", K::check},
      {"expectation", K::expectation}};
  auto found = kKinds.find(kind);
  return found == kKinds.end() ? K::other : found->second;
}

}  // namespace

void TraceIndex::consume(size_t i) {
  const TraceEvent& e = trace_->events()[i];
  end_us_ = std::max(end_us_, e.time_us);
  // One lookup per event: the kind's list, and its role (found the first time it is seen).
  auto [kind_it, fresh] = by_kind_.try_emplace(e.kind);
  KindEvents& kind_entry = kind_it->second;
  if (fresh) {
    kind_entry.role = static_cast<uint8_t>(role_of(e.kind));
    kind_entry.events.reserve(32);  // a run has a few dozen kinds, most with many events
  }
  kind_entry.events.push_back(i);
  if (e.span > 0) {
    if (spans_.size() <= static_cast<size_t>(e.span))
      spans_.resize(static_cast<size_t>(e.span) + 1);
    spans_[static_cast<size_t>(e.span)].begin = i;
    begins_[i] = e.span;
  }
  if (e.ends > 0) {
    if (spans_.size() <= static_cast<size_t>(e.ends))
      spans_.resize(static_cast<size_t>(e.ends) + 1);
    spans_[static_cast<size_t>(e.ends)].end = i;
    ends_[i] = e.ends;
  }

  const std::string& kind = e.kind;
  const K k = static_cast<K>(kind_entry.role);
  if (k == K::other) {
    // Any other actor's event gives the actor a lane (a shared client's process, an actor the
    // trace did not announce), but not the network, servers or resources.
    if (e.actor == last_lane_) return;
    if (e.actor != "net" && !server_info_.count(e.actor)) {
      add_actor(e.actor);
      last_lane_ = e.actor;
    }
    return;
  }
  if (k == K::run_start) {
    if (const auto* who = e.list(F::who))
      for (const std::string& a : *who) add_actor(a);
    return;
  }
  if (k == K::server_start) {
    ServerInfo& s = server_info(std::string(e.str_or(F::server, e.actor)));
    s.source = std::string(e.str_or(F::source));
    if (const int64_t* clock = e.num(F::clock_unix_ms)) s.clock.emplace_back(e.time_us, *clock);
    return;
  }
  if (k == K::resource_start) {
    std::string name(e.str_or(F::resource, e.actor));
    if (std::find(resources_.begin(), resources_.end(), name) == resources_.end())
      resources_.push_back(name);
    return;
  }
  if (k == K::clock) {
    auto it = server_info_.find(e.str_or(F::server));
    if (it == server_info_.end()) return;
    ServerInfo& s = it->second;
    if (const int64_t* clock = e.num(F::clock_unix_ms)) s.clock.emplace_back(e.time_us, *clock);
    // A restarted server (no persistence) starts empty: every key it held is gone, by
    // nobody's command.
    if (kind == "server_restart") {
      std::vector<KeyState> lost;
      for (const auto& [k, state] : s.current) lost.push_back(state);
      for (KeyState& state : lost) {
        KeyChange c;
        c.event = i;
        c.time_us = e.time_us;
        c.state = std::move(state);
        s.current.erase(std::make_pair(c.state.db, c.state.key));
        s.changes.push_back(std::move(c));
        if (s.changes.size() % kCheckpointEvery == 0) s.checkpoints.push_back(s.current);
      }
    }
    return;
  }
  if (k == K::key) {
    ServerInfo& s = server_info(e.actor);
    KeyChange c;
    c.event = i;
    c.time_us = e.time_us;
    c.present = kind == "key_set";
    c.expired = kind == "key_expired";
    c.cause = e.num_or(F::cause, 0);
    c.state.db = static_cast<int>(e.num_or(F::db, 0));
    c.state.key = std::string(e.str_or(F::key));
    c.state.type = std::string(e.str_or(F::type));
    c.state.value = std::string(e.str_or(F::value));
    c.state.expire_at_ms = e.num_or(F::expire_at_ms, -1);
    auto k = std::make_pair(c.state.db, c.state.key);
    if (c.present)
      s.current[k] = c.state;
    else
      s.current.erase(k);
    s.changes.push_back(std::move(c));
    s.key_events.push_back(i);
    if (s.changes.size() % kCheckpointEvery == 0) s.checkpoints.push_back(s.current);
    return;
  }
  if (k == K::failover) {
    // The network's record of a failover: host (the old primary) is down for good.
    auto it = server_info_.find(e.str_or(F::host));
    if (it == server_info_.end()) return;
    it->second.down_event = i;
    it->second.down_us = e.time_us;
    it->second.led_to = std::string(e.str_or(F::server));
    return;
  }
  if (k == K::dial) {
    connections_[e.connection] = {std::string(e.str_or(F::server)), e.actor};
    add_actor(e.actor);
    return;
  }
  if (k == K::violation) {
    TraceViolation v;
    v.check = std::string(e.str_or(F::check));
    v.from_us = e.num_or(F::from_us, e.time_us);
    v.to_us = e.num_or(F::to_us, v.from_us);
    if (const auto* who = e.list(F::who)) v.who = *who;
    v.text = e.text;
    v.event = i;
    violations_.push_back(std::move(v));
    return;
  }
  if (k == K::check) {
    TraceCheck c;
    c.name = std::string(e.str_or(F::check));
    c.kind = std::string(e.str_or(F::check_kind));
    c.ok = e.num_or(F::ok, 1) != 0;
    c.violations = e.num_or(F::violations, 0);
    if (const int64_t* x = e.num(F::expected)) c.expected = *x != 0;
    std::string_view reason = e.str_or(F::reason);
    c.judged = reason != "not judged" && reason != "not judged on this backend";
    c.judged_here = reason != "not judged on this backend";
    c.summary = e.text;
    c.event = i;
    checks_.push_back(std::move(c));
    return;
  }
  if (k == K::expectation) {
    expectation_met_ = e.num_or(F::met, 1) != 0;
    expectation_text_ = e.text;
    return;
  }
}

std::string TraceIndex::server_source(const std::string& server) const {
  auto it = server_info_.find(server);
  return it == server_info_.end() ? std::string() : it->second.source;
}

size_t TraceIndex::span_begin(int64_t id) const {
  if (id <= 0 || static_cast<size_t>(id) >= spans_.size()) return kNoEvent;
  return spans_[static_cast<size_t>(id)].begin;
}

size_t TraceIndex::span_end(int64_t id) const {
  if (id <= 0 || static_cast<size_t>(id) >= spans_.size()) return kNoEvent;
  return spans_[static_cast<size_t>(id)].end;
}

size_t TraceIndex::end_of(size_t i) const {
  return i < begins_.size() ? span_end(begins_[i]) : kNoEvent;
}

size_t TraceIndex::begin_of(size_t i) const {
  return i < ends_.size() ? span_begin(ends_[i]) : kNoEvent;
}

std::vector<SlowlogRow> TraceIndex::slowlog_at(const std::string& server, TimeUs t) const {
  // The three kinds that change a slowlog, merged in trace order.
  std::vector<size_t> at;
  for (std::string_view kind : {"slowlog", "slowlog_reset", "server_restart"})
    for (size_t i : of_kind(kind)) at.push_back(i);
  std::sort(at.begin(), at.end());
  std::vector<SlowlogRow> log;  // oldest first while building
  int64_t next_id = 0;
  for (size_t i : at) {
    const TraceEvent& e = event(i);
    if (e.time_us > t) break;
    if (e.kind == "server_restart") {
      if (e.str_or(F::server) != server) continue;
      log.clear();
      next_id = 0;
      continue;
    }
    if (e.actor != server) continue;
    if (e.kind == "slowlog_reset") {
      log.clear();
      continue;
    }
    // An entry made after t is not there yet, and nor is any later one: a server makes its
    // entries in order.
    const TimeUs logged_at = e.num_or(F::logged_at_us, e.time_us);
    if (logged_at > t) break;
    const auto* argv = e.list(F::argv);
    log.push_back({next_id++, logged_at, e.num_or(F::duration_us, 0),
                   argv ? *argv : std::vector<std::string>{}, e.connection, i});
    const int64_t count = e.num_or(F::count, int64_t(log.size()));
    if (count >= 0 && size_t(count) < log.size())
      log.erase(log.begin(), log.begin() + ptrdiff_t(log.size() - size_t(count)));
  }
  std::reverse(log.begin(), log.end());
  return log;
}

const std::vector<size_t>& TraceIndex::of_kind(std::string_view kind) const {
  auto it = by_kind_.find(std::string(kind));
  return it == by_kind_.end() ? kNone : it->second.events;
}

std::string TraceIndex::connection_server(int64_t connection) const {
  auto it = connections_.find(connection);
  return it == connections_.end() ? std::string() : it->second.first;
}

std::string TraceIndex::connection_actor(int64_t connection) const {
  auto it = connections_.find(connection);
  return it == connections_.end() ? std::string() : it->second.second;
}

const std::vector<size_t>& TraceIndex::key_events(const std::string& server) const {
  auto it = server_info_.find(server);
  return it == server_info_.end() ? kNone : it->second.key_events;
}

TraceIndex::Keyspace TraceIndex::replay(const ServerInfo& s, size_t count) const {
  REDLAB_ASSERT(count <= s.changes.size() && "replay within the changes seen");
  if (count == s.changes.size()) return s.current;
  size_t checkpoint = count / kCheckpointEvery;  // checkpoints[checkpoint - 1] is after that many
  Keyspace k = checkpoint > 0 ? s.checkpoints[checkpoint - 1] : Keyspace{};
  for (size_t c = checkpoint * kCheckpointEvery; c < count; c++) {
    const KeyChange& ch = s.changes[c];
    auto key = std::make_pair(ch.state.db, ch.state.key);
    if (ch.present)
      k[key] = ch.state;
    else
      k.erase(key);
  }
  return k;
}

const std::vector<KeyChange>& TraceIndex::key_changes(const std::string& server) const {
  static const std::vector<KeyChange> none;
  auto it = server_info_.find(server);
  return it == server_info_.end() ? none : it->second.changes;
}

std::vector<KeyState> TraceIndex::flatten(const Keyspace& k) {
  std::vector<KeyState> out;
  out.reserve(k.size());
  for (const auto& [key, state] : k) out.push_back(state);
  return out;
}

std::vector<KeyState> TraceIndex::keyspace_at(const std::string& server, TimeUs t) const {
  auto it = server_info_.find(server);
  if (it == server_info_.end()) return {};
  const ServerInfo& s = it->second;
  if (s.down_us >= 0 && t >= s.down_us) return {};
  auto after = std::upper_bound(s.changes.begin(), s.changes.end(), t,
                                [](TimeUs x, const KeyChange& c) { return x < c.time_us; });
  return flatten(replay(s, static_cast<size_t>(after - s.changes.begin())));
}

std::vector<KeyState> TraceIndex::keyspace_before(const std::string& server, size_t event) const {
  auto it = server_info_.find(server);
  if (it == server_info_.end()) return {};
  const ServerInfo& s = it->second;
  if (s.down_event != kNoEvent && event > s.down_event) return {};
  auto before = std::lower_bound(s.changes.begin(), s.changes.end(), event,
                                 [](const KeyChange& c, size_t x) { return c.event < x; });
  return flatten(replay(s, static_cast<size_t>(before - s.changes.begin())));
}

TimeUs TraceIndex::failed_over_at(const std::string& server) const {
  auto it = server_info_.find(server);
  return it == server_info_.end() ? -1 : it->second.down_us;
}

std::string TraceIndex::failed_over_to(const std::string& server) const {
  auto it = server_info_.find(server);
  return it == server_info_.end() ? std::string() : it->second.led_to;
}

std::optional<KeyState> TraceIndex::key_before(const std::string& server, int db,
                                               std::string_view key, size_t event) const {
  auto it = server_info_.find(server);
  if (it == server_info_.end()) return std::nullopt;
  const ServerInfo& s = it->second;
  // The last change of that key before `event`, walking back (keys change rarely).
  auto before = std::lower_bound(s.changes.begin(), s.changes.end(), event,
                                 [](const KeyChange& c, size_t x) { return c.event < x; });
  for (auto c = before; c != s.changes.begin();) {
    --c;
    if (c->state.db == db && c->state.key == key) {
      if (!c->present) return std::nullopt;
      return c->state;
    }
  }
  return std::nullopt;
}

int64_t TraceIndex::server_clock_ms(const std::string& server, TimeUs t) const {
  auto it = server_info_.find(server);
  if (it == server_info_.end() || it->second.clock.empty()) return -1;
  const auto& clock = it->second.clock;
  auto at =
      std::upper_bound(clock.begin(), clock.end(), t,
                       [](TimeUs x, const std::pair<TimeUs, int64_t>& c) { return x < c.first; });
  if (at == clock.begin()) return -1;
  --at;
  return at->second + (t - at->first) / 1000;
}

}  // namespace redlab
