// Folds what a network does right after a convolution into it, so the GEMM engine computes it
// on each output tile while the tile is in cache instead of a separate kernel reading the whole
// output back:
//   Conv + Add(residual)             -> FusedConv(X, W, B, Z = residual)
//   Conv [+ Add] + Relu / Clip / HardSigmoid / HardSwish / Sigmoid / Gelu -> FusedConv with that
//   activation, also SiLU and GELU written out (passes/written_activation.h)
// (ResNet's conv + add + relu, MobileNet's conv + hardswish, ReLU6 everywhere, EfficientNet's and
// YOLO's conv + x * sigmoid(x)). Conditions: an f32 Conv whose output only that op (or the
// written-out activation's ops) reads, and is not a graph output; an Add whose other operand has
// the output's shape exactly (no broadcast); a Clip with constant bounds.
#pragma once

#include "ir/graph.h"

namespace tilefuse::passes {

// Returns the number of Adds and activations folded away; shapes are re-inferred.
int fold_conv_epilogues(Graph& graph);

}  // namespace tilefuse::passes
