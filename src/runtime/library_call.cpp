#include "runtime/library_call.h"

#include "ir/error.h"
#include "runtime/arg_extremum_call.h"
#include "runtime/axis_map_call.h"
#include "runtime/axis_parts_call.h"
#include "runtime/broadcast_call.h"
#include "runtime/cast_call.h"
#include "runtime/conv3d_slices.h"
#include "runtime/conv_gemm.h"
#include "runtime/conv_transpose_call.h"
#include "runtime/cumsum_call.h"
#include "runtime/grid_sample_call.h"
#include "runtime/half_precision_call.h"
#include "runtime/matmul_call.h"
#include "runtime/max_pool3d_slices.h"
#include "runtime/pointwise_depthwise_call.h"
#include "runtime/pool_call.h"
#include "runtime/recurrent_call.h"
#include "runtime/reduce_call.h"
#include "runtime/resize_call.h"
#include "runtime/roi_align_call.h"
#include "runtime/scatter_call.h"
#include "runtime/strided_copy_call.h"
#include "runtime/topk_call.h"

namespace tilefuse::runtime {

namespace {

bool is_strided_copy(const Node& node) {
  return node.op == "Slice" || node.op == "Expand" || node.op == "Gather" || node.op == "GatherND" ||
         node.op == "GatherElements";
}

}  // namespace

bool library_call_supports(const Node& node) {
  if (half_precision_call_supports(node)) return true;
  if (node.op == "Conv" || node.op == "FusedConv") return conv_gemm_supports(node) || conv3d_slices_supports(node);
  if (node.op == "PointwiseDepthwiseConv") return pointwise_depthwise_supported(node);
  if (node.op == "ConvTranspose") return conv_transpose_call_supports(node) || conv3d_slices_supports(node);
  if (node.op == "MatMul" || node.op == "FusedMatMul" || node.op == "Gemm") return matmul_call_supports(node);
  if (node.op == "MaxPool" || node.op == "AveragePool") return pool_call_supports(node) || max_pool3d_slices_supports(node);
  if (node.op == "Split" || node.op == "Concat") return axis_parts_call_supports(node);
  if (node.op == "Tile" || node.op == "Pad") return axis_map_call_supports(node);
  if (is_strided_copy(node)) return strided_copy_call_supports(node);
  if (node.op == "Cast") return cast_call_supports(node);
  if (node.op == "ArgMax" || node.op == "ArgMin") return arg_extremum_call_supports(node);
  if (node.op == "CumSum") return cumsum_call_supports(node);
  if (node.op == "TopK") return topk_call_supports(node);
  if (node.op == "Resize") return resize_call_supports(node);
  if (node.op.starts_with("Reduce")) return reduce_call_supports(node);
  if (node.op == "RNN" || node.op == "GRU" || node.op == "LSTM") return recurrent_call_supports(node);
  if (node.op.starts_with("Scatter")) return scatter_call_supports(node);
  if (node.op == "GridSample") return grid_sample_call_supports(node);
  if (node.op == "RoiAlign") return roi_align_call_supports(node);
  return broadcast_call_supports(node);
}

std::unique_ptr<LibraryCall> prepare_library_call(const Node& node, const GemmBlocking& blocking, Precision precision) {
  if (half_precision_call_supports(node)) return prepare_half_precision_call(node, blocking, precision);
  if (conv3d_slices_supports(node)) return prepare_conv3d_slices(node, blocking);
  if (node.op == "Conv" || node.op == "FusedConv") return prepare_conv_call(node, blocking, precision);
  if (node.op == "PointwiseDepthwiseConv") return prepare_pointwise_depthwise_call(node, blocking, precision);
  if (node.op == "ConvTranspose") return prepare_conv_transpose_call(node, blocking);
  if (node.op == "MatMul" || node.op == "FusedMatMul" || node.op == "Gemm") return prepare_matmul_call(node, blocking, precision);
  if (max_pool3d_slices_supports(node)) return prepare_max_pool3d_slices(node);
  if (node.op == "MaxPool" || node.op == "AveragePool") return prepare_pool_call(node);
  if (node.op == "Split" || node.op == "Concat") return prepare_axis_parts_call(node);
  if (node.op == "Tile" || node.op == "Pad") return prepare_axis_map_call(node);
  if (is_strided_copy(node)) return prepare_strided_copy_call(node);
  if (node.op == "Cast") return prepare_cast_call(node);
  if (node.op == "ArgMax" || node.op == "ArgMin") return prepare_arg_extremum_call(node);
  if (node.op == "CumSum") return prepare_cumsum_call(node);
  if (node.op == "TopK") return prepare_topk_call(node);
  if (node.op == "Resize") return prepare_resize_call(node);
  if (node.op.starts_with("Reduce")) return prepare_reduce_call(node);
  if (node.op == "RNN" || node.op == "GRU" || node.op == "LSTM") return prepare_recurrent_call(node, blocking);
  if (node.op.starts_with("Scatter")) return prepare_scatter_call(node);
  if (node.op == "GridSample") return prepare_grid_sample_call(node);
  if (node.op == "RoiAlign") return prepare_roi_align_call(node);
  if (broadcast_call_supports(node)) return prepare_broadcast_call(node);
  fail_internal("prepare_library_call: {} is not a library op", node.describe());
}

bool own_gemm_engine() { return microkernel_supported(); }

bool runs_on_its_node(const fusion::PlanStep& step, bool shape_only) {
  return (step.kind == fusion::StepKind::LibraryCall || step.kind == fusion::StepKind::Host) && !shape_only;
}

}  // namespace tilefuse::runtime
