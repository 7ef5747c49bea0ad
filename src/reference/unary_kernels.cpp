// Elementwise kernels of one tensor operand: math functions, activations, Neg/Abs/Relu, Not, Clip.
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <type_traits>

#include "reference/element_types.h"
#include "reference/integer_math.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

// y[i] = fn(x[i]) for x of element type E, computed in E's compute type (f32 for f16/bf16).
template <typename E, typename Fn>
Tensor map_typed(const Tensor& x, Fn fn) {
  using C = typename E::Compute;
  Tensor y(x.dtype(), x.shape());
  const auto* in = x.data<typename E::Storage>();
  auto* out = y.data<typename E::Storage>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = E::store(static_cast<C>(fn(E::load(in[i]))));
  return y;
}

template <TypeSet set, typename Fn>
Tensor map_elements(const Node& node, const Tensor& x, Fn fn) {
  return visit_dtype<set>(node, x.dtype(), [&](auto elem) { return map_typed<decltype(elem)>(x, fn); });
}

// Registers a kernel applying the function `make(node)` returns (a generic lambda over the
// compute type) to input 0; `check` rejects element types the op does not accept.
template <TypeSet set, typename Make>
void add_map(KernelTable& table, const char* op, Make make,
             void (*check)(const Node&, const Tensor&) = nullptr) {
  table[op] = [make, check](const Node& node, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    const Tensor& x = required_input(node, in, 0);
    if (check != nullptr) check(node, x);
    return {map_elements<set>(node, x, make(node))};
  };
}

void check_signed(const Node& node, const Tensor& x) {
  require_dtype(node, x, {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::i32, DType::i64},
                "input 0");
}

void check_bool(const Node& node, const Tensor& x) { require_dtype(node, x, {DType::boolean}, "input 0"); }

// A kernel with no attributes: `fn` is used as is.
template <typename Fn>
auto plain(Fn fn) {
  return [fn](const Node&) { return fn; };
}

void add_math_kernels(KernelTable& t) {
  add_map<TypeSet::Float>(t, "Exp", plain([](auto x) { return std::exp(x); }));
  add_map<TypeSet::Float>(t, "Log", plain([](auto x) { return std::log(x); }));
  add_map<TypeSet::Float>(t, "Sqrt", plain([](auto x) { return std::sqrt(x); }));
  add_map<TypeSet::Float>(t, "Reciprocal", plain([](auto x) { return decltype(x)(1) / x; }));
  add_map<TypeSet::Float>(t, "Floor", plain([](auto x) { return std::floor(x); }));
  add_map<TypeSet::Float>(t, "Ceil", plain([](auto x) { return std::ceil(x); }));
  add_map<TypeSet::Float>(t, "Tanh", plain([](auto x) { return std::tanh(x); }));
  add_map<TypeSet::Float>(t, "Erf", plain([](auto x) { return std::erf(x); }));
  add_map<TypeSet::Float>(t, "Sin", plain([](auto x) { return std::sin(x); }));
  add_map<TypeSet::Float>(t, "Cos", plain([](auto x) { return std::cos(x); }));
  add_map<TypeSet::Float>(t, "Tan", plain([](auto x) { return std::tan(x); }));
  add_map<TypeSet::Float>(t, "Asin", plain([](auto x) { return std::asin(x); }));
  add_map<TypeSet::Float>(t, "Acos", plain([](auto x) { return std::acos(x); }));
  add_map<TypeSet::Float>(t, "Atan", plain([](auto x) { return std::atan(x); }));
  add_map<TypeSet::Float>(t, "Sinh", plain([](auto x) { return std::sinh(x); }));
  add_map<TypeSet::Float>(t, "Cosh", plain([](auto x) { return std::cosh(x); }));
  add_map<TypeSet::Float>(t, "Asinh", plain([](auto x) { return std::asinh(x); }));
  add_map<TypeSet::Float>(t, "Acosh", plain([](auto x) { return std::acosh(x); }));
  add_map<TypeSet::Float>(t, "Atanh", plain([](auto x) { return std::atanh(x); }));
  // Halves round to even, as numpy.round (the default floating-point rounding mode).
  add_map<TypeSet::Float>(t, "Round", plain([](auto x) { return std::nearbyint(x); }));
  add_map<TypeSet::Numeric>(t, "Sign", plain([](auto x) {
    using T = decltype(x);
    if (x != x) return x;  // NaN stays NaN
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
  }));
  add_map<TypeSet::Numeric>(t, "Neg", plain([](auto x) { return wrap_neg(x); }), check_signed);
  add_map<TypeSet::Numeric>(t, "Abs", plain([](auto x) {
    if constexpr (std::is_signed_v<decltype(x)>) return x < 0 ? wrap_neg(x) : x;
    else return x;
  }));
  add_map<TypeSet::Any>(t, "Not", plain([](auto x) { return !x; }), check_bool);
}

void add_activation_kernels(KernelTable& t) {
  // NaN stays NaN, as max(0, x) in ONNX's reference, PyTorch and ONNX Runtime (`x > 0 ? x : 0`
  // made it 0: a fused kernel's NaN, from the mean of an empty set, then differed).
  add_map<TypeSet::Numeric>(t, "Relu", plain([](auto x) { return x > 0 || x != x ? x : decltype(x)(0); }),
                            check_signed);
  // Both branches of the logistic function avoid overflow of exp for large |x|.
  add_map<TypeSet::Float>(t, "Sigmoid", plain([](auto x) {
    using T = decltype(x);
    return x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
  }));
  // log(1 + exp(x)), written so that exp never overflows.
  add_map<TypeSet::Float>(t, "Softplus", plain([](auto x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }));
  add_map<TypeSet::Float>(t, "LeakyRelu", [](const Node& n) {
    double alpha = n.attr_float("alpha", 0.01);
    return [alpha](auto x) { return x < 0 ? decltype(x)(alpha) * x : x; };
  });
  add_map<TypeSet::Float>(t, "Elu", [](const Node& n) {
    double alpha = n.attr_float("alpha", 1.0);
    return [alpha](auto x) { return x < 0 ? decltype(x)(alpha) * (std::exp(x) - 1) : x; };
  });
  add_map<TypeSet::Float>(t, "HardSigmoid", [](const Node& n) {
    double alpha = n.attr_float("alpha", 0.2), beta = n.attr_float("beta", 0.5);
    return [alpha, beta](auto x) {
      using T = decltype(x);
      const T y = T(alpha) * x + T(beta);
      return y != y ? y : std::max(T(0), std::min(T(1), y));  // NaN stays NaN (std::min made it 1)
    };
  });
  add_map<TypeSet::Float>(t, "HardSwish", plain([](auto x) {
    using T = decltype(x);
    return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
  }));
  add_map<TypeSet::Float>(t, "Selu", [](const Node& n) {
    double alpha = n.attr_float("alpha", 1.67326319217681884765625), gamma = n.attr_float("gamma", 1.05070102214813232421875);
    return [alpha, gamma](auto x) {
      using T = decltype(x);
      return T(gamma) * (x > T(0) ? x : T(alpha) * (std::exp(x) - T(1)));
    };
  });
  add_map<TypeSet::Float>(t, "Celu", [](const Node& n) {
    double alpha = n.attr_float("alpha", 1.0);
    return [alpha](auto x) {
      using T = decltype(x);
      if (x != x) return x;  // std::max/min would drop the NaN; numpy's maximum keeps it
      return std::max(T(0), x) + std::min(T(0), T(alpha) * (std::exp(x / T(alpha)) - T(1)));
    };
  });
  add_map<TypeSet::Float>(t, "Softsign", plain([](auto x) { return x / (decltype(x)(1) + std::abs(x)); }));
  add_map<TypeSet::Float>(t, "ThresholdedRelu", [](const Node& n) {
    const double alpha = n.attr_float("alpha", 1.0);
    return [alpha](auto x) { return x > decltype(x)(alpha) ? x : decltype(x)(0); };
  });
  // Shrink: x + bias below -lambd, x - bias above lambd, 0 between (NaN stays NaN).
  add_map<TypeSet::Float>(t, "Shrink", [](const Node& n) {
    const double bias = n.attr_float("bias", 0.0), lambd = n.attr_float("lambd", 0.5);
    return [bias, lambd](auto x) {
      using T = decltype(x);
      return x < T(-lambd) ? x + T(bias) : (x > T(lambd) ? x - T(bias) : (x != x ? x : T(0)));
    };
  });
  // x * tanh(softplus(x)), softplus written so that exp never overflows.
  add_map<TypeSet::Float>(t, "Mish", plain([](auto x) {
    auto softplus = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    return x * std::tanh(softplus);
  }));
  add_map<TypeSet::Float>(t, "Gelu", [](const Node& n) {
    std::string approximate = n.attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      fail_user("{}: attribute 'approximate' is '{}', expected 'none' or 'tanh'", n.describe(), approximate);
    }
    bool use_tanh = approximate == "tanh";
    return [use_tanh](auto x) {
      using T = decltype(x);
      if (use_tanh) {
        T k = T(std::sqrt(2.0 / std::numbers::pi));
        return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
      }
      return T(0.5) * x * (T(1) + std::erf(x / T(std::numbers::sqrt2)));
    };
  });
}

// Clip's optional one-element bound input `index` (same type as x), read as element type E.
template <typename E>
std::optional<typename E::Compute> clip_bound(const Node& node, const std::vector<Tensor>& in, size_t index) {
  const Tensor* bound = optional_input(in, index);
  if (bound == nullptr) return std::nullopt;
  require_same_dtype(node, in[0], *bound);
  if (bound->numel() != 1) {
    fail_user("{}: input {} ({}) must hold exactly one element, got {}", node.describe(), index,
              index == 1 ? "min" : "max", bound->summary());
  }
  return E::load(bound->data<typename E::Storage>()[0]);
}

std::vector<Tensor> clip(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  return {visit_dtype<TypeSet::Numeric>(node, x.dtype(), [&](auto elem) {
    using E = decltype(elem);
    using C = typename E::Compute;
    // An absent bound does not clip: +-inf for floats (so infinities survive, as in numpy), the
    // type's extremes for integers.
    using Limits = std::numeric_limits<C>;
    C lo = clip_bound<E>(node, in, 1).value_or(Limits::has_infinity ? -Limits::infinity() : Limits::lowest());
    C hi = clip_bound<E>(node, in, 2).value_or(Limits::has_infinity ? Limits::infinity() : Limits::max());
    // numpy.clip is minimum(maximum(x, lo), hi): NaN stays NaN, and lo > hi gives hi.
    return map_typed<E>(x, [lo, hi](C v) {
      if (v != v) return v;
      if (v < lo) v = lo;
      if (v > hi) v = hi;
      return v;
    });
  })};
}

// IsNaN and IsInf: float in, bool out.
template <typename Test>
Kernel float_test(Test test) {
  return [test](const Node& node, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    const Tensor& x = required_input(node, in, 0);
    bool negative = node.attr_int("detect_negative", 1) != 0, positive = node.attr_int("detect_positive", 1) != 0;
    return {visit_dtype<TypeSet::Float>(node, x.dtype(), [&](auto elem) {
      using E = decltype(elem);
      Tensor y(DType::boolean, x.shape());
      const auto* src = x.data<typename E::Storage>();
      auto* dst = y.data<uint8_t>();
      for (int64_t i = 0; i < x.numel(); ++i) dst[i] = test(double(E::load(src[i])), negative, positive) ? 1 : 0;
      return y;
    })};
  };
}

}  // namespace

void register_unary_kernels(KernelTable& table) {
  add_math_kernels(table);
  add_activation_kernels(table);
  table["Clip"] = clip;
  table["IsNaN"] = float_test([](double v, bool, bool) { return std::isnan(v); });
  table["IsInf"] = float_test([](double v, bool negative, bool positive) {
    return std::isinf(v) && (v > 0 ? positive : negative);
  });
}

}  // namespace tilefuse::reference
