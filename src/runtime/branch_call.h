// An If whose condition is known only at run time (control flow that planning could not inline,
// passes/control_flow_inlining.h): each branch is a model of its own, compiled like the main one
// (fused kernels, GEMMs, its own arena), and this call runs the branch the condition picks.
// The executor hands it branches it compiled (driver/executor.cpp); a model package, branches it
// loaded from sub-packages (runtime/model_package.cpp).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/library_call.h"

namespace tilefuse::runtime {

// A compiled subgraph: runs on inputs by the subgraph's input names, outputs in its order.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  virtual const Graph& graph() const = 0;
  virtual void run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>& outputs) = 0;
};

// `node` is the If (its input 0 the condition, the rest what both branches read).
std::unique_ptr<LibraryCall> make_branch_call(const Node& node, std::unique_ptr<SubgraphRunner> then_branch,
                                              std::unique_ptr<SubgraphRunner> else_branch);

}  // namespace tilefuse::runtime
