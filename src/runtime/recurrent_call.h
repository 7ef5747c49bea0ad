// RNN, GRU and LSTM of f32 on the GEMM engine. The reference kernel multiplies every step of
// every batch row in double (an LSTM of 100 steps, batch 4, 256 -> 256 took 156 ms there, ONNX
// Runtime 2.3). Here the input's products for all steps are one sgemm per direction
// ([steps x batch, input] x W^T, with the biases that can be summed in its store), and each step
// multiplies the batch's hidden states by R^T at once, then computes the gates in f32, with the
// reference's rules: gate order (LSTM i, o, f, c; GRU z, r, h), per-batch sequence lengths
// (steps past a row's end leave its state alone and output zeros), initial states, both
// directions, both layouts, GRU's linear_before_reset either way.
// Taken: f32 operands, the default activations, no clip, LSTM without peepholes or
// input_forget; anything else stays on the reference kernel.
#pragma once

#include <memory>

#include "runtime/library_call.h"

namespace tilefuse::runtime {

bool recurrent_call_supports(const Node& node);

std::unique_ptr<LibraryCall> prepare_recurrent_call(const Node& node, const GemmBlocking& blocking);

}  // namespace tilefuse::runtime
