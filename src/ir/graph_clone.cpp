#include "ir/graph_clone.h"

#include <map>

namespace tilefuse {

namespace {

void copy_value_facts(const Value& from, Value& to) {
  to.dtype = from.dtype;
  to.shape = from.shape;
  to.sym_value = from.sym_value;
}

}  // namespace

Graph clone_graph(const Graph& graph) {
  Graph copy;
  copy.name = graph.name;
  for (const Graph::Assumption& a : graph.assumptions()) copy.assume_nonnegative(a.dim, a.reason);
  for (const auto& a : graph.broadcast_assumptions()) copy.assume_broadcast(a.operand, a.result, a.reason);
  std::map<const Value*, Value*> mapped;
  for (const Value* in : graph.inputs()) mapped[in] = copy.add_input(in->name, in->dtype, in->shape);
  for (const Value* v : graph.values()) {
    if (v->constant && !mapped.count(v)) {
      Value* c = copy.add_constant(v->name, *v->constant);  // constant data is never mutated: share it
      copy_value_facts(*v, *c);
      mapped[v] = c;
    }
  }
  for (const Node* n : graph.nodes()) {
    std::vector<Value*> inputs;
    for (const Value* in : n->inputs) inputs.push_back(in == nullptr ? nullptr : mapped.at(in));
    std::vector<std::string> output_names;
    for (const Value* out : n->outputs) output_names.push_back(out->name);
    Node* c = copy.add_node(n->op, n->name, std::move(inputs), std::move(output_names), n->attrs);
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      copy_value_facts(*n->outputs[i], *c->outputs[i]);
      mapped[n->outputs[i]] = c->outputs[i];
    }
  }
  std::vector<Value*> outputs;
  for (const Value* out : graph.outputs()) outputs.push_back(mapped.at(out));
  copy.set_outputs(std::move(outputs));
  return copy;
}

}  // namespace tilefuse
