// The SuperKernel's schedule (issue 16; the seed's fine-grained synchronisation on a CPU): a
// run's steps in one parallel region of the thread team, each worker walking the step list on
// its own, and waiting only for the earlier steps whose memory a step touches:
//   - a step that reads bytes an earlier step writes waits for that writer (read after write);
//   - a step that writes bytes an earlier step reads or writes waits for it (the arena reuses
//     bytes: write after read, write after write);
//   - nothing else: a worker that has finished its part of one step starts the next step that
//     does not depend on the unfinished ones (early start), and no step waits for its consumers.
// A wait is implied by another when the awaited step is already awaited by a step this one
// waits for; such waits are left out, so most steps wait for one or two others.
//
// A step is either split into blocks over `workers` (a generated kernel: each worker runs its
// contiguous range, as ThreadTeam::run would) or run by worker 0 (a library call or host step),
// with every other worker assisting its inner parallel loops when `workers` > 1. A step whose
// estimated work is below the schedule's parallel floor runs on one worker: handing data between
// cores costs more than it saves. Where that floor lies depends on the machine and the model
// (on this project's 2-vCPU host a tiny GPT-2 ran fastest with nothing in parallel, ResNet-50 10%
// slower with a floor of 25 us than with 6 us), so the runner measures a few floors per model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilefuse::runtime {

// Bytes [begin, end) of one memory space (the arena, or one tensor outside it).
struct ByteRange {
  const void* space = nullptr;
  size_t begin = 0, end = 0;
};

struct RegionStepInput {
  size_t step = 0;        // index in the plan
  bool blocks = false;    // true: split into blocks over the workers; false: run by worker 0
  int max_workers = 1;    // the most workers the step can use (its block count, block_dim, the team)
  double work_ns = 0;     // estimated time on one worker
  std::vector<ByteRange> reads, writes;
};

struct RegionStep {
  size_t step = 0;
  bool blocks = false;
  int workers = 1;          // blocks: workers its blocks are split over; else 1 (worker 0 alone) or all
  int64_t done_target = 1;  // the step's completion counter reaches this when it is done
  std::vector<size_t> waits;  // indices into the schedule of the steps it waits for
};

// The parallel floors worth measuring (0: every step split, for small steps of expensive math
// that the estimate undercounts), and the one used when nothing was measured.
constexpr double kParallelFloorsNs[] = {0, 6000, 25000, 100000};
constexpr double kDefaultParallelFloorNs = 12000;

// The schedule of `steps` (in plan order) for a team of `team_size` workers: steps estimated
// below `parallel_floor_ns` on one worker run on one worker.
std::vector<RegionStep> schedule_region(const std::vector<RegionStepInput>& steps, int team_size,
                                        double parallel_floor_ns);

// Estimated time of a step on one worker, from the bytes it moves and the flops it computes.
double estimated_step_ns(double bytes, double flops);

}  // namespace tilefuse::runtime
