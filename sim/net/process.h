// A client process: the host an actor's code runs on, which a fault can freeze.
//
// A GC pause or a VM freeze stops the process (its timers do not fire, it reads nothing from
// its sockets) while the world goes on: servers keep serving, keys keep expiring, bytes keep
// arriving in the socket buffers. Everything the client model does runs through a Process:
// timers (after) and network deliveries (deliver). While paused, whatever would have run is
// kept, in the order it became due, and runs at resume, at the resume time. So a lock holder
// paused for 40 s wakes up with all its timers late at once and its lock long expired.
//
// Virtual time only (the Scheduler's); cancel works on pending and on deferred callbacks.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/scheduler.h"

namespace redlab::net {

class Process {
 public:
  using Callback = std::function<void()>;
  using TimerId = uint64_t;  // 0 is never handed out

  Process(Scheduler& scheduler, std::string name);
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  const std::string& name() const { return name_; }
  Scheduler& scheduler() { return scheduler_; }
  TimeUs now_us() const { return scheduler_.now_us(); }

  // Runs cb delay_us from now, or at resume if the process is paused then. A killed process
  // arms nothing (0).
  TimerId after(TimeUs delay_us, Callback cb);
  // Runs cb after delay_us of the process' own running time: a pause in between pushes it
  // back by the length of the pause (work on the CPU, not a wall-clock timer).
  TimerId after_running(TimeUs delay_us, Callback cb);
  // Runs cb now if running (synchronously), or at resume. For network events. A template, so
  // that the common case (running) calls cb without wrapping it in a Callback first.
  template <typename Fn>
  void deliver(Fn&& cb) {
    if (!paused_) {
      cb();
      return;
    }
    defer(Callback(std::forward<Fn>(cb)));
  }
  // Forgets a timer, pending or deferred. False if it already ran or never existed.
  bool cancel(TimerId id);

  // A fault: the process stops. Idempotent.
  void pause();
  // The process runs again: deferred callbacks run at the current time, in order.
  void resume();
  // Pauses now and resumes duration_us later (the resume is a scheduler event, not a timer
  // of this process, since the process cannot wake itself).
  void pause_for(TimeUs duration_us);
  bool paused() const { return paused_; }
  // A fault: the process dies (kill -9, an OOM kill). Every timer and whatever waited for a
  // resume is dropped; later timers are never armed and deliveries are dropped. Final.
  void kill();
  bool killed() const { return killed_; }

  // Timers waiting (pending or deferred); for tests and the end-of-run check.
  size_t timers_pending() const { return slots_.size() - free_slots_.size(); }

 private:
  struct Timer {
    TimerId id = 0;  // 0: a free slot
    EventId event;
    Callback cb;
    bool running_time = false;  // after_running
    TimeUs due_us = 0;          // running timers: when it fires if nothing pauses it
    TimeUs left_us = -1;        // running timers while paused: the time still to run
  };
  // Timers live in reused slots (a command arms and cancels a read timer: no tree node each
  // time). An id is its slot in the low 32 bits and a sequence number above, so ids never
  // repeat, a stale id finds nothing, and ids sort in the order the timers were made.
  TimerId new_timer(Callback cb, bool running_time);
  Timer* find(TimerId id);
  void free_timer(Timer& t);
  void schedule_timer(TimerId id, TimeUs delay_us);
  void defer(Callback cb);  // deliver() while paused
  void fire(TimerId id);

  Scheduler& scheduler_;
  std::string name_;
  bool paused_ = false;
  bool killed_ = false;  // also paused_, so that deliver() takes the path that drops
  uint64_t next_seq_ = 1;
  std::vector<Timer> slots_;
  std::vector<uint32_t> free_slots_;
  std::deque<TimerId> deferred_;  // due while paused, in the order they became due
  // Shared with scheduled lambdas so that a Process destroyed before its events is not touched.
  std::shared_ptr<bool> alive_;
};

}  // namespace redlab::net
