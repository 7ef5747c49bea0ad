// Which ONNX opsets and ops we import, and bringing a model's default-domain opset to the one
// our IR speaks (17). Opsets 13-17 are taken as they are; 19 to 23 (PyTorch's exporters write 20
// by default) are read as 18, and 18 is rewritten to its opset-17 form (onnx 1.12, our parser,
// knows neither); older opsets go through onnx's version converter.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

namespace tilefuse::frontend {

inline constexpr int kTargetOpset = 17;
inline constexpr int kMinNativeOpset = 13;
inline constexpr int kMaxOpset = 23;

// The default-domain ("" / "ai.onnx") opset the model imports; an error when it imports none or
// one newer than kMaxOpset.
int default_domain_opset(const onnx::ModelProto& model, const std::string& origin);

// Throws one UserError listing every node whose op we do not import, each as
// "<origin>: unsupported op 'NonZero' (node 'nz_3', domain 'ai.onnx', opset 17)".
void check_ops_supported(const onnx::ModelProto& model, const std::string& origin);

// Before the checker: reads an opset 19-23 model as opset 18. Their changes that matter to us
// are float8 and 4-bit types (rejected), Cast's `saturate` (dropped: it only concerns float8),
// AveragePool's `dilations` (dropped when all 1) and the new op Gelu (moved to domain
// com.microsoft, which maps to our Gelu); ops whose newer form means something else in opset 18
// are rejected, and ops new in 23 (Attention, RMSNormalization, ...) are unsupported ops.
void adapt_opset20_to_18(onnx::ModelProto& model, const std::string& origin);

// Before the checker: rewrites opset-18 forms (Reduce* with an `axes` input) to opset 17.
void adapt_opset18_to_17(onnx::ModelProto& model, const std::string& origin);

// After the checker: converts opsets below 13 to 17 with onnx's version converter.
void convert_old_opset(onnx::ModelProto& model, const std::string& origin);

// The IR op a node maps to: its op type, except com.microsoft Gelu -> our Gelu.
std::string ir_op_name(const onnx::NodeProto& node);

}  // namespace tilefuse::frontend
