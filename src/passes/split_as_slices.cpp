#include "passes/split_as_slices.h"

#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {


bool rewrite(Graph& graph, Node& split) {
  if (split.op != "Split" || split.input(0) == nullptr) return false;
  Value* x = split.input(0);
  const int64_t rank = x->rank();
  int64_t axis = split.attr_int("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis >= rank) return false;
  for (const Value* part : split.outputs) {
    if (!part->shape[axis].is_const()) return false;
  }
  int64_t start = 0;
  bool first = true;
  for (Value* part : split.outputs) {
    const int64_t end = start + part->shape[axis].value();
    if (!part->users.empty() || graph.is_output(part)) {
      const std::string name = split.name + "/" + part->name;
      // A kernel reads each of its inputs through one index map, so every part after the first
      // slices x under a name of its own: an Identity, a view of the same bytes.
      Value* source = first ? x : added_node(graph, "Identity", name + "_source", {x});
      Value* starts = int_constant(graph, name + "_start", {start});
      Value* ends = int_constant(graph, name + "_end", {end});
      Value* axes = int_constant(graph, name + "_axis", {axis});
      replace_value(graph, part, "Slice", name, {source, starts, ends, axes});
      first = false;
    }
    start = end;
  }
  return true;
}

}  // namespace

int split_as_slices(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) { return rewrite(graph, n); });
}

}  // namespace tilefuse::passes
