// The set of fusion patterns the planner uses: the built-in families plus any the user registers.
#pragma once

#include <vector>

#include "passes/pattern.h"

namespace tilefuse::passes {

class PatternRegistry {
 public:
  // A registry holding the built-in families (see builtin_patterns.cpp).
  static PatternRegistry with_builtins();
  static PatternRegistry empty() { return PatternRegistry(); }

  // Validates and adds a pattern; throws UserError on an invalid pattern or a duplicate name.
  void add(Pattern pattern);
  const std::vector<Pattern>& patterns() const { return patterns_; }

 private:
  std::vector<Pattern> patterns_;
};

// The built-in families: elementwise chains, elementwise with broadcast operands,
// elementwise -> reduce, reduce -> elementwise epilogue, transposes next to elementwise ops, and
// elementwise epilogues of MatMul/Gemm.
std::vector<Pattern> builtin_patterns();

}  // namespace tilefuse::passes
