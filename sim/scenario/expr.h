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

  // Bounds of the value for names within known ranges (interval arithmetic), for limits
  // checked at load time: [lo, hi] contains every value eval() can return without an error.
  // nullopt when a name has no known range (`range_of` returns nullopt) or a bound does not
  // fit int64.
  struct Range {
    int64_t lo = 0, hi = 0;
  };
  using RangeOf = std::function<std::optional<Range>(std::string_view name)>;
  std::optional<Range> range(const RangeOf& range_of) const;

  // Parentheses and unary minuses nest this deep at most (a located load error past it).
  static constexpr int kDepthMax = 32;

  // The compiled form: a postfix program run on a value stack, so neither evaluating nor
  // destroying an expression recurses (a 50,000-term "1+1+...+1" is a flat loop).
  struct Op;
  struct Program;

 private:
  std::shared_ptr<const Program> code_;  // shared: Exprs are copied freely
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
  // Terms joined by " and " and " or " ("and" binds tighter): NAME=VALUE and NAME!=VALUE,
  // where VALUE is a literal (an integer or a bare word), compared numerically when both
  // sides are integers and as text otherwise; and EXPR<EXPR, <=, >, >= between two integer
  // expressions ("pause_ms>ttl_ms-2000", "handlers>2*pool_size"). An empty condition is
  // true. At most kTermsMax terms.
  static std::optional<Cond> parse(std::string_view text, const NameCheck& known,
                                   std::string* error, size_t* offset);
  bool eval(const Env& env) const;  // throws EvalError
  const std::string& source() const { return source_; }
  bool always() const { return any_.empty(); }
  static constexpr size_t kTermsMax = 64;

 private:
  struct Term {
    std::string op;
    std::string name, value;          // = and !=
    std::optional<Expr> left, right;  // the ordering operators
  };
  std::vector<std::vector<Term>> any_;  // or of ands
  std::string source_;
};

// Decimal int64 with an optional sign, nothing else; nullopt otherwise.
std::optional<int64_t> parse_int(std::string_view text);

}  // namespace redlab::scenario
