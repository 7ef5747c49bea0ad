// Graphviz rendering of a graph: one box per op, graph inputs, constants and outputs as
// differently styled nodes, edges labelled with the type of the tensor they carry.
//   tilefuse inspect model.onnx --dot graph.dot && dot -Tsvg graph.dot -o graph.svg
#pragma once

#include <string>

#include "ir/graph.h"

namespace tilefuse::api {

std::string graph_to_dot(const Graph& graph);

}  // namespace tilefuse::api
