// The fabric: a Transport plus the connection-level faults a scenario can stage on it.
//
// Two implementations: the simulated network (sim/net/network.h, virtual time, fake servers)
// and real sockets (real/real_fabric.h, wall clock, redis-server). The scenario engine only
// sees this interface, so a pause, a dropped connection, a refused dial or extra latency
// means the same thing on both backends.
#pragma once

#include <string_view>
#include <vector>

#include "sim/core/clock.h"
#include "sim/net/transport.h"

namespace redlab::net {

class Fabric : public Transport {
 public:
  // Connections opened from host and not closed by it, in opening order.
  virtual std::vector<ConnId> connections_of(std::string_view host) const = 0;
  // Resets a connection: the server forgets it, the client sees EOF (after the latency).
  virtual void disconnect(ConnId conn) = 0;
  // Drops every message between host and server, both ways, while on (connections hang,
  // dials are swallowed: the client's timeouts decide).
  virtual void set_partition(std::string_view host, std::string_view server, bool on) = 0;
  // New connections from host to server are refused while on; open ones are not touched.
  virtual void set_refused(std::string_view host, std::string_view server, bool on) = 0;
  // Adds delay to every later message of one connection, both ways (held in-process).
  virtual void set_extra_latency(ConnId conn, TimeUs extra_us) = 0;
  // A slow reader: from now on the client reads the connection's replies one at a time,
  // when read_one() asks; unread replies pile up at the server (its output buffer).
  virtual void set_paced(ConnId conn) = 0;
  virtual bool paced(ConnId conn) const = 0;
  virtual void read_one(ConnId conn) = 0;
};

}  // namespace redlab::net
