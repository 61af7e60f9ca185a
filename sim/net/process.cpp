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
  for (auto& [id, timer] : timers_) scheduler_.cancel(timer.event);
}

Process::TimerId Process::after(TimeUs delay_us, Callback cb) {
  REDLAB_ASSERT(delay_us >= 0 && "a timer is never in the past");
  REDLAB_ASSERT(cb && "a timer needs a callback");
  TimerId id = next_id_++;
  std::weak_ptr<bool> alive = alive_;
  EventId event = scheduler_.schedule_after(delay_us, [this, id, alive] {
    auto a = alive.lock();
    if (a && *a) fire(id);
  });
  timers_.emplace(id, Timer{event, std::move(cb)});
  return id;
}

void Process::deliver(Callback cb) {
  if (!paused_) {
    cb();
    return;
  }
  TimerId id = next_id_++;
  timers_.emplace(id, Timer{EventId{}, std::move(cb)});
  deferred_.push_back(id);
}

Process::TimerId Process::after_running(TimeUs delay_us, Callback cb) {
  REDLAB_ASSERT(delay_us >= 0 && "a timer is never in the past");
  REDLAB_ASSERT(cb && "a timer needs a callback");
  TimerId id = next_id_++;
  Timer timer;
  timer.cb = std::move(cb);
  timer.running_time = true;
  timers_.emplace(id, std::move(timer));
  if (paused_)
    timers_.at(id).left_us = delay_us;  // starts counting at the resume
  else
    schedule_timer(id, delay_us);
  return id;
}

void Process::schedule_timer(TimerId id, TimeUs delay_us) {
  Timer& t = timers_.at(id);
  t.due_us = add_saturating_us(now_us(), delay_us);
  t.left_us = -1;
  std::weak_ptr<bool> alive = alive_;
  t.event = scheduler_.schedule_after(delay_us, [this, id, alive] {
    auto a = alive.lock();
    if (a && *a) fire(id);
  });
}

bool Process::cancel(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return false;
  if (it->second.event.valid()) scheduler_.cancel(it->second.event);
  timers_.erase(it);  // a deferred id left in deferred_ is skipped at resume
  return true;
}

void Process::fire(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  if (paused_) {
    it->second.event = EventId{};
    deferred_.push_back(id);
    return;
  }
  Callback cb = std::move(it->second.cb);
  timers_.erase(it);
  cb();
}

void Process::pause() {
  if (paused_) return;
  paused_ = true;
  // Running-time timers stop counting: each keeps the time it still has to run.
  for (auto& [id, t] : timers_) {
    if (!t.running_time || !t.event.valid()) continue;
    scheduler_.cancel(t.event);
    t.event = EventId{};
    t.left_us = std::max<TimeUs>(0, t.due_us - now_us());
  }
}

void Process::resume() {
  if (!paused_) return;
  paused_ = false;
  // Run them as events at the current time, in order: a callback that pauses the process
  // again (or cancels a later one) is then honoured, as it would be in a running process.
  std::deque<TimerId> due = std::exchange(deferred_, {});
  std::weak_ptr<bool> alive = alive_;
  for (TimerId id : due) {
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;
    it->second.event = scheduler_.schedule_after(0, [this, id, alive] {
      auto a = alive.lock();
      if (a && *a) fire(id);
    });
  }
  // Running-time timers go on counting from where they stopped (in id order: deterministic).
  std::vector<TimerId> running;
  for (auto& [id, t] : timers_)
    if (t.running_time && t.left_us >= 0) running.push_back(id);
  for (TimerId id : running) schedule_timer(id, timers_.at(id).left_us);
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
