#include "passes/matmul_transpose_folding.h"

#include <algorithm>
#include <numeric>

#include "ir/op_registry.h"

namespace tilefuse::passes {

namespace {

bool is_graph_output(const Graph& graph, const Value* v) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

std::vector<int64_t> transpose_perm(const Node& t) {
  std::vector<int64_t> reverse(static_cast<size_t>(t.input(0)->rank()));
  std::iota(reverse.rbegin(), reverse.rend(), 0);  // ONNX's default: reverse the dims
  return t.attr_ints("perm", reverse);
}

// The Transpose producing operand `i` of `mm`, if it can become the operand's perm.
Node* foldable_transpose(const Graph& graph, const Node& mm, size_t i) {
  Node* t = mm.input(i)->producer;
  if (t == nullptr || t->op != "Transpose") return nullptr;
  const Value* out = t->outputs[0];
  if (out->dtype != DType::f32 || out->users.size() != 1 || is_graph_output(graph, out)) return nullptr;
  // The operand's rows or columns must be the source's contiguous dim, so that one of its two
  // strides is 1: the packing routines' fast paths, and BLAS's transposes on the fallback.
  const std::vector<int64_t> perm = transpose_perm(*t);
  const auto last = static_cast<int64_t>(perm.size()) - 1;
  if (perm[last] != last && perm[last - 1] != last) return nullptr;
  return t;
}

bool fold(Graph& graph, Node& mm) {
  if (mm.input(0)->rank() < 2 || mm.input(1)->rank() < 2 || mm.outputs[0]->dtype != DType::f32) return false;
  std::vector<Value*> inputs = mm.inputs;
  AttributeMap attrs = mm.attrs;
  bool folded = false;
  for (size_t i : {0, 1}) {
    const char* attr = i == 0 ? "perm_a" : "perm_b";
    Node* t = foldable_transpose(graph, mm, i);
    if (t == nullptr || attrs.count(attr) != 0) continue;
    attrs[attr] = transpose_perm(*t);
    inputs[i] = t->input(0);
    folded = true;
  }
  if (!folded) return false;
  Node* fused = graph.add_node("FusedMatMul", mm.name, inputs, {graph.unique_value_name(mm.outputs[0]->name)}, attrs);
  infer_node(*fused, graph);
  graph.replace_all_uses(mm.outputs[0], fused->outputs[0]);
  std::swap(mm.outputs[0]->name, fused->outputs[0]->name);  // graph outputs keep their names
  return true;
}

}  // namespace

int fold_matmul_transposes(Graph& graph) {
  int folded = 0;
  for (Node* n : graph.nodes()) {
    if ((n->op == "MatMul" || n->op == "FusedMatMul") && fold(graph, *n)) ++folded;
  }
  if (folded > 0) {
    graph.topo_sort();
    graph.remove_dead_nodes();
  }
  return folded;
}

}  // namespace tilefuse::passes
