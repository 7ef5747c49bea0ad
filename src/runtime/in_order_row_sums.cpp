#include "runtime/in_order_row_sums.h"

#include <immintrin.h>

#include "runtime/cpu_isa.h"

#define TF_AVX512 __attribute__((target("avx512f")))

namespace tilefuse::runtime {

namespace {

TF_AVX512 inline __m512d mix(__m512d a, __m512d b, long long i0, long long i1, long long i2, long long i3, long long i4,
                             long long i5, long long i6, long long i7) {
  return _mm512_permutex2var_pd(a, _mm512_setr_epi64(i0, i1, i2, i3, i4, i5, i6, i7), b);
}

// v[j] holds elements 0..7 of row j; on return v[c] holds element c of rows 0..7, lane j row j.
TF_AVX512 inline void transpose(__m512d v[8]) {
  __m512d pair[8];  // rows (2k, 2k+1): [even elements interleaved], [odd elements interleaved]
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    pair[2 * k] = mix(v[2 * k], v[2 * k + 1], 0, 8, 2, 10, 4, 12, 6, 14);
    pair[2 * k + 1] = mix(v[2 * k], v[2 * k + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
  // quad[4h + c]: rows 4h..4h+3, element c in its low half and element c + 4 in its high half.
  __m512d quad[8];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
    for (int odd = 0; odd < 2; ++odd) {
      const __m512d a = pair[4 * h + odd], b = pair[4 * h + 2 + odd];
      quad[4 * h + odd] = mix(a, b, 0, 1, 8, 9, 4, 5, 12, 13);
      quad[4 * h + 2 + odd] = mix(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    v[c] = mix(quad[c], quad[4 + c], 0, 1, 2, 3, 8, 9, 10, 11);
    v[c + 4] = mix(quad[c], quad[4 + c], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// (The loops are unrolled by pragmas: at -O2 the arrays of vectors went through the stack.)
// Rows j < 8 of one group: whole blocks of 8 elements in the lanes, the rest of each row after.
TF_AVX512 void sum_eight_rows(double* acc, const double* rows, int64_t step, int64_t length) {
  __m512d sum = _mm512_loadu_pd(acc);
  int64_t r = 0;
  for (; r + 8 <= length; r += 8) {
    __m512d v[8];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) v[j] = _mm512_loadu_pd(rows + j * step + r);
    transpose(v);
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) sum = _mm512_add_pd(sum, v[c]);  // element r + c of each row, in order
  }
  _mm512_storeu_pd(acc, sum);
  for (int j = 0; j < 8; ++j) {
    for (int64_t t = r; t < length; ++t) acc[j] += rows[j * step + t];
  }
}

}  // namespace

bool sum_rows_in_order(double* acc, const double* rows, int64_t step, int64_t n, int64_t length) {
  if (vector_isa() != VectorIsa::avx512) return false;
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) sum_eight_rows(acc + j, rows + j * step, step, length);
  for (; j < n; ++j) {
    for (int64_t t = 0; t < length; ++t) acc[j] += rows[j * step + t];
  }
  return true;
}

}  // namespace tilefuse::runtime
