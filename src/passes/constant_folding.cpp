#include "passes/constant_folding.h"

#include <algorithm>

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::passes {

namespace {

// Every input is a constant (omitted optional inputs aside): the node's outputs are fixed.
bool has_constant_inputs(const Node& node) {
  return std::all_of(node.inputs.begin(), node.inputs.end(),
                     [](const Value* v) { return v == nullptr || v->is_constant(); });
}

// Element count <= cap, without overflowing on huge dims.
bool fits(const std::vector<int64_t>& dims, int64_t cap) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d == 0) return true;
    if (__builtin_mul_overflow(n, d, &n) || n > cap) return false;
  }
  return n <= cap;
}

// Whether every output's inferred shape is static and small enough to materialise.
bool outputs_within_cap(const Node& node, int64_t max_elements) {
  return std::all_of(node.outputs.begin(), node.outputs.end(),
                     [&](const Value* v) { return is_static(v->shape) && fits(static_dims(v->shape), max_elements); });
}

// An integer output whose contents inference knows exactly (a sym_value with no symbols left),
// e.g. Shape of a tensor whose shape is static even though its data is a graph input.
std::optional<Tensor> known_contents(const Value& v) {
  if (!v.sym_value || !is_integer(v.dtype) || !is_static(v.shape)) return std::nullopt;
  std::vector<int64_t> dims = static_dims(v.shape);
  if (product(dims) != static_cast<int64_t>(v.sym_value->size())) return std::nullopt;
  Tensor t(v.dtype, dims);
  for (size_t i = 0; i < v.sym_value->size(); ++i) {
    std::optional<int64_t> d = (*v.sym_value)[i].const_value();
    if (!d) return std::nullopt;
    t.set_i64(static_cast<int64_t>(i), *d);
  }
  return t;
}

std::optional<std::vector<Tensor>> contents_from_sym_values(const Node& node) {
  std::vector<Tensor> out;
  for (const Value* v : node.outputs) {
    std::optional<Tensor> t = known_contents(*v);
    if (!t) return std::nullopt;
    out.push_back(std::move(*t));
  }
  return out;
}

std::vector<Tensor> evaluate(const Node& node) {
  std::vector<Tensor> inputs;
  for (const Value* v : node.inputs) inputs.push_back(v != nullptr ? *v->constant : Tensor());
  return reference::evaluate_node(node, inputs);
}

// The constants that replace the node's outputs, or nothing when the node must stay.
std::optional<std::vector<Tensor>> folded_outputs(const Node& node, int64_t max_elements) {
  if (!outputs_within_cap(node, max_elements)) return std::nullopt;
  if (has_constant_inputs(node)) return evaluate(node);
  return contents_from_sym_values(node);
}

// Swaps each output for a constant of the same name, so graph outputs and names survive.
void replace_with_constants(Graph& graph, Node* node, std::vector<Tensor> values) {
  if (values.size() != node->outputs.size()) {
    fail_internal("constant folding: {} gave {} outputs for {}", node->describe(), values.size(),
                  node->outputs.size());
  }
  std::vector<std::pair<Value*, std::string>> renames;
  for (size_t i = 0; i < values.size(); ++i) {
    Value* out = node->outputs[i];
    // Inference and the interpreter disagreeing is a bug in one of them, not the user's.
    if (values[i].dtype() != out->dtype || shape_of(values[i].shape()) != out->shape) {
      fail_internal("constant folding: {} output '{}' is inferred as {} but evaluates to {}", node->describe(),
                    out->name, out->type_string(), values[i].summary());
    }
    Value* c = graph.add_constant(graph.unique_value_name(out->name + "_folded"), std::move(values[i]));
    graph.replace_all_uses(out, c);
    renames.emplace_back(c, out->name);
  }
  graph.remove_node(node);
  for (auto& [c, name] : renames) c->name = std::move(name);
}

}  // namespace

int fold_constants(Graph& graph, const ConstantFoldingOptions& options) {
  int folded = 0;
  for (Node* node : graph.nodes()) {
    std::optional<std::vector<Tensor>> values = folded_outputs(*node, options.max_output_elements);
    if (!values) continue;
    replace_with_constants(graph, node, std::move(*values));
    ++folded;
  }
  graph.remove_dead_nodes();
  return folded;
}

}  // namespace tilefuse::passes
