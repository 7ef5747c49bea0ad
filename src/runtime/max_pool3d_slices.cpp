#include "runtime/max_pool3d_slices.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "runtime/depth_window.h"
#include "runtime/pool_call.h"
#include "runtime/vector_clones.h"

namespace tilefuse::runtime {

namespace {

// The 2-D MaxPool of one output slice's depth maxima: [1, C, H, W] in.
std::unique_ptr<Graph> slice_graph(const Node& node, DepthWindow& depth) {
  const Value* x = node.input(0);
  AttributeMap attrs;
  depth = split_depth_window(node, node.attr_ints("kernel_shape"), attrs);
  auto g = std::make_unique<Graph>();
  Value* in = g->add_input("maxima", DType::f32, {Dim(1), x->shape[1], x->shape[3], x->shape[4]});
  g->set_outputs({g->add_node("MaxPool", "slice", {in}, {"out"}, attrs)->outputs[0]});
  g->infer_shapes();
  return g;
}

// to[i] = the larger of to[i] and from[i], a NaN in either winning.
TF_VECTOR_CLONES void keep_larger(float* to, const float* from, int64_t n) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    const float a = to[i], b = from[i];
    to[i] = (b > a) | (b != b) ? b : a;
  }
}

class MaxPool3dSlices : public LibraryCall {
 public:
  explicit MaxPool3dSlices(const Node& node) : node_(node), graph_(slice_graph(node, depth_)) {
    pool_ = prepare_pool_call(*graph_->outputs()[0]->producer);
    maxima_ = Tensor(DType::f32, static_dims(graph_->inputs()[0]->shape));
    pooled_ = Tensor(DType::f32, static_dims(graph_->outputs()[0]->shape));
  }

  void run(ThreadTeam& team, const std::vector<Tensor>& in, std::vector<Tensor>& outs) override {
    const Tensor& x = in[0];
    Tensor& y = outs[0];
    if (!y.defined()) return;
    const int64_t channels = x.shape()[1], plane = x.shape()[3] * x.shape()[4], out_plane = y.shape()[3] * y.shape()[4];
    if (x.shape()[2] != depth_.in_depth || maxima_.shape()[1] != channels || maxima_.numel() != channels * plane) {
      fail_user("{}: input {} is not the planned {}", node_.describe(), x.summary(), node_.input(0)->type_string());
    }
    std::vector<Tensor> pool_in = {maxima_}, pool_out = {pooled_};
    for (int64_t n = 0; n < x.shape()[0]; ++n) {
      for (int64_t od = 0; od < depth_.out_depth; ++od) {
        team.run(channels, [&](int, int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) depth_maximum(x, n, c, od, maxima_.data<float>() + c * plane, plane);
        });
        pool_->run(team, pool_in, pool_out);
        team.run(channels, [&](int, int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end; ++c) {
            std::memcpy(y.data<float>() + ((n * channels + c) * depth_.out_depth + od) * out_plane,
                        pooled_.data<float>() + c * out_plane, static_cast<size_t>(out_plane) * sizeof(float));
          }
        });
      }
    }
  }

 private:
  // Channel c's maximum down the slices under output slice od; -inf where all lie in the padding.
  void depth_maximum(const Tensor& x, int64_t n, int64_t c, int64_t od, float* to, int64_t plane) const {
    bool first = true;
    for (int64_t k = 0; k < depth_.kernel; ++k) {
      const int64_t z = depth_.input_slice(od, k);
      if (z < 0) continue;
      const float* from = x.data<float>() + ((n * x.shape()[1] + c) * depth_.in_depth + z) * plane;
      if (first) std::memcpy(to, from, static_cast<size_t>(plane) * sizeof(float));
      else keep_larger(to, from, plane);
      first = false;
    }
    if (first) std::fill(to, to + plane, -std::numeric_limits<float>::infinity());
  }

  const Node& node_;
  DepthWindow depth_{};
  std::unique_ptr<Graph> graph_;  // the slice's 2-D MaxPool, which pool_ refers to
  std::unique_ptr<LibraryCall> pool_;
  Tensor maxima_, pooled_;
};

}  // namespace

bool max_pool3d_slices_supports(const Node& node) {
  if (node.op != "MaxPool" || node.outputs.size() != 1 || node.input(0) == nullptr) return false;
  const Value* x = node.input(0);
  if (x->rank() != 5 || x->dtype != DType::f32 || node.attr_ints("kernel_shape").size() != 3) return false;
  if (node.attr_string("auto_pad", "NOTSET") != "NOTSET" || node.attr_int("storage_order", 0) != 0) return false;
  for (size_t d = 1; d < 5; ++d) {
    if (!x->shape[d].is_const() || !node.outputs[0]->shape[d].is_const()) return false;
  }
  return true;
}

std::unique_ptr<LibraryCall> prepare_max_pool3d_slices(const Node& node) {
  return std::make_unique<MaxPool3dSlices>(node);
}

}  // namespace tilefuse::runtime
