// onnx::TensorProto -> Tensor, shared by initializers, Constant nodes, TENSOR attributes and
// TensorProto files. Frontend-internal: it exposes the onnx protobuf types.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "ir/tensor.h"

namespace tilefuse::frontend {

// Converts a TensorProto holding its data inline (raw_data or the typed field for its type).
// Throws UserError, prefixed with `where`, on an unsupported element type, external or
// segmented data, negative dims, or data whose size does not match the dims.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& where);

}  // namespace tilefuse::frontend
