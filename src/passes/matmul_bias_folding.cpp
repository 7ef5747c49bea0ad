#include "passes/matmul_bias_folding.h"

#include <algorithm>

#include "ir/op_registry.h"

namespace tilefuse::passes {

namespace {

bool is_graph_output(const Graph& graph, const Value* v) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

// The MatMul feeding operand `i` of `add`, if it can take the other operand as its bias.
Node* foldable_matmul(const Graph& graph, const Node& add, size_t i) {
  Node* mm = add.input(i)->producer;
  if (mm == nullptr || (mm->op != "MatMul" && mm->op != "FusedMatMul") || mm->has_input(2)) return nullptr;
  const Value* out = mm->outputs[0];
  if (out->dtype != DType::f32 || out->rank() < 2 || mm->input(1)->rank() < 2) return nullptr;
  if (out->users.size() != 1 || is_graph_output(graph, out)) return nullptr;
  if (add.outputs[0]->shape != out->shape) return nullptr;  // the Add must not broadcast the product
  return mm;
}

// The bias as a [N] tensor, if `v` is a constant of N values along the last dim only.
std::optional<Tensor> bias_vector(const Value* v, const Dim& n) {
  if (!v->constant || v->dtype != DType::f32 || !n.is_const()) return std::nullopt;
  const std::vector<int64_t>& dims = v->constant->shape();
  if (dims.empty() || dims.back() != n.value() || v->constant->numel() != n.value()) return std::nullopt;
  return v->constant->reshaped({n.value()});
}

bool fold(Graph& graph, Node& add) {
  for (size_t i : {0, 1}) {
    Node* mm = foldable_matmul(graph, add, i);
    if (mm == nullptr) continue;
    std::optional<Tensor> bias = bias_vector(add.input(1 - i), mm->outputs[0]->shape.back());
    if (!bias) continue;
    Value* b = graph.add_constant(graph.unique_value_name(add.input(1 - i)->name + "_vector"), *bias);
    Node* fused = graph.add_node("FusedMatMul", mm->name, {mm->input(0), mm->input(1), b},
                                 {graph.unique_value_name(add.outputs[0]->name)}, mm->attrs);
    infer_node(*fused, graph);
    graph.replace_all_uses(add.outputs[0], fused->outputs[0]);
    std::swap(add.outputs[0]->name, fused->outputs[0]->name);  // graph outputs keep their names
    return true;
  }
  return false;
}

}  // namespace

int fold_matmul_biases(Graph& graph) {
  int folded = 0;
  for (Node* n : graph.nodes()) {
    if (n->op == "Add" && fold(graph, *n)) ++folded;
  }
  if (folded > 0) {
    graph.topo_sort();
    graph.remove_dead_nodes();
  }
  return folded;
}

}  // namespace tilefuse::passes
