// The loop structure of a generated kernel, derived from its iteration space: the domain's axes
// with adjacent axes merged wherever every tensor is contiguous across them (so an elementwise
// kernel over [64, 128, 256] becomes one flat loop), then split into outer axes, which blocks and
// threads divide among themselves, and inner axes, which one worker walks in full: the reduced
// axes of a reduction kernel, or the last axis of an elementwise kernel (tiled in columns).
#pragma once

#include <map>
#include <vector>

#include "fusion/iteration_space.h"

namespace tilefuse::fusion {

struct LoopAxis {
  Dim extent;
  std::map<const Value*, Dim> strides;  // per tensor; 0 = broadcast along this axis
};

struct LoopNest {
  std::vector<LoopAxis> outer;  // outermost first
  std::vector<LoopAxis> inner;  // outermost first; the last one is vectorised
  bool reduces = false;         // inner axes are reduced (else: the elementwise column axis)

  Dim outer_count() const;  // product of outer extents (1 if none)
  Dim inner_count() const;  // product of inner extents
};

LoopNest build_loop_nest(const IterationSpace& space);

}  // namespace tilefuse::fusion
