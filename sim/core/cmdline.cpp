#include "sim/core/cmdline.h"

#include "sim/core/reply.h"

namespace redlab {
namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

std::optional<std::vector<std::string>> split_args(std::string_view input) {
  // The C original works on a NUL-terminated string.
  std::string_view line = input.substr(0, input.find('\0'));
  std::vector<std::string> args;
  size_t p = 0;
  auto at = [&](size_t i) -> char { return i < line.size() ? line[i] : '\0'; };
  while (true) {
    while (p < line.size() && is_blank(line[p])) p++;
    if (p >= line.size()) return args;
    std::string current;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      char c = at(p);
      if (in_double) {
        if (c == '\\' && at(p + 1) == 'x' && is_hex(at(p + 2)) && is_hex(at(p + 3))) {
          current += static_cast<char>(hex_value(at(p + 2)) * 16 + hex_value(at(p + 3)));
          p += 3;
        } else if (c == '\\' && at(p + 1) != '\0') {
          p++;
          switch (at(p)) {
            case 'n':
              current += '\n';
              break;
            case 'r':
              current += '\r';
              break;
            case 't':
              current += '\t';
              break;
            case 'b':
              current += '\b';
              break;
            case 'a':
              current += '\a';
              break;
            default:
              current += at(p);
              break;
          }
        } else if (c == '"') {
          if (at(p + 1) != '\0' && !is_blank(at(p + 1))) return std::nullopt;
          done = true;
        } else if (c == '\0') {
          return std::nullopt;  // unterminated quotes
        } else {
          current += c;
        }
      } else if (in_single) {
        if (c == '\\' && at(p + 1) == '\'') {
          p++;
          current += '\'';
        } else if (c == '\'') {
          if (at(p + 1) != '\0' && !is_blank(at(p + 1))) return std::nullopt;
          done = true;
        } else if (c == '\0') {
          return std::nullopt;
        } else {
          current += c;
        }
      } else {
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_double = true;
            break;
          case '\'':
            in_single = true;
            break;
          default:
            current += c;
            break;
        }
      }
      if (at(p) != '\0') p++;
    }
    args.push_back(std::move(current));
  }
}

std::string command_line(const std::vector<std::string>& argv, size_t max_chars) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty();
    for (unsigned char ch : a)
      if (ch <= ' ' || ch >= 127 || ch == '"' || ch == '\'' || ch == '\\') plain = false;
    out += plain ? a : quote_repr(a);
    if (out.size() > max_chars) break;
  }
  if (out.size() > max_chars) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

}  // namespace redlab
