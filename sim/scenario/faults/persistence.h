// What a server's `config` says about persistence (appendonly, appendfsync, save), as the
// restart and server_crash faults tell it and refuse what a backend cannot stage. Both
// backends start a server with that config, so the words hold for either.
#pragma once

#include <string>

#include "sim/scenario/engine_impl.h"

namespace redlab::scenario::faults {

struct Persistence {
  bool aof = false;                // appendonly yes
  std::string fsync = "everysec";  // appendfsync (Redis' default)
  bool save_points = false;        // save with at least one point
};

inline Persistence persistence_of(const Engine& e, const std::string& server) {
  Persistence p;
  for (const ServerDef& def : e.sc_.servers) {
    if (def.name != server) continue;
    for (size_t i = 0; i < def.config.size(); i++) {
      const std::string& name = def.config[i].first;
      if (name != "appendonly" && name != "appendfsync" && name != "save") continue;
      std::string value = e.str(def.config[i].second, nullptr, e.config_where(def, i));
      if (name == "appendonly") p.aof = value == "yes";
      if (name == "appendfsync") p.fsync = value;
      if (name == "save") p.save_points = value.find_first_not_of(' ') != std::string::npos;
    }
  }
  return p;
}

}  // namespace redlab::scenario::faults
