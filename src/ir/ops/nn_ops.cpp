// Neural-network ops: activations, Dropout (inference), Softmax, LogSoftmax and the
// normalisations (Layer, Batch, Instance, Group), with ONNX opset-17 semantics (Gelu as in
// opset 20, GroupNormalization as in opset 18 and 21).
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

const std::vector<DType> kHalfFloatDouble = {DType::f16, DType::f32, DType::f64};

void add_activation(OpRegistry& r, std::string name, std::vector<DType> types, std::vector<AttrSpec> attrs = {},
                    InferFn infer = infer_like_input) {
  r.add({.name = std::move(name),
         .traits = kPointwise,
         .attrs = std::move(attrs),
         .input_dtypes = std::move(types),
         .infer = std::move(infer)});
}

void infer_gelu(Node& node, Graph& graph) {
  std::string approximate = node.attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    fail_user("{}: attribute 'approximate' is '{}'; it must be 'none' or 'tanh'", node.describe(), approximate);
  }
  infer_like_input(node, graph);
}

// Dropout at inference: Y is X; the optional mask is bool of X's shape. ratio and training_mode
// are optional scalars.
void infer_dropout(Node& node, Graph&) {
  require_dtype(node, 1, kFloatTypes);
  require_scalar(node, 1);
  require_dtype(node, 2, {DType::boolean});
  require_scalar(node, 2);
  const Value* in = node.input(0);
  set_output(node, 0, in->dtype, in->shape);
  set_output(node, 1, DType::boolean, in->shape);
}

void infer_softmax(Node& node, Graph&) {
  const Value* in = node.input(0);
  node_axis(node, node.attr_int("axis", -1), in->rank(), "attribute 'axis'");
  set_output(node, 0, in->dtype, in->shape);
}

// Normalises over dims [axis, rank). Scale and B broadcast to those dims; Mean and InvStdDev keep
// the leading dims and have 1 for each normalised one, in the stash type.
void infer_layer_norm(Node& node, Graph&) {
  const Value* x = node.input(0);
  int64_t axis = node_axis(node, node.attr_int("axis", -1), x->rank(), "attribute 'axis'");
  Shape normalized(x->shape.begin() + axis, x->shape.end());
  for (size_t i : {1, 2}) {
    require_same_dtype(node, i, 0);
    require_unidirectional_broadcast(node, i, normalized);
  }
  int64_t stash = node.attr_int("stash_type", 1);
  auto stash_type = dtype_from_onnx(static_cast<int>(stash));
  if (!stash_type || !is_float(*stash_type)) {
    fail_user("{}: attribute 'stash_type' = {} is not a float element type (1 f32, 10 f16, 11 f64, 16 bf16)",
              node.describe(), stash);
  }
  Shape stats(x->shape.begin(), x->shape.begin() + axis);
  stats.resize(x->shape.size(), Dim(1));
  set_output(node, 0, x->dtype, x->shape);
  set_output(node, 1, *stash_type, stats);
  set_output(node, 2, *stash_type, stats);
}

// PRelu: the slope broadcasts unidirectionally to X.
void infer_prelu(Node& node, Graph&) {
  require_same_dtype(node, 1, 0);
  require_unidirectional_broadcast(node, 1, node.input(0)->shape);
  set_output(node, 0, node.input(0)->dtype, node.input(0)->shape);
}

// X is [N, C, ...]; `index`'s input must be a vector of C entries (scale, bias, mean, var).
void require_channel_vector(Node& node, size_t index) {
  const Value* x = node.input(0);
  require_same_dtype(node, index, 0);
  require_rank(node, index, 1);
  unify_dims(node, node.input(index)->shape[0], x->shape[1], fmt::format("{} length and channels", describe_input(node, index)));
}

void require_channels(const Node& node) {
  if (node.input(0)->rank() < 2) {
    fail_user("{}: {} must be [N, C, ...], got {}", node.describe(), describe_input(node, 0),
              node.input(0)->type_string());
  }
}

// Inference form only; training_mode=1 also outputs the updated running mean and variance.
void infer_batch_norm(Node& node, Graph&) {
  require_channels(node);
  const Value* x = node.input(0);
  for (size_t i = 1; i < 5; ++i) {
    // Since opset 15 mean and var may have their own (float) type.
    if (i < 3) require_channel_vector(node, i);
    else require_rank(node, i, 1);
  }
  set_output(node, 0, x->dtype, x->shape);
  for (size_t i = 1; i < 3; ++i) set_output(node, i, node.input(i + 2)->dtype, node.input(i + 2)->shape);
}

void infer_instance_norm(Node& node, Graph&) {
  require_channels(node);
  require_channel_vector(node, 1);
  require_channel_vector(node, 2);
  set_output(node, 0, node.input(0)->dtype, node.input(0)->shape);
}

// Opset 18 gives scale and bias per group, opset 21 per channel; both forms are accepted.
void infer_group_norm(Node& node, Graph&) {
  require_channels(node);
  const Value* x = node.input(0);
  int64_t groups = node.attr_int("num_groups", 0);
  if (groups < 1) fail_user("{}: attribute 'num_groups' = {} must be >= 1", node.describe(), groups);
  if (x->shape[1].is_const() && x->shape[1].value() % groups != 0) {
    fail_user("{}: {} channels are not divisible into {} groups", node.describe(), x->shape[1].value(), groups);
  }
  for (size_t i : {1, 2}) {
    require_same_dtype(node, i, 0);
    require_rank(node, i, 1);
    const Dim& n = node.input(i)->shape[0];
    if (n != Dim(groups) && n != x->shape[1] && n.is_const() && x->shape[1].is_const()) {
      fail_user("{}: {} has {} entries; it needs num_groups ({}) or channels ({})", node.describe(),
                describe_input(node, i), n.to_string(), groups, x->shape[1].to_string());
    }
  }
  set_output(node, 0, x->dtype, x->shape);
}

// RMSNormalization (opset 23): over dims [axis, rank), scale broadcasting to them.
void infer_rms_norm(Node& node, Graph&) {
  const Value* x = node.input(0);
  int64_t axis = node_axis(node, node.attr_int("axis", -1), x->rank(), "attribute 'axis'");
  require_same_dtype(node, 1, 0);
  require_unidirectional_broadcast(node, 1, Shape(x->shape.begin() + axis, x->shape.end()));
  set_output(node, 0, x->dtype, x->shape);
}

void register_activations(OpRegistry& r) {
  add_activation(r, "Relu", kSignedTypes);
  add_activation(r, "LeakyRelu", kFloatTypes, {{"alpha", AttrKind::Float}});
  add_activation(r, "Elu", kHalfFloatDouble, {{"alpha", AttrKind::Float}});
  add_activation(r, "Sigmoid", kFloatTypes);
  add_activation(r, "HardSigmoid", kHalfFloatDouble, {{"alpha", AttrKind::Float}, {"beta", AttrKind::Float}});
  add_activation(r, "HardSwish", kHalfFloatDouble);
  add_activation(r, "Softplus", kHalfFloatDouble);
  add_activation(r, "Tanh", kFloatTypes);
  add_activation(r, "Erf", kNumericTypes);
  add_activation(r, "Gelu", kFloatTypes, {{"approximate", AttrKind::String}}, infer_gelu);
  add_activation(r, "Selu", kHalfFloatDouble, {{"alpha", AttrKind::Float}, {"gamma", AttrKind::Float}});
  add_activation(r, "Celu", kFloatTypes, {{"alpha", AttrKind::Float}});
  add_activation(r, "Mish", kFloatTypes);
  add_activation(r, "Softsign", kFloatTypes);
  add_activation(r, "ThresholdedRelu", kFloatTypes, {{"alpha", AttrKind::Float}});
  add_activation(r, "Shrink", kFloatTypes, {{"bias", AttrKind::Float}, {"lambd", AttrKind::Float}});
  r.add({.name = "PRelu",
         .traits = kPointwise | kBroadcasting,
         .min_inputs = 2,
         .max_inputs = 2,
         .input_dtypes = kNumericTypes,
         .infer = infer_prelu});
  r.add({.name = "Dropout",
         .traits = kPointwise,
         .min_inputs = 1,
         .max_inputs = 3,
         .min_outputs = 1,
         .max_outputs = 2,
         .attrs = {{"seed", AttrKind::Int}},
         .input_dtypes = kFloatTypes,
         .infer = infer_dropout});
}

void register_normalizations(OpRegistry& r) {
  for (const char* name : {"Softmax", "LogSoftmax"}) {
    r.add({.name = name,
           .traits = kReduction | kComposite,
           .attrs = {{"axis", AttrKind::Int}},
           .input_dtypes = kFloatTypes,
           .infer = infer_softmax});
  }
  r.add({.name = "LayerNormalization",
         .traits = kReduction | kComposite,
         .min_inputs = 2,
         .max_inputs = 3,
         .min_outputs = 1,
         .max_outputs = 3,
         .attrs = {{"axis", AttrKind::Int}, {"epsilon", AttrKind::Float}, {"stash_type", AttrKind::Int}},
         .input_dtypes = kFloatTypes,
         .infer = infer_layer_norm});
  r.add({.name = "BatchNormalization",
         .traits = kComposite,
         .min_inputs = 5,
         .max_inputs = 5,
         .max_outputs = 3,
         .attrs = {{"epsilon", AttrKind::Float}, {"momentum", AttrKind::Float}, {"training_mode", AttrKind::Int}},
         .input_dtypes = kFloatTypes,
         .infer = infer_batch_norm});
  r.add({.name = "RMSNormalization",
         .traits = kComposite,
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"axis", AttrKind::Int}, {"epsilon", AttrKind::Float}, {"stash_type", AttrKind::Int}},
         .input_dtypes = kFloatTypes,
         .infer = infer_rms_norm});
  r.add({.name = "InstanceNormalization",
         .traits = kComposite,
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"epsilon", AttrKind::Float}},
         .input_dtypes = kFloatTypes,
         .infer = infer_instance_norm});
  r.add({.name = "GroupNormalization",
         .traits = kComposite,
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"epsilon", AttrKind::Float}, {"num_groups", AttrKind::Int, true}, {"stash_type", AttrKind::Int}},
         .input_dtypes = kFloatTypes,
         .infer = infer_group_norm});
}

}  // namespace

void register_nn_ops(OpRegistry& registry) {
  register_activations(registry);
  register_normalizations(registry);
}

}  // namespace tilefuse
