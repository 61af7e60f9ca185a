// See tracer.h.
#include "sim/client/tracer.h"

#include "sim/core/reply.h"

namespace redlab::client {

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

}  // namespace redlab::client
