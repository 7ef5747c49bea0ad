// Rewrites composite ops into the primitive pointwise and reduction ops they are made of, so the
// fusion planner and the code generator only see primitives:
//   Softmax(x)    -> e = Exp(x - ReduceMax(x)); e / ReduceSum(e)
//   LogSoftmax(x) -> d = x - ReduceMax(x); d - Log(ReduceSum(Exp(d)))
//   LayerNormalization(x, scale, bias) -> (x - mean) / Sqrt(var + eps) * scale + bias
// Reductions keep their dims (keepdims=1) so the row values broadcast back over the rows.
// f16/bf16 inputs are cast to f32 first and the result cast back (LayerNormalization's stash_type).
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of composite nodes rewritten; shapes are re-inferred.
int decompose_composites(Graph& graph);

}  // namespace tilefuse::passes
