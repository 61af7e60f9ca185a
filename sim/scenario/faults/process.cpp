// Faults that hit a client process: pause (a stop-the-world freeze) and disconnect (its
// connections reset). The process is the host of the actor the fault names: the instance's
// own, or a shared client's (then every actor on it is hit).
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/faults/fields.h"

namespace redlab::scenario::faults {
namespace {

// The process freezes: its timers and network deliveries wait and run, in order, at resume.
void fire_pause(Engine& e, const FaultDef& f) {
  TimeUs for_us = e.fault_for_us(f);
  std::string why = f.why.get(e.opt_.lang);
  for (ActorRt* a : e.targets(f)) {
    if (a->process->paused()) continue;
    std::string name = a->process->name();
    int64_t span =
        e.begin(e.fault_ev(name, "pause for " + format_time(for_us) + e.because(f), "pause")
                    .with(F::for_us, for_us)
                    .with(F::reason, why));
    a->process->pause_for(for_us);
    e.scheduler_.schedule_after(
        for_us, [&e, name, span] { e.end(e.fault_ev(name, "resume", "resume"), span); });
  }
}

void fire_disconnect(Engine& e, const FaultDef& f) {
  std::string why = f.why.get(e.opt_.lang);
  for (const std::string& h : e.hosts(f)) {
    e.put(e.fault_ev(h, "connections dropped" + e.because(f), "disconnect").with(F::reason, why));
    for (net::ConnId c : e.fabric_->connections_of(h)) e.fabric_->disconnect(c);
  }
}

constexpr FieldSpec kPauseFields[] = {kActor, kFor};
constexpr FieldSpec kDisconnectFields[] = {kActor};

}  // namespace

extern const FaultKind pause_fault, disconnect_fault;
const FaultKind pause_fault{"pause", kPauseFields, nullptr, nullptr, fire_pause};
const FaultKind disconnect_fault{"disconnect", kDisconnectFields, nullptr, nullptr,
                                 fire_disconnect};

}  // namespace redlab::scenario::faults
