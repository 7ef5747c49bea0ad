// bf16 pairs, the operand layout of the GEMM engine's bf16 products (sgemm_microkernel.h): two
// consecutive depth steps of one row (A) or column (B) rounded to bf16 and held in one 32-bit
// word, depth step 2i in the low half and 2i + 1 in the high half, the form AVX-512's bf16 dot
// instruction multiplies. Panels keep the f32 panels' shape with a word in place of a float, so a
// panel of depth kc has (kc + 1) / 2 steps; a missing odd step is zero.
#pragma once

#include <cstdint>

#include "runtime/sgemm_microkernel.h"

namespace tilefuse::runtime {

// x rounded to bf16 to nearest even (as vcvtne2ps2bf16 does), as its 16 bits; NaN stays NaN.
uint16_t bf16_bits(float x);
// The value those bits stand for.
float bf16_value(uint16_t bits);

// Packs rows [row, row + rows) of A (rows <= kMR) over depth [k0, k0 + kc) into one A panel of
// bf16 pairs at `dst` ((kc + 1) / 2 steps of kMR words), element by element: for any strides.
void pack_a_bf16_strided(const MatrixView& a, int64_t row, int rows, int64_t k0, int64_t kc, float* dst);

// Packs depth [0, depth) x columns [0, cols) of B into kNR-column panels of bf16 pairs (a weight,
// once, when a call is prepared): panel p holds (depth + 1) / 2 steps of kNR words.
void pack_b_bf16(const MatrixView& b, int64_t depth, int64_t cols, float* dst);

}  // namespace tilefuse::runtime
