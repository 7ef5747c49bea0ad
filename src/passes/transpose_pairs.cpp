#include "passes/transpose_pairs.h"

#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

std::vector<int64_t> perm_of(const Node& transpose) {
  std::vector<int64_t> perm = transpose.attr_ints("perm");
  if (perm.empty()) {  // the default reverses the axes
    for (int64_t a = transpose.input(0)->rank(); a-- > 0;) perm.push_back(a);
  }
  return perm;
}

bool rewrite(Graph& graph, Node& outer) {
  Value* middle = outer.input(0);
  const Node* inner = middle == nullptr ? nullptr : middle->producer;
  if (inner == nullptr || inner->op != "Transpose" || outer.outputs.size() != 1) return false;
  const std::vector<int64_t> p = perm_of(*inner), q = perm_of(outer);
  if (p.size() != q.size()) return false;
  std::vector<int64_t> r;
  bool identity = true;
  for (size_t i = 0; i < q.size(); ++i) {
    r.push_back(p[static_cast<size_t>(q[i])]);
    identity = identity && r.back() == static_cast<int64_t>(i);
  }
  Value* x = inner->input(0);
  if (identity) {
    // A graph output keeps its name, so it needs a node of its own: an Identity, a view.
    replace_value(graph, outer.outputs[0], "Identity", outer.name, {x});
  } else {
    replace_value(graph, outer.outputs[0], "Transpose", outer.name, {x}, {{"perm", r}});
  }
  return true;
}

}  // namespace

int fold_transpose_pairs(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return n.op == "Transpose" && rewrite(graph, n); });
}

}  // namespace tilefuse::passes
