#include "passes/conv_epilogue_folding.h"

#include "ir/ops/fused_activation.h"
#include "passes/node_rewrite.h"
#include "passes/written_activation.h"

namespace tilefuse::passes {

namespace {

// The convolution producing `v`, if `v` is f32, only one op reads it, and the convolution can
// still take what is folded: a residual (input 3) or an activation, which always comes last.
Node* sole_conv(const Graph& graph, const Value* v, bool residual) {
  Node* conv = v->producer;
  if (conv == nullptr || (conv->op != "Conv" && conv->op != "FusedConv") || v->dtype != DType::f32) return nullptr;
  if (v->users.size() != 1 || graph.is_output(v)) return nullptr;
  if (conv->attrs.contains("activation")) return nullptr;
  if (residual && conv->has_input(3)) return nullptr;
  return conv;
}

// X, W, B, Z: absent ones null, trailing absent ones dropped.
std::vector<Value*> conv_inputs(const Node& conv, Value* residual) {
  std::vector<Value*> in = {conv.input(0), conv.input(1), conv.input(2), residual ? residual : conv.input(3)};
  while (in.back() == nullptr) in.pop_back();
  return in;
}

bool fold_residual(Graph& graph, Node& add) {
  if (add.outputs[0]->dtype != DType::f32) return false;
  for (size_t i : {0, 1}) {
    Node* conv = sole_conv(graph, add.input(i), true);
    if (conv == nullptr || add.input(1 - i)->shape != conv->outputs[0]->shape) continue;
    replace_value(graph, add.outputs[0], "FusedConv", conv->name, conv_inputs(*conv, add.input(1 - i)), conv->attrs);
    return true;
  }
  return false;
}

bool fold_activation(Graph& graph, Node& act) {
  std::optional<AttributeMap> attrs = activation_attributes(act);
  Node* conv = attrs ? sole_conv(graph, act.input(0), false) : nullptr;
  if (conv == nullptr) return false;
  attrs->insert(conv->attrs.begin(), conv->attrs.end());
  replace_value(graph, act.outputs[0], "FusedConv", conv->name, conv_inputs(*conv, nullptr), *attrs);
  return true;
}

// An activation written out after the convolution (passes/written_activation.h): SiLU as
// x * Sigmoid(x), GELU.
bool fold_written_out(Graph& graph, Node& conv) {
  Value* x = conv.outputs[0];
  if (conv.attrs.contains("activation") || x->dtype != DType::f32 || x->users.empty()) return false;
  std::optional<WrittenActivation> found = written_activation(graph, x);
  if (!found) return false;
  found->attrs.insert(conv.attrs.begin(), conv.attrs.end());
  replace_value(graph, found->out, "FusedConv", conv.name, conv_inputs(conv, nullptr), found->attrs);
  return true;
}

}  // namespace

int fold_conv_epilogues(Graph& graph) {
  // Until nothing folds: an activation written out after a residual is seen only once the
  // residual's FusedConv exists.
  int folded = 0;
  while (const int now = rewrite_nodes(graph, [&](Node& n) {
           if (n.op == "Add") return fold_residual(graph, n);
           if (n.op == "Conv" || n.op == "FusedConv") return fold_written_out(graph, n);
           return fold_activation(graph, n);
         })) {
    folded += now;
  }
  return folded;
}

}  // namespace tilefuse::passes
