#include "tiling/shape_bucket.h"

#include <bit>

#include <fmt/format.h>

#include "ir/error.h"

namespace tilefuse::tiling {

ShapeBucket shape_bucket(const std::vector<std::string>& symbols, const std::vector<int64_t>& values) {
  if (symbols.size() != values.size()) {
    fail_internal("shape_bucket: {} symbols but {} values", symbols.size(), values.size());
  }
  ShapeBucket bucket;
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (values[i] < 0) fail_internal("shape_bucket: symbol {} is {}", symbols[i], values[i]);
    const auto v = static_cast<uint64_t>(values[i]);
    const auto upper = static_cast<int64_t>(v <= 1 ? v : std::bit_ceil(v));
    bucket.sizes[symbols[i]] = upper;
    bucket.key += fmt::format("{}{}={}", bucket.key.empty() ? "" : ";", symbols[i], upper);
  }
  return bucket;
}

}  // namespace tilefuse::tiling
