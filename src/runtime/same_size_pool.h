// MaxPool and AveragePool at stride 1 whose output keeps the input's size (a 3x3 window padded
// by 1: Inception's average pools, GoogLeNet's max pools), with AVX-512, a whole plane at a
// time. Row by row (pool_call.cpp's padded rows) a 35-wide plane is three vectors a row, and
// each row paid its loops' setup and the latency of one chain of maxima or sums: Inception-v3's
// average pools ran at half of ONNX Runtime's speed. Here a plane is one flat run of positions:
// its window rows are the same positions a whole row apart (a row outside the plane is a flat
// index outside it), reduced 16 positions at a time into a scratch plane, then its window
// columns are neighbouring positions, kept where they lie in the same row by lane masks computed
// once per call.
#pragma once

#include <cstdint>

namespace tilefuse::runtime {

// A plane of height x width and the window: kh x kw taps, the first pad_top rows above and
// pad_left columns left of the output position (stride 1, no dilation).
struct SameSizePool {
  int64_t height = 0, width = 0, kh = 0, kw = 0, pad_top = 0, pad_left = 0;
};

// Whether these run `p`: the CPU has AVX-512, and the window reaches at most 16 columns to
// either side (the scratch plane's margins).
bool same_size_pool_supports(const SameSizePool& p);

// Planes [first_plane, end_plane) of x (height x width each) into out, as MaxPool computes them
// (a window in the padding alone is -inf; NaN propagates).
void max_pool_same_size(const SameSizePool& p, const float* x, float* out, int64_t first_plane, int64_t end_plane);

// The same as AveragePool: each output the sum over its window (rows first, each in order, then
// columns in order, as pool_call's rows) times scale[position] (1 / the taps it counts).
void average_pool_same_size(const SameSizePool& p, const float* scale, const float* x, float* out,
                            int64_t first_plane, int64_t end_plane);

}  // namespace tilefuse::runtime
