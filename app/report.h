// What `redlab run` prints about a run, made from its trace alone (through the one reader,
// sim/core/trace_index.h), so that `redlab show TRACE.json` prints the same bytes for the
// trace the run wrote: the text timeline, the story's events, each check's verdict; or, with
// --json, the run's JSON object. And a server's keyspace at any moment (show --keyspace).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/trace.h"

namespace redlab::app {

// The text report of a run: header, chart, events, checks, the expectation line.
std::string report_text(const Trace& trace);
// The JSON object of `run --json` (DESIGN.md's CLI contract).
nlohmann::ordered_json report_json(const Trace& trace);
// Each server's keyspace at at_us: key, type, value summary, remaining TTL (the server's own
// record; a real server's lane says it was not observed).
std::string keyspace_text(const Trace& trace, TimeUs at_us);
nlohmann::ordered_json keyspace_json(const Trace& trace, TimeUs at_us);

// `redlab show TRACE.json [--json] [--at-ms T --keyspace]`.
int show_main(const std::vector<std::string>& args);

}  // namespace redlab::app
