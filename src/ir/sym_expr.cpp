#include "ir/sym_expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "ir/error.h"

namespace tilefuse {

struct SymExpr::Node {
  Kind kind;
  int64_t value = 0;             // Const
  std::string name;              // Sym
  std::vector<SymExpr> operands; // everything else
  std::string text;              // canonical printed form
};

namespace {

int64_t floordiv_i64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t mod_i64(int64_t a, int64_t b) { return a - floordiv_i64(a, b) * b; }

// Dimension arithmetic never wraps silently: a model whose sizes overflow int64 is rejected.
int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail_user("symbolic dimension arithmetic overflows int64: {} + {}", a, b);
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail_user("symbolic dimension arithmetic overflows int64: {} * {}", a, b);
  return r;
}

// Printing precedence: sums bind loosest, then products/divisions, then atoms.
int precedence(SymExpr::Kind kind) {
  switch (kind) {
    case SymExpr::Kind::Add: return 1;
    case SymExpr::Kind::Mul:
    case SymExpr::Kind::FloorDiv:
    case SymExpr::Kind::Mod: return 2;
    default: return 3;
  }
}

std::string wrap(const SymExpr& e, int min_precedence) {
  bool negative_const = e.is_const() && e.value() < 0;
  if (precedence(e.kind()) < min_precedence || (negative_const && min_precedence > 1)) {
    return "(" + e.to_string() + ")";
  }
  return e.to_string();
}

// Splits a product into its constant coefficient and the rest (1 when the term is constant).
std::pair<int64_t, SymExpr> split_coefficient(const SymExpr& term) {
  if (term.is_const()) return {term.value(), SymExpr(1)};
  if (term.kind() == SymExpr::Kind::Mul && term.operands().front().is_const()) {
    const auto& ops = term.operands();
    SymExpr rest = ops[1];
    for (size_t i = 2; i < ops.size(); ++i) rest = rest * ops[i];
    return {ops.front().value(), rest};
  }
  return {1, term};
}

}  // namespace

// Builds canonical nodes. Every constructor of a compound expression goes through here.
struct SymSimplifier {
  using Kind = SymExpr::Kind;

  static SymExpr leaf(Kind kind, int64_t value, std::string name) {
    auto node = std::make_shared<SymExpr::Node>();
    node->kind = kind;
    node->value = value;
    node->name = std::move(name);
    node->text = kind == Kind::Const ? std::to_string(value) : node->name;
    return SymExpr(std::shared_ptr<const SymExpr::Node>(std::move(node)));
  }

  static SymExpr raw(Kind kind, std::vector<SymExpr> operands) {
    auto node = std::make_shared<SymExpr::Node>();
    node->kind = kind;
    node->operands = std::move(operands);
    node->text = print(kind, node->operands);
    return SymExpr(std::shared_ptr<const SymExpr::Node>(std::move(node)));
  }

  static std::string print(Kind kind, const std::vector<SymExpr>& ops) {
    switch (kind) {
      case Kind::Add: {
        std::string out = ops[0].to_string();
        for (size_t i = 1; i < ops.size(); ++i) {
          auto [coef, rest] = split_coefficient(ops[i]);
          if (coef < 0) {
            SymExpr positive = SymExpr(-coef) * rest;
            out += " - " + wrap(positive, 2);
          } else {
            out += " + " + ops[i].to_string();
          }
        }
        return out;
      }
      case Kind::Mul: {
        // A negative coefficient prints as a sign ("-N", "-2*N"); after a sign every factor is
        // an atom, so "-(N//2)" does not read back as "(-N)//2".
        if (ops[0].is_const() && ops[0].value() < 0) {
          std::string out = ops[0].value() == -1 ? "-" : "-" + ops[0].to_string().substr(1) + "*";
          for (size_t i = 1; i < ops.size(); ++i) out += (i > 1 ? "*" : "") + wrap(ops[i], 3);
          return out;
        }
        std::string out = wrap(ops[0], 2);
        for (size_t i = 1; i < ops.size(); ++i) out += "*" + wrap(ops[i], 3);
        return out;
      }
      case Kind::FloorDiv: return wrap(ops[0], 2) + "//" + wrap(ops[1], 3);
      case Kind::Mod: return wrap(ops[0], 2) + "%" + wrap(ops[1], 3);
      case Kind::Max: return "max(" + ops[0].to_string() + ", " + ops[1].to_string() + ")";
      case Kind::Min: return "min(" + ops[0].to_string() + ", " + ops[1].to_string() + ")";
      default: fail_internal("SymExpr print: leaf kind in compound print");
    }
  }

  // Sum: flatten, fold constants, collect like terms by their non-constant part, sort.
  static SymExpr add(const std::vector<SymExpr>& inputs) {
    std::map<std::string, std::pair<int64_t, SymExpr>> terms;
    int64_t constant = 0;
    std::vector<SymExpr> stack(inputs.rbegin(), inputs.rend());
    while (!stack.empty()) {
      SymExpr e = stack.back();
      stack.pop_back();
      if (e.kind() == Kind::Add) {
        for (auto it = e.operands().rbegin(); it != e.operands().rend(); ++it) stack.push_back(*it);
        continue;
      }
      auto [coef, rest] = split_coefficient(e);
      if (rest.is_const()) {
        constant = checked_add(constant, checked_mul(coef, rest.value()));
        continue;
      }
      auto [it, inserted] = terms.try_emplace(rest.to_string(), 0, rest);
      it->second.first = checked_add(it->second.first, coef);
    }
    std::vector<SymExpr> ops;
    for (auto& [key, term] : terms) {
      if (term.first == 0) continue;
      ops.push_back(term.first == 1 ? term.second : mul({SymExpr(term.first), term.second}));
    }
    if (constant != 0) ops.push_back(SymExpr(constant));
    if (ops.empty()) return SymExpr(0);
    if (ops.size() == 1) return ops[0];
    return raw(Kind::Add, std::move(ops));
  }

  // Product: flatten, fold constants, sort factors; a constant times a sum is distributed so
  // linear expressions have one canonical form.
  static SymExpr mul(const std::vector<SymExpr>& inputs) {
    int64_t constant = 1;
    std::vector<SymExpr> factors;
    std::vector<SymExpr> stack(inputs.rbegin(), inputs.rend());
    while (!stack.empty()) {
      SymExpr e = stack.back();
      stack.pop_back();
      if (e.kind() == Kind::Mul) {
        for (auto it = e.operands().rbegin(); it != e.operands().rend(); ++it) stack.push_back(*it);
      } else if (e.is_const()) {
        constant = checked_mul(constant, e.value());
      } else {
        factors.push_back(e);
      }
    }
    if (constant == 0) return SymExpr(0);
    if (factors.empty()) return SymExpr(constant);
    if (factors.size() == 1 && factors[0].kind() == Kind::Add && constant != 1) {
      std::vector<SymExpr> distributed;
      for (const auto& t : factors[0].operands()) distributed.push_back(mul({SymExpr(constant), t}));
      return add(distributed);
    }
    std::sort(factors.begin(), factors.end());
    if (constant == 1 && factors.size() == 1) return factors[0];
    std::vector<SymExpr> ops;
    if (constant != 1) ops.push_back(SymExpr(constant));
    ops.insert(ops.end(), factors.begin(), factors.end());
    return raw(Kind::Mul, std::move(ops));
  }

  static SymExpr floordiv(const SymExpr& a, const SymExpr& b) {
    if (b.is_const() && b.value() == 0) fail_user("symbolic dimension: division by zero in {}//0", a.to_string());
    if (a.is_const() && b.is_const()) return SymExpr(floordiv_i64(a.value(), b.value()));
    if (b.is_const() && b.value() == 1) return a;
    if (a.is_const() && a.value() == 0) return SymExpr(0);
    if (a == b) return SymExpr(1);
    if (b.is_const()) {
      // (k*b*x + m*b) // b == k*x + m when every term's coefficient is a multiple of b.
      std::vector<SymExpr> terms = a.kind() == Kind::Add ? a.operands() : std::vector<SymExpr>{a};
      std::vector<SymExpr> divided;
      for (const auto& t : terms) {
        auto [coef, rest] = split_coefficient(t);
        if (coef % b.value() != 0) return raw(Kind::FloorDiv, {a, b});
        divided.push_back(mul({SymExpr(coef / b.value()), rest}));
      }
      return add(divided);
    }
    return raw(Kind::FloorDiv, {a, b});
  }

  static SymExpr mod(const SymExpr& a, const SymExpr& b) {
    if (b.is_const() && b.value() == 0) fail_user("symbolic dimension: modulo by zero in {}%0", a.to_string());
    if (a.is_const() && b.is_const()) return SymExpr(mod_i64(a.value(), b.value()));
    if (b.is_const() && b.value() == 1) return SymExpr(0);
    if (a == b) return SymExpr(0);
    if (b.is_const()) {
      auto [coef, rest] = split_coefficient(a);
      if (a.kind() != Kind::Add && coef % b.value() == 0) return SymExpr(0);
    }
    return raw(Kind::Mod, {a, b});
  }

  static SymExpr extremum(Kind kind, const SymExpr& a, const SymExpr& b) {
    if (a.is_const() && b.is_const()) {
      return SymExpr(kind == Kind::Max ? std::max(a.value(), b.value()) : std::min(a.value(), b.value()));
    }
    if (a == b) return a;
    // Differences that are constant decide the comparison (max(N+1, N) == N+1).
    SymExpr diff = a - b;
    if (diff.is_const()) return (diff.value() >= 0) == (kind == Kind::Max) ? a : b;
    return a < b ? raw(kind, {a, b}) : raw(kind, {b, a});
  }

  static SymExpr rebuild(Kind kind, const std::vector<SymExpr>& ops) {
    switch (kind) {
      case Kind::Add: return add(ops);
      case Kind::Mul: return mul(ops);
      case Kind::FloorDiv: return floordiv(ops[0], ops[1]);
      case Kind::Mod: return mod(ops[0], ops[1]);
      case Kind::Max:
      case Kind::Min: return extremum(kind, ops[0], ops[1]);
      default: fail_internal("SymExpr rebuild: leaf kind");
    }
  }
};

SymExpr::SymExpr(int64_t value) : SymExpr(SymSimplifier::leaf(Kind::Const, value, {})) {}

SymExpr SymExpr::symbol(std::string name) {
  if (name.empty()) fail_user("symbolic dimension: empty symbol name");
  return SymSimplifier::leaf(Kind::Sym, 0, std::move(name));
}

SymExpr::Kind SymExpr::kind() const { return node_->kind; }

int64_t SymExpr::value() const {
  if (!is_const()) fail_internal("SymExpr::value() on non-constant '{}'", to_string());
  return node_->value;
}

std::optional<int64_t> SymExpr::const_value() const {
  if (is_const()) return node_->value;
  return std::nullopt;
}

const std::string& SymExpr::name() const {
  if (!is_symbol()) fail_internal("SymExpr::name() on non-symbol '{}'", to_string());
  return node_->name;
}

const std::vector<SymExpr>& SymExpr::operands() const { return node_->operands; }

const std::string& SymExpr::to_string() const { return node_->text; }

int64_t SymExpr::evaluate(const SymbolBindings& bindings) const {
  switch (kind()) {
    case Kind::Const: return node_->value;
    case Kind::Sym: {
      auto it = bindings.find(node_->name);
      if (it == bindings.end()) fail_user("symbolic dimension '{}' has no value bound", node_->name);
      return it->second;
    }
    case Kind::Add: {
      int64_t sum = 0;
      for (const auto& op : operands()) sum = checked_add(sum, op.evaluate(bindings));
      return sum;
    }
    case Kind::Mul: {
      int64_t product = 1;
      for (const auto& op : operands()) product = checked_mul(product, op.evaluate(bindings));
      return product;
    }
    case Kind::FloorDiv:
    case Kind::Mod: {
      int64_t a = operands()[0].evaluate(bindings);
      int64_t b = operands()[1].evaluate(bindings);
      if (b == 0) fail_user("symbolic dimension '{}' divides by zero", to_string());
      return kind() == Kind::FloorDiv ? floordiv_i64(a, b) : mod_i64(a, b);
    }
    case Kind::Max: return std::max(operands()[0].evaluate(bindings), operands()[1].evaluate(bindings));
    case Kind::Min: return std::min(operands()[0].evaluate(bindings), operands()[1].evaluate(bindings));
  }
  fail_internal("SymExpr::evaluate: bad kind");
}

SymExpr SymExpr::substitute(const SymbolBindings& bindings) const {
  if (is_const()) return *this;
  if (is_symbol()) {
    auto it = bindings.find(node_->name);
    return it == bindings.end() ? *this : SymExpr(it->second);
  }
  std::vector<SymExpr> ops;
  for (const auto& op : operands()) ops.push_back(op.substitute(bindings));
  return SymSimplifier::rebuild(kind(), ops);
}

std::set<std::string> SymExpr::symbols() const {
  std::set<std::string> out;
  if (is_symbol()) out.insert(node_->name);
  for (const auto& op : operands()) {
    auto inner = op.symbols();
    out.insert(inner.begin(), inner.end());
  }
  return out;
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) { return SymSimplifier::add({a, b}); }
SymExpr operator-(const SymExpr& a, const SymExpr& b) { return SymSimplifier::add({a, SymSimplifier::mul({SymExpr(-1), b})}); }
SymExpr operator-(const SymExpr& a) { return SymSimplifier::mul({SymExpr(-1), a}); }
SymExpr operator*(const SymExpr& a, const SymExpr& b) { return SymSimplifier::mul({a, b}); }
SymExpr floordiv(const SymExpr& a, const SymExpr& b) { return SymSimplifier::floordiv(a, b); }
SymExpr mod(const SymExpr& a, const SymExpr& b) { return SymSimplifier::mod(a, b); }
SymExpr max(const SymExpr& a, const SymExpr& b) { return SymSimplifier::extremum(SymExpr::Kind::Max, a, b); }
SymExpr min(const SymExpr& a, const SymExpr& b) { return SymSimplifier::extremum(SymExpr::Kind::Min, a, b); }

// ---- parsing: expr := term (('+'|'-') term)*; term := unary (('*'|'//'|'%') unary)*;
//      unary := '-' unary | atom; atom := int | name | '(' expr ')' | (max|min) '(' expr ',' expr ')'
namespace {

class SymParser {
 public:
  explicit SymParser(std::string_view text) : text_(text) {}

  SymExpr parse_all() {
    SymExpr e = expr();
    skip_space();
    if (pos_ != text_.size()) error("unexpected '" + std::string(1, text_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail_user("cannot parse dimension '{}': {} at offset {}", text_, what, pos_);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) == token) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  SymExpr expr() {
    SymExpr e = term();
    while (true) {
      if (accept("+")) e = e + term();
      else if (accept("-")) e = e - term();
      else return e;
    }
  }
  SymExpr term() {
    SymExpr e = unary();
    while (true) {
      if (accept("//")) e = floordiv(e, unary());
      else if (accept("*")) e = e * unary();
      else if (accept("%")) e = mod(e, unary());
      else return e;
    }
  }
  SymExpr unary() {
    if (accept("-")) return -unary();
    return atom();
  }
  SymExpr atom() {
    skip_space();
    if (pos_ >= text_.size()) error("unexpected end");
    if (accept("(")) {
      SymExpr e = expr();
      if (!accept(")")) error("expected ')'");
      return e;
    }
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      int64_t v = 0;
      auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, v);
      if (ec != std::errc()) {
        pos_ = start;
        error("integer out of the int64 range");
      }
      return SymExpr(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.')) {
        ++pos_;
      }
      std::string word(text_.substr(start, pos_ - start));
      if ((word == "max" || word == "min") && accept("(")) {
        SymExpr a = expr();
        if (!accept(",")) error("expected ','");
        SymExpr b = expr();
        if (!accept(")")) error("expected ')'");
        return word == "max" ? max(a, b) : min(a, b);
      }
      return SymExpr::symbol(word);
    }
    error("unexpected '" + std::string(1, c) + "'");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

SymExpr SymExpr::parse(std::string_view text) { return SymParser(text).parse_all(); }

}  // namespace tilefuse
