// The little languages inside scenario files: integer expressions ("ttl_ms/3"), text templates
// ("job-${n}: ${token}") and conditions ("watchdog=on and pause_ms>ttl_ms").
//
// Everything is parsed when the file is loaded (so a typo is a located load error, not a
// failure in the middle of a run) and evaluated against an Env at run time. Integers only:
// a run must be a pure function of its inputs, on every platform.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlab::scenario {

// Looks a name up at run time (parameters, variant values, the actor's variables).
using Env = std::function<std::optional<std::string>(std::string_view name)>;

// Thrown by evaluation (a variable that is not an integer, division by zero); the engine
// turns it into a located error.
struct EvalError {
  std::string message;
};

// Names an expression may use, known at load time.
using NameCheck = std::function<bool(std::string_view name)>;

class Expr {
 public:
  // Parses "ttl_ms/3 + 500", "-1", "n*100". On error returns nullopt with a message and the
  // byte offset of the problem in *error / *offset.
  static std::optional<Expr> parse(std::string_view text, const NameCheck& known,
                                   std::string* error, size_t* offset);
  static Expr constant(int64_t value);
  int64_t eval(const Env& env) const;  // throws EvalError
  bool is_constant() const;
  const std::string& source() const { return source_; }

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::string source_;
};

class Template {
 public:
  // "text ${expr} text": an ${...} holding a single name is replaced by that name's value
  // as text (so it may be any string); anything else must be an integer expression.
  static std::optional<Template> parse(std::string_view text, const NameCheck& known,
                                       std::string* error, size_t* offset);
  static Template literal(std::string text);
  std::string eval(const Env& env) const;  // throws EvalError
  const std::string& source() const { return source_; }
  bool is_literal() const;

 private:
  struct Piece {
    std::string text;  // literal text, or the name for a single-name substitution
    std::optional<Expr> expr;
    bool name = false;
  };
  std::vector<Piece> pieces_;
  std::string source_;
};

class Cond {
 public:
  // Terms joined by " and ": NAME=VALUE, NAME!=VALUE, NAME<VALUE, NAME<=VALUE, NAME>VALUE,
  // NAME>=VALUE. For = and != VALUE is a literal (an integer or a bare word); for the
  // ordering operators it is an integer or a known name, compared by its value. = and !=
  // compare numerically when both sides are integers, as text otherwise; the ordering
  // operators need integers. An empty condition is true.
  static std::optional<Cond> parse(std::string_view text, const NameCheck& known,
                                   std::string* error, size_t* offset);
  bool eval(const Env& env) const;  // throws EvalError
  const std::string& source() const { return source_; }
  bool always() const { return terms_.empty(); }

 private:
  struct Term {
    std::string name;
    std::string op;
    std::string value;
    bool value_is_name = false;
  };
  std::vector<Term> terms_;
  std::string source_;
};

// Decimal int64 with an optional sign, nothing else; nullopt otherwise.
std::optional<int64_t> parse_int(std::string_view text);

}  // namespace redlab::scenario
