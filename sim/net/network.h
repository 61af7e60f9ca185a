// The simulated network: connections between client processes and fake Redis servers,
// carried by the Scheduler on virtual time.
//
// Model (deliberately TCP-like where a lesson depends on it, simple elsewhere):
// - Every (host, server) pair is a link with a one-way latency and a jitter: each message
//   takes latency_us + uniform[0, jitter_us] (drawn from the link's own seeded PRNG stream,
//   integers only). A connection never reorders: a message is never delivered before the
//   previous one of the same direction (TCP is a byte stream).
// - Dial: the server accepts the connection one latency after open(), the client learns it
//   one more latency later (a handshake of one round trip). A dial into a partition is
//   swallowed: no callback ever comes, the client's dial timeout decides.
// - Close from either side reaches the other side after the latency: the server drops the
//   client (its subscriptions, blocked commands, WATCHes) once it has served what the client
//   sent before closing (a timed-out command still runs: timeouts do not cancel server work),
//   the client sees EOF (on_closed).
//   Server-side closes (QUIT, CLIENT KILL, output buffer limits) come from take_closed().
// - Faults: disconnect(conn) resets a connection (the server forgets it at once, the client
//   sees EOF after the latency); partition(host, server) drops everything in both directions
//   (connections hang, so timeouts fire; a FIN lost in a partition is never seen); set_loss
//   drops a ratio of the messages of one direction (one-way loss); set_extra_latency slows a
//   single connection; jump_server_clock jumps a server's wall clock (keys may expire);
//   set_server_down / replace_server stage a crash and a restart.
//   Messages already in flight when a partition starts are still delivered (they left).
// - Servers are fake::Server objects: a request is submitted at its arrival time, the server
//   is driven by one scheduler event at its next_event_us() (rescheduled after every submit
//   and advance), and its take_outputs() go back over the link.
// Every drop and fault is traced (actor "net") so a timeline shows why a reply never came.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/prng.h"
#include "sim/core/scheduler.h"
#include "sim/core/trace.h"
#include "sim/fake/server.h"
#include "sim/net/fabric.h"

namespace redlab::net {

struct LinkConfig {
  TimeUs latency_us = 100;  // one way
  TimeUs jitter_us = 0;     // extra delay, uniform in [0, jitter_us]
};

// A ratio of dropped messages: 0/1 = none, 1/1 = all.
struct LossRatio {
  uint64_t numerator = 0;
  uint64_t denominator = 1;
};

enum class Direction : uint8_t { ToServer, ToClient };

// The seed stream of the link host -> server: FNV-1a over "host\0server", so a link's jitter
// depends on its names only (the real fabric draws its in-process latency the same way).
uint64_t link_stream(std::string_view host, std::string_view server);

class Network final : public Fabric {
 public:
  // trace may be null. seed feeds the jitter and loss draws (one stream per link).
  Network(Scheduler& scheduler, uint64_t seed, Trace* trace);
  ~Network() override;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // ---- Topology ----
  // Registers a fake server under a name; the server must outlive the network.
  // clock_offset_us sets its wall clock ahead (or behind) of the others from the start
  // (Redlock's masters do not agree on the time).
  void add_server(std::string name, fake::Server* server, TimeUs clock_offset_us = 0);
  fake::Server* server(std::string_view name) const;
  void set_default_link(LinkConfig config) { default_link_ = config; }
  void set_link(std::string_view host, std::string_view server, LinkConfig config);
  LinkConfig link(std::string_view host, std::string_view server) const;

  // ---- Transport ----
  ConnId open(std::string_view from_host, std::string_view to_server,
              ConnCallbacks callbacks) override;
  void send(ConnId conn, Argv argv, int64_t cause = 0) override;
  void close(ConnId conn) override;

  // ---- Faults ----
  // Resets a connection: the server forgets it now, the client sees EOF after the latency.
  void disconnect(ConnId conn) override;
  // Drops every message between host and server, both ways, while on.
  void set_partition(std::string_view host, std::string_view server, bool on) override;
  // New connections from host to server are refused while on (a firewall REJECT, the
  // host's network still down after a reset); open connections are not touched.
  void set_refused(std::string_view host, std::string_view server, bool on) override;
  // Drops a ratio of the messages of one direction between host and server.
  void set_loss(std::string_view host, std::string_view server, Direction direction,
                LossRatio ratio);
  // Adds delay to every later message of one connection, both ways.
  void set_extra_latency(ConnId conn, TimeUs extra_us) override;
  // The server's wall clock jumps by delta_us (negative = back).
  void jump_server_clock(std::string_view server, TimeUs delta_us);
  // A server going down: every connection to it is reset (clients see EOF after the
  // latency) and, while down, dials are refused. Up again: dials are accepted.
  void set_server_down(std::string_view server, bool down);
  bool server_down(std::string_view server) const;
  // A restart: the connections to the old server are reset and the name now leads to
  // `replacement` (empty data, empty script cache). It must outlive the network too.
  void replace_server(std::string_view server, fake::Server* replacement);

  // Runs a command on a server now on behalf of no client (a scheduled fault: DEBUG SLEEP
  // stalls everyone, SCRIPT FLUSH loses the script cache). Its reply goes nowhere.
  void server_command(std::string_view server, Argv argv);

  // A slow reader: from now on the connection's replies wait at the server, counted in its
  // output buffer (client-output-buffer-limit applies), until read_one() takes one. When the
  // server cuts the connection, whatever still waits is lost (Redis drops the buffer).
  void set_paced(ConnId conn) override;
  bool paced(ConnId conn) const override;
  // The client reads one reply: delivered now if one waits, else the next one passes at once.
  void read_one(ConnId conn) override;

  // ---- Replication between servers (replication.cpp) ----
  // `replica` follows `primary` from now on (both empty: the first sync is instant). The
  // stream travels the link (replica, primary): its latency and jitter, in order; a
  // partition of that link (set_partition(replica, primary)) holds the stream back, as TCP
  // retransmission does, and it arrives once healed; acks come back the same way, once a
  // second and at once when the primary asks (WAIT). Each part is traced by the servers.
  void add_replication(std::string_view primary, std::string_view replica);
  // Every part of the stream sent from now on arrives extra_us later (0: no lag).
  void set_replication_lag(std::string_view replica, TimeUs extra_us);
  // A failover: the replica's primary goes down for good (its connections reset, dials
  // refused), the replica becomes a primary with what it had received, and the primary's
  // name leads to it (what a Sentinel-aware client or a moved DNS name does). Returns the
  // old primary's name ("" when replica follows nobody).
  std::string failover(std::string_view replica);
  // The server a name leads to now (itself unless a failover re-pointed it).
  std::string resolve(std::string_view name) const;

  // ---- Introspection (tests, the scenario engine) ----
  // Connections opened from host and not closed by it, in opening order.
  std::vector<ConnId> connections_of(std::string_view host) const override;
  // The server-side client id of a connection (0 until the server accepted it).
  fake::ClientId server_client(ConnId conn) const;
  bool open_at_client(ConnId conn) const;
  size_t messages_dropped() const { return messages_dropped_; }

 private:
  struct Link {
    LinkConfig config;
    bool partitioned = false;
    bool refused = false;
    LossRatio loss_to_server;
    LossRatio loss_to_client;
    Prng prng{0};
  };
  struct Conn {
    ConnId id = 0;
    std::string host;
    std::string server;
    // Shared so that running one copies a pointer, not the callbacks (a copy per reply).
    std::shared_ptr<const ConnCallbacks> callbacks = std::make_shared<const ConnCallbacks>();
    fake::ClientId server_client = 0;  // 0: not accepted (yet)
    bool client_open = true;           // the client has not closed it
    bool server_open = false;          // the server knows it
    TimeUs extra_latency_us = 0;
    TimeUs last_to_server_us = 0;  // FIFO per direction
    TimeUs last_to_client_us = 0;
    // A paced connection: replies wait here (the server's output buffer) until the client
    // reads them one by one with read_one().
    bool paced = false;
    std::deque<Reply> held;
    int64_t credits = 0;
    // The link this connection travels (links_ never drops an entry, so it stays valid):
    // found once, not by two names at every message.
    Link* link = nullptr;
  };
  struct ServerPort {
    fake::Server* server = nullptr;
    EventId next_event;
    std::map<fake::ClientId, ConnId> conns;  // server client id -> connection
    std::set<ConnId> closing;  // closed by the client, commands still queued at the server
    bool down = false;
    fake::ClientId admin = 0;  // server_command's client, connected on first use
    // Trace spans of the server's own long things: a blocked client, the running script.
    std::map<fake::ClientId, int64_t> blocked_spans;
    int64_t script_span = 0;
  };
  // The server's own events (fake::ServerEvent) into the trace, on the server's lane, with
  // the connection of the client they are about.
  void observe(const std::string& name, fake::Server* server);
  void on_server_event(const std::string& name, const fake::ServerEvent& event);
  void reset_all(ServerPort& port, const std::string& why);

  Link& link_state(std::string_view host, std::string_view server);
  // Decides whether a message of conn in direction d is dropped now; traces the drop.
  bool dropped(Conn& c, Direction d, std::string_view what);
  // Why a message on c in direction d is lost now ("partition", "loss"), or nullptr; the
  // loss draw is made here. trace_drop records it (what: the message, built only then).
  const char* drop_reason(Conn& c, Direction d);
  void trace_drop(Conn& c, Direction d, std::string_view what, const char* why);
  Link& link_of(Conn& c) {
    if (!c.link) c.link = &link_state(c.host, c.server);
    return *c.link;
  }
  // The arrival time of a message sent at sent_us, keeping per-direction FIFO order.
  TimeUs arrival_us(Conn& c, Direction d, TimeUs sent_us);
  void kick(const std::string& server_name);
  // The client's close reached the server: drop the connection there, after the commands it
  // sent before closing (unless it is blocked: Redis frees a blocked client on EOF).
  void close_at_server(ConnId conn);
  void drive(const std::string& server_name);
  void deliver_to_client(ConnId conn, TimeUs at_us, Reply reply);
  void eof_to_client(ConnId conn, TimeUs at_us);
  // A paced connection's reply was read: the server's output buffer shrinks.
  void consumed(Conn& c, const Reply& reply);
  // A network event (actor "net"): add fields to what net_event() returns, then emit it.
  TraceEvent net_event(std::string kind, ConnId conn, std::string text) const;
  void emit(TraceEvent&& event) {
    if (trace_) trace_->append(std::move(event));
  }
  void trace_net(std::string kind, ConnId conn, std::string text) {
    if (trace_) emit(net_event(std::move(kind), conn, std::move(text)));
  }

  // A replication link (replication.cpp).
  struct ReplLink {
    std::string primary, replica;
    TimeUs lag_us = 0;
    TimeUs last_to_replica_us = 0;  // FIFO per direction
    TimeUs last_to_primary_us = 0;
    struct Part {
      std::vector<Argv> commands;
      int64_t offset = 0;
    };
    std::deque<Part> held;  // sent during a partition: delivered when it heals
    bool active = true;
    EventId ack_timer;
  };
  ReplLink* repl_link(std::string_view replica);
  void repl_send(ReplLink& r, ReplLink::Part part);
  void repl_ack(ReplLink& r);
  void repl_heal(std::string_view host, std::string_view server);
  void repl_tick(const std::string& replica);
  TimeUs repl_delay(ReplLink& r);
  std::map<std::string, ReplLink, std::less<>> repl_links_;  // by replica
  std::map<std::string, std::string, std::less<>> aliases_;  // name -> server (failover)

  Scheduler& scheduler_;
  uint64_t seed_;
  Trace* trace_;
  LinkConfig default_link_;
  std::map<std::pair<std::string, std::string>, Link, std::less<>> links_;
  std::map<std::string, ServerPort, std::less<>> servers_;
  std::map<ConnId, Conn> conns_;
  ConnId next_conn_ = 1;
  size_t messages_dropped_ = 0;
  std::shared_ptr<bool> alive_;
};

}  // namespace redlab::net
