// A bound on the Lua VM instructions the fake servers' scripts run, all together, during one
// scenario run (RunOptions::lua_instructions_max). A script that never ends costs the fake
// virtual time only, so without it `while true do end` would keep the CPU busy until the
// scenario's duration, for every seed of a `check`.
//
// The engine holds one for the length of a run. It applies to the scripts of every fake
// server on the calling thread (a run is single-threaded; the script fibers run on that
// thread); a fake server driven without one (the repl, the GUI's own server) is bounded only
// by its per-call time limit. Counting is deterministic: the run stays a pure function of its
// inputs.
#pragma once

#include <cstdint>
#include <functional>

namespace redlab::fake {

class LuaInstructionBudget {
 public:
  // Past `max` instructions the running script is killed with an error reply and every
  // later script of the run is killed at once; on_exceeded runs once, with the SHA-1 (hex) of
  // the script that crossed the bound, on the script's own stack: it must not throw and
  // should only record and stop the run (Scheduler::stop()).
  LuaInstructionBudget(uint64_t max, std::function<void(const char* sha)> on_exceeded);
  ~LuaInstructionBudget();  // the previous budget of the thread, if any, applies again
  LuaInstructionBudget(const LuaInstructionBudget&) = delete;
  LuaInstructionBudget& operator=(const LuaInstructionBudget&) = delete;

  uint64_t max() const { return max_; }
  uint64_t used() const { return used_; }  // counted in steps of the count hook (1000)
  bool exceeded() const { return exceeded_; }

  // For the fake's count hook: adds n instructions; true when the bound is exceeded.
  bool add(uint64_t n, const char* sha);
  static LuaInstructionBudget* current();  // this thread's, or nullptr

 private:
  uint64_t max_;
  uint64_t used_ = 0;
  bool exceeded_ = false;
  std::function<void(const char* sha)> on_exceeded_;
  LuaInstructionBudget* previous_;
};

}  // namespace redlab::fake
