// See pubsub.h.
#include "sim/client/pubsub.h"

#include "sim/core/assert.h"
#include "sim/net/fabric.h"

namespace redlab::client {

PubSub::PubSub(Client& client, int64_t step, std::string actor)
    : client_(client),
      step_(step),
      actor_(std::move(actor)),
      alive_(std::make_shared<bool>(true)) {}

PubSub::~PubSub() {
  *alive_ = false;
  if (send_timer_) client_.process().cancel(send_timer_);
  if (conn_) conn_->close();
}

void PubSub::close() {
  if (closed_) return;
  closed_ = true;
  if (send_timer_) client_.process().cancel(send_timer_);
  send_timer_ = 0;
  if (conn_) {
    if (client_.tracer().on())
      client_.tracer().emit(client_.tracer()
                                .make("conn_close", conn_->id(), step_, -1, "pubsub closed", actor_)
                                .with(F::reason, "pubsub closed"));
    conn_->close();
  }
  conn_.reset();
}

void PubSub::with_conn(std::function<void(Error)> then) {
  if (closed_) return then(Error::make(ErrorKind::Closed));
  if (conn_) return then(Error::none());
  dial_waiters_.push_back(std::move(then));
  if (dialing_) return;
  dialing_ = true;
  std::weak_ptr<bool> alive = alive_;
  client_.pool().dial_unpooled(
      kTimeNeverUs, TraceTag{step_, -1, actor_}, [this, alive](Pool::ConnPtr conn, Error err) {
        auto a = alive.lock();
        if (!a || !*a) return;
        if (!err.ok()) return dialed(nullptr, std::move(err));
        client_.init_conn(Context{kTimeNeverUs, step_, actor_}, conn, TraceTag{step_, -1, actor_},
                          [this, alive, conn](Error e) {
                            auto a2 = alive.lock();
                            if (!a2 || !*a2) return;
                            if (!e.ok()) conn->close();
                            dialed(e.ok() ? conn : nullptr, e);
                          });
      });
}

void PubSub::dialed(Pool::ConnPtr conn, Error err) {
  dialing_ = false;
  if (err.ok()) adopt(std::move(conn));
  auto waiters = std::move(dial_waiters_);
  dial_waiters_.clear();
  for (auto& w : waiters) w(err);
}

void PubSub::adopt(Pool::ConnPtr conn) {
  conn_ = std::move(conn);
  std::weak_ptr<bool> alive = alive_;
  conn_->on_push = [this, alive](Reply reply) {
    auto a = alive.lock();
    if (a && *a) handle_push(std::move(reply));
  };
  conn_->on_idle_eof = [this, alive] {
    auto a = alive.lock();
    if (a && *a) handle_eof();
  };
  // Channel(): the reader goroutine reads this connection one reply at a time.
  if (channel_mode_ && !blocked_) read_next();
}

// ---------------------------------------------------------------------------------------
// Channel() (pubsub.go: newChannel, initMsgChan, initHealthCheck)
// ---------------------------------------------------------------------------------------

void PubSub::channel(ChannelOptions options) {
  REDLAB_ASSERT(!channel_mode_ && "Channel() is set up once");
  REDLAB_ASSERT(options.size > 0 && "a Go channel of at least one message");
  channel_mode_ = true;
  channel_options_ = options;
  last_received_us_ = client_.process().now_us();
  if (conn_ && conn_->connected()) read_next();
  if (channel_options_.health_check_us > 0) health_check();
}

void PubSub::read_next() {
  if (!conn_ || !conn_->connected()) return;
  auto* fabric = dynamic_cast<net::Fabric*>(&client_.transport());
  if (!fabric) return;  // a transport that cannot pace: every reply is read at once
  net::ConnId id = conn_->id();
  if (!fabric->paced(id)) fabric->set_paced(id);
  // One read at a time: a second one would hand the reader a message it cannot take.
  if (read_pending_) return;
  read_pending_ = true;
  // After this event: a reply delivered by read_one() comes back into handle_push.
  std::weak_ptr<bool> alive = alive_;
  client_.process().after(0, [this, alive, fabric, id] {
    auto a = alive.lock();
    if (!a || !*a) return;
    read_pending_ = false;
    if (closed_ || !conn_ || conn_->id() != id || !conn_->connected()) return;
    fabric->read_one(id);
  });
}

void PubSub::enqueue(Message m) {
  if (static_cast<int64_t>(queue_.size()) < channel_options_.size) {
    queue_.push_back(std::move(m));
    read_next();
    consume();
    return;
  }
  // c.msgCh <- msg blocks; after chanSendTimeout the message is dropped.
  REDLAB_ASSERT(!blocked_ && "a blocked reader reads nothing");
  blocked_ = std::move(m);
  std::weak_ptr<bool> alive = alive_;
  send_timer_ = client_.process().after(channel_options_.send_timeout_us, [this, alive] {
    auto a = alive.lock();
    if (!a || !*a || !blocked_) return;
    send_timer_ = 0;
    dropped_++;
    const Tracer& tracer = client_.tracer();
    if (tracer.on())
      tracer.emit(tracer
                      .make("pubsub_dropped", conn_id(), step_, -1,
                            blocked_->channel + ": channel full for " +
                                std::to_string(us_to_ms(channel_options_.send_timeout_us)) +
                                " ms (message is dropped)",
                            actor_)
                      .with(F::channel, blocked_->channel)
                      .with(F::message, trace_excerpt(blocked_->payload))
                      .with(F::duration_us, channel_options_.send_timeout_us));
    blocked_.reset();
    if (eof_pending_) {
      eof_pending_ = false;
      return handle_eof();
    }
    read_next();
  });
}

// The reader's blocked send completes once the application has taken a message out.
void PubSub::unblock() {
  if (!blocked_ || static_cast<int64_t>(queue_.size()) >= channel_options_.size) return;
  if (send_timer_) client_.process().cancel(send_timer_);
  send_timer_ = 0;
  queue_.push_back(std::move(*blocked_));
  blocked_.reset();
  if (eof_pending_) {
    eof_pending_ = false;
    return handle_eof();
  }
  read_next();
}

// The application: for msg := range ch { handle(msg) }, handle_us per message.
void PubSub::consume() {
  while (!consumer_busy_ && !queue_.empty() && !closed_) {
    Message m = std::move(queue_.front());
    queue_.pop_front();
    m.received_us = client_.process().now_us();
    deliver(m);
    unblock();
    if (channel_options_.handle_us <= 0) continue;
    consumer_busy_ = true;
    std::weak_ptr<bool> alive = alive_;
    client_.process().after(channel_options_.handle_us, [this, alive] {
      auto a = alive.lock();
      if (!a || !*a) return;
      consumer_busy_ = false;
      consume();
    });
  }
}

void PubSub::deliver(const Message& m) {
  const Tracer& tracer = client_.tracer();
  if (tracer.on()) {
    TraceEvent e = tracer.make("pubsub_message", conn_id(), step_, -1,
                               m.channel + ": " + format_short(Reply::bulk(m.payload), 60), actor_);
    e.with(F::channel, m.channel).with(F::message, trace_excerpt(m.payload));
    if (channel_mode_) e.with(F::count, static_cast<int64_t>(queue_.size()));
    tracer.emit(std::move(e));
  }
  if (on_message) on_message(m);
}

// Ping when nothing arrived for checkInterval (any message is as good as a ping).
void PubSub::health_check() {
  if (closed_) return;
  TimeUs now = client_.process().now_us();
  TimeUs due = add_saturating_us(last_received_us_, channel_options_.health_check_us);
  if (now >= due) {
    if (conn_ && conn_->connected()) write_command({"PING"}, 0);
    last_received_us_ = now;
    due = add_saturating_us(now, channel_options_.health_check_us);
  }
  std::weak_ptr<bool> alive = alive_;
  client_.process().after(due - now, [this, alive] {
    auto a = alive.lock();
    if (a && *a) health_check();
  });
}

void PubSub::subscribe(std::vector<std::string> channels, Client::ErrorDone done) {
  REDLAB_ASSERT(!channels.empty() && "subscribe to at least one channel");
  send_subscribe("SUBSCRIBE", channels_, std::move(channels), std::move(done));
}

void PubSub::psubscribe(std::vector<std::string> patterns, Client::ErrorDone done) {
  REDLAB_ASSERT(!patterns.empty() && "psubscribe to at least one pattern");
  send_subscribe("PSUBSCRIBE", patterns_, std::move(patterns), std::move(done));
}

// The names join `into` once the connection exists, so a reconnect resubscribes to them.
void PubSub::send_subscribe(const char* command, std::set<std::string>& into,
                            std::vector<std::string> names, Client::ErrorDone done) {
  Argv argv{command};
  for (std::string& n : names) argv.push_back(std::move(n));
  client_.tracer().event("call", -1, step_, -1, command_line(argv), actor_);
  with_conn([this, &into, argv = std::move(argv), done = std::move(done)](Error err) {
    if (!err.ok()) return done(err);
    into.insert(argv.begin() + 1, argv.end());
    size_t names = argv.size() - 1;
    write_command(argv, names);
    done(Error::none());
  });
}

void PubSub::unsubscribe(std::vector<std::string> channels) {
  Argv argv{"UNSUBSCRIBE"};
  for (std::string& c : channels) {
    channels_.erase(c);
    argv.push_back(std::move(c));
  }
  if (!conn_ || !conn_->connected()) return;
  write_command(std::move(argv), 0);
}

void PubSub::write_command(Argv argv, size_t expect_confirmations) {
  const Tracer& tracer = client_.tracer();
  int64_t span = 0;
  if (tracer.on()) {
    if (expect_confirmations > 0) {
      span = tracer.new_span();
      awaiting_confirm_.emplace_back(span, expect_confirmations);
    }
    TraceEvent e = tracer.make("command", conn_->id(), step_, -1, "", actor_);
    e.span = span;
    tracer.emit(std::move(e).with(F::argv, trace_argv(argv)));
  }
  conn_->write(std::move(argv), span);
}

void PubSub::send_subscriptions() {
  if (!channels_.empty()) {
    Argv argv{"SUBSCRIBE"};
    argv.insert(argv.end(), channels_.begin(), channels_.end());
    write_command(std::move(argv), channels_.size());
  }
  if (!patterns_.empty()) {
    Argv argv{"PSUBSCRIBE"};
    argv.insert(argv.end(), patterns_.begin(), patterns_.end());
    write_command(std::move(argv), patterns_.size());
  }
}

void PubSub::handle_push(Reply reply) {
  auto bulk = [&reply](size_t i) -> std::string {
    return i < reply.elements.size() ? reply.elements[i].str : std::string();
  };
  if (reply.kind != Reply::Kind::Array || reply.elements.empty()) {
    client_.tracer().event("pubsub_unexpected", conn_id(), step_, -1, format_short(reply), actor_);
    if (channel_mode_) read_next();
    return;
  }
  if (channel_mode_) last_received_us_ = client_.process().now_us();
  std::string kind = bulk(0);
  Message m;
  m.received_us = client_.process().now_us();
  if (kind == "message" && reply.elements.size() == 3) {
    m.channel = bulk(1);
    m.payload = bulk(2);
  } else if (kind == "pmessage" && reply.elements.size() == 4) {
    m.pattern = bulk(1);
    m.channel = bulk(2);
    m.payload = bulk(3);
  } else {
    // subscribe / psubscribe / unsubscribe confirmations, pong.
    const Tracer& tracer = client_.tracer();
    if (tracer.on()) {
      TraceEvent e =
          tracer.make("pubsub_confirm", conn_id(), step_, -1, format_short(reply), actor_);
      if ((kind == "subscribe" || kind == "psubscribe") && !awaiting_confirm_.empty()) {
        auto& [span, left] = awaiting_confirm_.front();
        if (span != 0) e.ends = span;
        span = 0;  // the first confirmation ends the command's span
        if (--left == 0) awaiting_confirm_.pop_front();
      }
      tracer.emit(std::move(e).with(F::reply, format_short(reply)));
    }
    if (channel_mode_) read_next();
    return;
  }
  if (channel_mode_) return enqueue(std::move(m));
  deliver(m);
}

void PubSub::handle_eof() {
  if (closed_ || !conn_) return;
  // A reader blocked on a full channel reads nothing, so it sees the EOF only later.
  if (channel_mode_ && blocked_) {
    eof_pending_ = true;
    return;
  }
  const Tracer& tracer = client_.tracer();
  if (tracer.on()) {
    gap_span_ = tracer.new_span();
    TraceEvent e =
        tracer.make("pubsub_disconnected", conn_->id(), step_, -1, std::string(kEofText), actor_);
    e.span = gap_span_;
    tracer.emit(std::move(e)
                    .with(F::error, std::string(kEofText))
                    .with(F::error_class, error_class(ErrorKind::Eof)));
  }
  awaiting_confirm_.clear();
  conn_->close();
  conn_.reset();
  reconnects_++;
  redial(0);
}

void PubSub::redial(int64_t tries) {
  if (closed_) return;
  if (tries >= kReconnectAttemptsMax) {
    if (client_.tracer().on()) {
      TraceEvent e = client_.tracer().make("pubsub_gave_up", -1, step_, tries,
                                           "reconnect attempts exhausted", actor_);
      e.ends = gap_span_;
      gap_span_ = 0;
      client_.tracer().emit(std::move(e).with(F::tries, tries));
    }
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  client_.pool().dial_unpooled(
      kTimeNeverUs, TraceTag{step_, tries, actor_},
      [this, alive, tries](Pool::ConnPtr conn, Error err) {
        auto a = alive.lock();
        if (!a || !*a || closed_) return;
        auto retry_later = [this, alive, tries] {
          client_.process().after(client_.options().pubsub_reconnect_delay_us,
                                  [this, alive, tries] {
                                    auto a2 = alive.lock();
                                    if (a2 && *a2) redial(tries + 1);
                                  });
        };
        if (!err.ok()) return retry_later();
        client_.init_conn(
            Context{kTimeNeverUs, step_, actor_}, conn, TraceTag{step_, tries, actor_},
            [this, alive, conn, retry_later](Error e) {
              auto a2 = alive.lock();
              if (!a2 || !*a2 || closed_) return;
              if (!e.ok()) {
                conn->close();
                return retry_later();
              }
              adopt(conn);
              if (client_.tracer().on()) {
                TraceEvent e =
                    client_.tracer().make("pubsub_resubscribe", conn_->id(), step_, -1,
                                          std::to_string(channels_.size()) + " channels, " +
                                              std::to_string(patterns_.size()) + " patterns",
                                          actor_);
                e.ends = gap_span_;
                gap_span_ = 0;
                client_.tracer().emit(std::move(e));
              }
              send_subscriptions();
            });
      });
}

}  // namespace redlab::client
