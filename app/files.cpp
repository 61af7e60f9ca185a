#include "app/files.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stb_image_write.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "sim/core/assert.h"

namespace fs = std::filesystem;

namespace redlab::app {

namespace {

// Bounds of the loops below.
constexpr int kSymlinkHopsMax = 40;                  // Linux's own MAXSYMLINKS
constexpr int kTemporaryNameAttemptsMax = 100;       // names tried for the temporary file
constexpr int kFifoReaderWaitMs = kInputDeadlineMs;  // an output FIFO nobody opened to read
constexpr int kFifoReaderPollMs = 10;
constexpr size_t kReadChunkBytes = 64 * 1024;
constexpr size_t kWriteChunkBytes = 1 << 20;
constexpr int kWritePollMs = 1000;  // one wait for a non-blocking output to drain

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string size_text(size_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " bytes";
}

std::string too_big(const std::string& path, size_t bytes_max, const std::string& noun) {
  return path + ": larger than the " + size_text(bytes_max) + " limit for " + noun;
}

// Closes a descriptor on every path out of a function.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  // Closes now, for the error close() can report (a deferred write error on NFS, ENOSPC).
  int close_now() {
    int rc = ::close(fd);
    fd = -1;
    return rc;
  }
};

// The descriptor a path names by itself: "-" and /dev/stdout are 1, /dev/stderr 2,
// /dev/fd/N and /proc/self/fd/N are N. Writing to the descriptor (not reopening the path)
// keeps its file offset, so `redlab run X --trace /dev/stdout > all.txt` appends the trace to
// what was printed instead of overwriting it from byte 0, and a pipe stays one pipe.
std::optional<int> descriptor_path(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  if (path == "/dev/stdin") return 0;
  const std::string own_fds = "/proc/" + std::to_string(::getpid()) + "/fd/";
  for (const std::string& prefix :
       {std::string("/dev/fd/"), std::string("/proc/self/fd/"), own_fds}) {
    if (path.rfind(prefix, 0) != 0) continue;
    std::string digits = path.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::stoi(digits);
  }
  return std::nullopt;
}

// SIGPIPE would end the process without a word when a FIFO's or a pipe's reader is gone;
// blocked around a write (it is sent to the writing thread), the write fails with EPIPE
// instead and is reported like any other error.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    if (!sigismember(&old_, SIGPIPE)) {
      // Consume the SIGPIPE our own write raised, so it is not delivered on unblocking.
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE)) {
        struct timespec zero {};
        while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_{}, old_{};
};

std::optional<std::string> write_all(int fd, std::string_view bytes, const std::string& shown) {
  SigpipeBlocked no_sigpipe;
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, std::min(left, kWriteChunkBytes));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        // A descriptor someone else made non-blocking (a terminal, a shared pipe).
        struct pollfd pfd {
          fd, POLLOUT, 0
        };
        ::poll(&pfd, 1, kWritePollMs);
        continue;
      }
      return shown + ": cannot write (" + errno_text(errno) + ")";
    }
    if (n == 0) return shown + ": cannot write (the device took no bytes)";
    p += n;
    left -= size_t(n);
  }
  return std::nullopt;
}

// Standard output and the other inherited descriptors: written as they are, never closed.
std::optional<std::string> write_descriptor(int fd, std::string_view bytes,
                                            const std::string& shown) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return shown + ": cannot write (" + errno_text(errno) + ")";
  if ((flags & O_ACCMODE) == O_RDONLY) return shown + ": cannot write (open for reading only)";
  // What was printed before must come out before the file's bytes.
  if (fd == 1 || fd == 2) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
  }
  return write_all(fd, bytes, shown);
}

// A FIFO, a character device, a socket: opened and written, never created nor truncated.
std::optional<std::string> write_stream(const std::string& target, const struct stat& st,
                                        std::string_view bytes, const std::string& shown) {
  int fd = -1;
  if (S_ISFIFO(st.st_mode)) {
    // A FIFO opened for writing blocks until someone opens it for reading: wait a bounded
    // time for that reader instead.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kFifoReaderWaitMs);
    while (true) {
      fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0 || errno != ENXIO || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(kFifoReaderPollMs));
    }
    if (fd < 0 && errno == ENXIO)
      return shown + ": cannot write (nobody opened the FIFO for reading within " +
             std::to_string(kFifoReaderWaitMs / 1000) + " s)";
    // The reader is there: from now on a full FIFO means wait, as for any pipe.
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  } else {
    fd = ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  }
  if (fd < 0) return shown + ": cannot write (" + errno_text(errno) + ")";
  Fd file(fd);
  if (auto error = write_all(fd, bytes, shown)) return error;
  if (file.close_now() != 0) return shown + ": cannot write (" + errno_text(errno) + ")";
  return std::nullopt;
}

// Rewrites an existing regular file where it is (its inode, links and owner stay). Not
// atomic: only where no temporary can be made next to it, or the file has several names.
std::optional<std::string> write_in_place(const std::string& target, std::string_view bytes,
                                          const std::string& shown) {
  int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return shown + ": cannot write (" + errno_text(errno) + ")";
  Fd file(fd);
  if (auto error = write_all(fd, bytes, shown)) return error;
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
    return shown + ": cannot write (" + errno_text(errno) + ")";
  if (file.close_now() != 0) return shown + ": cannot write (" + errno_text(errno) + ")";
  return std::nullopt;
}

std::atomic<uint64_t> temporary_counter{0};

// A new or existing regular file at target: a temporary in target's own directory, then a
// rename onto target. existing (if the file exists) gives the permission bits to keep.
std::optional<std::string> replace_regular(const std::string& target, const struct stat* existing,
                                           std::string_view bytes, const std::string& shown) {
  fs::path t(target);
  fs::path dir = t.parent_path();
  std::string base = t.filename().string();
  if (base.empty() || base == "." || base == "..")
    return shown + ": cannot write (" + errno_text(EISDIR) + ")";
  std::string tmp;
  int fd = -1;
  int open_errno = 0;
  for (int attempt = 0; attempt < kTemporaryNameAttemptsMax && fd < 0; attempt++) {
    std::string name = "." + base + ".redlab-" + std::to_string(::getpid()) + "-" +
                       std::to_string(temporary_counter.fetch_add(1));
    tmp = dir.empty() ? name : (dir / name).string();
    // A new file gets what open(0666) gives (less the umask); a replacement is the owner's
    // alone until it is complete, then gets the old file's mode (below).
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC,
                existing ? 0600 : 0666);
    open_errno = errno;
    if (fd < 0 && open_errno != EEXIST) break;
  }
  if (fd < 0) {
    // A file we may write in a directory we may not: rewritten in place.
    if (existing && (open_errno == EACCES || open_errno == EPERM))
      return write_in_place(target, bytes, shown);
    return shown + ": cannot write (" + errno_text(open_errno) + ")";
  }
  Fd file(fd);
  auto fail = [&](std::string message) -> std::optional<std::string> {
    if (file.fd >= 0) file.close_now();
    ::unlink(tmp.c_str());
    return message;
  };
  if (auto error = write_all(fd, bytes, shown)) return fail(*error);
  if (existing) {
    // The owner too, where we may (root rewriting someone's file); else the mode alone.
    if (existing->st_uid != ::geteuid() || existing->st_gid != ::getegid())
      (void)!::fchown(fd, existing->st_uid, existing->st_gid);
    if (::fchmod(fd, existing->st_mode & 07777) != 0)
      return fail(shown + ": cannot write (" + errno_text(errno) + ")");
  }
  // On disk before the rename: a crash leaves the old file or the new one, never half.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
    return fail(shown + ": cannot write (" + errno_text(errno) + ")");
  if (file.close_now() != 0) return fail(shown + ": cannot write (" + errno_text(errno) + ")");
  if (::rename(tmp.c_str(), target.c_str()) != 0)
    return fail(shown + ": cannot write (" + errno_text(errno) + ")");
  return std::nullopt;
}

// A symlink's target, relative to the directory that holds the link.
std::optional<std::string> read_link(const std::string& link) {
  std::string buf(PATH_MAX, '\0');
  ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
  if (n < 0 || size_t(n) >= buf.size()) return std::nullopt;
  buf.resize(size_t(n));
  if (buf.empty()) return std::nullopt;
  if (buf[0] == '/') return buf;
  fs::path dir = fs::path(link).parent_path();
  return dir.empty() ? buf : (dir / buf).string();
}

}  // namespace

// ---- Reading ------------------------------------------------------------------------------

InputLimit input_limit(InputKind kind) {
  switch (kind) {
    case InputKind::scenario:
      return {kScenarioFileBytesMax, "a scenario file"};
    case InputKind::trace:
      return {kTraceFileBytesMax, "a trace file"};
    case InputKind::scenario_or_trace:
      return {std::max(kScenarioFileBytesMax, kTraceFileBytesMax), "a trace file"};
    case InputKind::script:
      return {kScriptFileBytesMax, "a Lua script"};
    case InputKind::settings:
      return {kSettingsFileBytesMax, "a settings file"};
  }
  REDLAB_ASSERT(false && "every InputKind has a limit");
  return {};
}

std::optional<std::string> read_input(const std::string& path, InputKind kind, std::string* out) {
  InputLimit limit = input_limit(kind);
  return read_bounded(path, limit.bytes_max, limit.noun, kInputDeadlineMs, out);
}

std::optional<std::string> input_size_error(const std::string& path, InputKind kind,
                                            size_t size_bytes) {
  InputLimit limit = input_limit(kind);
  if (size_bytes > limit.bytes_max) return too_big(path, limit.bytes_max, limit.noun);
  return std::nullopt;
}

std::optional<std::string> read_bounded(const std::string& path, size_t bytes_max,
                                        const std::string& noun, int deadline_ms,
                                        std::string* out) {
  REDLAB_ASSERT(out != nullptr);
  REDLAB_ASSERT(deadline_ms >= 0);
  out->clear();
  if (path.empty()) return std::string("(an empty path): no such file");
  // Non-blocking: opening a FIFO for reading must not wait for a writer (the deadline does).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return path + ": no such file";
    return path + ": cannot open the file (" + errno_text(errno) + ")";
  }
  Fd file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return path + ": cannot open the file (" + errno_text(errno) + ")";
  if (S_ISDIR(st.st_mode)) return path + ": is a directory, not " + noun;
  const bool regular = S_ISREG(st.st_mode);
  if (regular && st.st_size > 0 && uintmax_t(st.st_size) > bytes_max)
    return too_big(path, bytes_max, noun);
  // Grown as the bytes come (never past bytes_max): /proc files say 0, pipes say nothing.
  out->reserve(std::min<size_t>(regular && st.st_size > 0 ? size_t(st.st_size) : kReadChunkBytes,
                                bytes_max));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  std::string chunk(kReadChunkBytes, '\0');
  while (true) {
    if (!regular) {
      // poll() on a FIFO nobody has opened for writing yet reports nothing (no POLLHUP
      // before a first writer came and went), so waiting here also waits for the writer.
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return path + ": no end of input after " +
               (deadline_ms % 1000 == 0 ? std::to_string(deadline_ms / 1000) + " s"
                                        : std::to_string(deadline_ms) + " ms") +
               (S_ISFIFO(st.st_mode) ? " (a FIFO nobody closes?)" : " (a device that never ends?)");
      struct pollfd pfd {
        fd, POLLIN, 0
      };
      int ready = ::poll(&pfd, 1, int(left.count()));
      if (ready < 0 && errno != EINTR)
        return path + ": cannot read the file (" + errno_text(errno) + ")";
      if (ready <= 0) continue;
    }
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      if (errno == EISDIR) return path + ": is a directory, not " + noun;
      return path + ": cannot read the file (" + errno_text(errno) + ")";
    }
    if (n == 0) break;
    if (out->size() + size_t(n) > bytes_max) {
      out->clear();
      out->shrink_to_fit();
      return too_big(path, bytes_max, noun);
    }
    out->append(chunk.data(), size_t(n));
  }
  return std::nullopt;
}

std::optional<std::string> read_file(const std::string& path, std::string* out,
                                     size_t limit_bytes) {
  return read_bounded(path, limit_bytes, "an input file", kInputDeadlineMs, out);
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// ---- Writing ------------------------------------------------------------------------------

std::optional<std::string> write_output(const std::string& path, std::string_view bytes) {
  if (path.empty()) return std::string("(an empty path): cannot write (no file name)");
  if (path == "-") return write_descriptor(1, bytes, "standard output");
  // Followed one link at a time, so that a link into /dev/fd or to a device is seen as such
  // and a link to a regular file is replaced in the directory of that file.
  std::string current = path;
  for (int hop = 0; hop <= kSymlinkHopsMax; hop++) {
    if (auto fd = descriptor_path(current)) return write_descriptor(*fd, bytes, path);
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      // Nothing there yet: a new file (also the target of a dangling link).
      if (errno == ENOENT) return replace_regular(current, nullptr, bytes, path);
      return path + ": cannot write (" + errno_text(errno) + ")";
    }
    if (S_ISLNK(st.st_mode)) {
      // /proc's other links (another process' descriptors) are not paths: the kernel follows
      // them on open.
      if (current.rfind("/proc/", 0) == 0 && ::stat(current.c_str(), &st) == 0 &&
          !S_ISDIR(st.st_mode))
        return S_ISREG(st.st_mode) ? write_in_place(current, bytes, path)
                                   : write_stream(current, st, bytes, path);
      auto next = read_link(current);
      if (!next) return path + ": cannot write (" + errno_text(errno ? errno : EINVAL) + ")";
      current = *next;
      continue;
    }
    if (S_ISDIR(st.st_mode)) return path + ": cannot write (" + errno_text(EISDIR) + ")";
    if (S_ISREG(st.st_mode)) {
      // Several names for one file: a rename would split them; rewrite the shared inode.
      if (st.st_nlink > 1) return write_in_place(current, bytes, path);
      return replace_regular(current, &st, bytes, path);
    }
    return write_stream(current, st, bytes, path);
  }
  return path + ": cannot write (" + errno_text(ELOOP) + ")";
}

std::optional<std::string> write_png(const std::string& path, int width_px, int height_px,
                                     const std::vector<uint8_t>& rgba) {
  if (width_px <= 0 || height_px <= 0 || rgba.size() != size_t(width_px) * height_px * 4)
    return path + ": nothing to write (an empty image)";
  // Encoded in memory, then written like every other file.
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
  };
  if (!stbi_write_png_to_func(append, &png, width_px, height_px, 4, rgba.data(), width_px * 4))
    return path + ": cannot encode the PNG";
  return write_output(path, png);
}

// ---- Comparing paths ------------------------------------------------------------------------

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  struct stat sa {
  }, sb{};
  bool a_exists = ::stat(a.c_str(), &sa) == 0;
  bool b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (a_exists != b_exists) return false;
  std::error_code ec_a, ec_b;
  fs::path na = fs::weakly_canonical(fs::absolute(a, ec_a), ec_a);
  fs::path nb = fs::weakly_canonical(fs::absolute(b, ec_b), ec_b);
  if (ec_a || ec_b) return fs::path(a).lexically_normal() == fs::path(b).lexically_normal();
  return na.lexically_normal() == nb.lexically_normal();
}

bool is_stream_path(const std::string& path) {
  if (descriptor_path(path)) return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace redlab::app
