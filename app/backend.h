// Running a scenario on the backend the user chose: the in-process fake, private
// redis-server processes redlab spawns (`spawn`, `spawn:redis`) or valkey-server ones
// (`spawn:valkey`), or a server the user names (redis://..., valkey://...).
// The CLI (run/explore/check) and the GUI both come through here, so they agree on what each
// backend means, on the safety rules of DESIGN.md and on the messages for an unusable server.
#pragma once

#include <atomic>
#include <string>

#include "sim/scenario/backend.h"
#include "sim/scenario/engine.h"
#include "sim/scenario/scenario.h"

namespace redlab::app {

struct BackendChoice {
  // "fake", "spawn" (= "spawn:redis"), "spawn:valkey", or a URL:
  // redis://[user:pass@]host:port[/db] (valkey:// the same), unix:///path
  std::string backend = "fake";
  double time_scale = 1.0;           // real backends: every duration of the scenario times this
  bool allow_server_faults = false;  // server-wide faults on a server redlab did not spawn
};

// An unusable backend (a bad URL, redis-server not installed, a server that does not answer,
// a server-wide fault refused on a user's server). what() is one line naming what and where;
// the CLI prints it and exits 2, the GUI shows it.
using BackendError = scenario::BackendError;

// A backend string fit to print, show or save: a URL's user:password@ replaced by `mask`
// ("***@" to show that there was one, "" to save it without: REDIS_PASSWORD supplies it).
std::string without_credentials(const std::string& backend, const std::string& mask = "***@");

// Checks a choice before anything runs ("--time-scale must be > 0", an unparsable URL).
// Throws BackendError.
void validate_backend(const BackendChoice& choice);

// Runs the scenario. options.on_event (if set) sees every trace event as it is appended, on
// the calling thread (the GUI calls this from a worker thread and copies events out);
// `cancel` (if given) ends a real run early, as if its duration had been reached. Throws
// scenario::ScenarioError for mistakes in the file or options, BackendError for the backend.
scenario::RunResult run_on_backend(const scenario::Scenario& sc,
                                   const scenario::RunOptions& options, const BackendChoice& choice,
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace redlab::app
