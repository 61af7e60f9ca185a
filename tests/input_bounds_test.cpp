// No input crashes redlab, exhausts the machine or recurses with a depth that grows with its
// size (issue 15, items 3 to 5). Each input is generated in a temporary directory and given
// to the `redlab` binary as a child process; each must end with exit status 2 (refused, or a
// run stopped by one of its bounds) and exactly one line on stderr that says where and which
// limit, killed by no signal, within 5 s of CPU time and 1 GB of resident memory (wait4's
// rusage of the child). Inputs that are legitimate at the limit (100,000 steps, a 50,000-term
// expression) must run, inside the same bounds.
//
// The figures of every child are printed ("[bounds] ...") so a slow machine shows how close
// each is to its bound.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/fake/server.h"

#include "tests/child.h"

extern char** environ;

namespace fs = std::filesystem;
using redlab::fake::TimeUs;

namespace {

#ifdef REDLAB_SANITIZED
// AddressSanitizer makes a run several times slower and bigger: the bounds are then about
// not hanging and not exhausting the machine, and the real figures come from the plain build.
constexpr double kCpuSecondsMax = 20.0;
constexpr long kResidentKbMax = 3 * 1024 * 1024;
#else
// CPU time, not wall time: on a machine loaded by other jobs a bounded run still uses the same
// CPU but may wait for it; a hang is caught by the kill after kKillAfterSeconds.
constexpr double kCpuSecondsMax = 5.0;
constexpr long kResidentKbMax = 1024 * 1024;  // 1 GB
#endif
constexpr double kKillAfterSeconds = 60;  // a hung child fails the test, not the suite

struct Outcome {
  int status = -1;  // exit status, or 128 + the signal that ended the child
  bool signaled = false;
  bool killed = false;  // by us, after kKillAfterSeconds
  std::string out, err;
  double wall_s = 0;
  double cpu_s = 0;  // user + system: what the bound is on (the wall clock depends on load)
  long max_rss_kb = 0;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "redlab-bounds-XXXXXX").string();
    if (mkdtemp(t.data())) path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  fs::path path_;
};

// tests/child.h's run_child, with a deadline (an input that hangs redlab must fail here, not
// hang the suite) and the environment replaced where `env` says.
Outcome run_redlab(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  TempDir io;
  std::string out_path = (io.path() / "out").string(), err_path = (io.path() / "err").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> argv_s{REDLAB_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; e++) {
    std::string entry = *e;
    bool replaced = false;
    for (const std::string& x : env)
      replaced = replaced || entry.substr(0, entry.find('=') + 1) == x.substr(0, x.find('=') + 1);
    if (!replaced) env_s.push_back(entry);
  }
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (std::string& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  Outcome o;
  // posix_spawn's child starts in this process' memory (vfork), and Linux keeps that memory's
  // high-water mark in the child's ru_maxrss: the figure may be this test's peak (~75 MB after
  // the big inputs) rather than redlab's, an overestimate, which is safe for a bound.
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "posix_spawn " << argv[0] << ": " << std::strerror(rc);
    return o;
  }
  for (;;) {
    int wstatus = 0;
    rusage usage{};
    pid_t done = wait4(pid, &wstatus, WNOHANG, &usage);
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done == pid) {
      o.signaled = WIFSIGNALED(wstatus);
      o.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
      o.max_rss_kb = usage.ru_maxrss;
      o.cpu_s = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
      o.wall_s = elapsed;
      break;
    }
    if (elapsed > kKillAfterSeconds && !o.killed) {
      o.killed = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  o.out = slurp(out_path);
  o.err = redlab::test::without_sanitizer_notes(slurp(err_path));
  return o;
}

std::string describe(const std::vector<std::string>& args, const Outcome& o) {
  std::string cmd = "redlab";
  for (const std::string& a : args) cmd += " " + (a.size() > 80 ? a.substr(0, 77) + "..." : a);
  char figures[128];
  std::snprintf(figures, sizeof figures, "status %d, %.2f s (%.2f s CPU), %.0f MB", o.status,
                o.wall_s, o.cpu_s, double(o.max_rss_kb) / 1024);
  return cmd + ": " + figures;
}

// Ends by itself, fast and small, with no signal.
void expect_bounded(const std::vector<std::string>& args, const Outcome& o) {
  std::printf("[bounds] %s\n", describe(args, o).c_str());
  EXPECT_FALSE(o.killed) << "still running after " << kKillAfterSeconds << " s";
  EXPECT_FALSE(o.signaled) << "ended by a signal: " << o.err;
  EXPECT_LT(o.cpu_s, kCpuSecondsMax) << o.err;
  EXPECT_LT(o.max_rss_kb, kResidentKbMax) << o.err;
  EXPECT_GT(o.max_rss_kb, 0);
}

// Refused (or stopped by a bound): status 2 and one line, starting with `prefix` and holding
// `words` (the limit, the location).
void expect_refused(const std::vector<std::string>& args, const std::string& prefix,
                    const std::string& words) {
  SCOPED_TRACE(describe(args, {}));
  Outcome o = run_redlab(args);
  expect_bounded(args, o);
  EXPECT_EQ(o.status, 2) << o.err;
  ASSERT_FALSE(o.err.empty());
  EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line: " << o.err;
  EXPECT_EQ(o.err.rfind("redlab: " + prefix, 0), 0u) << o.err;
  EXPECT_NE(o.err.find(words), std::string::npos) << o.err << "should hold: " << words;
}

// Runs to its end (exit 0: as expected, or 1: not), without a word on stderr.
void expect_runs(const std::vector<std::string>& args, const std::string& out_words = "") {
  SCOPED_TRACE(describe(args, {}));
  Outcome o = run_redlab(args);
  expect_bounded(args, o);
  EXPECT_TRUE(o.status == 0 || o.status == 1) << o.err;
  EXPECT_EQ(o.err, "");
  if (!out_words.empty()) {
    EXPECT_NE(o.out.find(out_words), std::string::npos) << o.out;
  }
}

// A scenario on one line: `actors` (JSON) and `extra` top-level members before them.
std::string scenario(const std::string& actors, const std::string& extra = "") {
  return R"({"format": "redlab-scenario", "version": 1, "id": "bounds", "title": "t", )" + extra +
         R"("actors": )" + actors + "}";
}

std::string chain(size_t terms) {
  std::string s = "1";
  s.reserve(terms * 2);
  for (size_t i = 1; i < terms; i++) s += "+1";
  return s;
}

// The 1-based column of `needle`'s first byte in a one-line document, as "1:COLUMN:".
std::string at(const std::string& doc, const std::string& needle, size_t shift = 0) {
  size_t i = doc.find(needle);
  EXPECT_NE(i, std::string::npos) << needle;
  return "1:" + std::to_string(i + shift + 1) + ":";
}

const std::string kNote = R"({"do": "note", "text": "x"})";

// ---- the loader: expressions, nesting, sizes ----------------------------------------------

TEST(InputBounds, FiftyThousandTermExpression) {
  TempDir dir;
  // Runs: 50,000 ms of virtual time, from a 50,000-term sum.
  std::string good = scenario("[{\"name\": \"A\", \"steps\": [" + kNote + "]}]",
                              "\"duration_ms\": \"" + chain(50'000) + "\", ");
  fs::path good_file = dir.write("sum.json", good);
  expect_runs({"run", good_file.string()}, "50.0 s of virtual time");
  // `list` over a folder that holds it (it once crashed there too).
  {
    std::vector<std::string> args{"list"};
    Outcome o = run_redlab(args, {"REDLAB_SCENARIOS=" + dir.path().string()});
    expect_bounded(args, o);
    EXPECT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("bounds"), std::string::npos) << o.out;
  }
  // The same expression with a mistake at its very end: located at that character, in a
  // duration, a condition and a template.
  std::string tail = chain(50'000) + "+zz";
  std::string bad = scenario("[{\"name\": \"A\", \"steps\": [" + kNote + "]}]",
                             "\"duration_ms\": \"" + tail + "\", ");
  fs::path bad_file = dir.write("bad-sum.json", bad);
  expect_refused({"run", bad_file.string()},
                 bad_file.string() + ":" + at(bad, "zz") + " duration_ms: ", "unknown name 'zz'");
  std::string when =
      scenario(R"([{"name": "A", "when": ")" + tail + R"(>1", "steps": [)" + kNote + "]}]");
  fs::path when_file = dir.write("bad-when.json", when);
  expect_refused(
      {"run", when_file.string()},
      when_file.string() + ":" + at(when, "zz") + " actors[0].when: ", "unknown name 'zz'");
  std::string text = scenario(R"([{"name": "A", "steps": [{"do": "command", "cmd": "SET k ${)" +
                              tail + R"(}"}]}])");
  fs::path text_file = dir.write("bad-template.json", text);
  expect_refused(
      {"run", text_file.string()},
      text_file.string() + ":" + at(text, "zz") + " actors[0].steps[0].cmd: ", "unknown name 'zz'");
}

TEST(InputBounds, DeepParenthesesAndMinuses) {
  TempDir dir;
  std::string parens = scenario(
      "[{\"name\": \"A\", \"steps\": [" + kNote + "]}]",
      "\"duration_ms\": \"" + std::string(100'000, '(') + "1" + std::string(100'000, ')') + "\", ");
  fs::path file = dir.write("parens.json", parens);
  // The 33rd parenthesis is one too many.
  expect_refused({"run", file.string()},
                 file.string() + ":" + at(parens, "((((", 32) + " duration_ms: ",
                 "expression nested too deep (32 levels at most)");
  std::string minuses = scenario(R"([{"name": "A", "steps": [{"do": "sleep", "ms": ")" +
                                 std::string(100'000, '-') + R"(1"}]}])");
  file = dir.write("minuses.json", minuses);
  expect_refused({"run", file.string()},
                 file.string() + ":" + at(minuses, "----", 32) + " actors[0].steps[0].ms: ",
                 "expression nested too deep (32 levels at most)");
}

TEST(InputBounds, DeepJsonNesting) {
  TempDir dir;
  fs::path arrays = dir.write("arrays.json", std::string(1'000'000, '['));
  expect_refused({"run", arrays.string()}, arrays.string() + ":1:257: ", "nesting too deep");
  std::string inside =
      "{\"id\": \"x\", \"actors\": " + std::string(500'000, '[') + std::string(500'000, ']') + "}";
  fs::path file = dir.write("inside.json", inside);
  expect_refused({"run", file.string()}, file.string() + ":" + at(inside, "[", 255) + " ",
                 "nesting too deep");
  std::string objects;
  for (int i = 0; i < 200'000; i++) objects += "{\"a\":";
  file = dir.write("objects.json", objects);
  expect_refused({"run", file.string()}, file.string() + ":1:1281: ", "nesting too deep");
}

TEST(InputBounds, ManyLiteralSteps) {
  TempDir dir;
  auto notes = [](size_t n) {
    std::string s = "[";
    s.reserve(n * 26);
    for (size_t i = 0; i < n; i++) s += std::string(i ? "," : "") + R"({"do":"note","text":""})";
    return s + "]";
  };
  // 100,000 steps, the most a file may hold, run in constant stack.
  fs::path file = dir.write("notes-100k.json",
                            scenario("[{\"name\": \"A\", \"steps\": " + notes(100'000) + "}]"));
  expect_runs({"run", file.string()}, "expectation met");
  // One more is refused where it is; a million do not fit the 4 MiB of a scenario file.
  std::string over = scenario("[{\"name\": \"A\", \"steps\": " + notes(100'001) + "}]");
  file = dir.write("notes-100001.json", over);
  size_t last = over.rfind(R"({"do":"note")");
  expect_refused({"run", file.string()},
                 file.string() + ":1:" + std::to_string(last + 1) + ": actors[0].steps[100000]: ",
                 "more than 100000 steps in the file");
  file = dir.write("notes-1m.json",
                   scenario("[{\"name\": \"A\", \"steps\": " + notes(1'000'000) + "}]"));
  expect_refused({"run", file.string()}, file.string() + ": ",
                 "larger than the 4 MiB limit for a scenario file");
}

TEST(InputBounds, ManyActorsAndInstances) {
  TempDir dir;
  std::string actors = "[";
  for (int i = 0; i < 11; i++)
    actors += std::string(i ? ", " : "") + "{\"name\": \"w" + std::to_string(i) +
              "x\", \"count\": \"n_max\", \"steps\": [" + kNote + "]}";
  // 11 actors of up to 1000 instances each (their parameter's max): more than 10,000.
  std::string doc =
      scenario(actors + "]", R"("params": {"n_max": {"default": 1, "min": 1, "max": 1000}}, )");
  fs::path file = dir.write("instances.json", doc);
  size_t eleventh = doc.find("\"n_max\"", doc.find("\"w10x\""));
  expect_refused({"run", file.string()},
                 file.string() + ":1:" + std::to_string(eleventh + 1) + ": actors[10].count: ",
                 "more than 10000 actor instances in the file");
  doc = scenario(R"([{"name": "A", "count": -3, "steps": [)" + kNote + "]}]");
  file = dir.write("count.json", doc);
  expect_refused({"run", file.string()}, file.string() + ":" + at(doc, "-3") + " actors[0].count: ",
                 "a count is 1 to 1000 (found -3)");
}

// ---- runs that never end by themselves ----------------------------------------------------

TEST(InputBounds, NestedRepeatsOfAMillion) {
  TempDir dir;
  std::string inner = R"({"do": "repeat", "times": 1000000, "steps": [)" + kNote + "]}";
  std::string middle = R"({"do": "repeat", "times": 1000000, "steps": [)" + inner + "]}";
  std::string outer = R"({"do": "repeat", "times": 1000000, "steps": [)" + middle + "]}";
  fs::path file = dir.write(
      "repeats.json",
      scenario("[{\"name\": \"A\", \"steps\": [" + outer + "]}]", "\"duration_ms\": 100000000, "));
  expect_refused({"run", file.string()}, file.string() + ":1:", "the run reached its bound of");
}

TEST(InputBounds, WatchdogEveryMillisecondForALongTime) {
  TempDir dir;
  fs::path file = dir.write(
      "watchdog.json",
      scenario(R"([{"name": "A", "steps": [{"do": "lock_acquire", "lock": "l", "ttl_ms": 10000},
        {"do": "watchdog", "lock": "l", "ttl_ms": 10000, "every_ms": 1},
        {"do": "work", "ms": 100000000}]}])",
               "\"duration_ms\": 100000000, "));
  expect_refused({"run", file.string()}, file.string() + ":", "the run reached its bound of");
}

TEST(InputBounds, EndlessLuaScriptOnTheFake) {
  TempDir dir;
  fs::path lua = dir.write("loop.lua", "while true do end\n");
  expect_refused({"run", "ttl-double-holder", "--variant", "release=lua", "--script",
                  "lock_release=" + lua.string()},
                 "", "script lock_release ran more than 50000000 Lua instructions in this run");
  // The bound is settable; a pcall cannot swallow the kill.
  fs::path pcall =
      dir.write("pcall.lua", "while true do pcall(function() while true do end end) end\n");
  expect_refused({"run", "ttl-double-holder", "--variant", "release=lua", "--script",
                  "lock_release=" + pcall.string(), "--lua-instructions-max", "1000000"},
                 "", "script lock_release ran more than 1000000 Lua instructions in this run");
  // The grader fails the answer at once, naming the check the run already saw broken.
  std::vector<std::string> args{"check", "ttl-double-holder", "--script",
                                "lock_release=" + lua.string()};
  Outcome o = run_redlab(args);
  expect_bounded(args, o);
  EXPECT_EQ(o.status, 1) << o.out << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_NE(o.out.find("FAIL ttl-double-holder: seed 1:\n  the run did not finish: "),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("\n  release_removes_own_lock should hold, but: "), std::string::npos)
      << o.out;
  // A legitimate script is far from the bound: the scenario's own runs as before.
  expect_runs({"run", "ttl-double-holder", "--variant", "release=lua"}, "expectation met");
}

// ---- what a file is made of ---------------------------------------------------------------

TEST(InputBounds, DevZeroRandomBytesAndAFifoNobodyCloses) {
  TempDir dir;
  expect_refused({"run", "/dev/zero"},
                 "/dev/zero: ", "larger than the 4 MiB limit for a scenario file");
  std::string bytes(20'000'000, '\0');
  std::mt19937_64 rng(15);
  for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    uint64_t v = rng();
    std::memcpy(&bytes[i], &v, 8);
  }
  fs::path random = dir.write("random.json", bytes);
  expect_refused({"run", random.string()}, random.string() + ": ",
                 "larger than the 4 MiB limit for a scenario file");
  fs::path small = dir.write("small-random.json", bytes.substr(0, 3'000'000));
  expect_refused({"run", small.string()}, small.string() + ":1:", "");
  // A FIFO this test holds open for writing and never closes.
  fs::path fifo = dir.path() / "scenario.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(::write(writer, "{\"id\": ", 7), 7);
  expect_refused({"run", fifo.string()}, fifo.string() + ": ", "no end of input after 2 s");
  ::close(writer);
}

TEST(InputBounds, HugeTraceForShow) {
  TempDir dir;
  // A well-formed trace just under the 256 MiB limit for a trace file, of small events.
  fs::path file = dir.path() / "huge-trace.json";
  {
    std::ofstream out(file, std::ios::binary);
    out << "{\"format\":\"redlab-trace\",\"version\":2,\n\"meta\":{\"backend\":\"fake\","
           "\"scenario\":"
           "\"t\",\"seed\":\"1\",\"title\":\"t\"},\n\"events\":[\n"
           "{\"time_us\":0,\"kind\":\"run_start\",\"who\":[\"A\"]},\n";
    std::string chunk;
    size_t written = 0;
    int64_t t = 0;
    while (written < (size_t(250) << 20)) {
      chunk.clear();
      for (int i = 0; i < 10000; i++)
        chunk += "{\"time_us\":" + std::to_string(t++) + ",\"kind\":\"note\",\"actor\":\"A\"},\n";
      out << chunk;
      written += chunk.size();
    }
    out << "{\"time_us\":" << t << ",\"kind\":\"run_end\",\"count\":0}\n]}\n";
  }
  // About 4.8 million events: more than any run writes, refused at the first one too many.
  std::vector<std::string> args{"show", file.string()};
  Outcome o = run_redlab(args);
  expect_bounded(args, o);
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("more than 2000000 events"), std::string::npos) << o.err;
  // A sparse file past the limit is refused from its size.
  fs::path sparse = dir.path() / "sparse.json";
  {
    int fd = ::open(sparse.c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t(3) << 30), 0);
    ::close(fd);
  }
  expect_refused({"show", sparse.string()}, sparse.string() + ": ",
                 "larger than the 256 MiB limit");
}

// ---- the fake server ----------------------------------------------------------------------

// Redis 7.0 debug.c: DEBUG SLEEP takes strtod seconds, sleeps (long long)(s * 1e6) us.
TEST(InputBounds, DebugSleepOfAMillionSecondsSleeps) {
  for (const char* secs : {"1000000", "1e7", "2000000.5"}) {
    SCOPED_TRACE(secs);
    redlab::fake::Server s;
    auto a = s.connect(0), b = s.connect(0);
    s.submit(a, {"DEBUG", "SLEEP", secs}, 0);
    s.submit(b, {"PING"}, 1000);
    TimeUs expected = TimeUs(std::strtod(secs, nullptr) * 1e6);
    s.advance(expected + 10'000'000);
    auto out = s.take_outputs();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_GE(out[0].at_us, expected);
    EXPECT_GE(out[1].at_us, expected) << "PING waits behind DEBUG SLEEP " << secs;
  }
  // What sleeps 0 in Redis sleeps 0 here: garbage, negative, NaN, past INT64_MAX us.
  for (const char* secs : {"abc", "-5", "nan", "1e300", "0.0000004"}) {
    SCOPED_TRACE(secs);
    redlab::fake::Server s;
    auto a = s.connect(0);
    s.submit(a, {"DEBUG", "SLEEP", secs}, 0);
    s.advance(1'000'000);
    auto out = s.take_outputs();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_LT(out[0].at_us, 1000);
  }
}

}  // namespace
