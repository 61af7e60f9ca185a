// The replication link between two spawned servers, carried through redlab so that the
// scenario's replication faults act on it as they do on the fake's simulated link
// (sim/net/network.h, add_replication):
//
//   replica --(--replicaof 127.0.0.1 <relay port>)--> relay --> primary
//
// A replica is started with the relay's loopback port as its primary. The relay accepts its
// connection (and every reconnection), dials the primary and passes the bytes both ways:
// - lag: every chunk of the stream (primary -> replica) read from now on is held for lag_us
//   before it is written on, in order (what a slow link does; acks go back at once);
// - partition: nothing passes either way; what was read waits, in order, and goes on when the
//   partition heals (TCP retransmits what a cut link loses, so nothing is lost);
// - cut (a failover): what the relay holds is dropped and both sockets are closed; the
//   replica gets nothing more of the primary (what it had not received is lost);
// - the primary closing (a restart, or its process killed): what it sent first still reaches
//   the replica, after its lag, and then the replica's connection is closed.
//
// One thread per relay, polling its sockets and a wake-up pipe; the backend's calls take a
// mutex. Loopback only. The relay never reads the stream: it moves bytes.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace redlab::real {

class ReplRelay {
 public:
  // Listens on a free loopback port (throws scenario::BackendError if it cannot).
  ReplRelay();
  ~ReplRelay();
  ReplRelay(const ReplRelay&) = delete;
  ReplRelay& operator=(const ReplRelay&) = delete;

  int port() const { return listen_port_; }
  // Where the primary listens. Until it is set, an accepted replica connection waits.
  void set_primary_port(int port);
  void set_lag_us(int64_t lag_us);
  void set_partition(bool on);
  // A failover: drops what is held, closes both sides, accepts nothing more.
  void cut();

 private:
  struct Chunk {
    int64_t due_us = 0;  // steady-clock microseconds
    std::string bytes;
  };
  void loop();
  void wake();
  void close_pair();  // mu_ held

  int listen_fd_ = -1;
  int listen_port_ = 0;
  int wake_fds_[2] = {-1, -1};
  std::thread thread_;

  std::mutex mu_;
  bool stop_ = false;
  bool cut_ = false;
  bool partitioned_ = false;
  bool draining_ = false;  // the primary closed; the replica gets what is held, then the close
  int64_t lag_us_ = 0;
  int primary_port_ = 0;
  int replica_fd_ = -1;  // the replica's connection to the relay
  int primary_fd_ = -1;  // the relay's connection to the primary
  std::deque<Chunk> to_replica_;
  std::deque<Chunk> to_primary_;
};

}  // namespace redlab::real
