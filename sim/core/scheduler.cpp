// See scheduler.h. A binary heap ordered by (time_us, seq) is the queue: the seq tie rule
// makes the order total, so the heap's own order of equal keys never matters. Cancellation
// frees the event's slot; its heap entry is skipped when it surfaces.
#include "sim/core/scheduler.h"

#include <algorithm>

#include "sim/core/assert.h"

namespace redlab {

EventId Scheduler::schedule_at(TimeUs at_us, Callback cb) {
  REDLAB_ASSERT(at_us >= now_us() && "events are scheduled at or after the current time");
  REDLAB_ASSERT(cb && "an event needs a callback");
  REDLAB_ASSERT(next_seq_ < UINT64_MAX && "sequence numbers do not wrap");
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    REDLAB_ASSERT(slots_.size() < UINT32_MAX && "fewer than 2^32 pending events");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  EventId id{at_us, next_seq_++, slot};
  slots_[slot].seq = id.seq;
  slots_[slot].cb = std::move(cb);
  heap_.push_back(Entry{at_us, id.seq, slot});
  std::push_heap(heap_.begin(), heap_.end(), later);
  live_++;
  return id;
}

EventId Scheduler::schedule_after(TimeUs delay_us, Callback cb) {
  REDLAB_ASSERT(delay_us >= 0 && "a delay is never negative");
  return schedule_at(add_saturating_us(now_us(), delay_us), std::move(cb));
}

bool Scheduler::cancel(EventId id) {
  if (!pending(id)) return false;
  Slot& s = slots_[id.slot];
  s.seq = 0;
  s.cb = nullptr;
  free_slots_.push_back(id.slot);
  live_--;
  drop_stale_top();
  return true;
}

void Scheduler::pop_top() {
  std::pop_heap(heap_.begin(), heap_.end(), later);
  heap_.pop_back();
}

// Keeps the heap's top a live event, so next_time_us() and run_until() read it directly.
void Scheduler::drop_stale_top() {
  while (!heap_.empty() && stale(heap_.front())) pop_top();
}

TimeUs Scheduler::next_time_us() const {
  return live_ == 0 ? kTimeNeverUs : heap_.front().at_us;
}

bool Scheduler::run_next() {
  if (live_ == 0) return false;
  // Take the event out before running it: the callback may schedule or cancel others.
  Entry top = heap_.front();
  pop_top();
  Slot& s = slots_[top.slot];
  Callback cb = std::move(s.cb);
  s.seq = 0;
  s.cb = nullptr;
  free_slots_.push_back(top.slot);
  live_--;
  drop_stale_top();
  clock_.advance_to(top.at_us);
  cb();
  return true;
}

Scheduler::RunResult Scheduler::run_until(TimeUs until_us, uint64_t events_max) {
  REDLAB_ASSERT(until_us >= now_us() && "cannot run until a time in the past");
  RunResult result;
  while (live_ != 0 && heap_.front().at_us <= until_us) {
    if (result.events_run >= events_max || stop_requested_) {
      result.bound_hit = true;
      return result;
    }
    run_next();
    result.events_run++;
  }
  clock_.advance_to(until_us);
  return result;
}

Scheduler::RunResult Scheduler::run_all(uint64_t events_max) {
  RunResult result;
  while (live_ != 0) {
    if (result.events_run >= events_max || stop_requested_) {
      result.bound_hit = true;
      return result;
    }
    run_next();
    result.events_run++;
  }
  return result;
}

}  // namespace redlab
