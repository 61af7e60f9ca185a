// See context.h.
#include "sim/client/context.h"

#include <algorithm>

#include "sim/client/errors.h"
#include "sim/core/assert.h"

namespace redlab::client {

std::shared_ptr<ContextState> ContextState::derive(std::shared_ptr<ContextState> parent,
                                                   TimeUs deadline_us) {
  auto c = std::make_shared<ContextState>();
  c->parent_ = std::move(parent);
  c->own_deadline_us_ = deadline_us;
  return c;
}

std::pair<TimeUs, bool> ContextState::done_at() const {
  std::pair<TimeUs, bool> at{kTimeNeverUs, false};
  // The earlier wins; a deadline and a cancel at the same moment: the deadline (its timer
  // was set first).
  auto consider = [&at](TimeUs t, bool canceled) {
    if (t < at.first || (t == at.first && !canceled)) at = {t, canceled};
  };
  // The chain is as deep as the scenario's `parent` fields make it; each step is one context.
  constexpr int kDepthMax = 100000;
  int depth = 0;
  for (const ContextState* p = this; p; p = p->parent_.get()) {
    REDLAB_ASSERT(++depth < kDepthMax && "a context chain is bounded");
    consider(p->own_deadline_us_, false);
    consider(p->canceled_at_us_, true);
  }
  return at;
}

TimeUs ContextState::deadline_us() const {
  TimeUs d = own_deadline_us_;
  for (const ContextState* p = parent_.get(); p; p = p->parent_.get())
    d = std::min(d, p->own_deadline_us_);
  return d;
}

ErrorKind ContextState::err(TimeUs now_us) const {
  auto [at, canceled] = done_at();
  if (at > now_us) return ErrorKind::None;
  return canceled ? ErrorKind::Canceled : ErrorKind::ContextDeadline;
}

TimeUs ContextState::canceled_at_us() const {
  auto [at, canceled] = done_at();
  return canceled ? at : kTimeNeverUs;
}

ErrorKind context_err(TimeUs deadline_us, const ContextState* state, TimeUs now_us) {
  const TimeUs canceled_at = state ? state->canceled_at_us() : kTimeNeverUs;
  if (deadline_us <= now_us && deadline_us <= canceled_at) return ErrorKind::ContextDeadline;
  if (canceled_at <= now_us) return ErrorKind::Canceled;
  return ErrorKind::None;
}

void ContextState::cancel(TimeUs now_us) {
  if (done_at().first <= now_us) return;  // already done: Err() keeps its first answer
  canceled_at_us_ = now_us;
  // Every listener here is this context's or a descendant's, and each of them ends now
  // (a descendant already done by its own deadline was woken by its deadline's timer; its
  // waiter is gone and the listener with it).
  auto fire = std::move(listeners_);
  listeners_.clear();
  for (auto& [id, fn] : fire) fn();
}

ContextState::Subscription ContextState::on_cancel(const std::shared_ptr<ContextState>& ctx,
                                                   std::function<void()> fn) {
  Subscription sub;
  if (!ctx) return sub;  // Background: never cancelled
  // One listener, registered on the context and on each ancestor (a cancel of any of them
  // ends it); the first to fire runs it, and the subscription drops the others.
  auto once = std::make_shared<std::function<void()>>(std::move(fn));
  auto run = [once] {
    if (!*once) return;
    auto f = std::move(*once);
    *once = nullptr;
    f();
  };
  for (ContextState* p = ctx.get(); p; p = p->parent_.get()) {
    uint64_t id = p->next_listener_++;
    p->listeners_.emplace_back(id, run);
    sub.entries_.emplace_back(p->weak_from_this(), id);
  }
  return sub;
}

void ContextState::Subscription::reset() {
  for (auto& [weak, id] : entries_)
    if (auto p = weak.lock())
      std::erase_if(p->listeners_, [id = id](const auto& l) { return l.first == id; });
  entries_.clear();
}

}  // namespace redlab::client
