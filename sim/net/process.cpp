// See process.h. A timer is a Scheduler event whose callback checks, when it fires, whether
// the process is paused; if so the timer joins the deferred queue instead of running. Network
// deliveries are timers with delay 0 when paused, so one queue keeps their relative order.
#include "sim/net/process.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/core/assert.h"

namespace redlab::net {

Process::Process(Scheduler& scheduler, std::string name)
    : scheduler_(scheduler), name_(std::move(name)), alive_(std::make_shared<bool>(true)) {}

Process::~Process() {
  *alive_ = false;
  for (Timer& t : slots_)
    if (t.id != 0 && t.event.valid()) scheduler_.cancel(t.event);
}

Process::TimerId Process::new_timer(Callback cb, bool running_time) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    REDLAB_ASSERT(slots_.size() < UINT32_MAX && "timer slots fit the id's low 32 bits");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Timer& t = slots_[slot];
  t.id = (next_seq_++ << 32) | slot;
  t.event = EventId{};
  t.cb = std::move(cb);
  t.running_time = running_time;
  t.due_us = 0;
  t.left_us = -1;
  return t.id;
}

Process::Timer* Process::find(TimerId id) {
  size_t slot = id & 0xFFFFFFFFu;
  if (id == 0 || slot >= slots_.size() || slots_[slot].id != id) return nullptr;
  return &slots_[slot];
}

void Process::free_timer(Timer& t) {
  uint32_t slot = static_cast<uint32_t>(t.id & 0xFFFFFFFFu);
  t.id = 0;
  t.cb = nullptr;
  free_slots_.push_back(slot);
}

Process::TimerId Process::after(TimeUs delay_us, Callback cb) {
  REDLAB_ASSERT(delay_us >= 0 && "a timer is never in the past");
  REDLAB_ASSERT(cb && "a timer needs a callback");
  if (killed_) return 0;
  TimerId id = new_timer(std::move(cb), false);
  // No liveness check in the event: the destructor cancels every timer's event, and
  // [this, id] fits std::function's inline room (no allocation per timer).
  EventId event = scheduler_.schedule_after(delay_us, [this, id] { fire(id); });
  find(id)->event = event;
  return id;
}

void Process::defer(Callback cb) {
  if (killed_) return;
  deferred_.push_back(new_timer(std::move(cb), false));
}

Process::TimerId Process::after_running(TimeUs delay_us, Callback cb) {
  REDLAB_ASSERT(delay_us >= 0 && "a timer is never in the past");
  REDLAB_ASSERT(cb && "a timer needs a callback");
  if (killed_) return 0;
  TimerId id = new_timer(std::move(cb), true);
  if (paused_)
    find(id)->left_us = delay_us;  // starts counting at the resume
  else
    schedule_timer(id, delay_us);
  return id;
}

void Process::schedule_timer(TimerId id, TimeUs delay_us) {
  Timer* t = find(id);
  t->due_us = add_saturating_us(now_us(), delay_us);
  t->left_us = -1;
  t->event = scheduler_.schedule_after(delay_us, [this, id] { fire(id); });  // see after()
}

bool Process::cancel(TimerId id) {
  Timer* t = find(id);
  if (!t) return false;
  if (t->event.valid()) scheduler_.cancel(t->event);
  free_timer(*t);  // a deferred id left in deferred_ finds nothing at resume
  return true;
}

void Process::fire(TimerId id) {
  Timer* t = find(id);
  if (!t) return;
  if (paused_) {
    t->event = EventId{};
    deferred_.push_back(id);
    return;
  }
  Callback cb = std::move(t->cb);
  free_timer(*t);
  cb();
}

void Process::pause() {
  if (paused_) return;
  paused_ = true;
  // Running-time timers stop counting: each keeps the time it still has to run.
  for (Timer& t : slots_) {
    if (t.id == 0 || !t.running_time || !t.event.valid()) continue;
    scheduler_.cancel(t.event);
    t.event = EventId{};
    t.left_us = std::max<TimeUs>(0, t.due_us - now_us());
  }
}

void Process::resume() {
  if (!paused_ || killed_) return;
  paused_ = false;
  // Run them as events at the current time, in order: a callback that pauses the process
  // again (or cancels a later one) is then honoured, as it would be in a running process.
  std::deque<TimerId> due = std::exchange(deferred_, {});
  for (TimerId id : due) {
    Timer* t = find(id);
    if (!t) continue;
    t->event = scheduler_.schedule_after(0, [this, id] { fire(id); });  // see after()
  }
  // Running-time timers go on counting from where they stopped, in the order they were made
  // (ids sort that way; slots do not): deterministic.
  std::vector<TimerId> running;
  for (const Timer& t : slots_)
    if (t.id != 0 && t.running_time && t.left_us >= 0) running.push_back(t.id);
  std::sort(running.begin(), running.end());
  for (TimerId id : running) schedule_timer(id, find(id)->left_us);
}

void Process::kill() {
  if (killed_) return;
  killed_ = true;
  paused_ = true;
  for (Timer& t : slots_) {
    if (t.id == 0) continue;
    if (t.event.valid()) scheduler_.cancel(t.event);
    free_timer(t);
  }
  deferred_.clear();
}

void Process::pause_for(TimeUs duration_us) {
  REDLAB_ASSERT(duration_us >= 0 && "a pause lasts a non-negative time");
  pause();
  std::weak_ptr<bool> alive = alive_;
  scheduler_.schedule_after(duration_us, [this, alive] {
    auto a = alive.lock();
    if (a && *a) resume();
  });
}

}  // namespace redlab::net
