// A loaded model: the imported graph and where it came from.
#pragma once

#include <string>

#include "ir/graph.h"

namespace tilefuse::api {

struct Model {
  std::string path;
  Graph graph;
};

// Imports an ONNX file (see frontend/onnx_importer.h); throws UserError naming the file.
Model load_model(const std::string& path);
// The same from a serialized ModelProto; `origin` names it in messages.
Model load_model_bytes(const std::string& bytes, const std::string& origin);

}  // namespace tilefuse::api
