// server_crash: the machine a server runs on dies (a power loss, a kernel panic, a host that
// vanishes) and comes back at once. Unlike `restart` (a clean SHUTDOWN) nothing is saved on
// the way down: the server starts from what had reached its disk, which depends on its
// persistence settings (Redis 7.0 aof.c flushAppendOnlyFile, rdb.c):
// - appendonly yes, appendfsync always: every acknowledged write (fsynced before the reply);
// - appendonly yes, appendfsync everysec: what the once-a-second fsync had written: the writes
//   of the last second are lost, acknowledged or not;
// - appendonly yes, appendfsync no: what the kernel had written back (about 30 s late);
// - appendonly no with save points: the last RDB snapshot;
// - neither: nothing.
// A killed process (kill -9) is not this: the kernel keeps what redis-server wrote to its AOF,
// so a spawned server can stage the crash only where the two lose the same.
#include "sim/scenario/engine_impl.h"
#include "sim/scenario/faults/fields.h"
#include "sim/scenario/faults/persistence.h"

namespace redlab::scenario::faults {
namespace {

void refuse_server_crash(const Engine& e, const FaultDef& f, const std::string& at) {
  if (!e.backend_->owns_servers())
    e.fail(f.where, "server_crash of " + f.server + at +
                        " needs a server redlab started itself: use --backend spawn");
  Persistence p = persistence_of(e, f.server);
  if (!e.backend_->can_crash_machine() && p.aof && p.fsync != "always")
    e.fail(f.where, "server_crash of " + f.server + at + " cannot be staged on " +
                        e.backend_->describe() + ": killing redis-server keeps what the kernel " +
                        "holds of its AOF (appendfsync " + p.fsync +
                        "), a crash of the machine does not; run it on the fake backend");
}

void fire_server_crash(Engine& e, const FaultDef& f) {
  Persistence p = persistence_of(e, f.server);
  std::string text =
      !p.aof && !p.save_points ? "crash: data, functions and script cache lost"
      : !p.aof ? "crash: writes since the last RDB snapshot and the script cache lost"
      : p.fsync == "always"
          ? "crash: script cache lost; every write was in the AOF (appendfsync always)"
      : p.fsync == "everysec"
          ? "crash: writes of the last second (not yet fsynced, appendfsync everysec) and the "
            "script cache lost"
          : "crash: writes the kernel had not written back (appendfsync no) and the script "
            "cache lost";
  e.put(e.fault_ev(f.server, text + e.because(f), "server_crash")
            .with(F::server, f.server)
            .with(F::reason, f.why.get(e.opt_.lang)));
  e.backend_->restart(f.server, Backend::Stop::Crash);
}

constexpr FieldSpec kServerCrashFields[] = {kServer};

}  // namespace

extern const FaultKind server_crash_fault;
const FaultKind server_crash_fault{"server_crash", kServerCrashFields, refuse_server_crash, nullptr,
                                   fire_server_crash};

}  // namespace redlab::scenario::faults
