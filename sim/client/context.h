// Go's context.Context, the part go-redis looks at: Done()/Err() and Deadline().
//
// A go-redis call takes a context and stops at it in three places only (go-redis v9.0.0 and
// still in v9.17: the stored sources cited in docs/client-model.md):
// - the wait for a pool turn: internal/pool/pool.go waitTurn first returns ctx.Err() if the
//   context is already done, even with a free turn, then waits for a turn, PoolTimeout or
//   ctx.Done(), whichever comes first;
// - the retry backoff: internal/util.go Sleep(ctx, d) returns ctx.Err() at ctx.Done();
// - the dial (net.Dialer.DialContext: its deadline; a cancel is not modelled there).
// A socket read never watches Done(): internal/pool/conn.go deadline() takes only
// ctx.Deadline(), and only with ContextTimeoutEnabled. So a cancelled context does not end a
// read already in flight, with or without ContextTimeoutEnabled; its next backoff or pool
// wait does.
//
// Go's contexts form a tree (context.go in the standard library): WithCancel, WithTimeout and
// WithDeadline make a child that is done when its parent is, or at its own deadline, or when
// its own CancelFunc runs; Err() then says which came first: context.Canceled ("context
// canceled") or context.DeadlineExceeded ("context deadline exceeded"). context.Background()
// is never done. context.WithoutCancel(parent) (Go 1.21) keeps the parent's values but none
// of its cancellation and no deadline: here, a new root.
//
// Times are virtual (a cancel is stamped with the process' now); nothing reads a wall clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "sim/core/clock.h"

namespace redlab::client {

enum class ErrorKind : uint8_t;

class ContextState : public std::enable_shared_from_this<ContextState> {
 public:
  // WithCancel(parent) (deadline_us = kTimeNeverUs) or WithDeadline(parent, deadline_us);
  // parent nullptr is context.Background().
  static std::shared_ptr<ContextState> derive(std::shared_ptr<ContextState> parent,
                                              TimeUs deadline_us);

  // Deadline(): the earliest deadline of the context and its ancestors (kTimeNeverUs: none).
  TimeUs deadline_us() const;
  // Err() at `now_us`: None while not done; else Canceled or ContextDeadline, whichever of a
  // cancel (its own or an ancestor's) and a deadline came first.
  ErrorKind err(TimeUs now_us) const;
  // When a cancel (its own or an ancestor's) ended it: kTimeNeverUs if none has, or if a
  // deadline ended it first.
  TimeUs canceled_at_us() const;
  // The CancelFunc: the context and its descendants are done from now on (a second call, or
  // one after its deadline, changes nothing). Runs the listeners of every context it ends.
  void cancel(TimeUs now_us);

  // Runs fn once when a cancel ends this context (its own cancel or an ancestor's), until the
  // returned Subscription goes. A listener must not run the waiter's continuation inline:
  // cancel() is called from a step, and a listener schedules its work on its process.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&&) noexcept = default;
    Subscription& operator=(Subscription&& other) noexcept {
      if (this != &other) {
        reset();
        entries_ = std::move(other.entries_);
      }
      return *this;
    }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { reset(); }
    void reset();

   private:
    friend class ContextState;
    std::vector<std::pair<std::weak_ptr<ContextState>, uint64_t>> entries_;
  };
  static Subscription on_cancel(const std::shared_ptr<ContextState>& ctx, std::function<void()> fn);

 private:
  std::shared_ptr<ContextState> parent_;
  TimeUs own_deadline_us_ = kTimeNeverUs;
  TimeUs canceled_at_us_ = kTimeNeverUs;  // its own CancelFunc
  // Listeners of this context and of its descendants (a cancel here ends them all).
  std::vector<std::pair<uint64_t, std::function<void()>>> listeners_;
  uint64_t next_listener_ = 1;
  // When it became done, and how: the earliest of its own cancel, its own deadline and its
  // parent's end (kTimeNeverUs while none of them happened).
  std::pair<TimeUs, bool> done_at() const;  // (time, by a cancel)
};

// ctx.Err() at now_us of a call's context: `state` (nullptr: never cancelled) with a deadline
// of `deadline_us`, the earliest of the call's own (WithTimeout of state) and state's. A child
// keeps the first of its deadline and its parent's end: a deadline up to the cancel's moment
// wins (a tie: the deadline, as in ContextState).
ErrorKind context_err(TimeUs deadline_us, const ContextState* state, TimeUs now_us);

}  // namespace redlab::client
