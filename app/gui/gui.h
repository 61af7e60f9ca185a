// The GUI entry point: `redlab gui [SCENARIO|TRACE.json] [options]` (and `redlab` alone).
#pragma once

#include <string>
#include <vector>

namespace redlab::app {

// args: what follows `gui` on the command line (empty for plain `redlab`). Opens the window
// and runs until it is closed (exit 0). With --screenshot FILE.png it renders, writes the
// PNG and returns 0. Bad input or no display: one line `redlab: ...` on stderr, returns 2.
int gui_main(const std::vector<std::string>& args);

}  // namespace redlab::app
