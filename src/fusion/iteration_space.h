// The iteration space of a group of nodes that is to become one kernel: the domain every node is
// evaluated over, the axes reduced inside the kernel, and how each tensor is addressed from the
// domain (strides, 0 where broadcast). Deriving it is also the legality test for fusing a group:
// a group whose nodes do not share one iteration space cannot be one kernel.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape.h"

namespace tilefuse::fusion {

// Where in the loop nest a value lives: Full values have one element per domain point; Reduced
// values one element per point of the domain with the reduced axes collapsed (a "row" value,
// e.g. the mean in a LayerNorm).
enum class Level { Full, Reduced };

struct TensorAccess {
  Level level = Level::Full;
  std::vector<Dim> strides;  // element stride per domain axis; 0 = broadcast along that axis
  Dim offset = 0;            // elements from the tensor's start to the domain's origin (a Slice's start)
};

// A Gather or GatherElements inside a kernel: its result at a domain point is `data` read at
// that point (its access strides do not include `axis`) with the value of `indices` there,
// wrapped once if negative, as the coordinate along `axis` (`axis_stride` elements apart,
// `extent` of them). An index out of range is reported by the kernel (tilefuse_kernel.h:
// load_gathered).
struct GatherLoad {
  const Value* data = nullptr;
  const Value* indices = nullptr;
  int64_t axis = 0;
  Dim axis_stride = 1;
  Dim extent = 1;
};

struct IterationSpace {
  Shape domain;
  std::vector<int64_t> reduced_axes;  // sorted; empty for purely elementwise kernels
  std::map<const Value*, TensorAccess> access;  // every value the kernel reads, computes or writes
  // Values between two index-map loads (the Slice in Slice -> Transpose): the kernel passes them
  // along but never has them at the domain's points, so none may leave the kernel.
  std::set<const Value*> passed_along;
  // Values computed at every point of the domain although the run may make one of their dims 1
  // where the domain's is not (scores [B, H, s, s] scaled before a mask of max(s, t) keys is
  // added): the kernel never has them in their own shape, so none may leave it.
  std::set<const Value*> computed_broadcast;
  // Gather and GatherElements results, in the order of the kernel's nodes.
  std::vector<std::pair<const Value*, GatherLoad>> gathers;

  Shape reduced_shape() const;  // domain with the reduced axes set to 1
};

// Whether a stride is one that only the run settles, 0 or 1 (min(seq - 1, 1): a dim that is 1
// or the domain's). Kernels read such an input as a contiguous or a broadcast one, chosen at
// launch, never as one strided across rows.
bool is_run_time_unit_stride(const Dim& stride);

struct IterationSpaceResult {
  std::optional<IterationSpace> space;
  std::string reason;  // why not, when space is empty
};

// `nodes` in topological order. Values produced outside `nodes` are the kernel's loads.
IterationSpaceResult derive_iteration_space(const std::vector<Node*>& nodes);

// Whether the node can be part of a generated kernel at all: its op is in kernel_op_types()
// (pointwise ops, reductions, Transpose, Slice with constant bounds) and its tensors are
// lane types (below), or it is an elementwise op that kernels compute on integer and f64 values
// in their own types (arithmetic, comparisons, logic, Where, Cast, index maps; f64 math).
bool is_kernel_op(const Node& node);
// Gather or GatherElements: inside a kernel, a load through its indices (GatherLoad).
bool is_gather_op(const Node& node);
// f32, f16, bf16 and bool: the types kernels compute in float SIMD lanes (bools as masks). A
// kernel with a value of any other type is a scalar loop over native types, without reductions.
bool is_lane_dtype(DType t);
// Whether a kernel of this space has a value of another type (it is then a scalar loop). The
// indices of a GatherElements inside the kernel are read as addresses, not values: they do not
// count.
bool has_native_values(const IterationSpace& space);
const std::set<std::string, std::less<>>& kernel_op_types();

// Kernel ops whose f32 lanes call vector math (exp, log, tanh, the trigonometric functions...):
// what makes a kernel compute-heavy (Pow too, unless it has a cheap form).
const std::set<std::string, std::less<>>& vector_math_op_types();

// The inputs a step reads at run time: all present inputs, except a reduction's axes, a view's
// shape operand and a constant Slice bound or Expand shape, which are compile-time facts
// (constants or already in the IR shapes).
std::vector<Value*> data_inputs(const Node& node);
// What the node reads inside a generated kernel: data_inputs, less an Expand's target shape
// whose value shape inference knows (the kernel loads through the inferred shapes' index map;
// a step running the Expand on its own reads the operand).
std::vector<Value*> kernel_data_inputs(const Node& node);
bool is_view_op(const Node& node);

}  // namespace tilefuse::fusion
