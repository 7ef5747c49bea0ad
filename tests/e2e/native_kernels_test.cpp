// Kernels whose values keep their element types (integer and f64 values, codegen/support/
// tilefuse_native.h): each graph runs fused and must match the reference interpreter exactly
// where the reference is exact (integers), on values that reach the edges of each rule:
// wrap-around, truncating division by negative divisors, Python's Mod, INT_MIN / -1, casts of
// NaN, infinities and out-of-range floats. Each case also bounds its kernel count, so that the
// ops stay generated code and do not fall back to the host unnoticed.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "e2e/fused_vs_reference.h"
#include "fusion/fusion_plan.h"
#include "ir/error.h"

namespace tilefuse::e2e {
namespace {

// Integers of `dtype` spread over [low, high] (a multiplicative hash of the index).
Tensor integers(DType dtype, std::vector<int64_t> shape, int64_t low, int64_t high) {
  Tensor t(dtype, std::move(shape));
  const uint64_t range = static_cast<uint64_t>(high - low) + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    t.set_i64(i, low + static_cast<int64_t>((static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ULL >> 7) % range));
  }
  return t;
}

Tensor scalar(DType dtype, double v) {
  Tensor t(dtype, {});
  t.set_f64(0, v);
  return t;
}

// Adds nodes with unique names.
struct Builder {
  Graph& g;
  int count = 0;
  Value* op(const std::string& type, std::vector<Value*> inputs, AttributeMap attrs = {}) {
    const std::string name = type + std::to_string(count++);
    return g.add_node(type, name, std::move(inputs), {name + "_out"}, std::move(attrs))->outputs[0];
  }
  Value* constant(DType dtype, double v) { return g.add_constant("c" + std::to_string(count++), scalar(dtype, v)); }
  Value* cast(Value* x, DType to) { return op("Cast", {x}, {{"to", int64_t{dtype_to_onnx(to)}}}); }
};

GraphCase integer_chain(DType dtype, int64_t low, int64_t high) {
  return on_input(std::string(dtype_name(dtype)) + "Arithmetic", integers(dtype, {37, 41}, low, high),
                  [dtype](Graph& g, Value* x) -> std::vector<Value*> {
                    Builder b{g};
                    Value* y = b.op("Add", {b.op("Mul", {x, b.constant(dtype, 3)}), b.constant(dtype, 7)});
                    Value* q = b.op("Div", {y, b.constant(dtype, is_signed(dtype) ? -4 : 4)});
                    Value* m = b.op("Mod", {y, b.constant(dtype, is_signed(dtype) ? -5 : 5)});
                    Value* c = b.op("Mod", {y, b.constant(dtype, 6)}, {{"fmod", int64_t{1}}});
                    Value* p = b.op("Mod", {y, b.constant(dtype, 6)});
                    Value* clipped = b.op("Clip", {b.op("Sub", {q, m}), b.constant(dtype, 2), b.constant(dtype, 90)});
                    Value* big = b.op("Max", {b.op("Min", {x, c}), b.op("Abs", {y})});
                    return {q, m, clipped, big, p};
                  },
                  1);
}

std::vector<GraphCase> cases() {
  std::vector<GraphCase> c;
  c.push_back(integer_chain(DType::i64, -3000000000LL, 3000000000LL));
  c.push_back(integer_chain(DType::i32, -2147483647, 2147483647));  // Mul and Add wrap
  c.push_back(integer_chain(DType::i8, -128, 127));                 // every step wraps at 8 bits
  c.push_back(integer_chain(DType::u8, 0, 255));
  c.push_back(on_input("MinOverMinusOneWraps", integers(DType::i32, {64}, std::numeric_limits<int32_t>::min(), -2147483000),
                       [](Graph& g, Value* x) -> std::vector<Value*> {
                         Builder b{g};
                         return {b.op("Div", {x, b.constant(DType::i32, -1)}), b.op("Mod", {x, b.constant(DType::i32, -1)}),
                                 b.op("Neg", {x}), b.op("Sign", {x}), b.op("Relu", {b.op("Neg", {x})})};
                       },
                       1));
  c.push_back(on_input("CastsFromFloats", [] {
                         Tensor t = filled({5, 40}, 0);
                         const double edges[] = {NAN, INFINITY, -INFINITY, 1e30, -1e30, 2.5, -2.5, 255.9, 256.0, -0.7};
                         for (int64_t i = 0; i < 10; ++i) t.set_f64(i * 3, edges[i]);
                         return t;
                       }(),
                       [](Graph& g, Value* x) -> std::vector<Value*> {
                         Builder b{g};
                         Value* scaled = b.op("Mul", {x, b.constant(DType::f32, 100.0)});
                         return {b.cast(scaled, DType::i64), b.cast(scaled, DType::i32), b.cast(scaled, DType::u8),
                                 b.cast(scaled, DType::i8), b.cast(scaled, DType::f64), b.cast(x, DType::boolean)};
                       },
                       1));
  c.push_back(on_input("CastsFromIntegers", integers(DType::i64, {3, 50}, -70000, 70000),
                       [](Graph& g, Value* x) -> std::vector<Value*> {
                         Builder b{g};
                         Value* f = b.cast(x, DType::f32);
                         return {b.op("Mul", {f, b.constant(DType::f32, 0.5)}), b.cast(x, DType::f16), b.cast(x, DType::bf16),
                                 b.cast(x, DType::i8), b.cast(x, DType::u8), b.cast(b.cast(x, DType::boolean), DType::i32)};
                       },
                       1));
  // A padding mask from token ids applied to embeddings: ids [4, 33] != 0, widened over the
  // hidden axis, as a float multiplier.
  c.push_back({"MaskFromTokenIds", [](Graph& g) {
                 Builder b{g};
                 Value* ids = g.add_input("ids", DType::i64, {Dim(4), Dim(33)});
                 Value* h = g.add_input("h", DType::f32, {Dim(4), Dim(33), Dim(24)});
                 Value* keep = b.op("Not", {b.op("Equal", {ids, b.constant(DType::i64, 0)})});
                 Value* wide = b.op("Unsqueeze", {keep, g.add_constant("axes", Tensor::from_vector<int64_t>(DType::i64, {1}, {2}))});
                 g.add_output(b.op("Mul", {h, b.cast(wide, DType::f32)}));
                 g.add_output(b.op("Where", {keep, ids, b.constant(DType::i64, -1)}));
                 return std::vector<std::map<std::string, Tensor>>{
                     {{"ids", integers(DType::i64, {4, 33}, 0, 3)}, {"h", filled({4, 33, 24})}}};
               },
               2});
  c.push_back(on_input("IndexMapsOfIntegers", integers(DType::i64, {6, 10}, -50, 50),
                       [](Graph& g, Value* x) -> std::vector<Value*> {
                         Builder b{g};
                         Value* t = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}});
                         return {b.op("Add", {t, b.constant(DType::i64, 1)})};
                       },
                       1));
  c.push_back(on_input("F64Math", filled(DType::f64, {7, 45}, 3),
                       [](Graph& g, Value* x) -> std::vector<Value*> {
                         Builder b{g};
                         Value* e = b.op("Exp", {b.op("Mul", {x, b.constant(DType::f64, 0.75)})});
                         Value* s = b.op("Add", {b.op("Sigmoid", {x}), b.op("Tanh", {e})});
                         Value* l = b.op("Log", {b.op("Add", {b.op("Abs", {x}), b.constant(DType::f64, 1.0)})});
                         Value* r = b.op("Round", {b.op("Mul", {b.op("Sqrt", {e}), b.constant(DType::f64, 3.0)})});
                         Value* m = b.op("Mod", {x, b.constant(DType::f64, 0.7)}, {{"fmod", int64_t{1}}});
                         Value* p = b.op("Add", {b.op("Pow", {x, b.constant(DType::f64, 2.0)}),
                                                 b.op("Pow", {b.op("Abs", {x}), b.constant(DType::f32, 0.3f)})});
                         return {s, l, r, m, b.op("Floor", {x}), b.op("Erf", {x}), b.op("Div", {e, x}), p};
                       },
                       1));
  return c;
}

class NativeKernels : public ::testing::TestWithParam<GraphCase> {};

TEST_P(NativeKernels, FusedMatchesReference) { expect_fused_matches_reference(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Cases, NativeKernels, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<GraphCase>& info) { return info.param.name; });

// An integer division whose divisor is computed stays on the host, which reports a zero divisor
// by name instead of taking the process down with SIGFPE.
TEST(NativeKernels, AComputedIntegerDivisorIsCheckedOnTheHost) {
  Graph g;
  Builder b{g};
  Value* x = g.add_input("x", DType::i64, {Dim(8)});
  Value* d = g.add_input("d", DType::i64, {Dim(8)});
  g.add_output(b.op("Div", {b.op("Add", {x, b.constant(DType::i64, 1)}), d}));
  g.infer_shapes();
  const driver::ExecutorOptions options = executor_options();
  driver::ExecutorCounters counters;
  driver::Executor exe(g, options, counters);
  const auto& steps = exe.plan().steps;
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].kind, fusion::StepKind::Kernel);
  EXPECT_EQ(steps[1].kind, fusion::StepKind::Host);
  Tensor divisor = integers(DType::i64, {8}, 1, 3);
  divisor.set_i64(5, 0);
  try {
    exe.run({{"x", integers(DType::i64, {8}, -9, 9)}, {"d", divisor}});
    FAIL() << "a zero divisor must be reported";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilefuse::e2e
