#include "passes/concat_slice_folding.h"

#include <optional>

#include "ir/ops/slice_dims.h"
#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// The input of `concat` that `slice` takes back whole, or nullptr.
Value* input_taken_back(const Node& slice, const Node& concat) {
  const Value* x = slice.input(0);
  const int64_t rank = x->rank();
  const auto starts = constant_ints(slice, 1), ends = constant_ints(slice, 2);
  if (!starts || !ends || starts->size() != ends->size()) return nullptr;
  std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
  for (size_t k = 0; k < axes.size(); ++k) axes[k] = static_cast<int64_t>(k);
  for (auto [i, operand] : {std::pair{size_t{3}, &axes}, std::pair{size_t{4}, &steps}}) {
    if (!slice.has_input(i)) continue;
    const auto given = constant_ints(slice, i);
    if (!given || given->size() != starts->size()) return nullptr;
    *operand = *given;
  }
  int64_t axis = concat.attr_int("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  std::optional<std::pair<int64_t, int64_t>> range;  // [start, end) on the Concat's axis
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank || steps[k] != 1 || !x->shape[a].is_const()) return nullptr;
    const int64_t dim = x->shape[a].value();
    const int64_t lo = ops::clamp_slice_bound((*starts)[k], dim, 1), hi = ops::clamp_slice_bound((*ends)[k], dim, 1);
    if (a == axis) {
      range = {lo, hi};
    } else if (lo != 0 || hi != dim) {
      return nullptr;  // part of another axis
    }
  }
  if (!range) return nullptr;
  int64_t offset = 0;
  for (Value* in : concat.inputs) {
    if (!in->shape[axis].is_const()) return nullptr;
    const int64_t length = in->shape[axis].value();
    if (offset == range->first && offset + length == range->second) return in;
    offset += length;
  }
  return nullptr;
}

bool fold(Graph& graph, Node& slice) {
  if (slice.op != "Slice") return false;
  const Node* concat = slice.input(0)->producer;
  if (concat == nullptr || concat->op != "Concat") return false;
  Value* taken = input_taken_back(slice, *concat);
  Value* out = slice.outputs[0];
  if (taken == nullptr || taken->dtype != out->dtype || taken->shape != out->shape) return false;
  if (graph.is_output(out)) {
    replace_value(graph, out, "Identity", slice.name, {taken});  // the output keeps its name
  } else {
    graph.replace_all_uses(out, taken);
  }
  return true;
}

}  // namespace

int fold_slices_of_concats(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return fold(graph, n); });
}

}  // namespace tilefuse::passes
