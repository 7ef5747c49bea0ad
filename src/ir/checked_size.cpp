#include "ir/checked_size.h"

#include "ir/error.h"
#include "ir/shape.h"

namespace tilefuse {

int64_t checked_numel(const std::vector<int64_t>& dims, std::string_view what) {
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) fail_user("{} has shape {}: dimension {} is negative", what, dims_to_string(dims), d);
  }
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(numel, d, &numel)) {
      fail_user("{} has shape {}: its element count does not fit in 64 bits", what, dims_to_string(dims));
    }
  }
  return numel;
}

std::optional<size_t> nbytes_if_valid(DType dtype, const std::vector<int64_t>& dims) {
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel)) return std::nullopt;
  }
  const size_t element = dtype_size(dtype);
  if (static_cast<size_t>(numel) > kMaxTensorBytes / element) return std::nullopt;
  return static_cast<size_t>(numel) * element;
}

size_t checked_nbytes(DType dtype, const std::vector<int64_t>& dims, std::string_view what) {
  if (const std::optional<size_t> bytes = nbytes_if_valid(dtype, dims)) return *bytes;
  const auto numel = static_cast<size_t>(checked_numel(dims, what));  // throws for negative dims and overflow
  fail_user("{} has shape {}: {} elements of {} bytes exceed the largest tensor size of 2^62 bytes", what,
            dims_to_string(dims), numel, dtype_size(dtype));
}

size_t checked_add_bytes(size_t a, size_t b, std::string_view what) {
  if (a > kMaxTensorBytes || b > kMaxTensorBytes - a) {
    fail_user("{}: {} + {} bytes exceed the largest size of 2^62 bytes", what, a, b);
  }
  return a + b;
}

}  // namespace tilefuse
