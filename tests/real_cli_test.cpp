// Issue 4's promises, tested through the `redlab` binary against real redis-server processes:
// - every core scenario and variant gives the same check verdicts on spawned servers at
//   --time-scale 0.1 as on the fake;
// - a run against a server that holds someone's data leaves that data untouched (DEBUG
//   DIGEST before and after) and leaves no redlab:* key behind; server-wide faults are refused
//   there before anything runs;
// - a server killed in the middle of a run ends the run within its timeouts (exit 1 or 2,
//   errors on the timeline), never a hang or a crash;
// - extra latency and a pause show in the trace with the durations asked for (within 10%).
// The tests start their own redis-server where they play "the user's server".
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Outcome {
  int status = -1;  // exit status, or 128 + signal
  std::string out, err;
  double seconds = 0;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "redlab-real-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) ADD_FAILURE() << "mkdtemp failed";
  return tmpl;
}

// Starts argv with stdout/stderr to files; returns the pid.
pid_t start(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) ADD_FAILURE() << "cannot start " << argv[0];
  return pid;
}

// Waits for pid at most limit_s seconds; kills it (and fails) if it is still running.
int wait_for(pid_t pid, double limit_s) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      ADD_FAILURE() << "process " << pid << " still running after " << limit_s << " s: killed";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Outcome redlab(std::vector<std::string> args, double limit_s = 120) {
  fs::path dir = temp_dir();
  args.insert(args.begin(), REDLAB_BINARY);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = start(args, dir / "out", dir / "err");
  Outcome o;
  o.status = wait_for(pid, limit_s);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.out = slurp(dir / "out");
  o.err = slurp(dir / "err");
  fs::remove_all(dir);
  return o;
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// "The user's server": a redis-server this test starts and stops, with data in it.
class UserServer {
 public:
  UserServer() : dir_(temp_dir()), port_(free_port()) {
    pid_ =
        start({"redis-server", "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--enable-debug-command", "yes", "--dir", dir_.string()},
              dir_ / "out", dir_ / "err");
    for (int i = 0; i < 250 && cli({"PING"}) != "PONG"; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ~UserServer() {
    stop();
    fs::remove_all(dir_);
  }
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // One command through redis-cli; its output without the final newline.
  std::string cli(const std::vector<std::string>& argv) const {
    std::vector<std::string> a = {"redis-cli", "-p", std::to_string(port_)};
    a.insert(a.end(), argv.begin(), argv.end());
    fs::path out = dir_ / "cli.out";
    int st = wait_for(start(a, out, dir_ / "cli.err"), 10);
    std::string s = slurp(out);
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return st == 0 ? s : "";
  }

 private:
  fs::path dir_;
  int port_;
  pid_t pid_ = -1;
};

// The verdicts of the checks the scenario's expectation names for this variant (the lesson);
// a check the expectation withdraws for a variant (watch-retry-storm's retries_bounded with the
// WATCH on the wrong connection) depends on timing by design.
std::map<std::string, bool> verdicts(const std::string& json_text) {
  std::map<std::string, bool> v;
  json j = json::parse(json_text);
  for (auto& c : j.at("checks"))
    if (c.contains("expected")) v[c.at("name").get<std::string>()] = c.at("ok").get<bool>();
  return v;
}

// ---------------------------------------------------------------------------------------
// Verdicts: fake vs spawned servers, every scenario and variant
// ---------------------------------------------------------------------------------------
struct Case {
  std::string scenario;
  std::vector<std::string> flags;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.scenario;
  for (auto& f : c.flags) *os << " " << f;
}

class RealVerdicts : public testing::TestWithParam<Case> {};

TEST_P(RealVerdicts, SpawnAtTimeScaleTenthMatchesTheFake) {
  const Case& c = GetParam();
  std::vector<std::string> args = {"run", c.scenario, "--json"};
  args.insert(args.end(), c.flags.begin(), c.flags.end());
  Outcome fake = redlab(args);
  ASSERT_TRUE(fake.status == 0 || fake.status == 1) << fake.err;
  args.insert(args.end(), {"--backend", "spawn", "--time-scale", "0.1"});
  // A real run is not deterministic: races the lesson is about (two buyers reading the same
  // stock) happen on the machine's timing. Up to three runs; each that disagrees is printed.
  constexpr int kRealRunsMax = 3;
  bool agreed = false;
  for (int attempt = 1; attempt <= kRealRunsMax && !agreed; attempt++) {
    Outcome real = redlab(args);
    ASSERT_TRUE(real.status == 0 || real.status == 1) << real.err;
    json j = json::parse(real.out);
    EXPECT_EQ(j.at("backend"), "spawn");
    agreed = verdicts(fake.out) == verdicts(real.out) && fake.status == real.status;
    if (!agreed)
      std::cout << "real run " << attempt << " disagrees with the fake:\n" << real.out << "\n";
  }
  EXPECT_TRUE(agreed) << "fake:\n" << fake.out;
}

std::vector<Case> cases() {
  auto v = [](std::initializer_list<std::string> kv) {
    std::vector<std::string> f;
    for (auto& x : kv) {
      f.push_back(x.find('=') != std::string::npos && x.rfind("set:", 0) == 0 ? "--set"
                                                                              : "--variant");
      f.push_back(x.rfind("set:", 0) == 0 ? x.substr(4) : x);
    }
    return f;
  };
  return {
      {"ttl-double-holder", {}},
      {"ttl-double-holder", v({"release=lua"})},
      {"ttl-double-holder", v({"watchdog=on"})},
      {"ttl-double-holder", v({"watchdog=on", "release=lua"})},
      {"ttl-double-holder", v({"watchdog=on", "set:pause_ms=15000"})},
      {"forged-fence", {}},
      {"forged-fence", v({"resource=no-check"})},
      {"forged-fence", v({"token=forged"})},
      {"pubsub-reconnect-loss", {}},
      {"pubsub-reconnect-loss", v({"transport=streams"})},
      {"pubsub-reconnect-loss", v({"slow-subscriber=on"})},
      {"pool-exhaustion", {}},
      {"pool-exhaustion", v({"blocking=dedicated-client"})},
      {"pool-exhaustion", v({"server=slow", "blocking=dedicated-client"})},
      {"watch-retry-storm", {}},
      {"watch-retry-storm", v({"retry=bounded"})},
      {"watch-retry-storm", v({"atomic=lua"})},
      {"watch-retry-storm", v({"watch=wrong-connection"})},
  };
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string n = info.param.scenario;
  for (auto& f : info.param.flags)
    if (f.rfind("--", 0) != 0) n += "_" + f;
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(EveryVariant, RealVerdicts, testing::ValuesIn(cases()), case_name);

// ---------------------------------------------------------------------------------------
// A user's server: data untouched, nothing left behind, server-wide faults refused
// ---------------------------------------------------------------------------------------
void populate(UserServer& s) {
  s.cli({"SET", "user:name", "Ada"});
  s.cli({"SET", "lock:job:42", "someone-else's lock"});  // the scenario's key name, unprefixed
  s.cli({"HSET", "user:1", "name", "Ada", "role", "admin"});
  s.cli({"RPUSH", "jobs", "a", "b", "c"});
  s.cli({"SET", "session:{7}", "x", "PX", "600000"});
  s.cli({"ZADD", "scores", "1", "a", "2", "b"});
  s.cli({"SET", "stock", "999"});
}

TEST(RealUserServer, RunLeavesOtherKeysUntouchedAndNoRunKeys) {
  UserServer s;
  ASSERT_EQ(s.cli({"PING"}), "PONG");
  populate(s);
  std::string before = s.cli({"DEBUG", "DIGEST"});
  std::string dbsize = s.cli({"DBSIZE"});
  ASSERT_FALSE(before.empty());
  for (std::vector<std::string> run :
       {std::vector<std::string>{"run", "ttl-double-holder", "--variant", "release=lua"},
        {"run", "watch-retry-storm", "--variant", "retry=bounded"},
        {"run", "forged-fence"},
        {"run", "pool-exhaustion", "--variant", "blocking=dedicated-client"}}) {
    run.insert(run.end(), {"--backend", s.url(), "--time-scale", "0.1", "--json"});
    Outcome o = redlab(run);
    EXPECT_TRUE(o.status == 0 || o.status == 1) << run[1] << ": " << o.err;
    EXPECT_EQ(s.cli({"DEBUG", "DIGEST"}), before) << run[1] << " changed the user's data";
    EXPECT_EQ(s.cli({"KEYS", "redlab:*"}), "") << run[1] << " left keys behind";
    EXPECT_EQ(s.cli({"DBSIZE"}), dbsize);
  }
}

TEST(RealUserServer, ServerWideFaultsAreRefusedBeforeTheRun) {
  UserServer s;
  populate(s);
  std::string before = s.cli({"DEBUG", "DIGEST"});
  std::string limit = s.cli({"CONFIG", "GET", "client-output-buffer-limit"});
  // pubsub-reconnect-loss sets client-output-buffer-limit (server config); pool-exhaustion's
  // slow server runs DEBUG SLEEP from a step.
  Outcome o = redlab({"run", "pubsub-reconnect-loss", "--backend", s.url()});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("CONFIG SET client-output-buffer-limit"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--allow-server-faults"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  Outcome p = redlab({"run", "pool-exhaustion", "--variant", "server=slow", "--backend", s.url()});
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.err.find("DEBUG"), std::string::npos) << p.err;
  EXPECT_EQ(s.cli({"DEBUG", "DIGEST"}), before);
  EXPECT_EQ(s.cli({"CONFIG", "GET", "client-output-buffer-limit"}), limit);
  // Allowed: it runs, and the server's config is what it was afterwards.
  Outcome q = redlab({"run", "pubsub-reconnect-loss", "--backend", s.url(), "--time-scale", "0.1",
                      "--allow-server-faults", "--json"});
  EXPECT_TRUE(q.status == 0 || q.status == 1) << q.err;
  EXPECT_EQ(s.cli({"CONFIG", "GET", "client-output-buffer-limit"}), limit);
  EXPECT_EQ(s.cli({"DEBUG", "DIGEST"}), before);
}

TEST(RealUserServer, ScriptThatListsKeysIsRefusedAndTheDataStays) {
  UserServer s;
  populate(s);
  std::string before = s.cli({"DEBUG", "DIGEST"});
  Outcome o = redlab(
      {"run", REDLAB_SOURCE_DIR "/tests/scenarios/real/script-keys.json", "--backend", s.url()});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("scripts.wipe: script wipe calls KEYS"), std::string::npos) << o.err;
  EXPECT_EQ(s.cli({"DEBUG", "DIGEST"}), before);
}

TEST(RealUserServer, UnreachableServerIsExitTwoWithAddressAndReason) {
  int port = free_port();  // nobody listens there
  Outcome o = redlab(
      {"run", "ttl-double-holder", "--backend", "redis://127.0.0.1:" + std::to_string(port)}, 30);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("refused"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_EQ(o.out, "");
}

TEST(RealSpawn, ClockJumpIsRefusedBeforeAnyServerStarts) {
  Outcome o = redlab(
      {"run", REDLAB_SOURCE_DIR "/tests/scenarios/real/clock-jump.json", "--backend", "spawn"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("clock-jump.json:13:5: faults[0]: clock_jump at 1.0 s cannot be staged"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

TEST(RealUserServer, PasswordIsNeverPrinted) {
  int port = free_port();
  Outcome o = redlab({"run", "ttl-double-holder", "--backend",
                      "redis://user:s3cr3t-pw@127.0.0.1:" + std::to_string(port)},
                     30);
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err.find("s3cr3t-pw"), std::string::npos) << o.err;
}

// ---------------------------------------------------------------------------------------
// The server dies in the middle of a run
// ---------------------------------------------------------------------------------------
TEST(RealUserServer, KilledServerEndsTheRunWithErrorsOnTheTimeline) {
  UserServer s;
  fs::path dir = temp_dir();
  fs::path trace = dir / "trace.json";
  // ttl-double-holder lasts 25 s of scenario time: 5 s at 0.2.
  std::vector<std::string> args = {REDLAB_BINARY, "run",     "ttl-double-holder",
                                   "--backend",   s.url(),   "--time-scale",
                                   "0.2",         "--trace", trace.string()};
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = start(args, dir / "out", dir / "err");
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  s.stop();
  // The run's own duration plus its timeouts (dial 5 s, read 3 s, scaled) bound it well
  // below this.
  int status = wait_for(pid, 30);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string err = slurp(dir / "err");
  EXPECT_TRUE(status == 1 || status == 2) << "status " << status << ": " << err;
  EXPECT_LT(secs, 15.0);
  EXPECT_NE(err.find("127.0.0.1"), std::string::npos) << err;
  std::string t = slurp(trace);
  ASSERT_FALSE(t.empty()) << "the trace of the broken run was not written";
  bool errors_seen = t.find("\"kind\":\"eof\"") != std::string::npos ||
                     t.find("\"kind\":\"dial_failed\"") != std::string::npos ||
                     t.find("\"kind\":\"conn_close\"") != std::string::npos;
  EXPECT_TRUE(errors_seen) << "no connection error on the timeline";
  fs::remove_all(dir);
}

// ---------------------------------------------------------------------------------------
// Latency injection and pause, at time scale 1
// ---------------------------------------------------------------------------------------
struct Ev {
  int64_t t = 0;
  std::string kind, actor, text;
  int64_t conn = -1;
};
std::vector<Ev> events_of(const std::string& trace_text) {
  std::vector<Ev> out;
  json j = json::parse(trace_text);
  for (auto& e : j.at("events"))
    out.push_back(Ev{e.at("time_us").get<int64_t>(), e.at("kind").get<std::string>(),
                     e.at("actor").get<std::string>(), e.at("text").get<std::string>(),
                     e.at("connection").get<int64_t>()});
  return out;
}

TEST(RealFaults, LatencyAndPauseShowWithTheirDurations) {
  fs::path dir = temp_dir();
  fs::path trace = dir / "trace.json";
  Outcome o = redlab({"run", REDLAB_SOURCE_DIR "/tests/scenarios/real/latency-pause.json",
                      "--backend", "spawn", "--trace", trace.string()});
  ASSERT_TRUE(o.status == 0 || o.status == 1) << o.err;
  std::vector<Ev> ev = events_of(slurp(trace));
  // Round trips of A's GETs: those sent while +40 ms was on take two extra 40 ms (both ways).
  std::map<int64_t, int64_t> sent;  // connection -> time of the command in flight
  std::vector<int64_t> slow, fast;
  int64_t latency_on = -1, latency_off = -1, pause_at = -1, resume_at = -1;
  for (const Ev& e : ev) {
    if (e.kind == "fault" && e.actor == "A" && e.text.find("latency on") != std::string::npos)
      latency_on = e.t;
    if (e.kind == "fault" && e.actor == "A" && e.text == "extra latency removed") latency_off = e.t;
    if (e.kind == "fault" && e.actor == "A" && e.text.rfind("pause for", 0) == 0) pause_at = e.t;
    if (e.kind == "fault" && e.actor == "A" && e.text == "resume") resume_at = e.t;
    if (e.actor != "A") continue;
    if (e.kind == "command" && e.text.rfind("GET", 0) == 0) sent[e.conn] = e.t;
    if (e.kind == "reply" && sent.count(e.conn)) {
      int64_t began = sent[e.conn];
      sent.erase(e.conn);
      if (latency_on >= 0 && began > latency_on && (latency_off < 0 || e.t < latency_off))
        slow.push_back(e.t - began);
      else if (latency_on < 0)
        fast.push_back(e.t - began);
    }
  }
  ASSERT_GE(slow.size(), 5u) << "no round trip under extra latency";
  // Never faster than asked; the median within 10% (a loaded CI machine may delay a single
  // wake-up now and then, which is the machine, not the injection).
  for (int64_t rtt : slow)
    EXPECT_GE(rtt, 80'000) << "a round trip under +40 ms each way took " << rtt << " us";
  std::sort(slow.begin(), slow.end());
  int64_t median = slow[slow.size() / 2];
  EXPECT_LE(median, 88'000) << "round trips under +40 ms each way: median " << median << " us";
  ASSERT_GE(pause_at, 0);
  ASSERT_GE(resume_at, 0);
  int64_t paused = resume_at - pause_at;
  EXPECT_GE(paused, 300'000);
  EXPECT_LE(paused, 330'000) << "pause of 300 ms lasted " << paused << " us";
  for (const Ev& e : ev)
    if (e.actor == "A" && e.t > pause_at + 1000 && e.t < resume_at && e.kind != "fault")
      ADD_FAILURE() << "A acted while paused: " << e.kind << " at " << e.t;
  fs::remove_all(dir);
}

}  // namespace
