#include "runtime/conv3d_slices.h"

#include <cstring>

#include "ir/error.h"
#include "runtime/conv_gemm.h"
#include "runtime/conv_transpose_call.h"
#include "runtime/depth_window.h"

namespace tilefuse::runtime {

namespace {

// The weight of the 2-D step: a Conv's [M, C/g, kd, kh, kw] is [M, C/g * kd, kh, kw] as it is (input
// channel c's slice k at c * kd + k); a ConvTranspose's [C, M/g, kd, kh, kw] moves its depth taps
// next to the input channels, [C * kd, M/g, kh, kw].
Tensor slice_weight(const Node& node, const Tensor& w) {
  const std::vector<int64_t>& d = w.shape();
  if (node.op != "ConvTranspose") return w.reshaped({d[0], d[1] * d[2], d[3], d[4]});
  Tensor out(DType::f32, {d[0] * d[2], d[1], d[3], d[4]});
  const int64_t taps = d[3] * d[4];
  for (int64_t c = 0; c < d[0]; ++c) {
    for (int64_t m = 0; m < d[1]; ++m) {
      for (int64_t k = 0; k < d[2]; ++k) {
        std::memcpy(out.data<float>() + ((c * d[2] + k) * d[1] + m) * taps, w.data<float>() + ((c * d[1] + m) * d[2] + k) * taps,
                    static_cast<size_t>(taps) * sizeof(float));
      }
    }
  }
  return out;
}

// The 2-D step one output slice is: input [1, C * kd, H, W], the weight above.
std::unique_ptr<Graph> slice_graph(const Node& node, DepthWindow& depth) {
  const Value* x = node.input(0);
  const Tensor& w = *node.input(1)->constant;
  AttributeMap attrs;
  depth = split_depth_window(node, {w.shape()[2], w.shape()[3], w.shape()[4]}, attrs);
  const int64_t channels = x->shape[1].value(), kd = w.shape()[2];
  auto g = std::make_unique<Graph>();
  Value* x2 = g->add_input("slices", DType::f32, {Dim(1), Dim(channels * kd), x->shape[3], x->shape[4]});
  std::vector<Value*> inputs = {x2, g->add_constant("weight", slice_weight(node, w))};
  inputs.push_back(node.input(2) != nullptr ? g->add_constant("bias", *node.input(2)->constant) : nullptr);
  if (node.input(3) != nullptr) {  // a FusedConv's residual: the output slice's planes of it
    const Shape& y = node.outputs[0]->shape;
    inputs.push_back(g->add_input("residual", DType::f32, {Dim(1), y[1], y[3], y[4]}));
  }
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  g->set_outputs({g->add_node(node.op, "slice", inputs, {"out"}, attrs)->outputs[0]});
  g->infer_shapes();
  return g;
}

class Conv3dSlices : public LibraryCall {
 public:
  Conv3dSlices(const Node& node, const GemmBlocking& blocking) : node_(node), graph_(slice_graph(node, depth_)) {
    const Node& conv = *graph_->outputs()[0]->producer;
    conv_ = conv.op == "ConvTranspose" ? prepare_conv_transpose_call(conv, blocking) : prepare_conv_call(conv, blocking);
    for (const Value* v : conv.inputs) slice_inputs_.push_back(v != nullptr && v->constant ? *v->constant : Tensor());
    const std::vector<int64_t> in = static_dims(graph_->inputs()[0]->shape), out = static_dims(graph_->outputs()[0]->shape);
    slices_ = Tensor(DType::f32, in);
    slice_out_ = Tensor(DType::f32, out);
    if (conv.inputs.size() > 3) residual_ = Tensor(DType::f32, out);
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    Tensor& y = outs[0];
    if (!y.defined()) return;
    const int64_t channels = x.shape()[1], plane = x.shape()[3] * x.shape()[4];
    const int64_t maps = y.shape()[1], out_plane = y.shape()[3] * y.shape()[4];
    if (x.shape()[2] != depth_.in_depth || slices_.shape()[1] != channels * depth_.kernel || slices_.shape()[2] * slices_.shape()[3] != plane) {
      fail_user("{}: input {} is not the planned {}", node_.describe(), x.summary(), node_.input(0)->type_string());
    }
    slice_inputs_[0] = slices_;
    const bool residual = in.size() > 3 && in[3].defined();
    if (residual) slice_inputs_[3] = residual_;
    std::vector<Tensor> slice_outs = {slice_out_};
    const size_t plane_bytes = static_cast<size_t>(plane) * sizeof(float);
    const size_t out_bytes = static_cast<size_t>(out_plane) * sizeof(float);
    for (int64_t n = 0; n < x.shape()[0]; ++n) {
      for (int64_t od = 0; od < depth_.out_depth; ++od) {
        // Channel c's slice under tap k lands at channel c * kd + k, as the weight reads it.
        team.run(channels * depth_.kernel, [&](int, int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t c = i / depth_.kernel, z = depth_.input_slice(od, i % depth_.kernel);
            float* to = slices_.data<float>() + i * plane;
            if (z < 0) std::memset(to, 0, plane_bytes);
            else std::memcpy(to, x.data<float>() + ((n * channels + c) * depth_.in_depth + z) * plane, plane_bytes);
          }
        });
        if (residual) {  // the slice's planes of a FusedConv's residual
          team.run(maps, [&](int, int64_t begin, int64_t end) {
            for (int64_t m = begin; m < end; ++m) {
              std::memcpy(residual_.data<float>() + m * out_plane,
                          in[3].data<float>() + volume_plane(maps, out_plane, n, m, od), out_bytes);
            }
          });
        }
        conv_->run(team, slice_inputs_, slice_outs);
        team.run(maps, [&](int, int64_t begin, int64_t end) {
          for (int64_t m = begin; m < end; ++m) {
            std::memcpy(y.data<float>() + volume_plane(maps, out_plane, n, m, od), slice_out_.data<float>() + m * out_plane,
                        out_bytes);
          }
        });
      }
    }
  }

 private:
  // Where plane m of output slice od of image n starts in a [N, M, D, H, W] tensor.
  int64_t volume_plane(int64_t maps, int64_t plane, int64_t n, int64_t m, int64_t od) const {
    return ((n * maps + m) * depth_.out_depth + od) * plane;
  }

  const Node& node_;
  DepthWindow depth_{};
  std::unique_ptr<Graph> graph_;  // the slice's 2-D convolution, which conv_ refers to
  std::unique_ptr<LibraryCall> conv_;
  std::vector<Tensor> slice_inputs_;
  Tensor slices_, slice_out_, residual_;
};

}  // namespace

bool conv3d_slices_supports(const Node& node) {
  if (node.op != "Conv" && node.op != "FusedConv" && (node.op != "ConvTranspose" || !own_gemm_engine())) return false;
  if (node.inputs.size() > 4 || node.input(0) == nullptr || node.input(1) == nullptr) return false;
  if (node.input(3) != nullptr && (node.op != "FusedConv" || node.input(3)->dtype != DType::f32)) return false;
  const Value* x = node.input(0);
  const Value* w = node.input(1);
  if (x->rank() != 5 || x->dtype != DType::f32 || w->dtype != DType::f32 || !w->constant) return false;
  if (node.input(2) != nullptr && (!node.input(2)->constant || node.input(2)->dtype != DType::f32)) return false;
  if (node.attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
  for (size_t d = 1; d < 5; ++d) {
    if (!x->shape[d].is_const() || !node.outputs[0]->shape[d].is_const()) return false;
  }
  return true;
}

std::unique_ptr<LibraryCall> prepare_conv3d_slices(const Node& node, const GemmBlocking& blocking) {
  return std::make_unique<Conv3dSlices>(node, blocking);
}

}  // namespace tilefuse::runtime
