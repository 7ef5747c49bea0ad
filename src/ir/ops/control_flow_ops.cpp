// If and Loop, with closed subgraphs (attribute.h: GraphRef). Their operands:
//   If(cond, captures...)                     then_branch, else_branch: graph(captures...) -> (outputs...)
//   Loop(M, cond, v_initial..., captures...)  body: graph(iteration, cond, v..., captures...)
//                                                     -> (cond, v..., scan...)
// Loop's outputs are the final loop-carried values, then each scan output stacked over the
// iterations on a new axis 0. Both branches of an If must give the same types and ranks; a size
// they disagree on is a symbol of its own (known when the branch has run).
#include "ir/ops/control_flow.h"

#include "ir/error.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {

const Graph& subgraph(const Node& node, std::string_view attribute) {
  auto it = node.attrs.find(attribute);
  if (it == node.attrs.end() || attr_kind(it->second) != AttrKind::Graph || !std::get<GraphRef>(it->second)) {
    fail_user("{}: needs the graph attribute '{}'", node.describe(), attribute);
  }
  return *std::get<GraphRef>(it->second);
}

namespace {

// Whether a value of shape `outer` fits a subgraph input of shape `inner`: the same rank, and the
// same size wherever both are known. The inner shapes are what the outer graph's inference knew
// when the model was read; inferred again (after constant folding, say), the outer graph names
// the sizes it cannot compute with fresh symbols, which differ from those the subgraph holds
// (LocalResponseNorm's export captures an AveragePool of a Pad whose pads it computes).
bool fits(const Shape& inner, const Shape& outer) {
  if (inner.size() != outer.size()) return false;
  for (size_t d = 0; d < inner.size(); ++d) {
    if (inner[d].is_const() && outer[d].is_const() && inner[d] != outer[d]) return false;
  }
  return true;
}

// The subgraph's inputs from `first` on must take the node's inputs from `first_operand` on, type for type.
void check_captures(const Node& node, const Graph& g, std::string_view attribute, size_t first, size_t first_operand) {
  if (g.inputs().size() - first != node.inputs.size() - first_operand) {
    fail_user("{}: {} takes {} inputs, the node passes {}", node.describe(), attribute, g.inputs().size() - first,
              node.inputs.size() - first_operand);
  }
  for (size_t i = first; i < g.inputs().size(); ++i) {
    const Value* inner = g.inputs()[i];
    const Value* outer = node.inputs[first_operand + i - first];
    if (outer == nullptr || inner->dtype != outer->dtype || !fits(inner->shape, outer->shape)) {
      fail_user("{}: {} input '{}' is {}, the node passes {}", node.describe(), attribute, inner->name,
                inner->type_string(), outer ? outer->type_string() : "nothing");
    }
  }
}

void infer_if(Node& node, Graph& graph) {
  const Graph& then_branch = subgraph(node, "then_branch");
  const Graph& else_branch = subgraph(node, "else_branch");
  ops::require_dtype(node, 0, {DType::boolean});
  check_captures(node, then_branch, "then_branch", 0, 1);
  check_captures(node, else_branch, "else_branch", 0, 1);
  if (then_branch.outputs().size() != node.outputs.size() || else_branch.outputs().size() != node.outputs.size()) {
    fail_user("{}: its branches give {} and {} outputs, the node has {}", node.describe(), then_branch.outputs().size(),
              else_branch.outputs().size(), node.outputs.size());
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const Value* a = then_branch.outputs()[i];
    const Value* b = else_branch.outputs()[i];
    if (a->dtype != b->dtype || a->rank() != b->rank()) {
      fail_user("{}: output {} is {} in then_branch and {} in else_branch; an If whose branches differ in type or "
                "rank is not supported", node.describe(), i, a->type_string(), b->type_string());
    }
    // A size the branches disagree on (a detector's "no boxes: an empty list" against the NMS
    // result) is known only when the condition is: a fresh symbol.
    Shape shape = a->shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (a->shape[d] != b->shape[d]) shape[d] = graph.fresh_symbol("branch");
    }
    ops::set_output(node, i, a->dtype, shape);
  }
}

void infer_loop(Node& node, Graph& graph) {
  const Graph& body = subgraph(node, "body");
  const size_t carried = static_cast<size_t>(node.attr_int("carried", 0));
  if (node.inputs.size() < 2 + carried) fail_user("{}: needs M, cond and {} loop-carried values", node.describe(), carried);
  check_captures(node, body, "body", 2, 2);
  if (body.outputs().size() < 1 + carried) fail_user("{}: body gives fewer than 1 + {} outputs", node.describe(), carried);
  for (size_t i = 0; i < carried; ++i) {
    const Value* in = node.inputs[2 + i];
    const Value* out = body.outputs()[1 + i];
    if (in->dtype != out->dtype || in->shape != out->shape) {
      fail_user("{}: loop-carried value {} enters as {} and leaves the body as {}; a loop-carried value that changes "
                "type or shape is not supported", node.describe(), i, in->type_string(), out->type_string());
    }
    ops::set_output(node, i, in->dtype, in->shape);
  }
  const auto trips = node.input(0) ? ops::known_const_ints(node.input(0)) : std::nullopt;
  const Dim count = trips && trips->size() == 1 ? Dim(trips->front()) : graph.fresh_symbol("_trips");
  for (size_t i = 1 + carried; i < body.outputs().size(); ++i) {
    Shape shape = body.outputs()[i]->shape;
    shape.insert(shape.begin(), count);
    ops::set_output(node, i - 1, body.outputs()[i]->dtype, shape);  // after the carried values
  }
}

}  // namespace

void register_control_flow_ops(OpRegistry& registry) {
  registry.add({.name = "If",
                .max_inputs = ops::kVariadic,
                .max_outputs = ops::kVariadic,
                .attrs = {{"then_branch", AttrKind::Graph, true}, {"else_branch", AttrKind::Graph, true}},
                .infer = infer_if});
  registry.add({.name = "Loop",
                .min_inputs = 0,  // M and cond are optional, but hold their places (infer_loop checks)
                .max_inputs = ops::kVariadic,
                .max_outputs = ops::kVariadic,
                // `carried`: how many of the inputs after M and cond are loop-carried (the rest are
                // the body's captures).
                .attrs = {{"body", AttrKind::Graph, true}, {"carried", AttrKind::Int, true}},
                .infer = infer_loop});
}

}  // namespace tilefuse
