// Compile-time descriptions of the element types, and dispatch from a runtime DType to them.
// Each Elem<D> says how an element is stored and in which type arithmetic on it is done:
// f16/bf16 are stored as 16-bit patterns and computed in f32, bool is stored as one byte.
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/graph.h"
#include "ir/half.h"

namespace tilefuse::reference {

template <DType D>
struct Elem;

// An element type whose storage and compute types coincide.
template <DType D, typename T>
struct PlainElem {
  static constexpr DType dtype = D;
  using Storage = T;
  using Compute = T;
  static Compute load(Storage s) { return s; }
  static Storage store(Compute c) { return c; }
};

template <> struct Elem<DType::f32> : PlainElem<DType::f32, float> {};
template <> struct Elem<DType::f64> : PlainElem<DType::f64, double> {};
template <> struct Elem<DType::i8> : PlainElem<DType::i8, int8_t> {};
template <> struct Elem<DType::i32> : PlainElem<DType::i32, int32_t> {};
template <> struct Elem<DType::i64> : PlainElem<DType::i64, int64_t> {};
template <> struct Elem<DType::u8> : PlainElem<DType::u8, uint8_t> {};

template <>
struct Elem<DType::f16> {
  static constexpr DType dtype = DType::f16;
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage s) { return f16_to_f32(s); }
  static Storage store(Compute c) { return f32_to_f16(c); }
};

template <>
struct Elem<DType::bf16> {
  static constexpr DType dtype = DType::bf16;
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage s) { return bf16_to_f32(s); }
  static Storage store(Compute c) { return f32_to_bf16(c); }
};

template <>
struct Elem<DType::boolean> {
  static constexpr DType dtype = DType::boolean;
  using Storage = uint8_t;
  using Compute = bool;
  static Compute load(Storage s) { return s != 0; }
  static Storage store(Compute c) { return c ? 1 : 0; }
};

// Which element types a kernel accepts; the dispatchers below instantiate the kernel body only
// for those, so a body may use operations that make no sense for the others (std::exp on bool).
enum class TypeSet { Float, Numeric, Any };

[[noreturn]] inline void fail_dtype(const Node& node, DType t, std::string_view accepted) {
  fail_user("{}: element type {} is not supported (the op accepts {})", node.describe(), dtype_name(t),
            accepted);
}

// Calls fn(Elem<D>{}) for the D equal to `t`; throws UserError naming `node` if `t` is not in `set`.
template <TypeSet set, typename Fn>
decltype(auto) visit_dtype(const Node& node, DType t, Fn&& fn) {
  switch (t) {
    case DType::f32: return fn(Elem<DType::f32>{});
    case DType::f16: return fn(Elem<DType::f16>{});
    case DType::bf16: return fn(Elem<DType::bf16>{});
    case DType::f64: return fn(Elem<DType::f64>{});
    default: break;
  }
  if constexpr (set == TypeSet::Float) {
    fail_dtype(node, t, "f32, f16, bf16, f64");
  } else {
    switch (t) {
      case DType::i8: return fn(Elem<DType::i8>{});
      case DType::i32: return fn(Elem<DType::i32>{});
      case DType::i64: return fn(Elem<DType::i64>{});
      case DType::u8: return fn(Elem<DType::u8>{});
      default: break;
    }
    if constexpr (set == TypeSet::Numeric) {
      fail_dtype(node, t, "float and integer types");
    } else {
      return fn(Elem<DType::boolean>{});
    }
  }
}

// Throws UserError naming `node` unless `t` is in `set`.
template <TypeSet set>
void require_type_set(const Node& node, DType t) {
  visit_dtype<set>(node, t, [](auto) {});
}

}  // namespace tilefuse::reference
