// Reads the node tests' test_data_set_*/{input,output}_*.pb files.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace tilefuse::conformance {

// Reads a TensorProto data file whose graph input/output is declared with ONNX element type
// `declared_type`. onnx 1.12's generator writes bfloat16 data as UINT16 tensors (numpy has no
// bfloat16), a type the IR does not have; such a file is read as the bfloat16 bits it holds.
Tensor read_test_tensor(const std::string& path, int declared_type);

}  // namespace tilefuse::conformance
