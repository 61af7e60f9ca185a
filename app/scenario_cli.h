// The scenario subcommands of the CLI contract (DESIGN.md): list, run, explore, check, and
// the lab's sweep.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

namespace redlab::app {

int list_main(const std::vector<std::string>& args);
int run_main(const std::vector<std::string>& args);
int explore_main(const std::vector<std::string>& args);
int check_main(const std::vector<std::string>& args);
int sweep_main(const std::vector<std::string>& args);

// The scenarios directory: $REDLAB_SCENARIOS, else scenarios/ next to the binary's source
// tree (build/redlab -> ../scenarios), else ./scenarios.
std::string scenarios_dir();
// The scenario files in scenarios_dir(), sorted by name: each loaded, or the located error
// that stopped it (a file whose id an earlier file has is such an error: each id is listed
// once). Files are read through app/files.h, within the limit for a scenario file.
// dir_error (if given) says why the directory could not be read.
struct LibraryFile {
  std::string path;
  std::optional<scenario::Scenario> scenario;
  std::string error;
};
std::vector<LibraryFile> scenario_library(std::string* dir_error = nullptr);

// SCENARIO as the user typed it: an id from scenarios_dir() or a path to a .json file. An
// unknown id is refused with the closest ids ("did you mean ...").
std::string resolve_scenario(const std::string& name);

}  // namespace redlab::app
