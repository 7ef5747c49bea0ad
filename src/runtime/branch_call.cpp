#include "runtime/branch_call.h"

#include <cstring>

#include "ir/error.h"

namespace tilefuse::runtime {

namespace {

class BranchCall : public LibraryCall {
 public:
  BranchCall(const Node& node, std::unique_ptr<SubgraphRunner> then_branch, std::unique_ptr<SubgraphRunner> else_branch)
      : node_(node), then_(std::move(then_branch)), else_(std::move(else_branch)) {}

  void run(ThreadTeam& /*team*/, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    const Tensor& cond = inputs.at(0);
    if (cond.numel() != 1) fail_user("{}: the condition must hold one element, got {}", node_.describe(), cond.summary());
    SubgraphRunner& branch = cond.get_i64(0) != 0 ? *then_ : *else_;
    std::map<std::string, Tensor> feed;
    for (size_t i = 0; i < branch.graph().inputs().size(); ++i) feed[branch.graph().inputs()[i]->name] = inputs.at(1 + i);
    std::vector<Tensor> results;
    branch.run(feed, results);
    // The branch's outputs live in its own arena: copied into the buffers the plan gave this step.
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].defined()) continue;  // an output nothing reads
      if (results.at(i).shape() != outputs[i].shape()) {
        fail_user("{}: output {} has shape {} at run time, but {} was planned", node_.describe(), i,
                  results[i].summary(), outputs[i].summary());
      }
      std::memcpy(outputs[i].raw(), results[i].raw(), results[i].nbytes());
    }
  }

 private:
  const Node& node_;
  std::unique_ptr<SubgraphRunner> then_;
  std::unique_ptr<SubgraphRunner> else_;
};

}  // namespace

std::unique_ptr<LibraryCall> make_branch_call(const Node& node, std::unique_ptr<SubgraphRunner> then_branch,
                                              std::unique_ptr<SubgraphRunner> else_branch) {
  return std::make_unique<BranchCall>(node, std::move(then_branch), std::move(else_branch));
}

}  // namespace tilefuse::runtime
