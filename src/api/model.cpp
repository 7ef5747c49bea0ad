#include "api/model.h"

#include <spdlog/spdlog.h>

#include "frontend/onnx_importer.h"

namespace tilefuse::api {

Model load_model(const std::string& path) {
  Model model{path, frontend::import_onnx_file(path)};
  spdlog::info("loaded {}: {} nodes, {} inputs, {} outputs", path, model.graph.num_nodes(),
               model.graph.inputs().size(), model.graph.outputs().size());
  return model;
}

}  // namespace tilefuse::api
