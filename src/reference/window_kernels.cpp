// Conv (and our FusedConv), ConvTranspose, MaxPool, AveragePool and the global pools over any number of spatial
// dims, in double. Every window is spelled out through a table of input offsets (one per output
// position and kernel position, -1 where the window reads padding), so the loops stay plain.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/ranges.h>

#include "ir/ops/fused_activation.h"
#include "ir/ops/window_geometry.h"
#include "reference/element_types.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[i] = t.get_f64(i);
  return out;
}

Tensor from_doubles(DType dtype, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, values[i]);
  return t;
}

std::vector<int64_t> spatial_of(const std::vector<int64_t>& shape) { return {shape.begin() + 2, shape.end()}; }

// The multi-index of flat position `flat` in `dims` (row-major).
std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = flat % dims[d];
    flat /= dims[d];
  }
  return index;
}

// table[k * outputs + o]: the flat spatial offset in the input that kernel position k of the
// window at output position o reads, or -1 (padding). `inside` also accepts positions in the
// end padding of the input, for AveragePool's count_include_pad.
struct WindowTable {
  int64_t outputs = 0, kernel_size = 0;
  std::vector<int64_t> offsets;
  std::vector<uint8_t> in_padded_extent;  // 1 where the position lies inside input + pads
};

WindowTable window_table(const WindowGeometry& g, const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                         const std::vector<int64_t>& pads) {
  WindowTable t;
  t.outputs = product(out);
  t.kernel_size = product(g.kernel);
  t.offsets.assign(static_cast<size_t>(t.outputs * t.kernel_size), -1);
  t.in_padded_extent.assign(t.offsets.size(), 0);
  std::vector<int64_t> end_pads(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t total = std::max<int64_t>(0, (out[d] - 1) * g.strides[d] + g.extent(d) - in[d]);
    end_pads[d] = g.same() ? total - pads[d] : g.pads[g.spatial() + d];
  }
  for (int64_t k = 0; k < t.kernel_size; ++k) {
    std::vector<int64_t> kp = unflatten(k, g.kernel);
    for (int64_t o = 0; o < t.outputs; ++o) {
      std::vector<int64_t> op = unflatten(o, out);
      int64_t offset = 0;
      bool valid = true, padded = true;
      for (size_t d = 0; d < in.size(); ++d) {
        int64_t pos = op[d] * g.strides[d] - pads[d] + kp[d] * g.dilations[d];
        valid = valid && pos >= 0 && pos < in[d];
        padded = padded && pos >= -pads[d] && pos < in[d] + end_pads[d];
        offset = offset * in[d] + pos;
      }
      t.offsets[k * t.outputs + o] = valid ? offset : -1;
      t.in_padded_extent[k * t.outputs + o] = padded ? 1 : 0;
    }
  }
  return t;
}

const Tensor* optional_bias(const Node& node, const std::vector<Tensor>& in, int64_t channels) {
  const Tensor* bias = optional_input(in, 2);
  if (bias != nullptr && (bias->rank() != 1 || bias->shape()[0] != channels)) {
    fail_user("{}: bias must be a vector of {} entries, got {}", node.describe(), channels, bias->summary());
  }
  return bias;
}

std::vector<int64_t> conv_output_spatial(const Node& node, const WindowGeometry& g, const std::vector<int64_t>& in,
                                         bool transposed) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    Dim dim = transposed ? transposed_output_dim(node, g, d, Dim(in[d])) : window_output_dim(node, g, d, Dim(in[d]), false);
    out.push_back(dim.value());
  }
  return out;
}

// Conv and ConvTranspose: float input and weight of one type, both [N|M, C, spatial...].
void require_conv_operands(const Node& node, const Tensor& x, const Tensor& w) {
  require_type_set<TypeSet::Float>(node, x.dtype());
  require_same_dtype(node, x, w);
  if (x.rank() < 3 || w.rank() != x.rank()) {
    fail_user("{}: input {} and weight {} must be [N, C, spatial...] of one rank", node.describe(), x.summary(),
              w.summary());
  }
}

// Conv's output in double, and its shape.
std::vector<double> conv_doubles(const Node& node, const std::vector<Tensor>& in, std::vector<int64_t>& shape) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& w = required_input(node, in, 1);
  require_conv_operands(node, x, w);
  const int64_t groups = node.attr_int("group", 1);
  const int64_t batch = x.shape()[0], channels = x.shape()[1], maps = w.shape()[0], per_group = w.shape()[1];
  if (groups < 1 || per_group * groups != channels || maps % groups != 0) {
    fail_user("{}: weight {} does not fit input {} with group = {}", node.describe(), w.summary(), x.summary(), groups);
  }
  const Tensor* bias = optional_bias(node, in, maps);
  std::vector<int64_t> in_sp = spatial_of(x.shape());
  WindowGeometry g = window_geometry(node, in_sp.size(), spatial_of(w.shape()));
  std::vector<int64_t> out_sp = conv_output_spatial(node, g, in_sp, false);
  WindowTable t = window_table(g, in_sp, out_sp, begin_pads(g, in_sp, out_sp));
  const int64_t in_size = product(in_sp);
  std::vector<double> xd = as_doubles(x), wd = as_doubles(w), y(static_cast<size_t>(batch * maps * t.outputs));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < maps; ++m) {
      double* acc = y.data() + (n * maps + m) * t.outputs;
      std::fill(acc, acc + t.outputs, bias ? bias->get_f64(m) : 0.0);
      const int64_t first_channel = m / (maps / groups) * per_group;
      for (int64_t c = 0; c < per_group; ++c) {
        const double* xc = xd.data() + (n * channels + first_channel + c) * in_size;
        const double* wc = wd.data() + (m * per_group + c) * t.kernel_size;
        for (int64_t k = 0; k < t.kernel_size; ++k) {
          const int64_t* offsets = t.offsets.data() + k * t.outputs;
          for (int64_t o = 0; o < t.outputs; ++o) {
            if (offsets[o] >= 0) acc[o] += wc[k] * xc[offsets[o]];
          }
        }
      }
    }
  }
  shape = {batch, maps};
  shape.insert(shape.end(), out_sp.begin(), out_sp.end());
  return y;
}

std::vector<Tensor> conv(const Node& node, const std::vector<Tensor>& in) {
  std::vector<int64_t> shape;
  std::vector<double> y = conv_doubles(node, in, shape);
  return {from_doubles(in[0].dtype(), shape, y)};
}

// FusedConv: activation(Conv(X, W, B) + Z), the activation in double.
std::vector<Tensor> fused_conv(const Node& node, const std::vector<Tensor>& in) {
  std::vector<int64_t> shape;
  std::vector<double> y = conv_doubles(node, in, shape);
  const Tensor* z = optional_input(in, 3);
  if (z != nullptr && z->shape() != shape) {
    fail_user("{}: residual {} must have the output's shape [{}]", node.describe(), z->summary(), fmt::join(shape, ", "));
  }
  const FusedActivation act = fused_activation(node);
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = act(y[i] + (z != nullptr ? z->get_f64(static_cast<int64_t>(i)) : 0.0));
  }
  return {from_doubles(in[0].dtype(), shape, y)};
}

// PointwiseDepthwiseConv (X, W1, W2, B1, B2): the 1x1 FusedConv (X, W1, B1,
// `pointwise_activation`), rounded to the element type as the graph it replaces stores it, then
// the depthwise FusedConv (W2, B2, `activation`) over that.
std::vector<Tensor> pointwise_depthwise_conv(const Node& node, const std::vector<Tensor>& in) {
  Node pointwise;
  pointwise.op = "FusedConv", pointwise.name = node.name + "/pointwise";
  Node depthwise;
  depthwise.op = "FusedConv", depthwise.name = node.name + "/depthwise";
  for (const auto& [name, attr] : node.attrs) {
    if (name.starts_with("pointwise_")) {
      pointwise.attrs[name.substr(std::string_view("pointwise_").size())] = attr;
    } else {
      depthwise.attrs[name] = attr;
    }
  }
  auto optional = [&](size_t i) { return i < in.size() ? in[i] : Tensor(); };
  const Tensor expanded =
      fused_conv(pointwise, {required_input(node, in, 0), required_input(node, in, 1), optional(3)})[0];
  return fused_conv(depthwise, {expanded, required_input(node, in, 2), optional(4)});
}

// ConvTranspose scatters every input element through the kernel: output position
// i * stride - pad + k * dilation receives x[i] * w[k]. The offsets table is built with input
// and output swapped, which is exactly that map.
std::vector<Tensor> conv_transpose(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& w = required_input(node, in, 1);
  require_conv_operands(node, x, w);
  const int64_t groups = node.attr_int("group", 1);
  const int64_t batch = x.shape()[0], channels = x.shape()[1], per_group = w.shape()[1];
  if (groups < 1 || w.shape()[0] != channels || channels % groups != 0) {
    fail_user("{}: weight {} does not fit input {} with group = {}", node.describe(), w.summary(), x.summary(), groups);
  }
  const int64_t maps = per_group * groups;
  const Tensor* bias = optional_bias(node, in, maps);
  std::vector<int64_t> in_sp = spatial_of(x.shape());
  WindowGeometry g = window_geometry(node, in_sp.size(), spatial_of(w.shape()));
  std::vector<int64_t> out_sp = conv_output_spatial(node, g, in_sp, true);
  // Input positions play the role of window positions over the output.
  WindowGeometry scatter = g;
  scatter.auto_pad = "NOTSET";
  WindowTable t = window_table(scatter, out_sp, in_sp, transposed_begin_pads(g, in_sp, out_sp));
  const int64_t out_size = product(out_sp);
  std::vector<double> xd = as_doubles(x), wd = as_doubles(w), y(static_cast<size_t>(batch * maps * out_size));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < maps; ++m) {
      double* acc = y.data() + (n * maps + m) * out_size;
      std::fill(acc, acc + out_size, bias ? bias->get_f64(m) : 0.0);
      const int64_t group = m / per_group, mm = m % per_group, channels_per_group = channels / groups;
      for (int64_t c = group * channels_per_group; c < (group + 1) * channels_per_group; ++c) {
        const double* xc = xd.data() + (n * channels + c) * t.outputs;
        const double* wc = wd.data() + (c * per_group + mm) * t.kernel_size;
        for (int64_t k = 0; k < t.kernel_size; ++k) {
          const int64_t* offsets = t.offsets.data() + k * t.outputs;
          for (int64_t i = 0; i < t.outputs; ++i) {
            if (offsets[i] >= 0) acc[offsets[i]] += wc[k] * xc[i];
          }
        }
      }
    }
  }
  std::vector<int64_t> shape = {batch, maps};
  shape.insert(shape.end(), out_sp.begin(), out_sp.end());
  return {from_doubles(x.dtype(), shape, y)};
}

// The column-major flat offset of the element at row-major offset `offset` in `dims`.
int64_t column_major_offset(int64_t offset, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index = unflatten(offset, dims);
  int64_t flat = 0;
  for (size_t d = index.size(); d-- > 0;) flat = flat * dims[d] + index[d];
  return flat;
}

template <bool is_max>
std::vector<Tensor> pool(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Numeric>(node, x.dtype());
  if (x.rank() < 3) fail_user("{}: input must be [N, C, spatial...], got {}", node.describe(), x.summary());
  std::vector<int64_t> in_sp = spatial_of(x.shape());
  WindowGeometry g = window_geometry(node, in_sp.size(), node.attr_ints("kernel_shape"));
  const bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  const bool column_major = node.attr_int("storage_order", 0) != 0;  // of MaxPool's Indices
  std::vector<int64_t> out_sp;
  for (size_t d = 0; d < in_sp.size(); ++d) out_sp.push_back(window_output_dim(node, g, d, Dim(in_sp[d]), ceil_mode).value());
  WindowTable t = window_table(g, in_sp, out_sp, begin_pads(g, in_sp, out_sp));
  const int64_t planes = x.shape()[0] * x.shape()[1], in_size = product(in_sp);
  std::vector<double> xd = as_doubles(x), y(static_cast<size_t>(planes * t.outputs));
  std::vector<double> argmax(y.size());
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t o = 0; o < t.outputs; ++o) {
      double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
      int64_t count = 0, best = -1;
      for (int64_t k = 0; k < t.kernel_size; ++k) {
        const int64_t offset = t.offsets[k * t.outputs + o];
        if (offset < 0) {
          count += include_pad && t.in_padded_extent[k * t.outputs + o] ? 1 : 0;
          continue;
        }
        const double v = xd[p * in_size + offset];
        ++count;
        if (!is_max) {
          acc += v;
        } else if (best < 0 || (!std::isnan(acc) && (v > acc || std::isnan(v)))) {
          acc = v, best = p * in_size + offset;  // NaN propagates, as in PyTorch and NumPy
        }
      }
      y[p * t.outputs + o] = is_max ? acc : acc / static_cast<double>(std::max<int64_t>(count, 1));
      if (column_major && best >= 0) best = p * in_size + column_major_offset(best - p * in_size, in_sp);
      argmax[p * t.outputs + o] = static_cast<double>(best);
    }
  }
  std::vector<int64_t> shape = {x.shape()[0], x.shape()[1]};
  shape.insert(shape.end(), out_sp.begin(), out_sp.end());
  if (!is_max) return {from_doubles(x.dtype(), shape, y)};
  return {from_doubles(x.dtype(), shape, y), from_doubles(DType::i64, shape, argmax)};
}

template <bool is_max>
std::vector<Tensor> global_pool(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Float>(node, x.dtype());
  if (x.rank() < 3) fail_user("{}: input must be [N, C, spatial...], got {}", node.describe(), x.summary());
  const int64_t planes = x.shape()[0] * x.shape()[1], size = product(spatial_of(x.shape()));
  std::vector<double> y(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < size; ++i) {
      const double v = x.get_f64(p * size + i);
      acc = is_max ? (v > acc || v != v ? v : acc) : acc + v;
    }
    y[p] = is_max ? acc : acc / static_cast<double>(size);
  }
  std::vector<int64_t> shape(x.shape().size(), 1);
  shape[0] = x.shape()[0], shape[1] = x.shape()[1];
  return {from_doubles(x.dtype(), shape, y)};
}

}  // namespace

void register_window_kernels(KernelTable& table) {
  table["Conv"] = conv;
  table["FusedConv"] = fused_conv;
  table["PointwiseDepthwiseConv"] = pointwise_depthwise_conv;
  table["ConvTranspose"] = conv_transpose;
  table["MaxPool"] = pool<true>;
  table["AveragePool"] = pool<false>;
  table["GlobalAveragePool"] = global_pool<false>;
  table["GlobalMaxPool"] = global_pool<true>;
}

}  // namespace tilefuse::reference
