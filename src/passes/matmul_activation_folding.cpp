#include "passes/matmul_activation_folding.h"

#include <optional>

#include "ir/ops/fused_activation.h"
#include "passes/node_rewrite.h"
#include "passes/written_activation.h"

namespace tilefuse::passes {

namespace {

// The MatMul whose product `x` is, directly or through Reshapes that nothing else reads (an
// activation commutes with them: GPT-2 reshapes its MLP's [128, 3072] product to [1, 128, 3072]
// before the GELU), if it can take an activation. FusedMatMul multiplies matrices: a MatMul of a
// vector stays as it is.
Node* foldable_matmul(const Graph& graph, const Value* x) {
  while (x->producer != nullptr && x->producer->op == "Reshape") {
    x = x->producer->input(0);
    if (x->users.size() != 1 || graph.is_output(x)) return nullptr;
  }
  Node* mm = x->producer;
  if (mm == nullptr || (mm->op != "MatMul" && mm->op != "FusedMatMul") || mm->attrs.contains("activation")) return nullptr;
  if (mm->input(0)->rank() < 2 || mm->input(1)->rank() < 2 || x->dtype != DType::f32) return nullptr;
  return mm;
}

// `x` itself, or the end of the Reshapes that alone read it, one after the other.
Value* through_reshapes(const Graph& graph, Value* x) {
  while (x->users.size() == 1 && !graph.is_output(x) && x->users[0]->op == "Reshape") x = x->users[0]->outputs[0];
  return x;
}

// Replaces `out`, the activation of `x` (mm's product, or a Reshape of it), by the MatMul with
// `activation` folded in (Reshaped likewise).
void fold(Graph& graph, Node& mm, Value* x, Value* out, AttributeMap activation) {
  activation.insert(mm.attrs.begin(), mm.attrs.end());
  Value* product = mm.outputs[0];
  if (x == product) {
    replace_value(graph, out, "FusedMatMul", mm.name, mm.inputs, std::move(activation));
    return;
  }
  replace_value(graph, product, "FusedMatMul", mm.name, mm.inputs, std::move(activation));  // the Reshapes read it
  graph.replace_all_uses(out, x);
  std::swap(out->name, x->name);  // graph outputs keep their names
}

// An activation written out after the product (passes/written_activation.h).
bool fold_written_out(Graph& graph, Node& mm) {
  Value* x = through_reshapes(graph, mm.outputs[0]);
  if (foldable_matmul(graph, x) != &mm || x->users.empty()) return false;
  const std::optional<WrittenActivation> found = written_activation(graph, x);
  if (!found) return false;
  fold(graph, mm, x, found->out, found->attrs);
  return true;
}

bool fold_activation(Graph& graph, Node& act) {
  std::optional<AttributeMap> attrs = activation_attributes(act);
  Value* x = act.input(0);
  Node* mm = attrs && x->users.size() == 1 && !graph.is_output(x) ? foldable_matmul(graph, x) : nullptr;
  if (mm == nullptr) return false;
  fold(graph, *mm, x, act.outputs[0], std::move(*attrs));
  return true;
}

}  // namespace

int fold_matmul_activations(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) {
    const bool product = n.op == "MatMul" || n.op == "FusedMatMul";
    return product ? fold_written_out(graph, n) : fold_activation(graph, n);
  });
}

}  // namespace tilefuse::passes
