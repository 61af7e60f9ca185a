// The `redlab` binary: one entry point for the CLI contract of ../shared/DESIGN.md.
//
// `redlab help` prints every subcommand's usage; `redlab CMD --help` (or -h, anywhere among
// CMD's arguments) and `redlab help CMD` print CMD's alone, on stdout, with exit status 0.
// Help is answered here, before a subcommand parses anything, so it works the same for
// every subcommand and never runs anything.
#include <iostream>
#include <string>
#include <vector>

#include "app/diff_cli.h"
#include "app/gui/gui.h"
#include "app/repl.h"
#include "app/report.h"
#include "app/scenario_cli.h"

namespace {

struct Command {
  const char* name;  // "" for the no-command line
  const char* usage;
  bool backend_options;  // also takes --backend, --time-scale, --allow-server-faults
};

const Command kCommands[] = {
    {"", "  (no command)  the GUI on the default scenario, fake backend\n", false},
    {"gui",
     "  gui [SCENARIO|TRACE.json] [--backend B] [--seed N] [--set P=V]... [--variant N=V]...\n"
     "      [--lang en|ru|cs] [--presenter] [--reveal] [--exercise [--hints N] [--answer F.lua]]\n"
     "      [--compare A.json B.json] [--sweep PARAM [--sweep-steps N] [--sweep-seeds S]]\n"
     "      [--screenshot FILE.png [--at-ms T] [--size WxH]]\n"
     "        the GUI; with --screenshot: render, write the PNG and exit. Only what has\n"
     "        happened up to the playhead is shown until its end (--reveal: everything);\n"
     "        --presenter: the projector layout (P or F5 toggles it, H lists the keys);\n"
     "        --exercise: the exercise panel (N hints shown; F.lua in its editor, checked)\n"
     "        --compare: two traces side by side, every difference listed (redlab diff's);\n"
     "        --sweep: the sweep plot of PARAM over its range (pictured once it is done)\n",
     false},
    {"repl",
     "  repl [--backend fake|redis://HOST:PORT|valkey://HOST:PORT] [--echo] [--reply-timeout-ms "
     "MS]\n"
     "        commands on stdin, one per line (redis-cli quoting); replies printed like\n"
     "        `redis-cli --no-raw`. Extra lines: @CONN CMD, :send CONN CMD, :recv CONN [MS],\n"
     "        :close CONN, :sleep MS, # comment. A line holds at most 16 MiB.\n",
     false},
    {"list",
     "  list [--json] [--lang en|ru|cs]\n"
     "        scenario ids and titles\n",
     false},
    {"run",
     "  run SCENARIO [--seed N] [--variant NAME=VALUE]... [--set PARAM=VALUE]...\n"
     "        [--json] [--trace FILE.json] [--chrome-trace FILE.json] [--lang en|ru|cs]\n"
     "        [--script NAME=FILE.lua]\n"
     "        run headless: a text timeline and each check's verdict (exit 0: as expected,\n"
     "        1: not as expected, 2: bad input). An output FILE of - is standard output.\n",
     true},
    {"explore",
     "  explore SCENARIO --seeds N [--variant ...] [--set ...] [--script ...] [--json]\n"
     "        seed sweep: how often each check fails, the smallest failing seed\n",
     true},
    {"check",
     "  check SCENARIO [--script NAME=FILE.lua] [--variant ...] [--seeds N] [--json]\n"
     "        grade the scenario's exercise over its seed set: PASS or the first failing seed\n",
     true},
    {"sweep",
     "  sweep SCENARIO --param NAME [--from A] [--to B] [--steps N] [--seeds S]\n"
     "        [--variant ...] [--set ...] [--script ...] [--json]\n"
     "        one parameter from A to B (default: its range) in N points (default 11), seeds\n"
     "        1..S (default 1) at each, on the fake: each check's outcome at every point and\n"
     "        where it changes\n",
     false},
    {"diff",
     "  diff RUN_A RUN_B [--json] [--all] [--tolerance-ms N]\n"
     "        two runs compared (traces from run --trace, or run --json outputs): the inputs\n"
     "        and verdicts that differ, the first divergence, every event one run has and\n"
     "        the other lacks, every reply that differs, timings beyond the tolerance (the\n"
     "        scenario's, else 50 ms). Exit 1 when a verdict differs\n",
     false},
    {"show",
     "  show TRACE.json [--json] [--keyspace --at-ms T]\n"
     "        what `run` printed for the run that wrote the trace; with --keyspace, each\n"
     "        server's keyspace at T ms\n",
     false},
    {"help", "  help [COMMAND]  this text, or one command's\n", false},
};

const char* kScenarioNote =
    "SCENARIO is an id from scenarios/ (see list) or a path to a .json file.\n";

const char* kBackendOptions =
    "  --backend fake | spawn[:redis|:valkey] | redis://[user:pass@]HOST:PORT[/DB] | unix:///PATH\n"
    "        fake: the in-process fake Redis on virtual time (the default); spawn: private\n"
    "        redis-server processes redlab starts and stops (spawn:valkey: valkey-server);\n"
    "        a URL (valkey:// too): your server, where every key lives under redlab:<run-id>:\n"
    "        and is deleted after the run\n"
    "  --time-scale X        real backends: every duration of the scenario times X\n"
    "  --allow-server-faults server-wide faults and config on a server redlab did not start\n"
    "  --lua-instructions-max N  the fake: Lua VM instructions a run may execute, all its\n"
    "        scripts together (default 50000000); past it the run stops (exit 2)\n"
    "Every option that takes a value also takes it as --option=VALUE.\n";

void print_usage_all() {
  std::cout << "usage: redlab [<command> [options]]\n\n";
  for (const Command& c : kCommands) std::cout << c.usage;
  std::cout << "\n" << kScenarioNote << "run, explore and check also take:\n" << kBackendOptions;
}

void print_usage(const Command& c) {
  std::cout << "usage: redlab " << c.name << " [options]\n\n" << c.usage;
  if (c.backend_options) std::cout << "\n" << kScenarioNote << "Also:\n" << kBackendOptions;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : kCommands)
    if (*c.name && name == c.name) return &c;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return redlab::app::gui_main({});
  const std::string cmd = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    if (rest.empty()) {
      print_usage_all();
      return 0;
    }
    const Command* c = find_command(rest[0]);
    if (!c || rest.size() > 1) {
      std::cerr << "redlab: help: no command '" << rest[0] << "' (see redlab --help)\n";
      return 2;
    }
    print_usage(*c);
    return 0;
  }
  const Command* command = find_command(cmd);
  if (!command) {
    std::cerr << "redlab: unknown command '" << cmd << "' (see redlab --help)\n";
    return 2;
  }
  for (const std::string& a : rest)
    if (a == "--help" || a == "-h") {
      print_usage(*command);
      return 0;
    }
  if (cmd == "gui") return redlab::app::gui_main(rest);
  if (cmd == "repl") return redlab::app::repl_main(rest);
  if (cmd == "list") return redlab::app::list_main(rest);
  if (cmd == "run") return redlab::app::run_main(rest);
  if (cmd == "explore") return redlab::app::explore_main(rest);
  if (cmd == "check") return redlab::app::check_main(rest);
  if (cmd == "sweep") return redlab::app::sweep_main(rest);
  if (cmd == "diff") return redlab::app::diff_main(rest);
  if (cmd == "show") return redlab::app::show_main(rest);
  std::cerr << "redlab: unknown command '" << cmd << "' (see redlab --help)\n";
  return 2;
}
