// Builds the Graph a GraphSpec describes (through the public Graph API) and random data for its
// inputs. Numerically touchy ops get guarded operands, so that the comparison tests the kernels
// and not the conditioning of the formula: Log(|x| + 1), Sqrt(|x| + 2^-10), x / (|y| + 1), and Where
// always chooses between the two values it compares (a branch flip moves the result by at most
// their difference).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "property/graph_spec.h"

namespace tilefuse::property {

struct BuiltGraph {
  Graph graph;
  std::map<std::string, std::vector<int64_t>> input_dims;  // concrete dims of every graph input
  SymbolBindings bindings;                                 // the symbols' values those dims give
};

// True if `bindings` meet the assumptions the graph's symbolic shapes were inferred under (a
// slice's bounds inside its axis, a run-time broadcast's 1): the executor refuses the others
// by name, as it must, so they are no case for a comparison with the reference.
bool within_assumptions(const Graph& graph, const SymbolBindings& bindings);

BuiltGraph build_graph(const GraphSpec& spec);

// Uniform values in [-1, 1) for every input, from `seed`.
std::map<std::string, Tensor> random_inputs(const BuiltGraph& built, uint64_t seed);

}  // namespace tilefuse::property
