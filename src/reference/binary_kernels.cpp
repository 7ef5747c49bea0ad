// Elementwise kernels of several broadcast operands: arithmetic, Pow, comparisons, logic, Min/Max
// and Where. Operands broadcast as in numpy.
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "reference/element_types.h"
#include "reference/index_map.h"
#include "reference/integer_math.h"
#include "reference/kernel_args.h"
#include "reference/kernel_table.h"

namespace tilefuse::reference {

namespace {

// out[i] = fn(a, b) over the broadcast of a (element type EA) and b (EB), stored as EO.
template <typename EA, typename EB, typename EO, typename Fn>
Tensor broadcast_map(const Node& node, const Tensor& a, const Tensor& b, Fn fn) {
  std::vector<int64_t> shape = broadcast_shape(node, {a, b});
  std::vector<int64_t> ia = broadcast_indices(a.shape(), shape);
  std::vector<int64_t> ib = broadcast_indices(b.shape(), shape);
  Tensor out(EO::dtype, shape);
  const auto* pa = a.data<typename EA::Storage>();
  const auto* pb = b.data<typename EB::Storage>();
  auto* po = out.data<typename EO::Storage>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    po[i] = EO::store(static_cast<typename EO::Compute>(fn(EA::load(pa[ia[i]]), EB::load(pb[ib[i]]))));
  }
  return out;
}

// Registers a kernel for an op whose two inputs share one element type from `set`; the result
// has that type too, or bool when `to_bool`.
template <TypeSet set, bool to_bool = false, typename Fn>
void add_binary(KernelTable& table, const char* op, Fn fn) {
  table[op] = [fn](const Node& node, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    const Tensor& a = required_input(node, in, 0);
    const Tensor& b = required_input(node, in, 1);
    require_same_dtype(node, a, b);
    return {visit_dtype<set>(node, a.dtype(), [&](auto elem) {
      using E = decltype(elem);
      using EO = std::conditional_t<to_bool, Elem<DType::boolean>, E>;
      return broadcast_map<E, E, EO>(node, a, b, [&](auto x, auto y) { return fn(node, x, y); });
    })};
  };
}

template <typename T>
T divide(const Node& node, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) fail_user("{}: integer division by zero", node.describe());
    return int_div(a, b);
  } else {
    return a / b;
  }
}

// ONNX Mod: fmod=0 gives the divisor's sign (Python %), fmod=1 the dividend's (C fmod).
template <typename T>
T modulo(const Node& node, T a, T b) {
  bool c_style = node.attr_int("fmod", 0) != 0;
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) fail_user("{}: integer modulo by zero", node.describe());
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;  // avoids the overflow of INT_MIN % -1
    }
    T r = static_cast<T>(a % b);
    if (!c_style && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    T r = std::fmod(a, b);
    if (!c_style && r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

void add_arithmetic_kernels(KernelTable& t) {
  add_binary<TypeSet::Numeric>(t, "Add", [](const Node&, auto a, auto b) { return wrap_add(a, b); });
  add_binary<TypeSet::Numeric>(t, "Sub", [](const Node&, auto a, auto b) { return wrap_sub(a, b); });
  add_binary<TypeSet::Numeric>(t, "Mul", [](const Node&, auto a, auto b) { return wrap_mul(a, b); });
  add_binary<TypeSet::Numeric>(t, "Div", [](const Node& n, auto a, auto b) { return divide(n, a, b); });
  add_binary<TypeSet::Numeric>(t, "Mod", [](const Node& n, auto a, auto b) { return modulo(n, a, b); });
}

void add_comparison_kernels(KernelTable& t) {
  add_binary<TypeSet::Any, true>(t, "Equal", [](const Node&, auto a, auto b) { return a == b; });
  add_binary<TypeSet::Numeric, true>(t, "Less", [](const Node&, auto a, auto b) { return a < b; });
  add_binary<TypeSet::Numeric, true>(t, "Greater", [](const Node&, auto a, auto b) { return a > b; });
  add_binary<TypeSet::Numeric, true>(t, "LessOrEqual", [](const Node&, auto a, auto b) { return a <= b; });
  add_binary<TypeSet::Numeric, true>(t, "GreaterOrEqual", [](const Node&, auto a, auto b) { return a >= b; });
}

// And/Or take bool operands only.
template <typename Fn>
void add_logic(KernelTable& table, const char* op, Fn fn) {
  table[op] = [fn](const Node& node, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    const Tensor& a = required_input(node, in, 0);
    const Tensor& b = required_input(node, in, 1);
    require_dtype(node, a, {DType::boolean}, "input 0");
    require_dtype(node, b, {DType::boolean}, "input 1");
    using B = Elem<DType::boolean>;
    return {broadcast_map<B, B, B>(node, a, b, fn)};
  };
}

// x ** y, as numpy.power(x, y).astype(x.dtype): an integer result of integer operands is exact
// (wrapping); otherwise the power is taken in double and converted to x's type (truncating
// toward zero for an integer x).
template <typename A, typename B>
A power(A x, B y) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    if (std::cmp_greater_equal(y, 0)) {  // exponentiation by squaring
      A result = 1, base = x;
      for (uint64_t e = static_cast<uint64_t>(y); e != 0; e >>= 1) {
        if (e & 1) result = wrap_mul(result, base);
        base = wrap_mul(base, base);
      }
      return result;
    }
  }
  double p = std::pow(static_cast<double>(x), static_cast<double>(y));
  if constexpr (std::is_integral_v<A>) return float_to_int<A>(p);
  else return static_cast<A>(p);
}

std::vector<Tensor> pow_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& x = required_input(node, in, 0);
  const Tensor& y = required_input(node, in, 1);
  require_dtype(node, x, {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32, DType::i64}, "input 0 (base)");
  return {visit_dtype<TypeSet::Numeric>(node, x.dtype(), [&](auto ex) {
    return visit_dtype<TypeSet::Numeric>(node, y.dtype(), [&](auto ey) {
      using EX = decltype(ex);
      return broadcast_map<EX, decltype(ey), EX>(node, x, y, [](auto a, auto b) { return power(a, b); });
    });
  })};
}

// numpy.minimum / numpy.maximum: a NaN operand gives NaN.
template <bool is_max, typename T>
T extremum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return (is_max ? b > a : b < a) ? b : a;
}

// Min/Max of one or more operands, all of one type, broadcast together.
template <bool is_max>
std::vector<Tensor> extremum_kernel(const Node& node, const std::vector<Tensor>& in) {
  Tensor result = required_input(node, in, 0).clone();
  require_type_set<TypeSet::Numeric>(node, result.dtype());
  for (size_t i = 1; i < in.size(); ++i) {
    const Tensor& next = required_input(node, in, i);
    require_same_dtype(node, result, next);
    result = visit_dtype<TypeSet::Numeric>(node, result.dtype(), [&](auto elem) {
      using E = decltype(elem);
      return broadcast_map<E, E, E>(node, result, next, [](auto a, auto b) { return extremum<is_max>(a, b); });
    });
  }
  return {result};
}

// Sum and Mean of one or more operands of one float type, broadcast together; Mean divides the
// sum by the operand count.
template <bool mean>
std::vector<Tensor> sum_kernel(const Node& node, const std::vector<Tensor>& in) {
  Tensor result = required_input(node, in, 0).clone();
  require_type_set<TypeSet::Float>(node, result.dtype());
  for (size_t i = 1; i < in.size(); ++i) {
    const Tensor& next = required_input(node, in, i);
    require_same_dtype(node, result, next);
    result = visit_dtype<TypeSet::Float>(node, result.dtype(), [&](auto elem) {
      using E = decltype(elem);
      return broadcast_map<E, E, E>(node, result, next, [](auto a, auto b) { return a + b; });
    });
  }
  if (!mean) return {result};
  const double count = static_cast<double>(in.size());
  for (int64_t i = 0; i < result.numel(); ++i) result.set_f64(i, result.get_f64(i) / count);
  return {result};
}

// Where(cond, x, y): x's element where cond is true, else y's; elements are copied, so any
// element type works.
std::vector<Tensor> where_kernel(const Node& node, const std::vector<Tensor>& in) {
  const Tensor& cond = required_input(node, in, 0);
  const Tensor& x = required_input(node, in, 1);
  const Tensor& y = required_input(node, in, 2);
  require_dtype(node, cond, {DType::boolean}, "input 0 (condition)");
  require_same_dtype(node, x, y);
  std::vector<int64_t> shape = broadcast_shape(node, {cond, x, y});
  std::vector<int64_t> ic = broadcast_indices(cond.shape(), shape);
  std::vector<int64_t> ix = broadcast_indices(x.shape(), shape);
  std::vector<int64_t> iy = broadcast_indices(y.shape(), shape);
  // Concatenate x and y into one source so each output element is one gathered index.
  Tensor both(x.dtype(), {x.numel() + y.numel()});
  size_t size = dtype_size(x.dtype());
  std::memcpy(both.raw(), x.raw(), x.nbytes());
  std::memcpy(static_cast<uint8_t*>(both.raw()) + x.numel() * size, y.raw(), y.nbytes());
  std::vector<int64_t> source(ic.size());
  for (size_t i = 0; i < ic.size(); ++i) {
    source[i] = cond.data<uint8_t>()[ic[i]] != 0 ? ix[i] : x.numel() + iy[i];
  }
  return {gather_elements(both, source, shape)};
}

}  // namespace

void register_binary_kernels(KernelTable& table) {
  add_arithmetic_kernels(table);
  add_comparison_kernels(table);
  add_logic(table, "And", [](bool a, bool b) { return a && b; });
  add_logic(table, "Or", [](bool a, bool b) { return a || b; });
  add_logic(table, "Xor", [](bool a, bool b) { return a != b; });
  table["Pow"] = pow_kernel;
  table["Min"] = extremum_kernel<false>;
  table["Max"] = extremum_kernel<true>;
  table["Where"] = where_kernel;
  table["Sum"] = sum_kernel<false>;
  table["Mean"] = sum_kernel<true>;
  add_binary<TypeSet::Numeric>(table, "PRelu", [](const Node&, auto x, auto slope) { return x < 0 ? slope * x : x; });
}

}  // namespace tilefuse::reference
