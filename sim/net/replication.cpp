// Replication links between fake servers (see network.h, "Replication between servers", and
// sim/fake/replication.cpp for what the servers send and do).
//
// A link is not a client connection: the stream is a TCP byte stream whose losses TCP repairs,
// so a partition holds it back (parts wait, in order, and go when the partition heals, as a
// partial resync from the backlog would bring them) instead of dropping it. Latency and jitter
// are the link's (replica, primary) of the network model, drawn from its own stream; a lag
// fault adds to every part sent while it lasts. Acks travel back on the same link: once a
// second (replicationCron's REPLCONF ACK) and at once after a REPLCONF GETACK.
#include "sim/core/assert.h"
#include "sim/net/network.h"

namespace redlab::net {

namespace {
constexpr TimeUs kAckPeriodUs = 1000000;  // replicationCron: an ACK every second
}  // namespace

Network::ReplLink* Network::repl_link(std::string_view replica) {
  auto it = repl_links_.find(replica);
  return it == repl_links_.end() || !it->second.active ? nullptr : &it->second;
}

std::string Network::resolve(std::string_view name) const {
  auto it = aliases_.find(name);
  return std::string(it == aliases_.end() ? name : std::string_view(it->second));
}

void Network::add_replication(std::string_view primary_name, std::string_view replica_name) {
  fake::Server* primary = server(primary_name);
  fake::Server* replica = server(replica_name);
  REDLAB_ASSERT(primary && replica && primary != replica && "two servers the network knows");
  REDLAB_ASSERT(repl_links_.count(replica_name) == 0 && "a replica follows one primary");
  ReplLink& r = repl_links_[std::string(replica_name)];
  r.primary = std::string(primary_name);
  r.replica = std::string(replica_name);
  TimeUs now = scheduler_.now_us();
  primary->advance(now);
  replica->advance(now);
  primary->attach_replica(r.replica, now);
  replica->become_replica(r.primary, primary->replid(), primary->master_repl_offset(), now);
  std::weak_ptr<bool> alive = alive_;
  std::string name = r.replica;
  primary->on_propagate = [this, alive, primary_name = r.primary](
                              TimeUs, const std::vector<Argv>& commands, int64_t offset) {
    auto a = alive.lock();
    if (!a || !*a) return;
    // Every replica of this primary gets the part.
    for (auto& [replica, link] : repl_links_)
      if (link.active && link.primary == primary_name)
        repl_send(link, ReplLink::Part{commands, offset});
  };
  r.ack_timer = scheduler_.schedule_at(now + kAckPeriodUs, [this, alive, name] {
    auto a = alive.lock();
    if (a && *a) repl_tick(name);
  });
  if (trace_)
    emit(net_event("repl_link", -1, r.replica + " replicates " + r.primary)
             .with(F::server, r.primary)
             .with(F::host, r.replica));
}

void Network::repl_tick(const std::string& replica) {
  ReplLink* r = repl_link(replica);
  if (!r) return;
  repl_ack(*r);
  std::weak_ptr<bool> alive = alive_;
  r->ack_timer = scheduler_.schedule_at(scheduler_.now_us() + kAckPeriodUs, [this, alive, replica] {
    auto a = alive.lock();
    if (a && *a) repl_tick(replica);
  });
}

TimeUs Network::repl_delay(ReplLink& r) {
  Link& l = link_state(r.replica, r.primary);
  TimeUs delay_us = l.config.latency_us;
  if (l.config.jitter_us > 0)
    delay_us += static_cast<TimeUs>(l.prng.uniform(static_cast<uint64_t>(l.config.jitter_us) + 1));
  return delay_us;
}

void Network::repl_send(ReplLink& r, ReplLink::Part part) {
  if (link_state(r.replica, r.primary).partitioned || !r.held.empty()) {
    r.held.push_back(std::move(part));
    return;
  }
  // The part leaves when the primary's command has ended (now, as the server is driven).
  TimeUs at = add_saturating_us(scheduler_.now_us(), repl_delay(r) + r.lag_us);
  at = std::max(at, r.last_to_replica_us);
  r.last_to_replica_us = at;
  std::weak_ptr<bool> alive = alive_;
  std::string name = r.replica;
  scheduler_.schedule_at(at, [this, alive, name, part = std::move(part)] {
    auto a = alive.lock();
    if (!a || !*a) return;
    ReplLink* link = repl_link(name);
    if (!link) return;  // failed over meanwhile: the part is lost with the old primary
    auto port = servers_.find(name);
    fake::Server* replica = port->second.server;
    TimeUs now = scheduler_.now_us();
    replica->advance(now);
    bool ack_now = replica->replicated(part.commands, part.offset, now);
    kick(port->first);
    if (ack_now) repl_ack(*link);
  });
}

void Network::repl_ack(ReplLink& r) {
  if (link_state(r.replica, r.primary).partitioned) return;  // the next one carries it
  fake::Server* replica = server(r.replica);
  int64_t offset = replica->replica_offset();
  TimeUs at = add_saturating_us(scheduler_.now_us(), repl_delay(r));
  at = std::max(at, r.last_to_primary_us);
  r.last_to_primary_us = at;
  std::weak_ptr<bool> alive = alive_;
  std::string name = r.replica;
  scheduler_.schedule_at(at, [this, alive, name, offset] {
    auto a = alive.lock();
    if (!a || !*a) return;
    ReplLink* link = repl_link(name);
    if (!link) return;
    auto port = servers_.find(link->primary);
    if (port->second.down) return;
    TimeUs now = scheduler_.now_us();
    port->second.server->advance(now);
    port->second.server->replica_acked(name, offset, now);
    // A WAIT the ack released is answered now (processClientsWaitingReplicas, in the same
    // event-loop turn): its reply goes out here, not with the server's next event.
    drive(port->first);
  });
}

void Network::repl_heal(std::string_view host, std::string_view server_name) {
  for (auto& [name, r] : repl_links_) {
    if (!r.active) continue;
    bool ours = (r.replica == host && r.primary == server_name) ||
                (r.primary == host && r.replica == server_name);
    if (!ours) continue;
    std::deque<ReplLink::Part> held = std::exchange(r.held, {});
    for (ReplLink::Part& part : held) repl_send(r, std::move(part));
    repl_ack(r);
  }
}

void Network::set_replication_lag(std::string_view replica, TimeUs extra_us) {
  REDLAB_ASSERT(extra_us >= 0 && "a lag is not negative");
  if (ReplLink* r = repl_link(replica)) r->lag_us = extra_us;
}

std::string Network::failover(std::string_view replica_name) {
  ReplLink* r = repl_link(replica_name);
  if (!r) return "";
  std::string primary = r->primary;
  r->active = false;
  scheduler_.cancel(r->ack_timer);
  TimeUs now = scheduler_.now_us();
  fake::Server* replica = server(replica_name);
  fake::Server* old = server(primary);
  old->advance(now);
  old->detach_replica(r->replica);
  replica->advance(now);
  replica->promote(now);
  kick(r->replica);
  set_server_down(primary, true);
  aliases_[primary] = std::string(replica_name);
  if (trace_)
    emit(net_event("repl_failover", -1, primary + " now leads to " + std::string(replica_name))
             .with(F::server, std::string(replica_name))
             .with(F::host, primary));
  return primary;
}

}  // namespace redlab::net
