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
// Every dial goes through the pool's dial-error circuit breaker (pool.NewConn -> dialConn), so
// after PoolSize failed reconnects the PubSub gets the last dial error at once until the
// pool's probe has dialed successfully (pool.h).
//
// Two ways to receive, as in go-redis:
// - Without channel() (Receive / ReceiveMessage in a loop that handles each message at
//   once): every message goes to on_message when it arrives, traced as "pubsub_message".
// - channel() (PubSub.Channel, pubsub.go): a goroutine reads the socket all the time and puts
//   each message into a Go channel of ChannelOptions::size (100) messages; the application
//   takes them out one by one, handle_us each ("pubsub_message" and on_message when it takes
//   one). When the channel is full the goroutine blocks on the send and reads nothing more
//   (what the server sends waits in its output buffer, where client-output-buffer-limit
//   applies); after send_timeout_us (1 min) it drops the message ("pubsub_dropped") and
//   reads on. While it is blocked it does not see an EOF either: it notices it on its next
//   read. A health check writes PING when nothing arrived for health_check_us (3 s).
//
// A PubSub must not outlive its Client.
//
// Not modelled: ReceiveTimeout, RESP3 pushes, ChannelWithSubscriptions.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
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

// pubsub.go newChannel defaults and the ChannelOption setters (WithChannelSize,
// WithChannelSendTimeout, WithChannelHealthCheckInterval), plus the application's own time
// per message.
struct ChannelOptions {
  int64_t size = 100;
  TimeUs send_timeout_us = seconds_to_us(60);
  TimeUs health_check_us = seconds_to_us(3);  // 0: no health check
  TimeUs handle_us = 0;                       // the application's time per message
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
  // PubSub.Channel(): from now on messages go through the Go channel (see above). Call once,
  // before the messages arrive.
  void channel(ChannelOptions options);

  std::function<void(const Message&)> on_message;

  bool connected() const { return conn_ && conn_->connected(); }
  int64_t reconnects() const { return reconnects_; }
  net::ConnId conn_id() const { return conn_ ? conn_->id() : -1; }
  const std::set<std::string>& channels() const { return channels_; }
  // Channel(): messages waiting in the Go channel, and whether the reader is blocked.
  size_t queued() const { return queue_.size(); }
  bool reader_blocked() const { return blocked_.has_value(); }
  int64_t dropped() const { return dropped_; }

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
  // Trace spans: each (P)SUBSCRIBE written, until its first confirmation (with how many
  // confirmations it still expects), and the gap between a disconnect and the resubscribe.
  std::deque<std::pair<int64_t, size_t>> awaiting_confirm_;
  int64_t gap_span_ = 0;
  // Writes argv with a command event (and a span awaiting confirmations if expect > 0).
  void write_command(Argv argv, size_t expect_confirmations);
  // Channel(): the reader asks the socket for the next reply (after this event).
  void read_next();
  void enqueue(Message m);
  void consume();
  void deliver(const Message& m);
  void unblock();
  void health_check();
  bool channel_mode_ = false;
  ChannelOptions channel_options_;
  std::deque<Message> queue_;
  std::optional<Message> blocked_;  // the message the reader is trying to send
  net::Process::TimerId send_timer_ = 0;
  bool consumer_busy_ = false;
  bool read_pending_ = false;  // read_next() scheduled its read_one()
  bool eof_pending_ = false;   // an EOF arrived while the reader was blocked
  int64_t dropped_ = 0;
  TimeUs last_received_us_ = 0;
  bool health_timer_ = false;
  std::shared_ptr<bool> alive_;
};

}  // namespace redlab::client
