// Issue 12's must-show: `redlab diff` of a fake run and a run on a spawned redis-server 7
// (`--backend spawn --time-scale 0.1`) reports no verdict difference, for each of the five core
// scenarios at its defaults and at every other value of each of its variants (the values come
// from `redlab list --json`). The real runs are done three at a time (each spawns its own
// server; they mostly wait on the scenario's clock); the whole test prints how long it took.
//
// A real run is not deterministic (races happen on the machine's timing), so as in
// RealVerdicts (real_cli_test.cpp) a case gets up to three real runs and passes if one agrees.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* kCoreScenarios[] = {"ttl-double-holder", "forged-fence", "pubsub-reconnect-loss",
                                "pool-exhaustion", "watch-retry-storm"};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Outcome {
  int status = -1;
  std::string out, err;
};

// `redlab ARGS` with stdout and stderr in files of `dir`; killed after limit_s.
Outcome redlab(std::vector<std::string> args, const fs::path& dir, double limit_s = 120) {
  args.insert(args.begin(), REDLAB_BINARY);
  const fs::path out = dir / "out", err = dir / "err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  Outcome o;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    o.err = "cannot start redlab";
    return o;
  }
  posix_spawn_file_actions_destroy(&fa);
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int st = 0;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      break;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      o.err = "killed after " + std::to_string(limit_s) + " s; ";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  o.out = slurp(out);
  o.err += slurp(err);
  return o;
}

struct Case {
  std::string scenario;
  std::vector<std::string> flags;
  std::string name() const {
    std::string n = scenario;
    for (size_t i = 1; i < flags.size(); i += 2) n += " " + flags[i];
    return n;
  }
};

// "" if `redlab diff` of a fake and a spawned run of the case reports no verdict difference;
// else what it reported (of the last of up to three real runs).
std::string disagreement(const Case& c, const fs::path& dir) {
  std::vector<std::string> run = {"run", c.scenario};
  run.insert(run.end(), c.flags.begin(), c.flags.end());
  const std::string fake = (dir / "fake.json").string(), real = (dir / "real.json").string();
  std::vector<std::string> fake_args = run;
  fake_args.insert(fake_args.end(), {"--trace", fake});
  Outcome f = redlab(fake_args, dir);
  if (f.status != 0 && f.status != 1) return "the fake run failed: " + f.err;
  // A tenth of the scenario's time, except under the sanitizers, which make the client several
  // times slower (as RealVerdicts, real_cli_test.cpp): there each real run gets at least 1 s of
  // wall time, so that a storm of buyers keeps the scenario's pace.
  std::string time_scale = "0.1";
#ifdef REDLAB_SANITIZED
  std::vector<std::string> json_args = run;
  json_args.push_back("--json");
  Outcome ends = redlab(json_args, dir);
  json fake_json = json::parse(ends.out, nullptr, false);
  const double end_us = fake_json.is_object() ? fake_json.value("end_us", 0.0) : 0.0;
  if (end_us > 0 && end_us < 10'000'000) time_scale = std::to_string(1'000'000 / end_us);
#endif
  std::string last;
  for (int attempt = 1; attempt <= 3; attempt++) {
    std::vector<std::string> real_args = run;
    real_args.insert(real_args.end(),
                     {"--backend", "spawn", "--time-scale", time_scale, "--trace", real});
    Outcome r = redlab(real_args, dir);
    if (r.status != 0 && r.status != 1) return "the spawned run failed: " + r.err;
    Outcome d = redlab({"diff", fake, real, "--json"}, dir);
    json j = json::parse(d.out, nullptr, false);
    if (d.status == 0 && j.is_object() && !j.value("verdicts_differ", true)) return "";
    last = "redlab diff exited " + std::to_string(d.status) + ": " +
           (j.is_object() ? j.value("verdicts", json::array()).dump() : d.err);
    std::cout << c.name() << ": real run " << attempt << " differs: " << last << "\n";
  }
  return last;
}

TEST(DiffFakeVsSpawn, EveryCoreScenarioAndVariantValueHasNoVerdictDifference) {
  if (std::system("command -v redis-server >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no redis-server on PATH";
  const fs::path root =
      fs::temp_directory_path() / ("redlab-diff-real-" + std::to_string(getpid()));
  fs::create_directories(root);
  Outcome list = redlab({"list", "--json"}, root, 60);
  json scenarios = json::parse(list.out, nullptr, false);
  ASSERT_TRUE(scenarios.is_array()) << list.err;
  std::vector<Case> cases;
  for (const char* id : kCoreScenarios) {
    const json* sc = nullptr;
    for (const json& s : scenarios)
      if (s.at("id") == id) sc = &s;
    ASSERT_NE(sc, nullptr) << id << " is not in redlab list";
    cases.push_back({id, {}});
    const json variants = sc->value("variants", json::object());
    for (const auto& [name, values] : variants.items())
      for (size_t i = 1; i < values.size(); i++)
        cases.push_back({id, {"--variant", name + "=" + values[i].get<std::string>()}});
  }
  EXPECT_EQ(cases.size(), 17u);  // 5 defaults + 12 other values (a new value joins by itself)

  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> results(cases.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < cases.size();) {
      fs::path dir = root / std::to_string(i);
      fs::create_directories(dir);
      results[i] = disagreement(cases[i], dir);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < 3; t++) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < cases.size(); i++) EXPECT_EQ(results[i], "") << cases[i].name();
  std::cout << cases.size() << " cases (fake, spawn, redlab diff) in " << seconds << " s\n";
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
