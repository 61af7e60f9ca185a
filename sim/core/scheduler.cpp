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
  return id;
}

EventId Scheduler::schedule_after(TimeUs delay_us, Callback cb) {
  REDLAB_ASSERT(delay_us >= 0 && "a delay is never negative");
  return schedule_at(add_saturating_us(now_us(), delay_us), std::move(cb));
}

bool Scheduler::cancel(EventId id) {
  if (!pending(id)) return false;
  free_slot(id.slot);
  drop_stale_top();
  // Entries of cancelled events below the top: rebuilt without them once they are most of
  // the heap (amortised: at least as many cancels as entries removed happened since).
  if (heap_.size() > 64 && heap_.size() > 2 * size()) {
    std::erase_if(heap_, [this](const Entry& e) { return stale(e); });
    std::make_heap(heap_.begin(), heap_.end(), later);
  }
  return true;
}

void Scheduler::free_slot(uint32_t slot) {
  slots_[slot].seq = 0;
  slots_[slot].cb = nullptr;
  free_slots_.push_back(slot);
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
  return empty() ? kTimeNeverUs : heap_.front().at_us;
}

bool Scheduler::run_next() {
  if (empty()) return false;
  // Take the event out before running it: the callback may schedule or cancel others.
  Entry top = heap_.front();
  pop_top();
  Callback cb = std::move(slots_[top.slot].cb);
  free_slot(top.slot);
  drop_stale_top();
  clock_.advance_to(top.at_us);
  cb();
  return true;
}

Scheduler::RunResult Scheduler::run_until(TimeUs until_us, uint64_t events_max) {
  REDLAB_ASSERT(until_us >= now_us() && "cannot run until a time in the past");
  RunResult result;
  while (!empty() && heap_.front().at_us <= until_us) {
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
  while (!empty()) {
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
