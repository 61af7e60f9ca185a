// See real_fabric.h. Every delayed message is one scheduler event; undelayed ones go straight
// to the socket or the client. Callbacks are copied before they run (a callback may close its
// own connection), and every scheduled event checks the fabric is still alive.
#include "real/real_fabric.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "real/acl.h"
#include "real/key_prefix.h"
#include "sim/core/assert.h"
#include "sim/core/cmdline.h"
#include "sim/fake/sha1.h"
#include "sim/scenario/backend.h"

namespace redlab::real {

void ReaderDeleter::operator()(redisReader* reader) const {
  redisReaderFree(reader);
}

namespace {

using net::ConnId;

int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct ReplyDeleter {
  void operator()(void* reply) const { freeReplyObject(reply); }
};

// Replies parsed per readable event at most (a flood is served over several loop passes).
constexpr size_t kRepliesPerParseMax = 100'000;
// Bytes drained from a paced socket when its peer closed, to count the unread replies.
constexpr size_t kDrainBytesMax = 8 * 1024 * 1024;
constexpr const char* kInternalHost = "(redlab)";
// Distinct scripts remembered per connection (a run has a handful; bounded anyway).
constexpr size_t kScriptsPerConnMax = 16;

}  // namespace

RealFabric::RealFabric(Scheduler& scheduler, Trace* trace, Options options)
    : scheduler_(scheduler),
      trace_(trace),
      options_(std::move(options)),
      alive_(std::make_shared<bool>(true)) {
  epoch_ns_ = steady_now_ns() - scheduler_.now_us() * 1000;
}

RealFabric::~RealFabric() {
  *alive_ = false;
  close_all();
}

TimeUs RealFabric::wall_now_us() const {
  return (steady_now_ns() - epoch_ns_) / 1000;
}

void RealFabric::rebase() {
  epoch_ns_ = steady_now_ns() - scheduler_.now_us() * 1000;
}

// ---------------------------------------------------------------------------------------
// Topology
// ---------------------------------------------------------------------------------------

void RealFabric::add_server(const std::string& name, const Endpoint& endpoint) {
  ServerInfo info;
  info.endpoint = endpoint;
  if (!endpoint.unix_path.empty()) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (endpoint.unix_path.size() >= sizeof addr.sun_path)
      throw scenario::BackendError(endpoint.unix_path + ": socket path too long");
    std::memcpy(addr.sun_path, endpoint.unix_path.c_str(), endpoint.unix_path.size() + 1);
    info.family = AF_UNIX;
    auto* bytes = reinterpret_cast<const unsigned char*>(&addr);
    info.address.assign(bytes, bytes + sizeof addr);
  } else {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    std::string port = std::to_string(endpoint.port);
    int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found);
    if (rc != 0 || !found)
      throw scenario::BackendError(endpoint.display() + ": " + ::gai_strerror(rc));
    // IPv4 first: a local redis-server listens on 127.0.0.1 by default, not ::1.
    const addrinfo* pick = found;
    for (const addrinfo* a = found; a; a = a->ai_next) {
      if (a->ai_family == AF_INET) {
        pick = a;
        break;
      }
    }
    info.family = pick->ai_family;
    auto* bytes = reinterpret_cast<const unsigned char*>(pick->ai_addr);
    info.address.assign(bytes, bytes + pick->ai_addrlen);
    ::freeaddrinfo(found);
  }
  servers_[name] = std::move(info);
}

void RealFabric::repoint(const std::string& name, const std::string& to) {
  auto target = servers_.find(to);
  REDLAB_ASSERT(target != servers_.end() && servers_.count(name) && "repoint() of known servers");
  ServerInfo copy = target->second;
  servers_[name] = std::move(copy);
}

RealFabric::Link& RealFabric::link_state(std::string_view host, std::string_view server) {
  auto key = std::make_pair(std::string(host), std::string(server));
  auto it = links_.find(key);
  if (it == links_.end()) {
    Link link;
    link.prng = Prng(options_.seed).derive(net::link_stream(host, server));
    it = links_.emplace(std::move(key), std::move(link)).first;
  }
  return it->second;
}

bool RealFabric::partitioned(const Conn& c) {
  if (c.internal) return false;
  auto it = links_.find(std::make_pair(c.host, c.server));
  return it != links_.end() && it->second.partitioned;
}

TimeUs RealFabric::arrival_us(Conn& c, Dir d, TimeUs sent_us) {
  TimeUs delay_us = options_.link.latency_us + c.extra_latency_us;
  if (options_.link.jitter_us > 0 && !c.internal) {
    Link& l = link_state(c.host, c.server);
    delay_us += static_cast<TimeUs>(l.prng.uniform(uint64_t(options_.link.jitter_us) + 1));
  }
  TimeUs& last = d == Dir::ToServer ? c.last_to_server_us : c.last_to_client_us;
  TimeUs at = std::max(add_saturating_us(sent_us, delay_us), last);
  last = at;
  return at;
}

RealFabric::Conn* RealFabric::find(ConnId id) {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : &it->second;
}

const RealFabric::Conn* RealFabric::find(ConnId id) const {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------
// Transport
// ---------------------------------------------------------------------------------------

ConnId RealFabric::open(std::string_view from_host, std::string_view to_server,
                        net::ConnCallbacks callbacks) {
  ConnId id = next_conn_++;
  Conn& c = conns_[id];
  c.id = id;
  c.host = std::string(from_host);
  c.server = std::string(to_server);
  c.callbacks = std::move(callbacks);
  TimeUs now = scheduler_.now_us();
  if (servers_.find(to_server) == servers_.end()) {
    trace_net("net_refused", id, "no server named " + c.server);
    c.state = State::Closed;
    deliver_eof(id, arrival_us(c, Dir::ToClient, arrival_us(c, Dir::ToServer, now)));
    return id;
  }
  Link& l = link_state(from_host, to_server);
  if (l.refused) {
    trace_net("net_refused", id, c.server + " refuses " + c.host);
    c.state = State::Closed;
    deliver_eof(id, arrival_us(c, Dir::ToClient, arrival_us(c, Dir::ToServer, now)));
    return id;
  }
  if (l.partitioned) {
    trace_net("net_drop", id, "to server: connect (partition)");
    c.state = State::Swallowed;
    return id;
  }
  dial(c);
  return id;
}

void RealFabric::dial(Conn& c) {
  const ServerInfo& server = servers_.find(c.server)->second;
  c.state = State::Dialing;
  c.reader = ReaderPtr(redisReaderCreate());
  REDLAB_ASSERT(c.reader && "a RESP reader (out of memory otherwise)");
  int fd = ::socket(server.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    refused(c, std::strerror(errno));
    return;
  }
  c.fd = fd;
  with_socket_.insert(c.id);
  if (!c.internal && options_.client_rcvbuf_bytes > 0) {
    int bytes = options_.client_rcvbuf_bytes;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
  if (server.family != AF_UNIX) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  // AUTH and SELECT go first; their replies are swallowed before on_connected.
  const Endpoint& ep = server.endpoint;
  if (!ep.password.empty()) {
    net::Argv auth = {"AUTH"};
    if (!ep.user.empty()) auth.push_back(ep.user);
    auth.push_back(ep.password);
    write_command(c, auth);
    c.handshake_replies++;
  }
  if (ep.db != 0) {
    write_command(c, {"SELECT", std::to_string(ep.db)});
    c.handshake_replies++;
  }
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(server.address.data()),
                     static_cast<socklen_t>(server.address.size()));
  if (rc == 0) {
    on_dial_done(c);
  } else if (errno != EINPROGRESS && errno != EINTR) {
    refused(c, std::strerror(errno));
  }
}

void RealFabric::refused(Conn& c, const std::string& why) {
  close_fd(c);
  c.state = State::Closed;
  if (!c.client_open || c.internal) return;
  trace_net("net_refused", c.id,
            c.server + " (" + servers_.find(c.server)->second.endpoint.display() + "): " + why);
  deliver_eof(c.id, arrival_us(c, Dir::ToClient, scheduler_.now_us()));
}

void RealFabric::on_dial_done(Conn& c) {
  int error = 0;
  socklen_t len = sizeof error;
  if (::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
  if (error != 0) {
    refused(c, std::strerror(error));
    return;
  }
  if (partitioned(c)) {
    // The fake drops the accept's answer in a partition: the client never learns.
    trace_net("net_drop", c.id, "to client: connect ack (partition)");
    close_fd(c);
    c.state = State::Swallowed;
    return;
  }
  if (c.local_address.empty()) {
    sockaddr_storage local{};
    socklen_t local_len = sizeof local;
    char ip[INET6_ADDRSTRLEN] = {};
    if (::getsockname(c.fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0) {
      if (local.ss_family == AF_INET) {
        auto* in = reinterpret_cast<const sockaddr_in*>(&local);
        if (::inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip))
          c.local_address = std::string(ip) + ":" + std::to_string(ntohs(in->sin_port));
      } else if (local.ss_family == AF_INET6) {
        auto* in6 = reinterpret_cast<const sockaddr_in6*>(&local);
        if (::inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip))
          c.local_address = std::string(ip) + ":" + std::to_string(ntohs(in6->sin6_port));
      }
    }
  }
  c.state = c.handshake_replies > 0 ? State::Handshake : State::Open;
  flush(c);
  if (c.state == State::Open) handshake_done(c);
}

void RealFabric::handshake_done(Conn& c) {
  c.state = State::Open;
  if (c.internal) return;
  // One round trip of link latency, as the simulated dial takes.
  TimeUs at = arrival_us(c, Dir::ToServer, scheduler_.now_us());
  deliver_connected(c.id, arrival_us(c, Dir::ToClient, at));
}

void RealFabric::send(ConnId conn, net::Argv argv, int64_t /*cause*/) {
  Conn* c = find(conn);
  REDLAB_ASSERT(c != nullptr && "send on a connection that was opened");
  REDLAB_ASSERT(c->client_open && "send on a connection the client has not closed");
  if (argv.empty()) return;
  if (c->state == State::Swallowed || partitioned(*c)) {
    trace_net("net_drop", conn, "to server: " + argv[0] + " (partition)");
    return;
  }
  net::Argv wire;
  std::optional<std::string> why = refusal(argv);
  if (why) {
    // Not sent. A PING with a marker keeps the reply in its place among the others.
    std::string marker =
        "redlab-refused-" + std::to_string(next_marker_++) + "-" + options_.key_prefix;
    refusal_markers_[marker] = "ERR redlab: " + *why;
    trace_net("net_command_refused", conn, *why);
    wire = {"PING", marker};
  } else if (!options_.key_prefix.empty()) {
    wire = prefix_argv(argv, options_.key_prefix);
  } else {
    wire = std::move(argv);
  }
  TimeUs now = scheduler_.now_us();
  TimeUs at = arrival_us(*c, Dir::ToServer, now);
  if (at <= now && c->pending_to_server == 0) {
    write_client_command(*c, wire);
    return;
  }
  c->pending_to_server++;
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(at, [this, alive, conn, wire = std::move(wire)] {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn* cc = find(conn);
    cc->pending_to_server--;
    if (cc->fd >= 0) write_client_command(*cc, wire);
  });
}

std::optional<std::string> RealFabric::refusal(const net::Argv& argv) const {
  if (options_.keep_identity) {
    if (auto why = refused_identity_command(argv))
      return *why + ", refused on a server redlab did not start";
  }
  if (!options_.allow_server_wide) {
    if (auto why = server_wide_command(argv))
      return *why + ", refused on a server redlab did not start (--allow-server-faults allows it)";
  }
  if (options_.prefix_only && !prefix_only_may(argv, options_.allowed_extra)) {
    std::string name = argv[0];
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return name +
           " is outside what redlab keeps under the run's prefix without an ACL user of its own "
           "(the credentials given cannot create one)";
  }
  return std::nullopt;
}

void RealFabric::note_refusals(const Conn& c, const Reply& reply) const {
  if (!options_.on_refusal) return;
  // Iterative: a reply's nesting is the server's, not ours to recurse on.
  std::vector<const Reply*> stack = {&reply};
  while (!stack.empty()) {
    const Reply* r = stack.back();
    stack.pop_back();
    if (r->kind == Reply::Kind::Error && (is_acl_refusal(r->str) || is_noscript_refusal(r->str)))
      options_.on_refusal(c.host, r->str);
    for (const Reply& element : r->elements) stack.push_back(&element);
  }
}

void RealFabric::write_client_command(Conn& c, const net::Argv& argv) {
  if (c.fd < 0 || argv.empty()) return;
  std::string name = argv[0];
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string id;  // "" = not a script
  if (is_script_command(argv)) {
    id = "-";
    if (argv.size() > 1 && (name == "evalsha" || name == "evalsha_ro")) {
      id = argv[1];
      for (char& ch : id) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else if (argv.size() > 1 && (name == "eval" || name == "eval_ro")) {
      id = fake::sha1_hex(argv[1]);
    }
  }
  if (id.size() == 40 &&
      std::find(c.scripts_sent.begin(), c.scripts_sent.end(), id) == c.scripts_sent.end() &&
      c.scripts_sent.size() < kScriptsPerConnMax)
    c.scripts_sent.push_back(id);
  if (name.find("subscribe") != std::string::npos || name == "monitor") c.untracked = true;
  if (c.untracked) {
    if (!id.empty()) script_left(c, id);  // its reply cannot be told from the others
    c.unanswered.clear();
  } else {
    c.unanswered.push_back(std::move(id));
  }
  write_command(c, argv);
}

void RealFabric::script_left(const Conn& c, const std::string& id) {
  if (scripts_may_run_) return;
  scripts_may_run_ = true;
  script_left_host_ = c.host;
  script_left_sha_ = id == "-" ? "" : id;
}

void RealFabric::answered(Conn& c) {
  if (!c.unanswered.empty()) c.unanswered.pop_front();
}

void RealFabric::write_command(Conn& c, const net::Argv& argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (const std::string& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  if (c.fd < 0 && c.state == State::Closed) return;  // the bytes would hit a closed socket
  char* raw = nullptr;
  int len = redisFormatCommandArgv(&raw, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  std::unique_ptr<char, decltype(&redisFreeCommand)> formatted(raw, &redisFreeCommand);
  REDLAB_ASSERT(len > 0 && formatted && "a formatted command (out of memory otherwise)");
  c.out.append(formatted.get(), static_cast<size_t>(len));
  if (c.state == State::Open || c.state == State::Handshake) flush(c);
}

void RealFabric::flush(Conn& c) {
  // Bounded by the buffer: each pass writes some bytes or stops.
  while (c.fd >= 0 && c.out_offset < c.out.size()) {
    ssize_t n =
        ::send(c.fd, c.out.data() + c.out_offset, c.out.size() - c.out_offset, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_offset += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    lost(c, std::strerror(errno));
    return;
  }
  if (c.out_offset == c.out.size()) {
    c.out.clear();
    c.out_offset = 0;
  }
}

void RealFabric::close(ConnId conn) {
  Conn* c = find(conn);
  if (!c || !c->client_open) return;
  c->client_open = false;
  c->callbacks = net::ConnCallbacks{};  // safe: callbacks are copied before they run
  c->held.clear();
  close_fd(*c);
  c->state = State::Closed;
}

void RealFabric::close_fd(Conn& c) {
  if (c.fd < 0) return;
  // A script without its reply may still run on the server, whoever closes the socket.
  for (const std::string& id : c.unanswered)
    if (!id.empty()) {
      script_left(c, id);
      break;
    }
  c.unanswered.clear();
  ::close(c.fd);
  c.fd = -1;
  with_socket_.erase(c.id);
  c.out.clear();
  c.out_offset = 0;
}

void RealFabric::close_all() {
  for (auto& [id, c] : conns_) {
    c.client_open = false;
    c.callbacks = net::ConnCallbacks{};
    c.held.clear();
    close_fd(c);
    c.state = State::Closed;
  }
}

// ---------------------------------------------------------------------------------------
// Reading and delivery
// ---------------------------------------------------------------------------------------

bool RealFabric::reading(const Conn& c) const {
  if (!c.paced) return true;
  return c.credits > 0 && c.held.empty() && c.pending_to_client == 0;
}

void RealFabric::handle_socket(ConnId id, short revents) {
  Conn* c = find(id);
  if (!c || c->fd < 0) return;
  if (c->state == State::Dialing) {
    if (revents & (POLLOUT | POLLERR | POLLHUP)) on_dial_done(*c);
    return;
  }
  if ((revents & POLLOUT) && c->out_offset < c->out.size()) flush(*c);
  if (c->fd < 0) return;
  if (!reading(*c)) {
    if (revents & (POLLRDHUP | POLLHUP | POLLERR)) {
      // A paced reader learns that the server cut it: what it never read is lost.
      char buf[kReadChunkBytes];
      size_t drained = 0;
      while (drained < kDrainBytesMax) {
        ssize_t n = ::recv(c->fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        drained += static_cast<size_t>(n);
        redisReaderFeed(c->reader.get(), buf, static_cast<size_t>(n));
      }
      parse_replies(*c, false);
      lost(*c, "closed by " + c->server);
    }
    return;
  }
  if (revents & (POLLIN | POLLHUP | POLLERR | POLLRDHUP)) read_socket(*c);
}

void RealFabric::read_socket(Conn& c) {
  char buf[kReadChunkBytes];
  size_t chunk = c.paced ? kPacedReadChunkBytes : sizeof buf;
  // A paced connection reads small pieces until one reply is complete; others read once per
  // readable event (poll comes back while more is there).
  for (int pass = 0; pass < 64; pass++) {
    ssize_t n = ::recv(c.fd, buf, chunk, 0);
    if (n == 0) {
      lost(c, "closed by " + c.server);
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      lost(c, std::strerror(errno));
      return;
    }
    if (redisReaderFeed(c.reader.get(), buf, static_cast<size_t>(n)) != REDIS_OK) {
      lost(c, "protocol error");
      return;
    }
    size_t parsed = parse_replies(c);
    if (!c.paced || parsed > 0 || c.fd < 0) return;
  }
}

size_t RealFabric::parse_replies(Conn& c, bool deliver_them) {
  size_t count = 0;
  while (count < kRepliesPerParseMax && c.reader) {
    void* raw = nullptr;
    if (redisReaderGetReply(c.reader.get(), &raw) != REDIS_OK) {
      std::string why = std::string("protocol error: ") + c.reader->errstr;
      lost(c, why);
      return count;
    }
    if (!raw) return count;
    std::unique_ptr<void, ReplyDeleter> holder(raw);
    Reply reply = convert_reply(static_cast<redisReply*>(raw));
    holder.reset();
    count++;
    if (!deliver_them) {
      if (c.handshake_replies == 0) {
        answered(c);
        c.held.push_back(std::move(reply));
      }
      continue;
    }
    on_reply(c, std::move(reply));
    // A callback may have closed this connection: stop feeding it.
    if (c.state == State::Closed || c.fd < 0) return count;
  }
  return count;
}

void RealFabric::on_reply(Conn& c, Reply reply) {
  if (c.handshake_replies > 0) {
    c.handshake_replies--;
    if (reply.is_error()) {
      // WRONGPASS / NOAUTH / a bad db: the server's text (it never contains the password).
      trace_net("net_auth_failed", c.id, c.server + ": " + reply.str);
      close_fd(c);
      c.state = State::Closed;
      if (c.client_open && !c.internal)
        deliver_eof(c.id, arrival_us(c, Dir::ToClient, scheduler_.now_us()));
      return;
    }
    if (c.handshake_replies == 0) handshake_done(c);
    return;
  }
  if (!c.internal) answered(c);
  note_refusals(c, reply);
  if (c.internal) {
    // server_command: the reply is dropped and the connection has done its job.
    close_fd(c);
    c.state = State::Closed;
    return;
  }
  if (!options_.key_prefix.empty()) reply = unprefix_reply(std::move(reply), options_.key_prefix);
  if (!refusal_markers_.empty()) reply = replace_markers(std::move(reply));
  if (partitioned(c)) {
    trace_net("net_drop", c.id, "to client: " + format_short(reply, 40) + " (partition)");
    return;
  }
  deliver(c.id, arrival_us(c, Dir::ToClient, scheduler_.now_us()), std::move(reply));
}

Reply RealFabric::replace_markers(Reply reply) {
  if (reply.kind == Reply::Kind::Bulk || reply.kind == Reply::Kind::Status) {
    auto it = refusal_markers_.find(reply.str);
    if (it != refusal_markers_.end()) {
      Reply error = Reply::error(it->second);
      refusal_markers_.erase(it);
      return error;
    }
  }
  for (Reply& element : reply.elements) element = replace_markers(std::move(element));
  return reply;
}

void RealFabric::deliver(ConnId id, TimeUs at_us, Reply reply) {
  Conn& c = conns_.at(id);
  if (at_us <= scheduler_.now_us() && c.pending_to_client == 0) {
    hand_over(c, std::move(reply));
    return;
  }
  c.pending_to_client++;
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(std::max(at_us, scheduler_.now_us()),
                         [this, alive, id, reply = std::move(reply)]() mutable {
                           auto a = alive.lock();
                           if (!a || !*a) return;
                           Conn& cc = conns_.at(id);
                           cc.pending_to_client--;
                           hand_over(cc, std::move(reply));
                         });
}

void RealFabric::hand_over(Conn& c, Reply reply) {
  if (!c.client_open || !c.callbacks.on_reply) return;
  if (c.paced) {
    if (c.credits == 0) {
      c.held.push_back(std::move(reply));
      return;
    }
    c.credits--;
  }
  auto cb = c.callbacks.on_reply;
  cb(std::move(reply));
}

void RealFabric::deliver_eof(ConnId id, TimeUs at_us) {
  // Always an event: open() must not call back synchronously, and FIFO after held replies.
  conns_.at(id).pending_to_client++;
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(std::max(at_us, scheduler_.now_us()), [this, alive, id] {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn& c = conns_.at(id);
    c.pending_to_client--;
    if (!c.client_open || !c.callbacks.on_closed) return;
    if (!c.held.empty())
      trace_net("net_buffer_lost", id,
                std::to_string(c.held.size()) + " unread replies dropped with the connection");
    c.held.clear();
    auto cb = c.callbacks.on_closed;
    cb();
  });
}

void RealFabric::deliver_connected(ConnId id, TimeUs at_us) {
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_at(std::max(at_us, scheduler_.now_us()), [this, alive, id] {
    auto a = alive.lock();
    if (!a || !*a) return;
    Conn& c = conns_.at(id);
    if (!c.client_open || c.state != State::Open || !c.callbacks.on_connected) return;
    auto cb = c.callbacks.on_connected;
    cb();
  });
}

void RealFabric::lost(Conn& c, const std::string& why) {
  if (c.fd < 0) return;
  close_fd(c);
  bool was_dialing = c.state == State::Dialing;
  c.state = State::Closed;
  if (!c.client_open || c.internal) return;
  trace_net(was_dialing ? "net_refused" : "net_server_close", c.id, why);
  if (partitioned(c)) {
    trace_net("net_drop", c.id, "to client: close (partition)");
    return;
  }
  deliver_eof(c.id, arrival_us(c, Dir::ToClient, scheduler_.now_us()));
}

// ---------------------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------------------

void RealFabric::catch_up() {
  if (loop_result_.bound_hit) return;
  // Never past the end of the current run: what happens after it is not part of the run.
  TimeUs now = std::max(std::min(wall_now_us(), loop_end_us_), scheduler_.now_us());
  Scheduler::RunResult r = scheduler_.run_until(now, events_left_);
  loop_result_.events_run += r.events_run;
  events_left_ -= std::min(events_left_, r.events_run);
  if (r.bound_hit) loop_result_.bound_hit = true;
}

Scheduler::RunResult RealFabric::run_until(TimeUs end_us, uint64_t events_max,
                                           const std::atomic<bool>* cancel) {
  loop_result_ = Scheduler::RunResult{};
  events_left_ = events_max;
  loop_end_us_ = end_us;
  std::vector<pollfd> fds;
  std::vector<ConnId> ids;
  // Bounded by end_us (wall time moves), events_max and cancel.
  while (true) {
    if (cancel && cancel->load()) break;
    TimeUs target = std::max(std::min(wall_now_us(), end_us), scheduler_.now_us());
    Scheduler::RunResult r = scheduler_.run_until(target, events_left_);
    loop_result_.events_run += r.events_run;
    events_left_ -= std::min(events_left_, r.events_run);
    if (r.bound_hit) {
      loop_result_.bound_hit = true;
      break;
    }
    if (target >= end_us) break;
    // Nothing can happen any more and there is no end: stop rather than wait forever.
    if (end_us == kTimeNeverUs && scheduler_.empty() && with_socket_.empty()) break;

    probe_paced();
    TimeUs wake_us = std::min(scheduler_.next_time_us(), end_us);
    TimeUs wait_us = std::clamp<TimeUs>(wake_us - wall_now_us(), 0, kPollSliceUs);
    fds.clear();
    ids.clear();
    for (ConnId id : with_socket_) {
      const Conn& c = conns_.at(id);
      short events = 0;
      if (c.state == State::Dialing) {
        events = POLLOUT;
      } else {
        if (c.out_offset < c.out.size()) events |= POLLOUT;
        events |= reading(c) ? (POLLIN | POLLRDHUP) : POLLRDHUP;
      }
      fds.push_back(pollfd{c.fd, events, 0});
      ids.push_back(id);
    }
    timespec timeout{static_cast<time_t>(wait_us / kUsPerSecond),
                     static_cast<long>((wait_us % kUsPerSecond) * 1000)};
    int ready = ::ppoll(fds.data(), fds.size(), &timeout, nullptr);
    if (ready <= 0) continue;  // timeout, or EINTR (a signal): the loop re-checks everything
    for (size_t i = 0; i < fds.size(); i++) {
      if (fds[i].revents == 0) continue;
      catch_up();
      if (loop_result_.bound_hit) break;
      Conn* c = find(ids[i]);
      if (!c || c->fd != fds[i].fd) continue;  // closed meanwhile
      handle_socket(ids[i], fds[i].revents);
    }
    if (loop_result_.bound_hit) break;
  }
  return loop_result_;
}

void RealFabric::probe_paced() {
  TimeUs now = wall_now_us();
  std::vector<ConnId> due;
  for (ConnId id : with_socket_) {
    const Conn& c = conns_.at(id);
    if (c.paced && c.state == State::Open && !reading(c) && now - c.probed_at_us >= kPacedProbeUs)
      due.push_back(id);
  }
  for (ConnId id : due) {
    Conn& c = conns_.at(id);
    c.probed_at_us = now;
    c.out += "\r\n";  // an empty inline command: no reply from a live server
    flush(c);
  }
}

// ---------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------

std::vector<ConnId> RealFabric::connections_of(std::string_view host) const {
  std::vector<ConnId> out;
  for (const auto& [id, c] : conns_)
    if (!c.internal && c.client_open && c.host == host) out.push_back(id);
  return out;
}

void RealFabric::disconnect(ConnId conn) {
  Conn* c = find(conn);
  if (!c) return;
  trace_net("net_disconnect", conn, "connection reset");
  if (c->fd >= 0) ::shutdown(c->fd, SHUT_RDWR);
  close_fd(*c);
  c->state = State::Closed;
  if (!c->client_open) return;
  if (partitioned(*c)) {
    trace_net("net_drop", conn, "to client: reset (partition)");
    return;
  }
  deliver_eof(conn, arrival_us(*c, Dir::ToClient, scheduler_.now_us()));
}

void RealFabric::set_partition(std::string_view host, std::string_view server, bool on) {
  Link& l = link_state(host, server);
  if (l.partitioned == on) return;
  l.partitioned = on;
  trace_net(on ? "net_partition" : "net_heal", -1,
            std::string(host) + " <-> " + std::string(server));
}

void RealFabric::set_refused(std::string_view host, std::string_view server, bool on) {
  link_state(host, server).refused = on;
  trace_net(on ? "net_refuse_begin" : "net_refuse_end", -1,
            std::string(host) + " -> " + std::string(server));
}

void RealFabric::set_extra_latency(ConnId conn, TimeUs extra_us) {
  REDLAB_ASSERT(extra_us >= 0 && "extra latency is not negative");
  Conn* c = find(conn);
  if (!c) return;
  c->extra_latency_us = extra_us;
  trace_net("net_slow", conn, "extra latency " + std::to_string(extra_us) + " us");
}

void RealFabric::set_paced(ConnId conn) {
  Conn* c = find(conn);
  if (!c || c->paced) return;
  c->paced = true;
}

bool RealFabric::paced(ConnId conn) const {
  const Conn* c = find(conn);
  return c && c->paced;
}

void RealFabric::read_one(ConnId conn) {
  Conn* c = find(conn);
  if (!c || !c->paced || !c->client_open) return;
  if (c->held.empty()) {
    c->credits = 1;  // one read waiting; reads do not pile up
    return;
  }
  Reply reply = std::move(c->held.front());
  c->held.pop_front();
  auto cb = c->callbacks.on_reply;
  if (cb) cb(std::move(reply));
}

void RealFabric::server_command(const std::string& server, net::Argv argv) {
  if (trace_)
    trace_->append(
        TraceEvent{scheduler_.now_us(), "server_command", server, -1, -1, -1, command_line(argv)});
  if (servers_.find(server) == servers_.end()) return;
  ConnId id = next_conn_++;
  Conn& c = conns_[id];
  c.id = id;
  c.host = kInternalHost;
  c.server = server;
  c.internal = true;
  c.client_open = false;  // nobody is called back
  dial(c);
  if (c.state != State::Closed) write_command(c, argv);
}

// ---------------------------------------------------------------------------------------

bool RealFabric::connected(ConnId conn) const {
  const Conn* c = find(conn);
  return c && c->fd >= 0 && c->state == State::Open;
}

size_t RealFabric::open_sockets() const {
  return with_socket_.size();
}

int RealFabric::socket_of(ConnId conn) const {
  const Conn* c = find(conn);
  return c ? c->fd : -1;
}

std::string RealFabric::host_of_address(std::string_view address) const {
  if (address.empty()) return "";
  // The newest first: a port may be reused by a later connection.
  for (auto it = conns_.rbegin(); it != conns_.rend(); ++it)
    if (it->second.local_address == address) return it->second.host;
  return "";
}

std::vector<std::string> RealFabric::scripts_sent_from(std::string_view address) const {
  if (address.empty()) return {};
  for (auto it = conns_.rbegin(); it != conns_.rend(); ++it)
    if (it->second.local_address == address) return it->second.scripts_sent;
  return {};
}

void RealFabric::trace_net(std::string kind, ConnId conn, std::string text) {
  if (!trace_) return;
  trace_->append(
      TraceEvent{scheduler_.now_us(), std::move(kind), "net", conn, -1, -1, std::move(text)});
}

}  // namespace redlab::real
