// Differential conformance: every script in tests/conformance/ is run through `redlab repl`
// against a private redis-server (started here on a free loopback port, one per script, so
// no state leaks between scripts) and against the fake; the printed bytes must be identical.
//
// A script named cli_*.redis (plain commands only: no comments, no meta lines) is also run through
// the real `redis-cli
// --no-raw` against the real server and must print what `redlab repl` prints: that checks our
// reply formatting against the reference, not only the fake against the server.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
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

// A private redis-server: --save '' --appendonly no, debug commands on, a temp dir.
class RedisServer {
 public:
  RedisServer() {
    // Another test may take the free port between our probe and the server's bind: retry.
    constexpr int kAttemptsMax = 5;
    for (int attempt = 0; attempt < kAttemptsMax && !start(); attempt++) stop();
  }
  ~RedisServer() { stop(); }
  bool up() const { return pid_ > 0 && port_open(port_); }
  int port() const { return port_; }

 private:
  bool start() {
    port_ = free_port();
    dir_ = fs::temp_directory_path() /
           ("redlab-conf-" + std::to_string(getpid()) + "-" + std::to_string(port_));
    fs::create_directories(dir_);
    pid_ = fork();
    if (pid_ == 0) {
      std::string port = std::to_string(port_);
      execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--enable-debug-command", "yes", "--dir",
             dir_.c_str(), "--logfile", (dir_ / "redis.log").c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 300; i++) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;  // exited: port taken, or redis-server missing
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

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, FakeRepliesMatchRedisServer) {
  fs::path script = fs::path(REDLAB_CONFORMANCE_DIR) / (GetParam() + ".redis");
  RedisServer server;
  ASSERT_TRUE(server.up()) << "redis-server did not start (is it installed? script/bootstrap "
                              "installs it)";
  std::string repl = std::string(REDLAB_BINARY) + " repl --echo --reply-timeout-ms 10000";
  // stdout only: replies go there; stderr (bad input, sanitizer notes) is shown on failure.
  fs::path err_real = fs::temp_directory_path() / ("redlab-conf-real-" + GetParam() + ".err");
  fs::path err_fake = fs::temp_directory_path() / ("redlab-conf-fake-" + GetParam() + ".err");
  std::string real =
      run_capture(repl + " --backend redis://127.0.0.1:" + std::to_string(server.port()) + " < " +
                  script.string() + " 2>" + err_real.string());
  std::string fake =
      run_capture(repl + " --backend fake < " + script.string() + " 2>" + err_fake.string());
  auto slurp = [](const fs::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  size_t commands = 0;
  for (const auto& l : lines_of(real))
    if (l.rfind("> ", 0) == 0) commands++;
  RecordProperty("commands", static_cast<int>(commands));
  EXPECT_GT(commands, 0u);
  EXPECT_EQ(real, fake) << first_difference(real, fake) << "\nstderr (real): " << slurp(err_real)
                        << "\nstderr (fake): " << slurp(err_fake);
  std::error_code ec;
  fs::remove(err_real, ec);
  fs::remove(err_fake, ec);

  if (GetParam().rfind("cli_", 0) == 0) {
    std::string port = std::to_string(server.port());
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

}  // namespace
