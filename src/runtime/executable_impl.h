// The inside of tilefuse::Executable (include/tilefuse/tilefuse.h): a model ready to run, either
// compiled in this process (api/public_api.cpp, on the driver's executor) or loaded from a model
// package (runtime/model_package.h). The public class's methods (runtime/executable.cpp) check
// the inputs and dispatch here, so that a deployed program links only libtilefuse_runtime.
#pragma once

#include <map>
#include <shared_mutex>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "tilefuse/tilefuse.h"

namespace tilefuse {

struct Executable::Impl {
  virtual ~Impl() = default;

  virtual const Graph& graph() const = 0;  // whose inputs and outputs the caller sees
  virtual Mode mode() const = 0;
  virtual int64_t launches() const = 0;
  virtual std::map<std::string, int64_t> counters() const = 0;
  // Writes a model package (Executable::save); throws UserError where that is not possible.
  virtual void save(const std::string& path) const = 0;
  // Runs on inputs that match the graph's declared inputs; outputs in the graph's order.
  virtual void run_checked(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) = 0;

  // Checks the inputs (UserError naming the input and the rule), then run_checked().
  void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs);

 private:
  // The dtype and dims of every input of a run, in the graph's input order.
  using Signature = std::vector<std::pair<DType, std::vector<int64_t>>>;
  void check(const std::map<std::string, Tensor>& inputs);
  bool matches(const Signature& signature, const std::map<std::string, Tensor>& inputs) const;

  // Input types that passed the checks: a run with one of them again skips the checks, which
  // allocate (the symbol bindings), so that a steady run allocates nothing.
  std::shared_mutex checked_mutex_;
  std::vector<Signature> checked_;
};

// Name, type text, dtype and dims (-1 where symbolic) of each value.
std::vector<TensorSpec> tensor_specs(const std::vector<Value*>& values);

}  // namespace tilefuse
