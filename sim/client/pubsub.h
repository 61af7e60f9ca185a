// go-redis PubSub (pubsub.go): a dedicated connection, a receive loop, and reconnection.
//
// The connection is dialed outside the pool's turns (pool.NewConn), so a subscriber never
// waits for the pool, and it holds its connection for its whole life. subscribe() writes
// SUBSCRIBE and completes once written (go-redis does not wait for the confirmation; it is
// traced as "pubsub_confirm" when it arrives). Messages go to on_message in arrival order.
//
// When the connection drops (EOF: the server closed it, a reset, an output-buffer kill), the
// PubSub closes it and dials again at once (PubSub.reconnect), initializes it (HELLO, like
// every new connection), then resubscribes to every
// channel and pattern (PubSub.resubscribe); a failed dial is retried every
// pubsub_reconnect_delay_us (channel.go sleeps 100 ms after consecutive errors). What was
// published while no subscription existed on the server is silently lost: no error, no
// marker in the stream. The trace shows the gap: pubsub_disconnected ... pubsub_resubscribe.
//
// A PubSub must not outlive its Client.
//
// Not modelled: the Channel() health-check PING (it only detects write failures, which a
// simulated partition never produces), ReceiveTimeout, RESP3 pushes.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/client/client.h"

namespace redlab::client {

struct Message {
  std::string channel;
  std::string pattern;  // empty for a plain "message"
  std::string payload;
  TimeUs received_us = 0;
};

class PubSub {
 public:
  // step and actor: who subscribes, for the trace (actor empty: the client's process).
  explicit PubSub(Client& client, int64_t step = -1, std::string actor = {});
  ~PubSub();
  PubSub(const PubSub&) = delete;
  PubSub& operator=(const PubSub&) = delete;

  void subscribe(std::vector<std::string> channels, Client::ErrorDone done);
  void psubscribe(std::vector<std::string> patterns, Client::ErrorDone done);
  void unsubscribe(std::vector<std::string> channels);
  void close();

  std::function<void(const Message&)> on_message;

  bool connected() const { return conn_ && conn_->connected(); }
  int64_t reconnects() const { return reconnects_; }
  net::ConnId conn_id() const { return conn_ ? conn_->id() : -1; }
  const std::set<std::string>& channels() const { return channels_; }

  // A bound on dial attempts in one reconnection (with a permanent partition the scenario
  // still ends: 10000 * 5 s dial timeouts).
  static constexpr int64_t kReconnectAttemptsMax = 10000;

 private:
  void send_subscribe(const char* command, std::set<std::string>& into,
                      std::vector<std::string> names, Client::ErrorDone done);
  void with_conn(std::function<void(Error)> then);
  void dialed(Pool::ConnPtr conn, Error err);
  void adopt(Pool::ConnPtr conn);
  void send_subscriptions();
  void handle_push(Reply reply);
  void handle_eof();
  void redial(int64_t tries);

  Client& client_;
  int64_t step_;
  std::string actor_;
  Pool::ConnPtr conn_;
  bool dialing_ = false;
  std::vector<std::function<void(Error)>> dial_waiters_;
  std::set<std::string> channels_;
  std::set<std::string> patterns_;
  bool closed_ = false;
  int64_t reconnects_ = 0;
  std::shared_ptr<bool> alive_;
};

}  // namespace redlab::client
