// include/tilefuse/tilefuse.h on the api layer: loading ONNX models and compiling them. The
// Executable's own methods, which a deployed program uses without the compiler, are in
// runtime/executable.cpp.
#include "tilefuse/tilefuse.h"

#include <atomic>
#include <mutex>

#include "api/logging.h"
#include "api/model.h"
#include "api/model_packaging.h"
#include "api/runner.h"
#include "reference/interpreter.h"
#include "driver/executor.h"
#include "ir/error.h"
#include "runtime/executable_impl.h"
#include "runtime/input_binding.h"

namespace tilefuse {
namespace {

api::ExecutionOptions execution_options(const Options& options) {
  api::ExecutionOptions out;
  out.threads = options.threads;
  out.compile_threads = options.compile_threads;
  out.autotune_topn = options.autotune_topn;
  out.cache_dir = options.cache_dir;
  out.debug_dir = options.debug_dir;
  out.superkernel = !options.superkernel       ? runtime::superkernel_mode_from_environment()
                    : *options.superkernel     ? runtime::SuperKernelMode::on
                                               : runtime::SuperKernelMode::off;
  out.precision = options.precision.empty() ? runtime::precision_from_environment()
                                            : runtime::parse_precision(options.precision, "Options::precision");
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

// An executable that runs through a model package in the cache (Options::cpp_wrapper): the
// package is found there, or built from the first run's inputs, by the first run.
struct PackagedExecutable : Executable::Impl {
  std::shared_ptr<const api::Model> model;
  Mode run_mode = Mode::fused;
  api::ExecutionOptions options;

  const Graph& graph() const override { return model->graph; }
  Mode mode() const override { return run_mode; }
  int64_t launches() const override {
    const Executable::Impl* package = ready_.load(std::memory_order_acquire);
    return package ? package->launches() : 0;
  }

  std::map<std::string, int64_t> counters() const override {
    const Executable::Impl* package = ready_.load(std::memory_order_acquire);
    std::map<std::string, int64_t> out;
    if (package) out = package->counters();
    out["package_built"] = built_;
    return out;
  }

  void save(const std::string& path) const override {
    const Executable::Impl* package = ready_.load(std::memory_order_acquire);
    if (!package) fail_user("cannot save '{}' before the first run, which finds or builds the package", path);
    package->save(path);
  }

  void run_checked(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) override {
    Executable::Impl* package = ready_.load(std::memory_order_acquire);
    if (package == nullptr) package = &find_or_build(inputs);
    package->run_checked(inputs, outputs);
  }

 private:
  Executable::Impl& find_or_build(const std::map<std::string, Tensor>& inputs) {
    std::lock_guard lock(mutex_);
    if (!package_) {
      api::CachedPackage cached = api::cached_package(graph(), runtime::bind_inputs(graph(), inputs), run_mode, options);
      built_ = cached.build_ms > 0;
      package_ = std::move(cached.loaded.executable);
      ready_.store(package_.get(), std::memory_order_release);
    }
    return *package_;
  }

  std::mutex mutex_;  // held while the first run finds or builds the package
  std::shared_ptr<Executable::Impl> package_;
  std::atomic<Executable::Impl*> ready_{nullptr};  // package_, once it is there
  std::atomic<bool> built_ = false;
};

}  // namespace

std::vector<TensorSpec> Model::inputs() const { return tensor_specs(model_->graph.inputs()); }
std::vector<TensorSpec> Model::outputs() const { return tensor_specs(model_->graph.outputs()); }

Model load_onnx(const std::string& path) { return Model(std::make_shared<const api::Model>(api::load_model(path))); }

Model load_onnx_bytes(const std::string& bytes, const std::string& origin) {
  return Model(std::make_shared<const api::Model>(api::load_model_bytes(bytes, origin)));
}

void configure_logging(const std::string& level) {
  api::configure_logging(level.empty() ? std::nullopt : std::optional<std::string>(level));
}

Executable compile(const Model& model, const Options& options) {
  const bool cpp_wrapper = options.cpp_wrapper.value_or(api::cpp_wrapper_from_environment());
  if (cpp_wrapper && options.mode != Mode::reference) {
    auto impl = std::make_shared<PackagedExecutable>();
    impl->model = model.model_;
    impl->run_mode = options.mode;
    impl->options = execution_options(options);
    return Executable(std::move(impl));
  }
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
