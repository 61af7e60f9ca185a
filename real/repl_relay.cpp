#include "real/repl_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "sim/scenario/backend.h"

namespace redlab::real {
namespace {

int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A loopback dial to the primary; -1 when it does not listen (down, restarting).
int dial_loopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  set_nonblocking(fd);
  return fd;
}

// Reads what is there; false on EOF or an error.
bool read_some(int fd, std::string& into) {
  char buf[16 * 1024];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  }
}

// Writes what it can of out; false on an error.
bool write_some(int fd, std::string& out) {
  while (!out.empty()) {
    ssize_t n = send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      out.erase(0, static_cast<size_t>(n));
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
  return true;
}

}  // namespace

ReplRelay::ReplRelay() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 4) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) close(listen_fd_);
    throw scenario::BackendError("the replication relay cannot listen on loopback: " + why);
  }
  listen_port_ = ntohs(addr.sin_port);
  set_nonblocking(listen_fd_);
  thread_ = std::thread([this] { loop(); });
}

ReplRelay::~ReplRelay() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake();
  thread_.join();
  close_pair();
  close(listen_fd_);
  close(wake_fds_[0]);
  close(wake_fds_[1]);
}

void ReplRelay::wake() {
  char b = 1;
  (void)!write(wake_fds_[1], &b, 1);
}

void ReplRelay::set_primary_port(int port) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    primary_port_ = port;
  }
  wake();
}

void ReplRelay::set_lag_us(int64_t lag_us) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    lag_us_ = lag_us;
  }
  wake();
}

void ReplRelay::set_partition(bool on) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    partitioned_ = on;
  }
  wake();
}

void ReplRelay::cut() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cut_ = true;
    close_pair();
  }
  wake();
}

void ReplRelay::close_pair() {
  if (replica_fd_ >= 0) close(replica_fd_);
  if (primary_fd_ >= 0) close(primary_fd_);
  replica_fd_ = primary_fd_ = -1;
  draining_ = false;
  to_replica_.clear();
  to_primary_.clear();
}

void ReplRelay::loop() {
  // Bytes released (due, not partitioned) and not yet written, per direction.
  std::string out_replica, out_primary;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const int64_t now = steady_us();
    if (replica_fd_ < 0) out_replica.clear(), out_primary.clear();
    // A replica waiting for its primary: dial it once its port is known.
    if (replica_fd_ >= 0 && primary_fd_ < 0 && primary_port_ > 0 && !draining_) {
      primary_fd_ = dial_loopback(primary_port_);
      if (primary_fd_ < 0) close_pair();  // the replica retries (replicationCron, every second)
    }
    int64_t next_due = -1;
    if (!partitioned_) {
      // The stream waits its lag; the acks go back at once.
      while (!to_replica_.empty() && to_replica_.front().due_us <= now) {
        out_replica += to_replica_.front().bytes;
        to_replica_.pop_front();
      }
      if (!to_replica_.empty()) next_due = to_replica_.front().due_us;
      for (Chunk& c : to_primary_) out_primary += c.bytes;
      to_primary_.clear();
    }
    if (replica_fd_ >= 0 && !write_some(replica_fd_, out_replica)) close_pair();
    if (primary_fd_ >= 0 && !write_some(primary_fd_, out_primary)) close_pair();
    // The primary is gone and the replica has had all it sent: now the replica sees the close.
    if (draining_ && to_replica_.empty() && out_replica.empty()) close_pair();

    std::vector<pollfd> fds;
    fds.push_back({wake_fds_[0], POLLIN, 0});
    if (!cut_) fds.push_back({listen_fd_, POLLIN, 0});
    const int replica_fd = replica_fd_, primary_fd = primary_fd_;
    if (replica_fd >= 0)
      fds.push_back(
          {replica_fd, static_cast<short>(POLLIN | (out_replica.empty() ? 0 : POLLOUT)), 0});
    if (primary_fd >= 0)
      fds.push_back(
          {primary_fd, static_cast<short>(POLLIN | (out_primary.empty() ? 0 : POLLOUT)), 0});
    int timeout_ms = -1;
    if (next_due >= 0)
      timeout_ms = static_cast<int>(std::max<int64_t>(0, next_due - now) / 1000 + 1);
    if (replica_fd >= 0 && primary_fd < 0 && !draining_)
      timeout_ms = 20;  // waiting for the primary's port
    lock.unlock();
    poll(fds.data(), fds.size(), timeout_ms);
    lock.lock();
    if (stop_) break;
    char drain[64];
    while (read(wake_fds_[0], drain, sizeof drain) > 0) {
    }
    for (const pollfd& p : fds) {
      if (!p.revents) continue;
      if (p.fd == listen_fd_ && !cut_) {
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          // A replica (re)connecting starts a new session: the old one's bytes mean nothing.
          close_pair();
          out_replica.clear();
          out_primary.clear();
          set_nonblocking(fd);
          replica_fd_ = fd;
        }
      } else if (p.fd == replica_fd && replica_fd == replica_fd_) {
        std::string got;
        bool open = read_some(replica_fd, got);
        if (!got.empty()) to_primary_.push_back({steady_us(), std::move(got)});
        if (!open || (p.revents & (POLLERR | POLLHUP))) close_pair();
      } else if (p.fd == primary_fd && primary_fd == primary_fd_) {
        std::string got;
        bool open = read_some(primary_fd, got);
        if (!got.empty()) to_replica_.push_back({steady_us() + lag_us_, std::move(got)});
        if (!open || (p.revents & (POLLERR | POLLHUP))) {
          // What the primary sent before it closed (or its process died: the kernel still
          // sends what it had written) is on its way: it reaches the replica after its lag,
          // or when a partition heals, and then the link closes. A cut drops it instead.
          close(primary_fd_);
          primary_fd_ = -1;
          to_primary_.clear();
          out_primary.clear();
          draining_ = true;
        }
      }
    }
  }
}

}  // namespace redlab::real
