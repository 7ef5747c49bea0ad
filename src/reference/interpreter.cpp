#include "reference/interpreter.h"

#include <set>
#include <unordered_map>

#include "ir/error.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

std::vector<Tensor> evaluate_node(const Node& node, const std::vector<Tensor>& inputs) {
  const Kernel* kernel = find_kernel(node.op);
  if (kernel == nullptr) fail_user("{}: the reference interpreter has no kernel for op '{}'", node.describe(), node.op);
  std::vector<Tensor> outputs = (*kernel)(node, inputs);
  if (outputs.size() < node.outputs.size()) {
    fail_user("{}: has {} outputs, the op produces at most {}", node.describe(), node.outputs.size(), outputs.size());
  }
  outputs.resize(node.outputs.size());  // drop optional outputs the node does not use
  return outputs;
}

namespace {

// For each value used by some node, the position of the last node using it.
std::unordered_map<const Value*, size_t> last_uses(const std::vector<Node*>& nodes) {
  std::unordered_map<const Value*, size_t> last;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const Value* in : nodes[i]->inputs) {
      if (in != nullptr) last[in] = i;
    }
  }
  return last;
}

}  // namespace

std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& inputs) {
  std::unordered_map<const Value*, Tensor> live;
  for (const Value* v : graph.values()) {
    if (v->constant) live[v] = *v->constant;
  }
  for (const Value* v : graph.inputs()) {
    auto it = inputs.find(v->name);
    if (it != inputs.end()) {
      live[v] = it->second;
    } else if (!v->constant) {
      fail_user("graph '{}': input '{}' was not given", graph.name, v->name);
    }
  }
  SymbolBindings symbols;
  for (const Value* v : graph.inputs()) {
    auto it = inputs.find(v->name);
    for (size_t d = 0; it != inputs.end() && d < v->shape.size() && d < it->second.shape().size(); ++d) {
      if (v->shape[d].is_symbol()) symbols[v->shape[d].name()] = it->second.shape()[d];
    }
  }
  graph.check_assumptions(symbols);
  std::vector<Node*> nodes = graph.nodes();
  std::unordered_map<const Value*, size_t> last = last_uses(nodes);
  std::set<const Value*> graph_outputs(graph.outputs().begin(), graph.outputs().end());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    std::vector<Tensor> args;
    for (const Value* in : node.inputs) {
      if (in == nullptr) {
        args.emplace_back();
        continue;
      }
      auto it = live.find(in);
      if (it == live.end()) fail_user("{}: input '{}' has no value when the node runs", node.describe(), in->name);
      args.push_back(it->second);
    }
    std::vector<Tensor> results = evaluate_node(node, args);
    // Keep what a later node or the caller reads; free inputs nothing reads any more.
    for (size_t k = 0; k < results.size(); ++k) {
      const Value* out = node.outputs[k];
      if (last.count(out) || graph_outputs.count(out)) live[out] = std::move(results[k]);
    }
    for (const Value* in : node.inputs) {
      if (in != nullptr && last.at(in) == i && !graph_outputs.count(in)) live.erase(in);
    }
  }
  std::vector<Tensor> outputs;
  for (const Value* v : graph.outputs()) {
    auto it = live.find(v);
    if (it == live.end()) fail_user("graph '{}': output '{}' was not produced", graph.name, v->name);
    // Outputs are the caller's to keep and modify: a graph input or constant passed straight
    // through is copied so that its storage is never shared with the caller's result.
    outputs.push_back(v->producer == nullptr ? it->second.clone() : it->second);
  }
  return outputs;
}

}  // namespace tilefuse::reference
