// Kernels that address elements by index or position: GatherElements, GatherND, ScatterElements
// (and Scatter), ScatterND, Tile, Pad, Trilu, CumSum, TopK, NonZero, OneHot and Size. Elements are moved
// as bytes wherever no arithmetic is involved, so every element type works.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "reference/element_types.h"
#include "reference/index_map.h"
#include "reference/integer_math.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// An index into a dim of size n, negative counting from the end; UserError when out of range.
int64_t checked_index(const Node& node, int64_t index, int64_t n, const char* what) {
  if (index < -n || index >= n) {
    fail_user("{}: {} {} is out of range for a dim of size {}", node.describe(), what, index, n);
  }
  return index < 0 ? index + n : index;
}

std::vector<int64_t> index_values(const Node& node, const Tensor& indices) {
  require_dtype(node, indices, {DType::i32, DType::i64}, "indices");
  std::vector<int64_t> out(static_cast<size_t>(indices.numel()));
  for (int64_t i = 0; i < indices.numel(); ++i) out[i] = indices.get_i64(i);
  return out;
}

// For every element of `indices` (same rank as data), the flat data index it addresses along
// `axis` (GatherElements' and ScatterElements' map).
std::vector<int64_t> element_targets(const Node& node, const Tensor& data, const Tensor& indices, int64_t axis) {
  if (indices.rank() != data.rank()) {
    fail_user("{}: indices {} and data {} must have the same rank", node.describe(), indices.summary(), data.summary());
  }
  std::vector<int64_t> idx = index_values(node, indices);
  std::vector<int64_t> strides = row_major_strides(data.shape()), istrides = row_major_strides(indices.shape());
  std::vector<int64_t> targets(idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), flat = 0;
    for (int64_t d = 0; d < indices.rank(); ++d) {
      int64_t coord = rest / istrides[d];
      rest %= istrides[d];
      if (d == axis) coord = checked_index(node, idx[i], data.shape()[d], "index");
      else if (coord >= data.shape()[d]) fail_user("{}: indices {} exceed data {} on axis {}", node.describe(),
                                                   indices.summary(), data.summary(), d);
      flat += coord * strides[d];
    }
    targets[i] = flat;
  }
  return targets;
}

std::vector<Tensor> gather_elements_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& data = required_input(node, in, 0);
  const Tensor& indices = required_input(node, in, 1);
  int64_t axis = node_axis(node, node.attr_int("axis", 0), data.rank());
  return {gather_elements(data, element_targets(node, data, indices, axis), indices.shape())};
}

// GatherND/ScatterND address slices: the last dim of `indices` holds the leading coordinates
// (after batch_dims) of a slice of `data`. Returns, per index tuple, the flat offset of its slice,
// and sets slice_size.
std::vector<int64_t> slice_offsets(const Node& node, const Tensor& data, const Tensor& indices, int64_t batch_dims,
                                   int64_t& slice_size) {
  std::vector<int64_t> idx = index_values(node, indices);
  const int64_t depth = indices.shape().back();
  if (depth < 1 || batch_dims + depth > data.rank()) {
    fail_user("{}: index tuples of length {} must fit data {} after {} batch dims", node.describe(), depth,
              data.summary(), batch_dims);
  }
  const std::vector<int64_t>& dims = data.shape();
  std::vector<int64_t> strides = row_major_strides(dims);
  slice_size = product(std::vector<int64_t>(dims.begin() + batch_dims + depth, dims.end()));
  const int64_t batches = product(std::vector<int64_t>(dims.begin(), dims.begin() + batch_dims));
  const int64_t batch_stride = product(std::vector<int64_t>(dims.begin() + batch_dims, dims.end()));
  const int64_t tuples = static_cast<int64_t>(idx.size()) / depth;
  const int64_t per_batch = batches == 0 ? 1 : std::max<int64_t>(tuples / batches, 1);
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t flat = (t / per_batch) * batch_stride;
    for (int64_t k = 0; k < depth; ++k) {
      flat += checked_index(node, idx[t * depth + k], dims[batch_dims + k], "index") * strides[batch_dims + k];
    }
    offsets[t] = flat;
  }
  return offsets;
}

// Every element of the slices starting at `offsets`, each `slice` elements long, in order.
std::vector<int64_t> slice_elements(const std::vector<int64_t>& offsets, int64_t slice) {
  std::vector<int64_t> elements;
  elements.reserve(offsets.size() * static_cast<size_t>(slice));
  for (int64_t o : offsets) {
    for (int64_t i = 0; i < slice; ++i) elements.push_back(o + i);
  }
  return elements;
}

std::vector<Tensor> gather_nd_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& data = required_input(node, in, 0);
  const Tensor& indices = required_input(node, in, 1);
  const int64_t b = node.attr_int("batch_dims", 0);
  if (indices.rank() < 1) fail_user("{}: indices must have rank >= 1", node.describe());
  int64_t slice = 1;
  std::vector<int64_t> offsets = slice_offsets(node, data, indices, b, slice);
  std::vector<int64_t> source = slice_elements(offsets, slice);
  std::vector<int64_t> shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + b + indices.shape().back(), data.shape().end());
  return {gather_elements(data, source, shape)};
}

// dst[target] = combine(dst[target], src[i]) for each (target, i), in order (later updates of
// the same target win for reduction "none", as ONNX Runtime does).
void scatter(const Node& node, Tensor& out, const Tensor& updates, const std::vector<int64_t>& targets) {
  require_same_dtype(node, out, updates);
  std::string reduction = node.attr_string("reduction", "none");
  if (reduction == "none") {
    const size_t size = dtype_size(out.dtype());
    auto* dst = static_cast<uint8_t*>(out.raw());
    const auto* src = static_cast<const uint8_t*>(updates.raw());
    for (size_t i = 0; i < targets.size(); ++i) std::memcpy(dst + targets[i] * size, src + i * size, size);
    return;
  }
  visit_dtype<TypeSet::Numeric>(node, out.dtype(), [&](auto elem) {
    using E = decltype(elem);
    auto* dst = out.data<typename E::Storage>();
    const auto* src = updates.data<typename E::Storage>();
    for (size_t i = 0; i < targets.size(); ++i) {
      auto a = E::load(dst[targets[i]]), b = E::load(src[i]);
      decltype(a) r = reduction == "add" ? wrap_add(a, b)
                      : reduction == "mul" ? wrap_mul(a, b)
                      : reduction == "max" ? std::max(a, b)
                      : reduction == "min" ? std::min(a, b)
                                           : (fail_user("{}: reduction '{}' is not none, add, mul, max or min",
                                                        node.describe(), reduction), a);
      dst[targets[i]] = E::store(r);
    }
  });
}

std::vector<Tensor> scatter_elements_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& data = required_input(node, in, 0);
  const Tensor& indices = required_input(node, in, 1);
  const Tensor& updates = required_input(node, in, 2);
  if (updates.shape() != indices.shape()) {
    fail_user("{}: updates {} must have the shape of indices {}", node.describe(), updates.summary(), indices.summary());
  }
  Tensor out = data.clone();
  scatter(node, out, updates, element_targets(node, data, indices, node_axis(node, node.attr_int("axis", 0), data.rank())));
  return {out};
}

std::vector<Tensor> scatter_nd_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& data = required_input(node, in, 0);
  const Tensor& indices = required_input(node, in, 1);
  const Tensor& updates = required_input(node, in, 2);
  if (indices.rank() < 1) fail_user("{}: indices must have rank >= 1", node.describe());
  int64_t slice = 1;
  std::vector<int64_t> offsets = slice_offsets(node, data, indices, 0, slice);
  if (updates.numel() != static_cast<int64_t>(offsets.size()) * slice) {
    fail_user("{}: updates {} do not hold {} slices of {} elements", node.describe(), updates.summary(),
              offsets.size(), slice);
  }
  Tensor out = data.clone();
  scatter(node, out, updates, slice_elements(offsets, slice));
  return {out};
}

std::vector<Tensor> tile_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> repeats = int_list(node, required_input(node, in, 1), "input 1 (repeats)");
  if (static_cast<int64_t>(repeats.size()) != x.rank()) {
    fail_user("{}: repeats has {} entries for an input of rank {}", node.describe(), repeats.size(), x.rank());
  }
  std::vector<int64_t> shape = x.shape();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0) fail_user("{}: repeats {} has a negative entry", node.describe(), dims_to_string(repeats));
    shape[d] *= repeats[d];
  }
  std::vector<int64_t> strides = row_major_strides(x.shape()), source(static_cast<size_t>(product(shape)));
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), flat = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      flat += (rest % shape[d]) % x.shape()[d] * strides[d];
      rest /= shape[d];
    }
    source[i] = flat;
  }
  return {gather_elements(x, source, shape)};
}

std::vector<Tensor> pad_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const std::string mode = node.attr_string("mode", "constant");
  std::vector<int64_t> pads =
      optional_input(in, 1) ? int_list(node, in[1], "input 1 (pads)") : node.attr_ints("pads");
  std::vector<int64_t> axes;
  if (const Tensor* a = optional_input(in, 3)) {
    axes = node_axes(node, int_list(node, *a, "input 3 (axes)"), x.rank());
  } else {
    for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    fail_user("{}: pads has {} entries; it needs 2 per padded axis ({})", node.describe(), pads.size(), 2 * axes.size());
  }
  std::vector<int64_t> begin(x.rank(), 0), shape = x.shape();
  for (size_t k = 0; k < axes.size(); ++k) {
    begin[axes[k]] = pads[k];
    shape[axes[k]] += pads[k] + pads[k + axes.size()];
    if (shape[axes[k]] < 0) fail_user("{}: pads {} remove more than axis {} holds", node.describe(), dims_to_string(pads), axes[k]);
    if (mode != "constant" && x.shape()[axes[k]] == 0 && shape[axes[k]] > 0) {
      fail_user("{}: mode '{}' cannot pad the empty axis {}", node.describe(), mode, axes[k]);
    }
  }
  // Element numel(x) of the source is the constant value, appended after x's elements.
  Tensor source(x.dtype(), {x.numel() + 1});
  std::memcpy(source.raw(), x.raw(), x.nbytes());
  const Tensor* value = optional_input(in, 2);
  if (value != nullptr && value->numel() > 0) {
    require_same_dtype(node, x, *value);
    std::memcpy(static_cast<uint8_t*>(source.raw()) + x.nbytes(), value->raw(), dtype_size(x.dtype()));
  } else {
    source.set_f64(x.numel(), node.attr_float("value", 0.0));
  }
  std::vector<int64_t> strides = row_major_strides(x.shape()), index(static_cast<size_t>(product(shape)));
  for (size_t i = 0; i < index.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), flat = 0;
    for (size_t d = shape.size(); d-- > 0 && flat >= 0;) {
      int64_t src = pad_source(mode, rest % shape[d] - begin[d], x.shape()[d]);
      rest /= shape[d];
      flat = src < 0 ? -1 : flat + src * strides[d];
    }
    index[i] = flat < 0 ? x.numel() : flat;
  }
  return {gather_elements(source, index, shape)};
}

std::vector<Tensor> trilu_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  if (x.rank() < 2) fail_user("{}: input must have rank >= 2, got {}", node.describe(), x.summary());
  const int64_t k = optional_input(in, 1) ? static_cast<int64_t>(scalar_value(node, in[1], "input 1 (k)")) : 0;
  const bool upper = node.attr_int("upper", 1) != 0;
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  Tensor source(x.dtype(), {x.numel() + 1});  // the last element is zero
  std::memcpy(source.raw(), x.raw(), x.nbytes());
  std::memset(static_cast<uint8_t*>(source.raw()) + x.nbytes(), 0, dtype_size(x.dtype()));
  std::vector<int64_t> index(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    index[i] = keep ? i : x.numel();
  }
  return {gather_elements(source, index, x.shape())};
}

// Each output element picks values[1] (on) where its position along `axis` is the index (a
// negative index counts from the end; one out of range leaves the whole line off), else values[0].
std::vector<Tensor> one_hot_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& indices = required_input(node, in, 0);
  const Tensor& values = required_input(node, in, 2);
  const double d = scalar_value(node, required_input(node, in, 1), "input 1 (depth)");
  if (!(d >= 1)) fail_user("{}: depth is {}; it must be at least 1", node.describe(), d);
  if (values.numel() != 2) fail_user("{}: values must hold [off, on], got {}", node.describe(), values.summary());
  const auto depth = static_cast<int64_t>(d);
  const int64_t axis = node_axis(node, node.attr_int("axis", -1), indices.rank() + 1);
  std::vector<int64_t> shape = indices.shape();
  shape.insert(shape.begin() + axis, depth);
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(axis); k < indices.shape().size(); ++k) inner *= indices.shape()[k];
  std::vector<int64_t> pick(static_cast<size_t>(product(shape)));
  for (int64_t i = 0; i < static_cast<int64_t>(pick.size()); ++i) {
    const int64_t outer = i / (depth * inner), j = (i / inner) % depth, rest = i % inner;
    const double raw = indices.get_f64(outer * inner + rest);  // NaN and huge indices are out of range
    int64_t at = std::abs(raw) < static_cast<double>(depth) + 1 ? static_cast<int64_t>(raw) : depth;
    at = at < 0 ? at + depth : at;
    pick[static_cast<size_t>(i)] = at == j ? 1 : 0;
  }
  return {gather_elements(values, pick, shape)};
}

std::vector<Tensor> cumsum_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const int64_t axis = node_axis(node, static_cast<int64_t>(scalar_value(node, required_input(node, in, 1), "input 1 (axis)")), x.rank());
  const bool exclusive = node.attr_int("exclusive", 0) != 0, reverse = node.attr_int("reverse", 0) != 0;
  const int64_t n = x.shape()[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  Tensor y(x.dtype(), x.shape());
  visit_dtype<TypeSet::Numeric>(node, x.dtype(), [&](auto elem) {
    using E = decltype(elem);
    using A = std::conditional_t<std::is_floating_point_v<typename E::Compute>, double, int64_t>;
    const auto* px = x.data<typename E::Storage>();
    auto* py = y.data<typename E::Storage>();
    const int64_t lines = n == 0 ? 0 : x.numel() / n;
    for (int64_t line = 0; line < lines; ++line) {
      const int64_t base = (line / inner) * n * inner + line % inner;
      A acc = 0;
      for (int64_t s = 0; s < n; ++s) {
        const int64_t at = base + (reverse ? n - 1 - s : s) * inner;
        const A v = static_cast<A>(E::load(px[at]));
        if (!exclusive) acc = wrap_add(acc, v);
        py[at] = E::store(static_cast<typename E::Compute>(acc));
        if (exclusive) acc = wrap_add(acc, v);
      }
    }
  });
  return {y};
}

// TopK along one axis: values and their indices, largest (or smallest) first; ties keep the
// lower index first, as ONNX requires.
std::vector<Tensor> topk_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const int64_t axis = node_axis(node, node.attr_int("axis", -1), x.rank());
  const int64_t k = static_cast<int64_t>(scalar_value(node, required_input(node, in, 1), "input 1 (K)"));
  const int64_t n = x.shape()[axis];
  if (k < 0 || k > n) fail_user("{}: K = {} must be in [0, {}] (the size of axis {})", node.describe(), k, n, axis);
  const bool largest = node.attr_int("largest", 1) != 0;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  std::vector<int64_t> shape = x.shape();
  shape[axis] = k;
  Tensor indices(DType::i64, shape);
  std::vector<int64_t> source(static_cast<size_t>(indices.numel()));
  std::vector<int64_t> order(static_cast<size_t>(n));
  const int64_t lines = n == 0 ? 0 : x.numel() / n;
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t base = (line / inner) * n * inner + line % inner, out_base = (line / inner) * k * inner + line % inner;
    std::iota(order.begin(), order.end(), 0);
    auto value = [&](int64_t j) { return x.get_f64(base + j * inner); };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      double va = value(a), vb = value(b);
      if (va != va || vb != vb) return (va != va) && !(vb != vb);  // NaN ranks first, like numpy
      return largest ? va > vb : va < vb;
    });
    for (int64_t j = 0; j < k; ++j) {
      indices.data<int64_t>()[out_base + j * inner] = order[j];
      source[out_base + j * inner] = base + order[j] * inner;
    }
  }
  return {gather_elements(x, source, shape), indices};
}

// DepthToSpace (DCR: depth-column-row, or CRD) and SpaceToDepth, as the reshape-transpose-
// reshape of the ONNX definition, spelled as one index map.
std::vector<Tensor> depth_space_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  if (x.rank() != 4) fail_user("{}: input must be [N, C, H, W], got {}", node.describe(), x.summary());
  const int64_t b = node.attr_int("blocksize", 0), n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  const bool to_space = node.op == "DepthToSpace", crd = node.attr_string("mode", "DCR") == "CRD";
  if (b < 1 || (to_space ? c % (b * b) != 0 : h % b != 0 || w % b != 0)) {
    fail_user("{}: input {} does not split into blocks of {}", node.describe(), x.summary(), b);
  }
  std::vector<int64_t> shape = to_space ? std::vector<int64_t>{n, c / (b * b), h * b, w * b}
                                        : std::vector<int64_t>{n, c * b * b, h / b, w / b};
  std::vector<int64_t> source(static_cast<size_t>(x.numel()));
  const int64_t oc = shape[1], oh = shape[2], ow = shape[3];
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t ox = i % ow, oy = (i / ow) % oh, ch = (i / ow / oh) % oc, batch = i / ow / oh / oc;
    int64_t ic, iy, ix;
    if (to_space) {  // output (ch, oy, ox) reads channel block (oy % b, ox % b) of pixel (oy / b, ox / b)
      const int64_t by = oy % b, bx = ox % b;
      ic = crd ? (ch * b + by) * b + bx : (by * b + bx) * oc + ch;
      iy = oy / b, ix = ox / b;
    } else {  // SpaceToDepth (DCR order): output channel ch = (by * b + bx) * C + c
      const int64_t cc = ch % c, bx = (ch / c) % b, by = ch / c / b;
      ic = cc, iy = oy * b + by, ix = ox * b + bx;
    }
    source[i] = ((batch * c + ic) * h + iy) * w + ix;
  }
  return {gather_elements(x, source, shape)};
}

std::vector<Tensor> nonzero_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (x.get_f64(i) != 0.0) hits.push_back(i);
  }
  const int64_t rank = x.rank();
  Tensor out(DType::i64, {rank, static_cast<int64_t>(hits.size())});
  std::vector<int64_t> strides = row_major_strides(x.shape());
  for (size_t j = 0; j < hits.size(); ++j) {
    int64_t rest = hits[j];
    for (int64_t d = 0; d < rank; ++d) {
      out.data<int64_t>()[d * static_cast<int64_t>(hits.size()) + static_cast<int64_t>(j)] = rest / strides[d];
      rest %= strides[d];
    }
  }
  return {out};
}

std::vector<Tensor> size_kernel(const Node& node, const std::vector<Tensor>& in) {
  Tensor out(DType::i64, {});
  out.set_i64(0, required_input(node, in, 0).numel());
  return {out};
}

}  // namespace

void register_index_kernels(KernelTable& table) {
  table["GatherElements"] = gather_elements_kernel;
  table["GatherND"] = gather_nd_kernel;
  table["ScatterElements"] = scatter_elements_kernel;
  table["Scatter"] = scatter_elements_kernel;
  table["ScatterND"] = scatter_nd_kernel;
  table["Tile"] = tile_kernel;
  table["Pad"] = pad_kernel;
  table["Trilu"] = trilu_kernel;
  table["CumSum"] = cumsum_kernel;
  table["TopK"] = topk_kernel;
  table["NonZero"] = nonzero_kernel;
  table["OneHot"] = one_hot_kernel;
  table["DepthToSpace"] = depth_space_kernel;
  table["SpaceToDepth"] = depth_space_kernel;
  table["Size"] = size_kernel;
}

}  // namespace tilefuse::reference
