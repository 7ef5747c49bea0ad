#include "runtime/conv_gemm.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "ir/ops/window_geometry.h"
#include "ir/shape.h"
#include "runtime/blas_on_team.h"
#include "runtime/conv_maps_in_lanes.h"
#include "runtime/conv_transposed_gemm.h"
#include "runtime/conv_unfold.h"
#include "runtime/conv_winograd.h"
#include "runtime/depthwise_conv.h"
#include "runtime/scratch_buffer.h"
#include "runtime/epilogue.h"

namespace tilefuse::runtime {

ConvShape conv_shape(const Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                     const std::vector<int64_t>& out) {
  const bool one_d = x.size() == 3;
  auto spatial = [](const std::vector<int64_t>& s) { return std::vector<int64_t>(s.begin() + 2, s.end()); };
  std::vector<int64_t> in_sp = spatial(x), out_sp = spatial(out);
  WindowGeometry g = window_geometry(node, in_sp.size(), spatial(w));
  std::vector<int64_t> pads = begin_pads(g, in_sp, out_sp);
  ConvShape s{};
  s.batch = x[0], s.channels = x[1], s.maps = w[0], s.groups = node.attr_int("group", 1);
  auto at = [one_d](const std::vector<int64_t>& v, int d, int64_t fallback) { return one_d ? (d == 0 ? fallback : v[0]) : v[d]; };
  s.height = at(in_sp, 0, 1), s.width = at(in_sp, 1, 1);
  s.kh = at(g.kernel, 0, 1), s.kw = at(g.kernel, 1, 1);
  s.out_h = at(out_sp, 0, 1), s.out_w = at(out_sp, 1, 1);
  s.stride_h = at(g.strides, 0, 1), s.stride_w = at(g.strides, 1, 1);
  s.dil_h = at(g.dilations, 0, 1), s.dil_w = at(g.dilations, 1, 1);
  s.pad_top = at(pads, 0, 0), s.pad_left = at(pads, 1, 0);
  return s;
}

namespace {

// The weight of each group, packed once as the A operand of its GEMM: group g's maps are rows
// of C/group * kernel values. In bf16 pairs where products run in bf16.
std::vector<PackedOperand> pack_weights(const Tensor& w, int64_t groups, Precision precision) {
  const int64_t maps = w.shape()[0] / groups, rows = w.numel() / w.shape()[0];
  std::vector<PackedOperand> packed;
  for (int64_t g = 0; g < groups; ++g) {
    const MatrixView view{w.data<float>() + g * maps * rows, rows, 1};
    packed.push_back(precision == Precision::bf16 ? PackedOperand::pack_a_bf16(view, maps, rows)
                                                  : PackedOperand::pack_a(view, maps, rows));
  }
  return packed;
}

class ConvCall : public LibraryCall {
 public:
  ConvCall(const Node& node, const GemmBlocking& blocking, Precision precision)
      : node_(node), blocking_(blocking), activation_(fused_activation(node)) {
    precision = effective_precision(precision);
    bf16_ = precision == Precision::bf16;
    const Value* w = node.input(1);
    const int64_t groups = node.attr_int("group", 1);
    // A depthwise weight ([C, 1, kernel] with C groups) is read directly, never packed.
    const bool direct = w->constant.has_value() && groups == w->constant->shape()[0] && w->constant->shape()[1] == 1;
    if (winograd_suits(node)) {
      algorithm_ = std::make_unique<WinogradConv>(*w->constant, precision);
    } else if (transposed_gemm_suits(node)) {
      algorithm_ = std::make_unique<TransposedConvGemm>(*w->constant, precision);
    } else if (own_gemm_engine() && w->constant.has_value() && !direct) {
      packed_ = pack_weights(*w->constant, groups, precision);
    }
    direct_ = direct;
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    Tensor& out = outs[0];
    const Tensor& x = in[0];
    const Tensor& w = in[1];
    const float* bias = in.size() > 2 && in[2].defined() ? in[2].data<float>() : nullptr;
    const float* residual = in.size() > 3 && in[3].defined() ? in[3].data<float>() : nullptr;  // FusedConv's Z
    const ConvShape s = conv_shape(node_, x.shape(), w.shape(), out.shape());
    if (s.groups == s.channels && s.maps == s.channels) {
      // The activation alone is applied by the kernel. With a residual, 16 planes at a time
      // (the planes depthwise_conv computes together across channels) get the whole epilogue.
      team.run(s.batch * s.channels, [&](int, int64_t first, int64_t end) {
        if (residual == nullptr) {
          return depthwise_conv(s, x.data<float>(), w.data<float>(), bias, out.data<float>(), first, end, activation_);
        }
        for (int64_t plane = first; plane < end; plane += 16) {
          const int64_t last = std::min(end, plane + 16);
          depthwise_conv(s, x.data<float>(), w.data<float>(), bias, out.data<float>(), plane, last);
          epilogue(out.data<float>(), residual, plane * s.positions(), (last - plane) * s.positions());
        }
      });
      return;
    }
    if (algorithm_) return algorithm_->run(team, s, x.data<float>(), bias, residual, activation_, out.data<float>(), blocking_);
    if (maps_in_lanes(s)) {
      // Constant weights and bias are laid out on the first run only.
      const bool constant = node_.input(1)->constant && (!node_.has_input(2) || node_.input(2)->constant);
      float* weights = lanes_weights_.floats(static_cast<size_t>(maps_in_lanes_weight_floats(s)));
      if (!lanes_laid_out_ || !constant) lay_out_maps_in_lanes_weights(s, w.data<float>(), bias, weights);
      lanes_laid_out_ = true;
      team.run(conv_maps_in_lanes_items(s), [&](int, int64_t first, int64_t end) {
        conv_maps_in_lanes(s, x.data<float>(), weights, residual, activation_, out.data<float>(), first, end);
      });
      return;
    }
    if (!own_gemm_engine()) return run_openblas(team, s, x, w, bias, residual, out);
    const int64_t in_image = s.channels * s.height * s.width, out_image = s.maps * s.positions();
    problems_.clear();
    packers_.clear();
    packers_.reserve(static_cast<size_t>(s.batch * s.groups));  // problems point into it
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t g = 0; g < s.groups; ++g) {
        const float* xg = x.data<float>() + n * in_image + g * s.group_channels() * s.height * s.width;
        GemmProblem p;
        p.m = s.group_maps(), p.n = s.positions(), p.k = s.rows();
        p.a.view = {w.data<float>() + g * s.group_maps() * s.rows(), s.rows(), 1};
        if (!packed_.empty()) p.a.packed = &packed_[g];
        // A 1x1 convolution multiplies the input itself; any other is unfolded while packed.
        p.b.view = {xg, s.positions(), 1};
        if (!s.pointwise()) {
          p.b.pack = &packers_.emplace_back([s, xg](int64_t k0, int64_t kc, int64_t col0, int64_t cols, float* dst) {
            pack_unfolded(s, xg, k0, kc, col0, cols, dst);
          });
        }
        p.c = out.data<float>() + n * out_image + g * s.group_maps() * s.positions(), p.ldc = s.positions();
        if (bias != nullptr) p.row_bias = bias + g * s.group_maps();
        if (residual != nullptr) p.residual = residual + (p.c - out.data<float>());
        if (!activation_.identity()) p.activation = &activation_;
        problems_.push_back(p);
      }
    }
    sgemm(team, problems_, blocking_);
  }

  size_t packed_bytes() const override { return total_bytes(packed()); }
  std::vector<const PackedOperand*> packed_operands() const override { return operands_of(packed()); }

  // Only a convolution of known shapes that runs as a GEMM: depthwise convolutions and stems
  // (maps in lanes) do not use the blocking.
  bool tunes_blocking() const override {
    std::vector<std::vector<int64_t>> shapes;
    for (const Value* v : {node_.input(0), node_.input(1), node_.outputs[0]}) {
      if (!is_static(v->shape)) return false;
      shapes.push_back(static_dims(v->shape));
    }
    return own_gemm_engine() && !direct_ && !algorithm_ && !maps_in_lanes(conv_shape(node_, shapes[0], shapes[1], shapes[2]));
  }
  void set_blocking(const GemmBlocking& blocking) override { blocking_ = blocking; }
  GemmBlocking blocking() const override { return blocking_; }

 private:
  // Maps in lanes multiplies in f32: in bf16 a grouped convolution keeps the GEMM's bf16 products
  // (a stem, 3 channels deep, has no products worth converting).
  bool maps_in_lanes(const ConvShape& s) const { return conv_maps_in_lanes_suits(s) && (s.groups == 1 || !bf16_); }

  // Without AVX2 (vector_isa() is scalar): per image and group, the input unfolded whole (its
  // channels spread over the team), then one OpenBLAS product spread over the team too; then
  // FusedConv's epilogue over the output.
  void run_openblas(ThreadTeam& team, const ConvShape& s, const Tensor& x, const Tensor& w, const float* bias,
                    const float* residual, Tensor& out) {
    if (!s.pointwise()) cols_.resize(static_cast<size_t>(s.rows() * s.positions()));
    const int64_t in_image = s.channels * s.height * s.width, out_image = s.maps * s.positions();
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t g = 0; g < s.groups; ++g) {
        const float* xg = x.data<float>() + n * in_image + g * s.group_channels() * s.height * s.width;
        float* og = out.data<float>() + n * out_image + g * s.group_maps() * s.positions();
        if (!s.pointwise()) unfold_on_team(team, s, xg);
        if (bias != nullptr) {
          for (int64_t m = 0; m < s.group_maps(); ++m) {
            std::fill(og + m * s.positions(), og + (m + 1) * s.positions(), bias[g * s.group_maps() + m]);
          }
        }
        BlasGemm gemm;
        gemm.m = s.group_maps(), gemm.n = s.positions(), gemm.k = s.rows();
        gemm.a = w.data<float>() + g * s.group_maps() * s.rows(), gemm.lda = s.rows();
        gemm.b = s.pointwise() ? xg : cols_.data(), gemm.ldb = s.positions();
        gemm.beta = bias != nullptr ? 1.0f : 0.0f, gemm.c = og, gemm.ldc = s.positions();
        blas_sgemm_on_team(team, {gemm});
      }
    }
    if (!has_epilogue(residual)) return;
    team.run(s.batch * s.maps, [&](int, int64_t first, int64_t end) {
      epilogue(out.data<float>(), residual, first * s.positions(), (end - first) * s.positions());
    });
  }

  // The weights as packed for the way this convolution is computed.
  const std::vector<PackedOperand>& packed() const {
    return algorithm_ ? algorithm_->packed() : packed_;
  }

  // True for a FusedConv with a residual or an activation to apply.
  bool has_epilogue(const float* residual) const { return residual != nullptr || !activation_.identity(); }

  // FusedConv's residual and activation over outputs [first, first + count), where the kernel
  // that wrote them did not apply them.
  void epilogue(float* out, const float* residual, int64_t first, int64_t count) const {
    apply_epilogue(out + first, residual != nullptr ? residual + first : nullptr, count, activation_);
  }

  // cols_ = the unfolded input of one image and group: channel c's kernel-size rows come from
  // its plane alone, so the channels are unfolded by the workers independently.
  void unfold_on_team(ThreadTeam& team, const ConvShape& s, const float* xg) {
    team.run(s.group_channels(), [&](int, int64_t first, int64_t end) {
      ConvShape part = s;
      part.channels = end - first, part.groups = 1;
      unfold(part, xg + first * s.height * s.width, cols_.data() + first * s.kh * s.kw * s.positions());
    });
  }

  const Node& node_;
  GemmBlocking blocking_;
  FusedActivation activation_;  // FusedConv's; the identity for a Conv
  bool direct_ = false;          // a depthwise convolution, computed without the GEMM engine
  bool bf16_ = false;            // products in bf16 (the effective precision)
  std::unique_ptr<ConvAlgorithm> algorithm_;  // Winograd, or positions as rows; null: implicit GEMM
  std::vector<PackedOperand> packed_;
  std::vector<float> cols_;            // the OpenBLAS path's unfolded input, reused across runs
  ScratchBuffer lanes_weights_;        // maps in lanes: the weights and bias as it reads them
  bool lanes_laid_out_ = false;
  std::vector<PackB> packers_;         // per image and group
  std::vector<GemmProblem> problems_;  // reused across runs
};

}  // namespace

bool conv_gemm_supports(const Node& node) {
  if ((node.op != "Conv" && node.op != "FusedConv") || node.outputs[0]->dtype != DType::f32) return false;
  for (const Value* v : node.inputs) {
    if (v != nullptr && v->dtype != DType::f32) return false;
  }
  const int64_t rank = node.input(0)->rank();
  return rank == 3 || rank == 4;
}

std::unique_ptr<LibraryCall> prepare_conv_call(const Node& node, const GemmBlocking& blocking, Precision precision) {
  return std::make_unique<ConvCall>(node, blocking, precision);
}

}  // namespace tilefuse::runtime
