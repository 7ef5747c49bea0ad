#include "passes/depth_space_as_transpose.h"

#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

struct Rearrangement {
  std::vector<int64_t> split, perm, merged;
};

// The six-axis shape, the permutation and the result's shape for `node` on [n, c, h, w] (0 for
// the batch: the Reshapes copy it), or nothing where its sizes do not divide.
std::optional<Rearrangement> rearrangement(const Node& node, int64_t c, int64_t h, int64_t w) {
  const int64_t b = node.attr_int("blocksize", 0);
  if (b < 1) return std::nullopt;
  if (node.op == "SpaceToDepth") {
    if (h % b != 0 || w % b != 0) return std::nullopt;
    return Rearrangement{{0, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, {0, c * b * b, h / b, w / b}};
  }
  if (c % (b * b) != 0) return std::nullopt;
  const int64_t depth = c / (b * b);
  if (node.attr_string("mode", "DCR") == "CRD") {
    return Rearrangement{{0, depth, b, b, h, w}, {0, 1, 4, 2, 5, 3}, {0, depth, h * b, w * b}};
  }
  return Rearrangement{{0, b, b, depth, h, w}, {0, 3, 4, 1, 5, 2}, {0, depth, h * b, w * b}};
}

bool rewrite(Graph& graph, Node& node) {
  Value* x = node.input(0);
  if (x == nullptr || x->rank() != 4) return false;
  for (int d = 1; d < 4; ++d) {
    if (!x->shape[static_cast<size_t>(d)].is_const()) return false;
  }
  const auto r = rearrangement(node, x->shape[1].value(), x->shape[2].value(), x->shape[3].value());
  if (!r) return false;
  const std::string& name = node.name;
  Value* split = added_node(graph, "Reshape", name + "/split", {x, int_constant(graph, name + "_split_shape", r->split)});
  Value* moved = added_node(graph, "Transpose", name + "/move", {split}, {{"perm", r->perm}});
  replace_value(graph, node.outputs[0], "Reshape", name, {moved, int_constant(graph, name + "_shape", r->merged)});
  return true;
}

}  // namespace

int depth_space_as_transpose(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) {
    return (n.op == "DepthToSpace" || n.op == "SpaceToDepth") && rewrite(graph, n);
  });
}

}  // namespace tilefuse::passes
