#include "passes/written_activation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "ir/ops/fused_activation.h"
#include "reference/interpreter.h"

namespace tilefuse::passes {

namespace {

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
// float, within 1e-5 of |x| (at least 1e-5) on points across and beyond the curved parts: close
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
    try {
      values.emplace(n->outputs[0], reference::evaluate_node(*n, in).at(0));
    } catch (const std::exception&) {
      return false;  // a speculative check: what cannot be evaluated here is not an activation
    }
  }
  const Tensor& y = values.at(nodes.back()->outputs[0]);
  for (size_t i = 0; i < points.size(); ++i) {
    const double want = activation(static_cast<double>(points[i]));
    if (!(std::abs(y.get_f64(static_cast<int64_t>(i)) - want) <= 1e-5 * std::max(1.0, std::abs(double{points[i]})))) return false;
  }
  return true;
}

}  // namespace

std::optional<WrittenActivation> written_activation(const Graph& graph, const Value* x) {
  using Form = FusedActivation::Form;
  static const std::pair<const char*, Form> kActivations[] = {
      {"Gelu", Form::gelu}, {"GeluTanh", Form::gelu_tanh}, {"Silu", Form::silu}, {"Sigmoid", Form::sigmoid}};
  const std::vector<Node*> region = functions_of(graph, x);
  for (auto it = region.rbegin(); it != region.rend(); ++it) {
    const std::optional<std::vector<Node*>> part = closed_part(graph, region, x, (*it)->outputs[0]);
    if (!part) continue;
    for (const auto& [name, form] : kActivations) {
      if (computes(*part, x, FusedActivation{.form = form})) return WrittenActivation{(*it)->outputs[0], {{"activation", std::string(name)}}};
    }
  }
  return std::nullopt;
}

}  // namespace tilefuse::passes
