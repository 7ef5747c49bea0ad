// Folds an inference BatchNormalization with constant statistics into the Conv, Gemm or 2-D
// MatMul before it, when that op's weights are constant and the BatchNormalization is its only
// reader: the per-channel scale goes into the weights and the shift into the bias, so the
// normalisation costs nothing at run time.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of BatchNormalization nodes folded away; shapes are re-inferred.
int fold_batch_norms(Graph& graph);

}  // namespace tilefuse::passes
