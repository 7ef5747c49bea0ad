#include "passes/one_hot_as_where.h"

#include <cstring>
#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

constexpr int64_t kMaxDepth = int64_t{1} << 24;

// Element `i` of a constant operand as a tensor of its own (a scalar).
Tensor element(const Tensor& t, int64_t i) {
  Tensor one(t.dtype(), {});
  std::memcpy(one.raw(), static_cast<const uint8_t*>(t.raw()) + i * static_cast<int64_t>(dtype_size(t.dtype())),
              dtype_size(t.dtype()));
  return one;
}

Tensor scalar_of(DType dtype, int64_t v) {
  Tensor t(dtype, {});
  t.set_i64(0, v);
  return t;
}

bool rewrite(Graph& graph, Node& one_hot) {
  Value* indices = one_hot.input(0);
  const Value* depth_value = one_hot.input(1);
  const Value* values = one_hot.input(2);
  if (indices == nullptr || depth_value == nullptr || values == nullptr || one_hot.outputs.size() != 1) return false;
  if (indices->dtype != DType::i32 && indices->dtype != DType::i64) return false;
  if (!depth_value->constant || depth_value->constant->numel() != 1 || !values->constant ||
      values->constant->numel() != 2) {
    return false;
  }
  const double d = depth_value->constant->get_f64(0);
  if (!(d >= 1) || d > static_cast<double>(kMaxDepth)) return false;
  const auto depth = static_cast<int64_t>(d);
  const int64_t rank = indices->rank() + 1;
  int64_t axis = one_hot.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) return false;  // the reference kernel names the error
  if (axis < 0) axis += rank;

  // The classes 0 .. depth-1 along the new axis, ones after it for the broadcast.
  std::vector<int64_t> class_shape(static_cast<size_t>(rank - axis), 1);
  class_shape[0] = depth;
  Tensor classes(indices->dtype, class_shape);
  for (int64_t c = 0; c < depth; ++c) classes.set_i64(c, c);

  const std::string& name = one_hot.name;
  const DType t = indices->dtype;
  Value* zero = graph.add_constant(graph.unique_value_name(name + "_zero"), scalar_of(t, 0));
  Value* count = graph.add_constant(graph.unique_value_name(name + "_depth"), scalar_of(t, depth));
  Value* negative = added_node(graph, "Less", name + "_negative", {indices, zero});
  Value* shifted = added_node(graph, "Add", name + "_shifted", {indices, count});
  Value* wrapped = added_node(graph, "Where", name + "_wrapped", {negative, shifted, indices});
  Value* column = added_node(graph, "Unsqueeze", name + "_unsqueezed",
                             {wrapped, int_constant(graph, name + "_axis", {axis})});
  Value* class_of = graph.add_constant(graph.unique_value_name(name + "_classes"), std::move(classes));
  Value* hit = added_node(graph, "Equal", name + "_hit", {column, class_of});
  Value* on = graph.add_constant(graph.unique_value_name(name + "_on"), element(*values->constant, 1));
  Value* off = graph.add_constant(graph.unique_value_name(name + "_off"), element(*values->constant, 0));
  replace_value(graph, one_hot.outputs[0], "Where", name, {hit, on, off});
  return true;
}

}  // namespace

int one_hot_as_where(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return n.op == "OneHot" && rewrite(graph, n); });
}

}  // namespace tilefuse::passes
