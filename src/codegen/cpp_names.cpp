#include "codegen/cpp_names.h"

#include <cctype>
#include <cmath>

#include "ir/error.h"

namespace tilefuse::codegen {

std::string cpp_identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t_" + out;
  return out;
}

std::string symbol_variable(const std::string& symbol) { return "sym_" + cpp_identifier(symbol); }

std::string cpp_int_expr(const Dim& dim) {
  using Kind = SymExpr::Kind;
  const auto& ops = dim.operands();
  auto joined = [&](const char* op) {
    std::string out = "(" + cpp_int_expr(ops[0]);
    for (size_t i = 1; i < ops.size(); ++i) out += std::string(" ") + op + " " + cpp_int_expr(ops[i]);
    return out + ")";
  };
  switch (dim.kind()) {
    case Kind::Const: return fmt::format("int64_t{{{}}}", dim.value());
    case Kind::Sym: return symbol_variable(dim.name());
    case Kind::Add: return joined("+");
    case Kind::Mul: return joined("*");
    case Kind::FloorDiv: return fmt::format("tf::floordiv({}, {})", cpp_int_expr(ops[0]), cpp_int_expr(ops[1]));
    case Kind::Mod: return fmt::format("tf::mod({}, {})", cpp_int_expr(ops[0]), cpp_int_expr(ops[1]));
    case Kind::Max: return fmt::format("std::max({}, {})", cpp_int_expr(ops[0]), cpp_int_expr(ops[1]));
    case Kind::Min: return fmt::format("std::min({}, {})", cpp_int_expr(ops[0]), cpp_int_expr(ops[1]));
  }
  fail_internal("cpp_int_expr: unknown kind");
}

std::string cpp_storage_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return "float";
    case DType::f16: return "tf::f16";
    case DType::bf16: return "tf::bf16";
    case DType::boolean: return "bool";
    case DType::f64: return "double";
    case DType::i8: return "int8_t";
    case DType::i32: return "int32_t";
    case DType::i64: return "int64_t";
    case DType::u8: return "uint8_t";
  }
  fail_internal("generated kernels do not store {}", dtype_name(dtype));
}

std::string cpp_compute_type(DType dtype) {
  return dtype == DType::f16 || dtype == DType::bf16 ? "float" : cpp_storage_type(dtype);
}

std::string cpp_float_literal(double value) {
  float f = static_cast<float>(value);
  if (std::isnan(f)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(f)) return f > 0 ? "std::numeric_limits<float>::infinity()" : "-std::numeric_limits<float>::infinity()";
  // %a (hex float) is exact; a decimal with 9 significant digits also round-trips and reads better.
  std::string text = fmt::format("{:.9g}", f);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

}  // namespace tilefuse::codegen
