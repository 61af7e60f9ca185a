// cjson for scripts: JSON encoding and decoding with the observable behaviour of lua-cjson
// 2.1.0 in its default configuration, as Redis 7.0 bundles it: numbers as "%.14g", '/'
// escaped, tables with only positive integer keys as arrays (an "excessively sparse" one is
// an error), null as a NULL light userdata, and the same error messages and character
// positions ("Expected comma or array end but found T_NUMBER at character 4"). The decoder
// accepts what lua-cjson accepts by default: hex, inf and nan numbers, leading zeros.
//
// The configuration functions only read: a setting changed by one script would outlive it
// (Redis shares one cjson configuration between scripts), which the simulator does not model.
//
// Lua errors are longjmps: the buffers live in the ScriptingState (light userdata upvalues),
// never in a frame a Lua error can unwind.
#include "sim/fake/script_json.h"

#include <lua.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace redlab::fake {
namespace {

constexpr int kMaxDepth = 1000;  // encode_max_depth and decode_max_depth
constexpr int kSparseRatio = 2;  // encode_sparse_array: an array may be half holes...
constexpr int kSparseSafe = 10;  // ...or have any holes up to this index
constexpr int kNumberPrecision = 14;

std::string& buffer_upvalue(lua_State* L) {
  return *static_cast<std::string*>(lua_touserdata(L, lua_upvalueindex(1)));
}

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

[[noreturn]] void encode_error(lua_State* L, int idx, const char* reason) {
  luaL_error(L, "Cannot serialise %s: %s", luaL_typename(L, idx), reason);
  std::abort();  // luaL_error does not return
}

void append_number(lua_State* L, std::string& out, int idx) {
  double num = lua_tonumber(L, idx);
  if (std::isinf(num) || std::isnan(num)) encode_error(L, idx, "must not be NaN or Inf");
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%.*g", kNumberPrecision, num);
  out.append(buf, static_cast<size_t>(n));
}

void append_string(lua_State* L, std::string& out, int idx) {
  size_t n = 0;
  const char* s = lua_tolstring(L, idx, &n);
  out.push_back('"');
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = static_cast<unsigned char>(s[i]);
    switch (ch) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '/':
        out.append("\\/");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\r':
        out.append("\\r");
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", ch);
          out.append(esc);
        } else {
          out.push_back(static_cast<char>(ch));
        }
    }
  }
  out.push_back('"');
}

// The array length of the table on top (its largest key), or -1 if it must be an object.
int array_length(lua_State* L) {
  int max = 0;
  int items = 0;
  lua_pushnil(L);
  // Bounded by the table's keys.
  while (lua_next(L, -2) != 0) {
    if (lua_type(L, -2) == LUA_TNUMBER) {
      double k = lua_tonumber(L, -2);
      if (k != 0 && std::floor(k) == k && k >= 1) {
        if (k > max) max = k > INT32_MAX ? INT32_MAX : static_cast<int>(k);
        items++;
        lua_pop(L, 1);
        continue;
      }
    }
    lua_pop(L, 2);
    return -1;
  }
  if (max > items * kSparseRatio && max > kSparseSafe)
    encode_error(L, -1, "excessively sparse array");
  return max;
}

void append_value(lua_State* L, std::string& out, int depth) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING:
      append_string(L, out, -1);
      break;
    case LUA_TNUMBER:
      append_number(L, out, -1);
      break;
    case LUA_TBOOLEAN:
      out.append(lua_toboolean(L, -1) ? "true" : "false");
      break;
    case LUA_TNIL:
      out.append("null");
      break;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, -1) == nullptr) {
        out.append("null");
        break;
      }
      encode_error(L, -1, "type not supported");
    case LUA_TTABLE: {
      depth++;
      if (depth > kMaxDepth || !lua_checkstack(L, 3))
        luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
      int len = array_length(L);
      if (len > 0) {
        out.push_back('[');
        for (int i = 1; i <= len; i++) {
          if (i > 1) out.push_back(',');
          lua_rawgeti(L, -1, i);
          append_value(L, out, depth);
          lua_pop(L, 1);
        }
        out.push_back(']');
        break;
      }
      out.push_back('{');
      bool comma = false;
      lua_pushnil(L);
      // Bounded by the table's keys.
      while (lua_next(L, -2) != 0) {
        if (comma) out.push_back(',');
        comma = true;
        int key_type = lua_type(L, -2);
        if (key_type == LUA_TNUMBER) {
          out.push_back('"');
          append_number(L, out, -2);
          out.append("\":");
        } else if (key_type == LUA_TSTRING) {
          append_string(L, out, -2);
          out.push_back(':');
        } else {
          encode_error(L, -2, "table key must be a number or string");
        }
        append_value(L, out, depth);
        lua_pop(L, 1);
      }
      out.push_back('}');
      break;
    }
    default:
      encode_error(L, -1, "type not supported");
  }
}

int json_encode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  std::string& out = buffer_upvalue(L);
  out.clear();
  append_value(L, out, 0);
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

// ---------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------

enum TokenType {
  T_OBJ_BEGIN,
  T_OBJ_END,
  T_ARR_BEGIN,
  T_ARR_END,
  T_STRING,
  T_NUMBER,
  T_BOOLEAN,
  T_NULL,
  T_COLON,
  T_COMMA,
  T_END,
  T_WHITESPACE,
  T_ERROR,
  T_UNKNOWN,
};

const char* const kTokenNames[] = {"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
                                   "T_STRING",    "T_NUMBER",  "T_BOOLEAN",   "T_NULL",
                                   "T_COLON",     "T_COMMA",   "T_END",       "T_WHITESPACE",
                                   "T_ERROR",     "T_UNKNOWN"};

struct Token {
  TokenType type = T_UNKNOWN;
  size_t index = 0;  // where the token (or the error) is, 0-based
  const char* error = nullptr;
  double number = 0;
  bool boolean = false;
};

// The text is NUL-terminated (a Lua string): a NUL ends it, as in the C original.
struct Parser {
  const char* data;
  const char* ptr;
  std::string* text;  // the last string token, decoded
  int depth;
};

void set_error(Token& t, Parser& p, const char* error) {
  t.type = T_ERROR;
  t.index = static_cast<size_t>(p.ptr - p.data);
  t.error = error;
}

int hex4(const char* s) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char ch = s[i];
    int d;
    if (ch >= '0' && ch <= '9') {
      d = ch - '0';
    } else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f') {
      d = (ch | 0x20) - 'a' + 10;
    } else {
      return -1;  // also stops at the terminating NUL
    }
    v = v * 16 + d;
  }
  return v;
}

// \uXXXX or a surrogate pair \uD8xx\uDCxx, appended as UTF-8; false if invalid.
bool append_unicode_escape(Parser& p) {
  int escape_len = 6;
  int cp = hex4(p.ptr + 2);
  if (cp < 0) return false;
  if ((cp & 0xF800) == 0xD800) {
    if (cp & 0x400) return false;  // a low surrogate first
    if (p.ptr[escape_len] != '\\' || p.ptr[escape_len + 1] != 'u') return false;
    int low = hex4(p.ptr + escape_len + 2);
    if (low < 0 || (low & 0xFC00) != 0xDC00) return false;
    cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
    escape_len = 12;
  }
  std::string& out = *p.text;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  p.ptr += escape_len;
  return true;
}

void next_string(Parser& p, Token& t) {
  p.ptr++;  // the opening quote
  p.text->clear();
  // Bounded by the terminating NUL.
  while (*p.ptr != '"') {
    char ch = *p.ptr;
    if (!ch) return set_error(t, p, "unexpected end of string");
    if (ch == '\\') {
      switch (p.ptr[1]) {
        case '"':
          ch = '"';
          break;
        case '\\':
          ch = '\\';
          break;
        case '/':
          ch = '/';
          break;
        case 'b':
          ch = '\b';
          break;
        case 'f':
          ch = '\f';
          break;
        case 'n':
          ch = '\n';
          break;
        case 'r':
          ch = '\r';
          break;
        case 't':
          ch = '\t';
          break;
        case 'u':
          if (!append_unicode_escape(p)) return set_error(t, p, "invalid unicode escape code");
          continue;
        default:
          return set_error(t, p, "invalid escape code");
      }
      p.ptr++;
    }
    p.text->push_back(ch);
    p.ptr++;
  }
  p.ptr++;  // the closing quote
  t.type = T_STRING;
}

// Numbers JSON does not allow but lua-cjson decodes by default: +1, hex, leading zeros, inf,
// nan.
bool is_invalid_number(const char* p) {
  if (*p == '+') return true;
  if (*p == '-') p++;
  if (*p == '0') {
    char ch2 = p[1];
    return (ch2 | 0x20) == 'x' || (ch2 >= '0' && ch2 <= '9');
  }
  if (*p <= '9') return false;
  return strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "nan", 3) == 0;
}

void next_number(Parser& p, Token& t) {
  char* end = nullptr;
  t.number = std::strtod(p.ptr, &end);
  if (end == p.ptr) return set_error(t, p, "invalid number");
  p.ptr = end;
  t.type = T_NUMBER;
}

void next_token(Parser& p, Token& t) {
  // Bounded by the terminating NUL.
  while (*p.ptr == ' ' || *p.ptr == '\t' || *p.ptr == '\n' || *p.ptr == '\r') p.ptr++;
  t.index = static_cast<size_t>(p.ptr - p.data);
  char ch = *p.ptr;
  switch (ch) {
    case '\0':
      t.type = T_END;
      return;
    case '{':
      t.type = T_OBJ_BEGIN;
      p.ptr++;
      return;
    case '}':
      t.type = T_OBJ_END;
      p.ptr++;
      return;
    case '[':
      t.type = T_ARR_BEGIN;
      p.ptr++;
      return;
    case ']':
      t.type = T_ARR_END;
      p.ptr++;
      return;
    case ':':
      t.type = T_COLON;
      p.ptr++;
      return;
    case ',':
      t.type = T_COMMA;
      p.ptr++;
      return;
    case '"':
      return next_string(p, t);
    default:
      break;
  }
  if (ch == '-' || (ch >= '0' && ch <= '9')) return next_number(p, t);
  if (std::strncmp(p.ptr, "true", 4) == 0) {
    t.type = T_BOOLEAN;
    t.boolean = true;
    p.ptr += 4;
  } else if (std::strncmp(p.ptr, "false", 5) == 0) {
    t.type = T_BOOLEAN;
    t.boolean = false;
    p.ptr += 5;
  } else if (std::strncmp(p.ptr, "null", 4) == 0) {
    t.type = T_NULL;
    p.ptr += 4;
  } else if (is_invalid_number(p.ptr)) {
    next_number(p, t);
  } else {
    set_error(t, p, "invalid token");
  }
}

[[noreturn]] void parse_error(lua_State* L, const char* expected, const Token& t) {
  const char* found = t.type == T_ERROR ? t.error : kTokenNames[t.type];
  luaL_error(L, "Expected %s but found %s at character %d", expected, found,
             static_cast<int>(t.index + 1));
  std::abort();  // luaL_error does not return
}

void descend(lua_State* L, Parser& p, int slots) {
  p.depth++;
  if (p.depth <= kMaxDepth && lua_checkstack(L, slots)) return;
  luaL_error(L, "Found too many nested data structures (%d) at character %d", p.depth,
             static_cast<int>(p.ptr - p.data));
}

void parse_value(lua_State* L, Parser& p, Token& t);

void parse_object(lua_State* L, Parser& p) {
  descend(L, p, 3);
  lua_newtable(L);
  Token t;
  next_token(p, t);
  if (t.type == T_OBJ_END) {
    p.depth--;
    return;
  }
  // Bounded by the input: every turn consumes a key.
  while (true) {
    if (t.type != T_STRING) parse_error(L, "object key string", t);
    lua_pushlstring(L, p.text->data(), p.text->size());
    next_token(p, t);
    if (t.type != T_COLON) parse_error(L, "colon", t);
    next_token(p, t);
    parse_value(L, p, t);
    lua_rawset(L, -3);
    next_token(p, t);
    if (t.type == T_OBJ_END) {
      p.depth--;
      return;
    }
    if (t.type != T_COMMA) parse_error(L, "comma or object end", t);
    next_token(p, t);
  }
}

void parse_array(lua_State* L, Parser& p) {
  descend(L, p, 2);
  lua_newtable(L);
  Token t;
  next_token(p, t);
  if (t.type == T_ARR_END) {
    p.depth--;
    return;
  }
  // Bounded by the input: every turn consumes a value.
  for (int i = 1;; i++) {
    parse_value(L, p, t);
    lua_rawseti(L, -2, i);
    next_token(p, t);
    if (t.type == T_ARR_END) {
      p.depth--;
      return;
    }
    if (t.type != T_COMMA) parse_error(L, "comma or array end", t);
    next_token(p, t);
  }
}

void parse_value(lua_State* L, Parser& p, Token& t) {
  switch (t.type) {
    case T_STRING:
      lua_pushlstring(L, p.text->data(), p.text->size());
      break;
    case T_NUMBER:
      lua_pushnumber(L, t.number);
      break;
    case T_BOOLEAN:
      lua_pushboolean(L, t.boolean);
      break;
    case T_OBJ_BEGIN:
      parse_object(L, p);
      break;
    case T_ARR_BEGIN:
      parse_array(L, p);
      break;
    case T_NULL:
      lua_pushlightuserdata(L, nullptr);
      break;
    default:
      parse_error(L, "value", t);
  }
}

int json_decode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  size_t size = 0;
  const char* data = luaL_checklstring(L, 1, &size);
  // A NUL in the first two bytes means UTF-16 or UTF-32 (RFC 4627).
  if (size >= 2 && (!data[0] || !data[1]))
    return luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
  Parser p{data, data, &buffer_upvalue(L), 0};
  Token t;
  next_token(p, t);
  parse_value(L, p, t);
  next_token(p, t);
  if (t.type != T_END) parse_error(L, "the end", t);
  return 1;
}

// ---- configuration (read only) ----

int config_sparse(lua_State* L) {
  lua_pushboolean(L, 0);
  lua_pushinteger(L, kSparseRatio);
  lua_pushinteger(L, kSparseSafe);
  return 3;
}
int config_depth(lua_State* L) {
  lua_pushinteger(L, kMaxDepth);
  return 1;
}
int config_precision(lua_State* L) {
  lua_pushinteger(L, kNumberPrecision);
  return 1;
}
int config_true(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}
int config_false(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}
int config_new(lua_State* L) {
  return luaL_error(L, "cjson.new is not supported by the redlab simulator");
}

}  // namespace

void push_cjson_library(lua_State* L) {
  // The encoder's and decoder's buffers: std::strings in full userdata, so that the Lua
  // state owns them (their __gc runs the destructor) and no Lua error can leak them.
  lua_newtable(L);  // cjson
  auto* encode_buffer = static_cast<std::string*>(lua_newuserdata(L, sizeof(std::string)));
  new (encode_buffer) std::string();
  lua_newtable(L);
  lua_pushcfunction(L, [](lua_State* l) {
    static_cast<std::string*>(lua_touserdata(l, 1))->~basic_string();
    return 0;
  });
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_pushcclosure(L, json_encode, 1);
  lua_setfield(L, -2, "encode");
  auto* decode_buffer = static_cast<std::string*>(lua_newuserdata(L, sizeof(std::string)));
  new (decode_buffer) std::string();
  lua_newtable(L);
  lua_pushcfunction(L, [](lua_State* l) {
    static_cast<std::string*>(lua_touserdata(l, 1))->~basic_string();
    return 0;
  });
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_pushcclosure(L, json_decode, 1);
  lua_setfield(L, -2, "decode");
  lua_pushlightuserdata(L, nullptr);
  lua_setfield(L, -2, "null");
  lua_pushcfunction(L, config_sparse);
  lua_setfield(L, -2, "encode_sparse_array");
  lua_pushcfunction(L, config_depth);
  lua_setfield(L, -2, "encode_max_depth");
  lua_pushcfunction(L, config_depth);
  lua_setfield(L, -2, "decode_max_depth");
  lua_pushcfunction(L, config_precision);
  lua_setfield(L, -2, "encode_number_precision");
  lua_pushcfunction(L, config_true);
  lua_setfield(L, -2, "encode_keep_buffer");
  lua_pushcfunction(L, config_false);
  lua_setfield(L, -2, "encode_invalid_numbers");
  lua_pushcfunction(L, config_true);
  lua_setfield(L, -2, "decode_invalid_numbers");
  lua_pushcfunction(L, config_new);
  lua_setfield(L, -2, "new");
  lua_pushliteral(L, "cjson");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "2.1.0");
  lua_setfield(L, -2, "_VERSION");
}

}  // namespace redlab::fake
