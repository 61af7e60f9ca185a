// Files the CLI and the GUI read and write. Output is written whole or not at all (a
// temporary next to the target, then a rename), so a failed run, a full disk or a bad path
// never leaves a partial trace, screenshot or settings file behind, nor overwrites a good one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlab::app {

// Writes bytes to path atomically. Returns the error in words ("PATH: cannot write (...)"),
// or nullopt when written.
std::optional<std::string> write_file_atomically(const std::string& path, std::string_view bytes);

// RGBA rows, top to bottom, as a PNG file, atomically.
std::optional<std::string> write_png_atomically(const std::string& path, int width_px,
                                                int height_px, const std::vector<uint8_t>& rgba);

// Reads at most limit_bytes of a file into out. Returns the error in words ("PATH: no such
// file", "PATH: cannot open the file (...)"), or nullopt.
std::optional<std::string> read_file(const std::string& path, std::string* out,
                                     size_t limit_bytes = SIZE_MAX);

}  // namespace redlab::app
