// f64 rows summed each in its own order, eight rows side by side in the lanes of one AVX-512
// vector. An f64 ReduceSum or ReduceMean rounds as the reference's in-order loop does (bit for
// bit: reduce_call.cpp), so its elements cannot be summed in vector lanes along a row; eight
// rows can: an 8 x 8 block of them is transposed in registers, and each lane adds its row's
// elements in order. Four times the speed of eight scalar chains side by side (bench/README.md).
#pragma once

#include <cstdint>

namespace tilefuse::runtime {

// acc[j] += rows[j * step + 0] + ... + rows[j * step + length - 1], added in that order, for
// j < n. Returns false, having done nothing, where the vector ISA in use (cpu_isa.h) is not
// AVX-512.
bool sum_rows_in_order(double* acc, const double* rows, int64_t step, int64_t n, int64_t length);

}  // namespace tilefuse::runtime
