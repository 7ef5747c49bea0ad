#include "reference/kernel_args.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/shape.h"

namespace tilefuse::reference {

const Tensor& required_input(const Node& node, const std::vector<Tensor>& inputs, size_t i) {
  if (i >= inputs.size() || !inputs[i].defined()) {
    fail_user("{}: input {} is required but was not given", node.describe(), i);
  }
  return inputs[i];
}

const Tensor* optional_input(const std::vector<Tensor>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() ? &inputs[i] : nullptr;
}

void require_same_dtype(const Node& node, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    fail_user("{}: inputs must have the same element type, got {} and {}", node.describe(), a.summary(),
              b.summary());
  }
}

void require_dtype(const Node& node, const Tensor& t, std::initializer_list<DType> accepted, std::string_view what) {
  if (std::find(accepted.begin(), accepted.end(), t.dtype()) != accepted.end()) return;
  std::string names;
  for (DType d : accepted) names += std::string(names.empty() ? "" : ", ") + std::string(dtype_name(d));
  fail_user("{}: {} has element type {}, expected one of {}", node.describe(), what, dtype_name(t.dtype()), names);
}

std::vector<int64_t> int_list(const Node& node, const Tensor& t, std::string_view what) {
  if (!is_integer(t.dtype()) || t.rank() > 1) {
    fail_user("{}: {} must be a 0-D or 1-D integer tensor, got {}", node.describe(), what, t.summary());
  }
  return t.to_i64_vector();
}

double scalar_value(const Node& node, const Tensor& t, std::string_view what) {
  if (t.numel() != 1) fail_user("{}: {} must hold exactly one element, got {}", node.describe(), what, t.summary());
  return t.get_f64(0);
}

int64_t node_axis(const Node& node, int64_t axis, int64_t rank) { return normalize_axis(axis, rank, node.describe()); }

std::vector<int64_t> node_axes(const Node& node, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = node_axis(node, a, rank);
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      fail_user("{}: axis {} is listed twice in axes {}", node.describe(), a, dims_to_string(axes));
    }
    out.push_back(n);
  }
  return out;
}

}  // namespace tilefuse::reference
