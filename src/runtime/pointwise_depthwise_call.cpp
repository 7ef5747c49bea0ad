#include "runtime/pointwise_depthwise_call.h"

#include <algorithm>
#include <cstring>

#include "ir/ops/fused_activation.h"
#include "reference/openblas.h"
#include "runtime/conv_gemm.h"
#include "runtime/cpu_isa.h"
#include "runtime/depthwise_across_channels.h"
#include "runtime/depthwise_conv.h"
#include "runtime/epilogue.h"
#include "runtime/scratch_buffer.h"

namespace tilefuse::runtime {

namespace {

thread_local ScratchBuffer t_expanded, t_band_out;

constexpr int64_t kPartChannels = 64;  // channels-last: the most channels of one work item

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// The window's extent in rows.
int64_t window_rows(const ConvShape& s) { return (s.kh - 1) * s.dil_h + 1; }

// Output rows per band, so that a band's expanded rows take about kBandBytes at `row_bytes` a
// row, and at least `wanted` bands where the image has the rows.
int64_t band_rows(const ConvShape& s, int64_t row_bytes, int64_t wanted) {
  const int64_t in_rows = std::max<int64_t>(1, kBandBytes / row_bytes);
  const int64_t fitting = std::clamp<int64_t>((in_rows - window_rows(s)) / s.stride_h + 1, 1, s.out_h);
  return std::max<int64_t>(1, std::min(fitting, ceil_div(s.out_h, wanted)));
}

// Channels [first, first + count) of the expansion.
struct ChannelPart {
  int64_t first, count;
};

// Expanded rows [lo, hi) that output rows [r0, r1) read, clipped to the image; `pad_top` is then
// where the band's row 0 lies below the window's first row, the band's own padding.
struct Band {
  int64_t r0, r1, lo, hi, pad_top;
};

Band band_at(const ConvShape& s, int64_t r0, int64_t r1) {
  const int64_t first = r0 * s.stride_h - s.pad_top;
  const int64_t last = (r1 - 1) * s.stride_h - s.pad_top + window_rows(s) - 1;  // inclusive
  // A band that reads only padding still gets one row, so its shape stays a valid image.
  const int64_t lo = std::clamp<int64_t>(first, 0, s.height - 1);
  const int64_t hi = std::max(lo + 1, std::min(s.height, last + 1));
  return {r0, r1, lo, hi, lo - first};
}

struct Operands {
  const float *x, *w1, *b1, *w2, *b2;
  float* out;
  int64_t channels;  // of x (the expansion's depth)
};

const float* optional(const std::vector<Tensor>& in, size_t i) {
  return i < in.size() && in[i].defined() ? in[i].data<float>() : nullptr;
}

class PointwiseDepthwiseCall : public LibraryCall {
 public:
  PointwiseDepthwiseCall(const Node& node, const GemmBlocking& blocking, Precision precision)
      : node_(node),
        blocking_(blocking),
        pointwise_activation_(fused_activation(node, "pointwise_")),
        depthwise_activation_(fused_activation(node)),
        channels_last_(vector_isa() == VectorIsa::avx512) {
    const Tensor& w = *node.input(1)->constant;
    const int64_t expanded = w.shape()[0], channels = w.shape()[1];
    const bool bf16 = effective_precision(precision) == Precision::bf16;
    if (channels_last_) {
      // Each part's weight transposed, [channels x part], as the B operand: the product's rows
      // are positions and its columns channels, the layout the depthwise kernel reads.
      const int64_t parts = ceil_div(expanded, kPartChannels);
      const int64_t width = round_up(ceil_div(expanded, parts), 16);
      for (int64_t first = 0; first < expanded; first += width) {
        const ChannelPart part{first, std::min(width, expanded - first)};
        parts_.push_back(part);
        const MatrixView weight{w.data<float>() + first * channels, 1, channels};
        packed_.push_back(bf16 ? PackedOperand::pack_b_bf16(weight, channels, part.count)
                               : PackedOperand::pack_b(weight, channels, part.count));
      }
    } else if (own_gemm_engine()) {
      const MatrixView weight{w.data<float>(), channels, 1};
      packed_.push_back(bf16 ? PackedOperand::pack_a_bf16(weight, expanded, channels)
                             : PackedOperand::pack_a(weight, expanded, channels));
    }
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    const std::vector<int64_t> expanded_dims = {x.shape()[0], in[1].shape()[0], x.shape()[2], x.shape()[3]};
    const ConvShape s = conv_shape(node_, expanded_dims, in[2].shape(), outs[0].shape());
    const Operands ops{x.data<float>(), in[1].data<float>(), optional(in, 3), in[2].data<float>(), optional(in, 4),
                       outs[0].data<float>(), x.shape()[1]};
    if (channels_last_) return run_channels_last(team, s, ops);
    run_planes(team, s, ops);
  }

  size_t packed_bytes() const override { return total_bytes(packed_); }
  std::vector<const PackedOperand*> packed_operands() const override { return operands_of(packed_); }

 private:
  // ---- AVX-512: the expansion channels-last, read by depthwise_channels_last ----

  // Work items (image, channel part, band), with bands of about kBandBytes of one part's rows.
  // A worker's consecutive items are consecutive bands of one image and part, which share the
  // input rows between them (the window's rows past the stride: 1 of a 3x3 window's at stride
  // 2, 2 at stride 1): those are moved up in the block, not expanded again.
  void run_channels_last(ThreadTeam& team, const ConvShape& s, const Operands& ops) {
    const int64_t columns = channels_last_columns(s), parts = static_cast<int64_t>(parts_.size());
    const int64_t row_floats = columns * round_up(parts_[0].count, 16);  // the widest part's
    const int64_t rows = band_rows(s, row_floats * static_cast<int64_t>(sizeof(float)),
                                   ceil_div(2 * team.size(), s.batch * parts));
    const int64_t bands = ceil_div(s.out_h, rows);
    const int64_t block_floats = ((rows - 1) * s.stride_h + window_rows(s)) * row_floats;
    team.run(s.batch * parts * bands, [&](int, int64_t first, int64_t end) {
      float* block = t_expanded.floats(static_cast<size_t>(block_floats));
      HeldRows held;
      for (int64_t item = first; item < end; ++item) {
        const int64_t band = item % bands, part = item / bands % parts, image = item / bands / parts;
        const int64_t r0 = band * rows;
        held = channels_last_item(s, ops, image, part, r0, std::min(s.out_h, r0 + rows), columns, block, held);
      }
    });
  }

  // The input rows a worker's block holds, expanded: `count` rows from input row `first` (the
  // padding's rows above and below the image are rows of zeros) of one image and part.
  struct HeldRows {
    int64_t image = -1, part = -1, first = 0, count = 0;
    // How many rows from input row `from` of that image and part are held.
    int64_t from(int64_t other_image, int64_t other_part, int64_t row) const {
      if (other_image != image || other_part != part || row < first) return 0;
      return std::max<int64_t>(0, first + count - row);
    }
  };

  // Output rows [r0, r1) of one part's channels: each input row under their window expanded
  // into a padded channels-last block (rows the block already holds, per `held`, are moved to
  // its top instead), then the depthwise convolution of 16 channels at a time. Returns the rows
  // the block now holds.
  HeldRows channels_last_item(const ConvShape& s, const Operands& ops, int64_t image, int64_t part_index, int64_t r0,
                              int64_t r1, int64_t columns, float* block, const HeldRows& held) const {
    const ChannelPart& part = parts_[static_cast<size_t>(part_index)];
    const int64_t step = round_up(part.count, 16), row_floats = columns * step;
    const int64_t first_row = r0 * s.stride_h - s.pad_top, rows = (r1 - r0 - 1) * s.stride_h + window_rows(s);
    const int64_t kept = std::min(rows, held.from(image, part_index, first_row));
    if (kept > 0) {
      std::memmove(block, block + (first_row - held.first) * row_floats,
                   static_cast<size_t>(kept * row_floats) * sizeof(float));
    }
    const float* x = ops.x + image * ops.channels * s.height * s.width;
    for (int64_t r = kept; r < rows; ++r) {
      const int64_t y = first_row + r;
      float* row = block + r * row_floats;
      if (y < 0 || y >= s.height) {
        std::memset(row, 0, static_cast<size_t>(row_floats) * sizeof(float));
        continue;
      }
      std::memset(row, 0, static_cast<size_t>(s.pad_left * step) * sizeof(float));
      const int64_t right = s.pad_left + s.width;
      std::memset(row + right * step, 0, static_cast<size_t>((columns - right) * step) * sizeof(float));
      expand_row(s, ops, x + y * s.width, part_index, row + s.pad_left * step, step);
    }
    for (int64_t c = 0; c < part.count; c += 16) {
      const int64_t channel = part.first + c;
      const ChannelsLastBand band{block + c, columns, step, r0, r1 - r0};
      depthwise_channels_last(s, band, ops.w2, ops.b2, channel, static_cast<int>(std::min<int64_t>(16, part.count - c)),
                              depthwise_activation_, ops.out + (image * s.channels + channel) * s.positions());
    }
    return {image, part_index, first_row, rows};
  }

  // to[column * step + e] for one input row (x_row: its first channel) and the part's channels
  // e: the product of the row's positions (as rows, C channels deep) with the part's weight.
  void expand_row(const ConvShape& s, const Operands& ops, const float* x_row, int64_t part_index, float* to,
                  int64_t step) const {
    const ChannelPart& part = parts_[static_cast<size_t>(part_index)];
    GemmProblem p;
    p.m = s.width, p.n = part.count, p.k = ops.channels;
    p.a.view = {x_row, 1, s.height * s.width};
    p.b.packed = &packed_[static_cast<size_t>(part_index)];
    p.c = to, p.ldc = step;
    if (ops.b1 != nullptr) p.col_bias = ops.b1 + part.first;
    if (!pointwise_activation_.identity()) p.activation = &pointwise_activation_;
    sgemm_rows(p, 0, p.m, blocking_);
  }

  // ---- otherwise: the expansion in planes, read by depthwise_conv ----

  // Work items (image, band, channel part): channel parts only where the images and bands give
  // fewer than two items per worker.
  void run_planes(ThreadTeam& team, const ConvShape& s, const Operands& ops) const {
    const int64_t row_bytes = s.channels * s.width * static_cast<int64_t>(sizeof(float));
    const int64_t rows = band_rows(s, row_bytes, 1);
    const int64_t bands = ceil_div(s.out_h, rows);
    const int64_t parts_wanted = ceil_div(2 * team.size(), s.batch * bands);
    const int64_t part_channels = round_up(ceil_div(s.channels, parts_wanted), kMR);
    const int64_t parts = ceil_div(s.channels, part_channels);
    team.run(s.batch * bands * parts, [&](int, int64_t first, int64_t end) {
      for (int64_t item = first; item < end; ++item) {
        const int64_t part = item % parts, band = item / parts % bands, image = item / parts / bands;
        const int64_t r0 = band * rows, e0 = part * part_channels;
        planes_item(s, ops, image, band_at(s, r0, std::min(s.out_h, r0 + rows)), e0,
                    std::min(s.channels, e0 + part_channels));
      }
    });
  }

  // Channels [e0, e1) of output rows [b.r0, b.r1) of one image: the band's expanded rows as
  // planes of hi - lo rows, convolved as an image of that height.
  void planes_item(const ConvShape& s, const Operands& ops, int64_t image, const Band& b, int64_t e0, int64_t e1) const {
    const int64_t band_positions = (b.hi - b.lo) * s.width;
    float* expanded = t_expanded.floats(static_cast<size_t>(s.channels * band_positions));
    expand_planes(s, ops, image, b, e0, e1, expanded);
    ConvShape local = s;
    local.batch = 1, local.height = b.hi - b.lo, local.out_h = b.r1 - b.r0, local.pad_top = b.pad_top;
    float* band_out = t_band_out.floats(static_cast<size_t>(s.channels * local.positions()));
    depthwise_conv(local, expanded, ops.w2, ops.b2, band_out, e0, e1, depthwise_activation_);
    for (int64_t e = e0; e < e1; ++e) {
      float* to = ops.out + ((image * s.channels + e) * s.out_h + b.r0) * s.out_w;
      std::memcpy(to, band_out + e * local.positions(), static_cast<size_t>(local.positions()) * sizeof(float));
    }
  }

  // expanded[e][p] for channels [e0, e1) and the band's positions p: the 1x1 convolution of
  // the input's rows [b.lo, b.hi), with its bias and activation.
  void expand_planes(const ConvShape& s, const Operands& ops, int64_t image, const Band& b, int64_t e0, int64_t e1,
                     float* expanded) const {
    const int64_t plane = s.height * s.width, band_positions = (b.hi - b.lo) * s.width;
    const float* x = ops.x + image * ops.channels * plane + b.lo * s.width;
    if (packed_.empty()) return expand_with_openblas(ops, x, plane, band_positions, e0, e1, expanded);
    GemmProblem p;
    p.m = s.channels, p.n = band_positions, p.k = ops.channels;
    p.a.view = {ops.w1, ops.channels, 1};
    p.a.packed = &packed_[0];
    p.b.view = {x, plane, 1};
    p.c = expanded, p.ldc = band_positions;
    p.row_bias = ops.b1;
    if (!pointwise_activation_.identity()) p.activation = &pointwise_activation_;
    sgemm_rows(p, e0, e1 - e0, blocking_);
  }

  // Without tilefuse's GEMM engine: OpenBLAS on this worker alone (blas_on_team.h keeps its own
  // threads off), then the bias and activation.
  void expand_with_openblas(const Operands& ops, const float* x, int64_t plane, int64_t positions, int64_t e0,
                            int64_t e1, float* expanded) const {
    reference::openblas::use_one_thread();
    reference::openblas::sgemm(CblasNoTrans, CblasNoTrans, e1 - e0, positions, ops.channels, 1.0f,
                               ops.w1 + e0 * ops.channels, ops.channels, x, plane, 0.0f, expanded + e0 * positions,
                               positions);
    for (int64_t e = e0; e < e1; ++e) {
      float* row = expanded + e * positions;
      if (ops.b1 != nullptr) std::for_each(row, row + positions, [&](float& v) { v += ops.b1[e]; });
      if (!pointwise_activation_.identity()) apply_epilogue(row, nullptr, positions, pointwise_activation_);
    }
  }

  const Node& node_;
  GemmBlocking blocking_;
  FusedActivation pointwise_activation_, depthwise_activation_;
  bool channels_last_;                 // AVX-512: the expansion is computed channels-last
  std::vector<ChannelPart> parts_;     // channels-last: the channel parts, one packed weight each
  std::vector<PackedOperand> packed_;  // the 1x1 weight: per part as B (channels-last) or whole as A
};

}  // namespace

bool pointwise_depthwise_supported(const Node& node) {
  if (node.op != "PointwiseDepthwiseConv" || node.input(0)->rank() != 4) return false;
  for (size_t i : {1, 2}) {
    if (!node.input(i)->constant) return false;
  }
  for (const Value* v : node.inputs) {
    if (v != nullptr && v->dtype != DType::f32) return false;
  }
  return true;
}

std::unique_ptr<LibraryCall> prepare_pointwise_depthwise_call(const Node& node, const GemmBlocking& blocking,
                                                              Precision precision) {
  return std::make_unique<PointwiseDepthwiseCall>(node, blocking, precision);
}

}  // namespace tilefuse::runtime
