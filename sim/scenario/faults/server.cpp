// Faults that hit a server: clock_jump, restart (clean), script_flush and stall. Those that act on
// the whole server run only where that is allowed (a server redlab started, or
// --allow-server-faults): each says so in its refuse hook, before anything runs.
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/faults/fields.h"
#include "sim/scenario/faults/persistence.h"

namespace redlab::scenario::faults {
namespace {

void refuse_clock_jump(const Engine& e, const FaultDef& f, const std::string& at) {
  if (!e.backend_->can_jump_clock())
    e.fail(f.where, "clock_jump" + at + " cannot be staged on " + e.backend_->describe() +
                        ": a real server's clock is the machine's; run it on the fake backend");
}
void fire_clock_jump(Engine& e, const FaultDef& f) {
  int64_t by_ms = e.fault_by_ms(f);
  e.put(e.fault_ev(f.server, "clock jumps by " + std::to_string(by_ms) + " ms", "clock_jump")
            .with(F::server, f.server)
            .with(F::by_us, ms_to_us(by_ms)));
  e.backend_->jump_clock(f.server, ms_to_us(by_ms));
}

void refuse_restart(const Engine& e, const FaultDef& f, const std::string& at) {
  if (!e.backend_->owns_servers())
    e.fail(f.where, "restart of " + f.server + at +
                        " needs a server redlab started itself: " + "use --backend spawn");
}
// A clean restart (SHUTDOWN, then start): what the server persisted comes back.
void fire_restart(Engine& e, const FaultDef& f) {
  Persistence p = persistence_of(e, f.server);
  std::string text = p.aof ? "restart: script cache lost; data and functions loaded from the AOF"
                     : p.save_points
                         ? "restart: script cache lost; data and functions loaded from the RDB "
                           "snapshot saved at shutdown"
                         : "restart: data and script cache lost";
  e.put(e.fault_ev(f.server, text, "restart").with(F::server, f.server));
  e.backend_->restart(f.server, Backend::Stop::Clean);
}

void refuse_shutdown_nosave(const Engine& e, const FaultDef& f, const std::string& at) {
  if (!e.backend_->owns_servers())
    e.fail(f.where, "shutdown_nosave of " + f.server + at +
                        " needs a server redlab started itself: use --backend spawn");
}
// SHUTDOWN NOSAVE, then start: the last resort against a script that wrote (SCRIPT KILL
// refuses it, UNKILLABLE; Redis serves SHUTDOWN NOSAVE while the script runs and defers a
// plain SHUTDOWN or a SIGTERM until it ends). The AOF is fsynced still; no RDB is saved.
void fire_shutdown_nosave(Engine& e, const FaultDef& f) {
  Persistence p = persistence_of(e, f.server);
  std::string text = p.aof ? "SHUTDOWN NOSAVE and start: script cache lost; data and functions "
                             "loaded from the AOF"
                           : "SHUTDOWN NOSAVE and start: data and script cache lost";
  e.put(e.fault_ev(f.server, text, "shutdown_nosave").with(F::server, f.server));
  e.backend_->restart(f.server, Backend::Stop::NoSave);
}

// A server-wide fault on a server redlab did not start, without --allow-server-faults.
bool forbidden(const Engine& e) {
  return !e.backend_->owns_servers() && !e.opt_.allow_server_faults;
}

void refuse_script_flush(const Engine& e, const FaultDef& f, const std::string& at) {
  if (forbidden(e))
    e.fail(f.where, "script_flush of " + f.server + at + " would empty the script cache of " +
                        e.backend_->describe() + ": " + Engine::kRefusalHint);
}
void fire_script_flush(Engine& e, const FaultDef& f) {
  e.put(e.fault_ev(f.server, "SCRIPT FLUSH", "script_flush").with(F::server, f.server));
  e.backend_->server_command(f.server, {"SCRIPT", "FLUSH"});
}

void refuse_stall(const Engine& e, const FaultDef& f, const std::string& at) {
  if (forbidden(e))
    e.fail(f.where, "stall (DEBUG SLEEP) of " + f.server + at + " would stop every client of " +
                        e.backend_->describe() + ": " + Engine::kRefusalHint);
}
void fire_stall(Engine& e, const FaultDef& f) {
  TimeUs for_us = e.fault_for_us(f);
  // DEBUG SLEEP takes seconds; whole milliseconds are written exactly.
  int64_t ms = for_us / 1000;
  std::string secs = std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
  e.put(e.fault_ev(f.server, "stalls for " + format_time(for_us), "stall")
            .with(F::server, f.server)
            .with(F::for_us, for_us));
  e.backend_->server_command(f.server, {"DEBUG", "SLEEP", secs});
}

constexpr FieldSpec kClockFields[] = {kServer, kBy};
constexpr FieldSpec kServerFields[] = {kServer};
constexpr FieldSpec kStallFields[] = {kServer, kFor};

}  // namespace

extern const FaultKind clock_jump_fault, restart_fault, shutdown_nosave_fault, script_flush_fault,
    stall_fault;
const FaultKind clock_jump_fault{"clock_jump", kClockFields, refuse_clock_jump, nullptr,
                                 fire_clock_jump};
const FaultKind restart_fault{"restart", kServerFields, refuse_restart, nullptr, fire_restart};
const FaultKind shutdown_nosave_fault{"shutdown_nosave", kServerFields, refuse_shutdown_nosave,
                                      nullptr, fire_shutdown_nosave};
const FaultKind script_flush_fault{"script_flush", kServerFields, refuse_script_flush,
                                   "SCRIPT FLUSH", fire_script_flush};
const FaultKind stall_fault{"stall", kStallFields, refuse_stall, "DEBUG SLEEP", fire_stall};

}  // namespace redlab::scenario::faults
