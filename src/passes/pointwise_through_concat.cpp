#include "passes/pointwise_through_concat.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ir/op_registry.h"
#include "ir/shape.h"
#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {

// The op reading `concat` alone, if it is pointwise and its other operands do not vary along
// the concatenated axis (so that each part meets the same operand values).
Node* pointwise_user(const Graph& graph, const Node& concat) {
  const Value* joined = concat.outputs[0];
  if (joined->users.size() != 1 || graph.is_output(joined)) return nullptr;
  Node* user = joined->users[0];
  if (!user->def().has(kPointwise) || user->outputs.size() != 1 || user->outputs[0]->rank() != joined->rank()) {
    return nullptr;
  }
  const int64_t rank = joined->rank();
  const int64_t axis = normalize_axis(concat.attr_int("axis", 0), rank, concat.describe());
  for (const Value* v : user->inputs) {
    if (v == nullptr || v == joined) continue;
    const int64_t aligned = axis - (rank - v->rank());  // numpy broadcasting aligns the last axes
    if (aligned >= 0 && !(v->shape[static_cast<size_t>(aligned)] == Dim(1))) return nullptr;
  }
  return user;
}

// Whether each computed part is read by the Concat alone, so that its kernel absorbs the op. A
// part read elsewhere too (a DenseNet layer's features, which every later layer's Concat takes)
// is better left where it is: its Concats are views of one another's bytes.
bool parts_read_by_concat_alone(const Node& concat) {
  return std::all_of(concat.inputs.begin(), concat.inputs.end(), [&](const Value* part) {
    return part != nullptr && (part->producer == nullptr || (part->users.size() == 1 && part->users[0] == &concat));
  });
}

bool move_into_parts(Graph& graph, Node& concat) {
  if (concat.op != "Concat" || concat.outputs.size() != 1 || !parts_read_by_concat_alone(concat)) return false;
  Node* user = pointwise_user(graph, concat);
  if (user == nullptr) return false;
  const Value* joined = concat.outputs[0];
  std::vector<Value*> parts;
  for (size_t p = 0; p < concat.inputs.size(); ++p) {
    std::vector<Value*> inputs = user->inputs;
    for (Value*& v : inputs) {
      if (v == joined) v = concat.input(p);
    }
    parts.push_back(added_node(graph, user->op, user->name + "/part" + std::to_string(p), inputs, user->attrs));
  }
  replace_value(graph, user->outputs[0], "Concat", concat.name, parts, concat.attrs);
  return true;
}

}  // namespace

int pointwise_through_concat(Graph& graph) {
  const auto rewrite = [&](Node& n) { return move_into_parts(graph, n); };
  int moved = 0;
  // One op per sweep: the new Concat meets the next op of a chain on the next sweep.
  while (const int sweep = rewrite_nodes(graph, rewrite)) moved += sweep;
  return moved;
}

}  // namespace tilefuse::passes
