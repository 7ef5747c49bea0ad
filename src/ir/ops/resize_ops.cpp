// Resize (opset 11-19 form: X, roi, scales, sizes; opset 10: X, scales): the output size of each
// axis is `sizes`, or floor(input * scale). GridSample (2-D): X [N, C, H, W] sampled at grid
// [N, H_out, W_out, 2] gives [N, C, H_out, W_out]. The interpolation itself is the reference
// kernels'.
#include <cmath>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

// The axes `sizes` and `scales` refer to: attribute 'axes' (opset 18) or all of them.
std::vector<int64_t> resize_axes(const Node& node, int64_t rank) {
  std::vector<int64_t> axes = node.attr_ints("axes");
  if (axes.empty()) {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    return axes;
  }
  return node_axes(node, axes, rank, "attribute 'axes'");
}

const Value* present(const Node& node, size_t index) {
  const Value* v = node.input(index);
  return v != nullptr && !(is_static(v->shape) && num_elements(v->shape) == Dim(0)) ? v : nullptr;
}

void check_resize_attrs(const Node& node) {
  std::string mode = node.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") {
    fail_user("{}: attribute 'mode' is '{}'; it must be nearest, linear or cubic", node.describe(), mode);
  }
  std::string policy = node.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch") {
    fail_user("{}: attribute 'keep_aspect_ratio_policy' = '{}' is not supported (only 'stretch')", node.describe(),
              policy);
  }
  if (node.attr_int("antialias", 0) != 0) {
    fail_user("{}: attribute 'antialias' = 1 is not supported", node.describe());
  }
}

Dim scaled_dim(const Node& node, const Dim& in, double scale) {
  if (in.is_const()) return Dim(static_cast<int64_t>(std::floor(static_cast<double>(in.value()) * scale)));
  if (scale == std::floor(scale) && scale >= 1) return in * Dim(static_cast<int64_t>(scale));
  fail_user("{}: scale {} of the symbolic dim {} gives a size the IR cannot express; give 'sizes' instead",
            node.describe(), scale, in.to_string());
}

void infer_resize(Node& node, Graph& graph) {
  check_resize_attrs(node);
  const Value* x = node.input(0);
  const bool opset10 = node.inputs.size() == 2;  // Resize-10: (X, scales)
  const Value* scales = present(node, opset10 ? 1 : 2);
  const Value* sizes = opset10 ? nullptr : present(node, 3);
  std::vector<int64_t> axes = resize_axes(node, x->rank());
  Shape out = x->shape;
  if (sizes != nullptr) {
    require_dtype(node, 3, {DType::i64});
    auto known = known_int_values(sizes);
    if (!known) {  // known only at run time
      for (int64_t a : axes) out[a] = graph.fresh_symbol();
      set_output(node, 0, x->dtype, out);
      return;
    }
    if (known->size() != axes.size()) {
      fail_user("{}: sizes has {} entries for {} axes", node.describe(), known->size(), axes.size());
    }
    for (size_t k = 0; k < axes.size(); ++k) out[axes[k]] = (*known)[k];
  } else if (scales != nullptr) {
    if (!scales->constant) {  // known only at run time
      for (int64_t a : axes) out[a] = graph.fresh_symbol();
      set_output(node, 0, x->dtype, out);
      return;
    }
    if (scales->constant->numel() != static_cast<int64_t>(axes.size())) {
      fail_user("{}: scales has {} entries for {} axes", node.describe(), scales->constant->numel(), axes.size());
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      double s = scales->constant->get_f64(static_cast<int64_t>(k));
      if (!(s > 0)) fail_user("{}: scale {} must be positive", node.describe(), s);
      out[axes[k]] = scaled_dim(node, x->shape[axes[k]], s);
    }
  } else {
    fail_user("{}: one of scales and sizes must be given", node.describe());
  }
  set_output(node, 0, x->dtype, out);
}

// GridSample's modes: opset 16's names and opset 20's (linear, cubic).
void infer_grid_sample(Node& node, Graph&) {
  const Value* x = node.input(0);
  const Value* grid = node.input(1);
  if (x->rank() != 4 || grid->rank() != 4 || grid->shape[3] != Dim(2)) {
    fail_user("{}: input {} and grid {} must be [N, C, H, W] and [N, H_out, W_out, 2] (2-D sampling)",
              node.describe(), x->type_string(), grid->type_string());
  }
  require_dtype(node, 1, {DType::f16, DType::f32, DType::f64, DType::bf16});
  const std::string mode = node.attr_string("mode", "bilinear");
  if (mode != "bilinear" && mode != "linear" && mode != "nearest" && mode != "bicubic" && mode != "cubic") {
    fail_user("{}: attribute 'mode' is '{}'; it must be bilinear (linear), nearest or bicubic (cubic)",
              node.describe(), mode);
  }
  const std::string padding = node.attr_string("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    fail_user("{}: attribute 'padding_mode' is '{}'; it must be zeros, border or reflection", node.describe(), padding);
  }
  if (x->shape[0].is_const() && grid->shape[0].is_const() && x->shape[0] != grid->shape[0]) {
    fail_user("{}: input {} and grid {} must have the same batch", node.describe(), x->type_string(),
              grid->type_string());
  }
  set_output(node, 0, x->dtype, {x->shape[0], x->shape[1], grid->shape[1], grid->shape[2]});
}

}  // namespace

void register_resize_ops(OpRegistry& r) {
  r.add({.name = "Resize",
         .traits = kDataMovement,
         .min_inputs = 1,
         .max_inputs = 4,
         .attrs = {{"mode", AttrKind::String},
                   {"coordinate_transformation_mode", AttrKind::String},
                   {"nearest_mode", AttrKind::String},
                   {"cubic_coeff_a", AttrKind::Float},
                   {"exclude_outside", AttrKind::Int},
                   {"extrapolation_value", AttrKind::Float},
                   {"antialias", AttrKind::Int},
                   {"axes", AttrKind::Ints},
                   {"keep_aspect_ratio_policy", AttrKind::String}},
         .input_dtypes = {DType::f16, DType::f32, DType::f64, DType::bf16, DType::u8, DType::i8},
         .infer = infer_resize});
  r.add({.name = "GridSample",
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"mode", AttrKind::String}, {"padding_mode", AttrKind::String}, {"align_corners", AttrKind::Int}},
         .input_dtypes = {DType::f16, DType::f32, DType::f64, DType::bf16},
         .infer = infer_grid_sample});
}

}  // namespace tilefuse
