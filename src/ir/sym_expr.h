// Symbolic integer expressions for tensor dimensions.
//
// A Dim is either a known integer or an expression over named symbols ("N", "seq") built with
// + - * floordiv mod max min. Expressions are kept in a canonical simplified form, so two
// expressions that simplify to the same form compare equal (2*(N+1) == 2*N+2). Static shapes
// are the special case where every Dim is a constant.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tilefuse {

using SymbolBindings = std::map<std::string, int64_t, std::less<>>;

class SymExpr {
 public:
  enum class Kind { Const, Sym, Add, Mul, FloorDiv, Mod, Max, Min };

  SymExpr() : SymExpr(int64_t{0}) {}
  SymExpr(int64_t value);  // NOLINT(google-explicit-constructor): dims are usually plain ints
  SymExpr(int value) : SymExpr(int64_t{value}) {}
  static SymExpr symbol(std::string name);
  // Parses the printed form ("2*N + 1", "max(N, 4)", "N//2"); throws UserError on bad text.
  static SymExpr parse(std::string_view text);

  Kind kind() const;
  bool is_const() const { return kind() == Kind::Const; }
  bool is_symbol() const { return kind() == Kind::Sym; }
  // The constant value; throws InternalError if not constant.
  int64_t value() const;
  std::optional<int64_t> const_value() const;
  // The symbol's name; throws InternalError if not a symbol.
  const std::string& name() const;
  const std::vector<SymExpr>& operands() const;

  // Evaluates with every symbol bound; throws UserError naming an unbound symbol.
  int64_t evaluate(const SymbolBindings& bindings) const;
  // Replaces the bound symbols and re-simplifies; unbound symbols stay.
  SymExpr substitute(const SymbolBindings& bindings) const;
  std::set<std::string> symbols() const;

  // Canonical text; equal expressions print identically.
  const std::string& to_string() const;

  friend bool operator==(const SymExpr& a, const SymExpr& b) { return a.to_string() == b.to_string(); }
  friend bool operator<(const SymExpr& a, const SymExpr& b) { return a.to_string() < b.to_string(); }
  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  friend SymExpr floordiv(const SymExpr& a, const SymExpr& b);
  friend SymExpr mod(const SymExpr& a, const SymExpr& b);
  friend SymExpr max(const SymExpr& a, const SymExpr& b);
  friend SymExpr min(const SymExpr& a, const SymExpr& b);

  struct Node;

 private:
  explicit SymExpr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
  friend struct SymSimplifier;
};

// A tensor dimension.
using Dim = SymExpr;

}  // namespace tilefuse
