#include "runtime/strided_copy_call.h"

#include <atomic>
#include <type_traits>
#include <cstring>

#include "ir/error.h"
#include "ir/ops/slice_dims.h"
#include "ir/shape.h"
#include "ir/tensor.h"
#include "runtime/cpu_isa.h"
#include "runtime/gather_last_axis.h"
#include "runtime/prefetch.h"

namespace tilefuse::runtime {

namespace {

// out[i0, .., in] = source[base + i0 * strides[0] + .. + in * strides[n]], in elements.
struct IndexMap {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t base = 0;
};

// Adjacent axes merge where the source steps over the inner one's whole extent in one step of
// the outer one (a contiguous slice becomes one long run); size-1 axes drop out.
IndexMap merged(const IndexMap& m) {
  IndexMap out{{}, {}, m.base};
  for (size_t d = 0; d < m.shape.size(); ++d) {
    if (m.shape[d] == 1) continue;
    if (!out.shape.empty() && out.strides.back() == m.strides[d] * m.shape[d]) {
      out.shape.back() *= m.shape[d];
      out.strides.back() = m.strides[d];
    } else {
      out.shape.push_back(m.shape[d]);
      out.strides.push_back(m.strides[d]);
    }
  }
  if (out.shape.empty()) out.shape = {1}, out.strides = {1};
  return out;
}

template <typename T> void copy_elements(const T* src, int64_t stride, int64_t n, T* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

// One row of the innermost axis: a memcpy when contiguous, else element by element.
void copy_row(const uint8_t* src, int64_t stride, int64_t n, size_t elem, uint8_t* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * elem);
    return;
  }
  switch (elem) {
    case 1: return copy_elements(src, stride, n, dst);
    case 2: return copy_elements(reinterpret_cast<const uint16_t*>(src), stride, n, reinterpret_cast<uint16_t*>(dst));
    case 4: return copy_elements(reinterpret_cast<const uint32_t*>(src), stride, n, reinterpret_cast<uint32_t*>(dst));
    case 8: return copy_elements(reinterpret_cast<const uint64_t*>(src), stride, n, reinterpret_cast<uint64_t*>(dst));
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * elem, src + i * stride * elem, elem);
  }
}

// Copies `map` of `source` into `out` (row-major), rows of the innermost axis spread over the team.
void copy_through(ThreadTeam& team, const IndexMap& map, const Tensor& source, Tensor& out) {
  if (out.numel() == 0) return;
  const IndexMap m = merged(map);
  const size_t elem = dtype_size(source.dtype());
  const auto* src = static_cast<const uint8_t*>(source.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  const int64_t row = m.shape.back(), rows = out.numel() / row;
  team.run(rows, [&](int, int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t offset = m.base, rest = r;
      for (size_t d = m.shape.size() - 1; d-- > 0;) {
        offset += rest % m.shape[d] * m.strides[d];
        rest /= m.shape[d];
      }
      copy_row(src + offset * static_cast<int64_t>(elem), m.strides.back(), row, elem, dst + r * row * static_cast<int64_t>(elem));
    }
  });
}

int64_t normalized_axis(const Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) fail_user("{}: axis {} is out of range for rank {}", node.describe(), axis, rank);
  return axis < 0 ? axis + rank : axis;
}

void check_shape(const Node& node, const std::vector<int64_t>& computed, const Tensor& out) {
  if (computed != out.shape()) {
    fail_user("{}: the run-time bounds give shape {}, but the plan has {}", node.describe(), dims_to_string(computed),
              dims_to_string(out.shape()));
  }
}

// Expand: the output's shape, x right-aligned onto it, stride 0 where x has 1.
IndexMap expand_map(const Node& node, const Tensor& x, const std::vector<int64_t>& out_shape) {
  IndexMap m{out_shape, std::vector<int64_t>(out_shape.size(), 0), 0};
  const std::vector<int64_t> x_strides = contiguous_strides(x.shape());
  const size_t offset = out_shape.size() - x.shape().size();
  for (size_t d = 0; d < x.shape().size(); ++d) {
    if (x.shape()[d] == 1) continue;
    if (x.shape()[d] != out_shape[offset + d]) {
      fail_user("{}: input shape {} does not broadcast to the planned output shape {}", node.describe(),
                dims_to_string(x.shape()), dims_to_string(out_shape));
    }
    m.strides[offset + d] = x_strides[d];
  }
  return m;
}

// Slice: ONNX's bounds (ops/slice_dims.h) from the run-time values of starts, ends, axes, steps.
IndexMap slice_map(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const std::vector<int64_t> starts = in[1].to_i64_vector(), ends = in[2].to_i64_vector();
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (in.size() > 3 && in[3].defined()) axes = in[3].to_i64_vector();
  if (in.size() > 4 && in[4].defined()) steps = in[4].to_i64_vector();
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    fail_user("{}: starts, ends, axes and steps must have equal lengths, got {}, {}, {}, {}", node.describe(),
              starts.size(), ends.size(), axes.size(), steps.size());
  }
  IndexMap m{x.shape(), contiguous_strides(x.shape()), 0};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = normalized_axis(node, axes[i], x.rank());
    const int64_t n = x.shape()[axis];
    if (steps[i] == 0) fail_user("{}: step 0 on axis {} (steps must be non-zero)", node.describe(), axis);
    m.base += ops::clamp_slice_bound(starts[i], n, steps[i]) * m.strides[axis];
    m.shape[axis] = ops::slice_dim(Dim(n), Dim(starts[i]), Dim(ends[i]), steps[i]).value();
    m.strides[axis] *= steps[i];
  }
  return m;
}

// The product of dims [from, to).
int64_t dims_product(const std::vector<int64_t>& dims, int64_t from, int64_t to) {
  int64_t n = 1;
  for (int64_t d = from; d < to; ++d) n *= dims[d];
  return n;
}

// Each index along a dim of size n, checked against [-n, n) and made non-negative.
int64_t wrapped_index(const Node& node, int64_t k, int64_t axis, int64_t n) {
  if (k < -n || k >= n) {
    fail_user("{}: index {} is out of range for axis {} of size {} (allowed [{}, {}])", node.describe(), k, axis, n,
              -n, n - 1);
  }
  return k < 0 ? k + n : k;
}

// out's r-th run of `run` bytes is the run at source element offset sources[r], over the team.
void copy_runs(ThreadTeam& team, const Node& node, const Tensor& data, const std::vector<int64_t>& sources,
               int64_t run_elements, Tensor& out) {
  const size_t elem = dtype_size(data.dtype());
  const size_t run = static_cast<size_t>(run_elements) * elem;
  if (out.nbytes() != sources.size() * run) {
    fail_user("{}: the indices select {} bytes, but the planned output {} has {}", node.describe(),
              sources.size() * run, dims_to_string(out.shape()), out.nbytes());
  }
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  team.run(static_cast<int64_t>(sources.size()), [&](int, int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) std::memcpy(dst + static_cast<size_t>(r) * run, src + sources[r] * elem, run);
  });
}

// Gather along `axis`: out[o, j, i] = data[o, indices[j], i], one run of the inner axes each.
void gather(ThreadTeam& team, const Node& node, const Tensor& data, const Tensor& indices, Tensor& out,
            std::vector<int64_t>& sources) {
  const int64_t axis = normalized_axis(node, node.attr_int("axis", 0), data.rank());
  const std::vector<int64_t>& shape = data.shape();
  const int64_t n = shape[axis];
  const int64_t outer = dims_product(shape, 0, axis), inner = dims_product(shape, axis + 1, data.rank());
  const int64_t count = indices.numel();
  sources.resize(static_cast<size_t>(outer * count));
  for (int64_t j = 0; j < count; ++j) {
    const int64_t row = wrapped_index(node, indices.get_i64(j), axis, n);
    for (int64_t o = 0; o < outer; ++o) sources[o * count + j] = (o * n + row) * inner;
  }
  copy_runs(team, node, data, sources, inner, out);
}

// GatherND: the last dim of `indices` holds k leading coordinates (after batch_dims b) of a
// slice of `data`; out[batch, t, ...] = data[batch, coords(t), ...].
void gather_nd(ThreadTeam& team, const Node& node, const Tensor& data, const Tensor& indices, Tensor& out,
               std::vector<int64_t>& sources) {
  const int64_t b = node.attr_int("batch_dims", 0), q = indices.rank(), r = data.rank();
  const int64_t k = q > 0 ? indices.shape().back() : 0;
  if (q < 1 || k < 1 || b < 0 || b >= q || b + k > r) {
    fail_user("{}: indices {} with batch_dims {} do not address data {} (need rank >= 1, a last dim >= 1, "
              "batch_dims < rank of indices, batch_dims + last dim of indices <= rank of data)",
              node.describe(), dims_to_string(indices.shape()), b, dims_to_string(data.shape()));
  }
  for (int64_t d = 0; d < b; ++d) {
    if (data.shape()[d] != indices.shape()[d]) {
      fail_user("{}: batch dim {} is {} in data but {} in indices", node.describe(), d, data.shape()[d],
                indices.shape()[d]);
    }
  }
  const std::vector<int64_t> strides = contiguous_strides(data.shape());
  const int64_t batch_stride = dims_product(data.shape(), b, r), slice = dims_product(data.shape(), b + k, r);
  const int64_t tuples = dims_product(indices.shape(), 0, q - 1);
  const int64_t per_batch = dims_product(indices.shape(), b, q - 1);
  sources.resize(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = t / per_batch * batch_stride;
    for (int64_t j = 0; j < k; ++j) {
      offset += wrapped_index(node, indices.get_i64(t * k + j), b + j, data.shape()[b + j]) * strides[b + j];
    }
    sources[t] = offset;
  }
  copy_runs(team, node, data, sources, slice, out);
}

// GatherElements where indices and data agree on every axis but `axis` (torch.gather's usual
// case): out[o, j, i] = data[o, indices[o, j, i], i], in rows of the inner axes over the team,
// reading the indices as they are. An index out of range sets `bad` (workers do not throw).
// Data blocks (one per outer index) up to this size are prefetched whole before their rows run:
// picks land at random places in the block, which the hardware prefetchers cannot follow.
constexpr size_t kPrefetchedBlockBytes = 64 * 1024;

// The rows [begin, end) of one outer index: out[j, i] = base[indices[j, i] * inner + i].
// Returns false if an index is out of range (those elements read index 0).
template <typename T, typename I>
bool pick_rows(const T* base, const I* indices, T* out, int64_t rows, int64_t n, int64_t inner) {
  bool ok = true;
  auto pick = [&](int64_t e, int64_t i) {
    int64_t k = static_cast<int64_t>(indices[e]);
    k += k < 0 ? n : 0;
    const bool in_range = k >= 0 && k < n;
    ok &= in_range;
    out[e] = base[(in_range ? k : 0) * inner + i];
  };
  if (inner == 1) {  // the axis is the last: one flat loop
    if constexpr (std::is_same_v<T, uint32_t>) {
      if (vector_isa() != VectorIsa::scalar) return avx2::gather_last_axis(base, indices, out, rows, n);
    }
    for (int64_t e = 0; e < rows; ++e) pick(e, 0);
    return ok;
  }
  for (int64_t j = 0; j < rows; ++j) {
    for (int64_t i = 0; i < inner; ++i) pick(j * inner + i, i);
  }
  return ok;
}

template <typename T, typename I>
void gather_rows(ThreadTeam& team, const T* src, const I* indices, T* dst, int64_t rows, int64_t count, int64_t n,
                 int64_t inner, std::atomic<bool>& bad) {
  const int64_t block = n * inner, blocks = rows / count;  // data elements per outer index, outer indices
  const size_t block_bytes = static_cast<size_t>(block) * sizeof(T);
  const bool prefetch = block_bytes <= kPrefetchedBlockBytes;
  auto fetch = [&](int64_t o) {
    if (prefetch && o < blocks) prefetch_bytes(src + o * block, block_bytes);
  };
  // Work is cut in chunks of rows (a row of `inner` elements is 1 long when the axis is the
  // last), each walked in stretches of one outer index.
  constexpr int64_t kRowsPerChunk = 1024;
  team.run((rows + kRowsPerChunk - 1) / kRowsPerChunk, [&](int, int64_t first, int64_t end) {
    bool ok = true;
    int64_t row = first * kRowsPerChunk;
    const int64_t stop = std::min(rows, end * kRowsPerChunk);
    fetch(row / count);
    while (row < stop) {
      const int64_t o = row / count, stretch = std::min(stop, (o + 1) * count) - row;
      fetch(o + 1);  // the next block, while this one is picked from
      ok &= pick_rows(src + o * block, indices + row * inner, dst + row * inner, stretch, n, inner);
      row += stretch;
    }
    if (!ok) bad.store(true, std::memory_order_relaxed);
  });
}

template <typename T>
void gather_rows_typed(ThreadTeam& team, const Tensor& data, const Tensor& indices, Tensor& out, int64_t axis,
                       std::atomic<bool>& bad) {
  const std::vector<int64_t>& shape = indices.shape();
  const int64_t rows = dims_product(shape, 0, axis + 1), inner = dims_product(shape, axis + 1, indices.rank());
  const int64_t count = shape[axis], n = data.shape()[axis];
  const T* src = static_cast<const T*>(data.raw());
  T* dst = static_cast<T*>(out.raw());
  if (indices.dtype() == DType::i64) {
    return gather_rows(team, src, indices.data<int64_t>(), dst, rows, count, n, inner, bad);
  }
  gather_rows(team, src, indices.data<int32_t>(), dst, rows, count, n, inner, bad);
}

// The general GatherElements (indices smaller than data on other axes too): source offsets are
// computed on the caller's thread into `sources`, then copied over the team.
void gather_elements_by_offsets(ThreadTeam& team, const Node& node, const Tensor& data, const Tensor& indices,
                                Tensor& out, int64_t axis, std::vector<int64_t>& sources) {
  const int64_t r = data.rank();
  const std::vector<int64_t> strides = contiguous_strides(data.shape());
  const std::vector<int64_t>& shape = indices.shape();
  sources.resize(static_cast<size_t>(indices.numel()));
  std::vector<int64_t> at(static_cast<size_t>(r), 0);  // the multi-index of element i
  for (int64_t i = 0; i < indices.numel(); ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t coordinate = d == axis ? wrapped_index(node, indices.get_i64(i), axis, data.shape()[axis]) : at[d];
      offset += coordinate * strides[d];
    }
    sources[i] = offset;
    for (int64_t d = r - 1; d >= 0 && ++at[d] == shape[d]; --d) at[d] = 0;
  }
  const size_t elem = dtype_size(data.dtype());
  const auto* src = static_cast<const uint8_t*>(data.raw());
  auto* dst = static_cast<uint8_t*>(out.raw());
  constexpr int64_t kPerUnit = 4096;
  team.run((indices.numel() + kPerUnit - 1) / kPerUnit, [&](int, int64_t first, int64_t end) {
    const int64_t begin = first * kPerUnit, stop = std::min(indices.numel(), end * kPerUnit);
    for (int64_t i = begin; i < stop; ++i) std::memcpy(dst + i * elem, src + sources[i] * elem, elem);
  });
}

// GatherElements: out[i0, .., ir] = data[i0, .., indices[i0, .., ir], .., ir] (the index replaces
// the coordinate on `axis`).
void gather_elements(ThreadTeam& team, const Node& node, const Tensor& data, const Tensor& indices, Tensor& out,
                     std::vector<int64_t>& sources) {
  const int64_t r = data.rank();
  const int64_t axis = normalized_axis(node, node.attr_int("axis", 0), r);
  if (indices.rank() != r || out.numel() != indices.numel()) {
    fail_user("{}: indices {} must have the rank of data {} (and the planned output {} its shape)", node.describe(),
              indices.summary(), data.summary(), out.summary());
  }
  bool same_other_axes = true;
  for (int64_t d = 0; d < r; ++d) {
    if (d != axis && indices.shape()[d] > data.shape()[d]) {
      fail_user("{}: indices {} reach past data {} on axis {}", node.describe(), indices.summary(), data.summary(), d);
    }
    same_other_axes = same_other_axes && (d == axis || indices.shape()[d] == data.shape()[d]);
  }
  const size_t elem = dtype_size(data.dtype());
  if (!same_other_axes || (elem != 4 && elem != 8)) {
    return gather_elements_by_offsets(team, node, data, indices, out, axis, sources);
  }
  std::atomic<bool> bad{false};
  if (elem == 4) gather_rows_typed<uint32_t>(team, data, indices, out, axis, bad);
  else gather_rows_typed<uint64_t>(team, data, indices, out, axis, bad);
  if (!bad.load()) return;
  for (int64_t i = 0; i < indices.numel(); ++i) wrapped_index(node, indices.get_i64(i), axis, data.shape()[axis]);
}

class StridedCopyCall : public LibraryCall {
 public:
  explicit StridedCopyCall(const Node& node) : node_(node) {}

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    if (!out.defined()) return;
    if (node_.op == "Gather") return gather(team, node_, in[0], in[1], out, sources_);
    if (node_.op == "GatherND") return gather_nd(team, node_, in[0], in[1], out, sources_);
    if (node_.op == "GatherElements") return gather_elements(team, node_, in[0], in[1], out, sources_);
    const IndexMap map = node_.op == "Slice" ? slice_map(node_, in) : expand_map(node_, in[0], out.shape());
    check_shape(node_, map.shape, out);
    copy_through(team, map, in[0], out);
  }

 private:
  const Node& node_;
  std::vector<int64_t> sources_;  // the gathers' source offsets, kept so that runs do not allocate
};

}  // namespace

bool strided_copy_call_supports(const Node& node) {
  if (node.op == "Slice") return node.inputs.size() >= 3 && node.input(1) != nullptr && node.input(2) != nullptr;
  if (node.op == "Expand") return node.input(0) != nullptr && node.outputs[0]->rank() >= node.input(0)->rank();
  if (node.op == "Gather") {
    const Value* indices = node.input(1);
    return node.input(0)->rank() > 0 && (indices->dtype == DType::i64 || indices->dtype == DType::i32);
  }
  if (node.op == "GatherND") return node.input(1)->dtype == DType::i64;
  if (node.op == "GatherElements") {
    const DType t = node.input(1)->dtype;
    return node.input(0)->rank() > 0 && (t == DType::i64 || t == DType::i32);
  }
  return false;
}

std::unique_ptr<LibraryCall> prepare_strided_copy_call(const Node& node) { return std::make_unique<StridedCopyCall>(node); }

}  // namespace tilefuse::runtime
