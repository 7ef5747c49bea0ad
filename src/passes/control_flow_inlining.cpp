#include "passes/control_flow_inlining.h"

#include <map>

#include "ir/ops/control_flow.h"
#include "ir/ops/infer_util.h"

namespace tilefuse::passes {

namespace {

// A node name not taken in `graph`, from `base`.
std::string unique_node_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int i = 1; graph.find_node(name) != nullptr; ++i) name = fmt::format("{}_{}", base, i);
  return name;
}

// Copies the closed subgraph `sub` into `graph`, its inputs fed by `feed`, its names prefixed;
// returns the values of its outputs.
std::vector<Value*> splice(Graph& graph, const Graph& sub, const std::vector<Value*>& feed, const std::string& prefix) {
  std::map<const Value*, Value*> mapped;
  for (size_t i = 0; i < sub.inputs().size(); ++i) mapped[sub.inputs()[i]] = feed.at(i);
  for (const Value* v : sub.values()) {
    if (v->producer == nullptr && v->constant && !mapped.count(v)) {
      mapped[v] = graph.add_constant(graph.unique_value_name(prefix + v->name), *v->constant);
    }
  }
  for (const Node* n : sub.nodes()) {
    std::vector<Value*> inputs;
    for (const Value* in : n->inputs) inputs.push_back(in ? mapped.at(in) : nullptr);
    std::vector<std::string> names;
    for (const Value* out : n->outputs) names.push_back(graph.unique_value_name(prefix + out->name));
    Node* copy = graph.add_node(n->op, unique_node_name(graph, prefix + n->name), std::move(inputs), names, n->attrs);
    for (size_t i = 0; i < n->outputs.size(); ++i) mapped[n->outputs[i]] = copy->outputs[i];
  }
  std::vector<Value*> outputs;
  for (const Value* out : sub.outputs()) outputs.push_back(mapped.at(out));
  return outputs;
}

std::optional<bool> known_truth(const Value* v) {
  if (v == nullptr) return std::nullopt;
  const auto values = ops::known_const_ints(v);
  if (!values || values->size() != 1) return std::nullopt;
  return values->front() != 0;
}

// Rewires the node's outputs to `with` and removes it. A graph output keeps its name (the
// caller's outputs are named by it): an Identity, which costs nothing, gives it to its new value.
void replace_outputs(Graph& graph, Node* node, const std::vector<Value*>& with) {
  std::vector<std::pair<Value*, std::string>> renamed;
  for (size_t i = 0; i < node->outputs.size(); ++i) {
    Value* to = with.at(i);
    if (graph.is_output(node->outputs[i])) {
      Node* keep = graph.add_node("Identity", unique_node_name(graph, node->name + "/output"), {to},
                                  {graph.unique_value_name(node->outputs[i]->name + "/kept")});
      renamed.emplace_back(keep->outputs[0], node->outputs[i]->name);
      to = keep->outputs[0];
    }
    graph.replace_all_uses(node->outputs[i], to);
  }
  graph.remove_node(node);
  for (auto& [value, name] : renamed) value->name = name;
}

bool inline_if(Graph& graph, Node* node) {
  const std::optional<bool> cond = known_truth(node->input(0));
  if (!cond) return false;
  const Graph& branch = subgraph(*node, *cond ? "then_branch" : "else_branch");
  const std::vector<Value*> feed(node->inputs.begin() + 1, node->inputs.end());
  replace_outputs(graph, node, splice(graph, branch, feed, node->name + "/"));
  return true;
}

// The body's cond output is its cond input passed through (maybe by Identity nodes), or the
// constant true.
bool never_stops_early(const Graph& body) {
  const Value* cond_out = body.outputs().at(0);
  while (cond_out->producer != nullptr && cond_out->producer->op == "Identity") cond_out = cond_out->producer->input(0);
  return cond_out == body.inputs().at(1) || known_truth(cond_out) == true;
}

Value* scalar_constant(Graph& graph, const std::string& name, DType dtype, int64_t value) {
  Tensor t(dtype, {});
  t.set_i64(0, value);
  return graph.add_constant(graph.unique_value_name(name), t);
}

bool unroll_loop(Graph& graph, Node* node) {
  const auto trips = node->input(0) ? ops::known_const_ints(node->input(0)) : std::nullopt;
  const bool starts = node->input(1) == nullptr || known_truth(node->input(1)) == true;
  const Graph& body = subgraph(*node, "body");
  if (!trips || trips->size() != 1 || (*trips)[0] < 1 || (*trips)[0] > kMaxUnrolledTrips || !starts ||
      !never_stops_early(body)) {
    return false;
  }
  const auto carried = static_cast<size_t>(node->attr_int("carried", 0));
  std::vector<Value*> state(node->inputs.begin() + 2, node->inputs.begin() + 2 + static_cast<std::ptrdiff_t>(carried));
  const std::vector<Value*> captures(node->inputs.begin() + 2 + static_cast<std::ptrdiff_t>(carried), node->inputs.end());
  const size_t scans = body.outputs().size() - 1 - carried;
  std::vector<std::vector<Value*>> scanned(scans);
  Value* yes = scalar_constant(graph, node->name + "/cond", DType::boolean, 1);
  Value* axis0 = graph.add_constant(graph.unique_value_name(node->name + "/axis0"), Tensor::from_vector(DType::i64, {1}, std::vector<int64_t>{0}));
  for (int64_t i = 0; i < (*trips)[0]; ++i) {
    const std::string prefix = fmt::format("{}/{}/", node->name, i);
    std::vector<Value*> feed = {scalar_constant(graph, prefix + "iteration", DType::i64, i), yes};
    feed.insert(feed.end(), state.begin(), state.end());
    feed.insert(feed.end(), captures.begin(), captures.end());
    const std::vector<Value*> out = splice(graph, body, feed, prefix);
    for (size_t j = 0; j < carried; ++j) state[j] = out[1 + j];
    for (size_t j = 0; j < scans; ++j) {
      Node* u = graph.add_node("Unsqueeze", unique_node_name(graph, prefix + "scan_unsqueeze"), {out[1 + carried + j], axis0},
                               {graph.unique_value_name(prefix + "scan")});
      scanned[j].push_back(u->outputs[0]);
    }
  }
  std::vector<Value*> results = state;
  for (size_t j = 0; j < scans; ++j) {
    Node* c = graph.add_node("Concat", unique_node_name(graph, node->name + "/scan_concat"), scanned[j],
                             {graph.unique_value_name(node->name + "/scan_out")}, {{"axis", int64_t{0}}});
    results.push_back(c->outputs[0]);
  }
  replace_outputs(graph, node, results);
  return true;
}

}  // namespace

int inline_control_flow(Graph& graph) {
  int replaced = 0;
  // Until nothing changes: a spliced branch or body may hold control flow of its own.
  for (bool changed = true; changed;) {
    changed = false;
    for (Node* node : graph.nodes()) {
      const bool done = (node->op == "If" && inline_if(graph, node)) || (node->op == "Loop" && unroll_loop(graph, node));
      if (!done) continue;
      ++replaced;
      changed = true;
      graph.topo_sort();
      graph.infer_shapes();  // the spliced nodes' types, before the next If or Loop reads them
      break;                 // graph.nodes() changed under the loop
    }
  }
  if (replaced > 0) graph.remove_dead_nodes();  // conditions, trip counts, unused iteration numbers
  return replaced;
}

}  // namespace tilefuse::passes
