#include "passes/batch_norm_folding.h"

#include <cmath>
#include <optional>

#include "ir/op_registry.h"
#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

struct ChannelAffine {
  std::vector<double> scale, shift;  // y = x * scale[c] + shift[c]
};

std::optional<ChannelAffine> batch_norm_affine(const Node& bn) {
  if (bn.attr_int("training_mode", 0) != 0) return std::nullopt;
  for (size_t i = 1; i < 5; ++i) {
    if (!bn.has_input(i) || !bn.input(i)->constant) return std::nullopt;
  }
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (!bn.outputs[i]->users.empty()) return std::nullopt;
  }
  const Tensor &gamma = *bn.input(1)->constant, &beta = *bn.input(2)->constant;
  const Tensor &mean = *bn.input(3)->constant, &var = *bn.input(4)->constant;
  const double epsilon = bn.attr_float("epsilon", 1e-5);
  ChannelAffine a;
  for (int64_t c = 0; c < gamma.numel(); ++c) {
    a.scale.push_back(gamma.get_f64(c) / std::sqrt(var.get_f64(c) + epsilon));
    a.shift.push_back(beta.get_f64(c) - mean.get_f64(c) * a.scale.back());
  }
  return a;
}

// The producer of the BatchNormalization's input, if it is an op we can fold into: f32, constant
// weights, and read by nothing else.
Node* foldable_producer(const Node& bn) {
  Node* p = bn.input(0)->producer;
  if (p == nullptr || p->outputs[0]->users.size() != 1 || p->outputs[0]->dtype != DType::f32) return nullptr;
  if (p->op == "Conv") return p->input(1)->constant && (!p->has_input(2) || p->input(2)->constant) ? p : nullptr;
  if (p->op != "MatMul" && p->op != "Gemm") return nullptr;
  const bool matrix = p->outputs[0]->rank() == 2 && p->input(1)->constant;
  if (p->op == "MatMul" && matrix) return p;
  if (p->op == "Gemm" && matrix && p->attr_float("alpha", 1.0) == 1.0 && p->attr_float("beta", 1.0) == 1.0 &&
      (!p->has_input(2) || p->input(2)->constant)) {
    return p;
  }
  return nullptr;
}

// Scales the weight's output channels: dim 0 of a Conv weight, the N dim of a Gemm/MatMul B.
Tensor scaled_weight(const Node& p, const std::vector<double>& scale) {
  Tensor w = p.input(1)->constant->clone();
  const std::vector<int64_t>& dims = w.shape();
  const int64_t channels = static_cast<int64_t>(scale.size());
  const bool channel_major = p.op == "Conv" || (p.op == "Gemm" && p.attr_int("transB", 0) != 0);
  const int64_t inner = channel_major ? w.numel() / channels : dims.back();
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t c = channel_major ? i / inner : i % inner;
    w.set_f64(i, w.get_f64(i) * scale[c]);
  }
  return w;
}

// The new bias: old bias * scale + shift (a Conv's B or a Gemm's C, broadcast to [channels]).
Tensor folded_bias(const Node& p, const ChannelAffine& a) {
  Tensor b(DType::f32, {static_cast<int64_t>(a.scale.size())});
  const Tensor* old = p.has_input(2) ? &*p.input(2)->constant : nullptr;
  for (int64_t c = 0; c < b.numel(); ++c) {
    const double v = old == nullptr ? 0.0 : old->get_f64(old->numel() == 1 ? 0 : c);
    b.set_f64(c, v * a.scale[c] + a.shift[c]);
  }
  return b;
}

bool fold(Graph& graph, Node& bn) {
  Node* p = foldable_producer(bn);
  auto affine = p ? batch_norm_affine(bn) : std::nullopt;
  if (!affine) return false;
  const Value* bias_in = p->has_input(2) ? p->input(2) : nullptr;
  // The old bias must be one value or one per channel ([C], or a Gemm's [1, N]).
  if (bias_in != nullptr) {
    const std::vector<int64_t>& dims = bias_in->constant->shape();
    const bool per_channel = !dims.empty() && dims.back() == static_cast<int64_t>(affine->scale.size()) &&
                             bias_in->constant->numel() == dims.back();
    if (bias_in->constant->numel() != 1 && !per_channel) return false;
  }
  Value* w = graph.add_constant(graph.unique_value_name(p->input(1)->name + "_bn_folded"), scaled_weight(*p, affine->scale));
  Value* b = graph.add_constant(graph.unique_value_name(bn.name + "_bias"), folded_bias(*p, *affine));
  if (p->op == "MatMul") {
    Node* mm = graph.add_node("MatMul", p->name + "_bn", {p->input(0), w}, {graph.unique_value_name(p->outputs[0]->name)});
    infer_node(*mm, graph);
    replace_value(graph, bn.outputs[0], "Add", bn.name, {mm->outputs[0], b});
  } else {
    replace_value(graph, bn.outputs[0], p->op, p->name + "_bn", {p->input(0), w, b}, p->attrs);
  }
  return true;
}

}  // namespace

int fold_batch_norms(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return n.op == "BatchNormalization" && fold(graph, n); });
}

}  // namespace tilefuse::passes
