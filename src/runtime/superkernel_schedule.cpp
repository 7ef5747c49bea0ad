#include "runtime/superkernel_schedule.h"

#include <algorithm>

namespace tilefuse::runtime {

namespace {

bool overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a) {
    for (const ByteRange& y : b) {
      if (x.space == y.space && x.begin < y.end && y.begin < x.end) return true;
    }
  }
  return false;
}

// `later` must wait for `earlier`: it reads what earlier writes, or writes what earlier touches.
bool depends(const RegionStepInput& earlier, const RegionStepInput& later) {
  return overlap(earlier.writes, later.reads) || overlap(earlier.writes, later.writes) ||
         overlap(earlier.reads, later.writes);
}

// A set of schedule indices as bits.
class StepSet {
 public:
  explicit StepSet(size_t size) : words_((size + 63) / 64, 0) {}
  bool contains(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1U; }
  void insert(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  void insert_all(const StepSet& other) {
    for (size_t w = 0; w < words_.size(); ++w) words_[w] |= other.words_[w];
  }

 private:
  std::vector<uint64_t> words_;
};

int workers_for(const RegionStepInput& step, int team_size, double parallel_floor_ns) {
  return step.work_ns < parallel_floor_ns ? 1 : std::clamp(step.max_workers, 1, team_size);
}

}  // namespace

std::vector<RegionStep> schedule_region(const std::vector<RegionStepInput>& steps, int team_size,
                                        double parallel_floor_ns) {
  std::vector<RegionStep> schedule;
  // done_before[i]: the steps certainly complete once step i may start (what it waits for, and
  // everything those waited for), so a wait they imply is not repeated.
  std::vector<StepSet> done_before;
  for (size_t i = 0; i < steps.size(); ++i) {
    RegionStep s;
    s.step = steps[i].step;
    s.blocks = steps[i].blocks;
    s.workers = workers_for(steps[i], team_size, parallel_floor_ns);
    s.done_target = s.blocks ? s.workers : 1;
    StepSet implied(steps.size());
    for (size_t j = i; j-- > 0;) {  // latest first: their waits imply most of the earlier ones
      if (implied.contains(j) || !depends(steps[j], steps[i])) continue;
      s.waits.push_back(j);
      implied.insert(j);
      implied.insert_all(done_before[j]);
    }
    done_before.push_back(std::move(implied));
    schedule.push_back(std::move(s));
  }
  return schedule;
}

double estimated_step_ns(double bytes, double flops) {
  // One core of a current server CPU: about 20 GB/s streamed, about 80 GFLOP/s in fused kernels
  // and GEMMs. Only the order of magnitude matters: it decides whether a step is worth two cores.
  constexpr double kBytesPerNs = 20, kFlopsPerNs = 80;
  return std::max(bytes / kBytesPerNs, flops / kFlopsPerNs);
}

}  // namespace tilefuse::runtime
