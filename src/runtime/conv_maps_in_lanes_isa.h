// conv_maps_in_lanes.h's two inner steps for each instruction set: the sums of a band of
// outputs with maps in the lanes of a vector, and their transpose into the maps' planes. Each is
// compiled for its ISA whatever the build's target: call it only where vector_isa() is at least
// that ISA. Both read the same laid-out weights (maps padded to 16) and write the same sums.
#pragma once

#include <cstdint>

#include "ir/ops/fused_activation.h"
#include "runtime/conv_unfold.h"

namespace tilefuse::runtime::maps_in_lanes {

inline constexpr int64_t kMapsPadding = 16;  // the laid-out weights' maps, padded to this

// The geometry of one band: output rows oy0 .. oy0 + rows of one image, which read `input_rows`
// rows of each channel from input row oy0 * stride_h - pad_top, held in a zero-padded block of
// `columns` columns that covers whole groups of row outputs (24 of them: each ISA sums 6, 8 or
// 12 outputs of a row together, or 7 where that group ends before one of 8).
struct Band {
  int64_t image, oy0, rows, input_rows, columns;
};

// The sums of every map for every output of the band into `sums` ([position][maps_padded]),
// from the band's input `block` ([channel][row][column]) and the laid-out `weights` of one group
// (`s` is the group's shape).
namespace avx512 {
void sum_band(const ConvShape& s, const Band& b, const float* block, const float* weights, int64_t maps_padded,
              float* sums);
// The band's sums transposed into the maps' planes of `out` (the group's first map in the
// image), plus the residual (may be null), then the activation.
void store_planes(const ConvShape& s, const Band& b, const float* sums, int64_t maps_padded, const float* residual,
                  const FusedActivation& activation, float* out);
}  // namespace avx512

namespace avx2 {
void sum_band(const ConvShape& s, const Band& b, const float* block, const float* weights, int64_t maps_padded,
              float* sums);
void store_planes(const ConvShape& s, const Band& b, const float* sums, int64_t maps_padded, const float* residual,
                  const FusedActivation& activation, float* out);
}  // namespace avx2

}  // namespace tilefuse::runtime::maps_in_lanes
