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

size_t checked_nbytes(DType dtype, const std::vector<int64_t>& dims, std::string_view what) {
  const auto numel = static_cast<size_t>(checked_numel(dims, what));
  const size_t element = dtype_size(dtype);
  if (numel > kMaxTensorBytes / element) {
    fail_user("{} has shape {}: {} elements of {} bytes exceed the largest tensor size of 2^62 bytes", what,
              dims_to_string(dims), numel, element);
  }
  return numel * element;
}

size_t checked_add_bytes(size_t a, size_t b, std::string_view what) {
  if (a > kMaxTensorBytes || b > kMaxTensorBytes - a) {
    fail_user("{}: {} + {} bytes exceed the largest size of 2^62 bytes", what, a, b);
  }
  return a + b;
}

}  // namespace tilefuse
