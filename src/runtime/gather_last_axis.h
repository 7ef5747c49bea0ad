// torch.gather along the last axis (GatherElements with indices and data alike on every other
// axis), one row at a time: out[e] = row[indices[e]] for 4-byte elements, with the index
// wrapped once if negative. The vector form picks 8 elements a step with the gather instruction:
// 128 random picks from each of 4096 rows of 512 floats took 0.39-0.40 ms against the scalar
// loop's 0.48-0.54 on a 2-vCPU AVX2 EPYC (bench/gather_last_axis_ab.cpp). Compiled for AVX2
// whatever the build's target: call it only where vector_isa() is at least AVX2.
#pragma once

#include <cstdint>

namespace tilefuse::runtime::avx2 {

// Returns false if an index lies outside [-n, n) (that element reads the row's first element, as
// the scalar loop does); the caller names it.
bool gather_last_axis(const uint32_t* row, const int64_t* indices, uint32_t* out, int64_t count, int64_t n);
bool gather_last_axis(const uint32_t* row, const int32_t* indices, uint32_t* out, int64_t count, int64_t n);

}  // namespace tilefuse::runtime::avx2
