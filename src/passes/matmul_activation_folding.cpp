#include "passes/matmul_activation_folding.h"

#include <cmath>
#include <optional>

#include "ir/ops/fused_activation.h"
#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// The MatMul producing `x`, if it can take an activation and `readers` ops read `x`, nothing else.
// FusedMatMul multiplies matrices: a MatMul of a vector stays as it is.
Node* foldable_matmul(const Graph& graph, const Value* x, size_t readers) {
  Node* mm = x->producer;
  if (mm == nullptr || (mm->op != "MatMul" && mm->op != "FusedMatMul") || mm->attrs.contains("activation")) return nullptr;
  if (mm->input(0)->rank() < 2 || mm->input(1)->rank() < 2) return nullptr;
  if (x->dtype != DType::f32 || x->users.size() != readers || graph.is_output(x)) return nullptr;
  return mm;
}

// Replaces `out` by the MatMul with `activation` folded in.
void fold(Graph& graph, Node& mm, Value* out, AttributeMap activation) {
  activation.insert(mm.attrs.begin(), mm.attrs.end());
  replace_value(graph, out, "FusedMatMul", mm.name, mm.inputs, std::move(activation));
}

// True if `v` is a constant holding one value within a float's rounding of `expected`.
bool is_scalar(const Value* v, double expected) {
  if (v == nullptr || !v->constant || v->constant->numel() != 1 || v->dtype != DType::f32) return false;
  return std::abs(v->constant->get_f64(0) - expected) <= 1e-6 * std::abs(expected);
}

// The operand of binary `node` other than `v`, or null if `v` is neither.
Value* other_operand(const Node& node, const Value* v) {
  if (node.inputs.size() != 2) return nullptr;
  if (node.input(0) == v) return node.input(1);
  if (node.input(1) == v) return node.input(0);
  return nullptr;
}

// The only op reading `v`, if it is `op` and `v` is no graph output.
Node* sole_reader(const Graph& graph, const Value* v, const char* op) {
  if (v->users.size() != 1 || graph.is_output(v) || v->users[0]->op != op) return nullptr;
  return v->users[0];
}

// x for Div(x, sqrt 2) or Mul(x, 1 / sqrt 2), either operand order for Mul.
Value* halved_sqrt_input(const Node* scale) {
  if (scale == nullptr || scale->inputs.size() != 2) return nullptr;
  if (scale->op == "Div") return is_scalar(scale->input(1), std::sqrt(2.0)) ? scale->input(0) : nullptr;
  if (scale->op != "Mul") return nullptr;
  for (size_t i : {0, 1}) {
    if (is_scalar(scale->input(1 - i), std::sqrt(0.5))) return scale->input(i);
  }
  return nullptr;
}

// The output of the five-op GELU whose Erf is `erf`, if all of it is there and reads x alone:
// 0.5 * x * (1 + erf(x / sqrt 2)), the 0.5 applied to the product, to x or to 1 + erf.
Value* decomposed_gelu(const Graph& graph, Node& erf, Value*& x) {
  x = halved_sqrt_input(erf.input(0)->producer);
  if (x == nullptr || erf.input(0)->users.size() != 1) return nullptr;
  Node* add = sole_reader(graph, erf.outputs[0], "Add");
  if (add == nullptr || !is_scalar(other_operand(*add, erf.outputs[0]), 1.0)) return nullptr;
  Node* product = sole_reader(graph, add->outputs[0], "Mul");
  if (product == nullptr) return nullptr;
  Value* factor = other_operand(*product, add->outputs[0]);
  if (factor == x || is_scalar(factor, 0.5)) {  // (x * (1 + erf)) * 0.5, or x * ((1 + erf) * 0.5)
    Node* last = sole_reader(graph, product->outputs[0], "Mul");
    if (last == nullptr || !(factor == x ? is_scalar(other_operand(*last, product->outputs[0]), 0.5)
                                         : other_operand(*last, product->outputs[0]) == x)) {
      return nullptr;
    }
    return last->outputs[0];
  }
  const Node* half_x = factor != nullptr ? factor->producer : nullptr;  // (x * 0.5) * (1 + erf)
  if (half_x == nullptr || half_x->op != "Mul" || factor->users.size() != 1 || graph.is_output(factor)) return nullptr;
  if (!is_scalar(other_operand(*half_x, x), 0.5)) return nullptr;
  return product->outputs[0];
}

bool fold_gelu(Graph& graph, Node& erf) {
  Value* x = nullptr;
  Value* out = decomposed_gelu(graph, erf, x);
  Node* mm = out != nullptr ? foldable_matmul(graph, x, 2) : nullptr;
  if (mm == nullptr) return false;
  fold(graph, *mm, out, {{"activation", std::string("Gelu")}});
  return true;
}

bool fold_activation(Graph& graph, Node& act) {
  std::optional<AttributeMap> attrs = activation_attributes(act);
  Node* mm = attrs ? foldable_matmul(graph, act.input(0), 1) : nullptr;
  if (mm == nullptr) return false;
  fold(graph, *mm, act.outputs[0], std::move(*attrs));
  return true;
}

}  // namespace

int fold_matmul_activations(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return n.op == "Erf" ? fold_gelu(graph, n) : fold_activation(graph, n); });
}

}  // namespace tilefuse::passes
