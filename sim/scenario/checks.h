// The checks: invariants evaluated over what a run's actors believed and did (Facts) and
// over its trace. Each says ok, or how it was violated: what, when and who, in plain words.
//
//   mutual_exclusion   no two actors believed they held the same lock at the same time
//   no_foreign_unlock  no release deleted a lock that another actor had acquired since
//   no_stale_write     the resource accepted no write with a fence below one it had accepted
//   no_forged_fence    the resource accepted only fences that a fenced acquire handed out
//   no_lost_messages   every subscriber got every message published while it listened
//                      (streams: every entry reached some consumer of the group)
//   no_pool_timeouts   no call waited PoolTimeout for a connection in vain
//   no_read_timeouts   no read hit its deadline
//   no_oversell        no more `record` events (default "sale") than `stock`
//   retries_bounded    no actor's WATCH transaction took more than `max_attempts` attempts
#pragma once

#include <map>
#include <string>

#include "sim/core/trace.h"
#include "sim/scenario/engine.h"

namespace redlab::scenario {

struct CheckArgs {
  std::map<std::string, std::string> text;
  std::map<std::string, int64_t> number;
};

CheckResult run_check(const std::string& check, const CheckArgs& args, const Facts& facts,
                      const Trace& trace);

}  // namespace redlab::scenario
