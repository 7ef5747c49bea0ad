// Accuracy of the generated kernels' vector math (src/codegen/support/tilefuse_vector_math.h)
// versus the correctly rounded result (the double-precision C library rounded to float), on a
// sweep of every 2003rd float bit pattern (2.1 million inputs per function, both signs, every
// binade from subnormals to inf/NaN), plus the special values the reference interpreter's std::
// functions define. Each check runs twice: on the test binary's own ISA (baseline x86-64: SSE2,
// no FMA), and on the host's ISA through a probe library compiled with the kernels' flags
// (-march=native: AVX-512 with FMA and rcp14 here), which is what generated kernels execute.
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/probe_library.h"
#include "codegen/vector_math_eval.h"

namespace {

using tf_test::MathFn;

// fn over n inputs on a tf_test::MathPath: packs, vectors or the scalar path, then a scalar tail.
using Evaluator = std::function<void(int fn, int path, const float* x, float* y, int64_t n)>;

struct FunctionSpec {
  MathFn fn;
  const char* name;
  double (*exact)(double);  // correctly rounded to float after the call, for practical purposes
  double max_ulp;           // the bound tilefuse_vector_math.h documents
};

const std::vector<FunctionSpec>& functions() {
  static const std::vector<FunctionSpec> specs = {
      {tf_test::kExp, "exp", [](double x) { return std::exp(x); }, 2.0},
      {tf_test::kLog, "log", [](double x) { return std::log(x); }, 2.0},
      {tf_test::kTanh, "tanh", [](double x) { return std::tanh(x); }, 5.5},
      {tf_test::kSigmoid, "sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 3.0},
      {tf_test::kErf, "erf", [](double x) { return std::erf(x); }, 3.0},
  };
  return specs;
}

// |got - exact| in units of the last place of the correctly rounded float result (subnormal
// results count in the smallest subnormal). Mismatched NaN/inf-ness is infinitely wrong.
double ulp_error(float got, double exact) {
  const float want = float(exact);
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) == std::isnan(got) ? 0.0 : INFINITY;
  if (std::isinf(want) || std::isinf(got)) return want == got ? 0.0 : INFINITY;
  const int exponent = want == 0.0f ? -126 : std::max(std::ilogb(want), -126);
  return std::fabs(double(got) - exact) / std::ldexp(1.0, exponent - 23);
}

bool same_result(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

std::vector<float> strided_bit_patterns(uint32_t stride) {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += stride) xs.push_back(std::bit_cast<float>(uint32_t(bits)));
  return xs;
}

struct NamedEvaluator {
  std::string isa;
  Evaluator eval;
};

// The reference values are the expensive part, so each is computed once for all evaluators.
void expect_within_bound(const std::vector<NamedEvaluator>& evaluators) {
  static const std::vector<float> xs = strided_bit_patterns(2003);
  const int64_t n = int64_t(xs.size());
  for (const FunctionSpec& f : functions()) {
    std::vector<std::vector<float>> pack_out, vector_out, scalar_out;
    for (const NamedEvaluator& e : evaluators) {
      for (auto* out : {&pack_out, &vector_out, &scalar_out}) out->emplace_back(xs.size());
      e.eval(f.fn, tf_test::kPacks, xs.data(), pack_out.back().data(), n);
      e.eval(f.fn, tf_test::kVectors, xs.data(), vector_out.back().data(), n);
      e.eval(f.fn, tf_test::kScalar, xs.data(), scalar_out.back().data(), n);
    }
    std::vector<double> worst(evaluators.size(), 0.0);
    std::vector<float> worst_x(evaluators.size(), 0.0f);
    std::vector<int64_t> scalar_differs(evaluators.size(), 0), pack_differs(evaluators.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      const double exact = f.exact(double(xs[i]));
      for (size_t k = 0; k < evaluators.size(); ++k) {
        const float v = vector_out[k][i], s = scalar_out[k][i], p = pack_out[k][i];
        const double e = ulp_error(v, exact);
        if (e > worst[k]) worst[k] = e, worst_x[k] = xs[i];
        scalar_differs[k] += same_result(v, s) ? 0 : 1;
        pack_differs[k] += same_result(v, p) ? 0 : 1;
      }
    }
    for (size_t k = 0; k < evaluators.size(); ++k) {
      EXPECT_LE(worst[k], f.max_ulp) << evaluators[k].isa << ' ' << f.name << " at x = " << worst_x[k];
      EXPECT_EQ(scalar_differs[k], 0) << evaluators[k].isa << ' ' << f.name
                                      << ": the scalar tail must equal the vector lanes";
      EXPECT_EQ(pack_differs[k], 0) << evaluators[k].isa << ' ' << f.name << ": packs must equal single vectors";
    }
  }
}

// The C library's answers for the edge cases, exact where it is exact (zeros with their sign,
// infinities, NaN, saturation), within the ulp bound elsewhere.
void expect_special_values(const Evaluator& eval, const std::string& isa) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> specials = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                                       std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                                       std::numeric_limits<float>::min(), 0x1.fffffcp-127f, std::numeric_limits<float>::max(),
                                       -std::numeric_limits<float>::max(), 88.72283f, 88.72284f, 89.0f, 1000.0f, -87.33655f,
                                       -103.27893f, -103.97208f, -104.0f, -1000.0f, 1.0f, -1.0f, 1.25f, 0.625f, 3.92f, 4.0f,
                                       9.0f, 20.0f, -20.0f, 1e-30f, -1e-30f};
  // Repeated so that every value lands in a pack, a single vector and the scalar tail.
  std::vector<float> xs;
  for (int copy = 0; copy < 5; ++copy) xs.insert(xs.end(), specials.begin(), specials.end());
  std::vector<float> out(xs.size());
  for (const FunctionSpec& f : functions()) {
    for (int path : {tf_test::kPacks, tf_test::kVectors, tf_test::kScalar}) {
      eval(f.fn, path, xs.data(), out.data(), int64_t(xs.size()));
      for (size_t i = 0; i < xs.size(); ++i) {
        const double exact = f.exact(double(xs[i]));
        const float want = float(exact);
        static const char* const kPathNames[] = {" packs", " vectors", " scalar"};
        SCOPED_TRACE(isa + " " + f.name + kPathNames[path] + " x = " + std::to_string(xs[i]));
        EXPECT_LE(ulp_error(out[i], exact), f.max_ulp) << "got " << out[i] << ", want " << want;
        if (want == 0.0f || std::isinf(want) || std::fabs(want) == 1.0f) {
          EXPECT_EQ(out[i], want);
          EXPECT_EQ(std::signbit(out[i]), std::signbit(want)) << "sign";
        }
      }
    }
  }
}

Evaluator own_isa() { return tf_test::eval_math; }

// The probe: vector_math_eval.h compiled as generated kernels are; its evaluator is empty if
// compiling or loading it failed.
class HostProbe {
 public:
  HostProbe()
      : library_("#include \"codegen/vector_math_eval.h\"\n"
                 "extern \"C\" void tf_vmath_eval(int fn, int path, const float* x, float* y,"
                 " int64_t n) { tf_test::eval_math(fn, path, x, y, n); }\n") {}
  Evaluator evaluator() const {
    auto* fn = library_.symbol<void (*)(int, int, const float*, float*, int64_t)>("tf_vmath_eval");
    if (fn == nullptr) return nullptr;
    return [fn](int f, int path, const float* x, float* y, int64_t n) { fn(f, path, x, y, n); };
  }

 private:
  tf_test::ProbeLibrary library_;
};

const HostProbe& host_probe() {
  static const HostProbe probe;
  return probe;
}

TEST(VectorMath, WithinUlpBoundOnTheTestAndHostIsa) {
  Evaluator host = host_probe().evaluator();
  ASSERT_TRUE(host) << "could not compile or load the -march=native probe of vector_math_eval.h";
  expect_within_bound({{"test ISA", own_isa()}, {"host ISA", host}});
}

TEST(VectorMath, SpecialValuesOnTheTestIsa) { expect_special_values(own_isa(), "test ISA"); }

TEST(VectorMath, SpecialValuesOnTheHostIsa) {
  Evaluator eval = host_probe().evaluator();
  ASSERT_TRUE(eval) << "could not compile or load the -march=native probe of vector_math_eval.h";
  expect_special_values(eval, "host ISA");
}

// The sweeps are only as good as their measure of error.
TEST(VectorMath, UlpErrorMeasuresUnitsInTheLastPlace) {
  EXPECT_DOUBLE_EQ(ulp_error(1.0f, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(ulp_error(std::nextafter(1.0f, 2.0f), 1.0), 1.0);
  EXPECT_DOUBLE_EQ(ulp_error(std::numeric_limits<float>::denorm_min() * 3, 0.0), 3.0);
  EXPECT_EQ(ulp_error(std::numeric_limits<float>::infinity(), 1e300), 0.0);
  EXPECT_EQ(ulp_error(std::numeric_limits<float>::max(), 1e300), INFINITY);
  EXPECT_EQ(ulp_error(0.0f, std::nan("")), INFINITY);
}

}  // namespace
