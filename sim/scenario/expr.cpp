#include "sim/scenario/expr.h"

#include <charconv>
#include <limits>

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
// Expr: recursive descent over + - * / % with unary minus and parentheses.
// ---------------------------------------------------------------------------------------

struct Expr::Node {
  char op = 0;  // 0 = leaf
  int64_t value = 0;
  std::string name;  // leaf: a name, or empty for a constant
  std::shared_ptr<const Node> left, right;
};

namespace {

struct ExprParser {
  std::string_view s;
  const NameCheck& known;
  size_t i = 0;
  std::string error;
  size_t error_at = 0;
  int depth = 0;

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
  std::shared_ptr<const Expr::Node> sum() {
    auto left = product();
    while (left) {
      skip();
      if (i >= s.size() || (s[i] != '+' && s[i] != '-')) break;
      char op = s[i++];
      auto right = product();
      if (!right) return nullptr;
      left = std::make_shared<Expr::Node>(Expr::Node{op, 0, {}, left, right});
    }
    return left;
  }
  std::shared_ptr<const Expr::Node> product() {
    auto left = unary();
    while (left) {
      skip();
      if (i >= s.size() || (s[i] != '*' && s[i] != '/' && s[i] != '%')) break;
      char op = s[i++];
      auto right = unary();
      if (!right) return nullptr;
      left = std::make_shared<Expr::Node>(Expr::Node{op, 0, {}, left, right});
    }
    return left;
  }
  std::shared_ptr<const Expr::Node> unary() {
    skip();
    if (i < s.size() && s[i] == '-') {
      // Each '-' recurses once: bounded like parentheses, so "------...1" cannot exhaust the
      // stack.
      if (++depth > 32) return fail("expression nested too deep"), nullptr;
      i++;
      auto operand = unary();
      depth--;
      if (!operand) return nullptr;
      auto zero = std::make_shared<Expr::Node>();
      return std::make_shared<Expr::Node>(Expr::Node{'-', 0, {}, zero, operand});
    }
    return primary();
  }
  std::shared_ptr<const Expr::Node> primary() {
    skip();
    if (i >= s.size()) return fail("expected a number or a name, found the end"), nullptr;
    if (s[i] == '(') {
      if (++depth > 32) return fail("expression nested too deep"), nullptr;
      i++;
      auto inner = sum();
      if (!inner) return nullptr;
      skip();
      if (i >= s.size() || s[i] != ')') return fail("expected ')'"), nullptr;
      i++;
      depth--;
      return inner;
    }
    if (s[i] >= '0' && s[i] <= '9') {
      size_t start = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') i++;
      auto v = parse_int(s.substr(start, i - start));
      if (!v) {
        i = start;
        return fail("number out of range"), nullptr;
      }
      auto n = std::make_shared<Expr::Node>();
      n->value = *v;
      return n;
    }
    if (name_start(s[i])) {
      size_t start = i;
      while (i < s.size() && name_char(s[i])) i++;
      std::string name(s.substr(start, i - start));
      if (known && !known(name)) {
        i = start;
        return fail("unknown name '" + name + "'"), nullptr;
      }
      auto n = std::make_shared<Expr::Node>();
      n->name = std::move(name);
      return n;
    }
    return fail(std::string("unexpected '") + s[i] + "' in expression"), nullptr;
  }
};

int64_t eval_node(const Expr::Node& n, const Env& env) {
  if (n.op == 0) {
    if (n.name.empty()) return n.value;
    auto v = env(n.name);
    if (!v) throw EvalError{"'" + n.name + "' has no value"};
    auto i = parse_int(*v);
    if (!i) throw EvalError{"'" + n.name + "' is \"" + *v + "\", not an integer"};
    return *i;
  }
  int64_t a = eval_node(*n.left, env);
  int64_t b = eval_node(*n.right, env);
  int64_t r = 0;
  switch (n.op) {
    case '+':
      if (__builtin_add_overflow(a, b, &r)) throw EvalError{"integer overflow"};
      return r;
    case '-':
      if (__builtin_sub_overflow(a, b, &r)) throw EvalError{"integer overflow"};
      return r;
    case '*':
      if (__builtin_mul_overflow(a, b, &r)) throw EvalError{"integer overflow"};
      return r;
    case '/':
    case '%':
      if (b == 0) throw EvalError{"division by zero"};
      if (a == std::numeric_limits<int64_t>::min() && b == -1) throw EvalError{"integer overflow"};
      return n.op == '/' ? a / b : a % b;
  }
  return 0;
}

}  // namespace

std::optional<Expr> Expr::parse(std::string_view text, const NameCheck& known, std::string* error,
                                size_t* offset) {
  ExprParser p{text, known, 0, {}, 0, 0};
  auto root = p.sum();
  if (root) {
    p.skip();
    if (p.i < text.size()) {
      p.fail(std::string("unexpected '") + text[p.i] + "' in expression");
      root = nullptr;
    }
  }
  if (!root) {
    if (error) *error = p.error;
    if (offset) *offset = p.error_at;
    return std::nullopt;
  }
  Expr e;
  e.root_ = std::move(root);
  e.source_ = std::string(text);
  return e;
}

Expr Expr::constant(int64_t value) {
  Expr e;
  auto n = std::make_shared<Node>();
  n->value = value;
  e.root_ = std::move(n);
  e.source_ = std::to_string(value);
  return e;
}

int64_t Expr::eval(const Env& env) const {
  return eval_node(*root_, env);
}

bool Expr::is_constant() const {
  return root_->op == 0 && root_->name.empty();
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
  size_t i = 0;
  auto fail = [&](std::string message, size_t at) -> std::optional<Cond> {
    if (error) *error = std::move(message);
    if (offset) *offset = at;
    return std::nullopt;
  };
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') i++;
  };
  skip();
  if (i == text.size()) return c;
  while (true) {
    skip();
    size_t start = i;
    if (i >= text.size() || !name_start(text[i])) return fail("expected a name", i);
    while (i < text.size() && word_char(text[i])) i++;
    Term term;
    term.name = std::string(text.substr(start, i - start));
    if (known && !known(term.name)) return fail("unknown name '" + term.name + "'", start);
    skip();
    static const char* kOps[] = {"!=", "<=", ">=", "=", "<", ">"};
    for (const char* op : kOps) {
      std::string_view o(op);
      if (text.substr(i, o.size()) == o) {
        term.op = std::string(o);
        i += o.size();
        break;
      }
    }
    if (term.op.empty()) return fail("expected =, !=, <, <=, > or >= after '" + term.name + "'", i);
    skip();
    start = i;
    while (i < text.size() && (word_char(text[i]) || (i == start && text[i] == '-'))) i++;
    if (i == start) return fail("expected a value after '" + term.op + "'", i);
    term.value = std::string(text.substr(start, i - start));
    bool is_number = parse_int(term.value).has_value();
    // = and != compare with a literal ("atomic=watch" even if "watch" also names a
    // variant); the ordering operators may compare with another name ("pause_ms>ttl_ms").
    bool ordering = term.op != "=" && term.op != "!=";
    term.value_is_name = ordering && !is_number && known && known(term.value);
    if (term.op != "=" && term.op != "!=" && !is_number && !term.value_is_name)
      return fail("'" + term.op + "' compares integers; '" + term.value + "' is neither", start);
    c.terms_.push_back(std::move(term));
    skip();
    if (i == text.size()) break;
    if (text.substr(i, 4) != "and ") return fail("expected 'and' or the end", i);
    i += 4;
  }
  return c;
}

bool Cond::eval(const Env& env) const {
  for (const Term& t : terms_) {
    auto left = env(t.name);
    if (!left) throw EvalError{"'" + t.name + "' has no value"};
    std::string right = t.value;
    if (t.value_is_name) {
      auto v = env(t.value);
      if (!v) throw EvalError{"'" + t.value + "' has no value"};
      right = *v;
    }
    auto a = parse_int(*left);
    auto b = parse_int(right);
    bool ok = false;
    if (t.op == "=" || t.op == "!=") {
      bool eq = (a && b) ? *a == *b : *left == right;
      ok = (t.op == "=") == eq;
    } else {
      if (!a || !b)
        throw EvalError{"'" + t.op + "' needs integers: \"" + *left + "\" vs \"" + right + "\""};
      ok = t.op == "<" ? *a < *b : t.op == "<=" ? *a <= *b : t.op == ">" ? *a > *b : *a >= *b;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace redlab::scenario
