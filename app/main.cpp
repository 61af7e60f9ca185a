// The `redlab` binary: one entry point for the CLI contract of ../shared/DESIGN.md.
#include <iostream>
#include <string>
#include <vector>

#include "app/gui/gui.h"
#include "app/repl.h"
#include "app/scenario_cli.h"

namespace {

const char* kUsage =
    "usage: redlab [<command> [options]]\n"
    "\n"
    "  (no command)  the GUI on the default scenario, fake backend\n"
    "  gui [SCENARIO|TRACE.json] [--backend B] [--seed N] [--set P=V]... [--variant N=V]...\n"
    "      [--lang en|ru|cs] [--screenshot FILE.png [--at-ms T] [--size WxH]]\n"
    "        the GUI; with --screenshot: render, write the PNG and exit\n"
    "  repl [--backend fake|redis://HOST:PORT] [--echo] [--reply-timeout-ms MS]\n"
    "        commands on stdin, one per line (redis-cli quoting); replies printed like\n"
    "        `redis-cli --no-raw`. Extra lines: @CONN CMD, :send CONN CMD, :recv CONN [MS],\n"
    "        :close CONN, :sleep MS, # comment.\n"
    "  list [--json]\n"
    "        scenario ids and titles\n"
    "  run SCENARIO [--seed N] [--variant NAME=VALUE]... [--set PARAM=VALUE]...\n"
    "        [--json] [--trace FILE.json] [--chrome-trace FILE.json] [--lang en|ru|cs]\n"
    "        [--script NAME=FILE.lua]\n"
    "        run headless: a text timeline and each check's verdict (exit 0: as expected,\n"
    "        1: not as expected, 2: bad input)\n"
    "  explore SCENARIO --seeds N [--variant ...] [--set ...] [--json]\n"
    "        seed sweep: how often each check fails, the smallest failing seed\n"
    "  check SCENARIO [--script NAME=FILE.lua] [--variant ...] [--seeds N] [--json]\n"
    "        grade the scenario's exercise over its seed set: PASS or the first failing seed\n"
    "  help  this text\n"
    "\n"
    "SCENARIO is an id from scenarios/ (see list) or a path to a .json file.\n"
    "run, explore and check also take:\n"
    "  --backend fake | spawn | redis://[user:pass@]HOST:PORT[/DB] | unix:///PATH\n"
    "        fake: the in-process fake Redis on virtual time (the default); spawn: private\n"
    "        redis-server processes redlab starts and stops; a URL: your server, where every\n"
    "        key lives under redlab:<run-id>: and is deleted after the run\n"
    "  --time-scale X        real backends: every duration of the scenario times X\n"
    "  --allow-server-faults server-wide faults and config on a server redlab did not start\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return redlab::app::gui_main({});
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "gui") return redlab::app::gui_main(rest);
  if (cmd == "repl") return redlab::app::repl_main(rest);
  if (cmd == "list") return redlab::app::list_main(rest);
  if (cmd == "run") return redlab::app::run_main(rest);
  if (cmd == "explore") return redlab::app::explore_main(rest);
  if (cmd == "check") return redlab::app::check_main(rest);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << kUsage;
    return 0;
  }
  std::cerr << "redlab: unknown command '" << cmd << "' (see redlab --help)\n";
  return 2;
}
