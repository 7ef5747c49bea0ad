#include "reference/index_map.h"

#include <cstring>

#include "ir/checked_size.h"
#include "ir/error.h"
#include "ir/memory_budget.h"
#include "ir/shape.h"

namespace tilefuse::reference {

std::vector<int64_t> strided_indices(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                                     int64_t base) {
  int64_t count = product(shape);
  // The index list is 8 bytes per element, twice an f32 output: it counts against the cap too.
  if (const auto bytes = nbytes_if_valid(DType::i64, shape); !bytes || !memory_available(*bytes)) {
    const std::string what = fmt::format("the index map of shape {}", dims_to_string(shape));
    require_memory(checked_nbytes(DType::i64, shape, what), what);
  }
  std::vector<int64_t> out(static_cast<size_t>(count));
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offset = base;
  for (int64_t i = 0; i < count; ++i) {
    out[i] = offset;
    // Odometer increment of the multi-index, innermost dim fastest, updating the offset.
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      ++index[d];
      offset += strides[d];
      if (index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> broadcast_indices(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape) {
  if (in_shape.size() > out_shape.size()) {
    fail_internal("broadcast_indices: {} has more dims than {}", dims_to_string(in_shape), dims_to_string(out_shape));
  }
  size_t lead = out_shape.size() - in_shape.size();
  std::vector<int64_t> in_strides = contiguous_strides(in_shape);
  std::vector<int64_t> strides(out_shape.size(), 0);  // missing and size-1 dims repeat: stride 0
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (in_shape[d] == out_shape[lead + d]) {
      strides[lead + d] = in_strides[d];
    } else if (in_shape[d] != 1) {
      fail_internal("broadcast_indices: {} does not broadcast to {}", dims_to_string(in_shape),
                    dims_to_string(out_shape));
    }
  }
  return strided_indices(out_shape, strides);
}

std::vector<int64_t> broadcast_shape(const Node& node, const std::vector<Tensor>& tensors) {
  std::vector<int64_t> shape;
  for (const Tensor& t : tensors) {
    if (t.defined()) shape = broadcast_dims(shape, t.shape(), node.describe());
  }
  return shape;
}

Tensor gather_elements(const Tensor& source, const std::vector<int64_t>& indices, std::vector<int64_t> shape) {
  Tensor out(source.dtype(), std::move(shape));
  if (static_cast<int64_t>(indices.size()) != out.numel()) {
    fail_internal("gather_elements: {} indices for {}", indices.size(), out.summary());
  }
  size_t size = dtype_size(source.dtype());
  const auto* src = static_cast<const uint8_t*>(source.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (size_t i = 0; i < indices.size(); ++i) std::memcpy(dst + i * size, src + indices[i] * size, size);
  return out;
}

int64_t pad_source(const std::string& mode, int64_t p, int64_t n) {
  if (p >= 0 && p < n) return p;
  if (mode == "constant" || n == 0) return -1;
  if (mode == "edge") return p < 0 ? 0 : n - 1;
  if (mode == "wrap") return ((p % n) + n) % n;
  if (n == 1) return 0;  // reflect
  const int64_t period = 2 * (n - 1);
  const int64_t r = ((p % period) + period) % period;
  return r < n ? r : period - r;
}

}  // namespace tilefuse::reference
