#include "codegen/pointwise_expr.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "codegen/cpp_names.h"
#include "fusion/iteration_space.h"
#include "ir/error.h"

namespace tilefuse::codegen {

namespace {

struct ExprContext {
  const Node& node;
  const std::vector<std::string>& x;  // operand expressions
  const std::string& V;

  std::string lit(double v) const { return V + "(" + cpp_float_literal(v) + ")"; }
  std::string call(const std::string& fn, const std::string& a) const { return "tf::" + fn + "(" + a + ")"; }
  std::string binary(const std::string& op) const { return "(" + x[0] + " " + op + " " + x[1] + ")"; }
  // Integer arithmetic wraps (tilefuse_native.h) where C++ would overflow into undefined behaviour.
  bool integer() const { return node.input(0) != nullptr && is_integer(node.input(0)->dtype); }
  std::string arithmetic(const std::string& op, const std::string& wrapping) const {
    return integer() ? "tf::" + wrapping + "(" + x[0] + ", " + x[1] + ")" : binary(op);
  }
  bool has(size_t i) const { return i < x.size() && !x[i].empty(); }
};

// Pow with a constant scalar exponent gets exact, cheap forms for the common cases (x^2 in a
// decomposed LayerNorm); everything else goes through tf::pow.
bool has_cheap_pow_form(const Node& pow) {
  const Value* e = pow.input(1);
  if (!e->constant || e->constant->numel() != 1) return false;
  const double p = e->constant->get_f64(0);
  return p == 1.0 || p == 2.0 || p == 3.0 || p == 0.5;
}

std::string pow_expr(const ExprContext& c) {
  if (has_cheap_pow_form(c.node)) {
    const double p = c.node.input(1)->constant->get_f64(0);
    if (p == 1.0) return c.x[0];
    if (p == 2.0) return "(" + c.x[0] + " * " + c.x[0] + ")";
    if (p == 3.0) return "(" + c.x[0] + " * " + c.x[0] + " * " + c.x[0] + ")";
    return c.call("pow_half", c.x[0]);
  }
  return "tf::pow(" + c.x[0] + ", " + c.x[1] + ")";
}

std::string gelu_expr(const ExprContext& c) {
  const std::string& a = c.x[0];
  if (c.node.attr_string("approximate", "none") == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    return fmt::format("({h} * {a} * ({one} + tf::tanh({k} * ({a} + {c} * {a} * {a} * {a}))))", fmt::arg("a", a),
                       fmt::arg("h", c.lit(0.5)), fmt::arg("one", c.lit(1.0)), fmt::arg("k", c.lit(std::sqrt(2.0 / M_PI))),
                       fmt::arg("c", c.lit(0.044715)));
  }
  return fmt::format("({} * {} * ({} + tf::erf({} * {})))", c.lit(0.5), a, c.lit(1.0), a, c.lit(M_SQRT1_2));
}

std::string clip_expr(const ExprContext& c) {
  std::string out = c.x[0];
  if (c.has(1)) out = "tf::max(" + out + ", " + c.x[1] + ")";
  if (c.has(2)) out = "tf::min(" + out + ", " + c.x[2] + ")";
  return out;
}

// fn(fn(x0, x1), x2)...; "add" writes a plain sum.
std::string fold_expr(const ExprContext& c, const std::string& fn) {
  std::string out = c.x[0];
  for (size_t i = 1; i < c.x.size(); ++i) {
    out = fn == "add" ? "(" + out + " + " + c.x[i] + ")" : "tf::" + fn + "(" + out + ", " + c.x[i] + ")";
  }
  return out;
}

std::string cast_expr(const ExprContext& c) {
  DType from = c.node.input(0)->dtype;
  DType to = c.node.outputs[0]->dtype;
  if (from == to) return c.x[0];
  if (!fusion::is_lane_dtype(from) || !fusion::is_lane_dtype(to)) {
    return "tf::convert<" + cpp_storage_type(to) + ">(" + c.x[0] + ")";  // integer or f64 side
  }
  if (to == DType::boolean) return "(" + c.x[0] + " != " + c.lit(0.0) + ")";
  if (from == DType::boolean) return "tf::select(" + c.x[0] + ", " + c.lit(1.0) + ", " + c.lit(0.0) + ")";
  if (to == DType::f16) return "tf::round_to<tf::f16>(" + c.x[0] + ")";
  if (to == DType::bf16) return "tf::round_to<tf::bf16>(" + c.x[0] + ")";
  return c.x[0];  // to f32 from f16/bf16: already exact in f32
}

std::string is_inf_expr(const ExprContext& c) {
  const bool negative = c.node.attr_int("detect_negative", 1) != 0, positive = c.node.attr_int("detect_positive", 1) != 0;
  const std::string inf = c.lit(INFINITY), a = c.x[0];
  if (positive && negative) return "(tf::abs(" + a + ") == " + inf + ")";
  if (positive) return "(" + a + " == " + inf + ")";
  if (negative) return "(" + a + " == -" + inf + ")";
  return "(" + a + " < " + a + ")";  // detects nothing: false for every value, NaN included
}

// Sign keeps zeros (and their sign) and NaN as they are.
std::string sign_expr(const ExprContext& c) {
  return fmt::format("tf::select({a} > {z}, {one}, tf::select({a} < {z}, -{one}, {a}))", fmt::arg("a", c.x[0]),
                     fmt::arg("z", c.lit(0.0)), fmt::arg("one", c.lit(1.0)));
}

std::string selu_expr(const ExprContext& c) {
  return fmt::format("({g} * tf::select({a} > {z}, {a}, {al} * (tf::exp({a}) - {one})))", fmt::arg("a", c.x[0]),
                     fmt::arg("z", c.lit(0.0)), fmt::arg("one", c.lit(1.0)),
                     fmt::arg("al", c.lit(c.node.attr_float("alpha", 1.67326319217681884765625))),
                     fmt::arg("g", c.lit(c.node.attr_float("gamma", 1.05070102214813232421875))));
}

std::string celu_expr(const ExprContext& c) {
  const double alpha = c.node.attr_float("alpha", 1.0);
  return fmt::format("(tf::max({z}, {a}) + tf::min({z}, {al} * (tf::exp({a} * {inv}) - {one})))", fmt::arg("a", c.x[0]),
                     fmt::arg("z", c.lit(0.0)), fmt::arg("one", c.lit(1.0)), fmt::arg("al", c.lit(alpha)),
                     fmt::arg("inv", c.lit(1.0 / alpha)));
}

std::string thresholded_relu_expr(const ExprContext& c) {
  return fmt::format("tf::select({a} > {al}, {a}, {z})", fmt::arg("a", c.x[0]), fmt::arg("z", c.lit(0.0)),
                     fmt::arg("al", c.lit(c.node.attr_float("alpha", 1.0))));
}

// Between the bounds x * 0: 0 as the reference gives, and NaN for NaN, which both tests miss.
std::string shrink_expr(const ExprContext& c) {
  const double lambd = c.node.attr_float("lambd", 0.5), bias = c.node.attr_float("bias", 0.0);
  return fmt::format("tf::select({a} < {lo}, {a} + {b}, tf::select({a} > {hi}, {a} - {b}, {a} * {z}))",
                     fmt::arg("a", c.x[0]), fmt::arg("lo", c.lit(-lambd)), fmt::arg("hi", c.lit(lambd)),
                     fmt::arg("b", c.lit(bias)), fmt::arg("z", c.lit(0.0)));
}

// Integer division by a constant, non-zero divisor (the planner's rule); f64 divides plainly.
std::string div_expr(const ExprContext& c) {
  return c.integer() ? "tf::int_div(" + c.x[0] + ", " + c.x[1] + ")" : c.binary("/");
}

std::string mod_expr(const ExprContext& c) {
  const std::string python = c.node.attr_int("fmod", 0) != 0 ? "false" : "true";
  return fmt::format("tf::{}<{}>({}, {})", c.integer() ? "int_mod" : "float_mod", python, c.x[0], c.x[1]);
}

std::string mean_expr(const ExprContext& c) {
  return "(" + fold_expr(c, "add") + " * " + c.lit(1.0 / static_cast<double>(c.x.size())) + ")";
}

using ExprFn = std::function<std::string(const ExprContext&)>;

const std::map<std::string, ExprFn, std::less<>>& expr_table() {
  static const std::map<std::string, ExprFn, std::less<>> table = {
      {"Add", [](const ExprContext& c) { return c.arithmetic("+", "wrap_add"); }},
      {"Sub", [](const ExprContext& c) { return c.arithmetic("-", "wrap_sub"); }},
      {"Mul", [](const ExprContext& c) { return c.arithmetic("*", "wrap_mul"); }},
      {"Div", div_expr},
      {"Mod", mod_expr},
      {"Pow", pow_expr},
      {"Neg", [](const ExprContext& c) { return c.integer() ? c.call("wrap_neg", c.x[0]) : "(-" + c.x[0] + ")"; }},
      {"Abs", [](const ExprContext& c) { return c.call(c.integer() ? "int_abs" : "abs", c.x[0]); }},
      {"Exp", [](const ExprContext& c) { return c.call("exp", c.x[0]); }},
      {"Log", [](const ExprContext& c) { return c.call("log", c.x[0]); }},
      {"Sqrt", [](const ExprContext& c) { return c.call("sqrt", c.x[0]); }},
      {"Reciprocal", [](const ExprContext& c) { return "(" + c.lit(1.0) + " / " + c.x[0] + ")"; }},
      {"Floor", [](const ExprContext& c) { return c.call("floor", c.x[0]); }},
      {"Ceil", [](const ExprContext& c) { return c.call("ceil", c.x[0]); }},
      {"Relu", [](const ExprContext& c) { return "tf::max(" + c.x[0] + ", " + c.lit(0.0) + ")"; }},
      {"LeakyRelu",
       [](const ExprContext& c) {
         return fmt::format("tf::select({a} < {z}, {al} * {a}, {a})", fmt::arg("a", c.x[0]), fmt::arg("z", c.lit(0.0)),
                            fmt::arg("al", c.lit(c.node.attr_float("alpha", 0.01))));
       }},
      {"Elu",
       [](const ExprContext& c) {
         return fmt::format("tf::select({a} < {z}, {al} * (tf::exp({a}) - {one}), {a})", fmt::arg("a", c.x[0]),
                            fmt::arg("z", c.lit(0.0)), fmt::arg("one", c.lit(1.0)),
                            fmt::arg("al", c.lit(c.node.attr_float("alpha", 1.0))));
       }},
      {"Sigmoid", [](const ExprContext& c) { return c.call("sigmoid", c.x[0]); }},
      {"HardSigmoid",
       [](const ExprContext& c) {
         return fmt::format("tf::max({z}, tf::min({one}, {al} * {a} + {be}))", fmt::arg("a", c.x[0]),
                            fmt::arg("z", c.lit(0.0)), fmt::arg("one", c.lit(1.0)),
                            fmt::arg("al", c.lit(c.node.attr_float("alpha", 0.2))),
                            fmt::arg("be", c.lit(c.node.attr_float("beta", 0.5))));
       }},
      {"HardSwish",
       [](const ExprContext& c) {
         return fmt::format("({a} * tf::max({z}, tf::min({one}, {a} * {s} + {h})))", fmt::arg("a", c.x[0]),
                            fmt::arg("z", c.lit(0.0)), fmt::arg("one", c.lit(1.0)), fmt::arg("s", c.lit(1.0 / 6.0)),
                            fmt::arg("h", c.lit(0.5)));
       }},
      {"Softplus", [](const ExprContext& c) { return c.call("softplus", c.x[0]); }},
      {"Tanh", [](const ExprContext& c) { return c.call("tanh", c.x[0]); }},
      {"Erf", [](const ExprContext& c) { return c.call("erf", c.x[0]); }},
      {"Gelu", gelu_expr},
      {"Clip", clip_expr},
      {"Min", [](const ExprContext& c) { return fold_expr(c, "min"); }},
      {"Max", [](const ExprContext& c) { return fold_expr(c, "max"); }},
      {"Where", [](const ExprContext& c) { return "tf::select(" + c.x[0] + ", " + c.x[1] + ", " + c.x[2] + ")"; }},
      {"Equal", [](const ExprContext& c) { return c.binary("=="); }},
      {"Less", [](const ExprContext& c) { return c.binary("<"); }},
      {"Greater", [](const ExprContext& c) { return c.binary(">"); }},
      {"LessOrEqual", [](const ExprContext& c) { return c.binary("<="); }},
      {"GreaterOrEqual", [](const ExprContext& c) { return c.binary(">="); }},
      {"Not", [](const ExprContext& c) { return c.call("logical_not", c.x[0]); }},
      {"And", [](const ExprContext& c) { return "tf::logical_and(" + c.x[0] + ", " + c.x[1] + ")"; }},
      {"Or", [](const ExprContext& c) { return "tf::logical_or(" + c.x[0] + ", " + c.x[1] + ")"; }},
      {"Xor", [](const ExprContext& c) { return "tf::logical_xor(" + c.x[0] + ", " + c.x[1] + ")"; }},
      {"Cast", cast_expr},
      {"Identity", [](const ExprContext& c) { return c.x[0]; }},
      {"Dropout", [](const ExprContext& c) { return c.x[0]; }},
      {"IsNaN", [](const ExprContext& c) { return c.call("isnan", c.x[0]); }},
      {"IsInf", is_inf_expr},
      {"Sign", sign_expr},
      {"Round", [](const ExprContext& c) { return c.call("round_even", c.x[0]); }},
      {"Sin", [](const ExprContext& c) { return c.call("sin", c.x[0]); }},
      {"Cos", [](const ExprContext& c) { return c.call("cos", c.x[0]); }},
      {"Tan", [](const ExprContext& c) { return c.call("tan", c.x[0]); }},
      {"Asin", [](const ExprContext& c) { return c.call("asin", c.x[0]); }},
      {"Acos", [](const ExprContext& c) { return c.call("acos", c.x[0]); }},
      {"Atan", [](const ExprContext& c) { return c.call("atan", c.x[0]); }},
      {"Sinh", [](const ExprContext& c) { return c.call("sinh", c.x[0]); }},
      {"Cosh", [](const ExprContext& c) { return c.call("cosh", c.x[0]); }},
      {"Asinh", [](const ExprContext& c) { return c.call("asinh", c.x[0]); }},
      {"Acosh", [](const ExprContext& c) { return c.call("acosh", c.x[0]); }},
      {"Atanh", [](const ExprContext& c) { return c.call("atanh", c.x[0]); }},
      {"Softsign", [](const ExprContext& c) { return "(" + c.x[0] + " / (" + c.lit(1.0) + " + tf::abs(" + c.x[0] + ")))"; }},
      {"ThresholdedRelu", thresholded_relu_expr},
      {"Shrink", shrink_expr},
      {"PRelu",
       [](const ExprContext& c) {
         return fmt::format("tf::select({a} < {z}, {s} * {a}, {a})", fmt::arg("a", c.x[0]), fmt::arg("s", c.x[1]),
                            fmt::arg("z", c.lit(0.0)));
       }},
      {"Selu", selu_expr},
      {"Celu", celu_expr},
      {"Mish", [](const ExprContext& c) { return "(" + c.x[0] + " * tf::tanh(tf::softplus(" + c.x[0] + ")))"; }},
      {"Sum", [](const ExprContext& c) { return fold_expr(c, "add"); }},
      {"Mean", mean_expr},
  };
  return table;
}

}  // namespace

std::string pointwise_expr(const Node& node, const std::vector<std::string>& operands, const std::string& value_type) {
  auto it = expr_table().find(node.op);
  if (it == expr_table().end()) fail_internal("code generation: no expression for {}", node.describe());
  return it->second(ExprContext{node, operands, value_type});
}

bool has_pointwise_expr(const std::string& op) { return expr_table().count(op) != 0; }

bool calls_vector_math(const Node& node) {
  return fusion::vector_math_op_types().count(node.op) != 0 || (node.op == "Pow" && !has_cheap_pow_form(node));
}

}  // namespace tilefuse::codegen
