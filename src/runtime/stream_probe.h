// The machine's own memory bandwidth, the yardstick for memory-bound kernels, measured on the
// same number of threads as the model it is compared with:
//   triad    a[i] = b[i] + s * c[i] with ordinary stores, counted as STREAM counts it: three
//            arrays of n floats, no write-allocate traffic (so it understates the bus traffic);
//   copy_nt  a[i] = b[i] with non-temporal stores (no write-allocate): the streaming ceiling a
//            read-once, write-once kernel can approach.
// Arrays are far larger than the last-level cache, pre-faulted, and each kernel's best of a few
// repetitions is reported (as STREAM does), so the numbers are the machine's, not the noise's.
#pragma once

#include <cstddef>

#include "runtime/thread_team.h"

namespace tilefuse::runtime {

struct StreamOptions {
  size_t array_bytes = size_t{128} << 20;  // per array; triad touches three of them
  int repetitions = 5;                     // best of
};

struct StreamResult {
  double triad_gbps = 0;    // 1e9 bytes per second
  double copy_nt_gbps = 0;
  size_t array_bytes = 0;
  int threads = 0;
};

// Runs both probes on `team` (every worker takes one contiguous slice of every array).
// Throws UserError if the arrays cannot be allocated.
StreamResult measure_stream(ThreadTeam& team, const StreamOptions& options = {});

}  // namespace tilefuse::runtime
