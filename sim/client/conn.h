// One client-side connection (go-redis internal/pool.Conn) over a net::Transport.
//
// A connection does one thing at a time, like a Go goroutine holding a net.Conn: dial, or a
// round trip (write some commands, read a given number of replies before a read deadline).
// Replies that nobody waits for are pushes (pub/sub messages) and go to on_push. Everything
// arriving from the network passes through the owning Process, so a paused client reads
// nothing until it resumes (the bytes wait in the socket buffer).
//
// Always held by shared_ptr: network and timer callbacks hold weak references, so a closed
// and dropped connection is never called back.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/client/errors.h"
#include "sim/net/process.h"
#include "sim/net/transport.h"

namespace redlab::client {

using Argv = std::vector<std::string>;

class Conn : public std::enable_shared_from_this<Conn> {
 public:
  using DialDone = std::function<void(Error)>;
  using ReadDone = std::function<void(std::vector<Reply>, Error)>;

  Conn(net::Process& process, net::Transport& transport, std::string server);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Opens the connection. done(ok) when connected, done(DialTimeout) at timeout_at_us, or
  // done(Refused) when refused. Call once.
  void dial(TimeUs timeout_at_us, DialDone done);
  // Writes cmds, then reads `replies` replies. done(replies, ok), or at deadline_us
  // (kTimeNeverUs = none) done(replies so far, ReadTimeout), or done(.., Eof) on EOF.
  // The trace spans of cmds are first_cause, first_cause + 1, ... (0: none), passed to the
  // transport as each command's cause.
  void roundtrip(std::vector<Argv> cmds, int64_t first_cause, size_t replies, TimeUs deadline_us,
                 ReadDone done);
  // Writes without waiting for anything (pub/sub SUBSCRIBE: confirmations are pushes).
  void write(Argv argv, int64_t cause = 0);
  // Closes our side; no callback of this connection runs afterwards (a pending dial or
  // round trip never completes: its owner decides what that means).
  void close();

  net::ConnId id() const { return id_; }
  bool connected() const { return state_ == State::Connected; }
  bool closed() const { return state_ == State::Closed; }
  // EOF seen (the server closed it): unhealthy, pool.isHealthyConn's connCheck says so.
  bool eof_seen() const { return eof_seen_; }
  bool busy() const { return static_cast<bool>(read_done_) || static_cast<bool>(dial_done_); }
  // initConn done (HELLO answered): pool.Conn.Inited.
  bool inited() const { return inited_; }
  void set_inited() { inited_ = true; }
  TimeUs used_at_us() const { return used_at_us_; }
  void set_used_at(TimeUs t) { used_at_us_ = t; }

  // Replies no round trip waits for.
  std::function<void(Reply)> on_push;
  // EOF while no round trip is pending.
  std::function<void()> on_idle_eof;

 private:
  enum class State : uint8_t { New, Dialing, Connected, Closed };
  void handle_connected();
  void handle_reply(Reply reply);
  void handle_eof();
  void finish_read(Error error);

  net::Process& process_;
  net::Transport& transport_;
  std::string server_;
  State state_ = State::New;
  net::ConnId id_ = 0;
  bool eof_seen_ = false;
  bool inited_ = false;
  TimeUs used_at_us_ = 0;
  DialDone dial_done_;
  net::Process::TimerId dial_timer_ = 0;
  ReadDone read_done_;
  size_t replies_wanted_ = 0;
  std::vector<Reply> replies_;
  net::Process::TimerId read_timer_ = 0;
};

}  // namespace redlab::client
