// ONNX external tensor data: initializers whose bytes live in a file next to the model (what
// PyTorch's dynamo exporter writes for every weight of about 1 KiB or more, as MODEL.onnx.data).
// The data is read into the TensorProto, so the rest of the import sees an ordinary model.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

namespace tilefuse::frontend {

// Loads every external initializer of `model` from files under `model_dir`. A location must be a
// relative path inside model_dir (no "..", not absolute); offset/length must lie inside the
// file. Throws UserError naming the model, the initializer and the rule.
void load_external_data(onnx::ModelProto& model, const std::string& model_dir, const std::string& origin);

}  // namespace tilefuse::frontend
