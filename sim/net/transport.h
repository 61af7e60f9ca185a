// The transport interface: how a client model talks to a server, fake or real.
//
// DESIGN.md: "The fake and the real server differ only behind a transport interface (open /
// send / close, and events back: connected, reply, closed)". The client model (sim/client)
// only ever sees this interface, so a real-socket transport (real/) can replace the simulated
// network (sim/net/network.h) without the client noticing.
//
// Contract:
//   open(from, to, callbacks)  starts a connection from host `from` to server `to` and returns
//                              its id at once. Later exactly one of: on_connected (the
//                              handshake completed) or on_closed (refused / reset), or nothing
//                              at all (a partition swallows the handshake: the caller's dial
//                              timeout has to fire).
//   send(conn, argv, cause)    writes one command. Writes never block (the socket buffer is
//                              large); whether and when it arrives is the transport's business.
//   close(conn)                closes our side. No callback of that connection runs afterwards.
//   on_reply(reply)            one reply or push, in the order the server sent them.
//   on_closed()                the peer closed or reset the connection (the reader sees EOF).
// Callbacks run from the single-threaded event loop, never from inside open/send/close.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/reply.h"

namespace redlab::net {

using ConnId = int64_t;
using Argv = std::vector<std::string>;

struct ConnCallbacks {
  std::function<void()> on_connected;
  std::function<void(Reply)> on_reply;
  std::function<void()> on_closed;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual ConnId open(std::string_view from_host, std::string_view to_server,
                      ConnCallbacks callbacks) = 0;
  // cause: the trace span of the client's command (0 = none); a simulated server tags what it
  // does for the command with it, so a server event names the command that caused it.
  virtual void send(ConnId conn, Argv argv, int64_t cause = 0) = 0;
  virtual void close(ConnId conn) = 0;
};

}  // namespace redlab::net
