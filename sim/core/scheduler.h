// The event scheduler: what happens next in a simulated run, and when.
//
// Events are ordered by (time_us, seq): seq is a counter handed out at scheduling, so
// events due at the same virtual time run in the order they were scheduled (FIFO), as in
// FoundationDB's task queue. That tie rule is what makes a run a pure function of its
// inputs: no pointer order, no hash order, no floating point decides who goes first.
//
// Running an event moves virtual time to its time; nothing else moves it. A callback may
// schedule and cancel other events, including new events at the current time (they run
// after those already due then). Every run is bounded by a maximum number of events, so a
// scenario that keeps rescheduling itself stops with a clear "bound hit" instead of hanging.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sim/core/clock.h"

namespace redlab {

// Names one scheduled event; enough to cancel it. seq 0 is never handed out.
struct EventId {
  TimeUs at_us = 0;
  uint64_t seq = 0;
  uint32_t slot = 0;  // where the scheduler keeps its callback
  bool valid() const { return seq != 0; }
  bool operator==(const EventId&) const = default;
};

class Scheduler {
 public:
  using Callback = std::function<void()>;

  // A default bound for callers that have no better one (a whole core scenario is a few
  // thousand events).
  static constexpr uint64_t kEventsPerRunDefaultMax = 10'000'000;

  struct RunResult {
    uint64_t events_run = 0;
    bool bound_hit = false;  // stopped by events_max (or stop()) with due events still pending
  };
  // Makes run_until / run_all return after the event running now, as if their bound had
  // been hit (a run that outgrew another bound: its trace, its steps).
  void stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

  TimeUs now_us() const { return clock_.now_us(); }
  const VirtualClock& clock() const { return clock_; }

  // Schedules cb at at_us, which must not be in the past.
  EventId schedule_at(TimeUs at_us, Callback cb);
  // Schedules cb delay_us from now (delay_us >= 0; saturates at kTimeNeverUs).
  EventId schedule_after(TimeUs delay_us, Callback cb);
  // Removes a pending event. Returns false if it already ran, was cancelled, or never existed.
  bool cancel(EventId id);
  bool pending(EventId id) const {
    return id.seq != 0 && id.slot < slots_.size() && slots_[id.slot].seq == id.seq;
  }

  size_t size() const { return slots_.size() - free_slots_.size(); }
  bool empty() const { return size() == 0; }
  // Time of the earliest pending event, or kTimeNeverUs.
  TimeUs next_time_us() const;

  // Runs the earliest pending event (moving time to it). Returns false if there is none.
  bool run_next();
  // Runs every event due at or before until_us, at most events_max of them, then moves time
  // to until_us (unless the bound was hit: time then stays at the last event run).
  RunResult run_until(TimeUs until_us, uint64_t events_max = kEventsPerRunDefaultMax);
  // Runs until no event is pending, at most events_max events.
  RunResult run_all(uint64_t events_max = kEventsPerRunDefaultMax);

 private:
  // A binary min-heap on (time_us, seq), the total order of events, over slots that hold
  // the callbacks. A cancelled event's slot is freed at once (seq 0) and its heap entry is
  // dropped when it reaches the top, or when such entries outnumber the live ones (a timer
  // set far ahead and cancelled again and again must not grow the heap without end). No
  // allocation per event once the vectors have grown.
  struct Entry {
    TimeUs at_us;
    uint64_t seq;
    uint32_t slot;
  };
  struct Slot {
    uint64_t seq = 0;  // 0: free
    Callback cb;
  };
  static bool later(const Entry& a, const Entry& b) {
    return a.at_us != b.at_us ? a.at_us > b.at_us : a.seq > b.seq;
  }
  bool stale(const Entry& e) const { return slots_[e.slot].seq != e.seq; }
  void pop_top();
  void drop_stale_top();
  void free_slot(uint32_t slot);

  VirtualClock clock_;
  uint64_t next_seq_ = 1;
  bool stop_requested_ = false;
  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
};

}  // namespace redlab
