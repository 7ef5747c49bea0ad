// The implicit GEMM's packing with AVX2. A B panel of 32 output positions is filled as four
// groups of 8 lanes, each written with one store per depth row. The positions of a
// group may span output rows (where out_w is not a multiple of 8): each run of them within one
// output row is a chunk, loaded into its own lanes (the others masked to zero) and OR-ed into
// the group. Stride 1 loads a chunk with a masked load, stride 2 with two masked loads whose
// even values are kept, other strides gather.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/conv_unfold_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/sgemm_microkernel.h"

#define TF_AVX2 __attribute__((target("avx2,fma")))

namespace tilefuse::runtime::avx2 {

namespace {

constexpr int kLanes = 8;
constexpr int kAnyStride = 0;  // kStride for strides other than 1 and 2

// Up to 8 positions of a group that lie in one output row: y0 = oy * stride_h (the input row of
// a tap with dy = 0), `base` = the input offset that lane 0 of the group would read (for a depth
// row at offset 0), `first` its first lane in the group, `ox` that lane's output column.
struct Chunk {
  int64_t y0, base, ox;
  int first, count;
};

// The loads of one chunk for one tap column: for stride 2, `lo` and `hi` mask the 16 values
// read (lane u keeps value 2u); otherwise `lo` masks the lanes. `whole`: `lo` masks nothing
// out, so a plain load reads the same (masked loads are slower on AMD). Kept as integers, not
// vectors: a std::vector of 32-byte vectors is not always 32-byte aligned.
struct LoadMask {
  int32_t lo[kLanes], hi[kLanes];
  bool whole;
  TF_AVX2 LoadMask(__m256i l, __m256i h) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo), l);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi), h);
    whole = _mm256_movemask_ps(_mm256_castsi256_ps(l)) == 0xff;
  }
  TF_AVX2 __m256i low() const { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo)); }
  TF_AVX2 __m256i high() const { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi)); }
};

template <int kStride>
TF_AVX2 LoadMask load_mask(const Chunk& c, ColumnRange valid) {
  const int lo = c.first + static_cast<int>(std::clamp<int64_t>(valid.lo - c.ox, 0, c.count));
  const int hi = c.first + static_cast<int>(std::clamp<int64_t>(valid.hi - c.ox, lo - c.first, c.count));
  const __m256i lanes = lanes8_between(lo, hi);
  if constexpr (kStride != 2) return {lanes, lanes};
  // Value e of the 16 is kept when it is even and lane e / 2 is in the mask.
  const __m256i even = _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0);
  return {_mm256_and_si256(even, _mm256_permutevar8x32_epi32(lanes, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3))),
          _mm256_and_si256(even, _mm256_permutevar8x32_epi32(lanes, _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7)))};
}

// The group's lanes of one chunk, lane 0 reading `from`; lanes outside the mask are zero.
template <int kStride>
TF_AVX2 __m256 load_chunk(const float* from, __m256i gather_index, const LoadMask& m) {
  if constexpr (kStride == 1) {
    return m.whole ? _mm256_loadu_ps(from) : _mm256_maskload_ps(from, m.low());
  } else if constexpr (kStride == 2) {
    const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    // (The high half stays masked: its last value, odd and unused, may lie past the input.)
    const __m256 lo = _mm256_permutevar8x32_ps(m.whole ? _mm256_loadu_ps(from) : _mm256_maskload_ps(from, m.low()), evens);
    const __m256 hi = _mm256_permutevar8x32_ps(_mm256_maskload_ps(address(from, 8), m.high()), evens);
    return _mm256_blend_ps(lo, hi, 0xf0);
  } else {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), from, gather_index, _mm256_castsi256_ps(m.low()), 4);
  }
}

// The chunks of the group of `count` positions starting at position q.
int split_group(const ConvShape& s, int64_t q, int count, Chunk* chunks) {
  int n = 0;
  for (int lane = 0; lane < count;) {
    const int64_t oy = q / s.out_w, ox = q % s.out_w;
    const int len = static_cast<int>(std::min<int64_t>(count - lane, s.out_w - ox));
    chunks[n++] = {oy * s.stride_h, oy * s.stride_h * s.width + (ox - lane) * s.stride_w, ox, lane, len};
    lane += len, q += len;
  }
  return n;
}

template <int kStride>
TF_AVX2 void strided_panels(const ConvShape& s, const float* x, std::span<const UnfoldedRow> rows,
                            std::span<const ColumnRange> valid, int64_t col0, int64_t cols, float* dst) {
  const auto kc = static_cast<int64_t>(rows.size());
  const __m256i gather_index = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                                  _mm256_set1_epi32(static_cast<int32_t>(s.stride_w)));
  thread_local std::vector<LoadMask> masks;  // per chunk of the group, per tap column
  std::array<Chunk, kLanes> chunks;
  for (int64_t p = 0; p < cols; p += kNR, dst += kc * kNR) {
    for (int g = 0; g < kNR / kLanes; ++g) {
      const int count = static_cast<int>(std::clamp<int64_t>(cols - p - g * kLanes, 0, kLanes));
      const int n = split_group(s, col0 + p + g * kLanes, count, chunks.data());
      masks.clear();
      for (int c = 0; c < n; ++c) {
        for (const ColumnRange& range : valid) masks.push_back(load_mask<kStride>(chunks[c], range));
      }
      const LoadMask* group_masks = masks.data();  // (not the thread_local itself: its address is a call)
      const size_t taps = valid.size();
      float* out = dst + g * kLanes;
      for (int64_t k = 0; k < kc; ++k, out += kNR) {
        const UnfoldedRow& r = rows[static_cast<size_t>(k)];
        __m256 v = _mm256_setzero_ps();
        for (int c = 0; c < n; ++c) {
          const uint64_t y = static_cast<uint64_t>(chunks[c].y0 + r.dy);
          if (y >= static_cast<uint64_t>(s.height)) continue;  // a padding row
          const LoadMask& m = group_masks[c * taps + static_cast<size_t>(r.tap_column)];
          const __m256 loaded = load_chunk<kStride>(address(x, r.offset + chunks[c].base), gather_index, m);
          v = n == 1 ? loaded : _mm256_or_ps(v, loaded);
        }
        _mm256_storeu_ps(out, v);
      }
    }
  }
}

}  // namespace

void pack_panels(const ConvShape& s, const float* x, std::span<const UnfoldedRow> rows,
                 std::span<const ColumnRange> valid, int64_t col0, int64_t cols, float* dst) {
  if (s.stride_w == 1) return strided_panels<1>(s, x, rows, valid, col0, cols, dst);
  if (s.stride_w == 2) return strided_panels<2>(s, x, rows, valid, col0, cols, dst);
  strided_panels<kAnyStride>(s, x, rows, valid, col0, cols, dst);
}

}  // namespace tilefuse::runtime::avx2
