// Differential conformance: every script in tests/conformance/ is run through `redlab repl`
// against the fake, a private redis-server 7.0 (the fake's reference) and a private
// valkey-server 8.0, each server started here on a free loopback port, one per script, so no
// state leaks between scripts.
// - The fake must print exactly what redis-server prints.
// - Where valkey-server prints something else than redis-server, the difference must be one
//   listed in tests/conformance/valkey-8.0-differences.txt, and every difference listed there
//   must still be seen: a new difference fails, and so does one that went away. The same file
//   lists the INFO fields and the commands (COMMAND LIST) of Valkey 8.0 that Redis 7.0 lacks,
//   and the other way round (ValkeyDifferences tests). docs/fake-redis.md explains them.
//
// A script named cli_*.redis (plain commands only: no comments, no meta lines) is also run through
// the real `redis-cli --no-raw` against the real server and must print what `redlab repl`
// prints: that checks our reply formatting against the reference, not only the fake against
// the server.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  close(fd);
  return port;
}

bool port_open(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// A private server (redis-server or valkey-server, which take the same options): --save ''
// --appendonly no, debug commands on, a temp dir.
class Server {
 public:
  explicit Server(std::string binary) : binary_(std::move(binary)) {
    // Another test may take the free port between our probe and the server's bind: retry.
    constexpr int kAttemptsMax = 5;
    for (int attempt = 0; attempt < kAttemptsMax && !start(); attempt++) stop();
  }
  ~Server() { stop(); }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  bool up() const { return pid_ > 0 && port_open(port_); }
  int port() const { return port_; }
  const std::string& binary() const { return binary_; }
  // One command through redis-cli (raw output: one line per element).
  std::string cli(const std::string& args) const {
    return run_capture("redis-cli -p " + std::to_string(port_) + " " + args + " 2>&1");
  }

 private:
  bool start() {
    port_ = free_port();
    dir_ = fs::temp_directory_path() / ("redlab-conf-" + binary_ + "-" + std::to_string(getpid()) +
                                        "-" + std::to_string(port_));
    fs::create_directories(dir_);
    pid_ = fork();
    if (pid_ == 0) {
      std::string port = std::to_string(port_);
      execlp(binary_.c_str(), binary_.c_str(), "--port", port.c_str(), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--enable-debug-command", "yes", "--dir",
             dir_.c_str(), "--logfile", (dir_ / "server.log").c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 300; i++) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;  // exited: port taken, or the program missing
        return false;
      }
      if (port_open(port_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  void stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string binary_;
  int port_ = 0;
  pid_t pid_ = -1;
  fs::path dir_;
};

std::vector<std::string> scripts() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(REDLAB_CONFORMANCE_DIR))
    if (e.path().extension() == ".redis") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) v.push_back(line);
  return v;
}

// The first difference, with the command that produced it.
std::string first_difference(const std::string& real, const std::string& fake) {
  auto a = lines_of(real), b = lines_of(fake);
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; i++) {
    std::string x = i < a.size() ? a[i] : "<end of output>";
    std::string y = i < b.size() ? b[i] : "<end of output>";
    if (x == y) continue;
    std::string cmd = "?";
    for (size_t k = std::min(i, a.size()); k-- > 0;)
      if (a[k].rfind("> ", 0) == 0) {
        cmd = a[k];
        break;
      }
    return "output line " + std::to_string(i + 1) + ", after " + cmd + "\n  real: " + x +
           "\n  fake: " + y;
  }
  return "";
}

// ---------------------------------------------------------------------------------------
// The listed differences between Valkey 8.0 and Redis 7.0
// ---------------------------------------------------------------------------------------

const fs::path kDifferencesFile = fs::path(REDLAB_CONFORMANCE_DIR) / "valkey-8.0-differences.txt";

// One difference: its lines in the file's form. For a script, "> COMMAND" (as `redlab repl
// --echo` echoes it), then "- " and each line Redis 7.0 printed, "+ " and each line Valkey 8.0
// printed; or, when the two printed the same elements in another order (a set's order, which
// neither server defines), "> COMMAND" and kOtherOrder alone. For "INFO" and "COMMAND", one
// line: "+ NAME" (Valkey only) or "- NAME" (Redis 7.0 only).
using Difference = std::vector<std::string>;
const std::string kOtherOrder = "~ the same elements in another order";

// One section of the file: "== NAME COUNT" and its differences.
struct Section {
  size_t count = 0;  // as the header says
  std::vector<Difference> differences;
  int line_number = 0;  // of the header, for messages
};

// The file names the version it lists the differences of: "valkey_version 8.0.1".
constexpr std::string_view kVersionLine = "valkey_version ";

std::map<std::string, Section> listed_differences(std::string* error,
                                                  std::string* version = nullptr) {
  std::map<std::string, Section> out;
  std::ifstream in(kDifferencesFile);
  if (!in) {
    *error = kDifferencesFile.string() + ": cannot read";
    return out;
  }
  std::string line;
  Section* current = nullptr;
  bool per_line = false;  // INFO, COMMAND: every line is a difference of its own
  for (int number = 1; std::getline(in, line); number++) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind(kVersionLine, 0) == 0 && !current) {
      if (version) *version = line.substr(kVersionLine.size());
      continue;
    }
    std::string where = kDifferencesFile.string() + ":" + std::to_string(number) + ": ";
    if (line.rfind("== ", 0) == 0) {
      std::istringstream header(line.substr(3));
      std::string name;
      long count = -1;
      header >> name >> count;
      if (name.empty() || count < 0 || !header.eof() || out.count(name)) {
        *error = where + "expected \"== NAME COUNT\" (once per name), got \"" + line + "\"";
        return out;
      }
      current = &out[name];
      current->count = static_cast<size_t>(count);
      current->line_number = number;
      per_line = name == "INFO" || name == "COMMAND";
      continue;
    }
    bool command = line.rfind("> ", 0) == 0;
    bool marked = command || line[0] == '-' || line[0] == '+' || line == kOtherOrder;
    if (!current || !marked || (!per_line && !command && current->differences.empty())) {
      *error = where + "expected \"== NAME COUNT\", \"> \", \"- \", \"+ \" or \"" + kOtherOrder +
               "\", got \"" + line + "\"";
      return out;
    }
    if (per_line || command) current->differences.emplace_back();
    current->differences.back().push_back(line.size() == 1 ? line + " " : line);
  }
  return out;
}

// The output of `redlab repl --echo` cut at each echoed command: (the "> ..." line, the lines
// printed for it).
using Blocks = std::vector<std::pair<std::string, std::vector<std::string>>>;
Blocks blocks_of(const std::string& output) {
  Blocks out;
  for (const std::string& line : lines_of(output)) {
    if (line.rfind("> ", 0) == 0 || out.empty())
      out.emplace_back(line.rfind("> ", 0) == 0 ? line : "> <before the first command>",
                       std::vector<std::string>{});
    if (line.rfind("> ", 0) != 0) out.back().second.push_back(line);
  }
  return out;
}

// The elements of a printed array without their numbers ("10) \"a\"" -> "\"a\""), sorted.
std::vector<std::string> elements_of(const std::vector<std::string>& printed) {
  std::vector<std::string> out;
  for (const std::string& line : printed) {
    size_t paren = line.find(") ");
    bool numbered =
        paren != std::string::npos && paren > 0 && line.find_first_not_of(" 0123456789") == paren;
    out.push_back(numbered ? line.substr(paren + 2) : line);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every command whose printed reply differs.
std::vector<Difference> script_differences(const std::string& redis, const std::string& valkey) {
  Blocks a = blocks_of(redis), b = blocks_of(valkey);
  std::vector<Difference> out;
  static const std::pair<std::string, std::vector<std::string>> kNone{"> <end of output>", {}};
  for (size_t i = 0; i < std::max(a.size(), b.size()); i++) {
    const auto& x = i < a.size() ? a[i] : kNone;
    const auto& y = i < b.size() ? b[i] : kNone;
    if (x == y) continue;
    Difference d = {x.first == y.first ? x.first : x.first + "  |  " + y.first};
    if (x.first == y.first && x.second.size() > 1 &&
        elements_of(x.second) == elements_of(y.second)) {
      d.push_back(kOtherOrder);
    } else {
      for (const std::string& l : x.second) d.push_back("- " + l);
      for (const std::string& l : y.second) d.push_back("+ " + l);
    }
    out.push_back(std::move(d));
  }
  return out;
}

// "+ NAME" for what only `valkey` holds, "- NAME" for what only `redis` holds, sorted.
std::vector<Difference> set_differences(const std::set<std::string>& redis,
                                        const std::set<std::string>& valkey) {
  std::vector<Difference> out;
  for (const std::string& n : redis)
    if (!valkey.count(n)) out.push_back({"- " + n});
  for (const std::string& n : valkey)
    if (!redis.count(n)) out.push_back({"+ " + n});
  std::sort(out.begin(), out.end());
  return out;
}

std::string lines_text(const Difference& d, const std::string& indent) {
  std::string out;
  for (const std::string& l : d) out += indent + l + "\n";
  return out;
}

// Compares what was seen with what the file lists for `name` (nothing listed: no difference
// expected): every difference seen must be listed, and every one listed seen, except one in
// another order only, which a run may or may not show. "" when they agree, else what to
// change, with the section as seen.
std::string against_listed(const std::string& name, const std::vector<Difference>& seen) {
  std::string error;
  auto listed = listed_differences(&error);
  if (!error.empty()) return error;
  auto it = listed.find(name);
  const std::vector<Difference> none;
  const std::vector<Difference>& want = it == listed.end() ? none : it->second.differences;
  std::string problems;
  for (const Difference& d : seen)
    if (std::find(want.begin(), want.end(), d) == want.end()) problems += lines_text(d, "  new:  ");
  for (const Difference& d : want)
    if (std::find(seen.begin(), seen.end(), d) == seen.end() && d.back() != kOtherOrder)
      problems += lines_text(d, "  gone: ");
  if (problems.empty()) return "";
  std::string out = "Valkey 8.0 differs from Redis 7.0 in " + name + " otherwise than " +
                    kDifferencesFile.string() +
                    (it == listed.end() ? "" : ":" + std::to_string(it->second.line_number)) +
                    " lists (" + std::to_string(want.size()) + " listed, " +
                    std::to_string(seen.size()) + " seen).\n" + problems;
  out += "The section as seen (explain a new difference in docs/fake-redis.md):\n";
  if (seen.empty()) return out + "  (none: remove the section)\n";
  out += "-- 8< --\n== " + name + " " + std::to_string(seen.size()) + "\n";
  for (const Difference& d : seen) out += lines_text(d, "");
  return out + "-- >8 --\n";
}

// ---------------------------------------------------------------------------------------

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, FakeRepliesMatchRedisServerAndValkeyDiffersAsListed) {
  fs::path script = fs::path(REDLAB_CONFORMANCE_DIR) / (GetParam() + ".redis");
  Server redis("redis-server"), valkey("valkey-server");
  ASSERT_TRUE(redis.up()) << "redis-server did not start (is it installed? script/bootstrap "
                             "installs it)";
  ASSERT_TRUE(valkey.up()) << "valkey-server did not start (is it installed? script/bootstrap "
                              "installs it from Debian's bookworm-backports)";
  std::string repl = std::string(REDLAB_BINARY) + " repl --echo --reply-timeout-ms 10000";
  // stdout only: replies go there; stderr (bad input, sanitizer notes) is shown on failure.
  auto err_file = [&](const char* who) {
    return fs::temp_directory_path() / ("redlab-conf-" + std::string(who) + "-" + GetParam() + "-" +
                                        std::to_string(getpid()) + ".err");
  };
  const fs::path err_real = err_file("real"), err_fake = err_file("fake"),
                 err_valkey = err_file("valkey");
  // One after the other: a script like script_busy times a long Lua loop against a 5 s
  // :recv, and three such loops at once on a small machine run past it.
  auto run = [&](const std::string& backend, const fs::path& err) {
    return run_capture(repl + " --backend " + backend + " < " + script.string() + " 2>" +
                       err.string());
  };
  const std::string fake = run("fake", err_fake);
  const std::string real = run("redis://127.0.0.1:" + std::to_string(redis.port()), err_real);
  const std::string on_valkey =
      run("valkey://127.0.0.1:" + std::to_string(valkey.port()), err_valkey);
  size_t commands = 0;
  for (const auto& l : lines_of(real))
    if (l.rfind("> ", 0) == 0) commands++;
  RecordProperty("commands", static_cast<int>(commands));
  EXPECT_GT(commands, 0u);
  EXPECT_EQ(real, fake) << first_difference(real, fake) << "\nstderr (real): " << slurp(err_real)
                        << "\nstderr (fake): " << slurp(err_fake);
  std::vector<Difference> seen = script_differences(real, on_valkey);
  RecordProperty("valkey_differences", static_cast<int>(seen.size()));
  std::string mismatch = against_listed(GetParam(), seen);
  EXPECT_TRUE(mismatch.empty()) << mismatch << "stderr (valkey): " << slurp(err_valkey);
  std::error_code ec;
  for (const fs::path& p : {err_real, err_fake, err_valkey}) fs::remove(p, ec);

  if (GetParam().rfind("cli_", 0) == 0) {
    std::string port = std::to_string(redis.port());
    run_capture("redis-cli -p " + port + " FLUSHALL > /dev/null 2>&1");
    std::string cli = run_capture("redis-cli --no-raw -p " + port + " < " + script.string());
    run_capture("redis-cli -p " + port + " FLUSHALL > /dev/null 2>&1");
    std::string ours =
        run_capture(std::string(REDLAB_BINARY) +
                    " repl --reply-timeout-ms 10000 --backend redis://127.0.0.1:" + port + " < " +
                    script.string());
    EXPECT_EQ(cli, ours) << "redlab repl prints differently from redis-cli --no-raw\n"
                         << first_difference(cli, ours);
  }
}

INSTANTIATE_TEST_SUITE_P(Scripts, Conformance, ::testing::ValuesIn(scripts()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// The file parses, names only scripts that exist (or INFO, COMMAND), and each section's count
// is what it lists.
TEST(ValkeyDifferences, FileIsWellFormedAndCountsAgree) {
  std::string error;
  auto listed = listed_differences(&error);
  ASSERT_EQ(error, "");
  ASSERT_FALSE(listed.empty());
  std::string version;
  listed_differences(&error, &version);
  EXPECT_FALSE(version.empty()) << "no \"" << kVersionLine << "X.Y.Z\" line";
  std::vector<std::string> names = scripts();
  for (const auto& [name, section] : listed) {
    SCOPED_TRACE(kDifferencesFile.string() + ":" + std::to_string(section.line_number));
    bool script = std::find(names.begin(), names.end(), name) != names.end();
    EXPECT_TRUE(script || name == "INFO" || name == "COMMAND")
        << name << " is no script of " << REDLAB_CONFORMANCE_DIR;
    EXPECT_EQ(section.differences.size(), section.count) << name;
    EXPECT_GT(section.count, 0u) << name << ": a section without differences";
  }
}

// "Section/field" of every field of INFO (default sections) on a fresh server.
std::set<std::string> info_fields(const Server& s) {
  std::set<std::string> out;
  std::string section;
  for (std::string line : lines_of(s.cli("INFO"))) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("# ", 0) == 0) section = line.substr(2);
    size_t colon = line.find(':');
    if (colon != std::string::npos && line[0] != '#')
      out.insert(section + "/" + line.substr(0, colon));
  }
  return out;
}

TEST(ValkeyDifferences, InfoFieldsAreTheListedOnes) {
  Server redis("redis-server"), valkey("valkey-server");
  ASSERT_TRUE(redis.up());
  ASSERT_TRUE(valkey.up()) << "valkey-server did not start (script/bootstrap installs it)";
  // The differences are those of one release (a patch release may revert one: Valkey 8.0's
  // NOSUB, docs/fake-redis.md): another version is to be listed anew.
  std::string error, version;
  listed_differences(&error, &version);
  ASSERT_EQ(error, "");
  std::string info = valkey.cli("INFO server");
  EXPECT_NE(info.find("valkey_version:" + version + "\r\n"), std::string::npos)
      << kDifferencesFile.string() << " lists the differences of valkey " << version
      << ", and this valkey-server says:\n"
      << info;
  std::set<std::string> a = info_fields(redis), b = info_fields(valkey);
  ASSERT_GT(a.size(), 100u);
  ASSERT_TRUE(b.count("Server/valkey_version"));
  std::string mismatch = against_listed("INFO", set_differences(a, b));
  EXPECT_TRUE(mismatch.empty()) << mismatch;
}

TEST(ValkeyDifferences, CommandsAreTheListedOnes) {
  Server redis("redis-server"), valkey("valkey-server");
  ASSERT_TRUE(redis.up());
  ASSERT_TRUE(valkey.up()) << "valkey-server did not start (script/bootstrap installs it)";
  // COMMAND LIST names every command and sub-command ("client|setinfo").
  auto names = [](const Server& s) {
    std::set<std::string> out;
    for (std::string l : lines_of(s.cli("COMMAND LIST"))) out.insert(l);
    return out;
  };
  std::set<std::string> a = names(redis), b = names(valkey);
  ASSERT_GT(a.size(), 300u);
  std::string mismatch = against_listed("COMMAND", set_differences(a, b));
  EXPECT_TRUE(mismatch.empty()) << mismatch;
}

}  // namespace
