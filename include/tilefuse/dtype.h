// Element types of tensors. f16 and bf16 are stored as raw 16-bit patterns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tilefuse {

enum class DType : uint8_t { f32, f16, bf16, f64, i8, i32, i64, u8, boolean };

size_t dtype_size(DType t);
// The short name: "f32", "bool", ...
std::string_view dtype_name(DType t);

}  // namespace tilefuse
