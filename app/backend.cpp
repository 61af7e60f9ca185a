#include "app/backend.h"

#include <signal.h>

#include <iterator>
#include <optional>

#include "real/acl.h"
#include "real/real_backend.h"
#include "real/redis_conn.h"
#include "real/spawn.h"

namespace redlab::app {
namespace {

// Ctrl-C during a run on a real server: the first one ends the run early and lets it clean up
// (a script of the run killed, the run's ACL user deleted, the run's keys deleted, a user's
// config restored, spawned servers stopped); a second one kills redlab at once, after writing
// the prepared ACL DELUSER of the run's user to the server (real/acl.h emergency_write: send()
// only). Nothing else happens in the handler but an atomic exchange. SIGTERM and SIGHUP (the
// terminal closed) count as Ctrl-C: each would otherwise end redlab with the user left.
std::atomic<bool> g_interrupted{false};
constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[std::size(kInterruptSignals)];

void on_interrupt(int sig) {
  if (g_interrupted.exchange(true)) {
    real::emergency_write();
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

// Installs the handler for the duration of one run (CLI runs; the GUI passes its own cancel).
class InterruptScope {
 public:
  InterruptScope() {
    g_interrupted = false;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kInterruptSignals); i++)
      ::sigaction(kInterruptSignals[i], &action, &g_previous[i]);
  }
  ~InterruptScope() {
    for (size_t i = 0; i < std::size(kInterruptSignals); i++)
      ::sigaction(kInterruptSignals[i], &g_previous[i], nullptr);
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

}  // namespace

std::string without_credentials(const std::string& backend, const std::string& mask) {
  size_t scheme = backend.find("://");
  if (scheme == std::string::npos) return backend;
  size_t host = scheme + 3;
  size_t at = backend.rfind('@');
  if (at == std::string::npos || at < host) return backend;
  return backend.substr(0, host) + mask + backend.substr(at + 1);
}

void validate_backend(const BackendChoice& choice) {
  if (!(choice.time_scale > 0))
    throw BackendError("--time-scale must be above 0 (0.1 runs ten times faster)");
  const std::string& b = choice.backend;
  if (b == "fake" || real::spawn_program(b)) return;
  if (b.rfind("redis://", 0) == 0 || b.rfind("valkey://", 0) == 0 || b.rfind("unix://", 0) == 0) {
    real::Endpoint ep;
    if (auto err = real::parse_endpoint(b, ep)) throw BackendError("--backend: " + *err);
    return;
  }
  throw BackendError("--backend " + without_credentials(b) +
                     ": expected fake, spawn, spawn:redis, spawn:valkey, redis://HOST:PORT, "
                     "valkey://HOST:PORT or unix:///PATH");
}

scenario::RunResult run_on_backend(const scenario::Scenario& sc,
                                   const scenario::RunOptions& options, const BackendChoice& choice,
                                   const std::atomic<bool>* cancel) {
  validate_backend(choice);
  scenario::RunOptions o = options;
  o.time_scale = choice.time_scale;
  o.allow_server_faults = choice.allow_server_faults;
  o.cancel = cancel;
  if (choice.backend == "fake") return scenario::run_scenario(sc, o);

  // The handler first, the backend after it: the backend's cleanup (its destructor, after an
  // error) runs while Ctrl-C still only asks for it, not kills redlab.
  std::optional<InterruptScope> scope;
  if (!cancel) {
    scope.emplace();
    o.cancel = &g_interrupted;
  }
  real::RealBackend backend(real::RealBackendOptions{choice.backend, choice.allow_server_faults});
  o.backend = &backend;
  scenario::RunResult r = scenario::run_scenario(sc, o);
  r.trace.set_meta("key_prefix", backend.key_prefix());
  if (!cancel && g_interrupted)
    throw BackendError("interrupted: the run on " + backend.describe() + " was stopped early" +
                       (r.backend_trouble.empty()
                            ? "; its keys were deleted and its servers stopped"
                            : "; " + r.backend_trouble));
  return r;
}

}  // namespace redlab::app
