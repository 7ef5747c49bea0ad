// onnx.TensorProto <-> Tensor. Used for initializers, Constant nodes and the ONNX backend test
// data files (test_data_set_*/input_*.pb).
#pragma once

#include <string>

#include "ir/tensor.h"

namespace tilefuse::frontend {

// Reads a serialized TensorProto file; throws UserError naming the file on a bad file or an
// unsupported element type. `name_out`, if given, receives the tensor's name.
Tensor read_tensor_proto_file(const std::string& path, std::string* name_out = nullptr);

}  // namespace tilefuse::frontend
