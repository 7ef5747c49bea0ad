// A worker's scratch memory for the hand-written kernels (the GEMM's packing, the depthwise and
// stem convolutions' blocks): kept for the thread's life and grown when a call needs more, so
// its pages are faulted in once rather than on every run (first touches are expensive here).
#pragma once

#include <cstddef>

#include "runtime/memory_planner.h"

namespace tilefuse::runtime {

class ScratchBuffer {
 public:
  // At least `count` floats, page-aligned; their contents are whatever the last call left.
  float* floats(size_t count) {
    if (arena_.size() < count * sizeof(float)) arena_ = Arena(count * sizeof(float));
    return reinterpret_cast<float*>(arena_.data());
  }

 private:
  Arena arena_;
};

}  // namespace tilefuse::runtime
