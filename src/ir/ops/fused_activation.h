// The activation a FusedConv applies to each output value after its sum (and residual): the
// activations a network puts right after a convolution are all clamps of an affine function,
// sometimes times the input, so one form covers them (ONNX op -> fields):
//   Relu                      clamp(x, 0, inf)
//   Clip(min, max)            clamp(x, min, max)          (ReLU6 is Clip(0, 6))
//   HardSigmoid(alpha, beta)  clamp(alpha * x + beta, 0, 1)
//   HardSwish                 x * clamp(x / 6 + 0.5, 0, 1)
// FusedConv keeps the ONNX op's name in its `activation` attribute and the op's parameters in
// `activation_params` (Clip: min, max; HardSigmoid: alpha, beta), as ONNX Runtime's FusedConv.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tilefuse {

struct ClampActivation {
  float scale = 1.0f, shift = 0.0f;
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  bool times_input = false;

  bool identity() const;
  float operator()(float x) const {
    float g = scale * x + shift;
    g = g < lo ? lo : (g > hi ? hi : g);  // a NaN stays NaN
    return times_input ? x * g : g;
  }
};

// FusedConv's activation from its attributes: the identity when it has none. Fails naming the
// node for an activation name or a parameter count it does not know.
ClampActivation fused_activation(const Node& node);

// The FusedConv attributes (`activation`, `activation_params`) that compute `node`, an f32 op of
// one input; nullopt for an op it cannot express (another op, Clip with bounds that are not
// constant, a type other than f32).
std::optional<AttributeMap> activation_attributes(const Node& node);

}  // namespace tilefuse
