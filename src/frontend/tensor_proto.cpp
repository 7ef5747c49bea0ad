#include "frontend/tensor_proto.h"

#include <cstring>

#include "io/file_reading.h"
#include "frontend/tensor_proto_conversion.h"
#include "ir/checked_size.h"
#include "ir/error.h"

namespace tilefuse::frontend {

namespace {

std::string tensor_label(const onnx::TensorProto& proto, const std::string& where) {
  return proto.name().empty() ? where : fmt::format("{}: tensor '{}'", where, proto.name());
}

// The typed field an element type is stored in when raw_data is absent, and its length.
// int32_data carries every type of 32 bits or less (f16/bf16 as their bit patterns).
std::pair<const char*, int64_t> typed_field(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::f32: return {"float_data", proto.float_data_size()};
    case DType::f64: return {"double_data", proto.double_data_size()};
    case DType::i64: return {"int64_data", proto.int64_data_size()};
    default: return {"int32_data", proto.int32_data_size()};
  }
}

// raw_data is the little-endian element bytes (ONNX spec); our hosts are little-endian too.
Tensor from_raw(const onnx::TensorProto& proto, DType dtype, std::vector<int64_t> dims, int64_t numel,
                const std::string& label) {
  const std::string& raw = proto.raw_data();
  size_t elem = dtype_size(dtype);
  if (raw.size() % elem != 0 || static_cast<int64_t>(raw.size() / elem) != numel) {
    fail_user("{}: raw_data has {} bytes but the dims need {} elements of {} bytes", label, raw.size(), numel,
              elem);
  }
  Tensor t(dtype, std::move(dims));
  if (!raw.empty()) std::memcpy(t.raw(), raw.data(), raw.size());
  if (dtype == DType::boolean) {
    for (int64_t i = 0; i < numel; ++i) t.data<uint8_t>()[i] = t.data<uint8_t>()[i] != 0;
  }
  return t;
}

// Checks the element count before allocating, so hostile dims never trigger a huge allocation.
Tensor from_typed_fields(const onnx::TensorProto& proto, DType dtype, std::vector<int64_t> dims, int64_t numel,
                         const std::string& label) {
  auto [field, count] = typed_field(proto, dtype);
  if (count != numel) fail_user("{}: {} holds {} elements but the dims say {}", label, field, count, numel);
  Tensor t(dtype, std::move(dims));
  switch (dtype) {
    case DType::f32:
      for (int64_t i = 0; i < numel; ++i) t.data<float>()[i] = proto.float_data(static_cast<int>(i));
      break;
    case DType::f64:
      for (int64_t i = 0; i < numel; ++i) t.data<double>()[i] = proto.double_data(static_cast<int>(i));
      break;
    case DType::i64:
      for (int64_t i = 0; i < numel; ++i) t.data<int64_t>()[i] = proto.int64_data(static_cast<int>(i));
      break;
    case DType::f16:
    case DType::bf16:
      for (int64_t i = 0; i < numel; ++i) {
        t.data<uint16_t>()[i] = static_cast<uint16_t>(proto.int32_data(static_cast<int>(i)));
      }
      break;
    case DType::i32:
    case DType::i8:
    case DType::u8:
    case DType::boolean:
      for (int64_t i = 0; i < numel; ++i) t.set_i64(i, proto.int32_data(static_cast<int>(i)));
      break;
  }
  return t;
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& where) {
  std::string label = tensor_label(proto, where);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    fail_user("{}: external tensor data is not supported; save the model with its data inline", label);
  }
  if (proto.has_segment()) fail_user("{}: segmented tensors are not supported", label);
  std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype) {
    fail_user("{}: element type {} ({}) is not supported", label, proto.data_type(),
              onnx::TensorProto::DataType_IsValid(proto.data_type())
                  ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(proto.data_type()))
                  : "unknown");
  }
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  const int64_t numel = static_cast<int64_t>(checked_nbytes(*dtype, dims, label) / dtype_size(*dtype));
  if (proto.has_raw_data()) return from_raw(proto, *dtype, std::move(dims), numel, label);
  return from_typed_fields(proto, *dtype, std::move(dims), numel, label);
}

Tensor read_tensor_proto_file(const std::string& path, std::string* name_out) {
  std::string bytes = io::read_file(path);
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) fail_user("{}: not a valid serialized ONNX TensorProto", path);
  Tensor t = tensor_from_proto(proto, path);
  if (name_out != nullptr) *name_out = proto.name();
  return t;
}

}  // namespace tilefuse::frontend
