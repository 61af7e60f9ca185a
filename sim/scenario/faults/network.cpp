// Faults on the network between a client process and a server: refuse (new connections
// refused), partition (every message dropped, both ways) and latency (extra delay on the
// connections open now). The target is the host of the actor the fault names and, for refuse
// and partition, the server (the connection form: actor + server).
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/faults/fields.h"
#include "sim/scenario/faults/lasting.h"

namespace redlab::scenario::faults {
namespace {

void refuse_or_partition(Engine& e, const FaultDef& f, bool refuse) {
  TimeUs for_us = e.fault_for_us(f);
  std::string why = f.why.get(e.opt_.lang);
  for (const std::string& h : e.hosts(f)) {
    int64_t span =
        e.begin(e.fault_ev(h,
                           std::string(refuse ? "new connections refused" : "partitioned from ") +
                               (refuse ? " by " : "") + f.server + " for " + format_time(for_us) +
                               e.because(f),
                           f.op)
                    .with(F::server, f.server)
                    .with(F::for_us, for_us)
                    .with(F::reason, why));
    if (refuse)
      e.fabric_->set_refused(h, f.server, true);
    else
      e.fabric_->set_partition(h, f.server, true);
    std::string server = f.server;
    e.scheduler_.schedule_after(for_us, [&e, h, server, refuse, span] {
      if (refuse)
        e.fabric_->set_refused(h, server, false);
      else
        e.fabric_->set_partition(h, server, false);
      e.end(e.fault_ev(h, refuse ? "connections accepted again" : "partition healed",
                       refuse ? "refuse_end" : "partition_end")
                .with(F::server, server),
            span);
    });
  }
}

void fire_refuse(Engine& e, const FaultDef& f) {
  refuse_or_partition(e, f, true);
}
void fire_partition(Engine& e, const FaultDef& f) {
  refuse_or_partition(e, f, false);
}

void fire_latency(Engine& e, const FaultDef& f) {
  TimeUs for_us = e.fault_for_us(f);
  int64_t by_ms = nonnegative_by_ms(e, f, "extra latency");
  for (const std::string& h : e.hosts(f)) {
    std::vector<net::ConnId> conns = e.fabric_->connections_of(h);
    lasting(e,
            e.fault_ev(h,
                       "+" + std::to_string(by_ms) + " ms latency on its open connections" +
                           (for_us > 0 ? " for " + format_time(for_us) : std::string()),
                       "latency")
                .with(F::by_us, ms_to_us(by_ms))
                .with(F::for_us, for_us),
            for_us, h, "extra latency removed", "latency_end", [&e, conns] {
              for (net::ConnId c : conns) e.fabric_->set_extra_latency(c, 0);
            });
    for (net::ConnId c : conns) e.fabric_->set_extra_latency(c, ms_to_us(by_ms));
  }
}

constexpr FieldSpec kLinkFields[] = {kActor, kServer, kFor};
constexpr FieldSpec kLatencyFields[] = {kActor, kBy,
                                        FieldSpec{.key = "for_ms",
                                                  .type = FieldType::Duration,
                                                  .unit = "ms",
                                                  .absent = "the rest of the run"}};

}  // namespace

extern const FaultKind refuse_fault, partition_fault, latency_fault;
const FaultKind refuse_fault{"refuse", kLinkFields, nullptr, nullptr, fire_refuse};
const FaultKind partition_fault{"partition", kLinkFields, nullptr, nullptr, fire_partition};
const FaultKind latency_fault{"latency", kLatencyFields, nullptr, nullptr, fire_latency};

}  // namespace redlab::scenario::faults
