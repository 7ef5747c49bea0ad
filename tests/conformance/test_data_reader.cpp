#include "conformance/test_data_reader.h"

#include <fstream>

// The onnx headers need these to pick the same protobuf classes the library was built with.
#define ONNX_NAMESPACE onnx
#define ONNX_ML 1
#include <onnx/onnx_pb.h>

#include "frontend/tensor_proto.h"
// Frontend-internal, used here for the one proto we must patch before converting.
#include "frontend/tensor_proto_conversion.h"
#include "ir/error.h"

namespace tilefuse::conformance {

Tensor read_test_tensor(const std::string& path, int declared_type) {
  if (declared_type != onnx::TensorProto::BFLOAT16) return frontend::read_tensor_proto_file(path);
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto proto;
  if (!in || !proto.ParseFromIstream(&in)) fail_user("cannot parse '{}' as an ONNX TensorProto", path);
  // Same bits either way: both types keep 16-bit patterns in raw_data or int32_data.
  if (proto.data_type() == onnx::TensorProto::UINT16) proto.set_data_type(onnx::TensorProto::BFLOAT16);
  return frontend::tensor_from_proto(proto, path);
}

}  // namespace tilefuse::conformance
