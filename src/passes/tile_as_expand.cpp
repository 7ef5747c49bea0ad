#include "passes/tile_as_expand.h"

#include <string>
#include <vector>

#include "passes/node_rewrite.h"

namespace tilefuse::passes {

namespace {


// Moves the uses of `out` to `in`; a graph output keeps its name through an Identity.
void bypass(Graph& graph, Value* out, Value* in, const std::string& name) {
  if (graph.is_output(out)) {
    replace_value(graph, out, "Identity", name, {in});
  } else {
    graph.replace_all_uses(out, in);
  }
}

bool rewrite_expand(Graph& graph, Node& expand) {
  Value* in = expand.input(0);
  Value* out = expand.outputs[0];
  if (in == nullptr || in->shape != out->shape || in->dtype != out->dtype) return false;
  bypass(graph, out, in, expand.name);
  return true;
}

bool rewrite_tile(Graph& graph, Node& tile) {
  Value* x = tile.input(0);
  Value* out = tile.outputs[0];
  if (x == nullptr || tile.input(1) == nullptr || !tile.input(1)->constant) return false;
  const std::vector<int64_t> repeats = tile.input(1)->constant->to_i64_vector();
  if (static_cast<int64_t>(repeats.size()) != x->rank()) return false;
  std::vector<int64_t> split_shape, broadcast_shape, out_shape;
  for (size_t k = 0; k < repeats.size(); ++k) {
    if (!x->shape[k].is_const() || repeats[k] < 1) return false;
    const int64_t d = x->shape[k].value();
    if (repeats[k] > 1) {
      split_shape.push_back(1);
      broadcast_shape.push_back(repeats[k]);
    }
    split_shape.push_back(d);
    broadcast_shape.push_back(d);
    out_shape.push_back(d * repeats[k]);
  }
  if (split_shape.size() == repeats.size()) {  // every repeat is 1
    bypass(graph, out, x, tile.name);
    return true;
  }
  const std::string& name = tile.name;
  Value* split = added_node(graph, "Reshape", name + "/split_axes", {x, int_constant(graph, name + "_split_shape", split_shape)});
  Value* repeated = added_node(graph, "Expand", name + "/repeat", {split, int_constant(graph, name + "_repeat_shape", broadcast_shape)});
  replace_value(graph, out, "Reshape", name, {repeated, int_constant(graph, name + "_shape", out_shape)});
  return true;
}

}  // namespace

int tile_as_expand(Graph& graph) {
  return rewrite_nodes(graph, [&](Node& n) {
    if (n.op == "Expand") return rewrite_expand(graph, n);
    if (n.op == "Tile") return rewrite_tile(graph, n);
    return false;
  });
}

}  // namespace tilefuse::passes
