// include/tilefuse/tilefuse.h, implemented on the api layer.
#include "tilefuse/tilefuse.h"

#include "api/input_binding.h"
#include "api/model.h"

namespace tilefuse {
namespace {

std::vector<TensorSpec> specs_of(const std::vector<Value*>& values) {
  std::vector<TensorSpec> specs;
  for (const Value* v : values) specs.push_back({v->name, v->type_string()});
  return specs;
}

}  // namespace

std::vector<TensorSpec> Model::inputs() const { return specs_of(model_->graph.inputs()); }
std::vector<TensorSpec> Model::outputs() const { return specs_of(model_->graph.outputs()); }
const Graph& Model::graph() const { return model_->graph; }

Model load_onnx(const std::string& path) { return Model(std::make_shared<const api::Model>(api::load_model(path))); }

std::map<std::string, Tensor> run(const Model& model, const std::map<std::string, Tensor>& inputs, Mode mode,
                                  const ExecutionOptions& options) {
  const api::BoundInputs bound = api::bind_inputs(model.graph(), inputs);
  std::map<std::string, Tensor> outputs;
  for (api::NamedTensor& output : api::run_model(model.graph(), bound, mode, options).outputs) {
    outputs.emplace(std::move(output.name), std::move(output.tensor));
  }
  return outputs;
}

}  // namespace tilefuse
