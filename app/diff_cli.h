// `redlab diff RUN_A RUN_B [--json] [--all] [--tolerance-ms N]`: two runs compared
// (sim/core/trace_diff.h); exit status 1 when a verdict differs.
#pragma once

#include <string>
#include <vector>

namespace redlab::app {

int diff_main(const std::vector<std::string>& args);

}  // namespace redlab::app
