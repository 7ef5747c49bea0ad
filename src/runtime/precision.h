// The precision matrix products are computed in (`--precision`, TILEFUSE_PRECISION): MatMul,
// Gemm and the convolutions on the GEMM engine. f32 is exact to the model. bf16 multiplies GEMM
// operands rounded to bf16 (8 significant bits) and sums in f32: the weights are converted once,
// when a call is prepared, and activations as they are packed, so no pass over memory is added;
// twice the multiplications per instruction on CPUs with avx512_bf16 (elsewhere bf16 falls back
// to f32 with a warning). Tensors between steps, depthwise convolutions, stems and every other op
// stay f32 for now.
#pragma once

#include <string_view>

namespace tilefuse::runtime {

enum class Precision { f32, bf16 };

// "f32" or "bf16"; anything else is a UserError naming `what` (the flag or variable).
Precision parse_precision(std::string_view text, std::string_view what);
const char* precision_name(Precision precision);
// TILEFUSE_PRECISION, or f32 when it is unset or empty.
Precision precision_from_environment();
// The precision products really run in here: bf16 only where the CPU multiplies bf16 (warns once
// where it was asked for and cannot be).
Precision effective_precision(Precision asked);

}  // namespace tilefuse::runtime
