#include "passes/pattern_registry.h"

#include "ir/error.h"

namespace tilefuse::passes {

PatternRegistry PatternRegistry::with_builtins() {
  PatternRegistry registry;
  for (auto& p : builtin_patterns()) registry.add(std::move(p));
  return registry;
}

void PatternRegistry::add(Pattern pattern) {
  pattern.validate();
  for (const auto& existing : patterns_) {
    if (existing.name == pattern.name) fail_user("fusion pattern '{}' is registered twice", pattern.name);
  }
  patterns_.push_back(std::move(pattern));
}

}  // namespace tilefuse::passes
