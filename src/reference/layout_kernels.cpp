// Kernels that rearrange or re-view elements without selecting: Transpose, Reshape, Flatten,
// Squeeze, Unsqueeze, Expand. Results are always fresh tensors, never views of an input, so no
// caller can modify a graph constant through an output.
#include <algorithm>
#include <numeric>

#include "ir/shape.h"
#include "reference/index_map.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

std::vector<Tensor> transpose(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
  for (int64_t d = 0; d < x.rank(); ++d) perm[d] = x.rank() - 1 - d;  // default: reverse the dims
  perm = node.attr_ints("perm", perm);
  std::vector<int64_t> sorted = perm, dims(static_cast<size_t>(x.rank()));
  std::sort(sorted.begin(), sorted.end());
  std::iota(dims.begin(), dims.end(), 0);
  if (sorted != dims) {
    fail_user("{}: perm {} is not a permutation of the {} dims of {}", node.describe(), dims_to_string(perm),
              x.rank(), x.summary());
  }
  std::vector<int64_t> in_strides = contiguous_strides(x.shape()), shape, strides;
  for (int64_t p : perm) {
    shape.push_back(x.shape()[p]);
    strides.push_back(in_strides[p]);
  }
  return {gather_elements(x, strided_indices(shape, strides), shape)};
}

// Reshape's target: 0 copies the input dim (unless allowzero), -1 is inferred from the count.
std::vector<int64_t> reshape_target(const Node& node, const Tensor& x, std::vector<int64_t> shape) {
  bool allow_zero = node.attr_int("allowzero", 0) != 0;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (static_cast<int64_t>(i) >= x.rank()) {
        fail_user("{}: shape {} copies dim {} (0), but the input {} has no such dim", node.describe(),
                  dims_to_string(shape), i, x.summary());
      }
      shape[i] = x.shape()[i];
    }
    if (shape[i] == -1) {
      if (inferred >= 0) fail_user("{}: shape {} has more than one -1", node.describe(), dims_to_string(shape));
      inferred = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      fail_user("{}: shape {} has a negative dim other than -1", node.describe(), dims_to_string(shape));
    } else {
      known *= shape[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      fail_user("{}: cannot infer the -1 in shape {} for input {} ({} elements)", node.describe(),
                dims_to_string(shape), x.summary(), x.numel());
    }
    shape[inferred] = x.numel() / known;
  }
  if (product(shape) != x.numel()) {
    fail_user("{}: cannot reshape {} ({} elements) to {} ({} elements)", node.describe(), x.summary(), x.numel(),
              dims_to_string(shape), product(shape));
  }
  return shape;
}

std::vector<Tensor> reshape(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> shape = int_list(node, required_input(node, in, 1), "input 1 (shape)");
  return {x.clone().reshaped(reshape_target(node, x, shape))};
}

std::vector<Tensor> flatten(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -x.rank() || axis > x.rank()) {
    fail_user("{}: axis {} is out of range for rank {} (allowed [{}, {}])", node.describe(), axis, x.rank(),
              -x.rank(), x.rank());
  }
  if (axis < 0) axis += x.rank();
  std::vector<int64_t> outer(x.shape().begin(), x.shape().begin() + axis);
  return {x.clone().reshaped({product(outer), x.numel() == 0 ? 0 : x.numel() / product(outer)})};
}

std::vector<Tensor> squeeze(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor* axes_input = optional_input(in, 1);
  std::vector<int64_t> axes;
  if (axes_input != nullptr) {
    axes = node_axes(node, int_list(node, *axes_input, "input 1 (axes)"), x.rank());
    for (int64_t a : axes) {
      if (x.shape()[a] != 1) {
        fail_user("{}: cannot squeeze axis {} of {}: its size is {}, not 1", node.describe(), a, x.summary(),
                  x.shape()[a]);
      }
    }
  }
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.rank(); ++d) {
    bool squeezed = axes_input != nullptr ? std::find(axes.begin(), axes.end(), d) != axes.end() : x.shape()[d] == 1;
    if (!squeezed) shape.push_back(x.shape()[d]);
  }
  return {x.clone().reshaped(shape)};
}

std::vector<Tensor> unsqueeze(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> raw_axes = int_list(node, required_input(node, in, 1), "input 1 (axes)");
  int64_t out_rank = x.rank() + static_cast<int64_t>(raw_axes.size());
  std::vector<int64_t> axes = node_axes(node, raw_axes, out_rank);
  std::vector<int64_t> shape;
  auto next_dim = x.shape().begin();
  for (int64_t d = 0; d < out_rank; ++d) {
    shape.push_back(std::find(axes.begin(), axes.end(), d) != axes.end() ? 1 : *next_dim++);
  }
  return {x.clone().reshaped(shape)};
}

// Expand broadcasts both ways: the result has the numpy broadcast of x's shape and `shape`.
std::vector<Tensor> expand(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> target = int_list(node, required_input(node, in, 1), "input 1 (shape)");
  if (std::any_of(target.begin(), target.end(), [](int64_t d) { return d < 0; })) {
    fail_user("{}: shape {} has a negative dim", node.describe(), dims_to_string(target));
  }
  std::vector<int64_t> shape = broadcast_dims(x.shape(), target, node.describe());
  return {gather_elements(x, broadcast_indices(x.shape(), shape), shape)};
}

}  // namespace

void register_layout_kernels(KernelTable& table) {
  table["Transpose"] = transpose;
  table["Reshape"] = reshape;
  table["Flatten"] = flatten;
  table["Squeeze"] = squeeze;
  table["Unsqueeze"] = unsqueeze;
  table["Expand"] = expand;
}

}  // namespace tilefuse::reference
