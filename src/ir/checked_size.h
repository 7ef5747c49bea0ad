// Element counts and byte sizes of tensors. Shapes come from models and files that anyone can
// write, so every count is computed with overflow checks: a shape whose size does not fit is a
// UserError naming the tensor and its shape, never a wrapped-around allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace tilefuse {

// Largest byte size a tensor may have: 2^62, far above any memory, so that offsets and sums of a
// few sizes cannot overflow either.
inline constexpr size_t kMaxTensorBytes = size_t{1} << 62;

// Product of `dims`. Throws UserError "<what> has shape [..]: ..." if a dim is negative or the
// product does not fit in int64.
int64_t checked_numel(const std::vector<int64_t>& dims, std::string_view what);

// checked_numel(dims) * dtype_size(dtype), refusing more than kMaxTensorBytes.
size_t checked_nbytes(DType dtype, const std::vector<int64_t>& dims, std::string_view what);

// checked_nbytes without a message: nullopt where checked_nbytes would throw. For paths that
// run often (every tensor, every inferred shape) and build their message only when it is needed.
std::optional<size_t> nbytes_if_valid(DType dtype, const std::vector<int64_t>& dims);

// a + b for sizes, refusing a sum above kMaxTensorBytes.
size_t checked_add_bytes(size_t a, size_t b, std::string_view what);

}  // namespace tilefuse
