#include "frontend/onnx_importer.h"

#include "frontend/file_reading.h"
#include "frontend/graph_conversion.h"
#include "frontend/model_reader.h"
#include "frontend/opset_support.h"
#include "ir/error.h"
#include "passes/constant_folding.h"

namespace tilefuse::frontend {

namespace {

// Validates the model with our own rules first, so that onnx's checker, version converter and
// shape inference only ever see models made of ops and structures we support.
onnx::ModelProto read_checked_model(const std::string& bytes, const std::string& origin) {
  onnx::ModelProto model = parse_model(bytes, origin);
  default_domain_opset(model, origin);
  check_ops_supported(model, origin);
  check_model_structure(model, origin);
  adapt_opset18_to_17(model, origin);
  check_model(model, origin);
  convert_old_opset(model, origin);
  infer_onnx_shapes(model, origin);
  return model;
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& origin, const ImportOptions& options) {
  onnx::ModelProto model = read_checked_model(bytes, origin);
  Graph graph = convert_graph(model, origin);
  try {
    graph.infer_shapes();
    if (options.fold_constants) passes::fold_constants(graph);
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", origin, e.what()));
  }
  graph.remove_dead_nodes();
  return graph;
}

Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
  return import_onnx_bytes(read_binary_file(path), path, options);
}

}  // namespace tilefuse::frontend
