// include/tilefuse/tilefuse.h's Executable: the methods every executable shares, whether it was
// compiled in this process or loaded from a model package.
#include "runtime/executable_impl.h"

#include <mutex>

#include "runtime/input_binding.h"
#include "runtime/model_package.h"

namespace tilefuse {

std::vector<TensorSpec> tensor_specs(const std::vector<Value*>& values) {
  std::vector<TensorSpec> specs;
  for (const Value* v : values) {
    TensorSpec& spec = specs.emplace_back(TensorSpec{v->name, v->type_string(), v->dtype, {}, {}});
    for (const Dim& d : v->shape) {
      spec.shape.push_back(d.is_const() ? d.value() : -1);
      spec.dim_names.push_back(d.is_const() ? std::string() : d.to_string());
    }
  }
  return specs;
}

bool Executable::Impl::matches(const Signature& signature, const std::map<std::string, Tensor>& inputs) const {
  const std::vector<Value*>& declared = graph().inputs();
  if (inputs.size() != declared.size()) return false;
  for (size_t j = 0; j < declared.size(); ++j) {
    auto it = inputs.find(declared[j]->name);
    if (it == inputs.end() || !it->second.defined() || it->second.dtype() != signature[j].first ||
        it->second.shape() != signature[j].second) {
      return false;
    }
  }
  return true;
}

void Executable::Impl::check(const std::map<std::string, Tensor>& inputs) {
  {
    std::shared_lock lock(checked_mutex_);
    for (const Signature& s : checked_) {
      if (matches(s, inputs)) return;
    }
  }
  runtime::bind_inputs(graph(), inputs);  // throws UserError naming the input and the rule
  Signature signature;
  for (const Value* in : graph().inputs()) {
    const Tensor& t = inputs.at(in->name);
    signature.emplace_back(t.dtype(), t.shape());
  }
  std::unique_lock lock(checked_mutex_);
  if (checked_.size() < 16) checked_.push_back(std::move(signature));
}

void Executable::Impl::run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) {
  check(inputs);
  run_checked(inputs, outputs);
}

std::vector<TensorSpec> Executable::inputs() const { return tensor_specs(impl_->graph().inputs()); }
std::vector<TensorSpec> Executable::outputs() const { return tensor_specs(impl_->graph().outputs()); }
Mode Executable::mode() const { return impl_->mode(); }

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

int64_t Executable::launches() const { return impl_->launches(); }
std::map<std::string, int64_t> Executable::counters() const { return impl_->counters(); }
void Executable::save(const std::string& path) const { impl_->save(path); }

Executable Executable::load(const std::string& path, const Options& options) {
  return Executable(runtime::load_model_package(path, options.threads));
}

}  // namespace tilefuse
