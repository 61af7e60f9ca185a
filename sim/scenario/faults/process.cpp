// Faults that hit a client process: pause (a stop-the-world freeze), disconnect (its
// connections reset) and crash (it dies; optionally a supervisor restarts it). The process is the
// host of the actor the fault names: the instance's own, or a shared client's (then every actor on
// it is hit).
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

// The process dies (Engine::crash_host): nothing of it runs again; with restart_after_ms its
// actors start again from their first step on a fresh process.
void fire_crash(Engine& e, const FaultDef& f) {
  TimeUs restart_after_us = -1;
  if (const Expr* r = f.n("restart_after_ms"))
    restart_after_us =
        ms_to_us(e.dur_ms(*r, nullptr, Where{f.where.pos, f.where.path + ".restart_after_ms"}));
  std::string why = f.why.get(e.opt_.lang);
  for (const std::string& h : e.hosts(f)) e.crash_host(h, why, restart_after_us);
}

constexpr FieldSpec kPauseFields[] = {kActor, kFor};
constexpr FieldSpec kCrashFields[] = {kActor,
                                      {.key = "restart_after_ms",
                                       .type = FieldType::Duration,
                                       .unit = "ms",
                                       .absent = "never: the process stays dead"}};
constexpr FieldSpec kDisconnectFields[] = {kActor};

}  // namespace

extern const FaultKind pause_fault, disconnect_fault, crash_fault;
const FaultKind pause_fault{"pause", kPauseFields, nullptr, nullptr, fire_pause};
const FaultKind disconnect_fault{"disconnect", kDisconnectFields, nullptr, nullptr,
                                 fire_disconnect};
const FaultKind crash_fault{"crash", kCrashFields, nullptr, nullptr, fire_crash};

}  // namespace redlab::scenario::faults
