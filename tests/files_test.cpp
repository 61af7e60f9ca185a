// app/files: every input bounded (size limit, a deadline for what is not a regular file) and
// every output written through the path the user gave (a symlink's target replaced in its own
// directory, devices, FIFOs and descriptors streamed, nothing replaced by a file of another
// kind). Run in-process on real files in a temporary directory; the devices are the system's
// own /dev/null, /dev/full and /dev/zero, which must still be character devices afterwards
// (this suite runs as root in CI, where a bug would replace them).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "app/files.h"

namespace fs = std::filesystem;
using redlab::app::InputKind;

namespace {

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "redlab-files-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    for (auto& e : fs::recursive_directory_iterator(path_, ec))
      fs::permissions(e.path(), fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

bool is_char_device(const char* path) {
  struct stat st {};
  return ::lstat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- reading --------------------------------------------------------------------------------

TEST(FilesRead, RegularFileWhole) {
  TempDir dir;
  std::string path = dir / "s.json";
  spit(path, "{\"id\": \"x\"}\n");
  std::string text;
  EXPECT_EQ(redlab::app::read_input(path, InputKind::scenario, &text), std::nullopt);
  EXPECT_EQ(text, "{\"id\": \"x\"}\n");
}

TEST(FilesRead, MissingAndDirectoryAreOneLine) {
  TempDir dir;
  std::string text;
  EXPECT_EQ(redlab::app::read_input(dir / "nope.json", InputKind::scenario, &text),
            dir / "nope.json" + ": no such file");
  EXPECT_EQ(redlab::app::read_input(dir.path().string(), InputKind::scenario, &text),
            dir.path().string() + ": is a directory, not a scenario file");
  EXPECT_EQ(redlab::app::read_input(dir.path().string(), InputKind::script, &text),
            dir.path().string() + ": is a directory, not a Lua script");
}

TEST(FilesRead, EveryKindHasItsLimit) {
  EXPECT_EQ(redlab::app::input_limit(InputKind::scenario).bytes_max, 4u << 20);
  EXPECT_EQ(redlab::app::input_limit(InputKind::script).bytes_max, 1u << 20);
  EXPECT_EQ(redlab::app::input_limit(InputKind::trace).bytes_max, 256u << 20);
  EXPECT_GE(redlab::app::input_limit(InputKind::scenario_or_trace).bytes_max,
            redlab::app::input_limit(InputKind::trace).bytes_max);
  EXPECT_EQ(redlab::app::input_size_error("x.json", InputKind::scenario, (4u << 20) + 1),
            "x.json: larger than the 4 MiB limit for a scenario file");
  EXPECT_EQ(redlab::app::input_size_error("x.json", InputKind::scenario, 4u << 20), std::nullopt);
}

TEST(FilesRead, TooBigRegularFileIsRefusedFromItsSize) {
  TempDir dir;
  std::string path = dir / "big.json";
  // Sparse: 5 GiB that take no disk; refused from fstat alone, without reading.
  {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t(5) << 30), 0);
    ::close(fd);
  }
  std::string text;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(redlab::app::read_input(path, InputKind::trace, &text),
            path + ": larger than the 256 MiB limit for a trace file");
  EXPECT_LT(seconds_since(t0), 0.5);
  EXPECT_TRUE(text.empty());
  // At the limit exactly: read.
  spit(path, std::string(1000, 'x'));
  EXPECT_EQ(redlab::app::read_bounded(path, 1000, "a thing", 2000, &text), std::nullopt);
  EXPECT_EQ(text.size(), 1000u);
  EXPECT_EQ(redlab::app::read_bounded(path, 999, "a thing", 2000, &text),
            path + ": larger than the 999 bytes limit for a thing");
}

TEST(FilesRead, EndlessDeviceStopsAtTheLimit) {
  ASSERT_TRUE(is_char_device("/dev/zero"));
  std::string text;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(redlab::app::read_input("/dev/zero", InputKind::scenario, &text),
            "/dev/zero: larger than the 4 MiB limit for a scenario file");
  EXPECT_LT(seconds_since(t0), 2.0);
  EXPECT_TRUE(text.empty());
  EXPECT_TRUE(is_char_device("/dev/zero"));
}

TEST(FilesRead, FifoIsReadToItsEnd) {
  TempDir dir;
  std::string fifo = dir / "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The writer comes late (the reader waits for it) and writes in two pieces.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "hello ", 6), 6);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(::write(fd, "world", 5), 5);
    ::close(fd);
  });
  std::string text;
  EXPECT_EQ(redlab::app::read_input(fifo, InputKind::script, &text), std::nullopt);
  writer.join();
  EXPECT_EQ(text, "hello world");
}

TEST(FilesRead, FifoNobodyClosesEndsAtTheDeadline) {
  TempDir dir;
  std::string fifo = dir / "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string text;
  // Nobody ever opens it for writing.
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(redlab::app::read_bounded(fifo, 1000, "a thing", 300, &text),
            fifo + ": no end of input after 300 ms (a FIFO nobody closes?)");
  double waited_s = seconds_since(t0);
  EXPECT_GE(waited_s, 0.29);
  EXPECT_LT(waited_s, 1.5);
  // A writer that holds it open and writes a little, then nothing.
  int writer = ::open(fifo.c_str(), O_RDWR);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(::write(writer, "{", 1), 1);
  t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(redlab::app::read_input(fifo, InputKind::scenario, &text),
            fifo + ": no end of input after 2 s (a FIFO nobody closes?)");
  waited_s = seconds_since(t0);
  EXPECT_GE(waited_s, 1.9);
  EXPECT_LT(waited_s, 4.0);
  ::close(writer);
}

TEST(FilesRead, PipeDescriptorIsRead) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "abc", 3), 3);
  ::close(fds[1]);
  std::string text;
  std::string path = "/dev/fd/" + std::to_string(fds[0]);
  EXPECT_EQ(redlab::app::read_input(path, InputKind::scenario, &text), std::nullopt);
  EXPECT_EQ(text, "abc");
  ::close(fds[0]);
}

// ---- writing --------------------------------------------------------------------------------

TEST(FilesWrite, NewFileGetsTheUmaskMode) {
  TempDir dir;
  std::string path = dir / "t.json";
  mode_t mask = ::umask(022);
  EXPECT_EQ(redlab::app::write_output(path, "new"), std::nullopt);
  ::umask(mask);
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(mode_of(path), 0644u);
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"t.json"}));
}

TEST(FilesWrite, ExistingFileIsReplacedAtomicallyAndKeepsItsMode) {
  TempDir dir;
  std::string path = dir / "t.json";
  spit(path, "old content, longer than the new one");
  ::chmod(path.c_str(), 0640);
  ino_t before = inode_of(path);
  EXPECT_EQ(redlab::app::write_output(path, "new"), std::nullopt);
  EXPECT_EQ(slurp(path), "new");
  EXPECT_EQ(mode_of(path), 0640u);
  EXPECT_NE(inode_of(path), before) << "a temporary renamed onto it, not a rewrite in place";
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"t.json"}));
}

TEST(FilesWrite, SymlinkTargetIsReplacedInItsOwnDirectory) {
  TempDir dir;
  fs::create_directory(dir.path() / "data");
  fs::create_directory(dir.path() / "links");
  std::string target = dir / "data/trace.json";
  spit(target, "old");
  ::chmod(target.c_str(), 0600);
  // A relative link, resolved from the directory that holds it; and a link to that link.
  fs::create_symlink("../data/trace.json", dir.path() / "links/t.json");
  fs::create_symlink("links/t.json", dir.path() / "chain.json");
  EXPECT_EQ(redlab::app::write_output(dir / "chain.json", "new"), std::nullopt);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "chain.json"));
  EXPECT_TRUE(fs::is_symlink(dir.path() / "links/t.json"));
  EXPECT_EQ(fs::read_symlink(dir.path() / "links/t.json"), "../data/trace.json");
  EXPECT_EQ(slurp(target), "new");
  EXPECT_EQ(mode_of(target), 0600u);
  EXPECT_EQ(listing(dir.path() / "data"), (std::vector<std::string>{"trace.json"}));
  EXPECT_EQ(listing(dir.path() / "links"), (std::vector<std::string>{"t.json"}));
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"chain.json", "data", "links"}));
}

TEST(FilesWrite, DanglingSymlinkCreatesItsTarget) {
  TempDir dir;
  fs::create_symlink("made.json", dir.path() / "link.json");
  EXPECT_EQ(redlab::app::write_output(dir / "link.json", "new"), std::nullopt);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.json"));
  EXPECT_EQ(slurp(dir.path() / "made.json"), "new");
}

TEST(FilesWrite, SymlinkLoopIsAnError) {
  TempDir dir;
  fs::create_symlink("b", dir.path() / "a");
  fs::create_symlink("a", dir.path() / "b");
  auto error = redlab::app::write_output(dir / "a", "x");
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("cannot write (Too many levels of symbolic links)"), std::string::npos)
      << *error;
}

TEST(FilesWrite, HardLinkedFileIsRewrittenInPlace) {
  TempDir dir;
  std::string a = dir / "a.json", b = dir / "b.json";
  spit(a, "old");
  fs::create_hard_link(a, b);
  EXPECT_EQ(redlab::app::write_output(a, "new"), std::nullopt);
  EXPECT_EQ(slurp(b), "new") << "both names still name one file";
  EXPECT_EQ(inode_of(a), inode_of(b));
}

TEST(FilesWrite, WritableFileInReadOnlyDirectoryIsRewrittenInPlace) {
  TempDir dir;
  fs::create_directory(dir.path() / "ro");
  std::string path = dir / "ro/t.json";
  spit(path, "old");
  fs::permissions(dir.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  if (::access((dir / "ro").c_str(), W_OK) == 0) GTEST_SKIP() << "root ignores the mode bits";
  EXPECT_EQ(redlab::app::write_output(path, "new"), std::nullopt);
  EXPECT_EQ(slurp(path), "new");
}

TEST(FilesWrite, DirectoryIsRefusedAndUntouched) {
  TempDir dir;
  fs::create_directory(dir.path() / "out");
  EXPECT_EQ(redlab::app::write_output(dir / "out", "x"),
            dir / "out" + ": cannot write (Is a directory)");
  EXPECT_TRUE(fs::is_directory(dir.path() / "out"));
  EXPECT_TRUE(listing(dir.path() / "out").empty());
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"out"}));
  // Through a symlink to it too.
  fs::create_directory_symlink("out", dir.path() / "link");
  EXPECT_EQ(redlab::app::write_output(dir / "link", "x"),
            dir / "link" + ": cannot write (Is a directory)");
  EXPECT_TRUE(listing(dir.path() / "out").empty());
}

TEST(FilesWrite, MissingDirectoryIsAnError) {
  TempDir dir;
  EXPECT_EQ(redlab::app::write_output(dir / "missing/t.json", "x"),
            dir / "missing/t.json" + ": cannot write (No such file or directory)");
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{});
}

TEST(FilesWrite, DevNullIsWrittenAndStaysADevice) {
  ASSERT_TRUE(is_char_device("/dev/null"));
  EXPECT_EQ(redlab::app::write_output("/dev/null", std::string(3 << 20, 'x')), std::nullopt);
  EXPECT_TRUE(is_char_device("/dev/null"));
}

TEST(FilesWrite, DevFullIsAnErrorAndStaysADevice) {
  ASSERT_TRUE(is_char_device("/dev/full"));
  EXPECT_EQ(redlab::app::write_output("/dev/full", "x"),
            "/dev/full: cannot write (No space left on device)");
  EXPECT_TRUE(is_char_device("/dev/full"));
  // Through a symlink: the link stays a link to the device.
  TempDir dir;
  fs::create_symlink("/dev/full", dir.path() / "full");
  EXPECT_EQ(redlab::app::write_output(dir / "full", "x"),
            dir / "full" + ": cannot write (No space left on device)");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "full"));
  EXPECT_TRUE(is_char_device("/dev/full"));
}

TEST(FilesWrite, FifoIsStreamedToItsReader) {
  TempDir dir;
  std::string fifo = dir / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string bytes(1 << 20, 'z');  // more than a pipe holds: written as it is read
  std::string got;
  std::thread reader([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the writer waits for it
    got = slurp(fifo);
  });
  EXPECT_EQ(redlab::app::write_output(fifo, bytes), std::nullopt);
  reader.join();
  EXPECT_EQ(got.size(), bytes.size());
  EXPECT_EQ(got, bytes);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "still a FIFO";
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"out.fifo"}));
}

TEST(FilesWrite, FifoWithoutReaderIsAnErrorAfterTheWait) {
  TempDir dir;
  std::string fifo = dir / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(redlab::app::write_output(fifo, "x"),
            fifo + ": cannot write (nobody opened the FIFO for reading within 2 s)");
  EXPECT_LT(seconds_since(t0), 4.0);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(FilesWrite, ReaderGoneIsAnErrorNotASignal) {
  TempDir dir;
  std::string fifo = dir / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread reader([&] {
    int fd = ::open(fifo.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    char c;
    ASSERT_EQ(::read(fd, &c, 1), 1);
    ::close(fd);  // gone after one byte
  });
  auto error = redlab::app::write_output(fifo, std::string(8 << 20, 'z'));
  reader.join();
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, fifo + ": cannot write (Broken pipe)");
  // The SIGPIPE that write raised was consumed: none is pending for this thread.
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
}

// Standard output and /dev/fd/N: the descriptor itself is written (its offset kept), never
// reopened nor replaced.
TEST(FilesWrite, DashAndDescriptorsAreWrittenAsTheyAre) {
  TempDir dir;
  std::string out = dir / "stdout.txt";
  int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  int saved = ::dup(1);
  ASSERT_GE(saved, 0);
  std::fflush(stdout);
  ::dup2(fd, 1);
  ASSERT_EQ(::write(1, "report\n", 7), 7);
  auto e1 = redlab::app::write_output("-", "dash\n");
  auto e2 = redlab::app::write_output("/dev/stdout", "devstdout\n");
  auto e3 = redlab::app::write_output("/dev/fd/1", "devfd\n");
  auto e4 = redlab::app::write_output("/proc/self/fd/1", "procfd\n");
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  EXPECT_EQ(e1, std::nullopt);
  EXPECT_EQ(e2, std::nullopt);
  EXPECT_EQ(e3, std::nullopt);
  EXPECT_EQ(e4, std::nullopt);
  EXPECT_EQ(slurp(out), "report\ndash\ndevstdout\ndevfd\nprocfd\n");
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_nlink, 1u) << "the file behind stdout is the one the shell opened";
  ::close(fd);
  // A pipe's descriptor by its /dev/fd name.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(redlab::app::write_output("/dev/fd/" + std::to_string(fds[1]), "piped"), std::nullopt);
  ::close(fds[1]);
  char buf[16] = {};
  EXPECT_EQ(::read(fds[0], buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf), "piped");
  ::close(fds[0]);
  // A descriptor open for reading only.
  auto error = redlab::app::write_output("/dev/fd/" + std::to_string(fds[0]), "x");
  EXPECT_TRUE(error.has_value());
}

TEST(FilesWrite, PngIsWrittenThroughTheSamePath) {
  TempDir dir;
  std::vector<uint8_t> rgba(4 * 2 * 2, 255);
  EXPECT_EQ(redlab::app::write_png(dir / "a.png", 2, 2, rgba), std::nullopt);
  EXPECT_EQ(slurp(dir.path() / "a.png").substr(1, 3), "PNG");
  EXPECT_TRUE(redlab::app::write_png(dir / "b.png", 0, 0, {}).has_value());
  EXPECT_EQ(redlab::app::write_png("/dev/full", 2, 2, rgba),
            "/dev/full: cannot write (No space left on device)");
  EXPECT_TRUE(is_char_device("/dev/full"));
}

// ---- comparing paths --------------------------------------------------------------------------

TEST(FilesSame, ByInodeWhenBothExistElseByNormalisedPath) {
  TempDir dir;
  std::string a = dir / "a.json";
  spit(a, "x");
  fs::create_directory(dir.path() / "sub");
  fs::create_symlink("a.json", dir.path() / "link.json");
  EXPECT_TRUE(redlab::app::same_file(a, a));
  EXPECT_TRUE(redlab::app::same_file(a, dir / "sub/../a.json"));
  EXPECT_TRUE(redlab::app::same_file(a, dir / "link.json"));
  EXPECT_TRUE(redlab::app::same_file(dir / "new.json", dir / "sub/../new.json"));
  EXPECT_TRUE(redlab::app::same_file(dir / "new.json", dir / "./new.json"));
  EXPECT_FALSE(redlab::app::same_file(a, dir / "new.json"));
  EXPECT_FALSE(redlab::app::same_file(dir / "new.json", dir / "other.json"));
  EXPECT_TRUE(redlab::app::same_file("-", "-"));
  EXPECT_FALSE(redlab::app::same_file("-", a));
  // A relative path against an absolute one.
  std::string cwd = fs::current_path().string();
  fs::current_path(dir.path());
  EXPECT_TRUE(redlab::app::same_file("a.json", a));
  EXPECT_TRUE(redlab::app::same_file("new.json", dir / "new.json"));
  fs::current_path(cwd);
}

TEST(FilesSame, StreamPaths) {
  TempDir dir;
  EXPECT_TRUE(redlab::app::is_stream_path("-"));
  EXPECT_TRUE(redlab::app::is_stream_path("/dev/null"));
  EXPECT_TRUE(redlab::app::is_stream_path("/dev/stdout"));
  EXPECT_FALSE(redlab::app::is_stream_path(dir / "x.json"));
  spit(dir / "x.json", "x");
  EXPECT_FALSE(redlab::app::is_stream_path(dir / "x.json"));
}

}  // namespace
