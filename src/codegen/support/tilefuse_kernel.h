// tilefuse_kernel.h: the one small header every generated kernel includes.
//
// Generated kernels write their loop bodies once, as generic lambdas over a value type V: `VP`
// (a Pack of kPackVectors SIMD batches, tilefuse_pack.h) in the main loop, `VF` (one batch of
// floats, the host's widest vector via xsimd) for the vectors left over (and rows too short for
// a pack), and plain `float` in the tail. The helpers below are overloaded for all three, so
// one body serves all.
// All arithmetic is f32; f16/bf16 tensors are converted at loads and stores only. Kernels with
// integer or f64 values are scalar loops over native types instead (tilefuse_native.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <xsimd/xsimd.hpp>
#if defined(__SSE__)
#include <immintrin.h>
#endif

#include "tilefuse/kernel_abi.h"
#include "tilefuse_half.h"
#include "tilefuse_vector_math.h"

namespace tf {

constexpr int64_t kLanes = static_cast<int64_t>(VF::size);
// Vectors per main-loop step: enough independent chains to fill both vector pipes while one
// chain waits on its previous instruction (4-cycle FMA latency), few enough that a body's
// values still fit the 32 vector registers. bench/README.md has the measurement.
constexpr int kPackVectors = 4;
static_assert(kPackVectors % 2 == 0, "ExtremumAcc checks a pack's vectors for NaN in pairs, bf16 outputs store them in pairs");
using VP = PackF<kPackVectors>;
using MP = PackM<kPackVectors>;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t floordiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
inline int64_t mod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

inline float to_f32(bool b) { return b ? 1.0f : 0.0f; }

// ---- loads: contiguous, broadcast (one element for every lane) and strided ----
template <typename V, typename T> inline V load(const T* p) {
  if constexpr (kIsPack<V>) {
    V r;
    unrolled<kPackVectors>([&](auto k) { r.v[k] = load<VF>(p + k * kLanes); });
    return r;
  } else if constexpr (std::is_same_v<V, float>) {
    return to_f32(*p);
  } else if constexpr (std::is_same_v<T, float>) {
    return VF::load_unaligned(p);
  } else if constexpr (kHalfInLanes<T>) {
    return half_lanes::load(p);
  } else {
    alignas(64) float tmp[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) tmp[i] = to_f32(p[i]);
    return VF::load_aligned(tmp);
  }
}
template <typename V, typename T> inline V load_bcast(const T* p) { return V(to_f32(*p)); }

// ---- lanes read by one gather instruction (AVX-512 or AVX2; f32 data) ----
// Read lane by lane, each value went through a store to the stack and the vector was loaded back
// from there, which does not forward: a kernel gathering from a table in L1 ran at half of ONNX
// Runtime's speed. Each returns false where it does not apply (another type, no gather
// instruction, an offset beyond 31 bits, an index out of range): the caller reads lane by lane.

// Whether lanes l * step + k * stride (k in [0, extent); a negative step too) have 31-bit offsets.
inline bool fits_gather(int64_t step, int64_t stride, int64_t extent) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  const int64_t lanes_span = (step < 0 ? -step : step) * (kLanes - 1);
  if (stride < 0 || extent < 0 || extent > kMax || lanes_span > kMax) return false;
  return extent <= 1 || stride <= (kMax - lanes_span) / (extent - 1);
}

#if defined(__AVX512F__)
using LaneOffsets = __m512i;
constexpr bool kGathersLanes = kLanes == 16;
inline VF gather_lanes(const float* data, int64_t step, LaneOffsets offsets) {
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  offsets = _mm512_add_epi32(offsets, _mm512_mullo_epi32(iota, _mm512_set1_epi32(int32_t(step))));
  return VF(_mm512_i32gather_ps(offsets, data, 4));
}
// index[l] * stride for kLanes consecutive indices, a negative one wrapped once; false where
// one is out of range.
template <typename I> inline bool gathered_offsets(const I* index, int64_t stride, int64_t extent, LaneOffsets& offsets) {
  __m512i k;
  if constexpr (sizeof(I) == 8) {
    const __m512i n = _mm512_set1_epi64(extent), zero = _mm512_setzero_si512();
    __m512i lo = _mm512_loadu_si512(index), hi = _mm512_loadu_si512(index + 8);
    lo = _mm512_mask_add_epi64(lo, _mm512_cmplt_epi64_mask(lo, zero), lo, n);
    hi = _mm512_mask_add_epi64(hi, _mm512_cmplt_epi64_mask(hi, zero), hi, n);
    if ((_mm512_cmpge_epu64_mask(lo, n) | _mm512_cmpge_epu64_mask(hi, n)) != 0) return false;
    k = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(lo)), _mm512_cvtepi64_epi32(hi), 1);
  } else {
    const __m512i n = _mm512_set1_epi32(int32_t(extent));
    k = _mm512_loadu_si512(index);
    k = _mm512_mask_add_epi32(k, _mm512_cmplt_epi32_mask(k, _mm512_setzero_si512()), k, n);
    if (_mm512_cmpge_epu32_mask(k, n) != 0) return false;
  }
  offsets = _mm512_mullo_epi32(k, _mm512_set1_epi32(int32_t(stride)));
  return true;
}
inline LaneOffsets zero_offsets() { return _mm512_setzero_si512(); }
#elif defined(__AVX2__)
using LaneOffsets = __m256i;
constexpr bool kGathersLanes = kLanes == 8;
inline VF gather_lanes(const float* data, int64_t step, LaneOffsets offsets) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  offsets = _mm256_add_epi32(offsets, _mm256_mullo_epi32(iota, _mm256_set1_epi32(int32_t(step))));
  return VF(_mm256_i32gather_ps(data, offsets, 4));
}
template <typename I> inline bool gathered_offsets(const I* index, int64_t stride, int64_t extent, LaneOffsets& offsets) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i k, bad;
  if constexpr (sizeof(I) == 8) {
    const __m256i n = _mm256_set1_epi64x(extent), last = _mm256_set1_epi64x(extent - 1);
    __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index));
    __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index + 4));
    lo = _mm256_add_epi64(lo, _mm256_and_si256(_mm256_cmpgt_epi64(zero, lo), n));
    hi = _mm256_add_epi64(hi, _mm256_and_si256(_mm256_cmpgt_epi64(zero, hi), n));
    bad = _mm256_or_si256(_mm256_or_si256(_mm256_cmpgt_epi64(zero, lo), _mm256_cmpgt_epi64(lo, last)),
                          _mm256_or_si256(_mm256_cmpgt_epi64(zero, hi), _mm256_cmpgt_epi64(hi, last)));
    const __m256i low_words = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    k = _mm256_set_m128i(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(hi, low_words)),
                         _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(lo, low_words)));
  } else {
    const __m256i n = _mm256_set1_epi32(int32_t(extent)), last = _mm256_set1_epi32(int32_t(extent - 1));
    k = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index));
    k = _mm256_add_epi32(k, _mm256_and_si256(_mm256_cmpgt_epi32(zero, k), n));
    bad = _mm256_or_si256(_mm256_cmpgt_epi32(zero, k), _mm256_cmpgt_epi32(k, last));
  }
  if (!_mm256_testz_si256(bad, bad)) return false;
  offsets = _mm256_mullo_epi32(k, _mm256_set1_epi32(int32_t(stride)));
  return true;
}
inline LaneOffsets zero_offsets() { return _mm256_setzero_si256(); }
#else
constexpr bool kGathersLanes = false;
#endif

// Lane l = p[l * stride].
template <typename T> inline bool gathers_strided(const T* p, int64_t stride, VF& out) {
#if defined(__AVX512F__) || defined(__AVX2__)
  if constexpr (kGathersLanes && std::is_same_v<T, float>) {
    if (!fits_gather(stride, 0, 0)) return false;
    out = gather_lanes(p, stride, zero_offsets());
    return true;
  }
#endif
  (void)p, (void)stride, (void)out;
  return false;
}

// Lane l = data[l * step + index[l] * stride], index[l] in [-extent, extent) (load_gathered).
template <typename T, typename I>
inline bool gathers_indexed(const T* data, int64_t step, const I* index, int64_t stride, int64_t extent, VF& out) {
#if defined(__AVX512F__) || defined(__AVX2__)
  if constexpr (kGathersLanes && std::is_same_v<T, float> && std::is_signed_v<I> && (sizeof(I) == 4 || sizeof(I) == 8)) {
    LaneOffsets offsets;
    if (!fits_gather(step, stride, extent) || !gathered_offsets(index, stride, extent, offsets)) return false;
    out = gather_lanes(data, step, offsets);
    return true;
  }
#endif
  (void)data, (void)step, (void)index, (void)stride, (void)extent, (void)out;
  return false;
}

// Every other float from p (a slice with step 2: x[..., ::2]) without the gather instruction,
// which is microcoded on AMD's cores: two loads that overlap by one element, so nothing past
// p[2 * (kLanes - 1)] is read, and one lane of each pair kept by shuffles. Returns false where
// the target has no such form. A template so that `if constexpr` discards the other width's
// branch (in a plain function both are compiled, and an AVX-512 target has no __m256 batch).
template <typename V> inline bool loads_every_other(const float* p, V& out) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) {
    const __m512 a = _mm512_loadu_ps(p), b = _mm512_loadu_ps(p + 15);  // p[0..15], p[15..30]
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
    out = V(_mm512_permutex2var_ps(a, even, b));
    return true;
  }
#endif
#if defined(__AVX2__)
  if constexpr (kLanes == 8) {
    const __m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 7);  // p[0..7], p[7..14]
    // Per 128-bit half: a's lanes 0 and 2 and b's lanes 1 and 3: p0 p2 p8 p10 | p4 p6 p12 p14.
    const __m256 halves = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 2, 0));
    out = V(_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(halves), _MM_SHUFFLE(3, 1, 2, 0))));
    return true;
  }
#endif
  (void)p, (void)out;
  return false;
}

// kLanes floats from p down (a slice with step -1: torch.flip, x[..., ::-1]) without the gather
// instruction: one load of the kLanes floats ending at p, its lanes reversed. Returns false where
// the target has no such form.
template <typename V> inline bool loads_reversed(const float* p, V& out) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) {
    const __m512i down = _mm512_setr_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    out = V(_mm512_permutexvar_ps(down, _mm512_loadu_ps(p - 15)));
    return true;
  }
#endif
#if defined(__AVX2__)
  if constexpr (kLanes == 8) {
    out = V(_mm256_permutevar8x32_ps(_mm256_loadu_ps(p - 7), _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0)));
    return true;
  }
#endif
  (void)p, (void)out;
  return false;
}

template <typename V, typename T> inline V load_strided(const T* p, int64_t stride) {
  if constexpr (kIsPack<V>) {
    V r;
    unrolled<kPackVectors>([&](auto k) { r.v[k] = load_strided<VF>(p + k * kLanes * stride, stride); });
    return r;
  } else if constexpr (std::is_same_v<V, float>) {
    return to_f32(*p);
  } else {
    // A stride the run settles (a dim that is 1 or the domain's: fusion/iteration_space.cpp) is
    // 0 or 1, the same on every call: the branch predicts, and the plain loads are cheaper.
    if (stride == 1) return load<VF>(p);
    if (stride == 0) return load_bcast<VF>(p);
    if constexpr (std::is_same_v<T, float>) {
      if (VF v; stride == 2 && loads_every_other(p, v)) return v;
      if (VF v; stride == -1 && loads_reversed(p, v)) return v;
    }
    if (VF v; gathers_strided(p, stride, v)) return v;
    alignas(64) float tmp[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) tmp[i] = to_f32(p[i * stride]);
    return VF::load_aligned(tmp);
  }
}

// Software prefetch `p` into all cache levels, once per vector step (the scalar tail needs none).
// Hardware prefetchers stop at 4 KiB page boundaries, so a kernel walking rows of a page or so
// restarts them cold on every row and waits for memory; asking for the next row while working on
// this one keeps the memory busy during the compute-only passes of a row.
template <typename V, typename T> inline void prefetch(const T* p) {
  if constexpr (kIsPack<V>) {
    // A plain loop: GCC 12 drops a __builtin_prefetch written in a generic lambda in a template.
    for (int k = 0; k < kPackVectors; ++k) __builtin_prefetch(p + k * kLanes, 0, 3);
  } else if constexpr (!std::is_same_v<V, float>) {
    __builtin_prefetch(p, 0, 3);
  }
}

// ---- gathers (Gather and GatherElements inside a kernel) ----
// The start of a kernel's scratch where its gathers report an index out of range: the gather's
// number (from 1) and the index. The runtime zeroes it before the run and reads it after.
constexpr size_t kGatherErrorBytes = 64;

// The element offset of index k along an axis of `extent` elements `stride` apart; an index out
// of range is recorded in `error` and reads element 0 instead.
inline int64_t gathered_offset(int64_t k, int64_t stride, int64_t extent, int64_t* error, int64_t gather) {
  const int64_t wrapped = k < 0 ? k + extent : k;
  if (static_cast<uint64_t>(wrapped) >= static_cast<uint64_t>(extent)) [[unlikely]] {
    error[0] = gather;
    error[1] = k;
    return 0;
  }
  return wrapped * stride;
}

// Lane l of the result is data[l * data_step + index[l * index_step] along the gathered axis].
template <typename V, typename T, typename I>
inline V load_gathered(const T* data, int64_t data_step, const I* index, int64_t index_step, int64_t stride, int64_t extent,
                       int64_t* error, int64_t gather) {
  if (index_step == 0 && data_step == 1) {
    // One index for every lane (an embedding row): a contiguous run of its row.
    return load<V>(data + gathered_offset(int64_t(index[0]), stride, extent, error, gather));
  }
  if constexpr (kIsPack<V>) {
    V r;
    unrolled<kPackVectors>([&](auto k) {
      r.v[k] = load_gathered<VF>(data + k * kLanes * data_step, data_step, index + k * kLanes * index_step, index_step,
                                 stride, extent, error, gather);
    });
    return r;
  } else if constexpr (std::is_same_v<V, float>) {
    return to_f32(data[gathered_offset(int64_t(index[0]), stride, extent, error, gather)]);
  } else {
    if (VF v; index_step == 1 && gathers_indexed(data, data_step, index, stride, extent, v)) return v;
    alignas(64) float tmp[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      tmp[l] = to_f32(data[l * data_step + gathered_offset(int64_t(index[l * index_step]), stride, extent, error, gather)]);
    }
    return VF::load_aligned(tmp);
  }
}

// ---- transposed blocks ----
// A kLanes x kLanes block of a tensor read across its rows (a Transpose materialised): on
// return t[r] holds p[r + j * stride] for j = 0 .. kLanes - 1. The block is read as kLanes
// contiguous runs, one per j, so each cache line is read whole once, where strided loads touch
// kLanes lines per vector (and, at a power-of-two stride, lines of one cache set that evict each
// other); then it is transposed in registers (AVX-512, AVX2) or through L1.
inline void transpose_block(VF* t) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) {
    // Pairs of rows interleaved, then pairs of pairs, then 128-bit quarters twice.
    __m512 a[16], b[16];
    for (int i = 0; i < 16; i += 2) {
      a[i] = _mm512_unpacklo_ps(t[i], t[i + 1]);
      a[i + 1] = _mm512_unpackhi_ps(t[i], t[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
      for (int k = 0; k < 2; ++k) {
        b[i + k] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a[i + k]), _mm512_castps_pd(a[i + k + 2])));
        b[i + k + 2] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a[i + k]), _mm512_castps_pd(a[i + k + 2])));
      }
    }
    for (int i = 0; i < 16; i += 8) {
      for (int k = 0; k < 4; ++k) {
        a[i + k] = _mm512_shuffle_f32x4(b[i + k], b[i + k + 4], 0x88);
        a[i + k + 4] = _mm512_shuffle_f32x4(b[i + k], b[i + k + 4], 0xdd);
      }
    }
    for (int k = 0; k < 8; ++k) {
      b[k] = _mm512_shuffle_f32x4(a[k], a[k + 8], 0x88);
      b[k + 8] = _mm512_shuffle_f32x4(a[k], a[k + 8], 0xdd);
    }
    // b[q] holds row q of the transposed block with the middle two of each four swapped.
    for (int q = 0; q < 16; ++q) t[(q & 12) | ((q & 1) << 1) | ((q & 2) >> 1)] = b[q];
    return;
  }
#elif defined(__AVX2__)
  if constexpr (kLanes == 8) {
    __m256 a[8], b[8];
    for (int i = 0; i < 8; i += 2) {
      a[i] = _mm256_unpacklo_ps(t[i], t[i + 1]);
      a[i + 1] = _mm256_unpackhi_ps(t[i], t[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
      b[i] = _mm256_shuffle_ps(a[i], a[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
      b[i + 1] = _mm256_shuffle_ps(a[i], a[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
      b[i + 2] = _mm256_shuffle_ps(a[i + 1], a[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
      b[i + 3] = _mm256_shuffle_ps(a[i + 1], a[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int k = 0; k < 4; ++k) {
      t[k] = _mm256_permute2f128_ps(b[k], b[k + 4], 0x20);
      t[k + 4] = _mm256_permute2f128_ps(b[k], b[k + 4], 0x31);
    }
    return;
  }
#endif
  alignas(64) float block[kLanes * kLanes];
  for (int64_t j = 0; j < kLanes; ++j) t[j].store_aligned(block + j * kLanes);
  for (int64_t r = 0; r < kLanes; ++r) {
    alignas(64) float column[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) column[j] = block[j * kLanes + r];
    t[r] = VF::load_aligned(column);
  }
}
template <typename T> inline void load_transposed(const T* p, int64_t stride, VF* t) {
  for (int64_t j = 0; j < kLanes; ++j) t[j] = load<VF>(p + j * stride);
  transpose_block(t);
}

// ---- stores ----
template <typename T> inline void store(T* p, float v) { from_f32(v, p); }
template <typename T> inline void store(T* p, VF v) {
  if constexpr (std::is_same_v<T, float>) {
    v.store_unaligned(p);
  } else if constexpr (kHalfInLanes<T>) {
    half_lanes::store<false>(p, v);
  } else {
    alignas(64) float tmp[kLanes];
    v.store_aligned(tmp);
    for (int64_t i = 0; i < kLanes; ++i) from_f32(tmp[i], p + i);
  }
}
// Masks are stored as bool bytes.
inline void store(bool* p, bool m) { *p = m; }
inline void store(bool* p, MF m) {
  alignas(64) float tmp[kLanes];
  xsimd::select(m, VF(1.0f), VF(0.0f)).store_aligned(tmp);
  for (int64_t i = 0; i < kLanes; ++i) p[i] = tmp[i] != 0.0f;
}
// Output stores that bypass the caches (non-temporal), for outputs too large to be read again
// from cache: an ordinary store first reads the line it writes (write-allocate), a third more
// traffic for a read-once, write-once kernel. Only whole aligned vectors (f32, or f16/bf16 as
// tilefuse_half.h stores them) stream; anything else takes the ordinary store. A kernel that
// streamed calls stream_fence() before it returns, because non-temporal stores are not ordered
// by the thread team's release/acquire hand-off.
inline bool stream_aligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & (sizeof(VF) - 1)) == 0; }
// A template so that only the branch of the host's vector width is compiled.
template <typename V> inline void stream_store(float* p, V v) {
#if defined(__AVX512F__)
  if constexpr (sizeof(VF) == 64) { _mm512_stream_ps(p, v); return; }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(VF) == 32) { _mm256_stream_ps(p, v); return; }
#endif
#if defined(__SSE__)
  if constexpr (sizeof(VF) == 16) { _mm_stream_ps(p, v); return; }
#endif
  v.store_aligned(p);
}
template <typename T> inline void store(T* p, const VP& v) {
  unrolled<kPackVectors>([&](auto k) { tf::store(p + k * kLanes, v.v[k]); });
}
inline void store(bool* p, const MP& m) {
  unrolled<kPackVectors>([&](auto k) { tf::store(p + k * kLanes, m.v[k]); });
}
inline void stream_fence() {
#if defined(__SSE__)
  _mm_sfence();
#endif
}
template <bool kStream, typename T, typename V> inline void store_output(T* p, const V& v) {
  if constexpr (kIsPack<V> && std::is_same_v<T, bf16>) {
    unrolled<kPackVectors / 2>([&](auto k) { half_lanes::store_pair<kStream>(p + 2 * k * kLanes, v.v[2 * k], v.v[2 * k + 1]); });
  } else if constexpr (kIsPack<V>) {
    unrolled<kPackVectors>([&](auto k) { store_output<kStream>(p + k * kLanes, v.v[k]); });
  } else {
    if constexpr (kStream && std::is_same_v<T, float> && std::is_same_v<V, VF>) {
      if (stream_aligned(p)) return stream_store(p, v);
    } else if constexpr (kStream && std::is_same_v<V, VF> && kHalfInLanes<T>) {
      return half_lanes::store<true>(p, v);  // streams where aligned
    }
    tf::store(p, v);
  }
}

template <typename V> inline auto load_mask(const bool* p) {
  if constexpr (kIsPack<V>) {
    MP r;
    unrolled<kPackVectors>([&](auto k) { r.v[k] = load_mask<VF>(p + k * kLanes); });
    return r;
  } else if constexpr (std::is_same_v<V, float>) {
    return *p;
#if defined(__AVX512F__)
  } else if constexpr (sizeof(VF) == 64) {
    // 16 bool bytes widened to 32-bit lanes, each lane's bit set where its byte is non-zero.
    const __m512i lanes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return MF(_mm512_test_epi32_mask(lanes, lanes));
#endif
  } else {
    alignas(64) float tmp[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) tmp[i] = p[i] ? 1.0f : 0.0f;
    return VF::load_aligned(tmp) != VF(0.0f);
  }
}

template <typename V> inline auto mask_bcast(bool m) {
  if constexpr (kIsPack<V>) {
    return MP(m);
  } else if constexpr (std::is_same_v<V, float>) {
    return m;
  } else {
    return MF(m);
  }
}
template <typename V> inline auto load_mask_bcast(const bool* p) { return mask_bcast<V>(*p); }
template <typename V> inline auto load_mask_strided(const bool* p, int64_t stride) {
  if constexpr (kIsPack<V>) {
    MP r;
    unrolled<kPackVectors>([&](auto k) { r.v[k] = load_mask_strided<VF>(p + k * kLanes * stride, stride); });
    return r;
  } else if constexpr (std::is_same_v<V, float>) {
    return *p;
  } else {
    if (stride == 1) return load_mask<VF>(p);  // a stride the run settles, as in load_strided
    if (stride == 0) return mask_bcast<VF>(*p);
    alignas(64) float tmp[kLanes];
    for (int64_t i = 0; i < kLanes; ++i) tmp[i] = p[i * stride] ? 1.0f : 0.0f;
    return VF::load_aligned(tmp) != VF(0.0f);
  }
}
template <typename T> inline void store_strided(T* p, int64_t stride, float v) { store(p, v); (void)stride; }
template <typename T> inline void store_strided(T* p, int64_t stride, VF v) {
  alignas(64) float tmp[kLanes];
  v.store_aligned(tmp);
  for (int64_t i = 0; i < kLanes; ++i) from_f32(tmp[i], p + i * stride);
}
template <typename T> inline void store_strided(T* p, int64_t stride, const VP& v) {
  unrolled<kPackVectors>([&](auto k) { tf::store_strided(p + k * kLanes * stride, stride, v.v[k]); });
}
inline void store_strided(bool* p, int64_t stride, bool m) { *p = m; (void)stride; }
inline void store_strided(bool* p, int64_t stride, MF m) {
  alignas(64) float tmp[kLanes];
  xsimd::select(m, VF(1.0f), VF(0.0f)).store_aligned(tmp);
  for (int64_t i = 0; i < kLanes; ++i) p[i * stride] = tmp[i] != 0.0f;
}
inline void store_strided(bool* p, int64_t stride, const MP& m) {
  unrolled<kPackVectors>([&](auto k) { tf::store_strided(p + k * kLanes * stride, stride, m.v[k]); });
}

// ---- math, overloaded for float and VF ----
// exp, log, tanh, sigmoid and erf come from tilefuse_vector_math.h.
using xsimd::abs; using xsimd::ceil; using xsimd::floor; using xsimd::pow; using xsimd::sqrt;
// x^y on vectors: xsimd's exp(y log|x|) with the sign of odd integer powers, and the C library's
// pow for every vector with a lane where that formula departs from it: an infinite or NaN
// operand ((-inf)^0.3 is +inf, 1^NaN and NaN^0 are 1, (-1)^inf is 1; xsimd gives NaN) or a zero
// base ((-0)^-1 is -inf). Models meet these rarely; they then cost a scalar call per lane.
inline VF pow(VF x, VF y) {
  const VF r = xsimd::pow(x, y);
  if (!xsimd::any(!(xsimd::isfinite(x) && xsimd::isfinite(y) && x != VF(0.0f)))) return r;
  alignas(64) float xs[kLanes], ys[kLanes], rs[kLanes];
  x.store_aligned(xs), y.store_aligned(ys);
  for (int64_t k = 0; k < kLanes; ++k) rs[k] = std::pow(xs[k], ys[k]);
  return VF::load_aligned(rs);
}
// Templates, so that only the functions a kernel uses are instantiated (xsimd 8.1's pow does not
// compile for AVX-512 at -O0).
template <int N> TF_INLINE PackF<N> abs(const PackF<N>& x) { return each([](VF v) { return xsimd::abs(v); }, x); }
template <int N> TF_INLINE PackF<N> ceil(const PackF<N>& x) { return each([](VF v) { return xsimd::ceil(v); }, x); }
template <int N> TF_INLINE PackF<N> floor(const PackF<N>& x) { return each([](VF v) { return xsimd::floor(v); }, x); }
template <int N> TF_INLINE PackF<N> sqrt(const PackF<N>& x) { return each([](VF v) { return xsimd::sqrt(v); }, x); }
template <int N> TF_INLINE PackF<N> pow(const PackF<N>& x, const PackF<N>& y) {
  return each([](VF a, VF b) { return tf::pow(a, b); }, x, y);
}
// x^0.5 (Pow by a constant 0.5) as pow computes it: the square root, but +inf at -inf, where
// sqrt gives NaN, and +0 at -0, where sqrt keeps the sign (adding +0 drops it; no -ffast-math).
inline float pow_half(float x) { return x == -std::numeric_limits<float>::infinity() ? -x : std::sqrt(x) + 0.0f; }
inline double pow_half(double x) { return x == -std::numeric_limits<double>::infinity() ? -x : std::sqrt(x) + 0.0; }
inline VF pow_half(VF x) {
  return xsimd::select(x == VF(-std::numeric_limits<float>::infinity()), -x, xsimd::sqrt(x) + VF(0.0f));
}
template <int N> TF_INLINE PackF<N> pow_half(const PackF<N>& x) { return each([](VF v) { return pow_half(v); }, x); }
// NaN test (ONNX IsNaN). Not `x != x`: xsimd compares vectors with ordered predicates, for
// which NaN != NaN is false.
inline bool isnan(float x) { return std::isnan(x); }
inline MF isnan(VF x) { return xsimd::isnan(x); }
template <int N> TF_INLINE PackM<N> isnan(const PackF<N>& x) { return each([](VF v) { return xsimd::isnan(v); }, x); }
// sin, cos and round-half-to-even (ONNX Round) through xsimd.
inline float sin(float x) { return std::sin(x); }
inline float cos(float x) { return std::cos(x); }
inline float round_even(float x) { return std::nearbyint(x); }
inline VF sin(VF x) { return xsimd::sin(x); }
inline VF cos(VF x) { return xsimd::cos(x); }
inline VF round_even(VF x) { return xsimd::nearbyint(x); }
template <int N> TF_INLINE PackF<N> sin(const PackF<N>& x) { return each([](VF v) { return xsimd::sin(v); }, x); }
template <int N> TF_INLINE PackF<N> cos(const PackF<N>& x) { return each([](VF v) { return xsimd::cos(v); }, x); }
template <int N> TF_INLINE PackF<N> round_even(const PackF<N>& x) {
  return each([](VF v) { return xsimd::nearbyint(v); }, x);
}
// The other trigonometric and hyperbolic functions (ONNX Tan ... Atanh), through xsimd as well.
#define TF_XSIMD_MATH(name)                                                   \
  inline float name(float x) { return std::name(x); }                         \
  inline VF name(VF x) { return xsimd::name(x); }                             \
  template <int N> TF_INLINE PackF<N> name(const PackF<N>& x) {                \
    return each([](VF v) { return xsimd::name(v); }, x);                      \
  }
TF_XSIMD_MATH(tan)
TF_XSIMD_MATH(asin)
TF_XSIMD_MATH(acos)
TF_XSIMD_MATH(atan)
TF_XSIMD_MATH(sinh)
TF_XSIMD_MATH(cosh)
TF_XSIMD_MATH(asinh)
TF_XSIMD_MATH(atanh)
#undef TF_XSIMD_MATH
// xsimd 8's acosh of a huge negative x is inf (x * x overflows before the domain is checked):
// below 1 it is NaN, as the C library gives.
inline float acosh(float x) { return std::acosh(x); }
inline VF acosh(VF x) { return xsimd::select(x < VF(1.0f), VF(std::numeric_limits<float>::quiet_NaN()), xsimd::acosh(x)); }
template <int N> TF_INLINE PackF<N> acosh(const PackF<N>& x) { return each([](VF v) { return acosh(v); }, x); }
// Division by a value that is constant over a row (Softmax's sum, LayerNorm's deviation): a
// multiplication by its reciprocal, taken once per row, is within 2 ulp of the quotient and far
// cheaper than a vector division, which would bound the whole kernel. Where the reciprocal is
// not a normal float (a subnormal or huge divisor, zero, inf, NaN), it could lose the quotient,
// so those rows divide.
struct RowDivisor {
  explicit RowDivisor(float d) : divisor(d), reciprocal(1.0f / d), multiply(std::isnormal(reciprocal)) {}
  float divisor;
  float reciprocal;
  bool multiply;
};
template <typename V> inline V divide(V a, const RowDivisor& d) { return d.multiply ? a * V(d.reciprocal) : a / V(d.divisor); }

inline float select(bool m, float a, float b) { return m ? a : b; }
inline VF select(MF m, VF a, VF b) { return xsimd::select(m, a, b); }
// NaN-propagating min/max (numpy semantics), as the reference interpreter computes them.
inline float max(float a, float b) { return (a != a || b != b) ? std::numeric_limits<float>::quiet_NaN() : (a > b ? a : b); }
inline float min(float a, float b) { return (a != a || b != b) ? std::numeric_limits<float>::quiet_NaN() : (a < b ? a : b); }
inline VF max(VF a, VF b) { return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), a + b, xsimd::max(a, b)); }
inline VF min(VF a, VF b) { return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), a + b, xsimd::min(a, b)); }
TF_INLINE VP select(const MP& m, const VP& a, const VP& b) { return each([](MF k, VF x, VF y) { return select(k, x, y); }, m, a, b); }
TF_INLINE VP max(const VP& a, const VP& b) { return each([](VF x, VF y) { return max(x, y); }, a, b); }
TF_INLINE VP min(const VP& a, const VP& b) { return each([](VF x, VF y) { return min(x, y); }, a, b); }
inline bool logical_not(bool m) { return !m; }
inline MF logical_not(MF m) { return ~m; }
inline bool logical_and(bool a, bool b) { return a && b; }
inline MF logical_and(MF a, MF b) { return a && b; }
inline bool logical_or(bool a, bool b) { return a || b; }
inline MF logical_or(MF a, MF b) { return a || b; }
TF_INLINE MP logical_not(const MP& m) { return ~m; }
TF_INLINE MP logical_and(const MP& a, const MP& b) { return a && b; }
TF_INLINE MP logical_or(const MP& a, const MP& b) { return a || b; }
inline bool logical_xor(bool a, bool b) { return a != b; }
inline MF logical_xor(MF a, MF b) { return (a && ~b) || (~a && b); }
TF_INLINE MP logical_xor(const MP& a, const MP& b) { return (a && ~b) || (~a && b); }
template <typename M, typename V> inline V mask_to_float(M m) { return select(m, V(1.0f), V(0.0f)); }
// Rounds to the precision of a 16-bit type (a Cast to f16/bf16 inside a kernel).
template <typename T, typename V> inline V round_to(V v) {
  if constexpr (kIsPack<V>) {
    return each([](VF x) { return round_to<T>(x); }, v);
  } else if constexpr (std::is_same_v<V, float>) {
    T t; from_f32(v, &t); return to_f32(t);
  } else if constexpr (kHalfInLanes<T>) {
    return half_lanes::round_trip(T{}, v);
  } else {
    alignas(64) float tmp[kLanes];
    v.store_aligned(tmp);
    for (int64_t i = 0; i < kLanes; ++i) { T t; from_f32(tmp[i], &t); tmp[i] = to_f32(t); }
    return VF::load_aligned(tmp);
  }
}

// ---- row reductions: lanes accumulate in f32 for a short stretch, then fold into a double, so
// long rows keep ~double accuracy at SIMD speed ----
struct SumAcc {
  VF lanes = VF(0.0f);
  int64_t pending = 0;
  double total = 0.0;
  void add(VF v) { add_vectors(v, 1); }
  void add(const VP& v) { add_vectors(tf::fold([](VF a, VF b) { return a + b; }, v), kPackVectors); }
  void add_vectors(VF sum, int64_t count) { lanes += sum; pending += count; if (pending >= 64) fold(); }
  void add(float v) { total += v; }
  void fold() { total += xsimd::hadd(lanes); lanes = VF(0.0f); pending = 0; }
  float result() { fold(); return float(total); }
};
// Products multiply in double lanes, as the reference does: in f32 a partial product of large
// values overflows to inf, and a later 0 turns it into NaN where the reference's result is 0.
struct ProdAcc {
  alignas(64) double lanes[kLanes];
  double total = 1.0;
  ProdAcc() { for (double& l : lanes) l = 1.0; }
  void add(VF v) {
    alignas(64) float t[kLanes]; v.store_aligned(t);
    for (int64_t i = 0; i < kLanes; ++i) lanes[i] *= double(t[i]);
  }
  void add(const VP& v) { unrolled<kPackVectors>([&](auto k) { add(v.v[k]); }); }
  void add(float v) { total *= v; }
  float result() {
    for (double l : lanes) total *= l;
    return float(total);
  }
};
// Lanes where a or b is NaN: one unordered compare on AVX-512.
inline MF either_nan(VF a, VF b) {
#if defined(__AVX512F__)
  if constexpr (sizeof(VF) == 64) return MF(_mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q));
#endif
  return xsimd::isnan(a) || xsimd::isnan(b);
}
// Max/min with NaN propagation (the reference's semantics): NaN is tracked in a mask of its own,
// so each vector costs a plain max/min and a compare rather than a NaN-aware select.
template <bool kMax> struct ExtremumAcc {
  static constexpr float kStart = kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  VF lanes = VF(kStart);
  MF nan = MF(false);  // lanes that have seen a NaN
  float scalar = kStart;
  static VF pick(VF a, VF b) { return kMax ? xsimd::max(a, b) : xsimd::min(a, b); }
  void add(VF v) { nan = nan || either_nan(v, v); lanes = pick(lanes, v); }
  void add(const VP& v) {
    unrolled<kPackVectors / 2>([&](auto k) { nan = nan || either_nan(v.v[2 * k], v.v[2 * k + 1]); });
    lanes = pick(lanes, tf::fold(pick, v));
  }
  void add(float v) { scalar = kMax ? tf::max(scalar, v) : tf::min(scalar, v); }
  float result() const {
    if (xsimd::any(nan) || scalar != scalar) return std::numeric_limits<float>::quiet_NaN();
    // A row's next pass waits for this value: a tree over the lanes, not a chain of 16 steps.
#if defined(__AVX512F__)
    if constexpr (sizeof(VF) == 64) {
      const float r = kMax ? _mm512_reduce_max_ps(lanes) : _mm512_reduce_min_ps(lanes);
      return kMax ? std::max(r, scalar) : std::min(r, scalar);
    }
#endif
    alignas(64) float t[kLanes]; lanes.store_aligned(t);
    float r = scalar;
    for (float x : t) r = kMax ? std::max(r, x) : std::min(r, x);
    return r;
  }
};
using MaxAcc = ExtremumAcc<true>;
using MinAcc = ExtremumAcc<false>;

// ---- column reductions: one accumulator per column of a unit's column tile ----
// A column reduction (a sum over axis 0 of [R, C]) reads each reduced row's tile contiguously and
// adds it to the tile's accumulators, which stay in L1: an L1 load and store per vector, cheap
// next to the row's load from memory. add(lane, v) takes the values of columns lane.. (a pack,
// a vector or one float); once every row is in, finish(n) leaves the n results in `part`, where
// result<V>(lane) reads them.
template <typename V> inline constexpr int64_t kLanesOf = kIsPack<V> ? kPackVectors * kLanes : std::is_same_v<V, float> ? 1 : kLanes;

// Sums add f32 partials for 64 rows at a time, then fold them into doubles, as SumAcc does for
// a row: long columns keep ~double accuracy.
template <int64_t kTile> struct ColumnSumAcc {
  alignas(64) float part[kTile] = {};
  alignas(64) double total[kTile] = {};
  int64_t pending = 0;
  template <typename V> TF_INLINE void add(int64_t lane, const V& v) { tf::store(part + lane, tf::load<V>(part + lane) + v); }
  void end_row(int64_t n) { if (++pending == 64) fold(n); }
  void fold(int64_t n) {
    for (int64_t c = 0; c < n; ++c) total[c] += double(part[c]), part[c] = 0.0f;
    pending = 0;
  }
  void finish(int64_t n) {
    fold(n);
    for (int64_t c = 0; c < n; ++c) part[c] = float(total[c]);
  }
  template <typename V> V result(int64_t lane) const { return tf::load<V>(part + lane); }
};
// Products multiply in doubles, as ProdAcc does.
template <int64_t kTile> struct ColumnProdAcc {
  alignas(64) float part[kTile];
  alignas(64) double total[kTile];
  ColumnProdAcc() { for (double& t : total) t = 1.0; }
  template <typename V> TF_INLINE void add(int64_t lane, const V& v) {
    alignas(64) float t[kLanesOf<V>];
    tf::store(t, v);
    for (int64_t k = 0; k < kLanesOf<V>; ++k) total[lane + k] *= double(t[k]);
  }
  void end_row(int64_t) {}
  void finish(int64_t n) { for (int64_t c = 0; c < n; ++c) part[c] = float(total[c]); }
  template <typename V> V result(int64_t lane) const { return tf::load<V>(part + lane); }
};
template <bool kMax, int64_t kTile> struct ColumnExtremumAcc {
  alignas(64) float part[kTile];
  ColumnExtremumAcc() { for (float& p : part) p = ExtremumAcc<kMax>::kStart; }
  template <typename V> TF_INLINE void add(int64_t lane, const V& v) {
    // tf::max/min propagate NaN, as the reference does.
    if constexpr (kMax) tf::store(part + lane, tf::max(tf::load<V>(part + lane), v));
    else tf::store(part + lane, tf::min(tf::load<V>(part + lane), v));
  }
  void end_row(int64_t) {}
  void finish(int64_t) {}
  template <typename V> V result(int64_t lane) const { return tf::load<V>(part + lane); }
};
template <int64_t kTile> using ColumnMaxAcc = ColumnExtremumAcc<true, kTile>;
template <int64_t kTile> using ColumnMinAcc = ColumnExtremumAcc<false, kTile>;

// Runs body(V-tag, i) over [0, n): SIMD steps first, then the scalar tail.
template <typename Body> inline void for_lanes(int64_t n, Body&& body) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) body(VF(), i);
  for (; i < n; ++i) body(0.0f, i);
}
// The same with packs of kPackVectors vectors first: what generated kernels use wherever a row
// can hold a pack.
template <typename Body> inline void for_lanes_packed(int64_t n, Body&& body) {
  int64_t i = 0;
  for (; i + kPackVectors * kLanes <= n; i += kPackVectors * kLanes) body(VP(), i);
  for_lanes(n - i, [&](auto lane_tag, int64_t lane) { body(lane_tag, i + lane); });
}

// Lanes from p to the next vector boundary (none where p is on one, or not on an element's).
template <typename T> inline int64_t lanes_to_alignment(const T* p) {
  constexpr uintptr_t kVectorBytes = kLanes * sizeof(T);  // a vector's lanes stored as T
  const auto misalignment = reinterpret_cast<uintptr_t>(p) & (kVectorBytes - 1);
  return misalignment % sizeof(T) != 0 || misalignment == 0 ? 0 : (kVectorBytes - misalignment) / sizeof(T);
}
// for_lanes_packed with its first `head` lanes one at a time: a pass that stores rows starting
// `head` lanes before a vector boundary then stores every pack on one, so tf::store_output
// streams them (a row of 1500 floats otherwise streams nothing, and every store reads its line
// first: a third more traffic).
template <typename Body> inline void for_lanes_packed_after(int64_t n, int64_t head, Body&& body) {
  head = std::min(head, n);
  for (int64_t i = 0; i < head; ++i) body(0.0f, i);
  for_lanes_packed(n - head, [&](auto lane_tag, int64_t lane) { body(lane_tag, head + lane); });
}

}  // namespace tf

#include "tilefuse_native.h"

#define TF_EXPORT extern "C" __attribute__((visibility("default")))
