// See conn.h.
#include "sim/client/conn.h"

#include "sim/core/assert.h"

namespace redlab::client {

Conn::Conn(net::Process& process, net::Transport& transport, std::string server)
    : process_(process), transport_(transport), server_(std::move(server)) {}

Conn::~Conn() {
  // Timers hold weak references; cancel them anyway so that the process does not keep them.
  if (dial_timer_) process_.cancel(dial_timer_);
  if (read_timer_) process_.cancel(read_timer_);
  if (state_ != State::Closed && id_ != 0) transport_.close(id_);
}

void Conn::dial(TimeUs timeout_at_us, DialDone done) {
  REDLAB_ASSERT(state_ == State::New && "a connection is dialed once");
  state_ = State::Dialing;
  dial_done_ = std::move(done);
  std::weak_ptr<Conn> weak = weak_from_this();
  net::Process* process = &process_;
  auto gated = [weak, process](auto member) {
    return [weak, process, member] {
      process->deliver([weak, member] {
        if (auto self = weak.lock()) ((*self).*member)();
      });
    };
  };
  net::ConnCallbacks callbacks;
  callbacks.on_connected = gated(&Conn::handle_connected);
  callbacks.on_closed = gated(&Conn::handle_eof);
  callbacks.on_reply = [weak, process](Reply reply) {
    process->deliver([weak, reply = std::move(reply)]() mutable {
      if (auto self = weak.lock()) self->handle_reply(std::move(reply));
    });
  };
  id_ = transport_.open(process_.name(), server_, std::move(callbacks));
  used_at_us_ = process_.now_us();
  if (timeout_at_us != kTimeNeverUs) {
    dial_timer_ = process_.after(std::max<TimeUs>(0, timeout_at_us - process_.now_us()), [weak] {
      auto self = weak.lock();
      if (!self || !self->dial_done_) return;
      self->dial_timer_ = 0;
      DialDone cb = std::move(self->dial_done_);
      self->dial_done_ = nullptr;
      self->close();
      cb(Error::make(ErrorKind::DialTimeout));
    });
  }
}

void Conn::handle_connected() {
  if (state_ != State::Dialing) return;
  state_ = State::Connected;
  if (dial_timer_) process_.cancel(dial_timer_);
  dial_timer_ = 0;
  DialDone cb = std::move(dial_done_);
  dial_done_ = nullptr;
  if (cb) cb(Error::none());
}

void Conn::roundtrip(std::vector<Argv> cmds, int64_t first_cause, size_t replies,
                     TimeUs deadline_us, ReadDone done) {
  REDLAB_ASSERT(state_ == State::Connected && "a round trip needs a connected connection");
  REDLAB_ASSERT(!read_done_ && "one round trip at a time on a connection");
  REDLAB_ASSERT(replies > 0 && "a round trip waits for at least one reply");
  used_at_us_ = process_.now_us();
  read_done_ = std::move(done);
  replies_wanted_ = replies;
  replies_.clear();
  for (size_t i = 0; i < cmds.size(); i++)
    transport_.send(id_, std::move(cmds[i]),
                    first_cause > 0 ? first_cause + static_cast<int64_t>(i) : 0);
  if (eof_seen_) {
    // The peer is gone already: the read fails at once with EOF.
    std::weak_ptr<Conn> weak = weak_from_this();
    process_.after(0, [weak] {
      if (auto self = weak.lock(); self && self->read_done_)
        self->finish_read(Error::make(ErrorKind::Eof));
    });
    return;
  }
  if (deadline_us != kTimeNeverUs) {
    // The destructor cancels read_timer_, so `this` is alive when it fires; [this] fits
    // std::function's inline room (a weak_ptr would not: one allocation per command).
    read_timer_ = process_.after(std::max<TimeUs>(0, deadline_us - process_.now_us()), [this] {
      auto self = shared_from_this();  // held while the read's callback runs
      if (!read_done_) return;
      read_timer_ = 0;
      finish_read(Error::make(ErrorKind::ReadTimeout));
    });
  }
}

void Conn::write(Argv argv, int64_t cause) {
  REDLAB_ASSERT(state_ == State::Connected && "a write needs a connected connection");
  used_at_us_ = process_.now_us();
  transport_.send(id_, std::move(argv), cause);
}

void Conn::handle_reply(Reply reply) {
  if (state_ != State::Connected) return;
  if (read_done_) {
    replies_.push_back(std::move(reply));
    if (replies_.size() >= replies_wanted_) finish_read(Error::none());
    return;
  }
  if (on_push) on_push(std::move(reply));
}

void Conn::handle_eof() {
  if (state_ == State::Closed) return;
  eof_seen_ = true;
  if (state_ == State::Dialing) {
    DialDone cb = std::move(dial_done_);
    dial_done_ = nullptr;
    close();
    if (cb) cb(Error::make(ErrorKind::Refused));
    return;
  }
  if (read_done_) {
    finish_read(Error::make(ErrorKind::Eof));
  } else if (on_idle_eof) {
    auto cb = on_idle_eof;
    cb();
  }
}

void Conn::finish_read(Error error) {
  if (read_timer_) process_.cancel(read_timer_);
  read_timer_ = 0;
  ReadDone cb = std::move(read_done_);
  read_done_ = nullptr;
  std::vector<Reply> replies = std::move(replies_);
  replies_.clear();
  if (cb) cb(std::move(replies), std::move(error));
}

void Conn::close() {
  if (state_ == State::Closed) return;
  state_ = State::Closed;
  if (dial_timer_) process_.cancel(dial_timer_);
  if (read_timer_) process_.cancel(read_timer_);
  dial_timer_ = read_timer_ = 0;
  if (id_ != 0) transport_.close(id_);
  // Nothing will complete any more. Callbacks often hold this connection (shared_ptr):
  // dropping them breaks the cycle. Moved out first: one of them may be running right now.
  auto dial_done = std::move(dial_done_);
  auto read_done = std::move(read_done_);
  auto on_push_cb = std::move(on_push);
  auto on_eof_cb = std::move(on_idle_eof);
  dial_done_ = nullptr;
  read_done_ = nullptr;
  on_push = nullptr;
  on_idle_eof = nullptr;
}

}  // namespace redlab::client
