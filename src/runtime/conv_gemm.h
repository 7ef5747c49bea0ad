// Conv (1-D and 2-D, f32) as matrix multiplies: the input is unfolded (im2col) into a
// [C/group * kernel, output positions] matrix per image and group, which OpenBLAS's sgemm
// multiplies by the [M/group, C/group * kernel] weight. A 1x1 convolution with stride 1 and no
// padding multiplies the input directly. The speed of this path belongs to the GEMM/convolution
// work; here it makes CNNs run at library speed instead of the reference interpreter's.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tilefuse::runtime {

// True for a Conv this path runs: f32 throughout, 1 or 2 spatial dims.
bool conv_gemm_supports(const Node& node);

// Computes the Conv into `output` (preallocated, the inferred shape).
void run_conv_gemm(const Node& node, const std::vector<Tensor>& inputs, Tensor& output);

}  // namespace tilefuse::runtime
