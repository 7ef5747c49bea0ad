// Softmax, LogSoftmax (opset 13: along one axis, default -1), LayerNormalization (opset 17:
// over the dims from `axis` on, with outputs Y, Mean and InvStdDev), BatchNormalization,
// InstanceNormalization and GroupNormalization. Computed in double.
#include <algorithm>
#include <cmath>

#include "reference/element_types.h"
#include "reference/index_map.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

// x viewed as [outer, n, inner] around `axis`; fn(values) turns each run of n values along the
// axis (copied into a vector of double) into the n results.
template <typename Fn>
Tensor along_axis(const Tensor& x, int64_t axis, Fn fn) {
  int64_t n = x.rank() == 0 ? 1 : x.shape()[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  int64_t outer = n * inner == 0 ? 0 : x.numel() / (n * inner);
  Tensor y(x.dtype(), x.shape());
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) row[k] = x.get_f64(base + k * inner);
      fn(row);
      for (int64_t k = 0; k < n; ++k) y.set_f64(base + k * inner, row[k]);
    }
  }
  return y;
}

template <bool log_softmax>
std::vector<Tensor> softmax_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Float>(node, x.dtype());
  int64_t axis = node_axis(node, node.attr_int("axis", -1), x.rank());
  return {along_axis(x, axis, [](std::vector<double>& row) {
    // Shifting by the maximum keeps exp from overflowing; it cancels in the quotient.
    double max = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (double v : row) sum += std::exp(v - max);
    for (double& v : row) v = log_softmax ? v - max - std::log(sum) : std::exp(v - max) / sum;
  })};
}

// LayerNormalization's output element types: Y as X, Mean and InvStdDev as stash_type.
DType stash_dtype(const Node& node) {
  int64_t stash = node.attr_int("stash_type", 1);
  std::optional<DType> t = dtype_from_onnx(static_cast<int>(stash));
  if (!t || !is_float(*t)) fail_user("{}: stash_type {} is not a float element type", node.describe(), stash);
  return *t;
}

// For every element of the normalised shape, the element of `param` (Scale or B) applied to it.
std::vector<int64_t> param_indices(const Node& node, const Tensor& param, const std::vector<int64_t>& normalized,
                                   const char* what) {
  if (broadcast_dims(param.shape(), normalized, node.describe()) != normalized) {
    fail_user("{}: {} of shape {} does not broadcast to the normalised shape {}", node.describe(), what,
              dims_to_string(param.shape()), dims_to_string(normalized));
  }
  return broadcast_indices(param.shape(), normalized);
}

std::vector<Tensor> layer_norm(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& scale = required_input(node, in, 1);
  const Tensor* bias = optional_input(in, 2);
  require_type_set<TypeSet::Float>(node, x.dtype());
  require_same_dtype(node, x, scale);
  if (bias != nullptr) require_same_dtype(node, x, *bias);
  int64_t axis = node_axis(node, node.attr_int("axis", -1), x.rank());
  double epsilon = node.attr_float("epsilon", 1e-5);

  std::vector<int64_t> normalized(x.shape().begin() + axis, x.shape().end());
  std::vector<int64_t> stat_shape(x.shape().begin(), x.shape().begin() + axis);
  stat_shape.resize(x.shape().size(), 1);
  int64_t cols = product(normalized), rows = product(stat_shape);
  std::vector<int64_t> scale_index = param_indices(node, scale, normalized, "Scale");
  std::vector<int64_t> bias_index = bias ? param_indices(node, *bias, normalized, "B") : std::vector<int64_t>{};

  Tensor y(x.dtype(), x.shape()), mean_out(stash_dtype(node), stat_shape), inv_std_out(stash_dtype(node), stat_shape);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t c = 0; c < cols; ++c) sum += x.get_f64(r * cols + c);
    double mean = sum / static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c) sq += std::pow(x.get_f64(r * cols + c) - mean, 2);
    double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(cols) + epsilon);
    for (int64_t c = 0; c < cols; ++c) {
      double v = (x.get_f64(r * cols + c) - mean) * inv_std * scale.get_f64(scale_index[c]);
      if (bias) v += bias->get_f64(bias_index[c]);
      y.set_f64(r * cols + c, v);
    }
    mean_out.set_f64(r, mean);
    inv_std_out.set_f64(r, inv_std);
  }
  return {y, mean_out, inv_std_out};
}

// y = x / sqrt(mean(x^2 over dims [axis, rank)) + epsilon) * scale (opset 23).
std::vector<Tensor> rms_norm(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& scale = required_input(node, in, 1);
  require_type_set<TypeSet::Float>(node, x.dtype());
  require_same_dtype(node, x, scale);
  const int64_t axis = node_axis(node, node.attr_int("axis", -1), x.rank());
  const double epsilon = node.attr_float("epsilon", 1e-5);
  std::vector<int64_t> normalized(x.shape().begin() + axis, x.shape().end());
  const int64_t cols = product(normalized), rows = cols == 0 ? 0 : x.numel() / cols;
  std::vector<int64_t> scale_index = param_indices(node, scale, normalized, "scale");
  Tensor y(x.dtype(), x.shape());
  for (int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (int64_t c = 0; c < cols; ++c) sq += std::pow(x.get_f64(r * cols + c), 2);
    const double inv_rms = 1.0 / std::sqrt(sq / static_cast<double>(cols) + epsilon);
    for (int64_t c = 0; c < cols; ++c) {
      y.set_f64(r * cols + c, x.get_f64(r * cols + c) * inv_rms * scale.get_f64(scale_index[c]));
    }
  }
  return {y};
}

// x as [N, C, spatial]: the channel of element i and the size of the spatial block.
struct ChannelLayout {
  int64_t batch, channels, spatial;
  int64_t channel_of(int64_t i) const { return (i / spatial) % channels; }
};

ChannelLayout channel_layout(const Node& node, const Tensor& x) {
  if (x.rank() < 2) fail_user("{}: input must be [N, C, ...], got {}", node.describe(), x.summary());
  int64_t spatial = 1;
  for (int64_t d = 2; d < x.rank(); ++d) spatial *= x.shape()[d];
  return {x.shape()[0], x.shape()[1], spatial};
}

void require_length(const Node& node, const Tensor& t, int64_t n, const char* what) {
  if (t.rank() != 1 || t.shape()[0] != n) {
    fail_user("{}: {} must be a vector of {} entries, got {}", node.describe(), what, n, t.summary());
  }
}

// Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel. In training mode (opset 14) the
// batch's own statistics are used and the running ones are updated with `momentum`.
std::vector<Tensor> batch_norm(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Float>(node, x.dtype());
  ChannelLayout l = channel_layout(node, x);
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) require_length(node, required_input(node, in, i), l.channels, names[i - 1]);
  const Tensor &scale = in[1], &bias = in[2];
  Tensor mean = in[3].clone(), var = in[4].clone();
  const double epsilon = node.attr_float("epsilon", 1e-5), momentum = node.attr_float("momentum", 0.9);
  const bool training = node.attr_int("training_mode", 0) != 0;
  std::vector<double> m(l.channels), v(l.channels);
  for (int64_t c = 0; c < l.channels; ++c) m[c] = mean.get_f64(c), v[c] = var.get_f64(c);
  if (training) {
    std::vector<double> sum(l.channels, 0), sq(l.channels, 0);
    for (int64_t i = 0; i < x.numel(); ++i) sum[l.channel_of(i)] += x.get_f64(i);
    const double count = static_cast<double>(l.batch * l.spatial);
    for (int64_t c = 0; c < l.channels; ++c) sum[c] /= count;
    for (int64_t i = 0; i < x.numel(); ++i) sq[l.channel_of(i)] += std::pow(x.get_f64(i) - sum[l.channel_of(i)], 2);
    for (int64_t c = 0; c < l.channels; ++c) {
      mean.set_f64(c, m[c] * momentum + sum[c] * (1 - momentum));
      var.set_f64(c, v[c] * momentum + sq[c] / count * (1 - momentum));
      m[c] = sum[c], v[c] = sq[c] / count;
    }
  }
  Tensor y(x.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = l.channel_of(i);
    y.set_f64(i, (x.get_f64(i) - m[c]) / std::sqrt(v[c] + epsilon) * scale.get_f64(c) + bias.get_f64(c));
  }
  return {y, mean, var};
}

// Normalises x viewed as [N * groups, size] row by row, then applies the per-channel (or
// per-group) scale and bias. InstanceNormalization is the case groups = C.
Tensor group_normalize(const Node& node, const Tensor& x, int64_t groups, const Tensor& scale, const Tensor& bias) {
  ChannelLayout l = channel_layout(node, x);
  if (groups < 1 || l.channels % groups != 0) {
    fail_user("{}: {} channels do not split into {} groups", node.describe(), l.channels, groups);
  }
  const bool per_group = scale.numel() == groups && groups != l.channels;
  require_length(node, scale, per_group ? groups : l.channels, "scale");
  require_length(node, bias, per_group ? groups : l.channels, "bias");
  const double epsilon = node.attr_float("epsilon", 1e-5);
  const int64_t size = l.channels / groups * l.spatial, rows = l.batch * groups;
  Tensor y(x.dtype(), x.shape());
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t k = 0; k < size; ++k) sum += x.get_f64(r * size + k);
    const double mean = sum / static_cast<double>(size);
    for (int64_t k = 0; k < size; ++k) sq += std::pow(x.get_f64(r * size + k) - mean, 2);
    const double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(size) + epsilon);
    for (int64_t k = 0; k < size; ++k) {
      const int64_t i = r * size + k;
      const int64_t p = per_group ? r % groups : l.channel_of(i);
      y.set_f64(i, (x.get_f64(i) - mean) * inv_std * scale.get_f64(p) + bias.get_f64(p));
    }
  }
  return y;
}

std::vector<Tensor> instance_norm(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Float>(node, x.dtype());
  return {group_normalize(node, x, channel_layout(node, x).channels, required_input(node, in, 1),
                          required_input(node, in, 2))};
}

std::vector<Tensor> group_norm(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  require_type_set<TypeSet::Float>(node, x.dtype());
  return {group_normalize(node, x, node.attr_int("num_groups", 0), required_input(node, in, 1),
                          required_input(node, in, 2))};
}

}  // namespace

void register_normalization_kernels(KernelTable& table) {
  table["BatchNormalization"] = batch_norm;
  table["RMSNormalization"] = rms_norm;
  table["InstanceNormalization"] = instance_norm;
  table["GroupNormalization"] = group_norm;
  table["Softmax"] = softmax_kernel<false>;
  table["LogSoftmax"] = softmax_kernel<true>;
  table["LayerNormalization"] = layer_norm;
}

}  // namespace tilefuse::reference
