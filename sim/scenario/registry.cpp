// The registries: every check kind, fault kind and step kind, in documentation order (see
// kinds.h). A kind is registered here: declared, and listed; its file defines it.
#include "sim/scenario/checks.h"
#include "sim/scenario/kinds.h"

namespace redlab::scenario {

namespace checks {
extern const CheckKind mutual_exclusion_check, no_foreign_unlock_check,
    release_removes_own_lock_check, acquire_took_lock_check, script_keys_declared_check,
    no_stale_write_check, no_forged_fence_check, no_lost_messages_check, no_pool_timeouts_check,
    no_read_timeouts_check, no_oversell_check, stock_matches_sales_check, all_sold_check,
    retries_bounded_check;
// Issue 14, multi-no-rollback and cas-version.
extern const CheckKind writes_together_check, no_unseen_overwrite_check, all_recorded_check;
extern const CheckKind no_error_replies_check;  // noscript-after-restart, slow-script-busy
// Issue 14, cache-fallback.
extern const CheckKind answered_within_check;
// Issue 14, timeout-does-not-cancel.
extern const CheckKind no_wait_behind_check;
// Issue 14, pipeline-vs-multi and rate-limiter-window.
extern const CheckKind batch_not_interleaved_check, batch_round_trips_check,
    rate_within_limit_check;
// Issue 14, context-timeout-reconnect-storm.
extern const CheckKind dials_within_check;
// Issue 13, streams-consumer-crash and idempotency-key-crash.
extern const CheckKind processed_once_check;
// Issue 13 item 7: retry-double-incr, background-context-canceled, idempotency-key-crash.
extern const CheckKind key_final_check;
}  // namespace checks

namespace steps {
extern const StepKind command_step, pipeline_step, tx_step, sleep_step, work_step,
    lock_acquire_step, fenced_acquire_step, lock_release_step, lock_extend_step, watchdog_step,
    watchdog_stop_step, resource_write_step, watch_tx_step, eval_step, subscribe_step, publish_step,
    stream_add_step, stream_consume_step, stream_autoclaim_step, repeat_step, if_step, note_step,
    set_step;
// Issue 13, several servers: Redlock (steps/redlock.cpp).
extern const StepKind redlock_acquire_step, redlock_release_step;
extern const StepKind context_step, cancel_step;  // Issue 13 item 6: Go contexts
}  // namespace steps

std::span<const StepKind* const> step_kinds() {
  static constexpr const StepKind* kAll[] = {
      &steps::command_step,
      &steps::pipeline_step,
      &steps::tx_step,
      &steps::sleep_step,
      &steps::work_step,
      &steps::lock_acquire_step,
      &steps::fenced_acquire_step,
      &steps::lock_release_step,
      &steps::lock_extend_step,
      &steps::watchdog_step,
      &steps::watchdog_stop_step,
      &steps::redlock_acquire_step,
      &steps::redlock_release_step,
      &steps::resource_write_step,
      &steps::watch_tx_step,
      &steps::eval_step,
      &steps::subscribe_step,
      &steps::publish_step,
      &steps::stream_add_step,
      &steps::stream_consume_step,
      &steps::stream_autoclaim_step,
      &steps::repeat_step,
      &steps::if_step,
      &steps::note_step,
      &steps::set_step,
      &steps::context_step,
      &steps::cancel_step,
  };
  return kAll;
}

namespace faults {
extern const FaultKind pause_fault, disconnect_fault, crash_fault, refuse_fault, partition_fault,
    latency_fault, clock_jump_fault, restart_fault, shutdown_nosave_fault, server_crash_fault,
    script_flush_fault, stall_fault, failover_fault, replica_lag_fault, replica_partition_fault;
}  // namespace faults

std::span<const FaultKind* const> fault_kinds() {
  static constexpr const FaultKind* kAll[] = {
      &faults::pause_fault,        &faults::disconnect_fault,   &faults::crash_fault,
      &faults::refuse_fault,       &faults::partition_fault,    &faults::latency_fault,
      &faults::clock_jump_fault,   &faults::restart_fault,      &faults::shutdown_nosave_fault,
      &faults::server_crash_fault, &faults::script_flush_fault, &faults::stall_fault,
      &faults::failover_fault,     &faults::replica_lag_fault,  &faults::replica_partition_fault,
  };
  return kAll;
}

std::span<const CheckKind* const> check_kinds() {
  static constexpr const CheckKind* kAll[] = {
      &checks::mutual_exclusion_check,
      &checks::no_foreign_unlock_check,
      &checks::release_removes_own_lock_check,
      &checks::acquire_took_lock_check,
      &checks::script_keys_declared_check,
      &checks::no_stale_write_check,
      &checks::no_forged_fence_check,
      &checks::no_lost_messages_check,
      &checks::no_pool_timeouts_check,
      &checks::no_read_timeouts_check,
      &checks::no_oversell_check,
      &checks::stock_matches_sales_check,
      &checks::all_sold_check,
      &checks::retries_bounded_check,
      // Issue 14, multi-no-rollback and cas-version.
      &checks::writes_together_check,
      &checks::no_unseen_overwrite_check,
      &checks::all_recorded_check,
      &checks::no_error_replies_check,
      // Issue 14, cache-fallback.
      &checks::answered_within_check,
      // Issue 14, timeout-does-not-cancel.
      &checks::no_wait_behind_check,
      // Issue 14, pipeline-vs-multi and rate-limiter-window.
      &checks::batch_not_interleaved_check,
      &checks::batch_round_trips_check,
      &checks::rate_within_limit_check,
      // Issue 14, context-timeout-reconnect-storm.
      &checks::dials_within_check,
      // Issue 13, streams-consumer-crash and idempotency-key-crash.
      &checks::processed_once_check,
      // Issue 13 item 7: retry-double-incr, background-context-canceled, idempotency-key-crash.
      &checks::key_final_check,
  };
  return kAll;
}

}  // namespace redlab::scenario
