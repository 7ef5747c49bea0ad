#include "passes/node_rewrite.h"

#include <algorithm>
#include <utility>

#include "ir/op_registry.h"

namespace tilefuse::passes {

int rewrite_nodes(Graph& graph, const std::function<bool(Node&)>& rewrite) {
  int rewritten = 0;
  for (Node* n : graph.nodes()) {
    // A node an earlier rewrite of this sweep left without readers is dead: not rewritten again.
    const bool dead = std::all_of(n->outputs.begin(), n->outputs.end(),
                                  [&](const Value* v) { return v->users.empty() && !graph.is_output(v); });
    if (!dead) rewritten += rewrite(*n) ? 1 : 0;
  }
  if (rewritten > 0) {
    graph.topo_sort();
    graph.remove_dead_nodes();
  }
  return rewritten;
}

Value* replace_value(Graph& graph, Value* old, std::string op, std::string name, std::vector<Value*> inputs,
                     AttributeMap attrs) {
  Node* node = graph.add_node(std::move(op), std::move(name), std::move(inputs), {graph.unique_value_name(old->name)},
                              std::move(attrs));
  infer_node(*node, graph);
  Value* out = node->outputs[0];
  graph.replace_all_uses(old, out);
  std::swap(old->name, out->name);
  return out;
}

std::optional<std::vector<int64_t>> constant_ints(const Node& node, size_t i) {
  if (!node.has_input(i) || !node.input(i)->constant) return std::nullopt;
  return node.input(i)->constant->to_i64_vector();
}

Value* int_constant(Graph& graph, const std::string& name, const std::vector<int64_t>& values) {
  return graph.add_constant(graph.unique_value_name(name),
                            Tensor::from_vector<int64_t>(DType::i64, {static_cast<int64_t>(values.size())}, values));
}

Value* added_node(Graph& graph, const std::string& op, const std::string& name, std::vector<Value*> inputs,
                  AttributeMap attrs) {
  Node* n = graph.add_node(op, name, std::move(inputs), {graph.unique_value_name(name)}, std::move(attrs));
  infer_node(*n, graph);
  return n->outputs[0];
}

}  // namespace tilefuse::passes
