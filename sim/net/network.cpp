// See network.h. Every message is one Scheduler event at its arrival time; the fake server is
// driven by one more event per server, always at its next_event_us().
#include "sim/net/network.h"

#include <algorithm>

#include "sim/core/assert.h"
#include "sim/core/cmdline.h"
#include "sim/core/reply.h"

namespace redlab::net {

uint64_t link_stream(std::string_view host, std::string_view server) {
  return fnv1a(server, fnv1a(std::string_view("\0", 1), fnv1a(host)));
}

namespace {

const char* direction_name(Direction d) {
  return d == Direction::ToServer ? "to server" : "to client";
}

}  // namespace

Network::Network(Scheduler& scheduler, uint64_t seed, Trace* trace)
    : scheduler_(scheduler), seed_(seed), trace_(trace), alive_(std::make_shared<bool>(true)) {}

Network::~Network() {
  *alive_ = false;
  for (auto& [name, port] : servers_) scheduler_.cancel(port.next_event);
}

// ---------------------------------------------------------------------------------------
// Topology
// ---------------------------------------------------------------------------------------

void Network::add_server(std::string name, fake::Server* server, TimeUs clock_offset_us) {
  REDLAB_ASSERT(server != nullptr && "a server to add");
  REDLAB_ASSERT(servers_.count(name) == 0 && "server names are unique");
  if (clock_offset_us != 0) server->jump_clock(clock_offset_us, scheduler_.now_us());
  servers_[name].server = server;
  observe(name, server);
  kick(name);
}

void Network::observe(const std::string& name, fake::Server* server) {
  if (!trace_) return;
  std::weak_ptr<bool> alive = alive_;
  server->observer = [this, alive, name](const fake::ServerEvent& event) {
    auto a = alive.lock();
    if (a && *a) on_server_event(name, event);
  };
}

void Network::on_server_event(const std::string& name, const fake::ServerEvent& ev) {
  using Kind = fake::ServerEvent::Kind;
  if (ev.kind == Kind::ClockJump) return;  // traced by jump_server_clock, with the new clock
  auto port_it = servers_.find(name);
  if (port_it == servers_.end()) return;
  ServerPort& port = port_it->second;
  auto conn_of = [&](fake::ClientId client) -> ConnId {
    auto it = port.conns.find(client);
    return it == port.conns.end() ? -1 : it->second;
  };
  // The server reports what it did as it does it; an event is never earlier than the last
  // one in the trace (time only moves forward).
  TimeUs last = trace_->size() ? trace_->events().back().time_us : 0;
  TimeUs at = std::max(ev.at_us, last);
  // A cut decided while the server still serves the command that filled the buffer is dated
  // at the end of that command (busy_until), after the moment the network drains it; what
  // follows from it here (net_server_close, the client's EOF, a note about the cut) is dated
  // now, so the cut is too: the trace never goes backwards.
  if (ev.kind == Kind::ClientCut) at = std::max(std::min(ev.at_us, scheduler_.now_us()), last);
  TraceEvent e{at, "", name, conn_of(ev.client), -1, -1, ""};
  auto key_fields = [&](TraceEvent& k) {
    k.with(F::key, ev.key);
    if (ev.db != 0) k.with(F::db, static_cast<int64_t>(ev.db));
    k.with(F::type, ev.type).with(F::value, ev.value);
  };
  switch (ev.kind) {
    case Kind::Served:
      e.kind = "served";
      e.with(F::cmd, ev.command).with(F::duration_us, ev.duration_us);
      if (!ev.detail.empty()) e.with(F::reason, ev.detail);
      break;
    case Kind::KeyWritten:
      e.kind = "key_set";
      key_fields(e);
      e.with(F::expire_at_ms, ev.expire_at_ms);
      break;
    case Kind::KeyDeleted:
      e.kind = "key_del";
      e.text = ev.key + " deleted (held " + ev.value + ")";
      key_fields(e);
      break;
    case Kind::KeyExpired:
      e.kind = "key_expired";
      e.text = ev.key + " expired (held " + ev.value + ")";
      key_fields(e);
      e.with(F::expire_at_ms, ev.expire_at_ms);
      break;
    case Kind::Blocked:
      e.kind = "blocked";
      e.text = "blocked on " + ev.detail;
      e.span = trace_->new_span();
      port.blocked_spans[ev.client] = e.span;
      e.with(F::reason, ev.detail);
      if (ev.timeout_at_us != fake::kNever) e.with(F::timeout_at_us, ev.timeout_at_us);
      break;
    case Kind::Unblocked: {
      e.kind = "unblocked";
      e.text = ev.detail;
      auto it = port.blocked_spans.find(ev.client);
      if (it != port.blocked_spans.end()) {
        e.ends = it->second;
        port.blocked_spans.erase(it);
      }
      e.with(F::reason, ev.detail);
      break;
    }
    case Kind::ScriptStart:
      e.kind = "script_start";
      e.text = ev.command + " runs on";
      e.span = port.script_span = trace_->new_span();
      e.with(F::cmd, ev.command);
      break;
    case Kind::ScriptBusy:
      e.kind = "script_busy";
      e.text = "script past busy-reply-threshold: other clients get BUSY";
      break;
    case Kind::BusyReply:
      e.kind = "busy_reply";
      e.text = "BUSY";
      break;
    case Kind::ScriptKilled:
      e.kind = "script_killed";
      e.text = "SCRIPT KILL";
      if (ev.by_client != 0) e.with(F::host, std::to_string(conn_of(ev.by_client)));
      break;
    case Kind::ScriptEnd:
      e.kind = "script_end";
      e.text = ev.command + " finished" + (ev.detail.empty() ? "" : " (" + ev.detail + ")");
      e.ends = port.script_span;
      port.script_span = 0;
      e.with(F::cmd, ev.command).with(F::duration_us, ev.duration_us);
      if (!ev.detail.empty()) e.with(F::reason, ev.detail);
      break;
    case Kind::ClientCut:
      e.kind = "client_cut";
      e.text = "closed by the server: " + ev.detail;
      e.with(F::reason, ev.detail);
      break;
    case Kind::Slowlogged: {
      e.kind = "slowlog";
      std::string line;
      for (const std::string& arg : ev.argv) line += (line.empty() ? "" : " ") + arg;
      e.text = "SLOWLOG: " + line.substr(0, 80) + " took " + std::to_string(ev.duration_us) + " us";
      e.with(F::argv, ev.argv).with(F::duration_us, ev.duration_us);
      e.with(F::logged_at_us, ev.logged_at_us).with(F::count, ev.count);
      break;
    }
    case Kind::SlowlogReset:
      e.kind = "slowlog_reset";
      e.text = "SLOWLOG RESET";
      break;
    case Kind::ReplPropagated:
      e.kind = "repl_propagate";
      e.text = "to replicas: " + std::to_string(ev.count) + " command" +
               (ev.count == 1 ? "" : "s") + ", offset " + std::to_string(ev.offset);
      e.with(F::argv, ev.argv).with(F::offset, ev.offset).with(F::count, ev.count);
      break;
    case Kind::ReplApplied:
      e.kind = "repl_apply";
      e.text = "from " + ev.detail + ": stream up to offset " + std::to_string(ev.offset);
      e.with(F::offset, ev.offset).with(F::count, ev.count).with(F::host, ev.detail);
      break;
    case Kind::ReplAcked:
      e.kind = "repl_ack";
      e.text = ev.detail + " acked offset " + std::to_string(ev.offset);
      e.with(F::offset, ev.offset).with(F::host, ev.detail);
      break;
    case Kind::ReplPromoted:
      e.kind = "repl_promote";
      e.text = "now a primary, at offset " + std::to_string(ev.offset) + " (was a replica of " +
               ev.detail + ")";
      e.with(F::offset, ev.offset).with(F::host, ev.detail);
      break;
    case Kind::ClockJump:
      return;
  }
  if (ev.cause != 0) e.with(F::cause, ev.cause);
  trace_->append(std::move(e));
}

fake::Server* Network::server(std::string_view name) const {
  auto it = servers_.find(name);
  return it == servers_.end() ? nullptr : it->second.server;
}

Network::Link& Network::link_state(std::string_view host, std::string_view server) {
  auto key = std::make_pair(std::string(host), std::string(server));
  auto it = links_.find(key);
  if (it == links_.end()) {
    Link link;
    link.config = default_link_;
    link.prng = Prng(seed_).derive(link_stream(host, server));
    it = links_.emplace(std::move(key), std::move(link)).first;
  }
  return it->second;
}

void Network::set_link(std::string_view host, std::string_view server, LinkConfig config) {
  REDLAB_ASSERT(config.latency_us >= 0 && config.jitter_us >= 0 && "delays are not negative");
  link_state(host, server).config = config;
}

LinkConfig Network::link(std::string_view host, std::string_view server) const {
  auto it = links_.find(std::make_pair(std::string(host), std::string(server)));
  return it == links_.end() ? default_link_ : it->second.config;
}

// ---------------------------------------------------------------------------------------
// Message timing and loss
// ---------------------------------------------------------------------------------------

const char* Network::drop_reason(Conn& c, Direction d) {
  Link& l = link_of(c);
  if (l.partitioned) return "partition";
  const LossRatio& loss = d == Direction::ToServer ? l.loss_to_server : l.loss_to_client;
  if (loss.numerator > 0 && l.prng.chance(loss.numerator, loss.denominator)) return "loss";
  return nullptr;
}

void Network::trace_drop(Conn& c, Direction d, std::string_view what, const char* why) {
  messages_dropped_++;
  if (trace_)
    emit(net_event("net_drop", c.id,
                   std::string(direction_name(d)) + ": " + std::string(what) + " (" + why + ")")
             .with(F::server, c.server)
             .with(F::host, c.host)
             .with(F::reason, why));
}

bool Network::dropped(Conn& c, Direction d, std::string_view what) {
  const char* why = drop_reason(c, d);
  if (!why) return false;
  trace_drop(c, d, what, why);
  return true;
}

TimeUs Network::arrival_us(Conn& c, Direction d, TimeUs sent_us) {
  Link& l = link_of(c);
  TimeUs delay_us = l.config.latency_us + c.extra_latency_us;
  if (l.config.jitter_us > 0)
    delay_us += static_cast<TimeUs>(l.prng.uniform(static_cast<uint64_t>(l.config.jitter_us) + 1));
  TimeUs& last = d == Direction::ToServer ? c.last_to_server_us : c.last_to_client_us;
  TimeUs at = std::max(add_saturating_us(sent_us, delay_us), last);
  last = at;
  return at;
}

// ---------------------------------------------------------------------------------------
// Transport
// ---------------------------------------------------------------------------------------

ConnId Network::open(std::string_view from_host, std::string_view to_server,
                     ConnCallbacks callbacks) {
  if (auto alias = aliases_.find(to_server); alias != aliases_.end()) to_server = alias->second;
  ConnId id = next_conn_++;
  Conn& c = conns_[id];
  c.id = id;
  c.host = std::string(from_host);
  c.server = std::string(to_server);
  c.callbacks = std::make_shared<const ConnCallbacks>(std::move(callbacks));
  std::weak_ptr<bool> alive = alive_;
  auto server_it = servers_.find(to_server);
  bool refused_link = server_it != servers_.end() && link_state(from_host, to_server).refused;
  if (server_it == servers_.end() || server_it->second.down || refused_link) {
    // Connection refused: the RST comes back after one round trip.
    TimeUs at =
        arrival_us(c, Direction::ToClient, arrival_us(c, Direction::ToServer, scheduler_.now_us()));
    if (trace_)
      emit(net_event("net_refused", id,
                     server_it == servers_.end() ? "no server named " + c.server
                     : refused_link              ? c.server + " refuses " + c.host
                                                 : c.server + " is down")
               .with(F::server, c.server)
               .with(F::host, c.host));
    eof_to_client(id, at);
    return id;
  }
  if (dropped(c, Direction::ToServer, "connect")) return id;
  TimeUs accept_at = arrival_us(c, Direction::ToServer, scheduler_.now_us());
  scheduler_.schedule_at(accept_at, [this, id, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn& conn = conns_.at(id);
    ServerPort& port = servers_.find(conn.server)->second;
    TimeUs now = scheduler_.now_us();
    if (port.down) {
      if (trace_)
        emit(net_event("net_refused", id, conn.server + " is down")
                 .with(F::server, conn.server)
                 .with(F::host, conn.host));
      if (!dropped(conn, Direction::ToClient, "reset"))
        eof_to_client(id, arrival_us(conn, Direction::ToClient, now));
      return;
    }
    port.server->advance(now);
    conn.server_client = port.server->connect(now);
    conn.server_open = true;
    port.conns[conn.server_client] = id;
    kick(conn.server);
    if (dropped(conn, Direction::ToClient, "connect ack")) return;
    TimeUs connected_at = arrival_us(conn, Direction::ToClient, now);
    scheduler_.schedule_at(connected_at, [this, id, alive] {
      auto a2 = alive.lock();
      if (!a2 || !*a2) return;
      Conn& cc = conns_.at(id);
      if (!cc.client_open || !cc.callbacks->on_connected) return;
      auto cbs = cc.callbacks;  // held while it runs: it may close the connection
      cbs->on_connected();
    });
  });
  return id;
}

void Network::send(ConnId conn, Argv argv, int64_t cause) {
  auto it = conns_.find(conn);
  REDLAB_ASSERT(it != conns_.end() && "send on a connection that was opened");
  Conn& c = it->second;
  REDLAB_ASSERT(c.client_open && "send on a connection the client has not closed");
  if (dropped(c, Direction::ToServer, argv.empty() ? "(empty)" : argv[0])) return;
  TimeUs at = arrival_us(c, Direction::ToServer, scheduler_.now_us());
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(at, [this, conn, alive, cause, argv = std::move(argv)]() mutable {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn& cc = conns_.at(conn);
    if (!cc.server_open) return;  // reset meanwhile: the bytes hit a closed socket
    ServerPort& port = servers_.find(cc.server)->second;
    port.server->submit(cc.server_client, std::move(argv), scheduler_.now_us(), cause);
    kick(cc.server);
  });
}

void Network::close(ConnId conn) {
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  if (!c.client_open) return;
  c.client_open = false;
  c.callbacks = std::make_shared<const ConnCallbacks>();  // a running one holds its own
  if (servers_.find(c.server) == servers_.end()) return;
  if (dropped(c, Direction::ToServer, "close")) return;
  TimeUs at = arrival_us(c, Direction::ToServer, scheduler_.now_us());
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(at, [this, conn, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn& cc = conns_.at(conn);
    if (!cc.server_open) return;
    servers_.find(cc.server)->second.server->advance(scheduler_.now_us());
    close_at_server(conn);
  });
}

void Network::close_at_server(ConnId conn) {
  Conn& c = conns_.at(conn);
  if (!c.server_open) return;
  ServerPort& port = servers_.find(c.server)->second;
  fake::Client* sc = port.server->client(c.server_client);
  if (sc && !sc->blocked && port.server->pending_commands(c.server_client) > 0) {
    port.closing.insert(conn);  // drive() closes it once they are served
    return;
  }
  port.closing.erase(conn);
  TimeUs now = scheduler_.now_us();
  port.server->disconnect(c.server_client, now);
  port.conns.erase(c.server_client);
  c.server_open = false;
  kick(c.server);
}

// ---------------------------------------------------------------------------------------
// Server side
// ---------------------------------------------------------------------------------------

void Network::kick(const std::string& server_name) {
  auto it = servers_.find(server_name);
  ServerPort& port = it->second;
  scheduler_.cancel(port.next_event);
  port.next_event = EventId{};
  TimeUs t = port.server->next_event_us();
  if (t == fake::kNever) return;
  // The destructor cancels next_event, so no liveness check; the name is the map's own key
  // (stable), so [this, name] fits std::function's inline room: no allocation per kick.
  const std::string* name = &it->first;
  port.next_event =
      scheduler_.schedule_at(std::max(t, scheduler_.now_us()), [this, name] { drive(*name); });
}

void Network::drive(const std::string& server_name) {
  ServerPort& port = servers_.find(server_name)->second;
  port.next_event = EventId{};
  TimeUs now = scheduler_.now_us();
  port.server->advance(now);
  for (fake::Output& out : port.server->take_outputs()) {
    auto it = port.conns.find(out.client);
    if (it == port.conns.end()) continue;
    Conn& c = conns_.at(it->second);
    if (!c.client_open) continue;  // nobody reads it any more
    if (const char* why = drop_reason(c, Direction::ToClient)) {
      trace_drop(c, Direction::ToClient, format_short(out.reply, 40), why);
      continue;
    }
    TimeUs at = arrival_us(c, Direction::ToClient, std::max(out.at_us, now));
    deliver_to_client(c.id, at, std::move(out.reply));
  }
  for (auto [client, at_us] : port.server->take_closed()) {
    auto it = port.conns.find(client);
    if (it == port.conns.end()) continue;
    ConnId id = it->second;
    port.conns.erase(it);
    Conn& c = conns_.at(id);
    c.server_open = false;
    if (trace_)
      emit(net_event("net_server_close", id, "closed by " + server_name)
               .with(F::server, server_name)
               .with(F::host, c.host));
    if (dropped(c, Direction::ToClient, "close")) continue;
    port.closing.erase(id);
    if (!c.client_open) continue;
    eof_to_client(id, arrival_us(c, Direction::ToClient, std::max(at_us, now)));
  }
  std::set<ConnId> closing = port.closing;
  for (ConnId id : closing) close_at_server(id);
  kick(server_name);
}

void Network::deliver_to_client(ConnId conn, TimeUs at_us, Reply reply) {
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(at_us, [this, conn, alive, reply = std::move(reply)]() mutable {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn& c = conns_.at(conn);
    if (!c.client_open || !c.callbacks->on_reply) return;
    if (c.paced) {
      if (c.credits == 0) {
        c.held.push_back(std::move(reply));
        return;
      }
      c.credits--;
      consumed(c, reply);
    }
    auto cbs = c.callbacks;  // held while it runs: it may close the connection
    cbs->on_reply(std::move(reply));
  });
}

void Network::consumed(Conn& c, const Reply& reply) {
  auto it = servers_.find(c.server);
  if (it == servers_.end() || !c.server_open || c.server_client == 0) return;
  if (it->second.server->connected(c.server_client))
    it->second.server->client_read(c.server_client, int64_t(resp_size(reply)));
}

void Network::set_paced(ConnId conn) {
  auto it = conns_.find(conn);
  if (it == conns_.end() || it->second.paced) return;
  Conn& c = it->second;
  c.paced = true;
  auto port = servers_.find(c.server);
  if (port != servers_.end() && c.server_client != 0)
    if (fake::Client* sc = port->second.server->client(c.server_client)) sc->auto_read = false;
}

bool Network::paced(ConnId conn) const {
  auto it = conns_.find(conn);
  return it != conns_.end() && it->second.paced;
}

void Network::read_one(ConnId conn) {
  auto it = conns_.find(conn);
  if (it == conns_.end() || !it->second.paced || !it->second.client_open) return;
  Conn& c = it->second;
  if (c.held.empty()) {
    c.credits = 1;  // one read waiting; reads do not pile up
    return;
  }
  Reply reply = std::move(c.held.front());
  c.held.pop_front();
  consumed(c, reply);
  auto cbs = c.callbacks;  // held while it runs: it may close the connection
  if (cbs->on_reply) cbs->on_reply(std::move(reply));
}

void Network::eof_to_client(ConnId conn, TimeUs at_us) {
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(at_us, [this, conn, alive] {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn& c = conns_.at(conn);
    if (!c.client_open || !c.callbacks->on_closed) return;
    if (!c.held.empty() && trace_)
      emit(net_event("net_buffer_lost", conn,
                     std::to_string(c.held.size()) + " unread replies dropped with the connection")
               .with(F::count, static_cast<int64_t>(c.held.size()))
               .with(F::server, c.server)
               .with(F::host, c.host));
    c.held.clear();
    auto cbs = c.callbacks;  // held while it runs: it may close the connection
    cbs->on_closed();
  });
}

// ---------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------

void Network::server_command(std::string_view server, Argv argv) {
  auto it = servers_.find(server);
  if (it == servers_.end() || it->second.down) return;
  ServerPort& port = it->second;
  TimeUs now = scheduler_.now_us();
  port.server->advance(now);
  if (port.admin == 0 || !port.server->connected(port.admin))
    port.admin = port.server->connect(now);
  if (trace_)
    emit(TraceEvent{now, "server_command", std::string(server), -1, -1, -1, command_line(argv)}
             .with(F::server, std::string(server))
             .with(F::argv, argv));
  port.server->submit(port.admin, std::move(argv), now);
  kick(std::string(server));
}

std::vector<ConnId> Network::connections_of(std::string_view host) const {
  std::vector<ConnId> out;
  for (const auto& [id, c] : conns_)
    if (c.host == host && c.client_open) out.push_back(id);
  return out;
}

void Network::set_refused(std::string_view host, std::string_view server, bool on) {
  link_state(host, server).refused = on;
  if (trace_)
    emit(net_event(on ? "net_refuse_begin" : "net_refuse_end", -1,
                   std::string(host) + " -> " + std::string(server))
             .with(F::host, std::string(host))
             .with(F::server, std::string(server)));
}

void Network::disconnect(ConnId conn) {
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  if (trace_)
    emit(net_event("net_disconnect", conn, "connection reset")
             .with(F::server, c.server)
             .with(F::host, c.host));
  if (c.server_open) {
    ServerPort& port = servers_.find(c.server)->second;
    TimeUs now = scheduler_.now_us();
    port.server->advance(now);
    port.server->disconnect(c.server_client, now);
    port.conns.erase(c.server_client);
    port.closing.erase(conn);
    c.server_open = false;
    kick(c.server);
  }
  if (c.client_open && !dropped(c, Direction::ToClient, "reset"))
    eof_to_client(conn, arrival_us(c, Direction::ToClient, scheduler_.now_us()));
}

void Network::set_partition(std::string_view host, std::string_view server, bool on) {
  Link& l = link_state(host, server);
  if (l.partitioned == on) return;
  l.partitioned = on;
  if (trace_)
    emit(net_event(on ? "net_partition" : "net_heal", -1,
                   std::string(host) + " <-> " + std::string(server))
             .with(F::host, std::string(host))
             .with(F::server, std::string(server)));
  if (!on) repl_heal(host, server);
}

void Network::set_loss(std::string_view host, std::string_view server, Direction direction,
                       LossRatio ratio) {
  REDLAB_ASSERT(ratio.denominator > 0 && ratio.numerator <= ratio.denominator &&
                "a loss ratio is a probability");
  Link& l = link_state(host, server);
  (direction == Direction::ToServer ? l.loss_to_server : l.loss_to_client) = ratio;
  trace_net("net_loss", -1,
            std::string(host) + " <-> " + std::string(server) + " " + direction_name(direction) +
                ": " + std::to_string(ratio.numerator) + "/" + std::to_string(ratio.denominator));
}

void Network::set_extra_latency(ConnId conn, TimeUs extra_us) {
  REDLAB_ASSERT(extra_us >= 0 && "extra latency is not negative");
  auto it = conns_.find(conn);
  if (it == conns_.end()) return;
  it->second.extra_latency_us = extra_us;
  if (trace_)
    emit(net_event("net_slow", conn, "extra latency " + std::to_string(extra_us) + " us")
             .with(F::by_us, extra_us)
             .with(F::server, it->second.server)
             .with(F::host, it->second.host));
}

void Network::jump_server_clock(std::string_view server, TimeUs delta_us) {
  auto it = servers_.find(server);
  if (it == servers_.end()) return;
  TimeUs now = scheduler_.now_us();
  it->second.server->advance(now);
  it->second.server->jump_clock(delta_us, now);
  if (trace_)
    emit(net_event("clock_jump", -1, std::string(server) + " " + std::to_string(delta_us) + " us")
             .with(F::server, std::string(server))
             .with(F::by_us, delta_us)
             .with(F::clock_unix_ms, it->second.server->unix_ms(now)));
  drive(it->first);
}

void Network::reset_all(ServerPort& port, const std::string& why) {
  std::vector<ConnId> ids;
  for (auto& [client, conn] : port.conns) ids.push_back(conn);
  TimeUs now = scheduler_.now_us();
  port.server->advance(now);
  for (ConnId id : ids) {
    Conn& c = conns_.at(id);
    port.server->disconnect(c.server_client, now);
    c.server_open = false;
    if (trace_)
      emit(net_event("net_disconnect", id, why).with(F::server, c.server).with(F::host, c.host));
    if (c.client_open && !dropped(c, Direction::ToClient, "reset"))
      eof_to_client(id, arrival_us(c, Direction::ToClient, now));
  }
  port.conns.clear();
  port.closing.clear();
}

bool Network::server_down(std::string_view server) const {
  auto it = servers_.find(server);
  return it != servers_.end() && it->second.down;
}

void Network::set_server_down(std::string_view server, bool down) {
  auto it = servers_.find(server);
  REDLAB_ASSERT(it != servers_.end() && "a server the network knows");
  ServerPort& port = it->second;
  if (port.down == down) return;
  port.down = down;
  if (trace_)
    emit(net_event(down ? "server_down" : "server_up", -1, std::string(server))
             .with(F::server, std::string(server)));
  if (down) reset_all(port, std::string(server) + " went down");
  kick(it->first);
}

void Network::replace_server(std::string_view server, fake::Server* replacement) {
  REDLAB_ASSERT(replacement != nullptr && "a server to replace with");
  auto it = servers_.find(server);
  REDLAB_ASSERT(it != servers_.end() && "a server the network knows");
  ServerPort& port = it->second;
  reset_all(port, std::string(server) + " restarted");
  scheduler_.cancel(port.next_event);
  port.next_event = EventId{};
  // The machine's clock does not restart with the process: the new server reads what the
  // old one read.
  TimeUs now = scheduler_.now_us();
  TimeUs behind_us = port.server->unix_us(now) - replacement->unix_us(now);
  if (behind_us != 0) replacement->jump_clock(behind_us, now);
  port.server = replacement;
  port.blocked_spans.clear();
  port.script_span = 0;
  observe(it->first, replacement);
  if (trace_)
    emit(net_event("server_restart", -1, std::string(server))
             .with(F::server, std::string(server))
             .with(F::clock_unix_ms, replacement->unix_ms(now)));
  kick(it->first);
}

fake::ClientId Network::server_client(ConnId conn) const {
  auto it = conns_.find(conn);
  return it == conns_.end() ? 0 : it->second.server_client;
}

bool Network::open_at_client(ConnId conn) const {
  auto it = conns_.find(conn);
  return it != conns_.end() && it->second.client_open;
}

TraceEvent Network::net_event(std::string kind, ConnId conn, std::string text) const {
  return TraceEvent{scheduler_.now_us(), std::move(kind), "net", conn, -1, -1, std::move(text)};
}

}  // namespace redlab::net
