#include "runtime/shape_only_values.h"

#include "ir/error.h"
#include "reference/interpreter.h"

namespace tilefuse::runtime {

namespace {

// Shape and Size look at dims only: they get a view whose bytes are never read.
Tensor dims_only(const Value* v, const ValueShapes& shapes) {
  static uint8_t unread = 0;
  return Tensor::view(v->dtype, shapes.at(v), &unread);
}

Tensor input_tensor(const Node& node, const Value* v, const ValueShapes& shapes, const ShapeOnlyValues& values,
                    const std::function<const Value*(const Value*)>& root) {
  if (v == nullptr) return Tensor();
  if (v->constant) return *v->constant;
  if (node.op == "Shape" || node.op == "Size") return dims_only(v, shapes);
  const Value* r = root(v);
  const void* data = r->constant ? r->constant->raw() : values.at(r).raw();
  return Tensor::view(v->dtype, shapes.at(v), const_cast<void*>(data));
}

}  // namespace

ShapeOnlyValues compute_shape_only_values(const fusion::FusionPlan& plan, const std::vector<bool>& shape_only,
                                          const ValueShapes& shapes,
                                          const std::function<const Value*(const Value*)>& root) {
  ShapeOnlyValues values;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const fusion::PlanStep& step = plan.steps[i];
    if (!shape_only[i] || step.kind == fusion::StepKind::View) continue;
    const Node& node = *step.node;
    std::vector<Tensor> ins;
    for (const Value* v : node.inputs) ins.push_back(input_tensor(node, v, shapes, values, root));
    std::vector<Tensor> results = reference::evaluate_node(node, ins);
    for (size_t o = 0; o < node.outputs.size() && o < results.size(); ++o) {
      const Value* out = node.outputs[o];
      auto planned = shapes.find(out);
      if (planned != shapes.end() && results[o].shape() != planned->second) {
        fail_user("{}: output '{}' has shape {} for these input shapes, but {} was planned", node.describe(),
                  out->name, dims_to_string(results[o].shape()), dims_to_string(planned->second));
      }
      values.emplace(out, std::move(results[o]));
    }
  }
  return values;
}

}  // namespace tilefuse::runtime
