// The `redlab` binary: one entry point for the CLI contract of ../shared/DESIGN.md.
#include <iostream>
#include <string>
#include <vector>

#include "app/repl.h"

namespace {

const char* kUsage =
    "usage: redlab <command> [options]\n"
    "\n"
    "  repl [--backend fake|redis://HOST:PORT] [--echo] [--reply-timeout-ms MS]\n"
    "        commands on stdin, one per line (redis-cli quoting); replies printed like\n"
    "        `redis-cli --no-raw`. Extra lines: @CONN CMD, :send CONN CMD, :recv CONN [MS],\n"
    "        :close CONN, :sleep MS, # comment.\n"
    "  help  this text\n"
    "\n"
    "Not yet built: gui, list, run, explore, check (see the open issues).\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << "redlab: the GUI is not built yet; starting the repl on the fake backend.\n"
                 "Type Redis commands, one per line (Ctrl-D to quit).\n";
    return redlab::app::repl_main({});
  }
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "repl") return redlab::app::repl_main(rest);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "redlab: unknown command '" << cmd << "' (see redlab --help)\n";
  return 2;
}
