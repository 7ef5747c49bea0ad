#include "runtime/pool_call.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "ir/ops/window_geometry.h"
#include "runtime/cpu_isa.h"
#include "runtime/lane_masks.h"
#include "runtime/row_kernels.h"
#include "runtime/same_size_pool.h"

namespace tilefuse::runtime {

namespace {

// A pool's sizes with 1-D treated as 2-D of height 1.
struct PoolShape {
  int64_t planes, height, width, kh, kw, out_h, out_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int64_t pad_bottom = 0, pad_right = 0;  // where AveragePool's count_include_pad counts up to
};

PoolShape pool_shape(const Node& node, const Tensor& x, const Tensor& out) {
  auto spatial = [](const std::vector<int64_t>& s) { return std::vector<int64_t>(s.begin() + 2, s.end()); };
  const std::vector<int64_t> in_sp = spatial(x.shape()), out_sp = spatial(out.shape());
  const WindowGeometry g = window_geometry(node, in_sp.size(), node.attr_ints("kernel_shape"));
  const std::vector<int64_t> pads = begin_pads(g, in_sp, out_sp);
  const bool one_d = in_sp.size() == 1;
  auto at = [one_d](const std::vector<int64_t>& v, int d, int64_t fallback) { return one_d ? (d == 0 ? fallback : v[0]) : v[d]; };
  PoolShape s{x.shape()[0] * x.shape()[1], at(in_sp, 0, 1), at(in_sp, 1, 1), at(g.kernel, 0, 1), at(g.kernel, 1, 1),
              at(out_sp, 0, 1), at(out_sp, 1, 1), at(g.strides, 0, 1), at(g.strides, 1, 1), at(g.dilations, 0, 1),
              at(g.dilations, 1, 1), at(pads, 0, 0), at(pads, 1, 0)};
  // The end pads as the reference counts them: the attribute's, or what SAME padding adds.
  std::vector<int64_t> ends;
  for (size_t d = 0; d < in_sp.size(); ++d) {
    const int64_t total = std::max<int64_t>(0, (out_sp[d] - 1) * g.strides[d] + g.extent(d) - in_sp[d]);
    ends.push_back(g.same() ? total - pads[d] : g.pads[g.spatial() + d]);
  }
  s.pad_bottom = at(ends, 0, 0), s.pad_right = at(ends, 1, 0);
  return s;
}

// A max over a window is a max over its rows of the max down its column: per output row, the
// rows under the window are first reduced into one row (contiguous vector maxima), then each
// kernel column takes one strided pass over that row, kw passes instead of kh * kw.
void max_pool(const PoolShape& s, const float* x, float* out, int64_t first_plane, int64_t end_plane) {
  thread_local std::vector<float> column_max;
  column_max.resize(static_cast<size_t>(s.width));
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * s.height * s.width;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      float* o = out + (plane * s.out_h + oy) * s.out_w;
      std::fill(o, o + s.out_w, -std::numeric_limits<float>::infinity());
      bool any_row = false;
      for (int64_t i = 0; i < s.kh; ++i) {
        const int64_t y = oy * s.stride_h - s.pad_top + i * s.dil_h;
        if (y < 0 || y >= s.height) continue;
        const float* row = src + y * s.width;
        if (any_row) {
          strided_max(row, 1, column_max.data(), s.width);
        } else {
          std::copy(row, row + s.width, column_max.begin());
        }
        any_row = true;
      }
      if (!any_row) continue;  // the window lies in the padding: -inf, as the reference
      for (int64_t j = 0; j < s.kw; ++j) {
        const int64_t shift = j * s.dil_w - s.pad_left;  // input column = ox * stride + shift
        const auto [lo, hi] = valid_columns(shift, s.stride_w, s.width, s.out_w);
        if (hi > lo) strided_max(column_max.data() + lo * s.stride_w + shift, s.stride_w, o + lo, hi - lo);
      }
    }
  }
}

// Taps of a window along one axis that AveragePool counts: those inside the input, and with
// count_include_pad those in the pads too (not the extra reach of ceil_mode beyond them).
int64_t counted_taps(int64_t o, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation, int64_t kernel,
                     int64_t size, bool include_pad) {
  const int64_t lo = include_pad ? -pad_begin : 0, hi = include_pad ? size + pad_end : size;
  int64_t count = 0;
  for (int64_t j = 0; j < kernel; ++j) {
    const int64_t x = o * stride - pad_begin + j * dilation;
    count += x >= lo && x < hi;
  }
  return count;
}

// 1 / the taps counted, per output coordinate of one axis.
void reciprocal_counts(int64_t outputs, int64_t stride, int64_t pad_begin, int64_t pad_end, int64_t dilation,
                       int64_t kernel, int64_t size, bool include_pad, std::vector<float>& out) {
  out.resize(static_cast<size_t>(outputs));
  for (int64_t o = 0; o < outputs; ++o) {
    const int64_t count = counted_taps(o, stride, pad_begin, pad_end, dilation, kernel, size, include_pad);
    out[static_cast<size_t>(o)] = 1.0f / static_cast<float>(std::max<int64_t>(count, 1));
  }
}

// AveragePool as max_pool computes MaxPool: per output row, the window's rows summed into one
// row with zeros on both sides (the padding, so no column needs a bounds test), then each output
// the sum of its kernel columns from it, times 1 / the taps counted on each axis.
void average_pool(const PoolShape& s, const std::vector<float>& row_scale, const std::vector<float>& column_scale,
                  const float* x, float* out, int64_t first_plane, int64_t end_plane) {
  const int64_t reach = (s.out_w - 1) * s.stride_w + (s.kw - 1) * s.dil_w + 1;  // columns the windows span
  const int64_t row_floats = std::max(reach, s.pad_left + s.width);
  thread_local std::vector<float> padded;
  padded.resize(static_cast<size_t>(row_floats));
  float* sums = padded.data();
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * s.height * s.width;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      std::fill(sums, sums + row_floats, 0.0f);
      for (int64_t i = 0; i < s.kh; ++i) {
        const int64_t y = oy * s.stride_h - s.pad_top + i * s.dil_h;
        if (y < 0 || y >= s.height) continue;
        const float* row = src + y * s.width;
        float* to = sums + s.pad_left;
        for (int64_t c = 0; c < s.width; ++c) to[c] += row[c];
      }
      float* o = out + (plane * s.out_h + oy) * s.out_w;
      const float scale = row_scale[static_cast<size_t>(oy)];
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        const float* window = sums + ox * s.stride_w;
        float sum = 0.0f;
        for (int64_t j = 0; j < s.kw; ++j) sum += window[j * s.dil_w];
        o[ox] = sum * (scale * column_scale[static_cast<size_t>(ox)]);
      }
    }
  }
}

#define TF_AVX512 __attribute__((target("avx512f,avx512vl")))

// True where max_pool_padded_rows applies: AVX-512, columns at stride 1 or 2, no dilation.
bool padded_rows_suit(const PoolShape& s) {
  return vector_isa() == VectorIsa::avx512 && (s.stride_w == 1 || s.stride_w == 2) && s.dil_w == 1;
}

// Output row oy's window rows of one plane reduced into `row_max` (s.width values, whole vectors
// written); false if they all lie in the padding. Four vectors of the row at a time: each is a
// chain of kh dependent maxima, and one chain at a time waited on their latency (SqueezeNet's
// 3x3 pool at stride 2 of f32[1, 128, 55, 55]: 0.092-0.095 -> 0.072-0.076 ms at 1 thread).
TF_AVX512 bool reduce_window_rows(const PoolShape& s, const float* src, int64_t oy, float* row_max) {
  constexpr int kChains = 4;
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t y0 = oy * s.stride_h - s.pad_top;
  bool any = false;
  for (int64_t c = 0; c < s.width; c += 16 * kChains) {
    __mmask16 m[kChains];
    __m512 v[kChains];
#pragma GCC unroll 4
    for (int u = 0; u < kChains; ++u) m[u] = lanes(s.width - c - 16 * u), v[u] = lowest;
    for (int64_t i = 0; i < s.kh; ++i) {
      const int64_t y = y0 + i * s.dil_h;
      if (y < 0 || y >= s.height) continue;
      const float* from = src + y * s.width + c;
#pragma GCC unroll 4
      for (int u = 0; u < kChains; ++u) {
        v[u] = max_keeping_nan(_mm512_mask_loadu_ps(lowest, m[u], address(from, 16 * u)), v[u]);
      }
      any = true;
    }
#pragma GCC unroll 4
    for (int u = 0; u < kChains; ++u) _mm512_mask_storeu_ps(row_max + c + 16 * u, m[u], v[u]);
  }
  return any;
}

// max_pool's two steps in registers, row by row: the window's rows reduced into one row with
// -inf on both sides (the padding, and room for whole vectors), then each 16 outputs the max of
// kw loads from it at the stride (stride 2: the even values of two). The general path made a
// fill, a copy and kh + kw - 1 calls per output row: ResNet-50's 3x3 pool at stride 2 took 0.10
// ms at 2 threads, ONNX Runtime's 0.045. The reduced row is written one output row ahead of its
// use: loads that straddle two vectors just stored cannot be forwarded from the store buffer
// and waited for each store to complete (that pool alone, f32[1, 64, 112, 112]: 0.18 -> 0.12 ms
// at 1 thread, 0.086 -> 0.059 at 2).
TF_AVX512 void max_pool_padded_rows(const PoolShape& s, const float* x, float* out, int64_t first_plane,
                                    int64_t end_plane) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const int64_t vectors = (s.out_w + 15) / 16;
  // Past the row: room for the last vectors of output loads and of reduce_window_rows' group.
  const int64_t row_floats = s.pad_left + std::max(s.width, vectors * 16 * s.stride_w + s.kw) + 64;
  thread_local std::vector<float> padded_storage;
  padded_storage.assign(static_cast<size_t>(2 * row_floats), -std::numeric_limits<float>::infinity());
  float* padded = padded_storage.data();  // read through a local: a thread_local is a call away
  bool any_row[2] = {false, false};
  auto reduce_rows = [&](const float* src, int64_t oy) {
    any_row[oy % 2] = reduce_window_rows(s, src, oy, padded + (oy % 2) * row_floats + s.pad_left);
  };
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * s.height * s.width;
    reduce_rows(src, 0);
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      if (oy + 1 < s.out_h) reduce_rows(src, oy + 1);
      float* o = out + (plane * s.out_h + oy) * s.out_w;
      const float* row = padded + (oy % 2) * row_floats;
      for (int64_t u = 0; u < vectors; ++u) {
        __m512 v = lowest;
        const float* from = row + u * 16 * s.stride_w;
        for (int64_t j = 0; j < s.kw; ++j) {
          const __m512 w = s.stride_w == 1 ? _mm512_loadu_ps(from + j)
                                           : _mm512_permutex2var_ps(_mm512_loadu_ps(from + j), evens,
                                                                    _mm512_loadu_ps(from + j + 16));
          v = max_keeping_nan(w, v);
        }
        // A window that lies in the padding rows alone is -inf, as the reference has it.
        _mm512_mask_storeu_ps(o + u * 16, lanes(s.out_w - u * 16), any_row[oy % 2] ? v : lowest);
      }
    }
  }
}

// The sum of output row oy's window rows of one plane into `row_sum` (s.width values, whole
// vectors read and written under masks).
TF_AVX512 void sum_window_rows(const PoolShape& s, const float* src, int64_t oy, float* row_sum) {
  const int64_t y0 = oy * s.stride_h - s.pad_top;
  for (int64_t c = 0; c < s.width; c += 16) {
    const __mmask16 m = lanes(s.width - c);
    __m512 v = _mm512_setzero_ps();
    for (int64_t i = 0; i < s.kh; ++i) {
      const int64_t y = y0 + i * s.dil_h;
      if (y >= 0 && y < s.height) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, src + y * s.width + c));
    }
    _mm512_mask_storeu_ps(row_sum + c, m, v);
  }
}

// average_pool in registers, as max_pool_padded_rows does MaxPool: the window's rows summed into
// one row with zeros on both sides, written one output row ahead of its use, then each 16
// outputs the sum of kw loads from it at the stride, times their scales. The sums are added in
// average_pool's order, so both give the same bits. The scalar loops ran Inception-v3's 3x3
// pools (f32[1, 768, 17, 17]) at a fifth of ONNX Runtime's speed.
TF_AVX512 void average_pool_padded_rows(const PoolShape& s, const std::vector<float>& row_scale,
                                        const std::vector<float>& column_scale, const float* x, float* out,
                                        int64_t first_plane, int64_t end_plane) {
  const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const int64_t vectors = (s.out_w + 15) / 16;
  const int64_t row_floats = s.pad_left + std::max(s.width, vectors * 16 * s.stride_w + s.kw) + 32;
  thread_local std::vector<float> padded_storage;
  padded_storage.assign(static_cast<size_t>(2 * row_floats), 0.0f);
  float* padded = padded_storage.data();  // read through a local: a thread_local is a call away
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * s.height * s.width;
    sum_window_rows(s, src, 0, padded + s.pad_left);
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      if (oy + 1 < s.out_h) sum_window_rows(s, src, oy + 1, padded + ((oy + 1) % 2) * row_floats + s.pad_left);
      float* o = out + (plane * s.out_h + oy) * s.out_w;
      const float* row = padded + (oy % 2) * row_floats;
      const __m512 row_scale_v = _mm512_set1_ps(row_scale[static_cast<size_t>(oy)]);
      for (int64_t u = 0; u < vectors; ++u) {
        const __mmask16 m = lanes(s.out_w - u * 16);
        __m512 v = _mm512_setzero_ps();
        const float* from = row + u * 16 * s.stride_w;
        for (int64_t j = 0; j < s.kw; ++j) {
          v = _mm512_add_ps(v, s.stride_w == 1 ? _mm512_loadu_ps(from + j)
                                               : _mm512_permutex2var_ps(_mm512_loadu_ps(from + j), evens,
                                                                        _mm512_loadu_ps(from + j + 16)));
        }
        const __m512 scale = _mm512_mul_ps(row_scale_v, _mm512_maskz_loadu_ps(m, column_scale.data() + u * 16));
        _mm512_mask_storeu_ps(o + u * 16, m, _mm512_mul_ps(v, scale));
      }
    }
  }
}

// The taps [first, end) of a window of k taps `dilation` apart from `start` that fall in [0, extent).
void taps_inside(int64_t start, int64_t dilation, int64_t extent, int64_t k, int64_t& first, int64_t& end) {
  if (dilation == 1) {  // no divisions (per output, they took longer than a small window's taps)
    first = std::max<int64_t>(0, -start);
    end = std::clamp<int64_t>(extent - start, 0, k);
    return;
  }
  first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  end = extent - start <= 0 ? 0 : std::min(k, (extent - start + dilation - 1) / dilation);
}

// MaxPool with its Indices output (SegNet's and ENet's encoders, for MaxUnpool): per output, the
// window scanned in the reference's order, the first maximum kept with its flat index into the
// input (row-major, or column-major within the plane for storage_order 1); a NaN wins and stays.
// -1 and -inf where the window lies wholly in the padding.
void max_pool_with_indices(const PoolShape& shape, bool column_major, const float* x, float* out, int64_t* indices,
                           int64_t first_plane, int64_t end_plane) {
  const PoolShape s = shape;  // a copy: the int64 indices written could alias the caller's
  for (int64_t plane = first_plane; plane < end_plane; ++plane) {
    const float* src = x + plane * s.height * s.width;
    const int64_t plane_offset = plane * s.height * s.width;
    for (int64_t oy = 0; oy < s.out_h; ++oy) {
      const int64_t y0 = oy * s.stride_h - s.pad_top;
      int64_t i0 = 0, i1 = 0;
      taps_inside(y0, s.dil_h, s.height, s.kh, i0, i1);
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        const int64_t x0 = ox * s.stride_w - s.pad_left;
        int64_t j0 = 0, j1 = 0;
        taps_inside(x0, s.dil_w, s.width, s.kw, j0, j1);
        const int64_t at = (plane * s.out_h + oy) * s.out_w + ox;
        if (i0 >= i1 || j0 >= j1) {  // the window lies in the padding
          if (out != nullptr) out[at] = -std::numeric_limits<float>::infinity();
          if (indices != nullptr) indices[at] = -1;
          continue;
        }
        // The reference's rule: the first tap, then a greater one or a NaN, unless a NaN is held.
        int64_t best = (y0 + i0 * s.dil_h) * s.width + x0 + j0 * s.dil_w;
        float acc = src[best];
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t row = (y0 + i * s.dil_h) * s.width + x0;
          for (int64_t j = i == i0 ? j0 + 1 : j0; j < j1; ++j) {
            const int64_t offset = row + j * s.dil_w;
            const float v = src[offset];
            // Masks, not a branch (GCC branches on `take ? v : acc`): which tap wins is a coin
            // toss on real data, and the mispredictions cost more than the rest of the loop.
            const bool take = (acc == acc) & !(v <= acc);
            const int32_t bits = -static_cast<int32_t>(take);
            acc = std::bit_cast<float>((std::bit_cast<int32_t>(v) & bits) | (std::bit_cast<int32_t>(acc) & ~bits));
            best = (offset & static_cast<int64_t>(bits)) | (best & ~static_cast<int64_t>(bits));
          }
        }
        if (out != nullptr) out[at] = acc;
        if (indices == nullptr) continue;
        const int64_t within = column_major ? best % s.width * s.height + best / s.width : best;
        indices[at] = plane_offset + within;
      }
    }
  }
}

// The pool as a same-size one (same_size_pool.h), if it is one: stride 1, no dilation, the
// output as large as the input, a window same_size_pool supports.
std::optional<SameSizePool> same_size(const PoolShape& s) {
  if (s.stride_h != 1 || s.stride_w != 1 || s.dil_h != 1 || s.dil_w != 1 || s.out_h != s.height || s.out_w != s.width) {
    return std::nullopt;
  }
  const SameSizePool p{s.height, s.width, s.kh, s.kw, s.pad_top, s.pad_left};
  return same_size_pool_supports(p) ? std::optional(p) : std::nullopt;
}

class PoolCall : public LibraryCall {
 public:
  explicit PoolCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const PoolShape s = pool_shape(node_, in[0], outs[0].defined() ? outs[0] : outs[1]);
    const std::optional<SameSizePool> whole_planes = same_size(s);
    if (node_.op == "AveragePool") {
      const bool include_pad = node_.attr_int("count_include_pad", 0) != 0;
      reciprocal_counts(s.out_h, s.stride_h, s.pad_top, s.pad_bottom, s.dil_h, s.kh, s.height, include_pad, row_scale_);
      reciprocal_counts(s.out_w, s.stride_w, s.pad_left, s.pad_right, s.dil_w, s.kw, s.width, include_pad,
                        column_scale_);
      if (whole_planes) {
        // The product the rows take per output (row scale times column scale), per position.
        position_scale_.clear();
        for (const float row : row_scale_) {
          for (const float column : column_scale_) position_scale_.push_back(row * column);
        }
        return team.run(s.planes, [&](int, int64_t first, int64_t end) {
          average_pool_same_size(*whole_planes, position_scale_.data(), in[0].data<float>(), outs[0].data<float>(),
                                 first, end);
        });
      }
      const bool padded = padded_rows_suit(s);
      return team.run(s.planes, [&](int, int64_t first, int64_t end) {
        if (padded) {
          return average_pool_padded_rows(s, row_scale_, column_scale_, in[0].data<float>(), outs[0].data<float>(),
                                          first, end);
        }
        average_pool(s, row_scale_, column_scale_, in[0].data<float>(), outs[0].data<float>(), first, end);
      });
    }
    if (outs.size() > 1 && outs[1].defined()) {
      const bool column_major = node_.attr_int("storage_order", 0) != 0;
      float* values = outs[0].defined() ? outs[0].data<float>() : nullptr;
      return team.run(s.planes, [&](int, int64_t first, int64_t end) {
        max_pool_with_indices(s, column_major, in[0].data<float>(), values, outs[1].data<int64_t>(), first, end);
      });
    }
    if (whole_planes) {
      return team.run(s.planes, [&](int, int64_t first, int64_t end) {
        max_pool_same_size(*whole_planes, in[0].data<float>(), outs[0].data<float>(), first, end);
      });
    }
    const bool padded_rows = padded_rows_suit(s);
    team.run(s.planes, [&](int, int64_t first, int64_t end) {
      if (padded_rows) return max_pool_padded_rows(s, in[0].data<float>(), outs[0].data<float>(), first, end);
      max_pool(s, in[0].data<float>(), outs[0].data<float>(), first, end);
    });
  }

 private:
  const Node& node_;
  std::vector<float> row_scale_, column_scale_;  // AveragePool: 1 / the taps counted per output row, column
  std::vector<float> position_scale_;            // and their product per position, for a same-size pool
};

}  // namespace

bool pool_call_supports(const Node& node) {
  if (node.op != "MaxPool" && node.op != "AveragePool") return false;
  if (node.outputs.size() != 1 && (node.op != "MaxPool" || node.outputs.size() != 2)) return false;
  const int64_t rank = node.input(0)->rank();
  return node.input(0)->dtype == DType::f32 && (rank == 3 || rank == 4);
}

std::unique_ptr<LibraryCall> prepare_pool_call(const Node& node) { return std::make_unique<PoolCall>(node); }

}  // namespace tilefuse::runtime
