// Faults on replication (servers[].replica_of): failover (a replica is promoted and the
// primary's name leads to it; the old primary is gone for the rest of the run), replica_lag
// (the stream to a replica arrives later) and replica_partition (the link between a replica and
// its primary is cut; the stream waits and arrives when it heals). Each names the replica in
// `server`. Staged on the fake only (Backend::can_replicate); on a user's server they are
// refused before anything runs, as the replicas themselves are (engine.cpp).
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/faults/fields.h"
#include "sim/scenario/faults/lasting.h"

namespace redlab::scenario::faults {
namespace {

// The primary the replica follows in the file, or "" (then the fault is refused).
std::string primary_of(const Engine& e, const std::string& replica) {
  for (const ServerDef& s : e.sc_.servers)
    if (s.name == replica) return s.replica_of;
  return "";
}

void refuse_replication(const Engine& e, const FaultDef& f, const std::string& at) {
  if (primary_of(e, f.server).empty())
    e.fail(Where{f.where.pos, f.where.path + ".server"},
           f.op + at + ": " + f.server + " is not a replica (servers." + f.server +
               ".replica_of names its primary)");
  if (!e.backend_->can_replicate())
    e.fail(f.where,
           f.op + " of " + f.server + at + " cannot be staged on " + e.backend_->describe() +
               (e.backend_->owns_servers() ? " (not modelled there yet): run it on the fake backend"
                                           : ": replicas need servers redlab started"));
}

void fire_failover(Engine& e, const FaultDef& f) {
  std::string primary = primary_of(e, f.server);
  e.put(e.fault_ev(f.server,
                   "failover: " + f.server + " is promoted and " + primary +
                       " now leads to it; what it had not received is lost" + e.because(f),
                   "failover")
            .with(F::server, f.server)
            .with(F::host, primary));
  e.backend_->failover(f.server);
}

void fire_replica_lag(Engine& e, const FaultDef& f) {
  TimeUs for_us = e.fault_for_us(f);
  int64_t by_ms = nonnegative_by_ms(e, f, "a replication lag");
  const std::string server = f.server;
  lasting(
      e,
      e.fault_ev(server,
                 "replication lags by " + std::to_string(by_ms) + " ms" +
                     (for_us > 0 ? " for " + format_time(for_us) : std::string()) + e.because(f),
                 "replica_lag")
          .with(F::server, server)
          .with(F::by_us, ms_to_us(by_ms))
          .with(F::for_us, for_us),
      for_us, server, "replication lag removed", "replica_lag_end",
      [&e, server] { e.backend_->replication_lag(server, 0); });
  e.backend_->replication_lag(server, ms_to_us(by_ms));
}

void fire_replica_partition(Engine& e, const FaultDef& f) {
  TimeUs for_us = e.fault_for_us(f);
  std::string primary = primary_of(e, f.server);
  int64_t span = e.begin(e.fault_ev(f.server,
                                    "replication link to " + primary + " cut for " +
                                        format_time(for_us) + e.because(f),
                                    "replica_partition")
                             .with(F::server, f.server)
                             .with(F::host, primary)
                             .with(F::for_us, for_us));
  e.backend_->replication_partition(f.server, true);
  std::string server = f.server;
  e.scheduler_.schedule_after(for_us, [&e, server, span] {
    e.backend_->replication_partition(server, false);
    e.end(e.fault_ev(server, "replication link healed", "replica_partition_end"), span);
  });
}

constexpr FieldSpec kReplica{.key = "server",
                             .type = FieldType::Server,
                             .required = true,
                             .missing_hint = "the replica the % is about"};
constexpr FieldSpec kFailoverFields[] = {kReplica};
constexpr FieldSpec kLagFields[] = {kReplica, kBy,
                                    FieldSpec{.key = "for_ms",
                                              .type = FieldType::Duration,
                                              .unit = "ms",
                                              .absent = "the rest of the run"}};
constexpr FieldSpec kPartitionFields[] = {kReplica, kFor};

}  // namespace

extern const FaultKind failover_fault, replica_lag_fault, replica_partition_fault;
const FaultKind failover_fault{"failover", kFailoverFields, refuse_replication, nullptr,
                               fire_failover};
const FaultKind replica_lag_fault{"replica_lag", kLagFields, refuse_replication, nullptr,
                                  fire_replica_lag};
const FaultKind replica_partition_fault{"replica_partition", kPartitionFields, refuse_replication,
                                        nullptr, fire_replica_partition};

}  // namespace redlab::scenario::faults
