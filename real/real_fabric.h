// The real fabric: net::Fabric over non-blocking sockets to redis-server, driven by ONE
// single-threaded loop together with the engine's Scheduler.
//
// Time: scheduler time is wall-clock microseconds since the fabric was made (steady_clock),
// so run_until() alternates between running the scheduler's events due by now and waiting in
// ppoll() on the sockets (until the next timer, at most kPollSliceUs so `cancel` is seen).
// Before a socket's callbacks run, the scheduler is brought to the current wall time, so the
// times in the trace never go backwards.
//
// hiredis is the RESP codec only: redisFormatCommandArgv writes, a redisReader per connection
// parses; the socket work is ours (so writes never block: bytes wait in our buffer until
// POLLOUT).
//
// Per message, as in the simulated network (sim/net/network.h):
// - Link latency (LinkConfig latency_us + uniform[0, jitter_us], one way, per message, from a
//   seeded PRNG) and a connection's extra latency are applied in-process: a command waits
//   before it is written, a reply waits after it is parsed, FIFO per direction (one scheduler
//   event per delayed message). The real network's own time comes on top; with a zero link
//   the fabric adds nothing.
// - Keys and channels are put under the run's prefix on the way out and the prefix is taken
//   off replies (real/key_prefix.h). A server-wide command on a server redlab does not own is
//   not sent; to keep replies in order, a PING carrying a marker takes its place and its
//   answer is turned into the error reply "ERR redlab: ...". The same for a command that
//   would change the connection's user (AUTH, HELLO AUTH, RESET) on a URL backend, and,
//   without an ACL user, for whatever prefixing alone cannot keep inside the prefix (acl.h).
// - On a user's server the connections authenticate as the run's ACL user (real/acl.h): the
//   endpoint add_server() gets carries it. A reply that is the server's ACL refusal (NOPERM,
//   at any depth, e.g. inside EXEC's array), or its refusal of a command no script may call,
//   is reported to on_refusal with the host.
// - Scripts: the fabric knows which client commands it wrote that are scripts (EVAL, EVALSHA,
//   FCALL ...) and have had no reply. A connection closed with one of them outstanding (the
//   client timed out, the run ended) leaves scripts_may_run() true: the script may still hold
//   the server, and the backend then stops it (SCRIPT KILL) rather than any script of anyone.
// Connection life:
// - open(): an asynchronous dial (EINPROGRESS, then POLLOUT and SO_ERROR). AUTH and SELECT
//   from the endpoint go first and their replies are swallowed before on_connected; a failed
//   AUTH is traced (net_auth_failed, with the server's error text, never the password) and
//   ends in on_closed. A refused dial ends in on_closed from a scheduler event.
// - close(): no callback of that connection runs afterwards.
// - The peer's EOF or a reset: net_server_close is traced and on_closed follows.
// Faults (traced like the simulated network, actor "net"):
// - disconnect: shutdown(RDWR) and close; the server sees the reset, the client EOF.
// - partition: everything between host and server is dropped both ways (net_drop), new dials
//   are swallowed; messages already held in-process still pass (they "left" already).
// - refused: new dials from host to server end in on_closed (net_refused).
// - paced: the socket is no longer read except for one reply per read_one(), so unread
//   replies pile up in the kernel buffers and then in Redis' output buffer, where
//   client-output-buffer-limit cuts the client. Client sockets ask for SO_RCVBUF
//   kClientRcvbufBytes before connecting so that the kernel holds little. When Redis cuts
//   such a client, its FIN waits behind the unread bytes and would never arrive; so every
//   kPacedProbeUs the fabric writes an empty inline command ("\r\n", which a live Redis
//   ignores without a reply) and a closed server socket answers it with a reset, seen
//   without reading (POLLERR/POLLHUP/POLLRDHUP). Replies still unread are then lost
//   (net_buffer_lost), as when Redis drops a client's output buffer.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "real/redis_conn.h"
#include "sim/core/prng.h"
#include "sim/core/scheduler.h"
#include "sim/core/trace.h"
#include "sim/net/fabric.h"
#include "sim/net/network.h"

struct redisReader;

namespace redlab::real {

struct ReaderDeleter {
  void operator()(redisReader* reader) const;
};
using ReaderPtr = std::unique_ptr<redisReader, ReaderDeleter>;

class RealFabric final : public net::Fabric {
 public:
  struct Options {
    std::string key_prefix;  // "redlab:<run-id>:"; empty = no rewriting (tests of the codec)
    // Server-wide commands (FLUSHALL, DEBUG, CLIENT PAUSE, ...) may go through: the servers
    // are redlab's own, or the user said --allow-server-faults.
    bool allow_server_wide = false;
    net::LinkConfig link{0, 0};
    uint64_t seed = 1;  // jitter draws
    // Requested before connect (Linux doubles it and applies its minimum). Small, so that a
    // paced reader's unread replies reach Redis' output buffer soon.
    int client_rcvbuf_bytes = kClientRcvbufBytes;
    // A server redlab did not start: AUTH, HELLO ... AUTH and RESET are never sent for a
    // client (they would let the connection leave the run's ACL user).
    bool keep_identity = false;
    // No ACL user could be made: only what prefixing alone keeps inside the prefix is sent
    // (real/acl.h prefix_only_may), plus allowed_extra (ACL rule names: "debug|sleep").
    bool prefix_only = false;
    std::vector<std::string> allowed_extra;
    // Every refusal the server answered that keeps a run inside its limits (real/acl.h
    // is_acl_refusal, is_noscript_refusal): the connection's host ("(redlab)" for
    // server_command) and the error text. Called from the loop.
    std::function<void(const std::string& host, const std::string& error)> on_refusal;
  };
  static constexpr int kClientRcvbufBytes = 4096;
  static constexpr TimeUs kPollSliceUs = 10 * kUsPerMs;
  static constexpr size_t kReadChunkBytes = 16 * 1024;
  static constexpr size_t kPacedReadChunkBytes = 256;
  // How often a paced connection that reads nothing checks that the server still has it.
  static constexpr TimeUs kPacedProbeUs = 20 * kUsPerMs;

  // Scheduler time 0 (or its current time) is now. trace may be null.
  RealFabric(Scheduler& scheduler, Trace* trace, Options options);
  ~RealFabric() override;
  RealFabric(const RealFabric&) = delete;
  RealFabric& operator=(const RealFabric&) = delete;

  // Names a server. The address is resolved here (blocking, once). Throws
  // scenario::BackendError for an address that does not resolve.
  void add_server(const std::string& name, const Endpoint& endpoint);

  // A failover: new dials to `name` go where `to` is (connections already open stay where
  // they are; the old primary's die with it).
  void repoint(const std::string& name, const std::string& to);

  // Wall-clock microseconds since the fabric's time 0 (the scheduler's time base).
  TimeUs wall_now_us() const;
  // The scheduler's current time is now again (before the loop first runs: a wait at the start
  // that is not the run's time).
  void rebase();

  // The loop: scheduler events and socket events until end_us (wall), events_max events, or
  // *cancel. Returns with the scheduler's time at end_us unless stopped early.
  Scheduler::RunResult run_until(TimeUs end_us, uint64_t events_max,
                                 const std::atomic<bool>* cancel);

  // ---- Transport ----
  net::ConnId open(std::string_view from_host, std::string_view to_server,
                   net::ConnCallbacks callbacks) override;
  void send(net::ConnId conn, net::Argv argv, int64_t cause = 0) override;
  void close(net::ConnId conn) override;

  // ---- Faults ----
  std::vector<net::ConnId> connections_of(std::string_view host) const override;
  void disconnect(net::ConnId conn) override;
  void set_partition(std::string_view host, std::string_view server, bool on) override;
  void set_refused(std::string_view host, std::string_view server, bool on) override;
  void set_extra_latency(net::ConnId conn, TimeUs extra_us) override;
  void set_paced(net::ConnId conn) override;
  bool paced(net::ConnId conn) const override;
  void read_one(net::ConnId conn) override;

  // A command on a server for no client (DEBUG SLEEP, SCRIPT FLUSH, CLIENT PAUSE): sent on a
  // connection of its own, never waited for; its reply is read and dropped, the connection
  // closed after it. Traced as "server_command" (actor = server), like the fake.
  void server_command(const std::string& server, net::Argv argv);

  // Closes every socket now; no callback runs afterwards (end of a run).
  void close_all();

  // Whether a script the run's clients sent may still run on a server: a connection was closed
  // (by anyone, for any reason) while a script command written on it had no reply yet. Sticky.
  bool scripts_may_run() const { return scripts_may_run_; }
  // The first such script: the host that sent it and the script's SHA-1 (lower hex; "" for a
  // function, FCALL, or when it cannot be told).
  const std::string& script_left_host() const { return script_left_host_; }
  const std::string& script_left_sha() const { return script_left_sha_; }

  // ---- Introspection (tests) ----
  bool connected(net::ConnId conn) const;  // handshake done, socket open
  size_t open_sockets() const;
  int socket_of(net::ConnId conn) const;  // -1 when closed
  // The host of the connection whose local address ("127.0.0.1:40152", as the server's
  // CLIENT LIST and ACL LOG show it as addr=) is this, ever during the run; "" if none.
  std::string host_of_address(std::string_view address) const;
  // The scripts (SHA-1, lower hex) that connection sent, in order, each once.
  std::vector<std::string> scripts_sent_from(std::string_view address) const;

 private:
  enum class State : uint8_t { Dialing, Handshake, Open, Swallowed, Closed };
  enum class Dir : uint8_t { ToServer, ToClient };
  struct Conn {
    net::ConnId id = 0;
    std::string host;
    std::string server;
    net::ConnCallbacks callbacks;
    bool internal = false;    // server_command's connection: not a client's
    bool client_open = true;  // close() not called
    State state = State::Dialing;
    int fd = -1;
    std::string out;  // bytes waiting for POLLOUT
    size_t out_offset = 0;
    ReaderPtr reader;
    int handshake_replies = 0;  // AUTH / SELECT replies still to swallow
    TimeUs extra_latency_us = 0;
    TimeUs last_to_server_us = 0;  // FIFO per direction
    TimeUs last_to_client_us = 0;
    int64_t pending_to_server = 0;  // messages held in-process (scheduler events)
    int64_t pending_to_client = 0;
    bool paced = false;
    int64_t credits = 0;
    TimeUs probed_at_us = 0;    // the last liveness probe of a paced connection
    std::deque<Reply> held;     // a paced connection's replies not read by the client yet
    std::string local_address;  // "ip:port" once connected (TCP), for host_of_address()
    // The client commands written and not answered yet, in order: for a script its SHA-1
    // ("" for another command, "-" for a function). Pub/sub breaks the one-reply-per-command
    // order (RESP2): from a (P|S)SUBSCRIBE on, the connection is not followed and a script
    // written on it counts as possibly running.
    std::deque<std::string> unanswered;
    bool untracked = false;
    std::vector<std::string> scripts_sent;  // SHA-1s, each once (for the ACL LOG's refusals)
  };
  struct ServerInfo {
    Endpoint endpoint;
    std::vector<unsigned char> address;  // sockaddr bytes
    int family = 0;
  };
  struct Link {
    bool partitioned = false;
    bool refused = false;
    Prng prng{0};
  };

  Conn* find(net::ConnId id);
  const Conn* find(net::ConnId id) const;
  Link& link_state(std::string_view host, std::string_view server);
  bool partitioned(const Conn& c);
  // When a message of c in direction d sent at sent_us arrives (FIFO per direction).
  TimeUs arrival_us(Conn& c, Dir d, TimeUs sent_us);
  // A paced connection reads its socket only for a reply the client asked for.
  bool reading(const Conn& c) const;

  void dial(Conn& c);
  void handle_socket(net::ConnId id, short revents);
  void on_dial_done(Conn& c);
  void handshake_done(Conn& c);
  void flush(Conn& c);
  // Reads what the socket has (a paced connection: just enough for one reply).
  void read_socket(Conn& c);
  // Parses the replies the reader holds; returns how many. deliver = false: counted only.
  size_t parse_replies(Conn& c, bool deliver = true);
  void on_reply(Conn& c, Reply reply);
  // The server closed or reset the socket: closes the fd, traces, queues on_closed.
  void lost(Conn& c, const std::string& why);
  void refused(Conn& c, const std::string& why);
  void close_fd(Conn& c);
  void write_command(Conn& c, const net::Argv& argv);
  // A client's command (after prefixing): written, and followed for scripts_may_run().
  void write_client_command(Conn& c, const net::Argv& argv);
  // A reply of a client command arrived (not a handshake reply).
  void answered(Conn& c);
  Reply replace_markers(Reply reply);
  // Why send() does not send argv (a marker PING goes instead), or nullopt.
  std::optional<std::string> refusal(const net::Argv& argv) const;
  // Reports the refusals in a reply (at any depth) to on_refusal.
  void note_refusals(const Conn& c, const Reply& reply) const;
  // Delivery to the client at `at` (now or later, FIFO), through the paced gate.
  void deliver(net::ConnId id, TimeUs at_us, Reply reply);
  void hand_over(Conn& c, Reply reply);
  void deliver_eof(net::ConnId id, TimeUs at_us);
  void deliver_connected(net::ConnId id, TimeUs at_us);
  // Brings the scheduler to the wall clock (events due run first).
  void catch_up();
  // Writes the liveness probe of paced connections that are due one.
  void probe_paced();
  void trace_net(std::string kind, net::ConnId conn, std::string text);

  Scheduler& scheduler_;
  Trace* trace_;
  Options options_;
  int64_t epoch_ns_ = 0;  // steady_clock at scheduler time 0
  std::map<std::string, ServerInfo, std::less<>> servers_;
  std::map<std::pair<std::string, std::string>, Link, std::less<>> links_;
  // Entries stay until the fabric goes (a closed one is inert): callbacks that run while the
  // loop holds a Conn& may close it.
  std::map<net::ConnId, Conn> conns_;
  std::set<net::ConnId> with_socket_;  // connections whose fd is open
  net::ConnId next_conn_ = 1;
  // Refused commands: marker -> the error reply that replaces the marker's PING answer.
  std::map<std::string, std::string, std::less<>> refusal_markers_;
  uint64_t next_marker_ = 1;
  uint64_t events_left_ = Scheduler::kEventsPerRunDefaultMax;  // bound of the current run
  TimeUs loop_end_us_ = kTimeNeverUs;                          // end of the current run
  Scheduler::RunResult loop_result_;
  std::shared_ptr<bool> alive_;
  bool scripts_may_run_ = false;
  std::string script_left_host_, script_left_sha_;
  // Marks scripts_may_run() (the first one named).
  void script_left(const Conn& c, const std::string& id);
};

}  // namespace redlab::real
