// See scheduler.h. A std::map keyed by (time_us, seq) is the queue: ordered iteration gives
// the FIFO tie rule for free, and cancellation is an erase by key (the EventId carries it).
#include "sim/core/scheduler.h"

#include "sim/core/assert.h"

namespace redlab {

EventId Scheduler::schedule_at(TimeUs at_us, Callback cb) {
  REDLAB_ASSERT(at_us >= now_us() && "events are scheduled at or after the current time");
  REDLAB_ASSERT(cb && "an event needs a callback");
  REDLAB_ASSERT(next_seq_ < UINT64_MAX && "sequence numbers do not wrap");
  EventId id{at_us, next_seq_++};
  auto [it, inserted] = events_.emplace(Key{id.at_us, id.seq}, std::move(cb));
  (void)it;
  REDLAB_ASSERT(inserted && "sequence numbers are unique");
  return id;
}

EventId Scheduler::schedule_after(TimeUs delay_us, Callback cb) {
  REDLAB_ASSERT(delay_us >= 0 && "a delay is never negative");
  return schedule_at(add_saturating_us(now_us(), delay_us), std::move(cb));
}

bool Scheduler::cancel(EventId id) {
  return events_.erase(Key{id.at_us, id.seq}) != 0;
}

TimeUs Scheduler::next_time_us() const {
  return events_.empty() ? kTimeNeverUs : events_.begin()->first.first;
}

bool Scheduler::run_next() {
  if (events_.empty()) return false;
  // Take the event out before running it: the callback may schedule or cancel others.
  auto node = events_.extract(events_.begin());
  clock_.advance_to(node.key().first);
  node.mapped()();
  return true;
}

Scheduler::RunResult Scheduler::run_until(TimeUs until_us, uint64_t events_max) {
  REDLAB_ASSERT(until_us >= now_us() && "cannot run until a time in the past");
  RunResult result;
  while (!events_.empty() && events_.begin()->first.first <= until_us) {
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
  while (!events_.empty()) {
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
