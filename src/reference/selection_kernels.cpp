// Kernels that select or join parts of tensors: Concat, Split, Slice, Gather.
#include <algorithm>
#include <cstring>

#include "ir/shape.h"
#include "reference/index_map.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

// The part of x of `shape` starting at index `start`, taking every steps[d]-th element along d.
Tensor strided_part(const Tensor& x, const std::vector<int64_t>& start, const std::vector<int64_t>& steps,
                    const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides = contiguous_strides(x.shape());
  int64_t base = 0;
  for (size_t d = 0; d < strides.size(); ++d) {
    base += start[d] * strides[d];
    strides[d] *= steps[d];
  }
  return gather_elements(x, strided_indices(shape, strides, base), shape);
}

std::vector<Tensor> concat(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& first = required_input(node, in, 0);
  if (!node.has_attr("axis")) fail_user("{}: attribute 'axis' is required", node.describe());
  if (first.rank() == 0) fail_user("{}: cannot concatenate scalars ({})", node.describe(), first.summary());
  int64_t axis = node_axis(node, node.attr_int("axis", 0), first.rank());
  std::vector<int64_t> shape = first.shape();
  shape[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = required_input(node, in, i);
    require_same_dtype(node, first, t);
    std::vector<int64_t> a = t.shape(), b = first.shape();
    if (a.size() == b.size()) a[axis] = b[axis] = 0;
    if (a != b) {
      fail_user("{}: input {} {} does not match input 0 {} outside axis {}", node.describe(), i, t.summary(),
                first.summary(), axis);
    }
    shape[axis] += t.shape()[axis];
  }
  // Row-major: for each index of the dims before `axis`, the inputs contribute one contiguous
  // block each, in order.
  Tensor out(first.dtype(), shape);
  int64_t outer = product(std::vector<int64_t>(shape.begin(), shape.begin() + axis));
  auto* dst = static_cast<uint8_t*>(out.raw());
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor& t : in) {
      size_t block = t.nbytes() / static_cast<size_t>(std::max<int64_t>(outer, 1));
      std::memcpy(dst, static_cast<const uint8_t*>(t.raw()) + o * block, block);
      dst += block;
    }
  }
  return {out};
}

// Split sizes: from input 1, else `num_outputs` parts of ceil(n / parts) (opset 18, the last part
// smaller), else one equal part per output (opset 13, which must divide evenly).
std::vector<int64_t> split_sizes(const Node& node, const std::vector<Tensor>& in, int64_t dim) {
  auto parts = static_cast<int64_t>(node.outputs.size());
  if (const Tensor* split = optional_input(in, 1)) {
    std::vector<int64_t> sizes = int_list(node, *split, "input 1 (split)");
    int64_t total = 0;
    for (int64_t s : sizes) total += s;
    if (static_cast<int64_t>(sizes.size()) != parts || total != dim ||
        std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 0; })) {
      fail_user("{}: split sizes {} must be {} non-negative sizes summing to the axis size {}", node.describe(),
                dims_to_string(sizes), parts, dim);
    }
    return sizes;
  }
  int64_t chunk = 0;
  if (node.has_attr("num_outputs")) {
    parts = node.attr_int("num_outputs", parts);
    if (parts != static_cast<int64_t>(node.outputs.size()) || parts < 1) {
      fail_user("{}: num_outputs {} does not match the {} outputs", node.describe(), parts, node.outputs.size());
    }
    chunk = (dim + parts - 1) / parts;
  } else {
    if (parts < 1 || dim % parts != 0) {
      fail_user("{}: axis size {} does not split into {} equal parts", node.describe(), dim, parts);
    }
    chunk = dim / parts;
  }
  std::vector<int64_t> sizes;
  for (int64_t i = 0, left = dim; i < parts; ++i, left -= std::min(chunk, left)) sizes.push_back(std::min(chunk, left));
  return sizes;
}

std::vector<Tensor> split(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  if (x.rank() == 0) fail_user("{}: cannot split a scalar", node.describe());
  int64_t axis = node_axis(node, node.attr_int("axis", 0), x.rank());
  std::vector<Tensor> outputs;
  std::vector<int64_t> start(x.shape().size(), 0), steps(x.shape().size(), 1), shape = x.shape();
  for (int64_t size : split_sizes(node, in, x.shape()[axis])) {
    shape[axis] = size;
    outputs.push_back(strided_part(x, start, steps, shape));
    start[axis] += size;
  }
  return outputs;
}

// One axis of a Slice: the first index, the step and the count, after ONNX's clamping rules
// (negative indices count from the end; the start and end are clamped to [0, n] for a positive
// step and to [-1, n-1] for a negative one, so out-of-range bounds select up to the edge).
struct SliceRange {
  int64_t start, step, count;
};

SliceRange slice_range(int64_t start, int64_t end, int64_t step, int64_t n) {
  if (start < 0) start += n;
  if (end < 0) end += n;
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
  start = std::min(std::max(start, int64_t{0}), hi);
  end = std::min(std::max(end, lo), hi);
  int64_t distance = step > 0 ? end - start : start - end;
  int64_t magnitude = step > 0 ? step : -step;
  int64_t count = distance <= 0 ? 0 : (distance + magnitude - 1) / magnitude;
  return {start, step, count};
}

std::vector<Tensor> slice(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> starts = int_list(node, required_input(node, in, 1), "input 1 (starts)");
  std::vector<int64_t> ends = int_list(node, required_input(node, in, 2), "input 2 (ends)");
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (const Tensor* t = optional_input(in, 3)) axes = int_list(node, *t, "input 3 (axes)");
  if (const Tensor* t = optional_input(in, 4)) steps = int_list(node, *t, "input 4 (steps)");
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    fail_user("{}: starts, ends, axes and steps must have equal lengths, got {}, {}, {}, {}", node.describe(),
              starts.size(), ends.size(), axes.size(), steps.size());
  }
  axes = node_axes(node, axes, x.rank());
  std::vector<int64_t> first(x.shape().size(), 0), stride(x.shape().size(), 1), shape = x.shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (steps[i] == 0) fail_user("{}: step 0 on axis {} (steps must be non-zero)", node.describe(), axes[i]);
    SliceRange r = slice_range(starts[i], ends[i], steps[i], x.shape()[axes[i]]);
    first[axes[i]] = r.start;
    stride[axes[i]] = r.step;
    shape[axes[i]] = r.count;
  }
  return {strided_part(x, first, stride, shape)};
}

std::vector<Tensor> gather(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& data = required_input(node, in, 0);
  const Tensor& indices = required_input(node, in, 1);
  require_dtype(node, indices, {DType::i32, DType::i64}, "input 1 (indices)");
  if (data.rank() == 0) fail_user("{}: cannot gather from a scalar", node.describe());
  int64_t axis = node_axis(node, node.attr_int("axis", 0), data.rank());
  int64_t n = data.shape()[axis];
  // Result shape: data.shape[:axis] + indices.shape + data.shape[axis+1:].
  std::vector<int64_t> outer_dims(data.shape().begin(), data.shape().begin() + axis);
  std::vector<int64_t> inner_dims(data.shape().begin() + axis + 1, data.shape().end());
  std::vector<int64_t> shape = outer_dims;
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), inner_dims.begin(), inner_dims.end());
  int64_t outer = product(outer_dims), inner = product(inner_dims);
  std::vector<int64_t> source;
  source.reserve(static_cast<size_t>(product(shape)));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < indices.numel(); ++j) {
      int64_t k = indices.get_i64(j);
      if (k < -n || k >= n) {
        fail_user("{}: index {} is out of range for axis {} of size {} (allowed [{}, {}])", node.describe(), k, axis,
                  n, -n, n - 1);
      }
      if (k < 0) k += n;
      for (int64_t i = 0; i < inner; ++i) source.push_back((o * n + k) * inner + i);
    }
  }
  return {gather_elements(data, source, shape)};
}

}  // namespace

void register_selection_kernels(KernelTable& table) {
  table["Concat"] = concat;
  table["Split"] = split;
  table["Slice"] = slice;
  table["Gather"] = gather;
}

}  // namespace tilefuse::reference
