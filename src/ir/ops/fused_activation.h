// The activation a FusedConv or FusedMatMul applies to each output value after its sum (and
// residual). Most activations a network puts right after a convolution are clamps of an affine
// function, sometimes times the input, so one form covers them (ONNX op -> fields):
//   Relu                      clamp(x, 0, inf)
//   Clip(min, max)            clamp(x, min, max)          (ReLU6 is Clip(0, 6))
//   HardSigmoid(alpha, beta)  clamp(alpha * x + beta, 0, 1)
//   HardSwish                 x * clamp(x / 6 + 0.5, 0, 1)
// The other forms are GELU, 0.5 x (1 + erf(x / sqrt 2)), which follows the first MatMul of every
// transformer MLP (BERT, ViT, ConvNeXt), its tanh approximation (GPT-2's),
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the sigmoid 1 / (1 + e^-x) and SiLU
// x / (1 + e^-x) (EfficientNet's and YOLO's convolutions, LLaMA's gate). The fused op keeps the
// activation's ONNX name in its `activation` attribute ("Gelu" for GELU, "GeluTanh" for the
// approximation: ONNX's Gelu with approximate = "tanh"; "Sigmoid"; "Silu", which ONNX writes as
// x * Sigmoid(x)) and the op's parameters in `activation_params` (Clip: min, max; HardSigmoid:
// alpha, beta), as ONNX Runtime's FusedConv.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace tilefuse {

struct FusedActivation {
  enum class Form { clamp, gelu, gelu_tanh, sigmoid, silu };
  Form form = Form::clamp;
  // The clamp form's fields (the other forms ignore them).
  float scale = 1.0f, shift = 0.0f;
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  bool times_input = false;

  bool identity() const;
  // In float for the runtime's scalar paths, in double for the reference interpreter.
  template <typename T> T operator()(T x) const {
    if (form == Form::gelu) return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
    if (form == Form::gelu_tanh) {
      return T(0.5) * x * (T(1) + std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)));
    }
    if (form == Form::sigmoid) return T(1) / (T(1) + std::exp(-x));
    if (form == Form::silu) return x * (T(1) / (T(1) + std::exp(-x)));
    T g = T(scale) * x + T(shift);
    g = g < T(lo) ? T(lo) : (g > T(hi) ? T(hi) : g);  // a NaN stays NaN
    return times_input ? x * g : g;
  }
};

// A fused op's activation from its attributes (`activation` and `activation_params`, each name
// after `prefix`: PointwiseDepthwiseConv's first activation is `pointwise_activation`): the
// identity when it has none. Fails naming the node for an activation name or a parameter count
// it does not know.
FusedActivation fused_activation(const Node& node, std::string_view prefix = "");

// The fused-op attributes (`activation`, `activation_params`) that compute `node`, an f32 op of
// one input; nullopt for an op it cannot express (another op, Clip with bounds that are not
// constant, a type other than f32).
std::optional<AttributeMap> activation_attributes(const Node& node);

}  // namespace tilefuse
