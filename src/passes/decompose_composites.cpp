#include "passes/decompose_composites.h"

#include <cmath>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace tilefuse::passes {

namespace {

// Emits primitive nodes named after the composite they replace ("<name>/<step>").
class Emitter {
 public:
  Emitter(Graph& graph, const Node& composite) : graph_(graph), base_(composite.name) {}

  Value* op(const std::string& type, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    std::string name = fmt::format("{}/{}_{}", base_, type, counter_++);
    Node* n = graph_.add_node(type, name, std::move(inputs), {graph_.unique_value_name(name)}, std::move(attrs));
    infer_node(*n, graph_);
    return n->outputs[0];
  }

  Value* scalar(double value, DType dtype) {
    Tensor t(dtype, {});
    t.set_f64(0, value);
    return graph_.add_constant(graph_.unique_value_name(fmt::format("{}/const_{}", base_, counter_++)), t);
  }

  Value* axes(const std::vector<int64_t>& axes) {
    Tensor t(DType::i64, {static_cast<int64_t>(axes.size())});
    for (size_t i = 0; i < axes.size(); ++i) t.set_i64(static_cast<int64_t>(i), axes[i]);
    return graph_.add_constant(graph_.unique_value_name(fmt::format("{}/axes_{}", base_, counter_++)), t);
  }

  Value* reduce(const std::string& type, Value* x, const std::vector<int64_t>& reduce_axes) {
    return op(type, {x, axes(reduce_axes)}, {{"keepdims", int64_t{1}}});
  }

  Value* cast(Value* x, DType to) {
    if (x->dtype == to) return x;
    return op("Cast", {x}, {{"to", int64_t{dtype_to_onnx(to)}}});
  }

 private:
  Graph& graph_;
  std::string base_;
  int counter_ = 0;
};

std::vector<int64_t> axes_from(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = first; a < rank; ++a) axes.push_back(a);
  return axes;
}

// The value the composite's outputs are replaced by, per output index (nullptr: unused).
std::vector<Value*> expand_softmax(Graph& graph, const Node& n, bool log) {
  Emitter e(graph, n);
  Value* x = n.input(0);
  DType out_type = x->dtype;
  Value* xf = e.cast(x, DType::f32);
  std::vector<int64_t> axis = {normalize_axis(n.attr_int("axis", -1), x->rank(), n.describe())};
  Value* d = e.op("Sub", {xf, e.reduce("ReduceMax", xf, axis)});
  Value* ex = e.op("Exp", {d});
  Value* sum = e.reduce("ReduceSum", ex, axis);
  Value* y = log ? e.op("Sub", {d, e.op("Log", {sum})}) : e.op("Div", {ex, sum});
  return {e.cast(y, out_type)};
}

std::vector<Value*> expand_layer_norm(Graph& graph, const Node& n) {
  Emitter e(graph, n);
  Value* x = n.input(0);
  DType out_type = x->dtype;
  std::vector<int64_t> axes = axes_from(normalize_axis(n.attr_int("axis", -1), x->rank(), n.describe()), x->rank());
  Value* xf = e.cast(x, DType::f32);
  Value* mean = e.reduce("ReduceMean", xf, axes);
  Value* d = e.op("Sub", {xf, mean});
  Value* var = e.reduce("ReduceMean", e.op("Mul", {d, d}), axes);
  Value* inv_std = e.op("Reciprocal", {e.op("Sqrt", {e.op("Add", {var, e.scalar(n.attr_float("epsilon", 1e-5), DType::f32)})})});
  Value* y = e.op("Mul", {e.op("Mul", {d, inv_std}), e.cast(n.input(1), DType::f32)});
  if (n.has_input(2)) y = e.op("Add", {y, e.cast(n.input(2), DType::f32)});
  return {e.cast(y, out_type), mean, inv_std};
}

}  // namespace

int decompose_composites(Graph& graph) {
  int rewritten = 0;
  for (Node* n : graph.nodes()) {
    std::vector<Value*> replacement;
    if (n->op == "Softmax" || n->op == "LogSoftmax") {
      replacement = expand_softmax(graph, *n, n->op == "LogSoftmax");
    } else if (n->op == "LayerNormalization") {
      replacement = expand_layer_norm(graph, *n);
    } else {
      continue;
    }
    for (size_t i = 0; i < n->outputs.size() && i < replacement.size(); ++i) {
      graph.replace_all_uses(n->outputs[i], replacement[i]);
      // Graph outputs are known to users by name: the replacement takes the original's name.
      std::swap(n->outputs[i]->name, replacement[i]->name);
    }
    ++rewritten;
  }
  if (rewritten > 0) {
    graph.topo_sort();
    graph.remove_dead_nodes();
  }
  return rewritten;
}

}  // namespace tilefuse::passes
