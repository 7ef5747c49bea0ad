// Steps the runtime computes with its own code instead of generated kernels or the reference
// kernels: the compute-bound MatMul, FusedMatMul, Gemm (matmul_call.h), Conv (conv_gemm.h; 3-D:
// conv3d_slices.h) and ConvTranspose (conv_transpose_call.h) on f32, and the host ops that real
// models spend time in: MaxPool (3-D: max_pool3d_slices.h) and AveragePool (pool_call.h), Split
// and Concat (axis_parts_call.h), Tile and Pad (axis_map_call.h), Slice, Expand, Gather, GatherND
// and GatherElements (strided_copy_call.h), Cast (cast_call.h), f32 ArgMax/ArgMin
// (arg_extremum_call.h), CumSum (cumsum_call.h), TopK (topk_call.h), f32 Resize of the last two
// axes (resize_call.h), ScatterND and ScatterElements (scatter_call.h), GridSample
// (grid_sample_call.h), RoiAlign (roi_align_call.h), integer and f64 reductions (reduce_call.h),
// RNN, GRU and LSTM (recurrent_call.h), and f32 arithmetic whose broadcast only the run's shapes
// settle where no kernel takes it (broadcast_call.h). None of them allocates a tensor when it
// runs. A call is prepared once per plan step: constant weights are packed into the GEMM
// engine's layout then, never per run. The engine is tilefuse's own sgemm (sgemm.h) on the
// runtime's thread team where the CPU has AVX-512 or AVX2, and OpenBLAS, capped to the team's
// size, elsewhere (or under TILEFUSE_MAX_CPU_ISA=scalar).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "fusion/fusion_plan.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/precision.h"
#include "runtime/sgemm.h"
#include "runtime/thread_team.h"

namespace tilefuse::runtime {

class LibraryCall {
 public:
  virtual ~LibraryCall() = default;
  // Computes the node into `outputs` (one per node output, preallocated with the planned shapes;
  // undefined for an output nothing reads) from its inputs (constants included, in the node's
  // input order; an absent optional input is undefined).
  virtual void run(ThreadTeam& team, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) = 0;
  // Bytes of weights packed at preparation (0 when nothing was constant or packing is off).
  virtual size_t packed_bytes() const { return 0; }
  // Those packed weights, in the order preparation packs them (a model package stores them, and
  // hands them back through PrepackedOperands, sgemm.h).
  virtual std::vector<const PackedOperand*> packed_operands() const { return {}; }
  // True for a call whose work is tilefuse's sgemm with a blocking that set_blocking replaces:
  // the GEMM autotuner's candidates (gemm_tuning.h). False for calls on OpenBLAS, direct
  // convolutions (depthwise, maps in lanes) and every other op.
  virtual bool tunes_blocking() const { return false; }
  virtual void set_blocking(const GemmBlocking& /*blocking*/) {}
  // For a MatMul in a row chain (fusion/row_chains.h), which solves it a band of rows at a time:
  // the problems run() would solve for these operands, one per batch in order, unsolved; empty
  // where the call has none to hand out (OpenBLAS, batches whose rows it gathers first).
  virtual std::span<const GemmProblem> row_problems(const std::vector<Tensor>& /*inputs*/,
                                                    std::vector<Tensor>& /*outputs*/) {
    return {};
  }
  // The blocking in use, for a call that tunes_blocking (a model package records it).
  virtual GemmBlocking blocking() const { return {}; }
};

// True if `node` runs as a library call (MatMul/Gemm/Conv on f32, f16 or bf16, 3-D Conv on f32
// with a constant weight, f32 ConvTranspose with a constant weight, 1-D and 2-D f32 MaxPool (with
// or without indices) and AveragePool, 3-D f32 MaxPool, Split, Concat, Tile, Pad, Slice, Expand,
// Gather, GatherND, GatherElements, Cast, f32 ArgMax/ArgMin, CumSum, TopK, f32 Resize of the last
// two axes, ScatterND, ScatterElements, f32 GridSample, f32 RoiAlign, f32 RNN/GRU/LSTM, integer
// and f64 ReduceSum/Mean/Max/Min/Prod over one run of axes, and Add/Sub/Mul/Div); other ops and
// dtypes run on the host (reference) kernels. Asked only of steps the planner left outside its
// kernels.
bool library_call_supports(const Node& node);

// True for a library or host step that runs (not one computed with the shapes, `shape_only`):
// the steps the executor and a model package prepare library calls for, by the same rule.
bool runs_on_its_node(const fusion::PlanStep& step, bool shape_only);

// Prepares `node` (library_call_supports must be true); MatMul and Gemm multiply in `precision`
// (runtime/precision.h).
std::unique_ptr<LibraryCall> prepare_library_call(const Node& node, const GemmBlocking& blocking,
                                                  Precision precision = Precision::f32);

// True when the calls run on tilefuse's own sgemm, false when they fall back to OpenBLAS.
bool own_gemm_engine();

}  // namespace tilefuse::runtime
