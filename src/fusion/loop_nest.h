// The loop structure of a generated kernel, derived from its iteration space: the domain's axes
// with adjacent axes merged wherever every tensor is contiguous across them (so an elementwise
// kernel over [64, 128, 256] becomes one flat loop), then split into outer axes, which blocks and
// threads divide among themselves, and inner axes, which one worker walks: the reduced axes of a
// row reduction, or the last axis of an elementwise kernel (tiled in columns).
//
// A reduction whose innermost axis is kept (a sum over axis 0 of [R, C], a mean over N, H, W of
// NCHW) is a column reduction: its inner axes are the reduced axes, walked as plain loops, and
// then the kept innermost axis, tiled in columns and vectorised, so every load is contiguous and
// each column keeps its own accumulator lanes.
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
  bool reduces = false;         // the kernel reduces: inner axes (all, or all but the last) are reduced
  bool columns = false;         // column reduction: the last inner axis is kept, the others reduced

  Dim outer_count() const;  // product of outer extents (1 if none)
  Dim inner_count() const;  // product of inner extents
  Dim reduced_count() const;  // elements each output element reduces over (inner, less the column axis)
  bool tiles_columns() const { return !reduces || columns; }  // the last inner axis is cut in column tiles
  // An elementwise kernel that loads some input with a stride along its vectorised axis (a
  // Transpose of a computed value, materialised): each vector touches a cache line per element.
  // Such kernels walk short column tiles down the rows (units ordered column tile by column
  // tile), so that the lines one row loads serve the next rows from L1.
  bool walks_across_rows(const std::vector<Value*>& loads) const;
};

// `loads`: the kernel's inputs (FusedKernel::inputs); an elementwise kernel numbers its units in
// the order of the largest one (loop_nest.cpp: number_units_in_input_order).
LoopNest build_loop_nest(const IterationSpace& space, const std::vector<Value*>& loads);

}  // namespace tilefuse::fusion
