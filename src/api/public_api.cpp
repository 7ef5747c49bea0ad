// include/tilefuse/tilefuse.h on the api layer: loading ONNX models and compiling them. The
// Executable's own methods, which a deployed program uses without the compiler, are in
// runtime/executable.cpp.
#include "tilefuse/tilefuse.h"

#include "api/model.h"
#include "api/runner.h"
#include "reference/interpreter.h"
#include "driver/executor.h"
#include "ir/error.h"
#include "runtime/executable_impl.h"

namespace tilefuse {
namespace {

api::ExecutionOptions execution_options(const Options& options) {
  api::ExecutionOptions out;
  out.threads = options.threads;
  out.compile_threads = options.compile_threads;
  out.autotune_topn = options.autotune_topn;
  out.cache_dir = options.cache_dir;
  out.debug_dir = options.debug_dir;
  return out;
}

// An executable compiled in this process: the driver's executor, or the reference interpreter.
struct CompiledExecutable : Executable::Impl {
  std::shared_ptr<const api::Model> model;
  Mode run_mode = Mode::fused;
  driver::ExecutorCounters executor_counters;
  std::unique_ptr<driver::Executor> executor;  // null in reference mode

  const Graph& graph() const override { return model->graph; }
  Mode mode() const override { return run_mode; }
  int64_t launches() const override { return executor ? executor->launches() : 0; }
  std::map<std::string, int64_t> counters() const override { return api::counter_values(executor_counters); }

  void save(const std::string& path) const override {
    if (!executor) fail_user("cannot save '{}': a reference-mode executable has no kernels to package", path);
    executor->save_package(path);
  }

  void run_checked(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) override {
    if (executor) return executor->run(inputs, outputs);
    outputs = reference::run_graph(graph(), inputs);
  }
};

}  // namespace

std::vector<TensorSpec> Model::inputs() const { return tensor_specs(model_->graph.inputs()); }
std::vector<TensorSpec> Model::outputs() const { return tensor_specs(model_->graph.outputs()); }

Model load_onnx(const std::string& path) { return Model(std::make_shared<const api::Model>(api::load_model(path))); }

Executable compile(const Model& model, const Options& options) {
  auto impl = std::make_shared<CompiledExecutable>();
  impl->model = model.model_;
  impl->run_mode = options.mode;
  if (options.mode != Mode::reference) {
    impl->executor = std::make_unique<driver::Executor>(
        impl->graph(), api::executor_options(options.mode, execution_options(options)), impl->executor_counters);
  }
  return Executable(std::move(impl));
}

std::map<std::string, Tensor> run(const Model& model, const std::map<std::string, Tensor>& inputs,
                                  const Options& options) {
  return compile(model, options).run(inputs);
}

}  // namespace tilefuse
