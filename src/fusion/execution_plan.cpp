#include "fusion/execution_plan.h"

#include <cstdlib>
#include <string_view>

#include "fusion/concat_in_place.h"
#include "fusion/planner.h"
#include "fusion/row_chains.h"
#include "ir/graph_clone.h"
#include "passes/batch_norm_folding.h"
#include "passes/concat_slice_folding.h"
#include "passes/control_flow_inlining.h"
#include "passes/conv_epilogue_folding.h"
#include "passes/conv_tap_trimming.h"
#include "passes/matmul_activation_folding.h"
#include "passes/matmul_bias_folding.h"
#include "passes/matmul_split_folding.h"
#include "passes/matmul_transpose_folding.h"
#include "passes/pad_into_conv.h"
#include "passes/pointwise_depthwise_folding.h"
#include "passes/decompose_composites.h"
#include "passes/depth_space_as_transpose.h"
#include "passes/einsum_as_matmul.h"
#include "passes/gemm_as_matmul.h"
#include "passes/pattern_registry.h"
#include "passes/reduction_splitting.h"
#include "passes/repeated_kv_as_broadcast.h"
#include "passes/rotate_half_as_reversal.h"
#include "passes/split_as_slices.h"
#include "passes/pointwise_through_concat.h"
#include "passes/reduce_in_source_layout.h"
#include "passes/tile_as_expand.h"
#include "passes/one_hot_as_where.h"
#include "passes/transpose_pairs.h"
#include "passes/trilu_as_where.h"

namespace tilefuse::fusion {

ExecutionPlan plan_for_execution(const Graph& graph, bool fuse) {
  ExecutionPlan planned{clone_graph(graph), {}};
  passes::inline_control_flow(planned.graph);
  passes::fold_batch_norms(planned.graph);
  if (fuse) {  // unfused mode keeps one op per step
    passes::fold_slices_of_concats(planned.graph);
    passes::einsum_as_matmul(planned.graph);  // first: the MatMul passes below then take its products too
    passes::express_gemms_as_matmuls(planned.graph);  // and Gemms
    passes::repeated_kv_as_broadcast(planned.graph);  // before the transposes fold into the products
    passes::fold_matmul_splits(planned.graph);  // before the biases: a MatMul's Add then folds per part
    passes::fold_matmul_transposes(planned.graph);
    passes::fold_matmul_biases(planned.graph);
    passes::fold_matmul_activations(planned.graph);  // after the biases: they come between
    passes::fold_pads_into_convs(planned.graph);  // before the epilogues: they take Convs only
    passes::trim_conv_taps(planned.graph);  // after the pads fold in: their taps may be cut too
    passes::fold_conv_epilogues(planned.graph);
    passes::fold_pointwise_depthwise(planned.graph);  // after the epilogues: both keep theirs
    passes::split_as_slices(planned.graph);  // after the MatMul splits: a product's parts stay its columns
    passes::tile_as_expand(planned.graph);
    passes::trilu_as_where(planned.graph);
    passes::one_hot_as_where(planned.graph);
    passes::depth_space_as_transpose(planned.graph);
    passes::rotate_half_as_reversal(planned.graph);
  }
  passes::decompose_composites(planned.graph);
  if (fuse) {
    passes::fold_transpose_pairs(planned.graph);  // after decomposition: its LayerNorms leave pairs
    passes::reduce_in_source_layout(planned.graph);  // after decomposition: its reductions too
    passes::split_long_reductions(planned.graph);  // after the reductions took their source's layout
    passes::pointwise_through_concat(planned.graph);  // after decomposition: its pointwise ops too
  }
  PlannerOptions options;
  options.fuse = fuse;
  planned.plan = plan_fusion(planned.graph, passes::PatternRegistry::with_builtins(), options);
  if (fuse) {
    place_concats_in_place(planned.plan, planned.graph);
    const char* chains = std::getenv("TILEFUSE_ROW_CHAINS");  // "0": every step on its own (for comparison)
    if (chains == nullptr || std::string_view(chains) != "0") chain_rows(planned.plan, planned.graph);
  }
  return planned;
}

}  // namespace tilefuse::fusion
