#include "sim/core/reply.h"

#include <cstdio>
#include <ostream>

namespace redlab {

void append_resp(std::string& out, const Reply& r) {
  switch (r.kind) {
    case Reply::Kind::Status:
      out += '+';
      out += r.str;
      out += "\r\n";
      return;
    case Reply::Kind::Error:
      out += '-';
      out += r.str;
      out += "\r\n";
      return;
    case Reply::Kind::Integer:
      out += ':';
      out += std::to_string(r.integer);
      out += "\r\n";
      return;
    case Reply::Kind::Bulk:
      out += '$';
      out += std::to_string(r.str.size());
      out += "\r\n";
      out += r.str;
      out += "\r\n";
      return;
    case Reply::Kind::Nil:
      out += "$-1\r\n";
      return;
    case Reply::Kind::NilArray:
      out += "*-1\r\n";
      return;
    case Reply::Kind::Array:
      out += '*';
      out += std::to_string(r.elements.size());
      out += "\r\n";
      for (const Reply& e : r.elements) append_resp(out, e);
      return;
  }
}

size_t resp_size(const Reply& r) {
  switch (r.kind) {
    case Reply::Kind::Status:
    case Reply::Kind::Error:
      return 1 + r.str.size() + 2;
    case Reply::Kind::Integer:
      return 1 + std::to_string(r.integer).size() + 2;
    case Reply::Kind::Bulk:
      return 1 + std::to_string(r.str.size()).size() + 2 + r.str.size() + 2;
    case Reply::Kind::Nil:
    case Reply::Kind::NilArray:
      return 5;
    case Reply::Kind::Array: {
      size_t n = 1 + std::to_string(r.elements.size()).size() + 2;
      for (const Reply& e : r.elements) n += resp_size(e);
      return n;
    }
  }
  return 0;
}

std::string to_resp(const Reply& reply) {
  std::string out;
  append_resp(out, reply);
  return out;
}

void append_repr_escaped(std::string& out, std::string_view s) {
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        // isprint() in the C locale, as redis-cli runs.
        if (c >= 0x20 && c <= 0x7e) {
          out += static_cast<char>(c);
        } else {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        }
    }
  }
}

std::string quote_repr(std::string_view s) {
  std::string out = "\"";
  append_repr_escaped(out, s);
  out += '"';
  return out;
}

namespace {

// Mirrors redis-cli.c cliFormatReplyTTY: nested arrays are indented by the width of the
// parent's index column plus two, and the first element shares the parent's index line.
void format_tty(std::string& out, const Reply& r, const std::string& prefix) {
  switch (r.kind) {
    case Reply::Kind::Error:
      out += "(error) ";
      out += r.str;
      out += '\n';
      return;
    case Reply::Kind::Status:
      out += r.str;
      out += '\n';
      return;
    case Reply::Kind::Integer:
      out += "(integer) ";
      out += std::to_string(r.integer);
      out += '\n';
      return;
    case Reply::Kind::Bulk:
      out += quote_repr(r.str);
      out += '\n';
      return;
    case Reply::Kind::Nil:
    case Reply::Kind::NilArray:
      out += "(nil)\n";
      return;
    case Reply::Kind::Array: {
      if (r.elements.empty()) {
        out += "(empty array)\n";
        return;
      }
      size_t idxlen = 0;
      size_t i = r.elements.size();
      do {
        idxlen++;
        i /= 10;
      } while (i);
      std::string child_prefix = prefix + std::string(idxlen + 2, ' ');
      for (size_t k = 0; k < r.elements.size(); k++) {
        if (k != 0) out += prefix;
        std::string idx = std::to_string(k + 1);
        if (idx.size() < idxlen) out += std::string(idxlen - idx.size(), ' ');
        out += idx;
        out += ") ";
        format_tty(out, r.elements[k], child_prefix);
      }
      return;
    }
  }
}

// Stops once out is longer than limit_chars: format_short cuts there anyway, and a bulk of
// megabytes would otherwise be escaped whole for a 120-character line.
void format_short_into(std::string& out, const Reply& r, size_t limit_chars) {
  if (out.size() > limit_chars) return;
  switch (r.kind) {
    case Reply::Kind::Error:
      out += "(error) " + r.str;
      return;
    case Reply::Kind::Status:
      out += r.str;
      return;
    case Reply::Kind::Integer:
      out += "(integer) " + std::to_string(r.integer);
      return;
    case Reply::Kind::Bulk: {
      // Every byte escapes to at least one character: this prefix is enough to pass the limit.
      size_t room = limit_chars - out.size() + 1;
      out += '"';
      append_repr_escaped(out, std::string_view(r.str).substr(0, room));
      if (r.str.size() <= room) out += '"';
      return;
    }
    case Reply::Kind::Nil:
    case Reply::Kind::NilArray:
      out += "(nil)";
      return;
    case Reply::Kind::Array:
      out += '[';
      for (size_t k = 0; k < r.elements.size() && out.size() <= limit_chars; k++) {
        if (k) out += ' ';
        format_short_into(out, r.elements[k], limit_chars);
      }
      out += ']';
      return;
  }
}

}  // namespace

std::string format_cli(const Reply& reply) {
  std::string out;
  format_tty(out, reply, "");
  return out;
}

std::string format_short(const Reply& reply, size_t max_chars) {
  std::string out;
  format_short_into(out, reply, max_chars);
  if (out.size() > max_chars) {
    out.resize(max_chars > 3 ? max_chars - 3 : 0);
    out += "...";
  }
  return out;
}

void PrintTo(const Reply& reply, std::ostream* os) {
  *os << format_short(reply, 400);
}

}  // namespace redlab
