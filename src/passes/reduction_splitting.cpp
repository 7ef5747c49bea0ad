#include "passes/reduction_splitting.h"

#include <algorithm>
#include <map>
#include <optional>

#include "passes/node_rewrite.h"
#include "passes/pattern.h"

namespace tilefuse::passes {

namespace {

// Partial results per reduction: enough units for the largest device limits we plan for, few
// enough that the combine step is negligible.
constexpr int64_t kSlabs = 16;
// Worth splitting: at least this many elements reduced into each result (1 MiB of f32)...
constexpr int64_t kMinReduced = int64_t{1} << 18;
// ...and so few results that the kernel has fewer units than slabs.
constexpr int64_t kMaxKept = 8;

bool splittable_op(const std::string& op) {
  return op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd";
}

// The outermost reduced axis whose length is a multiple of the slab count, and long enough.
std::optional<int64_t> split_axis(const Shape& shape, const std::vector<int64_t>& axes) {
  for (int64_t a : axes) {
    if (shape[a].is_const() && shape[a].value() % kSlabs == 0 && shape[a].value() >= 2 * kSlabs) return a;
  }
  return std::nullopt;
}

// Slab views already made, by input and shape: reductions of the same tensor share one, so
// that their partial kernels stay siblings (fusion/planner.h).
using SlabViews = std::map<std::pair<const Value*, std::vector<int64_t>>, Value*>;

bool split(Graph& graph, Node& n, SlabViews& views) {
  if (!splittable_op(n.op) || n.outputs.size() != 1) return false;
  Value* x = n.input(0);
  if (x->dtype != DType::f32 && x->dtype != DType::f16 && x->dtype != DType::bf16) return false;
  const std::optional<std::vector<int64_t>> axes = reduced_axes(n);
  if (!axes || axes->empty()) return false;
  const Value* out = n.outputs[0];
  const std::optional<int64_t> axis = split_axis(x->shape, *axes);
  if (!axis || !is_static(out->shape)) return false;
  // A symbolic dim (a dynamic batch) may be reduced, and counts as 1 towards the length; it
  // must lie before the split axis, where Reshape's 0 copies it into the slab view.
  int64_t reduced = 1, kept = 1;
  for (int64_t a = 0; a < x->rank(); ++a) {
    const Dim& d = x->shape[a];
    const bool is_reduced = std::find(axes->begin(), axes->end(), a) != axes->end();
    if (!d.is_const() && (!is_reduced || a > *axis)) return false;
    (is_reduced ? reduced : kept) *= d.is_const() ? d.value() : 1;
  }
  if (reduced < kMinReduced || kept > kMaxKept) return false;
  // x as [.., kSlabs, length / kSlabs, ..]; the partial reduction keeps the slab axis.
  std::vector<int64_t> slabbed, partial_axes;
  for (int64_t a = 0; a < x->rank(); ++a) {
    const bool is_reduced = std::find(axes->begin(), axes->end(), a) != axes->end();
    const Dim& d = x->shape[a];
    if (a == *axis) {
      slabbed.push_back(kSlabs);
      slabbed.push_back(d.value() / kSlabs);
    } else {
      slabbed.push_back(d.is_const() ? d.value() : 0);  // 0: Reshape copies the symbolic dim
    }
    if (is_reduced) partial_axes.push_back(static_cast<int64_t>(slabbed.size()) - 1);
  }
  const std::string base = n.name;
  Value*& slabs = views[{x, slabbed}];
  if (slabs == nullptr) slabs = added_node(graph, "Reshape", base + "/slabs", {x, int_constant(graph, base + "/slab_shape", slabbed)});
  Value* partial = added_node(graph, n.op, base + "/partial", {slabs}, {{"axes", partial_axes}, {"keepdims", int64_t{1}}});
  Value* combined = added_node(graph, n.op, base + "/combine", {partial}, {{"axes", std::vector<int64_t>{*axis}}, {"keepdims", int64_t{1}}});
  std::vector<int64_t> result;
  for (const Dim& d : out->shape) result.push_back(d.value());
  replace_value(graph, n.outputs[0], "Reshape", base, {combined, int_constant(graph, base + "/result_shape", result)});
  return true;
}

}  // namespace

int split_long_reductions(Graph& graph) {
  SlabViews views;
  return rewrite_nodes(graph, [&](Node& n) { return split(graph, n, views); });
}

}  // namespace tilefuse::passes
