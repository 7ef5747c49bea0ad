#include "api/model.h"

#include "frontend/onnx_importer.h"
#include "ir/log.h"

namespace tilefuse::api {

namespace {

Model loaded(std::string origin, Graph graph) {
  logger().info("loaded {}: {} nodes, {} inputs, {} outputs", origin, graph.num_nodes(), graph.inputs().size(),
               graph.outputs().size());
  return Model{std::move(origin), std::move(graph)};
}

}  // namespace

Model load_model(const std::string& path) { return loaded(path, frontend::import_onnx_file(path)); }

Model load_model_bytes(const std::string& bytes, const std::string& origin) {
  return loaded(origin, frontend::import_onnx_bytes(bytes, origin));
}

}  // namespace tilefuse::api
