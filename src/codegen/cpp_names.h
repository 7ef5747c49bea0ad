// C++ spellings used by the emitters: identifiers from tensor names, symbolic dims as C++
// integer expressions, storage types of dtypes, float literals that round-trip.
#pragma once

#include <string>

#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace tilefuse::codegen {

// A valid C++ identifier derived from `name` (non-alphanumerics become '_').
std::string cpp_identifier(const std::string& name);
// The C++ variable holding a symbol's run-time value: "sym_N".
std::string symbol_variable(const std::string& symbol);
// An int64_t expression: constants as literals, symbols as symbol_variable(), floordiv/mod/max/min
// through the helpers of tilefuse_kernel.h.
std::string cpp_int_expr(const Dim& dim);
// The element storage type in generated code: float, tf::f16, tf::bf16, bool, double, int64_t...
std::string cpp_storage_type(DType dtype);
// The type a value of `dtype` is computed in: its storage type, but float for f16/bf16.
std::string cpp_compute_type(DType dtype);
// A float literal that reads back as exactly `value` rounded to f32 ("0.5f", "-inff" spelled as
// a helper call, NaN likewise).
std::string cpp_float_literal(double value);

}  // namespace tilefuse::codegen
