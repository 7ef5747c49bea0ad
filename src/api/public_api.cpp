// include/tilefuse/tilefuse.h, implemented on the api layer.
#include "tilefuse/tilefuse.h"

#include <algorithm>
#include <shared_mutex>

#include "api/input_binding.h"
#include "api/model.h"
#include "api/runner.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace tilefuse {
namespace {

std::vector<TensorSpec> specs_of(const std::vector<Value*>& values) {
  std::vector<TensorSpec> specs;
  for (const Value* v : values) {
    TensorSpec& spec = specs.emplace_back(TensorSpec{v->name, v->type_string(), v->dtype, {}});
    for (const Dim& d : v->shape) spec.shape.push_back(d.is_const() ? d.value() : -1);
  }
  return specs;
}

api::ExecutionOptions execution_options(const Options& options) {
  api::ExecutionOptions out;
  out.threads = options.threads;
  out.compile_threads = options.compile_threads;
  out.autotune_topn = options.autotune_topn;
  out.cache_dir = options.cache_dir;
  out.debug_dir = options.debug_dir;
  return out;
}

// The dtype and dims of every input of a run, in the graph's input order.
using Signature = std::vector<std::pair<DType, std::vector<int64_t>>>;

bool matches(const Signature& signature, const std::vector<Value*>& graph_inputs,
             const std::map<std::string, Tensor>& inputs) {
  if (inputs.size() != graph_inputs.size()) return false;
  for (size_t j = 0; j < graph_inputs.size(); ++j) {
    auto it = inputs.find(graph_inputs[j]->name);
    if (it == inputs.end() || !it->second.defined() || it->second.dtype() != signature[j].first ||
        it->second.shape() != signature[j].second) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<TensorSpec> Model::inputs() const { return specs_of(model_->graph.inputs()); }
std::vector<TensorSpec> Model::outputs() const { return specs_of(model_->graph.outputs()); }

Model load_onnx(const std::string& path) { return Model(std::make_shared<const api::Model>(api::load_model(path))); }

struct Executable::Impl {
  std::shared_ptr<const api::Model> model;
  Mode mode = Mode::fused;
  driver::ExecutorCounters counters;
  std::unique_ptr<driver::Executor> executor;  // null in reference mode
  // Input types that passed validation: a run with one of them again skips the checks, which
  // allocate (the symbol bindings), so that a steady run allocates nothing.
  std::shared_mutex validated_mutex;
  std::vector<Signature> validated;

  const Graph& graph() const { return model->graph; }

  void validate(const std::map<std::string, Tensor>& inputs) {
    {
      std::shared_lock lock(validated_mutex);
      for (const Signature& s : validated) {
        if (matches(s, graph().inputs(), inputs)) return;
      }
    }
    api::bind_inputs(graph(), inputs);  // throws UserError naming the input and the rule
    Signature signature;
    for (const Value* in : graph().inputs()) {
      const Tensor& t = inputs.at(in->name);
      signature.emplace_back(t.dtype(), t.shape());
    }
    std::unique_lock lock(validated_mutex);
    if (validated.size() < 16) validated.push_back(std::move(signature));
  }

  void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) {
    validate(inputs);
    if (executor) return executor->run(inputs, outputs);
    outputs = reference::run_graph(graph(), inputs);
  }
};

std::vector<TensorSpec> Executable::inputs() const { return specs_of(impl_->graph().inputs()); }
std::vector<TensorSpec> Executable::outputs() const { return specs_of(impl_->graph().outputs()); }
Mode Executable::mode() const { return impl_->mode; }

std::map<std::string, Tensor> Executable::run(const std::map<std::string, Tensor>& inputs) const {
  std::map<std::string, Tensor> outputs;
  run(inputs, outputs);
  return outputs;
}

void Executable::run(const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor>& outputs) const {
  const auto& declared = impl_->graph().outputs();
  // The caller's tensors are moved in and back (a copy would copy their shapes), through a vector
  // kept per thread: a steady run allocates nothing here.
  thread_local std::vector<Tensor> ordered;
  ordered.resize(declared.size());
  for (size_t i = 0; i < declared.size(); ++i) {
    auto it = outputs.find(declared[i]->name);
    if (it != outputs.end()) ordered[i] = std::move(it->second);
  }
  auto give_back = [&] {
    for (size_t i = 0; i < declared.size(); ++i) {
      auto it = outputs.find(declared[i]->name);
      if (it == outputs.end()) {
        if (ordered[i].defined()) outputs.emplace(declared[i]->name, std::move(ordered[i]));
      } else {
        it->second = std::move(ordered[i]);
      }
      ordered[i] = Tensor();  // the thread keeps no reference to the caller's memory
    }
  };
  try {
    impl_->run(inputs, ordered);
  } catch (...) {
    give_back();
    throw;
  }
  give_back();
}

int64_t Executable::launches() const { return impl_->executor ? impl_->executor->launches() : 0; }

std::map<std::string, int64_t> Executable::counters() const { return api::counter_values(impl_->counters); }

Executable compile(const Model& model, const Options& options) {
  auto impl = std::make_shared<Executable::Impl>();
  impl->model = model.model_;
  impl->mode = options.mode;
  if (options.mode != Mode::reference) {
    impl->executor = std::make_unique<driver::Executor>(
        impl->graph(), api::executor_options(options.mode, execution_options(options)), impl->counters);
  }
  return Executable(std::move(impl));
}

std::map<std::string, Tensor> run(const Model& model, const std::map<std::string, Tensor>& inputs,
                                  const Options& options) {
  return compile(model, options).run(inputs);
}

}  // namespace tilefuse
