#include "runtime/resize_blend.h"

#include <algorithm>

#include "ir/error.h"
#include "runtime/vector_clones.h"

namespace tilefuse::runtime {

AxisTable AxisTable::of(const reference::AxisTaps& taps, int64_t zero_index) {
  AxisTable t;
  for (const auto& list : taps) t.width = std::max(t.width, static_cast<int64_t>(list.size()));
  for (const auto& list : taps) {
    for (size_t k = 0; k < static_cast<size_t>(t.width); ++k) {
      const bool read = k < list.size() && list[k].weight != 0.0;
      t.index.push_back(read ? list[k].index : zero_index);
      t.weight.push_back(read ? static_cast<float>(list[k].weight) : 0.0f);
      t.zero_taps = t.zero_taps || !read;
    }
  }
  return t;
}

namespace {

// Output column c's taps of weight not 0, as (input offset from `base`, weight); false when more
// than four.
bool column_taps(const AxisTable& columns, int64_t c, int64_t base, int64_t zero_index, int& count, int64_t* offset,
                 float* weight) {
  count = 0;
  for (int64_t t = 0; t < columns.width; ++t) {
    const size_t at = static_cast<size_t>(c * columns.width + t);
    if (columns.index[at] == zero_index) continue;
    if (count == 4) return false;
    offset[count] = columns.index[at] - base;
    weight[count++] = columns.weight[at];
  }
  return true;
}

// Whether output columns 2k and 2k + 1 read d's taps from input k.
bool reads_doubled(const AxisTable& columns, const DoubledColumns& d, int64_t k, int64_t zero_index) {
  for (int p = 0; p < 2; ++p) {
    int count = 0;
    int64_t offset[4];
    float weight[4];
    if (!column_taps(columns, 2 * k + p, k, zero_index, count, offset, weight) || count != d.taps[p]) return false;
    for (int t = 0; t < count; ++t) {
      if (offset[t] != d.offset[p][t] || weight[t] != d.weight[p][t]) return false;
    }
  }
  return true;
}

}  // namespace

DoubledColumns DoubledColumns::of(const AxisTable& columns, int64_t in_width) {
  DoubledColumns d;
  const int64_t out_width = static_cast<int64_t>(columns.index.size()) / columns.width;
  if (out_width != 2 * in_width || in_width < 8) return d;
  const int64_t middle = in_width / 2;
  for (int p = 0; p < 2; ++p) {
    if (!column_taps(columns, 2 * middle + p, middle, in_width, d.taps[p], d.offset[p], d.weight[p]) ||
        d.taps[p] == 0 || d.taps[p] == 3) {
      return {};
    }
  }
  d.first = middle;
  d.end = middle + 1;
  while (d.first > 0 && reads_doubled(columns, d, d.first - 1, in_width)) --d.first;
  while (d.end < in_width && reads_doubled(columns, d, d.end, in_width)) ++d.end;
  return d;
}

namespace {

template <int K>
__attribute__((always_inline)) inline void columns_of_width(const float* row, const int64_t* index, const float* w,
                                                            float* out, int64_t first, int64_t end) {
  for (int64_t c = first; c < end; ++c) {
    float acc = w[c * K] * row[index[c * K]];
    for (int k = 1; k < K; ++k) acc += w[c * K + k] * row[index[c * K + k]];
    out[c] = acc;
  }
}

TF_VECTOR_CLONES void indexed_columns(const float* row, const AxisTable& columns, float* out, int64_t first,
                                      int64_t end) {
  const int64_t* index = columns.index.data();
  const float* w = columns.weight.data();
  switch (columns.width) {
    case 1: return columns_of_width<1>(row, index, w, out, first, end);
    case 2: return columns_of_width<2>(row, index, w, out, first, end);
    case 4: return columns_of_width<4>(row, index, w, out, first, end);
    default: fail_internal("resize: {} taps per column", columns.width);
  }
}

// Output columns 2k and 2k + 1 for k in [d.first, d.end), with E and O taps.
template <int E, int O>
__attribute__((always_inline)) inline void doubled_of(const float* row, const DoubledColumns& d, float* out) {
  const float* even[E];
  const float* odd[O];
  float we[E], wo[O];
  for (int t = 0; t < E; ++t) even[t] = row + d.offset[0][t], we[t] = d.weight[0][t];
  for (int t = 0; t < O; ++t) odd[t] = row + d.offset[1][t], wo[t] = d.weight[1][t];
  for (int64_t k = d.first; k < d.end; ++k) {
    float a = we[0] * even[0][k], b = wo[0] * odd[0][k];
    for (int t = 1; t < E; ++t) a += we[t] * even[t][k];
    for (int t = 1; t < O; ++t) b += wo[t] * odd[t][k];
    out[2 * k] = a;
    out[2 * k + 1] = b;
  }
}

TF_VECTOR_CLONES void doubled_columns(const float* row, const DoubledColumns& d, float* out) {
  switch (d.taps[0] * 8 + d.taps[1]) {
    case 1 * 8 + 1: return doubled_of<1, 1>(row, d, out);
    case 1 * 8 + 2: return doubled_of<1, 2>(row, d, out);
    case 1 * 8 + 4: return doubled_of<1, 4>(row, d, out);
    case 2 * 8 + 1: return doubled_of<2, 1>(row, d, out);
    case 2 * 8 + 2: return doubled_of<2, 2>(row, d, out);
    case 2 * 8 + 4: return doubled_of<2, 4>(row, d, out);
    case 4 * 8 + 1: return doubled_of<4, 1>(row, d, out);
    case 4 * 8 + 2: return doubled_of<4, 2>(row, d, out);
    case 4 * 8 + 4: return doubled_of<4, 4>(row, d, out);
    default: fail_internal("resize: {} and {} taps per doubled column", d.taps[0], d.taps[1]);
  }
}

}  // namespace

TF_VECTOR_CLONES void blend_rows(const float* const* rows, const float* weight, int64_t count, int64_t width,
                                 float* b) {
  bool first = true;
  for (int64_t k = 0; k < count; ++k) {
    if (weight[k] == 0.0f) continue;
    const float w = weight[k];
    const float* in = rows[k];
    if (first) {
      for (int64_t c = 0; c < width; ++c) b[c] = w * in[c];
    } else {
#pragma GCC ivdep
      for (int64_t c = 0; c < width; ++c) b[c] += w * in[c];
    }
    first = false;
  }
  if (first) std::fill(b, b + width, 0.0f);
  b[width] = 0.0f;
}

void blend_columns(const float* row, const AxisTable& columns, const DoubledColumns& doubled, float* out,
                   int64_t out_width) {
  if (doubled.first == doubled.end) return indexed_columns(row, columns, out, 0, out_width);
  indexed_columns(row, columns, out, 0, 2 * doubled.first);
  doubled_columns(row, doubled, out);
  indexed_columns(row, columns, out, 2 * doubled.end, out_width);
}

}  // namespace tilefuse::runtime
