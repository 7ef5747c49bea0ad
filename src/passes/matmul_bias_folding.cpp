#include "passes/matmul_bias_folding.h"

#include <optional>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// The MatMul feeding operand `i` of `add`, if it can take the other operand as its bias.
Node* foldable_matmul(const Graph& graph, const Node& add, size_t i) {
  Node* mm = add.input(i)->producer;
  if (mm == nullptr || (mm->op != "MatMul" && mm->op != "FusedMatMul") || mm->has_input(2)) return nullptr;
  const Value* out = mm->outputs[0];
  if (out->dtype != DType::f32 || out->rank() < 2 || mm->input(1)->rank() < 2) return nullptr;
  if (out->users.size() != 1 || graph.is_output(out)) return nullptr;
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
    replace_value(graph, add.outputs[0], "FusedMatMul", mm->name, {mm->input(0), mm->input(1), b}, mm->attrs);
    return true;
  }
  return false;
}

}  // namespace

int fold_matmul_biases(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return n.op == "Add" && fold(graph, n); });
}

}  // namespace tilefuse::passes
