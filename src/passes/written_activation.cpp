#include "passes/written_activation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <exception>
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

// Whether the nodes of `region` that `out` depends on are all that reads x and each other: no
// value but `out` leaves them (another reader, a graph output).
bool closed(const Graph& graph, const std::vector<Node*>& region, const Value* x, const Value* out) {
  std::set<const Value*> needed = {out};
  std::set<const Node*> part;
  for (auto it = region.rbegin(); it != region.rend(); ++it) {
    if (!needed.contains((*it)->outputs[0])) continue;
    part.insert(*it);
    needed.insert((*it)->inputs.begin(), (*it)->inputs.end());
  }
  auto read_inside_only = [&](const Value* v) {
    return !graph.is_output(v) && std::all_of(v->users.begin(), v->users.end(), [&](const Node* u) { return part.contains(u); });
  };
  if (!read_inside_only(x)) return false;
  return std::all_of(part.begin(), part.end(), [&](const Node* n) { return n->outputs[0] == out || read_inside_only(n->outputs[0]); });
}

// Points across and beyond the activations' curved parts: [-10, 10] by sixteenths, and +-20, 50, 1000.
const std::vector<float>& sample_points() {
  static const std::vector<float> points = [] {
    std::vector<float> p;
    for (int i = -160; i <= 160; ++i) p.push_back(static_cast<float>(i) / 16.0f);
    for (float far : {20.0f, 50.0f, 1e3f}) p.push_back(far), p.push_back(-far);
    return p;
  }();
  return points;
}

// Every value of the region at the sample points, as the reference interpreter computes it in
// float. A node it cannot evaluate (and what depends on it) is left out: this is a speculative
// check, and what cannot be evaluated here is not an activation.
std::map<const Value*, Tensor> sampled_values(const std::vector<Node*>& region, const Value* x) {
  const std::vector<float>& points = sample_points();
  std::map<const Value*, Tensor> values;
  values.emplace(x, Tensor::from_vector<float>(DType::f32, {static_cast<int64_t>(points.size())}, points));
  for (const Node* n : region) {
    std::vector<Tensor> in;
    for (const Value* v : n->inputs) {
      if (v->constant) {
        in.push_back(*v->constant);
      } else if (auto it = values.find(v); it != values.end()) {
        in.push_back(it->second);
      }
    }
    if (in.size() != n->inputs.size()) continue;
    try {
      values.emplace(n->outputs[0], reference::evaluate_node(*n, in).at(0));
    } catch (const std::exception&) {
      // left out, as said above
    }
  }
  return values;
}

// Whether y is `activation` of the sample points within 1e-5 of |x| (at least 1e-5): close enough
// that nothing else passes (the erf and tanh GELUs differ by up to 2e-4 of |x| near +-2) and loose
// enough for float rounding in any arrangement of the ops.
bool computes(const Tensor& y, const FusedActivation& activation) {
  const std::vector<float>& points = sample_points();
  for (size_t i = 0; i < points.size(); ++i) {
    const double x = points[i], want = activation(x);
    if (!(std::abs(y.get_f64(static_cast<int64_t>(i)) - want) <= 1e-5 * std::max(1.0, std::abs(x)))) return false;
  }
  return true;
}

}  // namespace

std::optional<WrittenActivation> written_activation(const Graph& graph, const Value* x) {
  using Form = FusedActivation::Form;
  static const std::pair<const char*, Form> kActivations[] = {
      {"Gelu", Form::gelu}, {"GeluTanh", Form::gelu_tanh}, {"Silu", Form::silu}, {"Sigmoid", Form::sigmoid}};
  const std::vector<Node*> region = functions_of(graph, x);
  if (region.empty()) return std::nullopt;
  const std::map<const Value*, Tensor> values = sampled_values(region, x);  // once for every candidate
  for (auto it = region.rbegin(); it != region.rend(); ++it) {
    Value* out = (*it)->outputs[0];
    const auto y = values.find(out);
    if (y == values.end() || !closed(graph, region, x, out)) continue;
    for (const auto& [name, form] : kActivations) {
      if (computes(y->second, FusedActivation{.form = form})) return WrittenActivation{out, {{"activation", std::string(name)}}};
    }
  }
  return std::nullopt;
}

}  // namespace tilefuse::passes
