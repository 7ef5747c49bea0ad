// The f64 exp, log and sigmoid of generated native kernels (tilefuse_native.h) against the exact
// result (long double, 11 more bits than double): within their stated ulp bounds over sweeps of
// their domains, and
// the C library's special values. Run on the test binary's ISA and on the host's, through a probe
// compiled as kernels are, where the loop is vectorised.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "codegen/native_math_eval.h"
#include "codegen/probe_library.h"

namespace {

using Evaluator = std::function<void(int, const double*, double*, int64_t)>;

// |got - exact| in units of the last place of a double at `exact` (subnormal ulps below
// DBL_MIN); 0 where both are the same infinity or both NaN.
double ulp_error(double got, long double exact) {
  if (std::isnan(exact) || std::isnan(got)) return std::isnan(exact) && std::isnan(got) ? 0.0 : INFINITY;
  const double rounded = static_cast<double>(exact);  // overflows to infinity where it should
  if (std::isinf(got) || std::isinf(rounded)) return got == rounded ? 0.0 : INFINITY;
  const int e = std::max(std::ilogb(static_cast<double>(exact)), std::numeric_limits<double>::min_exponent - 1);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / std::ldexp(1.0L, e - 52));
}

struct Function {
  tf_test::NativeMathFn fn;
  const char* name;
  long double (*exact)(long double);
  std::vector<double> (*inputs)();
  double max_ulp;  // what tilefuse_native.h states
};

long double sigmoid_exact(long double x) { return 1.0L / (1.0L + std::exp(-x)); }

std::vector<double> uniform(double lo, double hi, int count, uint32_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(count);
  for (double& x : v) x = dist(gen);
  return v;
}

// exp's domain: every result from subnormal to overflow, and small arguments densely.
std::vector<double> exp_inputs() {
  std::vector<double> v = uniform(-746.0, 710.0, 200000, 1);
  for (double x : uniform(-1.0, 1.0, 50000, 2)) v.push_back(x);
  for (double x : uniform(-1e-8, 1e-8, 1000, 3)) v.push_back(x);
  return v;
}

// log's domain: positive doubles of every exponent, subnormals included, and near 1.
std::vector<double> log_inputs() {
  std::mt19937_64 gen(4);
  std::vector<double> v;
  for (int i = 0; i < 200000; ++i) v.push_back(std::bit_cast<double>(gen() & 0x7fefffffffffffffULL));
  for (double x : uniform(0.5, 2.0, 50000, 5)) v.push_back(x);
  for (double x : uniform(1.0 - 1e-6, 1.0 + 1e-6, 1000, 6)) v.push_back(x);
  return v;
}

std::vector<double> sigmoid_inputs() { return uniform(-750.0, 750.0, 100000, 7); }

const std::vector<Function>& functions() {
  static const std::vector<Function> fs = {
      {tf_test::kExp64, "exp", [](long double x) { return std::exp(x); }, exp_inputs, 1.5},
      {tf_test::kLog64, "log", [](long double x) { return std::log(x); }, log_inputs, 1.0},
      {tf_test::kSigmoid64, "sigmoid", sigmoid_exact, sigmoid_inputs, 2.5}};
  return fs;
}

// The largest error of each function over its sweep, on one evaluator.
void expect_within_bound(const Evaluator& eval, const std::string& isa) {
  for (const Function& f : functions()) {
    const std::vector<double> xs = f.inputs();
    std::vector<double> ys(xs.size());
    eval(f.fn, xs.data(), ys.data(), int64_t(xs.size()));
    double worst = 0, worst_x = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double e = ulp_error(ys[i], f.exact(xs[i]));
      if (e > worst) worst = e, worst_x = xs[i];
    }
    EXPECT_LE(worst, f.max_ulp) << isa << " " << f.name << " at x = " << worst_x;
  }
}

// The exact results where a double holds them (infinities, zeros, NaN, one, as the C library
// gives them), the bound elsewhere: the edges of the ranges, subnormal results included.
void expect_special_values(const Evaluator& eval, const std::string& isa) {
  constexpr double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> specials = {0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 709.78, 709.79, 710.0, 1000.0,
                                        -708.5, -745.0, -745.2, -746.0, -1000.0, std::numeric_limits<double>::denorm_min(),
                                        std::numeric_limits<double>::min(), std::numeric_limits<double>::max(), 2.0, 0.5};
  std::vector<double> out(specials.size());
  for (const Function& f : functions()) {
    eval(f.fn, specials.data(), out.data(), int64_t(specials.size()));
    for (size_t i = 0; i < specials.size(); ++i) {
      const double x = specials[i];
      const double want = static_cast<double>(f.exact(x));
      SCOPED_TRACE(isa + " " + f.name + " x = " + std::to_string(x));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[i])) << out[i];
      } else if (std::isinf(want) || want == 0.0 || want == 1.0) {
        EXPECT_EQ(out[i], want);
      } else {
        EXPECT_LE(ulp_error(out[i], f.exact(x)), f.max_ulp) << out[i] << " against " << want;
      }
    }
  }
}

class HostProbe {
 public:
  HostProbe()
      : library_("#include \"codegen/native_math_eval.h\"\n"
                 "extern \"C\" void tf_native_math_eval(int fn, const double* x, double* y, int64_t n) {"
                 " tf_test::eval_native_math(fn, x, y, n); }\n") {}
  Evaluator evaluator() const {
    auto* fn = library_.symbol<void (*)(int, const double*, double*, int64_t)>("tf_native_math_eval");
    if (fn == nullptr) return nullptr;
    return [fn](int f, const double* x, double* y, int64_t n) { fn(f, x, y, n); };
  }

 private:
  tf_test::ProbeLibrary library_;
};

const HostProbe& host_probe() {
  static const HostProbe probe;
  return probe;
}

TEST(NativeMath, F64FunctionsWithinTheirBoundOnTheTestIsa) { expect_within_bound(tf_test::eval_native_math, "test ISA"); }

TEST(NativeMath, F64FunctionsWithinTheirBoundOnTheHostIsa) {
  Evaluator host = host_probe().evaluator();
  ASSERT_TRUE(host) << "could not compile or load the -march=native probe of native_math_eval.h";
  expect_within_bound(host, "host ISA");
}

TEST(NativeMath, F64SpecialValues) {
  expect_special_values(tf_test::eval_native_math, "test ISA");
  Evaluator host = host_probe().evaluator();
  ASSERT_TRUE(host) << "could not compile or load the -march=native probe of native_math_eval.h";
  expect_special_values(host, "host ISA");
}

TEST(NativeMath, UlpErrorMeasuresUnitsInTheLastPlace) {
  EXPECT_DOUBLE_EQ(ulp_error(1.0, 1.0L), 0.0);
  EXPECT_DOUBLE_EQ(ulp_error(std::nextafter(1.0, 2.0), 1.0L), 1.0);
  EXPECT_DOUBLE_EQ(ulp_error(std::numeric_limits<double>::denorm_min() * 3, 0.0L), 3.0);
  EXPECT_EQ(ulp_error(std::numeric_limits<double>::max(), 1e400L), INFINITY);
}

}  // namespace
