// A checked, opset-17 onnx::ModelProto -> Graph: graph inputs (dims as ints or symbols),
// initializers and Constant nodes as constants, the other nodes with their attributes, outputs.
// Shapes of node outputs are left to the IR's own inference.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "ir/graph.h"

namespace tilefuse::frontend {

Graph convert_graph(const onnx::ModelProto& model, const std::string& origin);

}  // namespace tilefuse::frontend
