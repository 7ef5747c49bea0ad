#include "passes/matmul_activation_folding.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "ir/ops/fused_activation.h"
#include "passes/node_rewrite.h"
#include "reference/interpreter.h"

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

// The ops an activation written out elementwise is made of.
bool elementwise_op(const std::string& op) {
  static const std::set<std::string, std::less<>> ops = {"Add", "Sub", "Mul",     "Div",  "Pow",  "Erf",
                                                         "Tanh", "Exp", "Sigmoid", "Neg", "Sqrt", "Reciprocal"};
  return ops.contains(op);
}

bool scalar_constant(const Value* v) { return v != nullptr && v->constant && v->dtype == DType::f32 && v->constant->numel() == 1; }

// The nodes, in topological order, that compute a function of each element of x alone: elementwise
// ops whose inputs are x, values computed so, and scalar constants, with x's shape.
std::vector<Node*> functions_of(const Graph& graph, const Value* x) {
  std::set<const Value*> known = {x};
  std::vector<Node*> region;
  for (Node* n : graph.nodes()) {
    if (!elementwise_op(n->op) || n->outputs.size() != 1) continue;
    const bool reads_x = std::any_of(n->inputs.begin(), n->inputs.end(), [&](const Value* v) { return known.contains(v); });
    const bool only_x = std::all_of(n->inputs.begin(), n->inputs.end(),
                                    [&](const Value* v) { return known.contains(v) || scalar_constant(v); });
    if (!reads_x || !only_x || n->outputs[0]->dtype != DType::f32 || n->outputs[0]->shape != x->shape) continue;
    known.insert(n->outputs[0]);
    region.push_back(n);
  }
  return region;
}

// The nodes of `region` that `out` depends on, if they are all that reads x and each other: no
// value but `out` leaves them (another reader, a graph output).
std::optional<std::vector<Node*>> closed_part(const Graph& graph, const std::vector<Node*>& region, const Value* x,
                                              const Value* out) {
  std::set<const Value*> needed = {out};
  std::vector<Node*> part;
  for (auto it = region.rbegin(); it != region.rend(); ++it) {
    if (!needed.contains((*it)->outputs[0])) continue;
    part.insert(part.begin(), *it);
    needed.insert((*it)->inputs.begin(), (*it)->inputs.end());
  }
  const std::set<const Node*> inside(part.begin(), part.end());
  auto read_inside_only = [&](const Value* v) {
    return !graph.is_output(v) && std::all_of(v->users.begin(), v->users.end(), [&](const Node* u) { return inside.contains(u); });
  };
  if (!read_inside_only(x)) return std::nullopt;
  for (const Node* n : part) {
    if (n->outputs[0] != out && !read_inside_only(n->outputs[0])) return std::nullopt;
  }
  return part;
}

// Whether the nodes compute `activation` of x, as the reference interpreter evaluates them in
// float, within 1e-5 of |x| (at least 1e-5) on points across and beyond GELU's curved part: close
// enough that nothing else passes (the erf and tanh GELUs differ by up to 2e-4 of |x| near +-2)
// and loose enough for float rounding in any arrangement of the ops.
bool computes(const std::vector<Node*>& nodes, const Value* x, const FusedActivation& activation) {
  std::vector<float> points;
  for (int i = -160; i <= 160; ++i) points.push_back(static_cast<float>(i) / 16.0f);  // [-10, 10]
  for (float far : {20.0f, 50.0f, 1e3f}) points.push_back(far), points.push_back(-far);
  std::map<const Value*, Tensor> values;
  values.emplace(x, Tensor::from_vector<float>(DType::f32, {static_cast<int64_t>(points.size())}, points));
  for (const Node* n : nodes) {
    std::vector<Tensor> in;
    for (const Value* v : n->inputs) in.push_back(v->constant ? *v->constant : values.at(v));
    values.emplace(n->outputs[0], reference::evaluate_node(*n, in).at(0));
  }
  const Tensor& y = values.at(nodes.back()->outputs[0]);
  for (size_t i = 0; i < points.size(); ++i) {
    const double want = activation(static_cast<double>(points[i]));
    if (!(std::abs(y.get_f64(static_cast<int64_t>(i)) - want) <= 1e-5 * std::max(1.0, std::abs(double{points[i]})))) return false;
  }
  return true;
}

// GELU and its tanh approximation as PyTorch's exporters write them out, in whatever arrangement
// of ops (TorchScript's 0.5 * x * (1 + erf(x / sqrt 2)), dynamo's x * (0.5 * (1 + ...)), GPT-2's
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), ...): recognised by what they compute.
// The longest closed function of the product that is one of them folds.
bool fold_written_out(Graph& graph, Node& mm) {
  Value* x = through_reshapes(graph, mm.outputs[0]);
  if (foldable_matmul(graph, x) != &mm || x->users.empty()) return false;
  const std::vector<Node*> region = functions_of(graph, x);
  for (auto it = region.rbegin(); it != region.rend(); ++it) {
    const std::optional<std::vector<Node*>> part = closed_part(graph, region, x, (*it)->outputs[0]);
    if (!part) continue;
    for (auto [name, form] : {std::pair{"Gelu", FusedActivation::Form::gelu}, std::pair{"GeluTanh", FusedActivation::Form::gelu_tanh}}) {
      if (!computes(*part, x, FusedActivation{.form = form})) continue;
      fold(graph, mm, x, (*it)->outputs[0], {{"activation", std::string(name)}});
      return true;
    }
  }
  return false;
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
