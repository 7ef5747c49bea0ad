#include "passes/matmul_transpose_folding.h"

#include <numeric>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

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
  if (out->dtype != DType::f32 || out->users.size() != 1 || graph.is_output(out)) return nullptr;
  // The operand's rows or columns must be the source's contiguous dim, so that one of its two
  // strides is 1: the packing routines' fast paths, and BLAS's transposes on the fallback.
  const std::vector<int64_t> perm = transpose_perm(*t);
  const auto last = static_cast<int64_t>(perm.size()) - 1;
  if (perm[last] != last && perm[last - 1] != last) return nullptr;
  return t;
}

// The Transpose reading the result of `mm`, if it can become the result's perm: the product's
// rows then land at the transposed tensor's strides, each row still contiguous.
Node* foldable_result_transpose(const Graph& graph, const Node& mm) {
  const Value* out = mm.outputs[0];
  if (out->users.size() != 1 || graph.is_output(out) || mm.has_attr("perm_y")) return nullptr;
  Node* t = out->users[0];
  if (t->op != "Transpose") return nullptr;
  const std::vector<int64_t> perm = transpose_perm(*t);
  const auto last = static_cast<int64_t>(perm.size()) - 1;
  return perm[last] == last ? t : nullptr;
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
  Value* result = mm.outputs[0];
  if (Node* t = foldable_result_transpose(graph, mm)) {
    attrs["perm_y"] = transpose_perm(*t);
    result = t->outputs[0];
    folded = true;
  }
  if (!folded) return false;
  replace_value(graph, result, "FusedMatMul", mm.name, inputs, attrs);
  return true;
}

}  // namespace

int fold_matmul_transposes(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return (n.op == "MatMul" || n.op == "FusedMatMul") && fold(graph, n); });
}

}  // namespace tilefuse::passes
