// Running the redlab binary as a child process in tests (posix_spawn): its exit status (or
// the signal that killed it), stdout, stderr, wall time and peak resident memory. A crash, a
// sanitizer report or a stray line on stderr is then seen as such, not hidden by an
// in-process exception handler.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace redlab::test {

struct Child {
  int status = -1;  // the exit status, or 128 + the signal that killed the child
  std::string out;
  std::string err;
  double wall_s = 0;
  long max_rss_kb = 0;  // peak resident set size (wait4's rusage)
  double cpu_s = 0;     // user + system time (wait4's rusage): steady on a loaded machine
};

inline std::string slurp_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ASan prints a one-time warning when a program switches stacks (the fake runs Lua scripts
// on their own stack); it is not a finding, and not the program's output. Any other line
// (a real sanitizer report included) stays.
inline std::string without_sanitizer_notes(const std::string& err) {
  std::string out;
  size_t at = 0;
  while (at < err.size()) {
    size_t end = err.find('\n', at);
    end = end == std::string::npos ? err.size() : end + 1;
    std::string_view line(err.data() + at, end - at);
    if (line.find("WARNING: ASan doesn't fully support makecontext/swapcontext") ==
            std::string_view::npos &&
        line.find("False positive error reports may follow") == std::string_view::npos &&
        line.find("For details see https://github.com/google/sanitizers/issues/189") ==
            std::string_view::npos)
      out.append(line);
    at = end;
  }
  return out;
}

// Runs binary with args; stdout and stderr go to files in a temp directory and are read back.
// extra_env: "NAME=VALUE" entries added to the environment.
inline Child run_child(const std::string& binary, const std::vector<std::string>& args,
                       const std::vector<std::string>& extra_env = {}) {
  namespace fs = std::filesystem;
  std::string dir_template = (fs::temp_directory_path() / "redlab-child-XXXXXX").string();
  Child c;
  if (!mkdtemp(dir_template.data())) return c;
  fs::path dir = dir_template;
  std::string out_path = (dir / "out").string(), err_path = (dir / "err").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> argv_s{binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; e++) env_s.emplace_back(*e);
  env_s.insert(env_s.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), envp.data()) == 0) {
    int wstatus = 0;
    rusage usage{};
    if (wait4(pid, &wstatus, 0, &usage) == pid) {
      c.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
      c.max_rss_kb = usage.ru_maxrss;
      c.cpu_s = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    }
  }
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  posix_spawn_file_actions_destroy(&actions);
  c.out = slurp_file(out_path);
  c.err = without_sanitizer_notes(slurp_file(err_path));
  std::error_code ec;
  fs::remove_all(dir, ec);
  return c;
}

}  // namespace redlab::test
