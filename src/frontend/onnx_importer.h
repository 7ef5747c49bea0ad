// ONNX import: ModelProto -> Graph, through the onnx library (parsing, checker, shape inference).
// Initializers and Constant nodes become constants; shape subgraphs are folded when static;
// dynamic input dims (dim_param or missing) become symbols. Errors are UserErrors naming the
// file, the node (type, name, domain, opset) and what is wrong.
#pragma once

#include <string>

#include "ir/graph.h"

namespace tilefuse::frontend {

struct ImportOptions {
  bool fold_constants = true;
  // Where external tensor data files are looked up; import_onnx_file uses the model's folder.
  // Empty for import_onnx_bytes: a model with external data is then an error.
  std::string external_data_dir;
};

Graph import_onnx_file(const std::string& path, const ImportOptions& options = {});
// `origin` names the source in error messages (a file path, "<memory>").
Graph import_onnx_bytes(const std::string& bytes, const std::string& origin, const ImportOptions& options = {});

}  // namespace tilefuse::frontend
