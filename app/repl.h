// `redlab repl`: commands on stdin, one per line (redis-cli quoting), replies printed exactly
// like `redis-cli --no-raw`, against the fake or a real server.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace redlab::app {

struct ReplOptions {
  std::string backend = "fake";  // fake | redis://HOST:PORT | unix:///PATH
  bool echo = false;             // print "> line" before each reply (for diffs)
  int reply_timeout_ms = -1;     // -1: wait as long as redis-cli would
};

// Returns the process exit status (2 for an unusable backend, with a message on err).
int run_repl(const ReplOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

int repl_main(const std::vector<std::string>& args);

}  // namespace redlab::app
