// Ops that address elements by index or position: GatherElements, GatherND, ScatterElements
// (and the older Scatter), ScatterND, Tile, Pad, Trilu, CumSum, TopK, DepthToSpace,
// SpaceToDepth, NonZero, OneHot and Size, with
// ONNX opset-18 semantics (and the older attribute forms PyTorch still writes).
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

void require_same_rank(const Node& node, size_t index, size_t like) {
  const Value* v = node.input(index);
  const Value* ref = node.input(like);
  if (v->rank() == ref->rank()) return;
  fail_user("{}: {} ({}) and {} ({}) must have the same rank", node.describe(), describe_input(node, index),
            v->type_string(), describe_input(node, like), ref->type_string());
}

void infer_gather_elements(Node& node, Graph&) {
  require_dtype(node, 1, kIndexTypes);
  require_same_rank(node, 1, 0);
  node_axis(node, node.attr_int("axis", 0), node.input(0)->rank(), "attribute 'axis'");
  set_output(node, 0, node.input(0)->dtype, node.input(1)->shape);
}

void infer_gather_nd(Node& node, Graph&) {
  require_dtype(node, 1, {DType::i64});
  const Value* data = node.input(0);
  const Value* indices = node.input(1);
  const int64_t b = node.attr_int("batch_dims", 0);
  if (indices->rank() < 1 || b < 0 || b >= std::min(data->rank(), indices->rank())) {
    fail_user("{}: batch_dims = {} must be below the ranks of data ({}) and indices ({})", node.describe(), b,
              data->type_string(), indices->type_string());
  }
  const Dim& last = indices->shape.back();
  if (!last.is_const() || last.value() < 1 || b + last.value() > data->rank()) {
    fail_user("{}: the last dim of {} ({}) must be static and at most rank(data) - batch_dims = {}", node.describe(),
              describe_input(node, 1), last.to_string(), data->rank() - b);
  }
  Shape out(indices->shape.begin(), indices->shape.end() - 1);
  out.insert(out.end(), data->shape.begin() + b + last.value(), data->shape.end());
  set_output(node, 0, data->dtype, out);
}

void require_reduction_attr(const Node& node) {
  std::string reduction = node.attr_string("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
    fail_user("{}: attribute 'reduction' is '{}'; it must be none, add, mul, max or min", node.describe(), reduction);
  }
}

void infer_scatter_elements(Node& node, Graph&) {
  require_dtype(node, 1, kIndexTypes);
  require_same_dtype(node, 2, 0);
  require_same_rank(node, 1, 0);
  require_same_rank(node, 2, 1);
  require_reduction_attr(node);
  node_axis(node, node.attr_int("axis", 0), node.input(0)->rank(), "attribute 'axis'");
  set_output(node, 0, node.input(0)->dtype, node.input(0)->shape);
}

void infer_scatter_nd(Node& node, Graph&) {
  require_dtype(node, 1, {DType::i64});
  require_same_dtype(node, 2, 0);
  require_reduction_attr(node);
  const Value* indices = node.input(1);
  if (indices->rank() < 1) fail_user("{}: {} must have rank >= 1", node.describe(), describe_input(node, 1));
  set_output(node, 0, node.input(0)->dtype, node.input(0)->shape);
}

void infer_tile(Node& node, Graph& graph) {
  require_dtype(node, 1, {DType::i64});
  const Value* in = node.input(0);
  auto repeats = known_int_values(node.input(1));
  Shape out;
  if (!repeats) {  // known only at run time: the rank stays, the dims do not
    set_output(node, 0, in->dtype, fresh_shape(graph, in->shape.size()));
    return;
  }
  if (static_cast<int64_t>(repeats->size()) != in->rank()) {
    fail_user("{}: repeats has {} entries but the input has rank {}", node.describe(), repeats->size(), in->rank());
  }
  for (size_t i = 0; i < repeats->size(); ++i) out.push_back(in->shape[i] * (*repeats)[i]);
  set_output(node, 0, in->dtype, out);
}

// Pad: opset >= 11 takes pads (and the constant value, and since opset 18 the axes) as inputs,
// older opsets as attributes.
void infer_pad(Node& node, Graph& graph) {
  const Value* in = node.input(0);
  std::string mode = node.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") {
    fail_user("{}: attribute 'mode' is '{}'; it must be constant, reflect, edge or wrap", node.describe(), mode);
  }
  // attr_ints returns a copy: both ends must come from one of them.
  const std::vector<int64_t> attr_pads = node.has_input(1) ? std::vector<int64_t>{} : node.attr_ints("pads");
  std::optional<Values> pads =
      node.has_input(1) ? known_int_values(node.input(1)) : std::optional<Values>(Values(attr_pads.begin(), attr_pads.end()));
  require_same_dtype(node, 2, 0);
  std::vector<int64_t> axes;
  if (node.has_input(3)) {
    auto known = known_const_ints(node.input(3));
    if (!known) fail_user("{}: {} (axes) must be a constant", node.describe(), describe_input(node, 3));
    axes = node_axes(node, *known, in->rank(), "input 3 (axes)");
  } else {
    for (int64_t a = 0; a < in->rank(); ++a) axes.push_back(a);
  }
  if (!pads) {  // known only at run time: every padded axis gets a fresh dim
    Shape out = in->shape;
    for (int64_t a : axes) out[a] = graph.fresh_symbol();
    set_output(node, 0, in->dtype, out);
    return;
  }
  if (pads->size() != 2 * axes.size()) {
    fail_user("{}: pads has {} entries; it needs 2 per padded axis ({})", node.describe(), pads->size(),
              2 * axes.size());
  }
  Shape out = in->shape;
  for (size_t k = 0; k < axes.size(); ++k) out[axes[k]] = out[axes[k]] + (*pads)[k] + (*pads)[k + axes.size()];
  set_output(node, 0, in->dtype, out);
}

void infer_trilu(Node& node, Graph&) {
  require_dtype(node, 1, {DType::i64});
  require_scalar(node, 1);
  const Value* in = node.input(0);
  if (in->rank() < 2) fail_user("{}: {} must have rank >= 2", node.describe(), describe_input(node, 0));
  set_output(node, 0, in->dtype, in->shape);
}

void infer_cumsum(Node& node, Graph&) {
  require_dtype(node, 1, kIndexTypes);
  require_scalar(node, 1);
  set_output(node, 0, node.input(0)->dtype, node.input(0)->shape);
}

void infer_topk(Node& node, Graph& graph) {
  require_dtype(node, 1, {DType::i64});
  const Value* in = node.input(0);
  int64_t axis = node_axis(node, node.attr_int("axis", -1), in->rank(), "attribute 'axis'");
  Shape out = in->shape;
  auto k = known_int_values(node.input(1));
  out[axis] = k && k->size() == 1 ? (*k)[0] : graph.fresh_symbol();
  set_output(node, 0, in->dtype, out);
  set_output(node, 1, DType::i64, out);
}

// OneHot inserts a dim of size `depth` at `axis` (in [-rank - 1, rank]); depth is a scalar of any
// numeric type, truncated to an integer, and values holds [off, on] in the output's type.
void infer_one_hot(Node& node, Graph& graph) {
  const Value* indices = node.input(0);
  const Value* depth = node.input(1);
  const Value* values = node.input(2);
  require_dtype(node, 0, kNumericTypes);
  require_dtype(node, 1, kNumericTypes);
  if (depth->rank() > 1 || (depth->rank() == 1 && depth->shape[0] != Dim(1))) {
    fail_user("{}: {} must be a scalar or a 1-element tensor, got {}", node.describe(), describe_input(node, 1),
              depth->type_string());
  }
  if (values->rank() != 1 || values->shape[0] != Dim(2)) {
    fail_user("{}: {} must be a 2-element tensor [off, on], got {}", node.describe(), describe_input(node, 2),
              values->type_string());
  }
  const int64_t rank = indices->rank() + 1;
  const int64_t axis = node_axis(node, node.attr_int("axis", -1), rank, "attribute 'axis'");
  Dim classes = graph.fresh_symbol();  // known at run time only
  if (depth->constant.has_value()) {
    const double d = depth->constant->get_f64(0);
    if (!(d >= 1)) fail_user("{}: depth is {}; it must be at least 1", node.describe(), d);
    classes = Dim(static_cast<int64_t>(d));
  } else if (auto known = known_int_values(depth); known && known->size() == 1) {
    classes = (*known)[0];
  }
  Shape out = indices->shape;
  out.insert(out.begin() + axis, classes);
  set_output(node, 0, values->dtype, out);
}

// The count of non-zero elements depends on the data: a fresh symbol that only the reference
// interpreter can bind.
void infer_nonzero(Node& node, Graph& graph) {
  set_output(node, 0, DType::i64, {Dim(node.input(0)->rank()), graph.fresh_symbol("nonzero")});
}

// DepthToSpace moves blocks of channels into b x b spatial blocks, SpaceToDepth the reverse.
void infer_depth_space(Node& node, Graph&) {
  const Value* x = node.input(0);
  require_rank(node, 0, 4);
  const int64_t b = node.attr_int("blocksize", 0);
  if (b < 1) fail_user("{}: attribute 'blocksize' must be given and positive", node.describe());
  const std::string mode = node.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") fail_user("{}: attribute 'mode' is '{}'; it must be DCR or CRD", node.describe(), mode);
  const Shape& in = x->shape;
  const bool to_space = node.op == "DepthToSpace";
  const Dim& divided = to_space ? in[1] : in[2];
  auto check_divisible = [&](const Dim& d, int64_t by, const char* what) {
    if (d.is_const() && d.value() % by != 0) {
      fail_user("{}: {} {} is not a multiple of {}", node.describe(), what, d.to_string(), by);
    }
  };
  if (to_space) {
    check_divisible(divided, b * b, "the channel count");
    set_output(node, 0, x->dtype, {in[0], floordiv(in[1], Dim(b * b)), in[2] * Dim(b), in[3] * Dim(b)});
  } else {
    check_divisible(in[2], b, "the height");
    check_divisible(in[3], b, "the width");
    set_output(node, 0, x->dtype, {in[0], in[1] * Dim(b * b), floordiv(in[2], Dim(b)), floordiv(in[3], Dim(b))});
  }
}

void infer_size(Node& node, Graph&) {
  Dim n = num_elements(node.input(0)->shape);
  set_output(node, 0, DType::i64, {}, Values{n});
}

}  // namespace

void register_index_ops(OpRegistry& r) {
  r.add({.name = "GatherElements",
         .traits = kDataMovement,
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"axis", AttrKind::Int}},
         .infer = infer_gather_elements});
  r.add({.name = "GatherND",
         .traits = kDataMovement,
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"batch_dims", AttrKind::Int}},
         .infer = infer_gather_nd});
  for (const char* name : {"ScatterElements", "Scatter"}) {
    r.add({.name = name,
           .traits = kDataMovement,
           .min_inputs = 3,
           .max_inputs = 3,
           .attrs = {{"axis", AttrKind::Int}, {"reduction", AttrKind::String}},
           .infer = infer_scatter_elements});
  }
  r.add({.name = "ScatterND",
         .traits = kDataMovement,
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"reduction", AttrKind::String}},
         .infer = infer_scatter_nd});
  r.add({.name = "Tile", .traits = kDataMovement, .min_inputs = 2, .max_inputs = 2, .infer = infer_tile});
  r.add({.name = "Pad",
         .traits = kDataMovement,
         .min_inputs = 1,
         .max_inputs = 4,
         .attrs = {{"mode", AttrKind::String}, {"pads", AttrKind::Ints}, {"value", AttrKind::Float}},
         .infer = infer_pad});
  r.add({.name = "Trilu",
         .traits = kDataMovement,
         .min_inputs = 1,
         .max_inputs = 2,
         .attrs = {{"upper", AttrKind::Int}},
         .infer = infer_trilu});
  r.add({.name = "CumSum",
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"exclusive", AttrKind::Int}, {"reverse", AttrKind::Int}},
         .input_dtypes = {DType::f16, DType::f32, DType::f64, DType::bf16, DType::i32, DType::i64},
         .infer = infer_cumsum});
  r.add({.name = "TopK",
         .min_inputs = 2,
         .max_inputs = 2,
         .min_outputs = 2,
         .max_outputs = 2,
         .attrs = {{"axis", AttrKind::Int}, {"largest", AttrKind::Int}, {"sorted", AttrKind::Int}},
         .input_dtypes = kNumericTypes,
         .infer = infer_topk});
  for (const char* name : {"DepthToSpace", "SpaceToDepth"}) {
    r.add({.name = name,
           .traits = kDataMovement,
           .attrs = {{"blocksize", AttrKind::Int, true}, {"mode", AttrKind::String}},
           .infer = infer_depth_space});
  }
  r.add({.name = "NonZero", .infer = infer_nonzero});
  r.add({.name = "OneHot", .min_inputs = 3, .max_inputs = 3, .attrs = {{"axis", AttrKind::Int}}, .infer = infer_one_hot});
  r.add({.name = "Size", .traits = kShapeOp, .infer = infer_size});
}

}  // namespace tilefuse
