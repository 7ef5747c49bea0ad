// The autotuner's handle on one kernel launch: the libraries of the kernel's TopN candidates,
// the kernel's buffers as bound for the first real run, and its symbol values. Everything the
// candidates touch is a clone made in the measuring process, so a candidate (even one that
// writes in place, or wrongly) never changes the caller's tensors.
#pragma once

#include <memory>
#include <vector>

#include "ir/tensor.h"
#include "runtime/cpu_wait.h"
#include "runtime/kernel_library.h"
#include "runtime/memory_planner.h"
#include "tune/autotuner.h"

namespace tilefuse::driver {

struct KernelLaunch {
  std::vector<Tensor> buffers;  // views of the kernel's inputs, then its outputs
  size_t num_inputs = 0;
  std::vector<int64_t> symbols;  // in the kernel's symbol order
  int workers = 1;               // the device limit
};

struct LaunchCandidate {
  std::shared_ptr<runtime::KernelLibrary> library;
  int block_dim = 1;
};

class LaunchCandidateBench : public tune::CandidateBench {
 public:
  LaunchCandidateBench(std::vector<LaunchCandidate> candidates, KernelLaunch launch);
  ~LaunchCandidateBench() override;

  int count() const override { return static_cast<int>(candidates_.size()); }
  void prepare() override;
  void run(int candidate) override;
  void keep_as_reference() override;
  std::optional<std::string> differs_from_reference() override;
  double cpu_waiting_share() const override { return team_ ? team_->waiting_share() : 0; }

 private:
  std::vector<LaunchCandidate> candidates_;
  KernelLaunch launch_;
  std::vector<Tensor> clones_;     // inputs, then outputs
  std::vector<void*> pointers_;    // the `buffers` argument over the clones
  std::vector<Tensor> reference_;  // outputs of the reference run
  std::vector<runtime::Arena> scratch_;  // one per worker
  std::unique_ptr<runtime::MeasuringTeam> team_;
};

}  // namespace tilefuse::driver
