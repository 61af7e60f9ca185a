// See pubsub.h.
#include "sim/client/pubsub.h"

#include "sim/core/assert.h"

namespace redlab::client {

PubSub::PubSub(Client& client, int64_t step, std::string actor)
    : client_(client),
      step_(step),
      actor_(std::move(actor)),
      alive_(std::make_shared<bool>(true)) {}

PubSub::~PubSub() {
  *alive_ = false;
  if (conn_) conn_->close();
}

void PubSub::close() {
  if (closed_) return;
  closed_ = true;
  if (conn_) {
    client_.tracer().event("conn_close", conn_->id(), step_, -1, "pubsub closed", actor_);
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
    client_.tracer().event("command", conn_->id(), step_, -1, command_line(argv), actor_);
    conn_->write(argv);
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
  client_.tracer().event("command", conn_->id(), step_, -1, command_line(argv), actor_);
  conn_->write(std::move(argv));
}

void PubSub::send_subscriptions() {
  if (!channels_.empty()) {
    Argv argv{"SUBSCRIBE"};
    argv.insert(argv.end(), channels_.begin(), channels_.end());
    client_.tracer().event("command", conn_->id(), step_, -1, command_line(argv), actor_);
    conn_->write(std::move(argv));
  }
  if (!patterns_.empty()) {
    Argv argv{"PSUBSCRIBE"};
    argv.insert(argv.end(), patterns_.begin(), patterns_.end());
    client_.tracer().event("command", conn_->id(), step_, -1, command_line(argv), actor_);
    conn_->write(std::move(argv));
  }
}

void PubSub::handle_push(Reply reply) {
  auto bulk = [&reply](size_t i) -> std::string {
    return i < reply.elements.size() ? reply.elements[i].str : std::string();
  };
  if (reply.kind != Reply::Kind::Array || reply.elements.empty()) {
    client_.tracer().event("pubsub_unexpected", conn_id(), step_, -1, format_short(reply), actor_);
    return;
  }
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
    client_.tracer().event("pubsub_confirm", conn_id(), step_, -1, format_short(reply), actor_);
    return;
  }
  client_.tracer().event("pubsub_message", conn_id(), step_, -1,
                         m.channel + ": " + format_short(Reply::bulk(m.payload), 60), actor_);
  if (on_message) on_message(m);
}

void PubSub::handle_eof() {
  if (closed_ || !conn_) return;
  client_.tracer().event("pubsub_disconnected", conn_->id(), step_, -1, std::string(kEofText),
                         actor_);
  conn_->close();
  conn_.reset();
  reconnects_++;
  redial(0);
}

void PubSub::redial(int64_t tries) {
  if (closed_) return;
  if (tries >= kReconnectAttemptsMax) {
    client_.tracer().event("pubsub_gave_up", -1, step_, tries, "reconnect attempts exhausted",
                           actor_);
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
              client_.tracer().event("pubsub_resubscribe", conn_->id(), step_, -1,
                                     std::to_string(channels_.size()) + " channels, " +
                                         std::to_string(patterns_.size()) + " patterns",
                                     actor_);
              send_subscriptions();
            });
      });
}

}  // namespace redlab::client
