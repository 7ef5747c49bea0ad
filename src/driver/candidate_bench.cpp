#include "driver/candidate_bench.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "ir/tensor_compare.h"

namespace tilefuse::driver {

namespace {

Tensor clone_of(const Tensor& t) {
  Tensor copy(t.dtype(), t.shape());
  std::memcpy(copy.raw(), t.raw(), t.nbytes());
  return copy;
}

}  // namespace

LaunchCandidateBench::LaunchCandidateBench(std::vector<LaunchCandidate> candidates, KernelLaunch launch)
    : candidates_(std::move(candidates)), launch_(std::move(launch)) {}

LaunchCandidateBench::~LaunchCandidateBench() = default;

void LaunchCandidateBench::prepare() {
  for (const Tensor& t : launch_.buffers) clones_.push_back(clone_of(t));
  for (Tensor& t : clones_) pointers_.push_back(t.raw());
  size_t scratch = 64;
  for (const auto& c : candidates_) scratch = std::max(scratch, c.library->scratch_bytes(launch_.symbols.data()));
  for (int w = 0; w < launch_.workers; ++w) scratch_.emplace_back(scratch);
  team_ = std::make_unique<runtime::MeasuringTeam>(launch_.workers);
}

void LaunchCandidateBench::run(int candidate) {
  const LaunchCandidate& c = candidates_.at(static_cast<size_t>(candidate));
  const int64_t* symbols = launch_.symbols.data();
  const int64_t workers = launch_.workers;
  team_->team().run(
      c.library->num_blocks(symbols, workers),
      [&](int worker, int64_t first, int64_t end) {
        c.library->run_blocks(pointers_.data(), symbols, workers, first, end, scratch_[worker].data());
      },
      c.block_dim);
}

void LaunchCandidateBench::keep_as_reference() {
  reference_.clear();
  for (size_t i = launch_.num_inputs; i < clones_.size(); ++i) reference_.push_back(clone_of(clones_[i]));
}

std::optional<std::string> LaunchCandidateBench::differs_from_reference() {
  for (size_t o = 0; o < reference_.size(); ++o) {
    // Candidates differ only in how work is split, but a different split moves elements between
    // the vector body and the scalar tail, whose math may round differently: not bitwise equal.
    CompareResult r = compare_tensors(clones_[launch_.num_inputs + o], reference_[o], {.rtol = 1e-5, .atol = 1e-6});
    if (!r.ok) return fmt::format("output {}: {}", o, r.message);
  }
  return std::nullopt;
}

}  // namespace tilefuse::driver
