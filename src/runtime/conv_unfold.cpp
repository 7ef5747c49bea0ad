#include "runtime/conv_unfold.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/conv_unfold_isa.h"
#include "runtime/cpu_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/row_kernels.h"
#include "runtime/sgemm_microkernel.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512vl,fma,bmi2")))

namespace tilefuse::runtime {

void unfold(const ConvShape& s, const float* x, float* cols, int64_t row_stride) {
  if (row_stride == 0) row_stride = s.positions();
  for (int64_t c = 0; c < s.group_channels(); ++c) {
    const float* plane = x + c * s.height * s.width;
    for (int64_t i = 0; i < s.kh; ++i) {
      for (int64_t j = 0; j < s.kw; ++j) {
        float* row = cols + ((c * s.kh + i) * s.kw + j) * row_stride;
        for (int64_t oy = 0; oy < s.out_h; ++oy) {
          const int64_t y = oy * s.stride_h - s.pad_top + i * s.dil_h;
          float* dst = row + oy * s.out_w;
          if (y < 0 || y >= s.height) {
            std::fill(dst, dst + s.out_w, 0.0f);
            continue;
          }
          for (int64_t ox = 0; ox < s.out_w; ++ox) {
            const int64_t xx = ox * s.stride_w - s.pad_left + j * s.dil_w;
            dst[ox] = xx >= 0 && xx < s.width ? plane[y * s.width + xx] : 0.0f;
          }
        }
      }
    }
  }
}

namespace avx512 {

namespace {

// Up to 16 positions of a B micro-panel that lie in one output row oy, from output column ox:
// y0 = oy * stride_h (the input row of a tap with dy = 0), base = the input offset its first
// lane reads less the depth row's UnfoldedRow::offset, its first lane in the panel, and the
// lanes it stores.
struct PanelChunk {
  int64_t y0, base, lane, ox;
  __mmask16 store;
};

// Where stride 1 loads a chunk with one masked load, stride 2 loads 32 values and keeps the
// even ones; other strides gather. kStride is 1, 2 or 0 (any other).
constexpr int kAnyStride = 0;

// The lanes of a chunk whose input column lies in the row, as the load for kStride wants them:
// for stride 2, bit e of 32 for value e of the two loads (lane u reads value 2u).
template <int kStride>
TF_AVX512 uint32_t load_mask(const PanelChunk& c, ColumnRange valid) {
  const int64_t count = __builtin_popcount(c.store);
  const int64_t lo = std::clamp<int64_t>(valid.lo - c.ox, 0, count), hi = std::clamp<int64_t>(valid.hi - c.ox, lo, count);
  const uint32_t mask = lanes(hi) & ~lanes(lo);
  return kStride == 2 ? _pdep_u32(mask, 0x55555555u) : mask;
}

// The 16 values of a chunk whose first lane reads `from`; lanes outside `mask` are zero.
template <int kStride>
TF_AVX512 __m512 load_chunk(const float* from, __m512i gather_index, uint32_t mask) {
  if constexpr (kStride == 1) {
    return _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask), from);
  } else if constexpr (kStride == 2) {
    const __m512 lo = _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask), from);
    const __m512 hi = _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask >> 16), address(from, 16));
    return _mm512_permutex2var_ps(lo, _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0), hi);
  } else {
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), static_cast<__mmask16>(mask), gather_index, from, 4);
  }
}

// The chunks of the panel of n positions starting at position q.
int split_panel(const ConvShape& s, int64_t q, int64_t n, PanelChunk* chunks) {
  int count = 0;
  for (int64_t lane = 0; lane < n;) {
    const int64_t oy = q / s.out_w, ox = q % s.out_w, len = std::min({n - lane, s.out_w - ox, int64_t{16}});
    chunks[count++] = {oy * s.stride_h, oy * s.stride_h * s.width + ox * s.stride_w, lane, ox,
                       static_cast<__mmask16>((1u << len) - 1)};
    lane += len, q += len;
  }
  return count;
}

// Depth row by depth row: a panel's positions split into chunks, each a run of one output row;
// then each depth row's 32 lanes are written at once, a chunk's lanes by one load from one input
// row (masked to the columns inside it, with a mask per chunk and tap column found once), or
// zeros where the tap reads a padding row. Writing a chunk's lanes down every depth row before
// the next chunk's wrote each 128-byte row of the panel in up to four passes, each after the
// panel (kc x 128 bytes) had left L1: ResNet-50's stride-2 3x3 layers spent 18% of their time
// packing.
template <int kStride>
TF_AVX512 void strided_panels(const ConvShape& s, const float* x, std::span<const UnfoldedRow> rows,
                              std::span<const ColumnRange> valid, int64_t col0, int64_t cols, float* dst) {
  const auto kc = static_cast<int64_t>(rows.size());
  const auto taps = valid.size();
  const __m512i gather_index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                  _mm512_set1_epi32(static_cast<int32_t>(s.stride_w)));
  thread_local std::vector<uint32_t> mask_storage;  // per tap column, then chunk: [j * kNR + chunk]
  mask_storage.resize(taps * kNR);
  uint32_t* masks = mask_storage.data();  // (not the thread_local itself in the loops: its address is a call)
  PanelChunk chunks[kNR];
  for (int64_t p = 0; p < cols; p += kNR, dst += kc * kNR) {
    const int64_t n = std::min<int64_t>(kNR, cols - p);
    const int count = split_panel(s, col0 + p, n, chunks);
    for (size_t j = 0; j < taps; ++j) {
      for (int c = 0; c < count; ++c) masks[j * kNR + c] = load_mask<kStride>(chunks[c], valid[j]);
    }
    float* out = dst;
    for (int64_t k = 0; k < kc; ++k, out += kNR) {
      const UnfoldedRow& r = rows[static_cast<size_t>(k)];
      const uint32_t* row_masks = masks + r.tap_column * kNR;
      for (int c = 0; c < count; ++c) {
        const PanelChunk& chunk = chunks[c];
        const uint64_t y = static_cast<uint64_t>(chunk.y0 + r.dy);
        __m512 v = _mm512_setzero_ps();
        if (y < static_cast<uint64_t>(s.height)) {
          v = load_chunk<kStride>(address(x, r.offset + chunk.base), gather_index, row_masks[c]);
        }
        _mm512_mask_storeu_ps(out + chunk.lane, chunk.store, v);
      }
      if (n < kNR) {
        // The panel's padding columns: zeros, stored with the row's other lanes.
        _mm512_mask_storeu_ps(out + n, lanes(kNR - n), _mm512_setzero_ps());
        if (n < 16) _mm512_storeu_ps(out + 16, _mm512_setzero_ps());
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

}  // namespace avx512

void pack_unfolded(const ConvShape& s, const float* x, int64_t k0, int64_t kc, int64_t col0, int64_t cols,
                   float* dst) {
  thread_local std::vector<UnfoldedRow> rows;
  thread_local std::vector<ColumnRange> valid;  // per tap column j: the output columns inside the row
  valid.clear();
  for (int64_t j = 0; j < s.kw; ++j) valid.push_back(valid_columns(j * s.dil_w - s.pad_left, s.stride_w, s.width, s.out_w));
  rows.resize(static_cast<size_t>(kc));
  int64_t c = k0 / (s.kh * s.kw), i = k0 / s.kw % s.kh, j = k0 % s.kw;
  for (UnfoldedRow& r : rows) {
    const int64_t dy = i * s.dil_h - s.pad_top;
    r = {dy, c * s.height * s.width + dy * s.width + j * s.dil_w - s.pad_left, j};
    if (++j < s.kw) continue;
    j = 0;
    if (++i < s.kh) continue;
    i = 0, ++c;
  }
  if (vector_isa() == VectorIsa::avx512) return avx512::pack_panels(s, x, rows, valid, col0, cols, dst);
  avx2::pack_panels(s, x, rows, valid, col0, cols, dst);
}

}  // namespace tilefuse::runtime
