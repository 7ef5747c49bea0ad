#include "ir/dtype.h"

#include <utility>

#include "ir/error.h"

namespace tilefuse {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::f64:
    case DType::i64:
      return 8;
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::i8:
    case DType::u8:
    case DType::boolean:
      return 1;
  }
  fail_internal("dtype_size: unknown dtype {}", static_cast<int>(t));
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f64: return "f64";
    case DType::i8: return "i8";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
    case DType::boolean: return "bool";
  }
  fail_internal("dtype_name: unknown dtype {}", static_cast<int>(t));
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == name) return t;
  }
  return std::nullopt;
}

namespace {
// Pairs of (ONNX TensorProto.DataType, DType).
constexpr std::pair<int, DType> kOnnxTypes[] = {
    {1, DType::f32}, {2, DType::u8},  {3, DType::i8},  {6, DType::i32},       {7, DType::i64},
    {9, DType::boolean}, {10, DType::f16}, {11, DType::f64}, {16, DType::bf16}};
}  // namespace

std::optional<DType> dtype_from_onnx(int onnx_type) {
  for (auto [code, t] : kOnnxTypes) {
    if (code == onnx_type) return t;
  }
  return std::nullopt;
}

int dtype_to_onnx(DType t) {
  for (auto [code, dt] : kOnnxTypes) {
    if (dt == t) return code;
  }
  fail_internal("dtype_to_onnx: unknown dtype {}", static_cast<int>(t));
}

bool is_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
}

bool is_integer(DType t) {
  return t == DType::i8 || t == DType::i32 || t == DType::i64 || t == DType::u8;
}

bool is_signed(DType t) { return is_float(t) || t == DType::i8 || t == DType::i32 || t == DType::i64; }

}  // namespace tilefuse
