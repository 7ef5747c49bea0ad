#include "runtime/scatter_call.h"

#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ir/shape.h"
#include "reference/integer_math.h"

namespace tilefuse::runtime {

namespace {

enum class Reduction { none, add, mul, max, min };

bool parse_reduction(const std::string& name, Reduction& out) {
  static const std::pair<const char*, Reduction> names[] = {{"none", Reduction::none},
                                                            {"add", Reduction::add},
                                                            {"mul", Reduction::mul},
                                                            {"max", Reduction::max},
                                                            {"min", Reduction::min}};
  for (const auto& [text, reduction] : names) {
    if (name == text) {
      out = reduction;
      return true;
    }
  }
  return false;
}

// The reference's combine (reference/index_kernels.cpp): integers wrap, max and min keep the
// element already there unless the update compares greater (or less).
template <Reduction R, typename T>
T combine(T have, T update) {
  if constexpr (R == Reduction::none) return update;
  else if constexpr (R == Reduction::add) return reference::wrap_add(have, update);
  else if constexpr (R == Reduction::mul) return reference::wrap_mul(have, update);
  else if constexpr (R == Reduction::max) return std::max(have, update);
  else return std::min(have, update);
}

// An index along a dim of size n, negative counting from the end; UserError when out of range.
int64_t wrapped(const Node& node, int64_t k, int64_t n) {
  if (k < -n || k >= n) {
    fail_user("{}: index {} is out of range for a dim of size {} (allowed [{}, {}])", node.describe(), k, n, -n, n - 1);
  }
  return k < 0 ? k + n : k;
}

int64_t index_at(const Tensor& indices, int64_t i) {
  return indices.dtype() == DType::i32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Calls fn with a value of the type the elements are combined as: the element's own type for the
// reductions, an unsigned integer of its size for `none` (a copy of its bits, whatever it holds).
template <typename Fn>
void visit_element(const Node& node, DType dtype, Reduction reduction, Fn&& fn) {
  if (reduction == Reduction::none) {
    switch (dtype_size(dtype)) {
      case 1: return fn(uint8_t{});
      case 2: return fn(uint16_t{});
      case 4: return fn(uint32_t{});
      case 8: return fn(uint64_t{});
    }
  } else {
    switch (dtype) {
      case DType::f32: return fn(float{});
      case DType::f64: return fn(double{});
      case DType::i32: return fn(int32_t{});
      case DType::i64: return fn(int64_t{});
      default: break;
    }
  }
  fail_internal("{}: scatter_call of {}", node.describe(), dtype_name(dtype));
}

template <typename Fn>
void visit_reduction(Reduction reduction, Fn&& fn) {
  switch (reduction) {
    case Reduction::none: return fn(std::integral_constant<Reduction, Reduction::none>{});
    case Reduction::add: return fn(std::integral_constant<Reduction, Reduction::add>{});
    case Reduction::mul: return fn(std::integral_constant<Reduction, Reduction::mul>{});
    case Reduction::max: return fn(std::integral_constant<Reduction, Reduction::max>{});
    case Reduction::min: return fn(std::integral_constant<Reduction, Reduction::min>{});
  }
}

// Output ranges a worker owns: 16 KiB of elements each, so two workers never share a cache line.
int64_t elements_per_block(DType dtype) { return 16384 / static_cast<int64_t>(dtype_size(dtype)); }

class ScatterCall : public LibraryCall {
 public:
  explicit ScatterCall(const Node& node) : node_(node) {
    parse_reduction(node.attr_string("reduction", "none"), reduction_);
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    if (!out.defined()) return;
    const Tensor &data = in[0], &indices = in[1], &updates = in[2];
    if (out.numel() != data.numel() || out.dtype() != data.dtype() || updates.dtype() != data.dtype()) {
      fail_user("{}: data {} and updates {} do not fill the planned output {}", node_.describe(), data.summary(),
                updates.summary(), out.summary());
    }
    if (node_.op == "ScatterND") scatter_nd(team, data, indices, updates, out);
    else scatter_elements(team, data, indices, updates, out);
  }

 private:
  // ---- ScatterND ----

  // The flat offset of each index tuple's slice into offsets_; returns the slice's length.
  int64_t slice_offsets(const Tensor& data, const Tensor& indices, const Tensor& updates) {
    const int64_t depth = indices.rank() < 1 ? 0 : indices.shape().back();
    if (depth < 1 || depth > data.rank()) {
      fail_user("{}: index tuples of length {} must fit data {}", node_.describe(), depth, data.summary());
    }
    const std::vector<int64_t>& dims = data.shape();
    const std::vector<int64_t> strides = row_major_strides(dims);
    const int64_t slice = strides[static_cast<size_t>(depth - 1)];
    const int64_t tuples = indices.numel() / depth;
    if (updates.numel() != tuples * slice) {
      fail_user("{}: updates {} do not hold {} slices of {} elements", node_.describe(), updates.summary(), tuples,
                slice);
    }
    offsets_.resize(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t flat = 0;
      for (int64_t k = 0; k < depth; ++k) flat += wrapped(node_, index_at(indices, t * depth + k), dims[k]) * strides[k];
      offsets_[static_cast<size_t>(t)] = flat;
    }
    return slice;
  }

  // Elements [begin, end) of out: the data's, then each slice's part of them in index order.
  template <Reduction R, typename T>
  void scatter_nd_range(const T* data, const T* updates, T* out, int64_t slice, int64_t begin, int64_t end) const {
    if (data != out) std::memcpy(out + begin, data + begin, static_cast<size_t>(end - begin) * sizeof(T));
    for (size_t t = 0; t < offsets_.size(); ++t) {
      const int64_t first = std::max(offsets_[t], begin), last = std::min(offsets_[t] + slice, end);
      if (first >= last) continue;
      const T* from = updates + static_cast<int64_t>(t) * slice - offsets_[t];
      if constexpr (R == Reduction::none) {
        std::memcpy(out + first, from + first, static_cast<size_t>(last - first) * sizeof(T));
      } else {
        for (int64_t e = first; e < last; ++e) out[e] = combine<R>(out[e], from[e]);
      }
    }
  }

  void scatter_nd(ThreadTeam& team, const Tensor& data, const Tensor& indices, const Tensor& updates, Tensor& out) {
    const int64_t slice = slice_offsets(data, indices, updates);
    const int64_t n = out.numel(), per_block = elements_per_block(out.dtype());
    visit_element(node_, out.dtype(), reduction_, [&](auto element) {
      using T = decltype(element);
      visit_reduction(reduction_, [&](auto reduction) {
        const T* d = static_cast<const T*>(data.raw());
        const T* u = static_cast<const T*>(updates.raw());
        T* o = static_cast<T*>(out.raw());
        team.run((n + per_block - 1) / per_block, [&](int, int64_t begin, int64_t end) {
          scatter_nd_range<decltype(reduction)::value>(d, u, o, slice, begin * per_block, std::min(end * per_block, n));
        });
      });
    });
  }

  // ---- ScatterElements ----

  // The shape rules of the reference, and the data offsets of the indices' coordinates before
  // the axis (outer_) and after it (inner_).
  void element_offsets(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis) {
    if (indices.rank() != data.rank() || updates.shape() != indices.shape()) {
      fail_user("{}: indices {} and updates {} must have one shape, of the rank of data {}", node_.describe(),
                indices.summary(), updates.summary(), data.summary());
    }
    for (int64_t d = 0; d < data.rank(); ++d) {
      if (d != axis && indices.shape()[d] > data.shape()[d]) {
        fail_user("{}: indices {} exceed data {} on axis {}", node_.describe(), indices.summary(), data.summary(), d);
      }
    }
    const std::vector<int64_t> strides = row_major_strides(data.shape());
    offsets_of(indices.shape(), strides, 0, axis, outer_);
    offsets_of(indices.shape(), strides, axis + 1, data.rank(), inner_);
  }

  // For each position over dims [from, to) of `shape`, in row-major order, its data offset.
  static void offsets_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, int64_t from,
                         int64_t to, std::vector<int64_t>& offsets) {
    offsets.assign(1, 0);
    for (int64_t d = from; d < to; ++d) {
      const size_t before = offsets.size();
      offsets.resize(before * static_cast<size_t>(shape[d]));
      for (size_t p = before; p-- > 0;) {
        for (int64_t c = shape[d]; c-- > 0;) offsets[p * static_cast<size_t>(shape[d]) + c] = offsets[p] + c * strides[d];
      }
    }
  }

  static constexpr int64_t kInnerBlock = 512;

  // Blocks [begin, end) of (outer position, run of kInnerBlock inner positions), each walking the
  // axis in index order.
  template <Reduction R, typename T, typename I>
  void scatter_elements_blocks(const I* indices, const T* updates, T* out, int64_t n, int64_t dim, int64_t stride,
                               int64_t begin, int64_t end) const {
    const int64_t inner = static_cast<int64_t>(inner_.size());
    const int64_t runs = (inner + kInnerBlock - 1) / kInnerBlock;
    for (int64_t block = begin; block < end; ++block) {
      const int64_t o = block / runs, first = (block % runs) * kInnerBlock, last = std::min(first + kInnerBlock, inner);
      T* base = out + outer_[static_cast<size_t>(o)];
      for (int64_t j = 0; j < n; ++j) {
        const int64_t row = (o * n + j) * inner;
        for (int64_t i = first; i < last; ++i) {
          T& target = base[wrapped(node_, static_cast<int64_t>(indices[row + i]), dim) * stride + inner_[i]];
          target = combine<R>(target, updates[row + i]);
        }
      }
    }
  }

  void scatter_elements(ThreadTeam& team, const Tensor& data, const Tensor& indices, const Tensor& updates,
                        Tensor& out) {
    const int64_t axis = normalize_axis(node_.attr_int("axis", 0), data.rank(), node_.describe());
    element_offsets(data, indices, updates, axis);
    copy_over_team(team, data, out);
    if (indices.numel() == 0) return;
    const int64_t n = indices.shape()[axis], inner = static_cast<int64_t>(inner_.size());
    const int64_t blocks = static_cast<int64_t>(outer_.size()) * ((inner + kInnerBlock - 1) / kInnerBlock);
    const int64_t dim = data.shape()[axis], stride = row_major_strides(data.shape())[axis];
    visit_element(node_, out.dtype(), reduction_, [&](auto element) {
      using T = decltype(element);
      visit_reduction(reduction_, [&](auto reduction) {
        const T* u = static_cast<const T*>(updates.raw());
        T* o = static_cast<T*>(out.raw());
        auto over_team = [&](const auto* idx) {
          team.run(blocks, [&](int, int64_t begin, int64_t end) {
            scatter_elements_blocks<decltype(reduction)::value>(idx, u, o, n, dim, stride, begin, end);
          });
        };
        if (indices.dtype() == DType::i32) over_team(indices.data<int32_t>());
        else over_team(indices.data<int64_t>());
      });
    });
  }

  static void copy_over_team(ThreadTeam& team, const Tensor& data, Tensor& out) {
    if (data.raw() == out.raw()) return;
    const int64_t bytes = static_cast<int64_t>(out.nbytes()), per_block = 16384;
    const auto* src = static_cast<const uint8_t*>(data.raw());
    auto* dst = static_cast<uint8_t*>(out.raw());
    team.run((bytes + per_block - 1) / per_block, [&](int, int64_t begin, int64_t end) {
      std::memcpy(dst + begin * per_block, src + begin * per_block,
                  static_cast<size_t>(std::min(end * per_block, bytes) - begin * per_block));
    });
  }

  const Node& node_;
  Reduction reduction_ = Reduction::none;
  std::vector<int64_t> offsets_;        // ScatterND: each tuple's slice
  std::vector<int64_t> outer_, inner_;  // ScatterElements: see element_offsets
};

}  // namespace

bool scatter_call_supports(const Node& node) {
  const bool nd = node.op == "ScatterND";
  if (!nd && node.op != "ScatterElements" && node.op != "Scatter") return false;
  if (node.inputs.size() != 3 || node.input(0) == nullptr || node.input(1) == nullptr || node.input(2) == nullptr) {
    return false;
  }
  Reduction reduction;
  if (!parse_reduction(node.attr_string("reduction", "none"), reduction)) return false;
  const DType t = node.input(0)->dtype, index = node.input(1)->dtype;
  if (index != DType::i32 && index != DType::i64) return false;
  if (reduction == Reduction::none) {
    const size_t size = dtype_size(t);
    return size == 1 || size == 2 || size == 4 || size == 8;
  }
  return t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::i64;
}

std::unique_ptr<LibraryCall> prepare_scatter_call(const Node& node) { return std::make_unique<ScatterCall>(node); }

}  // namespace tilefuse::runtime
