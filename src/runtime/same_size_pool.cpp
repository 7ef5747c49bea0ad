#include "runtime/same_size_pool.h"

#include <immintrin.h>

#include <limits>
#include <vector>

#include "ir/error.h"
#include "runtime/cpu_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/row_kernels.h"

#define TF_AVX512 __attribute__((target("avx512f,avx512vl")))

namespace tilefuse::runtime {

namespace {

constexpr int64_t kLanes = 16;

// Room on both sides of the scratch plane for the column loads that start before its first
// position or end past its last (their lanes there are masked off): at most kLanes columns.
constexpr int64_t kMargin = kLanes;

// masks[j * chunks + c]: the lanes of positions 16c .. 16c + 15 whose window column j lies in
// their row (and which lie in the plane).
void column_masks(const SameSizePool& p, std::vector<__mmask16>& masks) {
  const int64_t n = p.height * p.width, chunks = (n + kLanes - 1) / kLanes;
  masks.assign(static_cast<size_t>(p.kw * chunks), 0);
  for (int64_t j = 0; j < p.kw; ++j) {
    for (int64_t pos = 0; pos < n; ++pos) {
      const int64_t column = pos % p.width + j - p.pad_left;
      if (column >= 0 && column < p.width) {
        masks[static_cast<size_t>(j * chunks + pos / kLanes)] |= static_cast<__mmask16>(1u << (pos % kLanes));
      }
    }
  }
}

// How a window's values combine: MaxPool keeps a NaN, as PyTorch does; AveragePool sums in
// the order pool_call's rows do, so both paths give the same bits.
struct MaxOf {
  static constexpr float kIdentity = -std::numeric_limits<float>::infinity();
  TF_AVX512 inline __attribute__((always_inline)) __m512 operator()(__m512 x, __m512 acc) const {
    return max_keeping_nan(x, acc);
  }
};
struct SumOf {
  static constexpr float kIdentity = 0.0f;
  TF_AVX512 inline __attribute__((always_inline)) __m512 operator()(__m512 x, __m512 acc) const {
    return _mm512_add_ps(acc, x);
  }
};

// The pool of planes [first_plane, end_plane): window rows combined by Op into the scratch
// plane, then window columns from it, times scale[position] where scale is not null.
template <class Op>
TF_AVX512 void pool_planes(const SameSizePool& p, const float* scale, const float* x, float* out, int64_t first_plane,
                           int64_t end_plane) {
  const Op op;
  const __m512 identity = _mm512_set1_ps(Op::kIdentity);
  // Everything the loops read, in locals: thread_local objects and the struct's fields reloaded
  // on every iteration otherwise (a TLS wrapper call each time).
  const int64_t width = p.width, n = p.height * width, chunks = (n + kLanes - 1) / kLanes;
  const int64_t kh = p.kh, kw = p.kw, pad_top = p.pad_top, pad_left = p.pad_left;
  thread_local std::vector<__mmask16> masks_storage;
  thread_local std::vector<float> scratch;
  column_masks(p, masks_storage);
  scratch.assign(static_cast<size_t>(chunks * kLanes + 2 * kMargin), 0.0f);
  const __mmask16* masks = masks_storage.data();
  float* rows = scratch.data() + kMargin;
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * n;
    float* dst = out + plane * n;
    for (int64_t p0 = 0; p0 < n; p0 += kLanes) {
      __m512 v = identity;
      for (int64_t i = 0; i < kh; ++i) {
        // A window row outside the plane is a flat index outside it: positions keep their column.
        const int64_t from = p0 + (i - pad_top) * width;
        const auto inside = static_cast<__mmask16>(lanes(n - from) & ~lanes(-from));
        if (inside != 0) v = op(_mm512_mask_loadu_ps(identity, inside, address(src, from)), v);
      }
      _mm512_storeu_ps(rows + p0, v);
    }
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t p0 = c * kLanes;
      __m512 v = identity;
      for (int64_t j = 0; j < kw; ++j) {
        v = op(_mm512_mask_loadu_ps(identity, masks[j * chunks + c], address(rows, p0 + j - pad_left)), v);
      }
      const __mmask16 stored = lanes(n - p0);
      if (scale != nullptr) v = _mm512_mul_ps(v, _mm512_maskz_loadu_ps(stored, scale + p0));
      _mm512_mask_storeu_ps(dst + p0, stored, v);
    }
  }
}

void check(const SameSizePool& p) {
  if (!same_size_pool_supports(p)) fail_internal("a same-size pool called for a window or CPU it does not support");
}

}  // namespace

bool same_size_pool_supports(const SameSizePool& p) {
  return vector_isa() == VectorIsa::avx512 && p.pad_left >= 0 && p.pad_left <= kMargin && p.kw - 1 - p.pad_left <= kMargin;
}

void max_pool_same_size(const SameSizePool& p, const float* x, float* out, int64_t first_plane, int64_t end_plane) {
  check(p);
  pool_planes<MaxOf>(p, nullptr, x, out, first_plane, end_plane);
}

void average_pool_same_size(const SameSizePool& p, const float* scale, const float* x, float* out,
                            int64_t first_plane, int64_t end_plane) {
  check(p);
  pool_planes<SumOf>(p, scale, x, out, first_plane, end_plane);
}

}  // namespace tilefuse::runtime
