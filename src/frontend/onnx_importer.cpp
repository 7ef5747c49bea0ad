#include "frontend/onnx_importer.h"

#include <filesystem>

#include "frontend/external_data.h"
#include "io/file_reading.h"
#include "frontend/graph_conversion.h"
#include "frontend/model_reader.h"
#include "frontend/opset_support.h"
#include "ir/error.h"
#include "passes/constant_folding.h"

namespace tilefuse::frontend {

namespace {

// Validates the model with our own rules first, so that onnx's checker, version converter and
// shape inference only ever see models made of ops and structures we support.
onnx::ModelProto read_checked_model(const std::string& bytes, const std::string& origin, const std::string& model_dir) {
  onnx::ModelProto model = parse_model(bytes, origin);
  if (!model_dir.empty()) load_external_data(model, model_dir, origin);
  default_domain_opset(model, origin);
  check_ops_supported(model, origin);
  check_model_structure(model, origin);
  adapt_opset20_to_18(model, origin);
  adapt_opset18_to_17(model, origin);
  check_model(model, origin);
  convert_old_opset(model, origin);
  infer_onnx_shapes(model, origin);
  return model;
}

constexpr int kMaxFoldRounds = 8;

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& origin, const ImportOptions& options) {
  onnx::ModelProto model = read_checked_model(bytes, origin, options.external_data_dir);
  Graph graph = convert_graph(model, origin);
  try {
    graph.infer_shapes();
    // Folding can make a shape operand constant that inference could not see through (the
    // TorchScript exporter builds Pad's pads with Reshape/Slice/Transpose of a shape vector);
    // inference then runs again with it, until nothing more folds.
    for (int round = 0; options.fold_constants && round < kMaxFoldRounds && passes::fold_constants(graph) > 0;
         ++round) {
      graph.infer_shapes();
    }
  } catch (const UserError& e) {
    throw UserError(fmt::format("{}: {}", origin, e.what()));
  }
  graph.remove_dead_nodes();
  return graph;
}

Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
  ImportOptions with_dir = options;
  if (with_dir.external_data_dir.empty()) {
    with_dir.external_data_dir = std::filesystem::path(path).parent_path().string();
    if (with_dir.external_data_dir.empty()) with_dir.external_data_dir = ".";
  }
  return import_onnx_bytes(io::read_file(path), path, with_dir);
}

}  // namespace tilefuse::frontend
