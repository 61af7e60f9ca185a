#include "app/files.h"

#include <stb_image_write.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace redlab::app {

std::optional<std::string> write_file_atomically(const std::string& path, std::string_view bytes) {
  fs::path tmp = fs::path(path);
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return path + ": cannot write (" + std::strerror(errno) + ")";
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return path + ": write failed";
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return path + ": cannot write (" + ec.message() + ")";
  }
  return std::nullopt;
}

std::optional<std::string> write_png_atomically(const std::string& path, int width_px,
                                                int height_px, const std::vector<uint8_t>& rgba) {
  if (width_px <= 0 || height_px <= 0 || rgba.size() != size_t(width_px) * height_px * 4)
    return path + ": nothing to write (an empty image)";
  // Encoded in memory, then written like every other file.
  std::string png;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data), size_t(size));
  };
  if (!stbi_write_png_to_func(append, &png, width_px, height_px, 4, rgba.data(), width_px * 4))
    return path + ": cannot encode the PNG";
  return write_file_atomically(path, png);
}

std::optional<std::string> read_file(const std::string& path, std::string* out,
                                     size_t limit_bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return path + ": no such file";
  uintmax_t size = fs::file_size(path, ec);
  if (ec) return path + ": cannot open the file (" + ec.message() + ")";
  // A few million trace events are a few hundred MB; beyond this it is not a redlab file.
  constexpr uintmax_t kFileBytesMax = uintmax_t(2) * 1024 * 1024 * 1024;
  if (size > kFileBytesMax) return path + ": too big to open";
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot open the file (" + std::strerror(errno) + ")";
  out->resize(size_t(std::min<uintmax_t>(size, limit_bytes)));
  in.read(out->data(), std::streamsize(out->size()));
  out->resize(size_t(in.gcount()));
  return std::nullopt;
}

}  // namespace redlab::app
