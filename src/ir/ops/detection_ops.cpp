// The detection ops torchvision's models export: NonMaxSuppression (opset 10/11: the boxes each
// class keeps, as [selected, 3] rows of batch, class and box index; how many only the run
// knows) and RoiAlign (opset 10/16: every region of interest pooled to a fixed
// [output_height, output_width] grid per channel). The computations are the reference kernels'
// (reference/detection_kernels.cpp).
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/infer_util.h"

namespace tilefuse {
namespace {

using namespace ops;

// A dim of one value's shape that must equal one of another's where both are known.
void require_same_dim(const Node& node, const Value* a, size_t da, const Value* b, size_t db, const char* what) {
  if (a->shape[da].is_const() && b->shape[db].is_const() && a->shape[da] != b->shape[db]) {
    fail_user("{}: {} differ: {} and {}", node.describe(), what, a->type_string(), b->type_string());
  }
}

void infer_non_max_suppression(Node& node, Graph& graph) {
  const Value* boxes = node.input(0);
  const Value* scores = node.input(1);
  if (boxes->rank() != 3 || scores->rank() != 3 || boxes->shape[2] != Dim(4)) {
    fail_user("{}: boxes {} and scores {} must be [batches, boxes, 4] and [batches, classes, boxes]", node.describe(),
              boxes->type_string(), scores->type_string());
  }
  require_same_dim(node, boxes, 0, scores, 0, "the batches of boxes and scores");
  require_same_dim(node, boxes, 1, scores, 2, "the box counts of boxes and scores");
  const int64_t center = node.attr_int("center_point_box", 0);
  if (center != 0 && center != 1) {
    fail_user("{}: attribute 'center_point_box' is {}; it must be 0 (corners) or 1 (center and size)",
              node.describe(), center);
  }
  if (node.input(2) != nullptr) require_dtype(node, 2, {DType::i64});
  for (size_t i = 3; i < 5; ++i) {
    if (node.input(i) != nullptr) require_dtype(node, i, {DType::f32});
  }
  set_output(node, 0, DType::i64, {graph.fresh_symbol("selected"), Dim(3)});
}

void infer_roi_align(Node& node, Graph&) {
  const Value* x = node.input(0);
  const Value* rois = node.input(1);
  const Value* batch = node.input(2);
  if (x->rank() != 4 || rois->rank() != 2 || rois->shape[1] != Dim(4) || batch->rank() != 1) {
    fail_user("{}: input {}, rois {} and batch_indices {} must be [N, C, H, W], [rois, 4] and [rois]",
              node.describe(), x->type_string(), rois->type_string(), batch->type_string());
  }
  require_same_dim(node, rois, 0, batch, 0, "the region counts of rois and batch_indices");
  require_dtype(node, 1, {x->dtype});
  require_dtype(node, 2, {DType::i64});
  const std::string mode = node.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") {
    fail_user("{}: attribute 'mode' is '{}'; it must be avg or max", node.describe(), mode);
  }
  const std::string transform = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel") {
    fail_user("{}: attribute 'coordinate_transformation_mode' is '{}'; it must be half_pixel or output_half_pixel",
              node.describe(), transform);
  }
  const int64_t height = node.attr_int("output_height", 1), width = node.attr_int("output_width", 1);
  if (height < 1 || width < 1 || node.attr_int("sampling_ratio", 0) < 0) {
    fail_user("{}: output_height {} and output_width {} must be positive, sampling_ratio not negative",
              node.describe(), height, width);
  }
  set_output(node, 0, x->dtype, {rois->shape[0], x->shape[1], Dim(height), Dim(width)});
}

}  // namespace

void register_detection_ops(OpRegistry& r) {
  r.add({.name = "NonMaxSuppression",
         .min_inputs = 2,
         .max_inputs = 5,
         .attrs = {{"center_point_box", AttrKind::Int}},
         .input_dtypes = {DType::f32},
         .infer = infer_non_max_suppression});
  r.add({.name = "RoiAlign",
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"coordinate_transformation_mode", AttrKind::String},
                   {"mode", AttrKind::String},
                   {"output_height", AttrKind::Int},
                   {"output_width", AttrKind::Int},
                   {"sampling_ratio", AttrKind::Int},
                   {"spatial_scale", AttrKind::Float}},
         .input_dtypes = {DType::f16, DType::f32, DType::f64, DType::bf16},
         .infer = infer_roi_align});
}

}  // namespace tilefuse
