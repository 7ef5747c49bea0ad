// Sliding-window ops: Conv, ConvTranspose, MaxPool, AveragePool and the global pools, over any
// number of spatial dims (1-D and 2-D are what models export; the ONNX tests also have 3-D).
// The window geometry (kernel, strides, dilations, pads, auto_pad) is shared with the reference
// kernels through window_geometry.h. FusedConv is ours: a Conv with its residual add and
// activation folded in (passes/conv_epilogue_folding.h); so is PointwiseDepthwiseConv, a 1x1
// convolution and the depthwise convolution that reads it, computed together
// (passes/pointwise_depthwise_folding.h).
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/fused_activation.h"
#include "ir/ops/infer_util.h"
#include "ir/ops/window_geometry.h"

namespace tilefuse {
namespace {

using namespace ops;

const std::vector<AttrSpec> kWindowAttrs = {{"auto_pad", AttrKind::String}, {"dilations", AttrKind::Ints},
                                            {"kernel_shape", AttrKind::Ints}, {"pads", AttrKind::Ints},
                                            {"strides", AttrKind::Ints}};

std::vector<AttrSpec> with(std::vector<AttrSpec> attrs) {
  attrs.insert(attrs.begin(), kWindowAttrs.begin(), kWindowAttrs.end());
  return attrs;
}

// Input 0 is [N, C, spatial...] with at least one spatial dim.
size_t spatial_rank(const Node& node) {
  const Value* x = node.input(0);
  if (x->rank() < 3) {
    fail_user("{}: {} must be [N, C, spatial...] with at least one spatial dim, got {}", node.describe(),
              describe_input(node, 0), x->type_string());
  }
  return static_cast<size_t>(x->rank() - 2);
}

// The weight's spatial dims, which must be static: they are the kernel shape.
std::vector<int64_t> weight_kernel_shape(const Node& node, size_t spatial) {
  const Value* w = node.input(1);
  if (static_cast<size_t>(w->rank()) != spatial + 2) {
    fail_user("{}: {} must have rank {} like the input, got {}", node.describe(), describe_input(node, 1), spatial + 2,
              w->type_string());
  }
  std::vector<int64_t> kernel;
  for (size_t i = 2; i < w->shape.size(); ++i) {
    if (!w->shape[i].is_const()) {
      fail_user("{}: {} has a symbolic kernel dim {}; kernel sizes must be static", node.describe(),
                describe_input(node, 1), w->shape[i].to_string());
    }
    kernel.push_back(w->shape[i].value());
  }
  return kernel;
}

void infer_conv(Node& node, Graph&) {
  require_same_dtype(node, 1, 0);
  require_same_dtype(node, 2, 0);
  const Value* x = node.input(0);
  const Value* w = node.input(1);
  size_t spatial = spatial_rank(node);
  WindowGeometry g = window_geometry(node, spatial, weight_kernel_shape(node, spatial));
  int64_t group = node.attr_int("group", 1);
  if (group < 1) fail_user("{}: attribute 'group' = {} must be >= 1", node.describe(), group);
  const Dim& m = w->shape[0];
  if (m.is_const() && m.value() % group != 0) {
    fail_user("{}: {} has {} output channels, not a multiple of group = {}", node.describe(), describe_input(node, 1),
              m.value(), group);
  }
  unify_dims(node, x->shape[1], w->shape[1] * Dim(group), "input channels and weight dim 1 * group");
  if (node.has_input(2)) {
    require_rank(node, 2, 1);
    unify_dims(node, node.input(2)->shape[0], m, "bias length and output channels");
  }
  Shape out = {x->shape[0], m};
  for (size_t i = 0; i < spatial; ++i) out.push_back(window_output_dim(node, g, i, x->shape[2 + i], false));
  set_output(node, 0, x->dtype, out);
}

// FusedConv (ours): activation(Conv(X, W, B) + Z), Z of the output's shape; see
// fused_activation.h. Its activation attributes are checked here, so a bad one fails at load.
void infer_fused_conv(Node& node, Graph& graph) {
  infer_conv(node, graph);
  fused_activation(node);
  if (!node.has_input(3)) return;
  require_same_dtype(node, 3, 0);
  const Shape& out = node.outputs[0]->shape;
  const Value* z = node.input(3);
  if (z->rank() != static_cast<int64_t>(out.size())) {
    fail_user("{}: {} must have the output's rank {} (it is added to the output as it is)", node.describe(),
              describe_input(node, 3), out.size());
  }
  for (size_t d = 0; d < out.size(); ++d) unify_dims(node, z->shape[d], out[d], "residual and output dims");
}

// PointwiseDepthwiseConv (ours): X [N, C, spatial...]; W1 [E, C, 1...], the 1x1 convolution's
// weight; W2 [E, 1, kernel...], the depthwise convolution's (group = E, its window the window
// attributes); the optional biases B1 [E] and B2 [E]; the activations `pointwise_activation`
// (after the 1x1 convolution) and `activation` (after the depthwise one).
void infer_pointwise_depthwise_conv(Node& node, Graph&) {
  for (size_t i = 1; i < 5; ++i) require_same_dtype(node, i, 0);
  const Value* x = node.input(0);
  const Value* w1 = node.input(1);
  const Value* w2 = node.input(2);
  const size_t spatial = spatial_rank(node);
  require_rank(node, 1, static_cast<int64_t>(spatial + 2));
  for (size_t d = 2; d < w1->shape.size(); ++d) {
    if (w1->shape[d] != Dim(1)) {
      fail_user("{}: {} must be a 1x1 weight, got {}", node.describe(), describe_input(node, 1), w1->type_string());
    }
  }
  unify_dims(node, x->shape[1], w1->shape[1], "input channels and pointwise weight dim 1");
  const Dim& expanded = w1->shape[0];
  require_rank(node, 2, static_cast<int64_t>(spatial + 2));
  unify_dims(node, w2->shape[0], expanded, "depthwise and pointwise weight dim 0");
  unify_dims(node, w2->shape[1], Dim(1), "depthwise weight dim 1");
  if (!expanded.is_const() || node.attr_int("group", 1) != expanded.value()) {
    fail_user("{}: attribute 'group' = {} must be the {} channels of {}", node.describe(), node.attr_int("group", 1),
              expanded.to_string(), describe_input(node, 2));
  }
  for (size_t bias : {3, 4}) {
    if (!node.has_input(bias)) continue;
    require_rank(node, bias, 1);
    unify_dims(node, node.input(bias)->shape[0], expanded, "bias length and channels");
  }
  std::vector<int64_t> kernel;
  for (size_t d = 2; d < w2->shape.size(); ++d) {
    if (!w2->shape[d].is_const()) fail_user("{}: {} has a symbolic kernel dim", node.describe(), describe_input(node, 2));
    kernel.push_back(w2->shape[d].value());
  }
  WindowGeometry g = window_geometry(node, spatial, kernel);
  Shape out = {x->shape[0], expanded};
  for (size_t i = 0; i < spatial; ++i) out.push_back(window_output_dim(node, g, i, x->shape[2 + i], false));
  set_output(node, 0, x->dtype, out);
  fused_activation(node);
  fused_activation(node, "pointwise_");
}

void infer_conv_transpose(Node& node, Graph&) {
  require_same_dtype(node, 1, 0);
  require_same_dtype(node, 2, 0);
  const Value* x = node.input(0);
  const Value* w = node.input(1);
  size_t spatial = spatial_rank(node);
  int64_t group = node.attr_int("group", 1);
  if (group < 1) fail_user("{}: attribute 'group' = {} must be >= 1", node.describe(), group);
  WindowGeometry g = window_geometry(node, spatial, weight_kernel_shape(node, spatial));
  unify_dims(node, x->shape[1], w->shape[0], "input channels and weight dim 0");
  Dim m = w->shape[1] * Dim(group);
  if (node.has_input(2)) {
    require_rank(node, 2, 1);
    unify_dims(node, node.input(2)->shape[0], m, "bias length and output channels");
  }
  Shape out = {x->shape[0], m};
  for (size_t i = 0; i < spatial; ++i) out.push_back(transposed_output_dim(node, g, i, x->shape[2 + i]));
  set_output(node, 0, x->dtype, out);
}

void infer_pool(Node& node, Graph&) {
  const Value* x = node.input(0);
  size_t spatial = spatial_rank(node);
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  if (kernel.size() != spatial) {
    fail_user("{}: attribute 'kernel_shape' {} must have one entry per spatial dim ({})", node.describe(),
              dims_to_string(kernel), spatial);
  }
  WindowGeometry g = window_geometry(node, spatial, kernel);
  bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  Shape out = {x->shape[0], x->shape[1]};
  for (size_t i = 0; i < spatial; ++i) out.push_back(window_output_dim(node, g, i, x->shape[2 + i], ceil_mode));
  set_output(node, 0, x->dtype, out);
  set_output(node, 1, DType::i64, out);  // MaxPool's optional Indices
}

void infer_global_pool(Node& node, Graph&) {
  const Value* x = node.input(0);
  spatial_rank(node);
  Shape out = {x->shape[0], x->shape[1]};
  out.resize(x->shape.size(), Dim(1));
  set_output(node, 0, x->dtype, out);
}

}  // namespace

void register_window_ops(OpRegistry& r) {
  const std::vector<DType> floats = {DType::f16, DType::f32, DType::f64, DType::bf16};
  r.add({.name = "Conv",
         .traits = kLibraryCall,
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = with({{"group", AttrKind::Int}}),
         .input_dtypes = floats,
         .infer = infer_conv});
  r.add({.name = "FusedConv",
         .traits = kLibraryCall,
         .min_inputs = 2,
         .max_inputs = 4,
         .attrs = with({{"group", AttrKind::Int}, {"activation", AttrKind::String}, {"activation_params", AttrKind::Floats}}),
         .input_dtypes = {DType::f32},
         .infer = infer_fused_conv});
  r.add({.name = "PointwiseDepthwiseConv",
         .traits = kLibraryCall,
         .min_inputs = 3,
         .max_inputs = 5,
         .attrs = with({{"group", AttrKind::Int},
                        {"activation", AttrKind::String},
                        {"activation_params", AttrKind::Floats},
                        {"pointwise_activation", AttrKind::String},
                        {"pointwise_activation_params", AttrKind::Floats}}),
         .input_dtypes = {DType::f32},
         .infer = infer_pointwise_depthwise_conv});
  r.add({.name = "ConvTranspose",
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = with({{"group", AttrKind::Int}, {"output_padding", AttrKind::Ints}, {"output_shape", AttrKind::Ints}}),
         .input_dtypes = floats,
         .infer = infer_conv_transpose});
  std::vector<DType> max_types = floats;
  max_types.push_back(DType::i8);
  max_types.push_back(DType::u8);
  r.add({.name = "MaxPool",
         .max_outputs = 2,
         .attrs = with({{"ceil_mode", AttrKind::Int}, {"storage_order", AttrKind::Int}}),
         .input_dtypes = max_types,
         .infer = infer_pool});
  r.add({.name = "AveragePool",
         .attrs = with({{"ceil_mode", AttrKind::Int}, {"count_include_pad", AttrKind::Int}}),
         .input_dtypes = floats,
         .infer = infer_pool});
  for (const char* name : {"GlobalAveragePool", "GlobalMaxPool"}) {
    r.add({.name = name, .input_dtypes = floats, .infer = infer_global_pool});
  }
}

}  // namespace tilefuse
