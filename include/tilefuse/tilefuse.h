// The public C++ API of tilefuse.
//
//   tilefuse::Model model = tilefuse::load_onnx("model.onnx");
//   std::map<std::string, tilefuse::Tensor> outputs = tilefuse::run(model, {{"x", x}});
//
// Errors the caller can fix (bad model, wrong input shape or dtype) throw tilefuse::UserError
// with a message naming the thing and the rule; anything else thrown is a bug in tilefuse.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/runner.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "ir/memory_budget.h"  // set_max_memory: the cap on tensors, arenas and outputs
#include "ir/tensor.h"
#include "tilefuse/version.h"

namespace tilefuse {

namespace api {
struct Model;
}

using api::Mode;
// Threads (device limit), compile threads, autotune_topn, cache_dir, debug_dir; unset fields come
// from the TILEFUSE_* environment variables.
using api::ExecutionOptions;

// A name and its type as the model declares it, e.g. {"x", "f32[N, 128]"}.
struct TensorSpec {
  std::string name;
  std::string type;
};

// A loaded model. Cheap to copy: copies share the graph.
class Model {
 public:
  std::vector<TensorSpec> inputs() const;
  std::vector<TensorSpec> outputs() const;
  const Graph& graph() const;

 private:
  explicit Model(std::shared_ptr<const api::Model> model) : model_(std::move(model)) {}
  friend Model load_onnx(const std::string& path);
  std::shared_ptr<const api::Model> model_;
};

Model load_onnx(const std::string& path);

// Runs the model on `inputs` (every graph input, by name, with matching dtype and shape) and
// returns its outputs by name. In fused mode with autotune_topn > 1 the first run of a model
// measures its static kernels' candidates; later runs (any process) reuse the recorded winners.
std::map<std::string, Tensor> run(const Model& model, const std::map<std::string, Tensor>& inputs,
                                  Mode mode = Mode::reference, const ExecutionOptions& options = {});

}  // namespace tilefuse
