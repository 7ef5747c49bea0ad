#include "passes/rotate_half_as_reversal.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ir/ops/slice_dims.h"
#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// A half of x: Slice(x) over [start, start + h) of one axis with step 1, maybe negated.
struct Half {
  Value* x = nullptr;
  int64_t axis = 0, start = 0, end = 0;
  bool negated = false;
};

std::optional<Half> half_of(Value* v) {
  Half half;
  Node* n = v->producer;
  if (n != nullptr && n->op == "Neg") {
    half.negated = true;
    n = n->input(0)->producer;
  }
  if (n == nullptr || n->op != "Slice" || !n->has_input(3)) return std::nullopt;
  const auto starts = constant_ints(*n, 1), ends = constant_ints(*n, 2), axes = constant_ints(*n, 3);
  const auto steps = n->has_input(4) ? constant_ints(*n, 4) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
  if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || (*steps)[0] != 1) {
    return std::nullopt;
  }
  half.x = n->input(0);
  const int64_t rank = half.x->rank();
  half.axis = (*axes)[0] < 0 ? (*axes)[0] + rank : (*axes)[0];
  if (half.axis < 0 || half.axis >= rank || !half.x->shape[half.axis].is_const()) return std::nullopt;
  const int64_t dim = half.x->shape[half.axis].value();
  half.start = ops::clamp_slice_bound((*starts)[0], dim, 1);
  half.end = ops::clamp_slice_bound((*ends)[0], dim, 1);
  return half;
}



// x with its axis split into [2, h]. Where x is a Transpose that keeps its last axis last (heads
// moved before the sequence) and that axis is split, the split is made on the Transpose's input,
// which the Transpose then moves along: a kernel reads the rotation from the same bytes as x
// (through its own index map) instead of needing x written out first.
Value* halves_of(Graph& graph, Value* x, int64_t axis, const std::vector<int64_t>& split_shape, const std::string& name) {
  const Node* t = x->producer;
  const int64_t rank = x->rank();
  if (t != nullptr && t->op == "Transpose" && axis == rank - 1) {
    std::vector<int64_t> perm = t->attr_ints("perm");
    if (static_cast<int64_t>(perm.size()) == rank && perm.back() == rank - 1) {
      Value* split = added_node(graph, "Reshape", name + "/halves", {t->input(0), int_constant(graph, name + "_halves_shape", split_shape)});
      perm.push_back(rank);  // the halves' length stays last, after their axis of 2
      return added_node(graph, "Transpose", name + "/halves_moved", {split}, {{"perm", perm}});
    }
  }
  return added_node(graph, "Reshape", name + "/halves", {x, int_constant(graph, name + "_halves_shape", split_shape)});
}

bool rewrite(Graph& graph, Node& concat) {
  if (concat.op != "Concat" || concat.inputs.size() != 2) return false;
  const auto first = half_of(concat.inputs[0]), second = half_of(concat.inputs[1]);
  if (!first || !second || first->x != second->x || first->axis != second->axis) return false;
  Value* x = first->x;
  const int64_t rank = x->rank(), axis = first->axis;
  int64_t concat_axis = concat.attr_int("axis", 0);
  concat_axis = concat_axis < 0 ? concat_axis + rank : concat_axis;
  const int64_t d = x->shape[axis].value(), h = d / 2;
  // The second half first, then the first: x's halves swapped.
  if (concat_axis != axis || d % 2 != 0 || first->start != h || first->end != d || second->start != 0 || second->end != h) {
    return false;
  }
  if (x->dtype != DType::f32 && x->dtype != DType::f16 && x->dtype != DType::bf16) return false;
  std::vector<int64_t> split_shape, merged_shape;  // 0 keeps a dim before the axis (maybe symbolic)
  for (int64_t k = 0; k < rank; ++k) {
    if (k < axis) {
      split_shape.push_back(0);
      merged_shape.push_back(0);
    } else if (k == axis) {
      split_shape.insert(split_shape.end(), {2, h});
      merged_shape.push_back(d);
    } else {
      if (!x->shape[k].is_const()) return false;
      split_shape.push_back(x->shape[k].value());
      merged_shape.push_back(x->shape[k].value());
    }
  }
  const std::string& name = concat.name;
  Value* halves = halves_of(graph, x, axis, split_shape, name);
  Value* swapped = added_node(graph, "Slice", name + "/swapped",
                         {halves, int_constant(graph, name + "_from", {-1}), int_constant(graph, name + "_to", {std::numeric_limits<int64_t>::min()}),
                          int_constant(graph, name + "_axis", {axis}), int_constant(graph, name + "_step", {-1})});
  if (first->negated || second->negated) {
    std::vector<int64_t> sign_shape = {2};
    sign_shape.resize(static_cast<size_t>(rank - axis + 1), 1);  // [2, 1, ..., 1] over [2, h, ...]: one per half
    Tensor sign(x->dtype, sign_shape);
    for (int64_t i = 0; i < sign.numel(); ++i) sign.set_f64(i, 1.0);
    sign.set_f64(0, first->negated ? -1.0 : 1.0);
    sign.set_f64(sign.numel() / 2, second->negated ? -1.0 : 1.0);
    swapped = added_node(graph, "Mul", name + "/signed", {swapped, graph.add_constant(graph.unique_value_name(name + "_sign"), sign)});
  }
  replace_value(graph, concat.outputs[0], "Reshape", name, {swapped, int_constant(graph, name + "_shape", merged_shape)});
  return true;
}

}  // namespace

int rotate_half_as_reversal(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return rewrite(graph, n); });
}

}  // namespace tilefuse::passes
