// Finds an activation written out in elementwise ops after a value x, as PyTorch's exporters
// write the ones ONNX has no op for (before opset 20 for GELU): TorchScript's
// 0.5 * x * (1 + erf(x / sqrt 2)), dynamo's x * (0.5 * (1 + ...)), GPT-2's
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), SiLU's x * Sigmoid(x). They are
// recognised by what they compute, not by how their ops are arranged: the ops that compute a
// function of each element of x alone (x, scalar constants and each other in) are evaluated by
// the reference interpreter on points across and beyond the activations' curved parts and
// compared with each activation a fused GEMM or convolution applies (ir/ops/fused_activation.h):
// GELU, its tanh approximation, SiLU and the sigmoid.
#pragma once

#include <optional>

#include "ir/graph.h"

namespace tilefuse::passes {

struct WrittenActivation {
  Value* out = nullptr;  // the activation's result
  AttributeMap attrs;    // the fused op's `activation`
};

// The longest function of x that is one of those activations and that nothing else reads into:
// every reader of x and of the values on the way is one of its ops, and only `out` leaves them.
std::optional<WrittenActivation> written_activation(const Graph& graph, const Value* x);

}  // namespace tilefuse::passes
