// Generated kernels at the edges of each transcendental op's domain, and of the activations
// built from comparisons (Relu and HardSigmoid once made NaN a number in the reference):
// infinities, NaN, values where exp overflows or underflows, subnormals. Each op runs as a fused kernel (as a two-op
// chain x * 1 -> op, so it is generated code, not a host step) against the reference.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include <gtest/gtest.h>

#include "ir/tensor_compare.h"
#include "reference/interpreter.h"
#include "driver/executor.h"

namespace tilefuse {
namespace {

namespace fs = std::filesystem;

// Values chosen per the failure modes of vector math: overflow of e^x (89, 100), underflow and
// subnormal results (-20, -90, -104), subnormal inputs (1e-40), exact zeros of both signs.
std::vector<float> edge_values() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,  -0.0f, 1e-40f, -1e-40f, 1e-7f, 0.5f,  -0.5f, 1.0f,   -1.0f, 3.9f,  -3.9f,
                          10.0f, -10.f, 17.0f,  -17.0f,  20.0f, -20.f, 88.0f, -88.0f, 89.0f, -90.f, 100.f,
                          -104.f, 1e30f, -1e30f, inf,    -inf,  std::numeric_limits<float>::quiet_NaN()};
  while (v.size() % 16 != 5) v.push_back(0.25f * static_cast<float>(v.size()));  // vector body and scalar tail
  return v;
}

// `name` applied to x: a unary op, or Pow_<p>, Pow by the constant p (kernels give 0.5, 1, 2
// and 3 cheap forms that must keep pow's special values: (-inf)^0.5 is +inf, not sqrt's NaN).
Value* op_on(Graph& g, const std::string& name, Value* x) {
  if (name.rfind("Pow_", 0) != 0) return g.add_node(name, "op", {x}, {"y"})->outputs[0];
  std::string exponent = name.substr(4);
  std::replace(exponent.begin(), exponent.end(), '_', '.');
  Value* p = g.add_constant("p", Tensor::scalar_f32(std::stof(exponent)));
  return g.add_node("Pow", "op", {x, p}, {"y"})->outputs[0];
}

class ExtremeValues : public ::testing::TestWithParam<std::string> {};

TEST_P(ExtremeValues, FusedKernelMatchesReference) {
  const std::vector<float> values = edge_values();
  const int64_t n = static_cast<int64_t>(values.size());
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(n)});
  Value* one = g.add_constant("one", Tensor::scalar_f32(1.0f));
  Value* scaled = g.add_node("Mul", "scale", {x, one}, {"scaled"})->outputs[0];
  Value* y = op_on(g, GetParam(), scaled);
  g.add_output(y);
  g.infer_shapes();

  const fs::path cache = fs::temp_directory_path() / ("tilefuse_extreme_" + GetParam() + "_" + std::to_string(::getpid()));
  driver::ExecutorOptions options;
  options.device.threads = 1;
  options.cache_dir = cache.string();
  options.hardware = tiling::detect_hardware();
  driver::ExecutorCounters counters;
  std::vector<Tensor> actual;
  {
    driver::Executor exe(g, options, counters);
    ASSERT_EQ(exe.plan().steps.size(), 1u) << "expected one fused kernel";
    actual = exe.run({{"x", Tensor::from_vector(DType::f32, {n}, values)}});
  }
  fs::remove_all(cache);
  const std::vector<Tensor> expected = reference::run_graph(g, {{"x", Tensor::from_vector(DType::f32, {n}, values)}});
  const CompareResult r = compare_tensors(actual.at(0), expected.at(0), {1e-5, 1e-30});
  EXPECT_TRUE(r.ok) << GetParam() << ": " << r.message;
}

INSTANTIATE_TEST_SUITE_P(Transcendental, ExtremeValues,
                         ::testing::Values("Exp", "Log", "Tanh", "Sigmoid", "Erf", "Softplus", "Sqrt", "Elu", "Sin",
                                           "Cos", "Round", "Sign", "Selu", "Celu", "Mish", "IsNaN", "IsInf", "Relu",
                                           "LeakyRelu", "HardSigmoid", "HardSwish", "Abs", "Neg", "Clip", "Floor",
                                           "Ceil", "Reciprocal", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh",
                                           "Asinh", "Acosh", "Atanh", "Softsign", "ThresholdedRelu", "Shrink",
                                           "Pow_0_5", "Pow_1", "Pow_2", "Pow_3", "Pow_0_3"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tilefuse

namespace tilefuse {
namespace {

// A product whose partial products overflow f32 before a zero arrives: the reference multiplies
// in double and gets 0; a kernel multiplying f32 lanes gets inf * 0 = NaN. Rows long enough for
// the vector body, the pack path and the scalar tail.
TEST(ExtremeProducts, ReduceProdAccumulatesLikeTheReference) {
  const int64_t rows = 3, cols = 16 * 4 * 2 + 5;
  std::vector<float> values(static_cast<size_t>(rows * cols), 1.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      float& v = values[static_cast<size_t>(r * cols + c)];
      if (c % 16 == r) v = 1e30f;  // every lane's product overflows f32 after two of these
      if (c == cols - 1 - r) v = 0.0f;
    }
  }
  Graph g;
  Value* x = g.add_input("x", DType::f32, {Dim(rows), Dim(cols)});
  Value* y = g.add_node("ReduceProd", "prod", {x}, {"y"}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}})
                 ->outputs[0];
  g.add_output(y);
  g.infer_shapes();
  const fs::path cache = fs::temp_directory_path() / ("tilefuse_extreme_prod_" + std::to_string(::getpid()));
  driver::ExecutorOptions options;
  options.device.threads = 1;
  options.cache_dir = cache.string();
  options.hardware = tiling::detect_hardware();
  driver::ExecutorCounters counters;
  const std::map<std::string, Tensor> inputs = {{"x", Tensor::from_vector(DType::f32, {rows, cols}, values)}};
  std::vector<Tensor> actual;
  {
    driver::Executor exe(g, options, counters);
    actual = exe.run(inputs);
  }
  fs::remove_all(cache);
  const std::vector<Tensor> expected = reference::run_graph(g, inputs);
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_EQ(expected[0].get_f64(r), 0.0) << "row " << r;
    EXPECT_EQ(actual[0].get_f64(r), 0.0) << "row " << r;
  }
}

}  // namespace
}  // namespace tilefuse
