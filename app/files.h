// Files the CLI and the GUI read and write: the one place where redlab touches a path a user
// gave it, so that every file is bounded on the way in and never clobbered on the way out.
//
// Reading (read_input): every kind of input has a documented size limit (README, "Limits"),
// checked from the file's size before a byte is read when the file is a regular one. Anything
// else (a FIFO, /dev/zero, a pipe from `<(cmd)`, a terminal) is read with the same limit and a
// wall-clock deadline, so neither an endless device nor a writer that never closes can hold
// redlab or its memory. A directory is said to be one.
//
// Writing (write_output): the bytes go THROUGH the path the user gave, which is not always
// the path itself. A symlink is followed and its target is replaced; a regular file is
// replaced atomically (a temporary next to it, then a rename), so a failed write never leaves
// half a trace nor destroys the previous one, and keeps the file's permission bits; where no
// temporary can be made next to it (a directory we may not write), or where the file has
// other hard links, it is rewritten in place instead. Anything that is not a regular file (a
// character device such as /dev/null or /dev/full, a FIFO, /dev/stdout and the other
// /dev/fd/N and /proc/self/fd/N names, "-") is written directly, streamed, with every error
// reported (ENOSPC from /dev/full, a reader that went away), and is never replaced by a file:
// nothing that existed is turned into a file of another kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlab::app {

// ---- Reading ------------------------------------------------------------------------------

enum class InputKind {
  scenario,           // a scenario .json file
  trace,              // a trace written by `run --trace` or the GUI
  scenario_or_trace,  // the GUI's "open": either, told apart by its content
  script,             // a --script NAME=FILE.lua
  settings,           // the GUI's settings.txt
};

constexpr size_t kMiB = size_t(1) << 20;
// The shipped scenarios are about 10 KB; a scenario is written by hand.
constexpr size_t kScenarioFileBytesMax = 4 * kMiB;
// The largest trace a run keeps: the engine stops a run whose trace's memory passes
// RunOptions::trace_bytes_max (256 MiB), and the JSON of such a trace is smaller than that.
constexpr size_t kTraceFileBytesMax = 256 * kMiB;
// A Lua script is an exercise answer or a scenario's script: a page, not a megabyte.
constexpr size_t kScriptFileBytesMax = 1 * kMiB;
constexpr size_t kSettingsFileBytesMax = 64 * 1024;
// How long a non-regular input (a FIFO, a pipe) may take to reach its end.
constexpr int kInputDeadlineMs = 2000;

struct InputLimit {
  size_t bytes_max = 0;
  const char* noun = "";  // "a scenario file": for "larger than the 4 MiB limit for ..."
};
InputLimit input_limit(InputKind kind);

// Reads the whole of path into out, within the limit of its kind. Returns the error in one
// line, starting with the path ("x.json: larger than the 4 MiB limit for a scenario file",
// "x: no such file", "/tmp: is a directory, not a scenario file", "x: no end of input after
// 2 s (a FIFO nobody closes?)"), or nullopt.
std::optional<std::string> read_input(const std::string& path, InputKind kind, std::string* out);

// The same with an explicit limit, noun and deadline (read_input's engine; tests use it).
std::optional<std::string> read_bounded(const std::string& path, size_t bytes_max,
                                        const std::string& noun, int deadline_ms, std::string* out);

// The check read_input makes, for bytes already in memory (the GUI reads a pipe once and
// then decides what it is): "PATH: larger than the ... limit for ...", or nullopt.
std::optional<std::string> input_size_error(const std::string& path, InputKind kind,
                                            size_t size_bytes);

// The old entry point: read_bounded with a generic noun and the default deadline.
std::optional<std::string> read_file(const std::string& path, std::string* out,
                                     size_t limit_bytes = kTraceFileBytesMax);

// True when path is a regular file (following symlinks): one that can be read twice.
bool is_regular_file(const std::string& path);

// ---- Writing ------------------------------------------------------------------------------

// Writes bytes through path as described above; "-" is standard output. Returns the error
// in one line ("PATH: cannot write (No space left on device)"), or nullopt when written.
std::optional<std::string> write_output(const std::string& path, std::string_view bytes);

// RGBA rows, top to bottom, as a PNG file, written like any other output.
std::optional<std::string> write_png(const std::string& path, int width_px, int height_px,
                                     const std::vector<uint8_t>& rgba);

// Old names of the two above (same behaviour: the write is atomic where the target is a
// regular file).
inline std::optional<std::string> write_file_atomically(const std::string& path,
                                                        std::string_view bytes) {
  return write_output(path, bytes);
}
inline std::optional<std::string> write_png_atomically(const std::string& path, int width_px,
                                                       int height_px,
                                                       const std::vector<uint8_t>& rgba) {
  return write_png(path, width_px, height_px, rgba);
}

// ---- Comparing paths ------------------------------------------------------------------------

// True when a and b name one file: the same device and inode when both exist (symlinks
// followed), else the same absolute path once the symlinks of its existing part are resolved
// and "." and ".." are gone. "-" names standard output and equals only "-".
bool same_file(const std::string& a, const std::string& b);

// True when writing to path can never overwrite what a file holds: "-", or a path that
// leads to a character device (/dev/null, /dev/stdout on a terminal). Two outputs, or an
// output and an input, may share such a path.
bool is_stream_path(const std::string& path);

}  // namespace redlab::app
