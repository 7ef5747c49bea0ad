// Runs a graph through the executor (generated, compiled kernels) and through the reference
// interpreter on the same inputs, and compares every output.
//
// Tolerances: f32 outputs must agree within 1e-5 relative (the project's bar for f32 kernels)
// plus 1e-6 absolute: the generated code uses SIMD exp/tanh/erf/log (xsimd), a few ULP from
// libm, and near zero a relative bound alone cannot absorb those ULP. Kernels' sums add up to 64
// values per lane in f32 before folding them into doubles (SumAcc, ColumnSumAcc), so a sum of a
// few hundred O(1) values that cancels to near zero may be off by a few 1e-6: graphs with a
// ReduceSum get 1e-5 absolute; graphs with a convolution 1e-4 relative and 1e-5 absolute. Touchy formulas are guarded by the builder (graph_builder.h). Graphs that round through f16/bf16 may differ by one unit of the half
// type wherever the f32 values on both sides straddle a rounding boundary: there the bound is
// two half-precision ULP (2^-9 for f16, 2^-6 for bf16), relative and absolute (values are O(1)).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/tensor_compare.h"
#include "driver/executor.h"

namespace tilefuse::property {

Tolerance tolerance_for(const Graph& graph);

using Inputs = std::map<std::string, Tensor>;

// Builds one executor for `graph` and runs it on each set of inputs (with symbolic shapes, the
// sets may differ in shape). Empty when every output matches the reference within `tolerance`
// (tolerance_for(graph) when not given); else one line per mismatching output.
std::string mismatches_against_reference(const Graph& graph, const std::vector<Inputs>& input_sets,
                                         const driver::ExecutorOptions& options,
                                         driver::ExecutorCounters& counters,
                                         std::optional<Tolerance> tolerance = std::nullopt);

}  // namespace tilefuse::property
