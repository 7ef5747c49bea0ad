// The reference interpreter: runs a Graph op by op on concrete Tensors, with the plainest
// possible code (numpy broadcasting, f16/bf16 computed via f32, reductions in double). It is the
// oracle every other execution path is tested against, so clarity beats speed here, except for
// MatMul/Gemm, which go through the BLAS.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::reference {

// Evaluates one node. `inputs[i]` is the tensor for node.inputs[i]; an omitted optional input is
// an undefined Tensor. Returns one tensor per node output. Throws UserError naming the node on
// inputs the op's rules reject (shape mismatch, bad axis, ...).
std::vector<Tensor> evaluate_node(const Node& node, const std::vector<Tensor>& inputs);

// Runs the whole graph. `inputs` maps graph input names to tensors (already validated by the
// caller); returns the graph outputs in order.
std::vector<Tensor> run_graph(const Graph& graph, const std::map<std::string, Tensor>& inputs);

}  // namespace tilefuse::reference
