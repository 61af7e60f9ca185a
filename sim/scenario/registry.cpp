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
}  // namespace checks

namespace faults {
extern const FaultKind pause_fault, disconnect_fault, refuse_fault, partition_fault, latency_fault,
    clock_jump_fault, restart_fault, script_flush_fault, stall_fault;
}  // namespace faults

std::span<const FaultKind* const> fault_kinds() {
  static constexpr const FaultKind* kAll[] = {
      &faults::pause_fault,     &faults::disconnect_fault,   &faults::refuse_fault,
      &faults::partition_fault, &faults::latency_fault,      &faults::clock_jump_fault,
      &faults::restart_fault,   &faults::script_flush_fault, &faults::stall_fault,
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
  };
  return kAll;
}

}  // namespace redlab::scenario
