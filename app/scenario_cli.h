// The scenario subcommands of the CLI contract (DESIGN.md): list, run, explore, check.
#pragma once

#include <string>
#include <vector>

namespace redlab::app {

int list_main(const std::vector<std::string>& args);
int run_main(const std::vector<std::string>& args);
int explore_main(const std::vector<std::string>& args);
int check_main(const std::vector<std::string>& args);

// The scenarios directory: $REDLAB_SCENARIOS, else scenarios/ next to the binary's source
// tree (build/redlab -> ../scenarios), else ./scenarios.
std::string scenarios_dir();
// SCENARIO as the user typed it: an id from scenarios_dir() or a path to a .json file.
std::string resolve_scenario(const std::string& name);

}  // namespace redlab::app
