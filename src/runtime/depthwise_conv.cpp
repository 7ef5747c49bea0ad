#include "runtime/depthwise_conv.h"

#include <immintrin.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "runtime/activation_vectors.h"
#include "runtime/depthwise_across_channels.h"
#include "runtime/epilogue.h"
#include "runtime/lane_masks.h"
#include "runtime/row_kernels.h"
#include "runtime/cpu_isa.h"

namespace tilefuse::runtime {

namespace {

// ---- register-blocked: 3x3, 5x5 and 7x7 kernels, strides 1 and 2 ----

// The lanes of one output vector's load (L lanes at stride S: L * S values, value e at input
// column c + e) whose column lies in [0, width), as a range [lo, hi) of values.
struct ValueRange {
  int64_t lo, hi;
};
inline ValueRange values_inside(int64_t c, int64_t width, int64_t count) {
  const int64_t lo = std::clamp<int64_t>(-c, 0, count);
  return {lo, std::clamp<int64_t>(width - c, lo, count)};
}

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,fma")
namespace avx512 {

struct Isa {
  using Vec = __m512;
  using Activation = Avx512Activation;
  using Mask = uint32_t;  // bit e for value e of the 16 * S loaded
  static constexpr int kLanes = 16, kMaxVectors = 4;
  // R * V accumulators, the KH weights of a kernel column and the loads in flight in 32
  // registers: 16 or more independent FMA chains, more than the FMA latency needs.
  static constexpr int block_rows(int kh, int v) { return std::min(8, (28 - kh - v) / v); }

  static Vec set1(float x) { return _mm512_set1_ps(x); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  template <int S>
  static Mask column_mask(int64_t c, int64_t width) {
    const auto [lo, hi] = values_inside(c, width, 16 * S);
    const auto below = [](int64_t n) { return n >= 32 ? ~0u : (1u << n) - 1; };
    const uint32_t mask = below(hi) & ~below(lo);
    return S == 2 ? mask & 0x55555555u : mask;  // at stride 2 only the even values are used
  }
  // 16 inputs at columns from, from + S, ...; lanes outside `mask` are zero.
  template <int S>
  static Vec load(const float* from, Mask mask) {
    if constexpr (S == 1) {
      return _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask), from);
    } else {
      const __m512 lo = _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask), from);
      const __m512 hi = _mm512_maskz_loadu_ps(static_cast<__mmask16>(mask >> 16), address(from, 16));
      return _mm512_permutex2var_ps(lo, even_values(), hi);
    }
  }
  template <int S>
  static Vec load(const float* from) {
    if constexpr (S == 1) {
      return _mm512_loadu_ps(from);
    } else {
      return _mm512_permutex2var_ps(_mm512_loadu_ps(from), even_values(), _mm512_loadu_ps(from + 16));
    }
  }
  static __m512i even_values() { return _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0); }
  static void store(float* to, int64_t n, Vec v) { _mm512_mask_storeu_ps(to, lanes(n), v); }
};

#include "runtime/depthwise_blocks.inc"

}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

// With 16 registers a block is one vector wide: 8 columns by up to 12 rows.
struct Isa {
  using Vec = __m256;
  using Activation = Avx2Activation;
  struct Mask {
    __m256i lo, hi;  // values 0-7 and 8-15 of the 8 * S loaded (hi only at stride 2)
  };
  static constexpr int kLanes = 8, kMaxVectors = 1;
  // The weights stay in memory (each FMA's memory operand) so that 12 of the 16 registers hold
  // accumulators: 12 independent FMA chains, where the weights in registers left room for 4,
  // and 4 chains of 4-cycle FMAs fill only half of the two FMA pipes.
  static constexpr int block_rows(int, int v) { return 12 / v; }

  static Vec set1(float x) { return _mm256_set1_ps(x); }
  static Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  // All ones in the lanes [lo - first, hi - first) of 8.
  static __m256i lanes_between(int64_t lo, int64_t hi, int first) {
    const __m256i index = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(first));
    const __m256i below_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), index);
    const __m256i below_lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lo)), index);
    return _mm256_andnot_si256(below_lo, below_hi);
  }
  template <int S>
  static Mask column_mask(int64_t c, int64_t width) {
    const auto [lo, hi] = values_inside(c, width, 8 * S);
    return {lanes_between(lo, hi, 0), lanes_between(lo, hi, 8)};
  }
  // 8 inputs at columns from, from + S, ...; a masked-off lane is zero and never read.
  template <int S>
  static Vec load(const float* from, const Mask& mask) {
    if constexpr (S == 1) {
      return _mm256_maskload_ps(from, mask.lo);
    } else {
      return evens(_mm256_maskload_ps(from, mask.lo), _mm256_maskload_ps(address(from, 8), mask.hi));
    }
  }
  template <int S>
  static Vec load(const float* from) {
    if constexpr (S == 1) {
      return _mm256_loadu_ps(from);
    } else {
      return evens(_mm256_loadu_ps(from), _mm256_loadu_ps(from + 8));
    }
  }
  // Values 0, 2, ..., 14 of lo:hi: [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6], then its 64-bit pairs in
  // the order 0, 2, 1, 3.
  static Vec evens(__m256 lo, __m256 hi) {
    const __m256 pairs = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
  }
  static void store(float* to, int64_t n, Vec v) {
    if (n >= 8) return _mm256_storeu_ps(to, v);
    _mm256_maskstore_ps(to, lanes_between(0, n, 0), v);
  }
};

#include "runtime/depthwise_blocks.inc"

}  // namespace avx2
#pragma GCC pop_options

// ---- any other shape: a padded copy of each plane ----

// Each plane is first copied into a zero-padded plane of width wp, and the output is computed
// at that width too: output (oy, ox) at flat index q = oy * wp + ox then reads the padded plane
// at stride * q + i * dil_h * wp + j * dil_w for tap (i, j) when both strides are equal. So the
// whole plane is one tap_sum, each output vector summing every tap in a register; the columns
// past out_w are computed and dropped.
struct PaddedPlane {
  int64_t wp = 0, hp = 0, span = 0;  // padded width and height; flat outputs computed per plane
  explicit PaddedPlane(const ConvShape& s) {
    const int64_t st = s.stride_w;
    wp = std::max(s.pad_left + s.width, st * (s.out_w - 1) + (s.kw - 1) * s.dil_w + 1);
    span = (s.out_h - 1) * wp + s.out_w;
    const int64_t last_read = st * (span - 1) + (s.kh - 1) * s.dil_h * wp + (s.kw - 1) * s.dil_w;
    hp = std::max(s.pad_top + s.height, last_read / wp + 1);
  }
};

void padded_planes(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                   int64_t first_plane, int64_t end_plane) {
  const PaddedPlane pp(s);
  thread_local std::vector<float> padded_storage, acc_storage;
  thread_local std::vector<int64_t> offset_storage;
  padded_storage.assign(static_cast<size_t>(pp.hp * pp.wp), 0.0f);
  acc_storage.resize(static_cast<size_t>(pp.span));
  offset_storage.clear();
  for (int64_t i = 0; i < s.kh; ++i) {
    for (int64_t j = 0; j < s.kw; ++j) offset_storage.push_back(i * s.dil_h * pp.wp + j * s.dil_w);
  }
  // (Not the thread_locals themselves in the loops: their addresses are calls.)
  float* padded = padded_storage.data();
  float* acc = acc_storage.data();
  const int64_t* offsets = offset_storage.data();
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const int64_t c = plane % s.channels;
    const float* src = x + plane * s.height * s.width;
    for (int64_t y = 0; y < s.height; ++y) {  // the padding around stays zero
      std::copy(src + y * s.width, src + (y + 1) * s.width, padded + (y + s.pad_top) * pp.wp + s.pad_left);
    }
    const float* wc = w + c * s.kh * s.kw;
    tap_sum(padded, s.stride_w, offsets, wc, s.kh * s.kw, bias != nullptr ? bias[c] : 0.0f, acc, pp.span);
    float* o = out + plane * s.positions();
    for (int64_t oy = 0; oy < s.out_h; ++oy) std::copy(acc + oy * pp.wp, acc + oy * pp.wp + s.out_w, o + oy * s.out_w);
  }
}

// The same row by row, for unequal strides: every kernel tap adds w * the shifted input row over
// the tap's valid output columns.
void tap_rows(const ConvShape& s, const float* x, const float* w, const float* bias, float* out, int64_t first_plane,
              int64_t end_plane) {
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const int64_t c = plane % s.channels;
    const float* src = x + plane * s.height * s.width;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      float* o = out + plane * s.positions() + oy * s.out_w;
      std::fill(o, o + s.out_w, bias != nullptr ? bias[c] : 0.0f);
      for_each_tap_run(s, oy, [&](int64_t tap, int64_t offset, int64_t lo, int64_t hi) {
        strided_axpy(w[c * s.kh * s.kw + tap], src + offset, s.stride_w, o + lo, hi - lo);
      });
    }
  }
}

// Planes [first_plane, end_plane) without an activation: register-blocked where the shape
// allows, otherwise through a padded copy or tap by tap.
void convolve_planes(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                     int64_t first_plane, int64_t end_plane) {
  if (depthwise_register_blocked(s)) {
    const FusedActivation none;
    if (vector_isa() == VectorIsa::avx512) {
      return avx512::register_blocked(s, x, w, bias, out, first_plane, end_plane, none);
    }
    return avx2::register_blocked(s, x, w, bias, out, first_plane, end_plane, none);
  }
  if (s.stride_h == s.stride_w || s.out_h == 1) return padded_planes(s, x, w, bias, out, first_plane, end_plane);
  tap_rows(s, x, w, bias, out, first_plane, end_plane);
}

}  // namespace

bool depthwise_register_blocked(const ConvShape& s) {
  const bool kernel = (s.kh == 3 || s.kh == 5 || s.kh == 7) && s.kw >= 1 && s.kw <= avx512::kMaxKernelWidth;
  const bool stride = s.stride_h == s.stride_w && (s.stride_h == 1 || s.stride_h == 2);
  return kernel && stride && s.dil_h == 1 && s.dil_w == 1 && vector_isa() != VectorIsa::scalar;
}

void depthwise_conv(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                    int64_t first_plane, int64_t end_plane, const FusedActivation& activation) {
  if (depthwise_across_channels_suits(s)) {
    return depthwise_across_channels(s, x, w, bias, out, first_plane, end_plane, activation);
  }
  depthwise_planes(s, x, w, bias, out, first_plane, end_plane, activation);
}

void depthwise_planes(const ConvShape& s, const float* x, const float* w, const float* bias, float* out,
                      int64_t first_plane, int64_t end_plane, const FusedActivation& activation) {
  const bool clamp = activation.form == FusedActivation::Form::clamp;  // the identity is one too
  if (depthwise_register_blocked(s) && clamp) {  // applied as the kernel stores
    if (vector_isa() == VectorIsa::avx512) {
      return avx512::register_blocked(s, x, w, bias, out, first_plane, end_plane, activation);
    }
    return avx2::register_blocked(s, x, w, bias, out, first_plane, end_plane, activation);
  }
  if (activation.identity()) return convolve_planes(s, x, w, bias, out, first_plane, end_plane);
  // A plane at a time, activated while it is still in L1 or L2.
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    convolve_planes(s, x, w, bias, out, plane, plane + 1);
    apply_epilogue(out + plane * s.positions(), nullptr, s.positions(), activation);
  }
}

}  // namespace tilefuse::runtime
