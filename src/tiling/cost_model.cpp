#include "tiling/cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tilefuse::tiling {

namespace {

// Fixed costs of setting up a block and starting a unit (row pointers, loop setup); the cost of
// waking and joining workers is the machine's (HardwareModel::fork_join_us, measured).
constexpr double kBlockUs = 0.05;
constexpr double kUnitUs = 0.01;
// A row streamed without software prefetch restarts the hardware prefetchers at every 4 KiB
// page; each restart costs about one memory latency.
constexpr double kPageRestartUs = 0.08;
constexpr int64_t kPageBytes = 4096;
// The fraction of the shorter of the memory and compute pipes that does not overlap the longer.
constexpr double kExposedWithoutPrefetch = 0.25;
constexpr double kExposedWithPrefetch = 0.05;
// What one core moves between its L2 and registers per cycle (two 64-byte lines every ~3 cycles).
constexpr double kCacheBytesPerCycle = 32;
// The share of the last-level cache a kernel's output can expect to keep until its consumer runs.
// Virtual machines often report the host's whole L3 (hundreds of MiB) while the guest gets a
// fraction of it, so the model never counts on more than this.
constexpr int64_t kMaxUsableL3Bytes = int64_t{32} << 20;

struct Split {
  int64_t units = 1, blocks = 1, workers = 1, busiest_units = 1;
};

// The thread team hands each of `workers` a contiguous range of blocks (ThreadTeam::run).
Split split_work(const KernelProfile& p, const KernelTiling& t) {
  Split s;
  s.units = std::max<int64_t>(1, p.outer * p.column_tiles(t.column_tile));
  s.blocks = (s.units + t.units_per_block - 1) / t.units_per_block;
  s.workers = std::max<int64_t>(1, std::min<int64_t>(t.block_dim, s.blocks));
  const int64_t busiest_blocks = (s.blocks + s.workers - 1) / s.workers;
  s.busiest_units = std::min(s.units, busiest_blocks * t.units_per_block);
  return s;
}

}  // namespace

int64_t cache_budget_bytes(const HardwareModel& hw) {
  return (hw.l2_bytes * std::max(1, hw.cores) + std::min(hw.l3_bytes, kMaxUsableL3Bytes)) / 2;
}

CostEstimate estimate_cost(const KernelProfile& p, const KernelTiling& t, const HardwareModel& hw) {
  const Split s = split_work(p, t);
  const double share = double(s.busiest_units) / double(s.units);  // of all the kernel's work
  const int64_t cache_budget = cache_budget_bytes(hw);
  // A kernel whose tensors all fit in the caches finds its inputs there (its producer just wrote
  // them) and streams at cache speed, not memory speed.
  const bool in_cache = p.streamed_read_bytes + p.write_bytes <= cache_budget;
  const double bytes_per_us =
      in_cache ? hw.ghz * kCacheBytesPerCycle * 1e3 : hw.gbps_per_worker(static_cast<int>(s.workers)) * 1e3;
  // What one unit walks per pass: a row, or a column reduction's reduced rows x column tile.
  const int64_t row_bytes =
      p.column_reduction ? p.inner / p.columns * std::min(p.columns, std::max<int64_t>(1, t.column_tile)) * 4 : p.inner * 4;

  // Loads: streamed inputs once; a row kernel's later passes re-read the row from memory when
  // the row (all its carried values) does not stay in L2.
  double read_bytes = double(p.streamed_read_bytes) + double(p.resident_read_bytes) / double(p.outer);
  if (p.reduces && p.passes > 1 && row_bytes * 2 > hw.l2_bytes) read_bytes *= p.passes;
  // Stores: ordinary stores of an output too large for the caches read each line first
  // (write-allocate); non-temporal stores of one small enough for the caches push it to memory,
  // where its consumer must fetch it again.
  double write_bytes = double(p.write_bytes);
  const bool output_in_cache = p.write_bytes <= cache_budget;
  if (!t.stream_stores && !output_in_cache) write_bytes += double(p.streamable_write_bytes);
  if (t.stream_stores && output_in_cache) write_bytes += double(p.streamable_write_bytes);

  CostEstimate e;
  e.load_us = read_bytes * share / bytes_per_us;
  e.store_us = write_bytes * share / bytes_per_us;
  e.compute_us = p.cycles_per_element * double(p.elements()) * share / (hw.ghz * 1e3);
  // Loads and stores share the memory bus. The pipes overlap imperfectly: while the core
  // computes, the hardware prefetchers alone keep memory busy and fall behind, so part of the
  // shorter pipe shows. Software prefetch (or data already in cache) hides most of it. Fractions
  // fitted on bias+GELU and LayerNorm at 256 MiB.
  const double memory_us = e.load_us + e.store_us;
  const bool prefetched = t.prefetch_ahead > 0 || in_cache || !p.has_streamed_contiguous_input;
  const double exposed = prefetched ? kExposedWithPrefetch : kExposedWithoutPrefetch;
  double pipe_us = std::max(memory_us, e.compute_us) + exposed * std::min(memory_us, e.compute_us);
  double prefetch_us = 0;
  if (p.has_streamed_contiguous_input && t.prefetch_ahead == 0) {
    // A column tile's rows each start in a page of their own.
    const int64_t stretch = p.column_reduction ? std::min(kPageBytes, std::max<int64_t>(64, t.column_tile * 4)) : kPageBytes;
    const double pages = double(p.streamed_read_bytes) * share / double(stretch);
    prefetch_us = p.reduces ? pages * kPageRestartUs / 4 : 0;
  } else if (t.prefetch_ahead > 0) {
    prefetch_us = pipe_us * 0.01;  // the prefetch instructions themselves
  }
  const int64_t busiest_blocks = (s.blocks + s.workers - 1) / s.workers;
  e.overhead_us = (s.workers > 1 ? hw.fork_join_us : 0.0) + kBlockUs * double(busiest_blocks) +
                  kUnitUs * double(s.busiest_units) + prefetch_us;
  e.imbalance = double(s.busiest_units) * double(s.workers) / double(s.units);
  e.total_us = pipe_us + e.overhead_us;
  e.explanation = fmt::format(
      "{} units in {} blocks on {} workers (busiest {} units, imbalance {:.2f}); per busiest worker: load {:.2f} us "
      "({:.0f} B at {:.1f} GB/s), compute {:.2f} us ({:.2f} cycles/element at {:.2f} GHz), store {:.2f} us "
      "({:.0f} B{}), overhead {:.2f} us; total {:.2f} us",
      s.units, s.blocks, s.workers, s.busiest_units, e.imbalance, e.load_us, read_bytes * share, bytes_per_us / 1e3,
      e.compute_us, p.cycles_per_element, hw.ghz, e.store_us, write_bytes * share,
      t.stream_stores ? ", non-temporal" : "", e.overhead_us, e.total_us);
  return e;
}

}  // namespace tilefuse::tiling
