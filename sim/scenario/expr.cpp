#include "sim/scenario/expr.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <unordered_map>

namespace redlab::scenario {

std::optional<int64_t> parse_int(std::string_view text) {
  if (text.empty()) return std::nullopt;
  size_t start = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (start == text.size()) return std::nullopt;
  int64_t value = 0;
  const char* first = text.data() + start;
  const char* last = text.data() + text.size();
  // from_chars does not take a '+'; a '-' is handled by negating (int64 min included).
  uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(first, last, magnitude);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  if (text[0] == '-') {
    if (magnitude > uint64_t(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
    value = magnitude == uint64_t(std::numeric_limits<int64_t>::max()) + 1
                ? std::numeric_limits<int64_t>::min()
                : -int64_t(magnitude);
  } else {
    if (magnitude > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
    value = int64_t(magnitude);
  }
  return value;
}

namespace {

bool name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool name_char(char c) {
  return name_start(c) || (c >= '0' && c <= '9');
}
// Variant names and values may carry '-' and '.' ("slow-subscriber", "v9.22").
bool word_char(char c) {
  return name_char(c) || c == '-' || c == '.' || c == ':';
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Expr: recursive descent over + - * / % with unary minus and parentheses, compiled to a
// postfix program. Chains ("1+1+...+1") are loops in the parser and flat runs of code, so
// only parentheses and unary minuses recurse, and those are bounded by kDepthMax.
// ---------------------------------------------------------------------------------------

struct Expr::Op {
  char op = 0;        // 0: push value; 'n': push the value of names[name]; '~': negate;
                      // + - * / %, 'm' (min), 'M' (max): pop b, pop a, push a op b
  uint32_t name = 0;  // index into Program::names
  int64_t value = 0;
};

struct Expr::Program {
  std::vector<Op> code;
  std::vector<std::string> names;
  size_t stack_max = 0;  // values on the stack at most while running code
};

namespace {

struct ExprParser {
  ExprParser(std::string_view text, const NameCheck& names, Expr::Program& program)
      : s(text), known(names), out(program) {}

  std::string_view s;
  const NameCheck& known;
  Expr::Program& out;
  size_t i = 0;
  std::string error;
  size_t error_at = 0;
  int depth = 0;
  size_t stack = 0;  // values on the stack after the code emitted so far
  std::unordered_map<std::string, uint32_t> name_index;  // names[] by name

  void skip() {
    while (i < s.size() && s[i] == ' ') i++;
  }
  bool fail(std::string message) {
    if (error.empty()) {
      error = std::move(message);
      error_at = i;
    }
    return false;
  }
  bool too_deep() {
    return fail("expression nested too deep (" + std::to_string(Expr::kDepthMax) +
                " levels at most)");
  }
  void emit(Expr::Op op) {
    if (op.op == 0 || op.op == 'n') {
      stack_push();
    } else if (op.op != '~') {
      stack--;  // a binary operator takes two values and leaves one
    }
    out.code.push_back(op);
  }
  void stack_push() {
    stack++;
    out.stack_max = std::max(out.stack_max, stack);
  }
  bool sum() {
    if (!product()) return false;
    // A loop, not a recursion: "1+1+...+1" costs no stack however long it is.
    for (;;) {
      skip();
      if (i >= s.size() || (s[i] != '+' && s[i] != '-')) return true;
      char op = s[i++];
      if (!product()) return false;
      emit({op, 0, 0});
    }
  }
  bool product() {
    if (!unary()) return false;
    for (;;) {
      skip();
      if (i >= s.size() || (s[i] != '*' && s[i] != '/' && s[i] != '%')) return true;
      char op = s[i++];
      if (!unary()) return false;
      emit({op, 0, 0});
    }
  }
  bool unary() {
    skip();
    // A run of minuses is counted, not recursed into; each one still counts as a level, as
    // parentheses do, so "------...1" is refused like "((((...1".
    int minuses = 0;
    while (i < s.size() && s[i] == '-') {
      if (depth + minuses + 1 > Expr::kDepthMax) return too_deep();
      minuses++;
      i++;
      skip();
    }
    depth += minuses;
    bool ok = primary();
    depth -= minuses;
    if (!ok) return false;
    for (int k = 0; k < minuses; k++) emit({'~', 0, 0});
    return true;
  }
  bool primary() {
    skip();
    if (i >= s.size()) return fail("expected a number or a name, found the end");
    if (s[i] == '(') {
      if (depth + 1 > Expr::kDepthMax) return too_deep();
      depth++;
      i++;
      if (!sum()) return false;
      skip();
      if (i >= s.size() || s[i] != ')') return fail("expected ')'");
      i++;
      depth--;
      return true;
    }
    if (s[i] >= '0' && s[i] <= '9') {
      size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') i++;
      auto v = parse_int(s.substr(start, i - start));
      if (!v) {
        i = start;
        return fail("number out of range");
      }
      emit({0, 0, *v});
      return true;
    }
    if (name_start(s[i])) {
      size_t start = i;
      while (i < s.size() && name_char(s[i])) i++;
      std::string name(s.substr(start, i - start));
      // min(a, b) and max(a, b): a name followed by '(' is a function, so a parameter may
      // still be called min. They keep conditions readable where the story has a "whichever
      // comes first" (the lock expires, or its holder releases it).
      size_t after = i;
      while (after < s.size() && s[after] == ' ') after++;
      if (after < s.size() && s[after] == '(') {
        if (name != "min" && name != "max") {
          i = start;
          return fail("unknown function '" + name + "' (min and max are the functions)");
        }
        if (depth + 1 > Expr::kDepthMax) return too_deep();
        depth++;
        i = after + 1;
        if (!sum()) return false;
        skip();
        if (i >= s.size() || s[i] != ',')
          return fail("expected ',' between " + name + "'s two values");
        i++;
        if (!sum()) return false;
        skip();
        if (i >= s.size() || s[i] != ')') return fail("expected ')'");
        i++;
        depth--;
        emit({name == "min" ? 'm' : 'M', 0, 0});
        return true;
      }
      if (known && !known(name)) {
        i = start;
        return fail("unknown name '" + name + "'");
      }
      // Each distinct name is stored once: a long expression over one name stays small.
      auto [it, added] = name_index.try_emplace(name, uint32_t(out.names.size()));
      if (added) out.names.push_back(std::move(name));
      emit({'n', it->second, 0});
      return true;
    }
    return fail(std::string("unexpected '") + s[i] + "' in expression");
  }
};

int64_t name_value(const std::string& name, const Env& env) {
  auto v = env(name);
  if (!v) throw EvalError{"'" + name + "' has no value"};
  auto i = parse_int(*v);
  if (!i) throw EvalError{"'" + name + "' is \"" + *v + "\", not an integer"};
  return *i;
}

int64_t apply(char op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case '+':
      if (__builtin_add_overflow(a, b, &r)) throw EvalError{"integer overflow"};
      return r;
    case '-':
      if (__builtin_sub_overflow(a, b, &r)) throw EvalError{"integer overflow"};
      return r;
    case '*':
      if (__builtin_mul_overflow(a, b, &r)) throw EvalError{"integer overflow"};
      return r;
    case 'm':
      return std::min(a, b);
    case 'M':
      return std::max(a, b);
    case '/':
    case '%':
      if (b == 0) throw EvalError{"division by zero"};
      if (a == std::numeric_limits<int64_t>::min() && b == -1) throw EvalError{"integer overflow"};
      return op == '/' ? a / b : a % b;
  }
  return 0;
}

}  // namespace

std::optional<Expr> Expr::parse(std::string_view text, const NameCheck& known, std::string* error,
                                size_t* offset) {
  auto code = std::make_shared<Program>();
  ExprParser p{text, known, *code};
  bool ok = p.sum();
  if (ok) {
    p.skip();
    if (p.i < text.size()) ok = p.fail(std::string("unexpected '") + text[p.i] + "' in expression");
  }
  if (!ok) {
    if (error) *error = p.error;
    if (offset) *offset = p.error_at;
    return std::nullopt;
  }
  code->code.shrink_to_fit();
  Expr e;
  e.code_ = std::move(code);
  e.source_ = std::string(text);
  return e;
}

Expr Expr::constant(int64_t value) {
  Expr e;
  auto code = std::make_shared<Program>();
  code->code.push_back(Op{0, 0, value});
  code->stack_max = 1;
  e.code_ = std::move(code);
  e.source_ = std::to_string(value);
  return e;
}

int64_t Expr::eval(const Env& env) const {
  const Program& p = *code_;
  // Most expressions need a few slots; a long one gets a heap stack of its exact size.
  int64_t small[16] = {};
  std::vector<int64_t> big;
  int64_t* stack = small;
  if (p.stack_max > std::size(small)) {
    big.resize(p.stack_max);
    stack = big.data();
  }
  size_t top = 0;  // values on the stack
  for (const Op& o : p.code) {
    switch (o.op) {
      case 0:
        stack[top++] = o.value;
        break;
      case 'n':
        stack[top++] = name_value(p.names[o.name], env);
        break;
      case '~':
        if (stack[top - 1] == std::numeric_limits<int64_t>::min())
          throw EvalError{"integer overflow"};
        stack[top - 1] = -stack[top - 1];
        break;
      default:
        top--;
        stack[top - 1] = apply(o.op, stack[top - 1], stack[top]);
    }
  }
  return stack[0];
}

namespace {

// Interval arithmetic with overflow as "unknown" (a bound past int64 bounds nothing here).
using Range = Expr::Range;

std::optional<Range> corners(const Range& a, const Range& b, char op) {
  int64_t xs[] = {a.lo, a.hi};
  std::vector<int64_t> ys{b.lo, b.hi};
  if (op == '/') {
    // Division by 0 is an error, not a value; -1 and 1 give the largest magnitudes.
    std::erase(ys, 0);
    if (b.lo <= -1 && b.hi >= -1) ys.push_back(-1);
    if (b.lo <= 1 && b.hi >= 1) ys.push_back(1);
    if (ys.empty()) return std::nullopt;  // always division by zero
  }
  Range r{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (int64_t x : xs)
    for (int64_t y : ys) {
      int64_t v = 0;
      if (op == '*') {
        if (__builtin_mul_overflow(x, y, &v)) return std::nullopt;
      } else {
        if (x == std::numeric_limits<int64_t>::min() && y == -1) return std::nullopt;
        v = x / y;
      }
      r.lo = std::min(r.lo, v);
      r.hi = std::max(r.hi, v);
    }
  return r;
}

std::optional<Range> combine(const Range& a, const Range& b, char op) {
  Range r;
  switch (op) {
    case '+':
      if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi))
        return std::nullopt;
      return r;
    case '-':
      if (__builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi))
        return std::nullopt;
      return r;
    case '*':
    case '/':
      return corners(a, b, op);
    case 'm':
      return Range{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case 'M':
      return Range{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case '%': {
      // |a % b| < |b| and |a % b| <= |a|, with the sign of a.
      if (b.lo == std::numeric_limits<int64_t>::min() ||
          a.lo == std::numeric_limits<int64_t>::min())
        return std::nullopt;
      int64_t m = std::max(-b.lo, b.hi) - 1;
      if (m < 0) return std::nullopt;  // always division by zero
      int64_t up = std::min(m, std::max(a.hi, int64_t(0)));
      int64_t down = std::min(m, std::max(-a.lo, int64_t(0)));
      return Range{-down, up};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Expr::Range> Expr::range(const RangeOf& range_of) const {
  const Program& p = *code_;
  std::vector<Range> stack;
  stack.reserve(p.stack_max);
  for (const Op& o : p.code) {
    switch (o.op) {
      case 0:
        stack.push_back({o.value, o.value});
        break;
      case 'n': {
        auto r = range_of ? range_of(p.names[o.name]) : std::nullopt;
        if (!r || r->lo > r->hi) return std::nullopt;
        stack.push_back(*r);
        break;
      }
      case '~': {
        Range& r = stack.back();
        if (r.lo == std::numeric_limits<int64_t>::min()) return std::nullopt;
        r = {-r.hi, -r.lo};
        break;
      }
      default: {
        Range b = stack.back();
        stack.pop_back();
        auto r = combine(stack.back(), b, o.op);
        if (!r) return std::nullopt;
        stack.back() = *r;
      }
    }
  }
  return stack.back();
}

bool Expr::is_constant() const {
  return code_->code.size() == 1 && code_->code[0].op == 0;
}

// ---------------------------------------------------------------------------------------
// Template
// ---------------------------------------------------------------------------------------

std::optional<Template> Template::parse(std::string_view text, const NameCheck& known,
                                        std::string* error, size_t* offset) {
  Template t;
  t.source_ = std::string(text);
  std::string literal;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos) {
        if (error) *error = "unterminated '${'";
        if (offset) *offset = i;
        return std::nullopt;
      }
      if (!literal.empty()) t.pieces_.push_back(Piece{std::move(literal), std::nullopt, false});
      literal.clear();
      std::string_view body = text.substr(i + 2, close - i - 2);
      bool is_word = !body.empty() && name_start(body[0]);
      for (char c : body) is_word = is_word && word_char(c);
      if (is_word && (!known || known(body))) {
        t.pieces_.push_back(Piece{std::string(body), std::nullopt, true});
      } else {
        std::string e;
        size_t at = 0;
        auto expr = Expr::parse(body, known, &e, &at);
        if (!expr) {
          if (error) *error = e;
          if (offset) *offset = i + 2 + at;
          return std::nullopt;
        }
        t.pieces_.push_back(Piece{{}, std::move(expr), false});
      }
      i = close + 1;
    } else {
      literal += text[i++];
    }
  }
  if (!literal.empty()) t.pieces_.push_back(Piece{std::move(literal), std::nullopt, false});
  return t;
}

Template Template::literal(std::string text) {
  Template t;
  t.source_ = text;
  if (!text.empty()) t.pieces_.push_back(Piece{std::move(text), std::nullopt, false});
  return t;
}

bool Template::is_literal() const {
  for (const Piece& p : pieces_)
    if (p.expr || p.name) return false;
  return true;
}

std::string Template::eval(const Env& env) const {
  std::string out;
  for (const Piece& p : pieces_) {
    if (p.expr) {
      out += std::to_string(p.expr->eval(env));
    } else if (p.name) {
      auto v = env(p.text);
      if (!v) throw EvalError{"'" + p.text + "' has no value"};
      out += *v;
    } else {
      out += p.text;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Cond
// ---------------------------------------------------------------------------------------

std::optional<Cond> Cond::parse(std::string_view text, const NameCheck& known, std::string* error,
                                size_t* offset) {
  Cond c;
  c.source_ = std::string(text);
  auto fail = [&](std::string message, size_t at) -> std::optional<Cond> {
    if (error) *error = std::move(message);
    if (offset) *offset = at;
    return std::nullopt;
  };
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') i++;
  };
  skip();
  if (i == text.size()) return c;
  c.any_.emplace_back();
  // A term ends at " and ", " or " or the end of the text.
  auto term_end = [&](size_t from) {
    for (size_t j = from; j < text.size(); j++)
      if (text[j] == ' ' && (text.substr(j, 5) == " and " || text.substr(j, 4) == " or ")) return j;
    return text.size();
  };
  for (size_t terms = 0;; terms++) {
    if (terms >= kTermsMax)
      return fail("a condition has at most " + std::to_string(kTermsMax) + " terms", i);
    skip();
    size_t start = i;
    size_t end = term_end(i);
    std::string_view whole = text.substr(start, end - start);
    // The comparison: the first operator in the term (two-character ones first).
    size_t op_at = std::string_view::npos;
    std::string op;
    for (size_t j = 0; j < whole.size() && op.empty(); j++) {
      for (const char* candidate : {"!=", "<=", ">=", "=", "<", ">"}) {
        std::string_view o(candidate);
        if (whole.substr(j, o.size()) == o) {
          op_at = j;
          op = std::string(o);
          break;
        }
      }
    }
    if (op.empty())
      return fail("expected =, !=, <, <=, > or >= in '" + std::string(whole) + "'", end);
    Term term;
    term.op = op;
    auto trim = [](std::string_view v, size_t& shift) {
      shift = 0;
      while (!v.empty() && v.front() == ' ') {
        v.remove_prefix(1);
        shift++;
      }
      while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
      return v;
    };
    size_t lshift = 0, rshift = 0;
    std::string_view lhs = trim(whole.substr(0, op_at), lshift);
    std::string_view rhs = trim(whole.substr(op_at + op.size()), rshift);
    size_t lhs_at = start + lshift, rhs_at = start + op_at + op.size() + rshift;
    if (lhs.empty()) return fail("expected a name before '" + op + "'", lhs_at);
    if (rhs.empty()) return fail("expected a value after '" + op + "'", rhs_at);
    if (op == "=" || op == "!=") {
      // NAME=VALUE: a variant's or parameter's value against a literal ("atomic=watch" even
      // if "watch" also names a variant).
      for (size_t j = 0; j < lhs.size(); j++)
        if (!(j == 0 ? name_start(lhs[j]) : word_char(lhs[j])))
          return fail("expected a name before '" + op + "'", lhs_at + j);
      for (size_t j = 0; j < rhs.size(); j++)
        if (!(word_char(rhs[j]) || (j == 0 && rhs[j] == '-')))
          return fail("expected a value after '" + op + "' (a word or an integer)", rhs_at + j);
      term.name = std::string(lhs);
      if (known && !known(term.name)) return fail("unknown name '" + term.name + "'", lhs_at);
      term.value = std::string(rhs);
    } else {
      // An ordering compares two integer expressions: "pause_ms>ttl_ms-2000",
      // "handlers>2*pool_size".
      std::string e;
      size_t at = 0;
      auto left = Expr::parse(lhs, known, &e, &at);
      if (!left) return fail(e, lhs_at + at);
      auto right = Expr::parse(rhs, known, &e, &at);
      if (!right) return fail(e, rhs_at + at);
      term.left = std::move(*left);
      term.right = std::move(*right);
    }
    c.any_.back().push_back(std::move(term));
    i = end;
    if (i == text.size()) break;
    if (text.substr(i, 5) == " and ") {
      i += 5;
    } else {
      i += 4;  // " or ": a new alternative
      c.any_.emplace_back();
    }
  }
  return c;
}

bool Cond::eval(const Env& env) const {
  if (any_.empty()) return true;
  for (const std::vector<Term>& all : any_) {
    bool ok = true;
    for (const Term& t : all) {
      if (t.op == "=" || t.op == "!=") {
        auto left = env(t.name);
        if (!left) throw EvalError{"'" + t.name + "' has no value"};
        auto a = parse_int(*left);
        auto b = parse_int(t.value);
        bool eq = (a && b) ? *a == *b : *left == t.value;
        ok = (t.op == "=") == eq;
      } else {
        int64_t a = t.left->eval(env), b = t.right->eval(env);
        ok = t.op == "<" ? a < b : t.op == "<=" ? a <= b : t.op == ">" ? a > b : a >= b;
      }
      if (!ok) break;
    }
    if (ok) return true;
  }
  return false;
}

}  // namespace redlab::scenario
