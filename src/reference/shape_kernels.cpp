// Kernels that make tensors from attributes or shapes: Constant, ConstantOfShape, Shape, Range.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/shape.h"
#include "reference/element_types.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

// Constant holds its value in exactly one attribute; the scalar and list forms become f32/i64.
std::vector<Tensor> constant(const Node& node, const std::vector<Tensor>&) {
  if (node.attrs.size() != 1) {
    fail_user("{}: needs exactly one value attribute, has {}", node.describe(), node.attrs.size());
  }
  if (const Tensor* value = node.attr_tensor("value")) return {value->clone()};
  if (node.has_attr("value_float")) return {Tensor::scalar_f32(static_cast<float>(node.attr_float("value_float", 0)))};
  if (node.has_attr("value_int")) return {Tensor::scalar_i64(node.attr_int("value_int", 0))};
  if (node.has_attr("value_floats")) {
    std::vector<double> v = node.attr_floats("value_floats");
    return {Tensor::from_vector(DType::f32, {static_cast<int64_t>(v.size())}, v)};
  }
  if (node.has_attr("value_ints")) {
    std::vector<int64_t> v = node.attr_ints("value_ints");
    return {Tensor::from_vector(DType::i64, {static_cast<int64_t>(v.size())}, v)};
  }
  fail_user("{}: attribute '{}' is not supported (value, value_float(s), value_int(s) are)", node.describe(),
            node.attrs.begin()->first);
}

// A tensor of the shape in input 0 filled with the one element of `value` (default f32 0).
std::vector<Tensor> constant_of_shape(const Node& node, const std::vector<Tensor>& in) {
  std::vector<int64_t> shape = int_list(node, required_input(node, in, 0), "input 0 (shape)");
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; })) {
    fail_user("{}: shape {} has a negative dim", node.describe(), dims_to_string(shape));
  }
  Tensor fill = Tensor::scalar_f32(0);
  if (const Tensor* value = node.attr_tensor("value")) {
    if (value->numel() != 1) fail_user("{}: 'value' must hold one element, got {}", node.describe(), value->summary());
    fill = *value;
  }
  Tensor out(fill.dtype(), shape);
  size_t size = dtype_size(fill.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) std::memcpy(static_cast<uint8_t*>(out.raw()) + i * size, fill.raw(), size);
  return {out};
}

// The dims [start, end) of the input's shape, clamped like a Python slice.
std::vector<Tensor> shape(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  auto clamp_dim = [&](int64_t d) { return std::clamp(d < 0 ? d + x.rank() : d, int64_t{0}, x.rank()); };
  int64_t start = clamp_dim(node.attr_int("start", 0));
  int64_t end = clamp_dim(node.attr_int("end", x.rank()));
  std::vector<int64_t> dims(x.shape().begin() + start, x.shape().begin() + std::max(start, end));
  return {Tensor::from_vector(DType::i64, {static_cast<int64_t>(dims.size())}, dims)};
}

// start, start + delta, ... up to (excluding) limit: max(ceil((limit - start) / delta), 0)
// elements, element i computed as start + i * delta in the inputs' type.
template <typename E>
Tensor range_of(const Node& node, const std::vector<Tensor>& in) {
  using T = typename E::Compute;
  T start = E::load(in[0].data<typename E::Storage>()[0]);
  T limit = E::load(in[1].data<typename E::Storage>()[0]);
  T delta = E::load(in[2].data<typename E::Storage>()[0]);
  if (delta == T(0)) fail_user("{}: delta must be non-zero", node.describe());
  double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
  if (!(count < 1e12)) fail_user("{}: the range from {} to {} by {} is too long", node.describe(), start, limit, delta);
  Tensor out(E::dtype, {std::max<int64_t>(0, static_cast<int64_t>(count))});
  auto* po = out.data<typename E::Storage>();
  for (int64_t i = 0; i < out.numel(); ++i) po[i] = E::store(static_cast<T>(start + static_cast<T>(i) * delta));
  return out;
}

std::vector<Tensor> range(const Node& node, const std::vector<Tensor>& in) {
  for (size_t i = 0; i < 3; ++i) {
    const Tensor& t = required_input(node, in, i);
    require_same_dtype(node, in[0], t);
    if (t.numel() != 1) fail_user("{}: input {} must be a scalar, got {}", node.describe(), i, t.summary());
  }
  require_dtype(node, in[0], {DType::f32, DType::f64, DType::i32, DType::i64}, "input 0 (start)");
  return {visit_dtype<TypeSet::Numeric>(node, in[0].dtype(), [&](auto elem) { return range_of<decltype(elem)>(node, in); })};
}

}  // namespace

void register_shape_kernels(KernelTable& table) {
  table["Constant"] = constant;
  table["ConstantOfShape"] = constant_of_shape;
  table["Shape"] = shape;
  table["Range"] = range;
}

}  // namespace tilefuse::reference
