// Element types of tensors (the enum is public: include/tilefuse/dtype.h) and what the IR asks of
// them. f16/bf16 are stored as raw 16-bit patterns; arithmetic on them is done in f32 (half.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tilefuse/dtype.h"

namespace tilefuse {

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16,
                                       DType::f64, DType::i8,  DType::i32,
                                       DType::i64, DType::u8,  DType::boolean};

std::optional<DType> parse_dtype(std::string_view name);

// ONNX TensorProto.DataType numbers (Cast's `to`, ConstantOfShape, .pb files). Unsupported
// ONNX types (string, complex, u16, ...) give nullopt.
std::optional<DType> dtype_from_onnx(int onnx_type);
int dtype_to_onnx(DType t);

bool is_float(DType t);    // f32 f16 bf16 f64
bool is_integer(DType t);  // i8 i32 i64 u8
bool is_signed(DType t);

}  // namespace tilefuse
